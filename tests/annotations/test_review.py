"""The review page: answers beside the pair (escaped), flags, filters, bulk decisions, reasons,
the Prolific-id lookup, the exports' new columns, and ownership."""

from __future__ import annotations

import csv
import io
import json
import logging

import pytest
from django.urls import reverse
from django.utils import timezone

from annotations import services
from annotations.models import Assignment, Participant, Study, Submission, Task
from annotations.pseudonyms import pseudonymise
from annotations.services.studies import EXPORT_FIELDS
from tests.annotations.conftest import build_study

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'
TOO_FAST = {"code": "too_fast", "label": "Too fast", "value": 0.8, "threshold": 4.0}
STRAIGHT = {"code": "straight_line", "label": "Straight-lining", "value": 1.0, "threshold": 6}
PROLIFIC_PID = "5f0c1d2e3a4b5c6d7e8f9a0b"


def _submit_all(
    study: Study,
    *,
    code: str,
    platform: str = "prolific",
    choice: str = "A",
    flags: list | None = None,
    rationale: str = "",
    ms: int = 2500,
) -> Assignment:
    """A participant who answered every task of the study's first free batch (written through the ORM)."""
    participant = Participant.objects.create(
        study=study,
        platform=platform,
        external_hash=pseudonymise(platform, code),
        label=f"p-{code[:6]}",
        qualified=True,
    )
    batch = study.batches.exclude(assignments__isnull=False).order_by("index").first() or study.batches.first()
    assignment = Assignment.objects.create(
        batch=batch,
        participant=participant,
        status=Assignment.Status.SUBMITTED,
        submitted_at=timezone.now(),
        work_seconds=90,
        flags=flags or [],
        survey={"post": {"fair": "yes"}},
    )
    for task in batch.tasks.select_related("pair").order_by("position"):
        a, b = task.slot_response_ids()
        Submission.objects.create(
            assignment=assignment,
            task=task,
            choice=choice,
            chosen_response_id=a if choice == "A" else b,
            display_order=[a, b],
            time_on_task_ms=ms,
            server_time_ms=ms + 100,
            rationale=rationale,
            idempotency_key=f"{code}-{task.pk}",
        )
    return assignment


@pytest.fixture
def reviewed(db, researcher) -> dict:
    texts = {(0, "alpha"): HOSTILE}
    study = build_study("rev", instructions=2, texts=texts, overlap=3, created_by=researcher)
    services.generate_batches(study=study, condition="plain", seed=3, pairs_per_batch=3)
    fast = _submit_all(study, code=PROLIFIC_PID, flags=[TOO_FAST, STRAIGHT], rationale=HOSTILE, ms=800)
    careful = _submit_all(study, code="careful-worker", choice="B", rationale="B cites the reference.")
    other = _submit_all(study, code="third-worker", flags=[TOO_FAST])
    return {"study": study, "fast": fast, "careful": careful, "other": other}


def _url(study: Study, name: str = "review-list") -> str:
    return reverse(f"annotations:{name}", args=[study.slug])


def _shown(html: str) -> list[int]:
    """Assignment ids in the order the page lists them."""
    import re

    return [int(pk) for pk in re.findall(r'<article class="card review-entry[^"]*" id="review-(\d+)"', html)]


def test_it_shows_each_answer_beside_the_pair_and_escapes_worker_and_answer_text(researcher_client, reviewed):
    html = researcher_client.get(_url(reviewed["study"])).content.decode()
    assert HOSTILE not in html and "<script>alert" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html  # the answer and the rationale, as text
    fast = reviewed["fast"]
    tasks = list(fast.batch.tasks.select_related("pair__response_a", "pair__response_b").order_by("position"))
    first = tasks[0]
    slot_a, slot_b = first.slot_responses()
    block = html.split(f'id="task-{fast.pk}-{first.position}"')[1].split("</li>")[0]
    # The two answers in the worker's slot order, the chosen one marked, the time on task.
    assert block.index("System A") < block.index("System B")
    assert (
        f"({slot_a.candidate.key})" in block.split("System B")[0]
        and f"({slot_b.candidate.key})" in block.split("System B")[1]
    )
    assert "✓ chosen" in block.split("System B")[0] and "0.8 s" in block
    assert html.count(f'id="task-{fast.pk}-') == len(tasks)
    assert "Straight-lining" in html and 'data-flag="too_fast"' in html and "B cites the reference." in html


