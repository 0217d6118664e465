"""Reviewing a study's submitted work (staff only): answers beside the pair, quality flags,
filters, bulk approve or reject with a reason, and a lookup by a typed Prolific/MTurk id."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_GET, require_POST

from annotations import services
from annotations.forms import BulkReviewForm, LookupForm, ReviewDecisionForm, ReviewFilterForm
from annotations.models import Assignment, RejectReason, Study
from annotations.services import review as review_service
from cobbler_site.access import Audience, allow
from cobbler_site.htmx import HtmxHttpRequest

PAGE = "annotations/researcher/review.html"
PER_PAGE = 20


def _get_study_for_user(request: HtmxHttpRequest, slug: str) -> Study:
    # Another researcher's study is a 404: don't reveal that it exists.
    return get_object_or_404(Study.objects.manageable_by(request.user), slug=slug)


def _review_url(study: Study, filters: dict[str, str] | None = None) -> str:
    return reverse("annotations:review-list", args=[study.slug]) + ("?" + urlencode(filters) if filters else "")


def _page_context(
    request: HtmxHttpRequest, study: Study, filters: dict[str, str], ids: list[int], **extra: object
) -> dict:
    page = Paginator(ids, PER_PAGE).get_page(request.GET.get("page"))
    entries = review_service.review_entries(study=study, assignment_ids=list(page.object_list))
    return {
        "study": study,
        "filters": filters,
        "page": page,
        "entries": entries,
        "total": len(ids),
        "filter_form": extra.pop("filter_form", None),
        "lookup_form": extra.pop("lookup_form", None) or LookupForm(),
        "bulk_form": extra.pop("bulk_form", None) or ReviewDecisionForm(),
        "query": urlencode(filters),
        "reasons": RejectReason.choices,
        **extra,
    }


@allow(Audience.RESEARCHER)
@require_GET
def review_list(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    study = _get_study_for_user(request, slug)
    filter_form = ReviewFilterForm(request.GET or None, flags=review_service.flag_choices(study=study))
    filters = filter_form.filters() if request.GET else {"state": "all", "flag": "", "sort": "flags"}
    ids = review_service.review_queue(study=study, participant_ids=None, **filters)
    return render(request, PAGE, _page_context(request, study, filters, ids, filter_form=filter_form))


@allow(Audience.RESEARCHER)
@require_POST
@sensitive_post_parameters("platform_id")  # kept out of error reports too
def review_lookup(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Hash the typed platform id and show that participant's submissions.

    A POST, and the id is not echoed back, so it reaches no URL, log line or history entry.
    """
    study = _get_study_for_user(request, slug)
    form = LookupForm(request.POST)
    filters = {"state": "all", "flag": "", "sort": "newest"}
    filter_form = ReviewFilterForm(flags=review_service.flag_choices(study=study))
    if not form.is_valid():
        return render(
            request,
            PAGE,
            _page_context(request, study, filters, [], filter_form=filter_form, lookup_form=form),
            status=422,
        )
    people = review_service.matching_participants(study=study, typed_id=form.cleaned_data["platform_id"])
    ids = review_service.review_queue(study=study, participant_ids=[p.pk for p in people], **filters) if people else []
    context = _page_context(
        request,
        study,
        filters,
        ids,
        filter_form=filter_form,
        lookup_form=LookupForm(),
        lookup={"participants": people, "found": bool(people)},
    )
    return render(request, PAGE, context)


@allow(Audience.RESEARCHER)
@require_POST
def review_bulk(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Approve or reject the ticked submissions (all or nothing), then back to the same filtered list."""
    study = _get_study_for_user(request, slug)
    filter_form = ReviewFilterForm(request.POST, flags=review_service.flag_choices(study=study))
    filters = filter_form.filters()
    # Any of the study's submitted work may be ticked; the filters only decide what is shown after.
    form = BulkReviewForm(request.POST, assignment_ids=review_service.review_queue(study=study))
    if form.is_valid():
        data = form.cleaned_data
        try:
            n = review_service.review_assignments(
                study=study,
                assignment_ids=data["assignment"],
                decision=data["decision"],
                reason=data["reason"],
                note=data["note"],
            )
        except ValidationError as e:
            form.add_error(None, e)
        else:
            messages.success(request, f"{n} submission{'s' if n != 1 else ''} {data['decision']}.")
            return redirect(_review_url(study, filters))
    ids = review_service.review_queue(study=study, participant_ids=None, **filters)
    return render(
        request, PAGE, _page_context(request, study, filters, ids, filter_form=filter_form, bulk_form=form), status=422
    )


@allow(Audience.RESEARCHER)
@require_POST
def review(request: HtmxHttpRequest, slug: str, assignment_id: int) -> HttpResponse:
    """One decision on one submission; htmx swaps that submission's entry in place."""
    study = _get_study_for_user(request, slug)
    assignment = get_object_or_404(
        Assignment.objects.select_related("participant", "batch"), pk=assignment_id, batch__study=study
    )
    form = ReviewDecisionForm(request.POST)
    error = ""
    if not form.is_valid():
        error = "; ".join(str(e) for errors in form.errors.values() for e in errors)
    else:
        try:
            services.review_assignment(assignment=assignment, **form.cleaned_data)
        except ValidationError as e:
            error = e.messages[0]
    if request.htmx:
        [entry] = review_service.review_entries(study=study, assignment_ids=[assignment.pk])
        context = {"study": study, "entry": entry, "error": error, "reasons": RejectReason.choices, "open": True}
        return render(request, PAGE + "#review-entry", context, status=422 if error else 200)
    if error:
        messages.error(request, error)
    else:
        messages.success(request, f"{assignment.participant} {assignment.review}.")
    return redirect(_review_url(study) + f"#review-{assignment.pk}")
