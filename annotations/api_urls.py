from __future__ import annotations

from django.urls import path

from annotations import api

urlpatterns = [
    path("studies/", api.StudyListCreateApi.as_view(), name="api-studies"),
    path("studies/<slug:slug>/", api.StudyDetailApi.as_view(), name="api-study"),
    path("studies/<slug:slug>/batches/generate", api.StudyGenerateBatchesApi.as_view(), name="api-study-generate"),
    path("studies/<slug:slug>/progress", api.StudyProgressApi.as_view(), name="api-study-progress"),
    path("studies/<slug:slug>/submissions", api.StudySubmissionsApi.as_view(), name="api-study-submissions"),
    path("studies/<slug:slug>/assignments", api.StudyAssignmentsApi.as_view(), name="api-study-assignments"),
    path("studies/<slug:slug>/review-history", api.StudyReviewHistoryApi.as_view(), name="api-study-review-history"),
    path("assignments/<int:pk>/review", api.AssignmentReviewApi.as_view(), name="api-assignment-review"),
]
