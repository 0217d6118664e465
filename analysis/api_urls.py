from __future__ import annotations

from django.urls import path

from analysis import api

urlpatterns = [
    path("studies/<slug:slug>/report", api.StudyReportApi.as_view(), name="api-study-report"),
    path("report-runs/<int:run_id>", api.ReportRunApi.as_view(), name="api-report-run"),
]
