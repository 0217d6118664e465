"""Researcher pages: the studies overview (analysis.overview) and the report page (htmx, polling the worker's progress)."""

from __future__ import annotations

from typing import cast

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from analysis.exporters import FORMATS, export, report_context
from analysis.models import ReportRun
from analysis.overview import studies_overview
from analysis.profiles import PROFILES
from analysis.services import staleness, start_report_run
from annotations.forms import StudyCreateForm
from annotations.models import Study
from cobbler_site.foundation.access import Audience, allow
from cobbler_site.foundation.htmx import HtmxHttpRequest

# Only a poll (the element that polls has this id) is told to stop with 286.
POLLER_ID = "report-body"


def _get_study(request: HtmxHttpRequest, slug: str) -> Study:
    # Another researcher's private study is a 404: its existence is not revealed.
    return get_object_or_404(Study.objects.manageable_by(request.user), slug=slug)


def _profile(request: HtmxHttpRequest) -> str:
    profile = (request.POST if request.method == "POST" else request.GET).get("profile", "default")
    if profile not in PROFILES:
        raise Http404("unknown profile")
    return profile


@allow(Audience.RESEARCHER)
@require_GET
def dashboard(request: HtmxHttpRequest) -> HttpResponse:
    """The studies overview: every study the researcher manages, and a form to create one."""
    context = {
        "overview": studies_overview(user=request.user),
        "form": StudyCreateForm(sources=Study.objects.manageable_by(request.user)),
    }
    return render(request, "analysis/dashboard.html", context)


def _report_page(request: HtmxHttpRequest, study: Study, profile: str, status: int = 200) -> HttpResponse:
    active = ReportRun.objects.active().filter(study=study, profile=profile).first()
    run = ReportRun.objects.latest_done(study=study, profile=profile)
    failed = ReportRun.objects.filter(study=study, profile=profile).order_by("-created_at").first()
    links = {"study": reverse("annotations:study", args=[study.slug]), "jobs": reverse("judging:jobs")}
    context = {
        "study": study,
        "profile": profile,
        "profiles": list(PROFILES),
        "formats": list(FORMATS),
        "active": active,
        "run": run,
        "study_url": links["study"],
        # A few aggregate queries: is there newer data than the report read?
        "stale": staleness(run=run) if run else None,
        "failed": failed if failed is not None and failed.status == ReportRun.Status.FAILED else None,
        # cast: a finished run always stores its result
        **(report_context(cast(dict, run.result), run.figures, links=links) if run else {}),
    }
    template = "analysis/report.html"
    if request.htmx:
        template += "#report-body"
        if active is None and request.htmx.trigger == POLLER_ID:
            status = 286  # htmx: swap this last fragment, then stop polling
    return render(request, template, context, status=status)


@allow(Audience.RESEARCHER)
@require_http_methods(["GET", "POST"])
def report(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    study = _get_study(request, slug)
    profile = _profile(request)
    if request.method == "POST":
        start_report_run(study=study, profile=profile, user=request.user)
        if not request.htmx:
            return redirect(f"{reverse('analysis:report', args=[slug])}?profile={profile}")
    return _report_page(request, study, profile)


@allow(Audience.RESEARCHER)
@require_GET
def report_download(request: HtmxHttpRequest, slug: str, fmt: str) -> HttpResponse:
    study = _get_study(request, slug)
    profile = _profile(request)
    if fmt not in FORMATS:
        raise Http404("unknown format")
    run = ReportRun.objects.latest_done(study=study, profile=profile)
    if run is None:
        raise Http404("no finished report for this profile yet")
    # Rendering a stored report is cheap (the figures were drawn by the worker).
    content_type, extension = FORMATS[fmt]
    response = HttpResponse(export(cast(dict, run.result), fmt, figures=run.figures), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-{profile}.{extension}"'
    return response
