"""Researcher pages (staff only): creating a study, the study hub (content, settings, batches and
progress, review summary, recruitment links), batch generation and export. The studies overview
(judge jobs and reports beside the crowd's progress) is analysis:dashboard; reviewing work is
annotations.views.review."""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from annotations import services
from annotations.forms import AddRoundForm, GenerateBatchesForm, StudyCreateForm, StudySettingsForm
from annotations.models import Study
from annotations.services.capacity import study_capacity
from annotations.services.hub import content_counts, review_counts
from annotations.services.recruitment import recruitment_links
from annotations.services.rounds import describe_round
from cobbler_site.foundation.access import Audience, allow
from cobbler_site.foundation.htmx import HtmxHttpRequest

HUB = "annotations/researcher/study.html"


def _get_study_for_user(request: HtmxHttpRequest, slug: str) -> Study:
    # Another researcher's study is a 404: don't reveal that it exists.
    return get_object_or_404(Study.objects.manageable_by(request.user), slug=slug)


@allow(Audience.RESEARCHER)
@require_http_methods(["GET", "POST"])
def studies(request: HtmxHttpRequest) -> HttpResponse:
    """Create a study. The list of studies is the studies overview (analysis:dashboard), which
    shows what only the upper apps know (judge jobs, reports); a GET here goes there."""
    if request.method == "GET":
        return redirect("analysis:dashboard")
    form = StudyCreateForm(request.POST, sources=Study.objects.manageable_by(request.user))
    if form.is_valid():
        try:
            study = services.create_study(created_by=request.user, **form.service_kwargs())
        except ValidationError as e:
            form.add_error(None, e)
        else:
            url = study_url(study)
            return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    template = "annotations/researcher/_study_form.html" if request.htmx else "annotations/researcher/study_new.html"
    return render(request, template, {"form": form}, status=422)


def study_url(study: Study, section: str = "") -> str:
    return reverse("annotations:study", args=[study.slug]) + (f"#{section}" if section else "")


def _hub_context(request: HtmxHttpRequest, study: Study, **forms: object) -> dict:
    """Everything the hub shows; ``forms`` replaces a section's blank form by a bound, invalid one."""
    progress = services.batch_progress(study=study)
    capacity = study_capacity(study, planned=planned_places(request))
    return {
        "study": study,
        "content": content_counts(study=study),
        "reviews": review_counts(study=study),
        "progress": progress,
        "batch_summary": {"total": len(progress), "complete": sum(1 for p in progress if p.complete)},
        "form": forms.get("form") or GenerateBatchesForm(),
        "capacity": capacity,
        "planned": capacity.planned,
        "round_form": forms.get("round_form") or _blank_round_form(study),
        "settings_form": forms.get("settings_form") or StudySettingsForm(instance=study),
        "links": recruitment_links(study=study, request=request),
        # The study's judge jobs and reports are on the studies overview (analysis.overview):
        # annotations knows nothing of judging and analysis, not even through related managers.
    }


MAX_PLANNED_PLACES = 1_000_000


def planned_places(request: HtmxHttpRequest) -> int | None:
    """The places the researcher will open on the platform, typed into the Capacity box.

    Carried in the hub's URL (``?places=N``), not stored: a study has no field for it, and
    a plan is checked against capacity before launch, not kept as data. None if absent or not a count.
    """
    raw = (request.GET.get("places") or request.POST.get("places") or "").strip()
    if not raw.isdigit() or int(raw) > MAX_PLANNED_PLACES:
        return None
    return int(raw)


def _blank_round_form(study: Study) -> AddRoundForm:
    # A fresh seed by default (one past the largest used), so a new round draws new pairs; the
    # condition the study already has (imported or generated), as growing it is the usual case.
    seeds = [s for s in study.batches.values_list("seed", flat=True) if s is not None]
    condition = study.batches.order_by("condition").values_list("condition", flat=True).first() or ""
    return AddRoundForm(initial={"seed": max(seeds, default=0) + 1, "condition": condition})


