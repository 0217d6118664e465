from __future__ import annotations

from django.conf import settings
from django.urls import path

from judging import views, views_generation, views_rewrites
from judging.simulator import views as simulator_views

app_name = "judging"
urlpatterns = [
    path("judging/jobs/", views.jobs, name="jobs"),
    path("judging/jobs/<int:job_id>/", views.job, name="job"),
    path("judging/jobs/<int:job_id>/<slug:action>/", views.job_action, name="job-action"),
    path("judging/generations/", views_generation.generation_jobs, name="generations"),
    path("judging/generations/<int:generation_id>/", views_generation.generation_job, name="generation"),
    path(
        "judging/generations/<int:generation_id>/<slug:action>/",
        views_generation.generation_action,
        name="generation-action",
    ),
    path("judging/rewrites/<slug:slug>/", views_rewrites.rewrites, name="rewrites"),
    path("judging/rewrites/<slug:slug>/rewrites.csv", views_rewrites.rewrites_download, name="rewrites-csv"),
    path("judging/judges/", views.judges, name="judges"),
    path("judging/judges/new/", views.judge_edit, name="judge-new"),
    path("judging/judges/<int:judge_id>/edit/", views.judge_edit, name="judge-edit"),
    path("judging/judges/<int:judge_id>/delete/", views.judge_delete, name="judge-delete"),
    path("judging/judges/<int:judge_id>/test/", views.judge_test, name="judge-test"),
    path("judging/judges/new/test/", views.judge_form_test, name="judge-new-test"),
    path("judging/judges/<int:judge_id>/edit/test/", views.judge_form_test, name="judge-edit-test"),
]
if settings.SIMULATOR_ENABLED:  # default: only with DEBUG on (see judging.simulator.views)
    # The demo judge's endpoint; OpenAI clients append the path.
    urlpatterns.append(path("sim/v1/chat/completions", simulator_views.chat_completions, name="simulator"))
