from __future__ import annotations

from django.test import Client, override_settings
from django.urls import reverse

from annotations import services
from annotations.models import Participant, QualificationItem
from annotations.pseudonyms import pseudonymise
from tests.annotations.conftest import build_study, enter


def test_prolific_entry_stores_only_a_keyed_hash(client, pilot):
    enter(client, pilot, PROLIFIC_PID="5f1a2b3c4d5e6f7a8b9c0d1e", STUDY_ID="s1", SESSION_ID="sess-9")
    participant = Participant.objects.get()
    assert participant.platform == "prolific"
    assert participant.external_hash == pseudonymise("prolific", "5f1a2b3c4d5e6f7a8b9c0d1e")
    assert "5f1a2b3c" not in participant.label
    # The cookie carries ids and hashes, never the platform id.
    cookie = client.cookies[f"cw_{pilot.pk}"].value
    assert "5f1a2b3c4d5e6f7a8b9c0d1e" not in cookie and "sess-9" not in cookie


def test_the_worker_cookie_is_https_only_where_the_session_cookie_is(client, pilot):
    enter(client, pilot, PROLIFIC_PID="5f1a2b3c4d5e6f7a8b9c0d1e", STUDY_ID="s1", SESSION_ID="sess-9")
    cookie = client.cookies[f"cw_{pilot.pk}"]
    assert cookie["httponly"] and cookie["samesite"] == "Lax" and not cookie["secure"]  # DEBUG's http
    with override_settings(SESSION_COOKIE_SECURE=True):
        secure = Client()
        enter(secure, pilot, PROLIFIC_PID="6f1a2b3c4d5e6f7a8b9c0d1e", STUDY_ID="s1", SESSION_ID="sess-10")
        assert secure.cookies[f"cw_{pilot.pk}"]["secure"]


def test_a_returning_worker_is_the_same_participant(client, pilot):
    enter(client, pilot, workerId="A1B2C3D4E5F6G7", assignmentId="X1", hitId="H1")
    enter(Client(), pilot, workerId="A1B2C3D4E5F6G7", assignmentId="X1", hitId="H1")
    assert Participant.objects.count() == 1


def test_it_rejects_links_without_an_id_and_shows_mturk_previews_read_only(client, pilot):
    url = reverse("annotations:start", args=[pilot.slug])
    assert client.get(url).status_code == 400
    # The preview (tests/annotations/test_recruitment.py) is a page, not an entry: no cookie.
    preview = client.get(url + "?workerId=W&assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H")
    assert preview.status_code == 200 and b"Preview" in preview.content
    assert f"cw_{pilot.pk}" not in preview.cookies
    assert client.get(url + "?code=%3Cscript%3E").status_code == 400
    assert Participant.objects.count() == 0


def test_pages_without_the_signed_cookie_explain_how_to_enter(client, pilot):
    response = client.get(reverse("annotations:work", args=[pilot.slug]))
    assert response.status_code == 403
    client.cookies[f"cw_{pilot.pk}"] = "1:"  # unsigned: forged
    assert client.get(reverse("annotations:work", args=[pilot.slug])).status_code == 403


def test_a_worker_of_one_study_is_a_stranger_to_another(client, pilot):
    # The worker pages find the study through the worker's cookie (one query): a valid cookie of
    # one study opens no other, even renamed to the other study's cookie.
    other = build_study("other", overlap=2)
    services.generate_batches(study=other, condition="bandwagon", seed=7, pairs_per_batch=3)
    enter(client, pilot)
    assert client.get(reverse("annotations:work", args=[pilot.slug])).status_code == 302
    assert client.get(reverse("annotations:work", args=[other.slug])).status_code == 403
    client.cookies[f"cw_{other.pk}"] = client.cookies[f"cw_{pilot.pk}"].value  # salted by study
    assert client.get(reverse("annotations:work", args=[other.slug])).status_code == 403
    assert client.get(reverse("annotations:work", args=["no-such-study"])).status_code == 404
    enter(client, other)  # a browser in both studies is each one's own participant
    participants = {p.study_id: p.pk for p in Participant.objects.all()}
    assert client.get(reverse("annotations:work", args=[other.slug])).status_code == 302
    assert client.get(reverse("annotations:consent", args=[pilot.slug])).status_code == 200
    assert len(participants) == 2


def test_consent_comes_first_and_needs_the_box(client, pilot):
    enter(client, pilot)
    assert client.get(reverse("annotations:work", args=[pilot.slug]))["Location"].endswith("/consent")
    response = client.post(reverse("annotations:consent", args=[pilot.slug]), {}, headers={"HX-Request": "true"})
    assert response.status_code == 422
    assert b'<form id="consent-form"' in response.content and b"<html" not in response.content
    response = client.post(
        reverse("annotations:consent", args=[pilot.slug]), {"agree": "yes"}, headers={"HX-Request": "true"}
    )
    assert response["HX-Redirect"].endswith("/instructions")
    assert Participant.objects.get().consented_at is not None


def test_qualification_allows_a_retry_then_gives_the_failure_code(client, pilot):
    enter(client, pilot)
    client.post(reverse("annotations:consent", args=[pilot.slug]), {"agree": "yes"})
    url = reverse("annotations:qualify", args=[pilot.slug])
    page = client.get(url)
    assert page.status_code == 200 and b"<html" in page.content
    items = QualificationItem.for_study(pilot)
    assert len(items) >= 3 * 3  # a pool: three items shown, drawn from at least three times as many
    assert page.content.decode().count('type="radio"') == 3 * 2
    wrong = {f"q{i.pk}": ("B" if i.gold == "A" else "A") for i in items}

    incomplete = client.post(url, {f"q{items[0].pk}": "A"})
    assert incomplete.status_code == 422 and Participant.objects.get().qualification_attempts == 0

    first = client.post(url, wrong, headers={"HX-Request": "true"})
    assert first.status_code == 422 and b"try again" in first.content and b"<html" not in first.content
    assert Participant.objects.get().qualification_attempts == 1

    second = client.post(url, wrong)
    assert second.status_code == 302 and second["Location"].endswith("/done")
    done = client.get(second["Location"])
    assert pilot.code_failed_qualification in done.content.decode()
    assert pilot.code_completed not in done.content.decode()
    assert not Participant.objects.get().qualified


def test_passing_the_qualification_leads_to_the_first_task(client, pilot):
    enter(client, pilot)
    client.post(reverse("annotations:consent", args=[pilot.slug]), {"agree": "yes"})
    items = QualificationItem.for_study(pilot)
    response = client.post(reverse("annotations:qualify", args=[pilot.slug]), {f"q{i.pk}": i.gold for i in items})
    assert response["Location"].endswith("/work")
    task_url = client.get(response["Location"])["Location"]
    assert "/a/" in task_url and task_url.endswith("/0")
