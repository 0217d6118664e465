from __future__ import annotations

from django.urls import path

from analysis import views

app_name = "analysis"
urlpatterns = [
    path("dashboard/", views.dashboard, name="dashboard"),
    path("studies/<slug:slug>/report/", views.report, name="report"),
    path("studies/<slug:slug>/report/download/<str:fmt>/", views.report_download, name="report-download"),
]