@allow(Audience.RESEARCHER)
@require_GET
def study(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    study = _get_study_for_user(request, slug)
    if request.htmx:
        # The progress table polls itself every 2 s; only its fragment is rendered then.
        return render(request, HUB + "#progress", {"study": study, "progress": services.batch_progress(study=study)})
    return render(request, HUB, _hub_context(request, study))


def _back_to_hub(request: HtmxHttpRequest, study: Study, section: str) -> HttpResponse:
    # htmx posts from the hub itself: an HX-Redirect to the hub plus an anchor would only scroll
    # (a same-document navigation), so it gets the bare URL, which reloads; without JS, the section.
    return HttpResponseClientRedirect(study_url(study)) if request.htmx else redirect(study_url(study, section))


@allow(Audience.RESEARCHER)
@require_POST
def study_settings(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    study = _get_study_for_user(request, slug)
    # The form works on a copy: an invalid post must not leave half-changed fields on the instance.
    form = StudySettingsForm(request.POST, instance=Study.objects.get(pk=study.pk))
    if form.is_valid():
        form.save()
        messages.success(request, "Study settings saved.")
        return _back_to_hub(request, study, "settings")
    if request.htmx:
        return render(request, HUB + "#settings-form", {"study": study, "settings_form": form}, status=422)
    return render(request, HUB, _hub_context(request, study, settings_form=form), status=422)


@allow(Audience.RESEARCHER)
@require_POST
def generate(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    study = _get_study_for_user(request, slug)
    form = GenerateBatchesForm(request.POST, request.FILES)
    if form.is_valid():
        data = form.cleaned_data
        try:
            made = services.generate_design(
                study=study,
                condition=data["condition"],
                seed=data.get("seed"),
                pairs_per_batch=data.get("pairs_per_batch") or 15,
                letter_map=data.get("cobbler_design"),
                new_round=data.get("new_round", False),
            )
        except ValidationError as e:
            form.add_error(None, e)
        else:
            messages.success(request, describe_round(study=study, batches=made))
            return _back_to_hub(request, study, "batches")
    if request.htmx:
        return render(request, HUB + "#generate-form", {"study": study, "form": form}, status=422)
    return render(request, HUB, _hub_context(request, study, form=form), status=422)


@allow(Audience.RESEARCHER)
@require_POST
def add_round(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Add capacity from the hub: a new round of fresh batches for one condition, beside its others."""
    study = _get_study_for_user(request, slug)
    form = AddRoundForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            made = services.generate_batches(
                study=study,
                condition=data["condition"],
                seed=data["seed"],
                pairs_per_batch=data["pairs_per_batch"],
                new_round=True,
            )
        except ValidationError as e:
            form.add_error(None, e)
        else:
            messages.success(request, describe_round(study=study, batches=made))
            # Back to the Capacity box, keeping the planned places so the comparison is redrawn.
            places = planned_places(request)
            url = reverse("annotations:study", args=[study.slug]) + (f"?places={places}" if places is not None else "")
            return HttpResponseClientRedirect(url) if request.htmx else redirect(url + "#capacity")
    if request.htmx:
        context = {"study": study, "round_form": form, "planned": planned_places(request)}
        return render(request, "annotations/researcher/_capacity.html#round-form", context, status=422)
    return render(request, HUB, _hub_context(request, study, round_form=form), status=422)


@allow(Audience.RESEARCHER)
@require_GET
def export(request: HtmxHttpRequest, slug: str, fmt: str) -> HttpResponse:
    study = _get_study_for_user(request, slug)
    if fmt not in ("csv", "json"):
        raise Http404("Export as csv or json.")
    if fmt == "csv":
        response = HttpResponse(services.submissions_csv(study=study), content_type="text/csv; charset=utf-8")
    else:
        body = json.dumps({"study": study.slug, "submissions": list(services.submission_rows(study=study))}, indent=1)
        response = HttpResponse(body, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-submissions.{fmt}"'
    return response
