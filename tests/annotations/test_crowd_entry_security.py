"""Crowd entry hardening: bound task tokens, fast expiry of never-opened leases, a qualification
that reveals nothing, allow-listed or signed ``?code=`` entry, one open lease per participant."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from annotations import answers, services
from annotations.models import Assignment, Participant, QualificationItem, Submission
from annotations.models.qualification import ITEMS_SHOWN
from annotations.tasks import expire_stale_leases
from tests.annotations.conftest import build_study, current_task_url, enter, qualify
from tests.annotations.helpers import form_fields

pytestmark = pytest.mark.django_db


def _position_url(url: str, position: int) -> str:
    return url.rsplit("/", 1)[0] + f"/{position}"


# --- Task tokens bound to (assignment, task) ------------------------------------------------


def test_a_token_of_task_1_cannot_answer_task_2(worker, pilot):
    first = current_task_url(worker, pilot)
    token_1, _ = form_fields(worker, first)
    second = _position_url(first, 1)
    response = worker.post(second, {"token": token_1, "choice": "A"})
    assert response.status_code == 422 and b"expired" in response.content
    assert not Submission.objects.exists()
    # The token still answers its own task.
    assert worker.post(first, {"token": token_1, "choice": "A"}).status_code == 302
    assert Submission.objects.get().task.position == 0


def test_a_task_cannot_be_answered_without_its_page_being_rendered(worker, pilot):
    url = current_task_url(worker, pilot)
    assignment = Assignment.objects.get()
    task = assignment.batch.tasks.get(position=0)
    # A token with the old, unbound format (or any other salt) is refused.
    from django.core import signing

    unbound = signing.dumps({"n": "x", "t": 0}, salt=answers.TOKEN_SALT)
    assert worker.post(url, {"token": unbound, "choice": "A"}).status_code == 422
    assert worker.post(url, {"choice": "A"}).status_code == 422
    assert not Submission.objects.exists()
    # A token issued for this (assignment, task) is what the rendered page carries.
    bound = answers.issue_token(assignment_id=assignment.pk, task_id=task.pk)
    assert worker.post(url, {"token": bound, "choice": "A"}).status_code == 302


def test_a_token_of_another_workers_assignment_is_refused(worker, other_worker, pilot):
    mine = current_task_url(worker, pilot)
    token_mine, _ = form_fields(worker, mine)
    theirs = current_task_url(other_worker, pilot)
    form_fields(other_worker, theirs)
    mine_a = Assignment.objects.get(pk=int(mine.split("/a/")[1].split("/")[0]))
    theirs_a = Assignment.objects.get(pk=int(theirs.split("/a/")[1].split("/")[0]))
    assert mine_a.pk != theirs_a.pk
    # My token, posted by the other worker to their own task at the same position.
    assert other_worker.post(theirs, {"token": token_mine, "choice": "A"}).status_code == 422
    assert not Submission.objects.filter(assignment=theirs_a).exists()


def test_replays_stay_idempotent_with_bound_tokens(worker, pilot):
    url = current_task_url(worker, pilot)
    token, _ = form_fields(worker, url)
    assert worker.post(url, {"token": token, "choice": "B"}).status_code == 302
    again = worker.post(url, {"token": token, "choice": "A"})
    assert again.status_code == 302
    sub = Submission.objects.get()
    assert sub.choice == "B"  # first answer wins, one row


# --- Never-opened leases expire fast -------------------------------------------------------


def _age(assignment: Assignment, minutes: int) -> None:
    Assignment.objects.filter(pk=assignment.pk).update(started_at=timezone.now() - timedelta(minutes=minutes))


@override_settings(CROWD_UNOPENED_LEASE_MINUTES=10)
def test_a_lease_never_opened_expires_after_the_short_limit(worker, pilot):
    worker.get(reverse("annotations:work", args=[pilot.slug]))  # leases, but the task page is never loaded
    assignment = Assignment.objects.get()
    assert assignment.opened_at is None and assignment.status == Assignment.Status.ACTIVE
    _age(assignment, 9)
    assert expire_stale_leases.apply().get() == 0
    _age(assignment, 11)
    assert expire_stale_leases.apply().get() == 1
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.EXPIRED
    assert assignment.leased_until > timezone.now()  # the study's lease had not run out


@override_settings(CROWD_UNOPENED_LEASE_MINUTES=10)
def test_an_opened_lease_keeps_the_studys_lease(worker, pilot):
    url = current_task_url(worker, pilot)
    worker.get(url)
    assignment = Assignment.objects.get()
    assert assignment.opened_at is not None
    _age(assignment, 30)
    assert expire_stale_leases.apply().get() == 0
    token, _ = form_fields(worker, url)
    assert worker.post(url, {"token": token, "choice": "A"}).status_code == 302
    assert Assignment.objects.get().status == Assignment.Status.ACTIVE


@override_settings(CROWD_UNOPENED_LEASE_MINUTES=10)
def test_the_claim_frees_places_held_by_unopened_leases(db):
    study = build_study("tight", overlap=1)
    services.generate_batches(study=study, condition="bandwagon", seed=3, pairs_per_batch=3)
    n_batches = study.batches.count()
    real = Client()  # entered while places were free (a full study turns new arrivals away at the door)
    enter(real, study, code="real")
    qualify(real, study)
    squatters = []
    for i in range(n_batches):
        c = Client()
        enter(c, study, code=f"bot-{i}")
        qualify(c, study)
        c.get(reverse("annotations:work", args=[study.slug]))  # lease, never open
        squatters.append(c)
    assert real.get(reverse("annotations:work", args=[study.slug])).status_code == 200  # "no work"
    Assignment.objects.update(started_at=timezone.now() - timedelta(minutes=11))
    url = current_task_url(real, study)
    assert "/a/" in url
    assert real.get(url).status_code == 200
    # A squatter coming back finds its lease timed out.
    back = squatters[0].get(reverse("annotations:work", args=[study.slug]))
    assert back["Location"].endswith("/done")


# --- The qualification reveals nothing -----------------------------------------------------


def _fail_once(client: Client, study) -> tuple[str, list[QualificationItem]]:
    """One failed attempt (only the first shown item right); returns the page and the items it graded."""
    client.post(reverse("annotations:consent", args=[study.slug]), {"agree": "yes"})
    participant = Participant.objects.get(study=study)
    items = services.qualification_draw(participant=participant)
    wrong = {f"q{i.pk}": ("B" if i.gold == "A" else "A") for i in items}
    wrong[f"q{items[0].pk}"] = items[0].gold  # one right, the others wrong
    response = client.post(reverse("annotations:qualify", args=[study.slug]), wrong)
    assert response.status_code == 422
    return response.content.decode(), items


def test_a_failed_qualification_shows_no_gold_answers(client, pilot):
    enter(client, pilot)
    html, items = _fail_once(client, pilot)
    assert "try again" in html
    for item in QualificationItem.for_study(pilot):  # as the page would show it: escaped
        assert escape(item.explanation) not in html
    assert "wrong" not in html.split('id="qualify-form"')[1]  # no item is marked
    assert " checked" not in html  # the previous picks are not echoed back either
    assert 'class="hint"' not in html


def test_the_study_may_choose_to_reveal_the_explanations(client, pilot):
    pilot.qualification_reveal_answers = True
    pilot.save()
    enter(client, pilot)
    html, items = _fail_once(client, pilot)
    participant = Participant.objects.get()
    # The retry is of the same, explained items, named as they are now shown.
    assert {i.pk for i, _ in services.qualification_layout(participant=participant)} == {i.pk for i in items}
    swapped = {i.pk: flag for i, flag in services.qualification_layout(participant=participant)}
    # Compared as the page shows them, escaped (an explanation may hold an apostrophe).
    assert escape(services.shown_explanation(items[1], swapped=swapped[items[1].pk])) in html
    assert "qitem wrong" in html
    assert f'<p class="hint">{escape(services.shown_explanation(items[0], swapped=swapped[items[0].pk]))}' not in html


def test_a_swapped_explanation_names_the_slots_as_shown(pilot):
    item = QualificationItem.for_study(pilot)[0]
    assert item.explanation.startswith("System A agrees")
    assert services.shown_explanation(item, swapped=True).startswith("System B agrees")
    assert "System A is wrong" in services.shown_explanation(item, swapped=True)
    assert services.shown_explanation(item, swapped=False) == item.explanation


def _shown_order(html: str, items: list[QualificationItem]) -> list[int]:
    return [pk for _, pk in sorted((html.index(f'name="q{i.pk}"'), i.pk) for i in items if f'name="q{i.pk}"' in html)]


def test_items_are_drawn_from_a_pool_and_reordered_per_participant_and_attempt(pilot):
    pool = QualificationItem.for_study(pilot)
    assert len(pool) >= 3 * ITEMS_SHOWN
    layouts, drawn = set(), set()
    for n in range(6):
        participant = Participant.objects.create(study=pilot, platform="code", external_hash=f"h{n}")
        participant.study = pilot
        for attempt in range(3):
            participant.qualification_attempts = attempt
            layout = services.qualification_layout(participant=participant)
            assert layout == services.qualification_layout(participant=participant)  # stable on reload
            assert len(layout) == ITEMS_SHOWN and len({item.pk for item, _ in layout}) == ITEMS_SHOWN
            layouts.add(tuple((item.pk, swapped) for item, swapped in layout))
            drawn.add(frozenset(item.pk for item, _ in layout))
    assert len(drawn) > 6  # different items, not only a different order
    assert len({pk for items in drawn for pk in items}) > ITEMS_SHOWN * 2  # the pool is used
    assert any(swapped for layout in layouts for _, swapped in layout)
    assert any(not swapped for layout in layouts for _, swapped in layout)


def test_the_page_follows_the_layout_and_a_retry_draws_again(client, pilot):
    enter(client, pilot)
    client.post(reverse("annotations:consent", args=[pilot.slug]), {"agree": "yes"})
    items = QualificationItem.for_study(pilot)
    participant = Participant.objects.get()
    url = reverse("annotations:qualify", args=[pilot.slug])
    html = client.get(url).content.decode()
    expected = services.qualification_layout(participant=participant)
    assert _shown_order(html, items) == [item.pk for item, _ in expected]
    for item, swapped in expected:
        block = html.split(f'name="q{item.pk}"')[0].rsplit("<fieldset", 1)[1]
        first, second = (item.answer_b, item.answer_a) if swapped else (item.answer_a, item.answer_b)
        assert block.index(first) < block.index(second)
    # A failed attempt shows the next attempt's draw, graded as drawn.
    wrong = {f"q{item.pk}": ("B" if item.gold == "A" else "A") for item, _ in expected}
    retry = client.post(url, wrong).content.decode()
    participant.refresh_from_db()
    again = services.qualification_layout(participant=participant)
    assert _shown_order(retry, items) == [item.pk for item, _ in again] != [item.pk for item, _ in expected]
    # Gold values still post as the canonical slots (the conftest helper passes).
    qualify(client, pilot)
    assert Participant.objects.get().qualified


# --- ?code= entry: allow-listed or signed codes --------------------------------------------


def test_any_code_enters_by_default(client, pilot):
    assert client.get(f"/s/{pilot.slug}/start?code=anything").status_code == 302


def test_only_listed_codes_enter_when_the_study_lists_them(pilot):
    pilot.entry_codes = ["alpha-1", "beta-2"]
    pilot.save()
    assert Client().get(f"/s/{pilot.slug}/start?code=alpha-1").status_code == 302
    refused = Client().get(f"/s/{pilot.slug}/start?code=made-up")
    assert refused.status_code == 400 and b"not valid" in refused.content
    assert Participant.objects.count() == 1
    # Platform entries (Prolific, MTurk) are not affected.
    assert Client().get(f"/s/{pilot.slug}/start?PROLIFIC_PID=abc123abc123abc123abc123&SESSION_ID=s1").status_code == 302


def test_signed_codes_enter_and_forged_ones_do_not(pilot):
    other = build_study("other")
    pilot.entry_codes_signed = True
    pilot.save()
    good = services.sign_entry_code(study=pilot, code_id="w-17")
    assert Client().get(f"/s/{pilot.slug}/start?code={good}").status_code == 302
    forged = "w-18." + good.rsplit(".", 1)[1]
    assert Client().get(f"/s/{pilot.slug}/start?code={forged}").status_code == 400
    assert Client().get(f"/s/{pilot.slug}/start?code=w-19").status_code == 400
    # A code signed for another study is no good here.
    elsewhere = services.sign_entry_code(study=other, code_id="w-20")
    assert Client().get(f"/s/{pilot.slug}/start?code={elsewhere}").status_code == 400
    assert Participant.objects.filter(study=pilot).count() == 1


# --- At most one live assignment per participant -------------------------------------------


def test_a_participant_never_holds_two_open_leases(pilot):
    client = Client()
    enter(client, pilot, PROLIFIC_PID="60a1b2c3d4e5f6a7b8c9d001", SESSION_ID="sess-1")
    qualify(client, pilot)
    first = current_task_url(client, pilot)
    # A second session of the same worker (new SESSION_ID, other browser) resumes the same lease.
    other = Client()
    enter(other, pilot, PROLIFIC_PID="60a1b2c3d4e5f6a7b8c9d001", SESSION_ID="sess-2")
    assert current_task_url(other, pilot) == first
    participant = Participant.objects.get()
    participant.study = pilot
    # Direct claims are refused too.
    assert services.claim_batch(participant=participant, session_hash="x") is None
    assert services.claim_batch(participant=participant, session_hash="y") is None
    assert Assignment.objects.filter(participant=participant, status=Assignment.Status.ACTIVE).count() == 1
    assert Assignment.objects.filter(participant=participant).count() == 1
