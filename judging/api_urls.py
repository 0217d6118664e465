from __future__ import annotations

from django.urls import path
from rest_framework.routers import SimpleRouter

from judging import api, api_estimates

router = SimpleRouter()
router.register("judges", api.JudgeViewSet, basename="judge")
router.register("prompt-templates", api.PromptTemplateViewSet, basename="prompt-template")
router.register("judge-jobs", api.JudgeJobViewSet, basename="judge-job")
router.register("generation-jobs", api.GenerationJobViewSet, basename="generation-job")

urlpatterns = [
    path("judge-jobs/start/", api.JudgeJobStartApi.as_view(), name="judge-job-start"),
    # Before the router, whose "<pk>/" would otherwise take "estimate".
    path("judge-jobs/estimate/", api_estimates.JudgeJobEstimateApi.as_view(), name="judge-job-estimate"),
    path(
        "generation-jobs/estimate/",
        api_estimates.GenerationJobEstimateApi.as_view(),
        name="generation-job-estimate",
    ),
    *[
        path(f"judge-jobs/<int:pk>/{name}/", api.JudgeJobActionApi.as_view(action_name=name), name=f"judge-job-{name}")
        for name in ("pause", "cancel")
    ],
    path("judge-jobs/<int:pk>/resume/", api.JudgeJobResumeApi.as_view(), name="judge-job-resume"),
    *[
        path(
            f"generation-jobs/<int:pk>/{name}/",
            api.GenerationJobActionApi.as_view(action_name=name),
            name=f"generation-job-{name}",
        )
        for name in ("pause", "cancel")
    ],
    path("generation-jobs/<int:pk>/resume/", api.GenerationJobResumeApi.as_view(), name="generation-job-resume"),
    *router.urls,
]
