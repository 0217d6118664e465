"""Review decisions are records (issue 22, item 3): changing a decision needs a reason, every
decision is kept (who, when, from, to, why), shown on the review page and exported, bulk actions
decide pending work only, and two reviewers at once never lose a history row."""

from __future__ import annotations

import csv
import io
import json
import threading

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connections, transaction
from django.urls import reverse

from analysis.data_version import data_counts, version_of
from annotations import services
from annotations.models import Assignment, DecisionChangeNeedsReason, ReviewDecision, Study
from annotations.services.review_history import HISTORY_FIELDS
from tests.annotations.conftest import build_study
from tests.annotations.test_review import HOSTILE, _submit_all

HTMX = {"HX-Request": "true"}


@pytest.fixture
def work(db, researcher) -> dict:
    study = build_study("hist", instructions=2, overlap=3, created_by=researcher)
    services.generate_batches(study=study, condition="plain", seed=3, pairs_per_batch=2)
    made = [_submit_all(study, code=f"hist-{n}") for n in range(3)]
    return {"study": study, "a": made[0], "b": made[1], "c": made[2]}


def _state(assignment: Assignment) -> tuple:
    assignment.refresh_from_db()
    return (
        assignment.review,
        assignment.review_reason,
        assignment.review_note,
        assignment.reviewed_at,
        assignment.review_version,
        assignment.decisions.count(),
    )


def _reject(assignment: Assignment, reviewer, **extra: str) -> Assignment:
    fields = {"reason": "too_fast", "note": "0.8 s a task", **extra}
    return services.review_assignment(assignment=assignment, decision="rejected", reviewer=reviewer, **fields)


def _decide_url(study: Study, assignment: Assignment) -> str:
    return reverse("annotations:review", args=[study.slug, assignment.pk])


# The service and the model


def test_a_first_decision_is_recorded_with_who_when_from_to_and_why(work, researcher):
    a = _reject(work["a"], researcher)
    [row] = ReviewDecision.objects.filter(assignment=a)
    assert (row.sequence, row.from_review, row.to_review, row.reject_reason, row.note) == (
        1,
        "pending",
        "rejected",
        "too_fast",
        "0.8 s a task",
    )
    assert (row.reviewer, row.reviewer_name, row.change_reason) == (researcher, "alice", "")
    assert row.decided_at == a.reviewed_at and a.review_version == 1 and not row.is_change


def test_changing_a_decision_without_a_reason_is_refused_and_changes_nothing(work, researcher, other_researcher):
    a = _reject(work["a"], researcher)
    before = _state(a)
    for blank in ("", "   "):
        with pytest.raises(DecisionChangeNeedsReason) as refused:
            services.review_assignment(assignment=a, decision="approved", change_reason=blank, reviewer=researcher)
        assert refused.value.current == "rejected" and "needs a reason" in refused.value.messages[0]
        assert _state(a) == before
    # Amending the rejection (another reason) changes the record the worker sees: a reason too.
    with pytest.raises(DecisionChangeNeedsReason):
        services.review_assignment(assignment=a, decision="rejected", reason="low_effort", reviewer=other_researcher)
    assert _state(a) == before


def test_a_change_with_a_reason_is_appended_and_the_note_follows_the_decision(work, researcher, other_researcher):
    a = _reject(work["a"], researcher)
    services.review_assignment(
        assignment=a, decision="approved", change_reason="the checks were misgraded", reviewer=other_researcher
    )
    a.refresh_from_db()
    # The approval does not carry the rejection's reason or note.
    assert (a.review, a.review_reason, a.review_note, a.review_version) == ("approved", "", "", 2)
    first, second = ReviewDecision.objects.filter(assignment=a)
    assert (first.from_review, first.to_review, first.reviewer_name) == ("pending", "rejected", "alice")
    assert (second.sequence, second.from_review, second.to_review, second.reject_reason) == (
        2,
        "rejected",
        "approved",
        "",
    )
    assert (second.reviewer_name, second.change_reason, second.is_change) == ("bob", "the checks were misgraded", True)
    assert second.decided_at >= first.decided_at and a.reviewed_at == second.decided_at


