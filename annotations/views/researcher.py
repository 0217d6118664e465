"""Researcher pages (staff only): studies, batch generation, live progress, review, export."""
from __future__ import annotations

import json

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from annotations import services
from annotations.forms import GenerateBatchesForm, StudyCreateForm
from annotations.models import Assignment, Study
from annotations.services.recruitment import recruitment_links
from cobbler_site.access import Audience, allow


def _get_study_for_user(request: HttpRequest, slug: str) -> Study:
    # Another researcher's study is a 404: don't reveal that it exists.
    return get_object_or_404(Study.objects.manageable_by(request.user), slug=slug)


@allow(Audience.RESEARCHER)
@require_http_methods(["GET", "POST"])
def studies(request: HttpRequest) -> HttpResponse:
    form = StudyCreateForm(request.POST or None, sources=Study.objects.manageable_by(request.user))
    if request.method == "POST" and form.is_valid():
        try:
            study = services.create_study(created_by=request.user, **form.service_kwargs())
        except ValidationError as e:
            form.add_error(None, e)
        else:
            url = study_url(study)
            return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    template = "annotations/researcher/studies.html" + ("#study-form" if request.htmx else "")
    context = {"studies": Study.objects.manageable_by(request.user).order_by("-created_at"), "form": form}
    return render(request, template, context, status=422 if form.errors else 200)


def study_url(study: Study) -> str:
    return reverse("annotations:study", args=[study.slug])


@allow(Audience.RESEARCHER)
@require_GET
def study(request: HttpRequest, slug: str) -> HttpResponse:
    study = _get_study_for_user(request, slug)
    context = {
        "study": study,
        "progress": services.batch_progress(study=study),
        "form": GenerateBatchesForm(),
        "links": recruitment_links(study=study, request=request),
        "to_review": Assignment.objects.filter(batch__study=study, status=Assignment.Status.SUBMITTED)
        .select_related("participant", "batch")
        .order_by("review", "-submitted_at")[:50],
    }
    # The progress table polls itself every 2 s; only its fragment is rendered then.
    template = "annotations/researcher/study.html" + ("#progress" if request.htmx else "")
    return render(request, template, context)


@allow(Audience.RESEARCHER)
@require_POST
def generate(request: HttpRequest, slug: str) -> HttpResponse:
    study = _get_study_for_user(request, slug)
    form = GenerateBatchesForm(request.POST, request.FILES)
    if form.is_valid():
        data = form.cleaned_data
        try:
            made = services.generate_design(
                study=study, condition=data["condition"], seed=data.get("seed"),
                pairs_per_batch=data.get("pairs_per_batch") or 15, letter_map=data.get("cobbler_design"),
            )
        except ValidationError as e:
            form.add_error(None, e)
        else:
            messages.success(request, f"{len(made)} {data['condition']} batches generated.")
            url = study_url(study)
            return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    template = "annotations/researcher/study.html" + ("#generate-form" if request.htmx else "")
    return render(request, template, {"study": study, "form": form}, status=422)


@allow(Audience.RESEARCHER)
@require_POST
def review(request: HttpRequest, slug: str, assignment_id: int) -> HttpResponse:
    study = _get_study_for_user(request, slug)
    assignment = get_object_or_404(Assignment.objects.select_related("participant", "batch"), pk=assignment_id, batch__study=study)
    error = ""
    try:
        services.review_assignment(assignment=assignment, decision=request.POST.get("decision", ""), note=request.POST.get("note", ""))
    except ValidationError as e:
        error = e.messages[0]
    if request.htmx:
        return render(request, "annotations/researcher/study.html#review-row",
                      {"study": study, "a": assignment, "error": error}, status=422 if error else 200)
    if error:
        messages.error(request, error)
    return redirect(study_url(study))


@allow(Audience.RESEARCHER)
@require_GET
def export(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
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
