"""The rewrites page of a study: every rewrite a model made of its answers (sentiment), the
answers that were no usable rewrite, a CSV of the rewrites, and the form that starts a rewrite job."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import HttpResponseClientRedirect

from annotations.models import Study
from cobbler_site.foundation.access import Audience, allow
from cobbler_site.foundation.htmx import HtmxHttpRequest
from judging import estimate_forms, services
from judging.estimates import estimate_rewrite_job
from judging.generate.forms import RewriteForm
from judging.generate.rewrite_listing import rewrite_jobs, rewrites_csv, study_rewrites, unusable_answers
from judging.generate.rewrites import start_rewrite_job

PER_PAGE = 50
# The unusable answers are a diagnosis (which prompt, which answers); the first ones tell it.
UNUSABLE_SHOWN = 200
PAGE = "judging/rewrites.html"


def _study(request: HtmxHttpRequest, slug: str) -> Study:
    return get_object_or_404(Study.objects.manageable_by(request.user), slug=slug)


@allow(Audience.RESEARCHER)
@require_http_methods(["GET", "POST"])
def rewrites(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    study = _study(request, slug)
    form = RewriteForm(request.POST or None, user=request.user)
    estimate = None
    if request.method == "POST" and form.is_valid():
        try:
            if estimate_forms.wants_preview(request.POST):
                estimate = estimate_rewrite_job(**_rewrite_options(study, form.cleaned_data))
                form = RewriteForm(estimate_forms.with_proposed_budget(request.POST, estimate), user=request.user)
                form.is_valid()  # the budget shown is the proposal (or the researcher's own)
            else:
                job = start_rewrite_job(**_rewrite_options(study, form.cleaned_data), created_by=request.user)
        except services.JobError as exc:
            form.add_error(None, str(exc))
        else:
            if estimate is None:
                messages.success(
                    request,
                    f"Rewrite job #{job.pk} started: {job.total} {job.rewrite_kind} rewrites by "
                    f"{job.generator.name} of the answers in {study.slug}'s pairs.",
                )
                url = reverse("judging:generation", args=[job.pk])
                return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    context = {"study": study, "form": form, "estimate": estimate}
    status = 422 if form.errors else 200
    if request.htmx and request.method == "POST":
        return render(request, PAGE + "#rewrite-form", context, status=status)
    return render(request, PAGE, {**context, **_listing(request, study)}, status=status)


def _rewrite_options(study: Study, d: dict) -> dict:
    """The form's fields as start_rewrite_job's (and estimate_rewrite_job's) arguments."""
    return {
        "study": study,
        "generator": d["model"],
        "kind": d["kind"],
        "prompt_version": d["prompt_version"],
        "params": {"max_tokens": d["max_tokens"]} if d["max_tokens"] else {},
        "budget_usd": d["budget_usd"],
        "mode": d["mode"],
    }


def _listing(request: HtmxHttpRequest, study: Study) -> dict:
    jobs = rewrite_jobs(study, request.user).select_related("generator").order_by("-pk")
    unusable = unusable_answers(study, request.user)
    return {
        "page": Paginator(study_rewrites(study), PER_PAGE).get_page(request.GET.get("page")),
        # Only jobs the user manages get a link: another researcher's job page is a 404.
        "linked_jobs": set(jobs.values_list("pk", flat=True)),
        "jobs": jobs[:20],
        "unusable": unusable[:UNUSABLE_SHOWN],
        "unusable_count": unusable.count(),
    }


@allow(Audience.RESEARCHER)
@require_GET
def rewrites_download(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    study = _study(request, slug)
    response = HttpResponse(rewrites_csv(study), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-rewrites.csv"'
    return response