def test_repeating_the_current_decision_records_nothing(work, researcher):
    a = _reject(work["a"], researcher)
    before = _state(a)
    for note in ("", "0.8 s a task"):  # a double click, a retried request
        services.review_assignment(assignment=a, decision="rejected", reason="too_fast", note=note, reviewer=researcher)
        assert _state(a) == before


def test_history_rows_are_append_only_and_unique_per_step(work, researcher):
    a = _reject(work["a"], researcher)
    row = a.decisions.get()
    row.note = "rewritten"
    with pytest.raises(ValidationError, match="records"):
        row.save()
    assert a.decisions.get().note == "0.8 s a task"
    with pytest.raises(IntegrityError), transaction.atomic():
        ReviewDecision.objects.create(
            assignment=a, sequence=1, from_review="pending", to_review="approved", decided_at=a.reviewed_at
        )


def test_unsubmitted_work_is_refused_and_gets_no_history(work, researcher):
    a = work["a"]
    Assignment.objects.filter(pk=a.pk).update(status=Assignment.Status.ACTIVE)
    with pytest.raises(ValidationError, match="Only submitted work"):
        services.review_assignment(assignment=a, decision="approved", reviewer=researcher)
    assert not ReviewDecision.objects.exists()


def test_a_stale_page_cannot_overturn_a_decision_made_meanwhile(work, researcher, other_researcher):
    """Bob's page still shows pending work that Alice has just approved: his 'first' decision is a
    change now, so it is refused without a reason, and the history keeps Alice's approval."""
    stale = Assignment.objects.get(pk=work["a"].pk)
    services.review_assignment(assignment=work["a"], decision="approved", reviewer=researcher)
    with pytest.raises(DecisionChangeNeedsReason):
        services.review_assignment(assignment=stale, decision="rejected", reason="too_fast", reviewer=other_researcher)
    assert list(stale.decisions.values_list("to_review", "reviewer_name")) == [("approved", "alice")]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_reviewers_deciding_at_once_never_lose_a_history_row(researcher, other_researcher):
    study = build_study("race-review", instructions=1, overlap=1, created_by=researcher)
    services.generate_batches(study=study, condition="plain", seed=1, pairs_per_batch=2)
    assignment = _submit_all(study, code="raced")
    reviewers = [researcher, other_researcher] * 4
    barrier = threading.Barrier(len(reviewers))
    errors: list[Exception] = []

    def decide(n: int, reviewer) -> None:
        try:
            barrier.wait()
            services.review_assignment(
                assignment=Assignment.objects.get(pk=assignment.pk),
                decision="approved" if n % 2 else "rejected",
                reason="" if n % 2 else "low_effort",
                note=f"reviewer {n}",  # every decision differs from the one before, so each is recorded
                change_reason=f"second look {n}",
                reviewer=reviewer,
            )
        except Exception as e:  # reported below
            errors.append(e)
        finally:
            connections.close_all()  # each thread had its own connection

    threads = [threading.Thread(target=decide, args=(n, r)) for n, r in enumerate(reviewers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    rows = list(ReviewDecision.objects.filter(assignment=assignment))
    assert [r.sequence for r in rows] == list(range(1, len(reviewers) + 1))
    assert rows[0].from_review == "pending" and rows[0].change_reason == ""
    # A chain without gaps: every decision starts from the state the one before left.
    assert all(later.from_review == earlier.to_review for earlier, later in zip(rows, rows[1:], strict=False))
    assignment.refresh_from_db()
    assert (assignment.review, assignment.review_note, assignment.review_version) == (
        rows[-1].to_review,
        rows[-1].note,
        len(reviewers),
    )


# The review page


def test_the_page_asks_for_a_reason_before_overturning_a_rejection(researcher_client, work, researcher):
    study, a = work["study"], work["a"]
    url = _decide_url(study, a)
    first = researcher_client.post(url, {"decision": "rejected", "reason": "too_fast", "note": HOSTILE}, headers=HTMX)
    assert first.status_code == 200
    before = _state(a)
    asked = researcher_client.post(url, {"decision": "approved"}, headers=HTMX)
    body = asked.content.decode()
    assert asked.status_code == 422 and _state(a) == before
    assert f'id="confirm-{a.pk}"' in body and f'name="change_reason" id="change-reason-{a.pk}"' in body
    assert "Change this decision?" in body and "by alice" in body and 'name="decision" value="approved"' in body
    assert "<script>alert" not in body and "&lt;script&gt;" in body  # the note, escaped
    # Confirmed with an empty reason: asked again, still nothing changed.
    again = researcher_client.post(url, {"decision": "approved", "confirm": "1", "change_reason": " "}, headers=HTMX)
    assert again.status_code == 422 and "Say why you change the decision." in again.content.decode()
    assert _state(a) == before
    done = researcher_client.post(
        url, {"decision": "approved", "confirm": "1", "change_reason": f"misgraded {HOSTILE}"}, headers=HTMX
    )
    page = done.content.decode()
    assert done.status_code == 200 and "✓ Approved" in page and f'id="confirm-{a.pk}"' not in page
    history = page.split(f'id="history-{a.pk}"')[1].split("</details>")[0]
    assert "Review history (2 decisions)" in history and history.count('class="reviewer">alice<') == 2
    assert "Pending → Rejected" in history and "Rejected → Approved" in history
    assert "Why changed: “misgraded &lt;script&gt;" in history and "<script>" not in history
    # The current record shows no stale rejection note; the history keeps it.
    facts = page.split('class="entry-facts"')[1].split("</p>")[0]
    assert "note:" not in facts and "reason:" not in facts and "by alice" in facts


def test_without_htmx_the_confirmation_is_the_review_page(researcher_client, work, researcher):
    study, a = work["study"], work["a"]
    services.review_assignment(assignment=a, decision="approved", reviewer=researcher)
    asked = researcher_client.post(_decide_url(study, a), {"decision": "rejected", "reason": "too_fast"})
    html = asked.content.decode()
    assert asked.status_code == 422 and "<html" in html and f'id="confirm-{a.pk}"' in html
    assert f'id="review-{work["b"].pk}"' not in html  # only the submission being changed
    assert Assignment.objects.get(pk=a.pk).review == "approved"
    done = researcher_client.post(
        _decide_url(study, a), {"decision": "rejected", "reason": "too_fast", "change_reason": "late check"}
    )
    assert done.status_code == 302 and Assignment.objects.get(pk=a.pk).review == "rejected"


def test_a_decision_without_history_says_so(researcher_client, work):
    # Imported work arrives decided, with no reviewer on this platform.
    Assignment.objects.filter(pk=work["a"].pk).update(review="approved")
    html = researcher_client.get(reverse("annotations:review-list", args=[work["study"].slug])).content.decode()
    block = html.split(f'id="history-{work["a"].pk}"')[1].split("</details>")[0]
    assert "Review history (0 decisions)" in block and "no reviewer recorded" in block


def test_bulk_decides_pending_work_only_and_says_what_it_left_alone(researcher_client, work, researcher):
    study, a, b, c = work["study"], work["a"], work["b"], work["c"]
    _reject(a, researcher)
    services.review_assignment(assignment=b, decision="approved", reviewer=researcher)
    before_a, before_b = _state(a), _state(b)
    response = researcher_client.post(
        reverse("annotations:review-bulk", args=[study.slug]),
        {"assignment": [a.pk, b.pk, c.pk], "decision": "approved"},
        follow=True,
    )
    text = response.content.decode()
    assert "1 submission approved. 2 already decided ones were left alone" in text
    assert _state(a) == before_a and _state(b) == before_b
    c.refresh_from_db()
    assert c.review == "approved" and c.decisions.get().reviewer_name == "alice"
    # Nothing pending among the ticked ones: nothing changes, and the page says so.
    nothing = researcher_client.post(
        reverse("annotations:review-bulk", args=[study.slug]),
        {"assignment": [a.pk, b.pk], "decision": "rejected", "reason": "low_effort"},
        follow=True,
    )
    assert "0 submissions rejected. 2 already decided ones were left alone" in nothing.content.decode()
    assert _state(a) == before_a and _state(b) == before_b


def test_bulk_service_counts_what_it_left_alone(work, researcher):
    from annotations.services.review import BulkOutcome, review_assignments

    _reject(work["a"], researcher)
    outcome = review_assignments(
        study=work["study"], assignment_ids=[work["a"].pk, work["b"].pk], decision="approved", reviewer=researcher
    )
    assert outcome == BulkOutcome(decided=1, left_alone=1)
    assert Assignment.objects.get(pk=work["a"].pk).review == "rejected"
    with pytest.raises(ValidationError, match="Choose a reason"):  # checked even when all are decided
        review_assignments(study=work["study"], assignment_ids=[work["a"].pk], decision="rejected")


# The exports and the API


def test_the_history_is_exported_as_csv_and_json(researcher_client, work, researcher, other_researcher):
    study, a = work["study"], work["a"]
    _reject(a, researcher, note="=HYPERLINK(1)")
    services.review_assignment(
        assignment=a, decision="approved", change_reason="@SUM(1) misgraded", reviewer=other_researcher
    )
    raw = researcher_client.get(reverse("annotations:review-history", args=[study.slug, "csv"]))
    assert raw["Content-Disposition"] == 'attachment; filename="hist-review-history.csv"'
    rows = list(csv.DictReader(io.StringIO(raw.content.decode())))
    assert tuple(rows[0]) == HISTORY_FIELDS and len(rows) == 2
    first, second = rows
    assert (first["from_review"], first["to_review"], first["reviewer"], first["reject_reason"]) == (
        "pending",
        "rejected",
        "alice",
        "too_fast",
    )
    assert first["note"] == "'=HYPERLINK(1)" and second["change_reason"] == "'@SUM(1) misgraded"  # CSV injection safe
    assert (second["sequence"], second["reviewer"], second["participant"]) == ("2", "bob", a.participant.label)
    data = json.loads(researcher_client.get(reverse("annotations:review-history", args=[study.slug, "json"])).content)
    assert [d["to_review"] for d in data["decisions"]] == ["rejected", "approved"]
    assert data["decisions"][1]["change_reason"] == "@SUM(1) misgraded"
    assert researcher_client.get(reverse("annotations:review-history", args=[study.slug, "xml"])).status_code == 404


def test_the_history_and_decisions_are_the_owners_only(client, other_researcher, work, researcher):
    study, a = work["study"], work["a"]
    _reject(a, researcher)
    client.force_login(other_researcher)
    assert client.get(reverse("annotations:review-history", args=[study.slug, "csv"])).status_code == 404
    changed = client.post(_decide_url(study, a), {"decision": "approved", "change_reason": "mine now"})
    assert changed.status_code == 404 and Assignment.objects.get(pk=a.pk).review == "rejected"


def _api(user):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return api


def test_the_api_refuses_a_change_without_a_reason(work, researcher, other_researcher):
    a = work["a"]
    api, url = _api(researcher), f"/api/assignments/{a.pk}/review"
    assert api.post(url, {"decision": "rejected", "reason": "too_fast"}, format="json").status_code == 200
    before = _state(a)
    refused = api.post(url, {"decision": "approved"}, format="json")
    assert refused.status_code == 409 and "needs a reason" in refused.json()["detail"]
    assert _state(a) == before
    ok = api.post(url, {"decision": "approved", "change_reason": "misgraded"}, format="json")
    assert ok.status_code == 200 and (ok.json()["review"], ok.json()["review_note"]) == ("approved", "")
    history = api.get(f"/api/studies/{work['study'].slug}/review-history").json()
    assert history["count"] == 2
    assert [(r["from_review"], r["to_review"], r["reviewer"]) for r in history["results"]] == [
        ("pending", "rejected", "alice"),
        ("rejected", "approved", "alice"),
    ]
    assert history["results"][1]["change_reason"] == "misgraded"
    assert _api(other_researcher).get(f"/api/studies/{work['study'].slug}/review-history").status_code == 404


def test_the_report_notices_a_changed_decision(work, researcher):
    """analysis.data_version sums the approved and rejected ids and keeps the latest review time."""
    study, a = work["study"], work["a"]
    services.review_assignment(assignment=a, decision="approved", reviewer=researcher)
    approved = version_of(data_counts(study))
    _reject(a, researcher, change_reason="late check")
    rejected = version_of(data_counts(study))
    services.review_assignment(assignment=a, decision="approved", change_reason="misgraded", reviewer=researcher)
    assert len({approved, rejected, version_of(data_counts(study))}) == 3
