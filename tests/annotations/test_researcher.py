from __future__ import annotations

import csv
import io
import json

import pytest
from django.urls import reverse

from annotations.models import Assignment, Study, Submission
from tests.annotations.conftest import build_study, current_task_url
from tests.annotations.helpers import form_fields


@pytest.fixture
def answered(worker, pilot):
    """The pilot study with worker-1's first two answers and a finished assignment."""
    for _ in range(2):
        url = current_task_url(worker, pilot)
        token, _ = form_fields(worker, url)
        worker.post(url, {"token": token, "choice": "A", "client_ms": "2000"})
    Assignment.objects.update(status=Assignment.Status.SUBMITTED)
    return pilot


def test_anonymous_and_workers_are_sent_to_log_in(client, pilot):
    response = client.get(reverse("annotations:study", args=[pilot.slug]))
    assert response.status_code == 302 and "login" in response["Location"]


def test_it_checks_ownership(researcher_client, other_researcher, pilot):
    Study.objects.filter(pk=pilot.pk).update(created_by=other_researcher)
    assert researcher_client.get(reverse("annotations:study", args=[pilot.slug])).status_code == 404
    assert researcher_client.get(reverse("annotations:export", args=[pilot.slug, "csv"])).status_code == 404


def test_progress_page_and_its_polling_fragment(researcher_client, answered, django_assert_max_num_queries):
    url = reverse("annotations:study", args=[answered.slug])
    page = researcher_client.get(url)
    assert page.status_code == 200 and b"<html" in page.content and b'hx-trigger="every 2s"' in page.content
    with django_assert_max_num_queries(8):  # constant in the number of batches
        fragment = researcher_client.get(url, headers={"HX-Request": "true"})
    body = fragment.content.decode()
    assert "<html" not in body and body.lstrip().startswith('<div id="progress"')
    assert "0 / 1 / 2" in body  # active / submitted / target of the worker's batch


def test_review_approves_and_rejects(researcher_client, answered):
    assignment = Assignment.objects.get()
    url = reverse("annotations:review", args=[answered.slug, assignment.pk])
    response = researcher_client.post(
        url, {"decision": "rejected", "reason": "too_fast", "note": "too fast"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200 and f'id="review-{assignment.pk}"' in response.content.decode()
    assignment.refresh_from_db()
    assert (assignment.review, assignment.review_note) == ("rejected", "too fast")
    bad = researcher_client.post(url, {"decision": "maybe"}, headers={"HX-Request": "true"})
    assert bad.status_code == 422
    assignment.refresh_from_db()
    assert assignment.review == "rejected"


def test_exports_hold_pseudonymous_ids_only(researcher_client, answered):
    raw = researcher_client.get(reverse("annotations:export", args=[answered.slug, "csv"])).content.decode()
    rows = list(csv.DictReader(io.StringIO(raw)))
    assert len(rows) == 2 and rows[0]["participant"].startswith("p-") and "worker-1" not in raw
    assert rows[0]["choice"] == "A" and json.loads(rows[0]["display_order"])
    data = json.loads(researcher_client.get(reverse("annotations:export", args=[answered.slug, "json"])).content)
    assert [r["submission_id"] for r in data["submissions"]] == list(
        Submission.objects.order_by("task__position").values_list("pk", flat=True)
    )
    assert researcher_client.get(reverse("annotations:export", args=[answered.slug, "xml"])).status_code == 404


def test_generate_from_the_page(researcher_client, db):
    study = build_study("gen", instructions=2)
    url = reverse("annotations:generate", args=[study.slug])
    response = researcher_client.post(url, {"condition": "attentional", "seed": 3, "pairs_per_batch": 2})
    assert response.status_code == 302 and study.batches.count() == 2
    again = researcher_client.post(
        url, {"condition": "attentional", "seed": 3, "pairs_per_batch": 2}, headers={"HX-Request": "true"}
    )
    assert again.status_code == 422 and b"already has" in again.content and b"<html" not in again.content
    assert study.batches.count() == 2


def test_create_a_study_from_another(researcher_client, researcher, db):
    source = build_study("demo-src", instructions=2)
    response = researcher_client.post(
        reverse("annotations:studies"),
        {
            "name": "Copy",
            "slug": "copy",
            "from_study": source.slug,
            "overlap": 3,
            "bandwagon_percent": 80,
            "lease_minutes": 60,
        },
    )
    assert response.status_code == 302
    copy = Study.objects.get(slug="copy")
    assert copy.created_by == researcher and copy.bandwagon_percent == 80
    assert copy.instructions.count() == 2 and sum(i.responses.count() for i in copy.instructions.all()) == 8
    taken = {"name": "x", "slug": "copy", "overlap": 3, "bandwagon_percent": 80, "lease_minutes": 60}
    dup = researcher_client.post(reverse("annotations:studies"), taken)
    # Without htmx the form comes back on a page of its own; with htmx, alone, in place.
    assert dup.status_code == 422 and b"<html" in dup.content and b'id="study-form"' in dup.content
    again = researcher_client.post(reverse("annotations:studies"), taken, headers={"HX-Request": "true"})
    assert again.status_code == 422 and again.content.decode().lstrip().startswith('<form id="study-form"')
    assert Study.objects.filter(slug="copy").count() == 1
