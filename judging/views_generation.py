"""Researcher pages for generation jobs (rewrite jobs too): start one, watch it, pause/resume/cancel
(staff only). A rewrite job is started from its study's rewrites page (judging.views_rewrites)."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import QuerySet
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
from judging.generate.services import is_finalised, start_generation_job
from judging.models import Generation, GenerationJob


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
    settled = _settled(job)
    # The rows are inside the polled fragment, so each answer's state refreshes without a reload.
    context = {"job": job, "progress": job.progress(), "rows": _rows(job)[:500], "settled": settled}
    if request.htmx:
        response = render(request, "judging/generation_job.html#generation-progress", context)
        if settled:
            return HttpResponseStopPolling(response.content)  # 286 stops htmx polling
        return response
    return render(request, "judging/generation_job.html", context)


def _settled(job: GenerationJob) -> bool:
    """Nothing on the job page changes any more: the job is finished and, if it completed with
    answers, they are written (a candidate's responses, or read into rewrites)."""
    if not job.is_finished:
        return False
    if job.status == GenerationJob.Status.COMPLETED and job.done:
        return is_finalised(job)
    return True


def _rows(job: GenerationJob) -> QuerySet[Generation]:
    if job.is_rewrite:  # one row a rewritten response, several an instruction
        return job.generations.select_related("instruction", "source__candidate", "rewrite").order_by(
            "instruction__index", "source__candidate__position", "source__candidate__key"
        )
    return job.generations.select_related("instruction").order_by("instruction__index")


@allow(Audience.RESEARCHER)
@require_POST
def generation_action(request: HtmxHttpRequest, generation_id: int, action: str) -> HttpResponse:
    job = get_object_or_404(GenerationJob.objects.manageable_by(request.user), pk=generation_id)
    if action not in services.JOB_ACTIONS:
        raise Http404("unknown action")
    services.JOB_ACTIONS[action](job=job)  # idempotent: a double click changes nothing more
    messages.success(
        request, {"pause": "Paused", "resume": "Resumed", "cancel": "Cancelled"}[action] + f" generation job #{job.pk}."
    )
    url = reverse("judging:generation", args=[job.pk])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
