"""Reviewing a study's submitted work (staff only): answers beside the pair, quality flags,
filters, bulk approve or reject with a reason, a lookup by a typed Prolific/MTurk id, and the
review history (a changed decision is confirmed with a reason; the history is exported)."""

from __future__ import annotations

import json
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_GET, require_POST

from annotations import services
from annotations.forms import BulkReviewForm, LookupForm, ReviewDecisionForm, ReviewFilterForm
from annotations.models import Assignment, DecisionChangeNeedsReason, RejectReason, Study
from annotations.services import review as review_service
from annotations.services.review_history import history_csv, history_rows
from cobbler_site.foundation.access import Audience, allow
from cobbler_site.foundation.htmx import HtmxHttpRequest

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
            outcome = review_service.review_assignments(
                study=study,
                assignment_ids=data["assignment"],
                decision=data["decision"],
                reason=data["reason"],
                note=data["note"],
                reviewer=request.user,
            )
        except ValidationError as e:
            form.add_error(None, e)
        else:
            _bulk_message(request, outcome, data["decision"])
            return redirect(_review_url(study, filters))
    ids = review_service.review_queue(study=study, participant_ids=None, **filters)
    return render(
        request, PAGE, _page_context(request, study, filters, ids, filter_form=filter_form, bulk_form=form), status=422
    )


def _bulk_message(request: HtmxHttpRequest, outcome: review_service.BulkOutcome, decision: str) -> None:
    n, kept = outcome.decided, outcome.left_alone
    text = f"{n} submission{'s' if n != 1 else ''} {decision}."
    if kept:
        # Said every time: a bulk action must never look as if it overturned a decision.
        text += (
            f" {kept} already decided {'one was' if kept == 1 else 'ones were'} left alone;"
            " to change a decision, open the submission and give a reason."
        )
    (messages.success if n else messages.warning)(request, text)


@allow(Audience.RESEARCHER)
@require_POST
def review(request: HtmxHttpRequest, slug: str, assignment_id: int) -> HttpResponse:
    """One decision on one submission; htmx swaps that submission's entry in place.

    Changing a decided submission is a second step: the entry comes back asking why (422,
    nothing changed), and the decision is made when the reviewer confirms with a reason.
    """
    study = _get_study_for_user(request, slug)
    assignment = get_object_or_404(
        Assignment.objects.select_related("participant", "batch"), pk=assignment_id, batch__study=study
    )
    form = ReviewDecisionForm(request.POST)
    error, confirm = "", None
    if not form.is_valid():
        error = "; ".join(str(e) for errors in form.errors.values() for e in errors)
    else:
        try:
            services.review_assignment(assignment=assignment, reviewer=request.user, **form.cleaned_data)
        except DecisionChangeNeedsReason as e:
            confirm = {
                **form.cleaned_data,
                "pk": assignment.pk,
                "current": e.current,
                "asked_before": bool(request.POST.get("confirm")),  # confirmed without a reason
            }
        except ValidationError as e:
            error = e.messages[0]
    status = 422 if error or confirm else 200
    if request.htmx:
        [entry] = review_service.review_entries(study=study, assignment_ids=[assignment.pk])
        context = {
            "study": study,
            "entry": entry,
            "error": error,
            "confirm": confirm,
            "reasons": RejectReason.choices,
            "open": True,
        }
        return render(request, PAGE + "#review-entry", context, status=status)
    if confirm:
        # Without htmx the confirmation is the review page showing this one submission.
        filters = {"state": "all", "flag": "", "sort": "flags"}
        filter_form = ReviewFilterForm(flags=review_service.flag_choices(study=study))
        context = _page_context(request, study, filters, [assignment.pk], filter_form=filter_form, confirm=confirm)
        return render(request, PAGE, context, status=status)
    if error:
        messages.error(request, error)
    else:
        messages.success(request, f"{assignment.participant} {assignment.review}.")
    return redirect(_review_url(study) + f"#review-{assignment.pk}")


@allow(Audience.RESEARCHER)
@require_GET
def review_history(request: HtmxHttpRequest, slug: str, fmt: str) -> HttpResponse:
    """Every review decision of the study (who, when, from, to, why) as CSV or JSON."""
    study = _get_study_for_user(request, slug)
    if fmt == "csv":
        response = HttpResponse(history_csv(study=study), content_type="text/csv; charset=utf-8")
    elif fmt == "json":
        body = json.dumps({"study": study.slug, "decisions": list(history_rows(study=study))}, indent=1)
        response = HttpResponse(body, content_type="application/json")
    else:
        raise Http404("Export as csv or json.")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-review-history.{fmt}"'
    return response
