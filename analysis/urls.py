from __future__ import annotations

from django.urls import path

from analysis import views

app_name = "analysis"
urlpatterns = [
    path("dashboard/", views.dashboard, name="dashboard"),
]
