"""Recruitment links and the crowd platforms' round trip: Prolific and MTurk (issue 12, item 2)."""

from __future__ import annotations

import html as htmllib
import re
import xml.etree.ElementTree as ET
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from django.urls import reverse

from annotations.models import Assignment, Participant
from annotations.services.recruitment import EXTERNAL_QUESTION_NS
from tests.annotations.conftest import build_study, current_task_url, enter, qualify
from tests.annotations.helpers import form_fields

PREVIEW = "assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1"


def _field(page: str, field_id: str) -> str:
    match = re.search(rf'<input id="{field_id}" type="text" readonly value="([^"]*)"', page)
    assert match, field_id
    return htmllib.unescape(match.group(1))


@pytest.fixture
def owned(pilot, researcher):
    pilot.created_by = researcher
    pilot.save(update_fields=["created_by"])
    return pilot


def test_the_crowd_page_has_copy_ready_absolute_links(researcher_client, owned):
    page = researcher_client.get(reverse("annotations:study", args=[owned.slug])).content.decode()
    start = f"http://testserver/s/{owned.slug}/start"
    assert _field(page, "prolific-url") == (
        f"{start}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}&SESSION_ID={{{{%SESSION_ID%}}}}"
    )
    codes = [_field(page, f"code-{i}") for i in (1, 2, 3)]
    assert codes == [owned.code_completed, owned.code_failed_qualification, owned.code_timed_out]
    for i, code in enumerate(codes, 1):
        assert _field(page, f"cc-url-{i}") == f"https://app.prolific.com/submissions/complete?cc={code}"
    # Every field has its copy button; the page carries no inline script (django-csp).
    for field in ("prolific-url", "code-1", "cc-url-3", "mturk-xml", "code-url"):
        assert f'data-copy="{field}"' in page
    assert re.findall(r"<script(?![^>]*\bsrc=)", page) == []
    assert "annotations/copy" in page
    xml = htmllib.unescape(
        re.search(r'<textarea id="mturk-xml" readonly rows="5">(.*?)</textarea>', page, re.S).group(1)
    )
    root = ET.fromstring(xml)
    assert root.tag == f"{{{EXTERNAL_QUESTION_NS}}}ExternalQuestion"
    assert root.find(f"{{{EXTERNAL_QUESTION_NS}}}ExternalURL").text == start
    assert int(root.find(f"{{{EXTERNAL_QUESTION_NS}}}FrameHeight").text) > 0


def test_the_prolific_link_as_prolific_fills_it_enters_the_study(client, pilot):
    enter(
        client, pilot, PROLIFIC_PID="60a1b2c3d4e5f6a7b8c9d0e1", STUDY_ID="61f0e1d2c3b4a5968778695a", SESSION_ID="sess-1"
    )
    assert Participant.objects.get().platform == "prolific"
    bad = Client().get(
        reverse("annotations:start", args=[pilot.slug]) + "?PROLIFIC_PID=p&STUDY_ID=%3Cx%3E&SESSION_ID=s"
    )
    assert bad.status_code == 400 and b"STUDY_ID" in bad.content and Participant.objects.count() == 1
    # The older entry links keep working.
    enter(Client(), pilot, code="plain-code")
    enter(Client(), pilot, workerId="AWORKER0000001", assignmentId="A1", hitId="H1")
    assert sorted(Participant.objects.values_list("platform", flat=True)) == ["code", "mturk", "prolific"]


@pytest.mark.parametrize("query", [PREVIEW, f"workerId=W9&{PREVIEW}&turkSubmitTo=https://www.mturk.com"])
def test_the_mturk_preview_shows_consent_and_a_sample_task_and_creates_nothing(client, pilot, query):
    pilot.consent_text = "Consent text of this study."
    pilot.save(update_fields=["consent_text"])
    response = client.get(reverse("annotations:start", args=[pilot.slug]) + "?" + query)
    page = response.content.decode()
    assert response.status_code == 200 and "Consent text of this study." in page
    assert 'id="sample-task"' in page and "Question 0?" in page
    # Read-only: no form to post, no enabled button, no cookie, no row.
    assert "<form" not in page and re.findall(r"<button(?![^>]*disabled)", page) == []
    assert (
        f"cw_{pilot.pk}" not in response.cookies
        and Participant.objects.count() == 0
        and Assignment.objects.count() == 0
    )
    # MTurk frames the preview: this page (only) may be framed by MTurk's worker sites.
    assert "frame-ancestors https://worker.mturk.com" in response["Content-Security-Policy"]
    assert "X-Frame-Options" not in response
    assert "no-store" in response["Cache-Control"]


