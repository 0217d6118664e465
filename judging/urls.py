from __future__ import annotations

from django.conf import settings
from django.urls import path

from judging import views
from judging.simulator import views as simulator_views

app_name = "judging"
urlpatterns = [
    path("judging/jobs/", views.jobs, name="jobs"),
    path("judging/jobs/<int:job_id>/", views.job, name="job"),
    path("judging/jobs/<int:job_id>/<slug:action>/", views.job_action, name="job-action"),
    path("judging/judges/", views.judges, name="judges"),
    path("judging/judges/new/", views.judge_edit, name="judge-new"),
    path("judging/judges/<int:judge_id>/edit/", views.judge_edit, name="judge-edit"),
]
if settings.SIMULATOR_ENABLED:  # default: only with DEBUG on (see judging.simulator.views)
    # The demo judge's endpoint; OpenAI clients append the path.
    urlpatterns.append(path("sim/v1/chat/completions", simulator_views.chat_completions, name="simulator"))