def test_it_filters_by_flag_and_state_and_sorts_by_flags(researcher_client, reviewed):
    study, fast, careful, other = reviewed["study"], reviewed["fast"], reviewed["careful"], reviewed["other"]
    page = researcher_client.get(_url(study)).content.decode()
    assert _shown(page)[0] == fast.pk and _shown(page)[-1] == careful.pk  # most flags first
    assert _shown(researcher_client.get(_url(study), {"flag": "straight_line"}).content.decode()) == [fast.pk]
    assert set(_shown(researcher_client.get(_url(study), {"flag": "any"}).content.decode())) == {fast.pk, other.pk}
    assert _shown(researcher_client.get(_url(study), {"flag": "none"}).content.decode()) == [careful.pk]
    services.review_assignment(assignment=careful, decision="approved")
    assert _shown(researcher_client.get(_url(study), {"state": "approved"}).content.decode()) == [careful.pk]
    assert set(_shown(researcher_client.get(_url(study), {"state": "pending"}).content.decode())) == {fast.pk, other.pk}
    # A tampered filter falls back to the default list instead of an error page.
    assert len(_shown(researcher_client.get(_url(study), {"state": "<x>", "sort": "drop"}).content.decode())) == 3


def test_bulk_approve_then_bulk_reject_needs_a_reason_and_changes_nothing_without_one(researcher_client, reviewed):
    study, fast, careful, other = reviewed["study"], reviewed["fast"], reviewed["careful"], reviewed["other"]
    ok = researcher_client.post(
        _url(study, "review-bulk"),
        {"assignment": [careful.pk, other.pk], "decision": "approved", "state": "pending", "flag": "", "sort": "flags"},
    )
    assert ok.status_code == 302 and "state=pending" in ok["Location"]
    assert set(Assignment.objects.filter(review="approved").values_list("pk", flat=True)) == {careful.pk, other.pk}
    assert Assignment.objects.get(pk=careful.pk).reviewed_at is not None
    no_reason = researcher_client.post(
        _url(study, "review-bulk"), {"assignment": [fast.pk, other.pk], "decision": "rejected"}
    )
    assert no_reason.status_code == 422 and "Choose a reason for the rejection." in no_reason.content.decode()
    assert (
        Assignment.objects.get(pk=fast.pk).review == "pending"
        and Assignment.objects.get(pk=other.pk).review == "approved"
    )
    nothing = researcher_client.post(_url(study, "review-bulk"), {"decision": "approved"})
    assert nothing.status_code == 422 and "Select at least one submission." in nothing.content.decode()
    done = researcher_client.post(
        _url(study, "review-bulk"),
        {"assignment": [fast.pk], "decision": "rejected", "reason": "too_fast", "note": "0.8 s per task"},
    )
    assert done.status_code == 302
    fast.refresh_from_db()
    assert (fast.review, fast.review_reason, fast.review_note) == ("rejected", "too_fast", "0.8 s per task")


def test_one_decision_with_htmx_swaps_the_entry_and_other_needs_a_note(researcher_client, reviewed):
    study, fast = reviewed["study"], reviewed["fast"]
    url = reverse("annotations:review", args=[study.slug, fast.pk])
    htmx = {"HX-Request": "true"}
    bad = researcher_client.post(url, {"decision": "rejected", "reason": "other"}, headers=htmx)
    assert bad.status_code == 422 and "Say why in the note" in bad.content.decode()
    assert Assignment.objects.get(pk=fast.pk).review == "pending"
    unknown = researcher_client.post(url, {"decision": "rejected", "reason": "because"}, headers=htmx)
    assert unknown.status_code == 422 and Assignment.objects.get(pk=fast.pk).review == "pending"
    ok = researcher_client.post(url, {"decision": "rejected", "reason": "straight_lining"}, headers=htmx)
    body = ok.content.decode()
    assert ok.status_code == 200 and body.lstrip().startswith(
        f'<article class="card review-entry review-rejected" id="review-{fast.pk}"'
    )
    assert "✗ Rejected" in body and "Same answer throughout" in body and "<html" not in body
    # Overturning the rejection is a second step with a reason (tests/annotations/test_review_history.py).
    asked = researcher_client.post(url, {"decision": "approved"})
    assert asked.status_code == 422 and Assignment.objects.get(pk=fast.pk).review == "rejected"
    approve = researcher_client.post(url, {"decision": "approved", "change_reason": "checked again"})
    assert approve.status_code == 302
    fast.refresh_from_db()
    assert (fast.review, fast.review_reason) == ("approved", "")  # an approval clears the old reason


def test_the_approve_and_reject_buttons_differ_in_more_than_colour(researcher_client, reviewed):
    html = researcher_client.get(_url(reviewed["study"])).content.decode()
    assert 'class="approve">✓ Approve</button>' in html and 'class="reject">✗ Reject</button>' in html