def test_other_worker_pages_still_refuse_frames(worker, pilot):
    response = worker.get(reverse("annotations:consent", args=[pilot.slug]))
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"] and response["X-Frame-Options"] == "DENY"


def _finish(client: Client, study) -> str:
    while True:
        url = current_task_url(client, study)
        if url.endswith("/done"):
            return url
        token, _ = form_fields(client, url)
        client.post(url, {"token": token, "choice": "A"})


@pytest.mark.parametrize("host", ["https://workersandbox.mturk.com", "https://www.mturk.com/"])
def test_mturk_workers_post_the_hit_back_to_turk_submit_to(client, pilot, host):
    enter(client, pilot, workerId="AWORKER1000009", assignmentId="3ASSIGN9", hitId="3HIT", turkSubmitTo=host)
    qualify(client, pilot)
    response = client.get(_finish(client, pilot))
    page = response.content.decode()
    action = host.rstrip("/") + "/mturk/externalSubmit"
    form = re.search(r'<form method="post" action="([^"]+)" id="mturk-submit-form">(.*?)</form>', page, re.S)
    assert form and form.group(1) == action
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', form.group(2)))
    assert fields == {"assignmentId": "3ASSIGN9", "completion_code": pilot.code_completed}
    assert "csrfmiddlewaretoken" not in form.group(2)  # never hand our CSRF token to another site
    # The CSP lets this page, and no other, post there.
    assert re.search(rf"form-action 'self' {re.escape(host.rstrip('/'))}(;|$)", response["Content-Security-Policy"])
    consent = client.get(reverse("annotations:consent", args=[pilot.slug]))
    assert "form-action 'self';" in consent["Content-Security-Policy"] + ";"
    # The worker id is in no cookie; the assignment id is (it is posted back), hashed in the database.
    cookie = client.cookies[f"cw_{pilot.pk}"].value
    assert "AWORKER1000009" not in cookie
    assert "3ASSIGN9" not in str(list(Assignment.objects.values_list("external_session_hash", flat=True)))


@pytest.mark.parametrize(
    "target",
    [
        "https://evil.example",
        "https://www.mturk.com.evil.example",
        "http://www.mturk.com",
        "https://evil.example/?https://www.mturk.com",
        "javascript:alert(1)",
        "//www.mturk.com",
    ],
)
def test_turk_submit_to_names_only_the_two_mturk_hosts(client, pilot, target):
    response = client.get(
        reverse("annotations:start", args=[pilot.slug]),
        {"workerId": "AWORKER0000001", "assignmentId": "A1", "hitId": "H1", "turkSubmitTo": target},
    )
    assert response.status_code == 400 and b"turkSubmitTo" in response.content
    assert Participant.objects.count() == 0 and f"cw_{pilot.pk}" not in response.cookies


def test_an_accepted_hit_inside_mturks_frame_opens_in_its_own_tab(client, pilot):
    url = (
        reverse("annotations:start", args=[pilot.slug])
        + "?workerId=AWORKER0000001&assignmentId=A1&hitId=H1&turkSubmitTo=https://www.mturk.com"
    )
    framed = client.get(url, headers={"Sec-Fetch-Dest": "iframe", "Sec-Fetch-Site": "cross-site"})
    page = framed.content.decode()
    assert framed.status_code == 200 and 'target="_blank"' in page
    link = htmllib.unescape(re.search(r'id="open-in-tab" href="([^"]+)"', page).group(1))
    assert parse_qs(urlsplit(link).query)["assignmentId"] == ["A1"]
    assert Participant.objects.count() == 0  # a cookie set in a cross-site frame would be lost
    top = client.get(link, headers={"Sec-Fetch-Dest": "document", "Sec-Fetch-Site": "cross-site"})
    assert top.status_code == 302 and Participant.objects.count() == 1


@pytest.fixture
def empty_study(db):
    return build_study("no-batches")


def test_a_preview_of_a_study_without_batches_still_shows_the_consent(client, empty_study):
    response = client.get(reverse("annotations:start", args=[empty_study.slug]) + "?" + PREVIEW)
    assert response.status_code == 200 and b"Consent" in response.content and b"sample-task" not in response.content
