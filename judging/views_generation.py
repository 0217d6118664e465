"""Researcher pages for generation jobs: start one, watch it, pause/resume/cancel (staff only)."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect, HttpResponseStopPolling

from cobbler_site.foundation.access import Audience, allow
from cobbler_site.foundation.htmx import HtmxHttpRequest
from judging import estimate_forms, services
from judging.estimates import estimate_generation_job
from judging.generate.forms import GenerationForm
from judging.generate.services import start_generation_job
from judging.models import GenerationJob


@allow(Audience.RESEARCHER)
@require_http_methods(["GET", "POST"])
def generation_jobs(request: HtmxHttpRequest) -> HttpResponse:
    form = GenerationForm(request.POST or None, user=request.user)
    estimate = None
    if request.method == "POST" and form.is_valid():
        try:
            if estimate_forms.wants_preview(request.POST):
                estimate = estimate_generation_job(**_generation_options(form.cleaned_data))
                form = GenerationForm(estimate_forms.with_proposed_budget(request.POST, estimate), user=request.user)
                form.is_valid()  # the budget shown is the proposal (or the researcher's own)
            else:
                job = start_generation_job(**_generation_options(form.cleaned_data), created_by=request.user)
        except services.JobError as exc:
            form.add_error(None, str(exc))
        else:
            if estimate is None:
                messages.success(
                    request,
                    f"Generation job #{job.pk} started: {job.total} answers from "
                    f"{job.generator.name} on {job.study.slug}, as candidate {job.candidate_key}.",
                )
                url = reverse("judging:generation", args=[job.pk])
                return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    template = "judging/generation_jobs.html" + ("#generation-form" if request.htmx else "")
    recent = (
        GenerationJob.objects.manageable_by(request.user)
        .select_related("study", "generator", "candidate")
        .order_by("-pk")[:50]
    )
    context = {"form": form, "jobs": recent, "estimate": estimate}
    return render(request, template, context, status=422 if form.errors else 200)


def _generation_options(d: dict) -> dict:
    """The form's fields as start_generation_job's (and estimate_generation_job's) arguments."""
    return {
        "study": d["study"],
        "generator": d["model"],
        "candidate_key": d["candidate_key"],
        "params": {"max_tokens": d["max_tokens"]} if d["max_tokens"] else {},
        "budget_usd": d["budget_usd"],
        "pair_policy": d["pair_policy"],
        "pair_sample_size": d["pair_sample_size"],
        "seed": d["seed"],
        "mode": d["mode"],
    }


@allow(Audience.RESEARCHER)
@require_http_methods(["GET"])
def generation_job(request: HtmxHttpRequest, generation_id: int) -> HttpResponse:
    job = get_object_or_404(
        GenerationJob.objects.manageable_by(request.user).select_related("study", "generator", "candidate"),
        pk=generation_id,
    )
    # The rows are inside the polled fragment, so each answer's state refreshes without a reload.
    rows = job.generations.select_related("instruction").order_by("instruction__index")[:500]
    context = {"job": job, "progress": job.progress(), "rows": rows}
    if request.htmx:
        response = render(request, "judging/generation_job.html#generation-progress", context)
        if job.is_finished and (job.candidate_id or job.status != GenerationJob.Status.COMPLETED or not job.done):
            # 286 stops htmx polling once the candidate is written (or nothing will be).
            return HttpResponseStopPolling(response.content)
        return response
    return render(request, "judging/generation_job.html", context)


@allow(Audience.RESEARCHER)
@require_POST
def generation_action(request: HtmxHttpRequest, generation_id: int, action: str) -> HttpResponse:
    job = get_object_or_404(GenerationJob.objects.manageable_by(request.user), pk=generation_id)
    actions: dict[str, Callable[..., object]] = {
        "pause": services.pause_job,
        "resume": services.resume_job,
        "cancel": services.cancel_job,
    }
    if action not in actions:
        raise Http404("unknown action")
    actions[action](job=job)  # idempotent: a double click changes nothing more
    messages.success(
        request, {"pause": "Paused", "resume": "Resumed", "cancel": "Cancelled"}[action] + f" generation job #{job.pk}."
    )
    url = reverse("judging:generation", args=[job.pk])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