def test_the_lookup_hashes_a_typed_prolific_id_and_never_keeps_it(researcher_client, reviewed, caplog):
    study, fast = reviewed["study"], reviewed["fast"]
    with caplog.at_level(logging.DEBUG):
        found = researcher_client.post(_url(study, "review-lookup"), {"platform_id": f"  {PROLIFIC_PID} "})
    html = found.content.decode()
    assert found.status_code == 200 and _shown(html) == [fast.pk] and "Found 1 participant" in html
    assert PROLIFIC_PID not in html and PROLIFIC_PID not in caplog.text
    assert not Participant.objects.filter(external_hash=PROLIFIC_PID).exists()
    missing = researcher_client.post(_url(study, "review-lookup"), {"platform_id": "nobody-like-that"}).content.decode()
    assert "No participant of this study has that id." in missing and _shown(missing) == []
    assert researcher_client.post(_url(study, "review-lookup"), {"platform_id": ""}).status_code == 422
    # An MTurk worker id finds its participant too: the hash is keyed by platform.
    mturk = _submit_all(study, code="A1B2C3MTURK", platform="mturk")
    assert _shown(
        researcher_client.post(_url(study, "review-lookup"), {"platform_id": "A1B2C3MTURK"}).content.decode()
    ) == [mturk.pk]


def test_the_exports_append_review_flags_rationale_survey_and_role(researcher_client, reviewed):
    study, fast = reviewed["study"], reviewed["fast"]
    services.review_assignment(assignment=fast, decision="rejected", reason="too_fast", note="=HYPERLINK(1)")
    raw = researcher_client.get(reverse("annotations:export", args=[study.slug, "csv"])).content.decode()
    reader = csv.DictReader(io.StringIO(raw))
    assert tuple(reader.fieldnames) == EXPORT_FIELDS
    assert list(EXPORT_FIELDS[:26]) == [  # the old columns keep their order
        "submission_id",
        "study",
        "condition",
        "batch",
        "participant",
        "platform",
        "assignment",
        "assignment_status",
        "review",
        "task_position",
        "task_kind",
        "instruction_index",
        "pair_id",
        "pair_index",
        "presentation",
        "cue",
        "slot_a_response",
        "slot_b_response",
        "choice",
        "chosen_response",
        "ranking",
        "bar_position",
        "display_order",
        "time_on_task_ms",
        "server_time_ms",
        "created_at",
    ]
    row = next(r for r in reader if r["assignment"] == str(fast.pk))
    assert row["review_reason"] == "too_fast" and row["review_note"] == "'=HYPERLINK(1)"  # CSV injection safe
    assert json.loads(row["flags"])[0]["code"] == "too_fast" and row["rationale"].startswith("<script>")
    assert (
        json.loads(row["survey"]) == {"post": {"fair": "yes"}}
        and row["task_role"] == Task.Role.ITEM
        and row["reviewed_at"]
    )
    data = json.loads(researcher_client.get(reverse("annotations:export", args=[study.slug, "json"])).content)
    first = next(r for r in data["submissions"] if r["assignment"] == fast.pk)
    assert (
        first["flags"] == [TOO_FAST, STRAIGHT] and first["review_reason"] == "too_fast" and first["task_role"] == "item"
    )


def test_it_checks_ownership(client, other_researcher, reviewed):
    study, fast = reviewed["study"], reviewed["fast"]
    client.force_login(other_researcher)
    assert client.get(_url(study)).status_code == 404
    assert client.post(_url(study, "review-lookup"), {"platform_id": PROLIFIC_PID}).status_code == 404
    assert client.post(_url(study, "review-bulk"), {"assignment": [fast.pk], "decision": "approved"}).status_code == 404
    assert (
        client.post(reverse("annotations:review", args=[study.slug, fast.pk]), {"decision": "approved"}).status_code
        == 404
    )
    assert Assignment.objects.get(pk=fast.pk).review == "pending"


def test_bulk_refuses_another_studys_work(researcher_client, reviewed, researcher):
    other = build_study("rev-other", instructions=1, created_by=researcher)
    services.generate_batches(study=other, condition="plain", seed=1, pairs_per_batch=2)
    foreign = _submit_all(other, code="foreign")
    response = researcher_client.post(
        _url(reviewed["study"], "review-bulk"),
        {"assignment": [reviewed["fast"].pk, foreign.pk], "decision": "approved"},
    )
    assert response.status_code == 422
    assert not Assignment.objects.filter(review="approved").exists()


def test_the_review_page_has_a_constant_number_of_queries(researcher_client, reviewed, django_assert_max_num_queries):
    for n in range(3):
        _submit_all(reviewed["study"], code=f"more-{n}")
    with django_assert_max_num_queries(14):
        assert researcher_client.get(_url(reviewed["study"])).status_code == 200


def test_the_api_rejects_with_a_reason_and_reports_it(researcher, reviewed):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    url = f"/api/assignments/{reviewed['fast'].pk}/review"
    assert api.post(url, {"decision": "rejected"}, format="json").status_code == 422
    assert Assignment.objects.get(pk=reviewed["fast"].pk).review == "pending"
    ok = api.post(url, {"decision": "rejected", "reason": "failed_checks", "note": "2 of 3 checks"}, format="json")
    assert ok.status_code == 200
    body = ok.json()
    assert (body["review"], body["review_reason"], body["flags"][0]["code"]) == (
        "rejected",
        "failed_checks",
        "too_fast",
    )
    assert body["reviewed_at"]
