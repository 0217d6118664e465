"""Capacity first, and studies that grow (issue 22, items 1 and 2).

A full study turns a new worker away at the door, before consent, with the platform's way back
or the "no work available" code; the hub shows free places against the places recruited and
adds a round; a condition's batches grow as rounds, beside imported votes too.
"""

from __future__ import annotations

import html
import re
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.messages import get_messages
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotations import services
from annotations.importers.generic_write import IMPORT_LABEL, import_study
from annotations.models import Assignment, Batch, Participant, Study
from annotations.pseudonyms import pseudonymise
from annotations.services.capacity import has_free_place, no_work_code, study_capacity
from annotations.services.rounds import describe_round, round_of
from tests.annotations.conftest import build_study, current_task_url, enter, mturk_worker_id, prolific_id, qualify

GENERIC = Path(__file__).resolve().parent.parent / "fixtures" / "generic_study"


def _start(client: Client, study, **params: str):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return client.get(reverse("annotations:start", args=[study.slug]) + "?" + query)


def _full_study(slug: str = "full", **fields):
    """One plain batch, one place (overlap 1), taken by a first worker's lease."""
    study = build_study(slug, instructions=1, overlap=1, **fields)
    services.generate_batches(study=study, condition="plain", seed=1, pairs_per_batch=1)
    first = Client()
    enter(first, study, code="first")
    qualify(first, study)
    assert "/a/" in current_task_url(first, study)
    return study, first


# --- Capacity: places, taken, free ----------------------------------------------------------


def test_capacity_counts_places_per_condition(db):
    study = build_study("cap", instructions=2, overlap=2)
    services.generate_batches(study=study, condition="plain", seed=1, pairs_per_batch=1)
    services.generate_batches(study=study, condition="ranking", seed=1)
    worker = Client()
    enter(worker, study, code="w1")
    qualify(worker, study)
    current_task_url(worker, study)
    capacity = study_capacity(study)
    rows = {row.condition: (row.batches, row.places, row.taken, row.free) for row in capacity.conditions}
    taken = Assignment.objects.get().batch.condition
    assert rows == {
        "plain": (2, 4, int(taken == "plain"), 4 - int(taken == "plain")),
        "ranking": (1, 2, int(taken == "ranking"), 2 - int(taken == "ranking")),
    }
    assert (capacity.places, capacity.taken, capacity.free, capacity.entered) == (6, 1, 5, 1)
    assert capacity.round_places == 2 * 2  # a pairwise round: one batch per instruction x K


def test_rejected_work_and_expired_leases_free_their_place(db):
    study, first = _full_study("freed")
    assert not has_free_place(study)
    # The lease runs out (as today): its place is free again, and the claim would take it.
    Assignment.objects.update(leased_until=timezone.now() - timedelta(minutes=1))
    assert has_free_place(study)
    assert Assignment.objects.get().status == Assignment.Status.EXPIRED
    late = Client()
    assert _start(late, study, code="late").status_code == 302  # the door lets them in
    qualify(late, study)
    assert "/a/" in current_task_url(late, study)
    assert not has_free_place(study)


def test_an_unopened_lease_frees_its_place_after_the_short_lease(db, settings):
    settings.CROWD_UNOPENED_LEASE_MINUTES = 10
    study, _first = _full_study("unopened")
    Assignment.objects.update(opened_at=None, started_at=timezone.now() - timedelta(minutes=11))
    assert study_capacity(study).free == 1


def test_planned_places_beyond_the_free_ones_are_a_shortfall(db):
    study = build_study("plan", instructions=3, overlap=2)
    services.generate_batches(study=study, condition="order", seed=1, pairs_per_batch=1)
    assert study_capacity(study, planned=6).shortfall == 0
    over = study_capacity(study, planned=20)
    assert (over.free, over.shortfall, over.round_places, over.rounds_needed) == (6, 14, 6, 3)


# --- The door: before consent -------------------------------------------------------------


def test_a_full_study_turns_a_prolific_worker_away_before_consent(db):
    study, _first = _full_study("door-prolific")
    participants = Participant.objects.count()
    response = _start(Client(), study, PROLIFIC_PID=prolific_id("late"), STUDY_ID="s", SESSION_ID="x1")
    page = response.content.decode()
    assert response.status_code == 200 and "No task is free right now" in page
    assert "before any work" in page
    code = no_work_code(study)
    assert re.search(r'id="no-work-code">\s*' + code, page)
    assert f'href="https://app.prolific.com/submissions/complete?cc={code}"' in page
    # Nothing is created and no cookie is set: the worker has not entered the study.
    assert Participant.objects.count() == participants and f"cw_{study.pk}" not in response.cookies
    assert response["Cache-Control"].startswith("max-age=0") or "no-store" in response["Cache-Control"]
    # Try again checks the door again with the same link (escaped in the page).
    assert 'href="/s/door-prolific/start?PROLIFIC_PID=' in page and "&amp;STUDY_ID=s&amp;SESSION_ID=x1" in page


def test_the_no_work_code_is_per_study_and_differs_from_the_paid_codes(db):
    one, two = build_study("code-1"), build_study("code-2")
    code = no_work_code(one)
    assert re.fullmatch(r"[0-9A-F]{8}", code) and code == no_work_code(one) and code != no_work_code(two)
    assert code not in (one.code_completed, one.code_failed_qualification, one.code_timed_out)


def test_a_full_study_sends_an_mturk_worker_back_to_return_the_hit(db):
    study, _first = _full_study("door-mturk")
    response = _start(
        Client(),
        study,
        workerId=mturk_worker_id("late"),
        assignmentId="ASSIGN9",
        hitId="H",
        turkSubmitTo="https://workersandbox.mturk.com",
    )
    page = response.content.decode()
    assert 'id="mturk-return" href="https://workersandbox.mturk.com/tasks"' in page
    assert no_work_code(study) in page and "Return</strong> button" in page


def test_a_full_study_gives_a_code_participant_the_code_and_no_platform_link(db):
    study, _first = _full_study("door-code", prolific_redirect=False)
    page = _start(Client(), study, code="late").content.decode()
    assert no_work_code(study) in page and "researcher who sent you the link" in page
    assert "prolific.com" not in page and "mturk" not in page.lower()
    # Prolific without the redirect: the code, and no link back.
    page = _start(Client(), study, PROLIFIC_PID=prolific_id("p"), STUDY_ID="s", SESSION_ID="s").content.decode()
    assert no_work_code(study) in page and 'id="prolific-return"' not in page


def test_the_mturk_preview_of_a_full_study_says_not_to_accept(db):
    study, _first = _full_study("preview-full")
    preview = "assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1"
    page = Client().get(reverse("annotations:start", args=[study.slug]) + "?" + preview).content.decode()
    assert 'id="preview-full"' in page and 'id="mturk-preview"' in page
    Assignment.objects.update(leased_until=timezone.now() - timedelta(minutes=1))
    page = Client().get(reverse("annotations:start", args=[study.slug]) + "?" + preview).content.decode()
    assert 'id="preview-full"' not in page


def test_a_study_without_batches_turns_workers_away(db):
    study = build_study("empty")
    response = _start(Client(), study, code="w")
    assert response.status_code == 200 and b"No task is free right now" in response.content
    assert not Participant.objects.filter(study=study).exists()


def test_the_door_still_refuses_a_code_the_study_does_not_accept(db):
    study, _first = _full_study("door-listed", entry_codes=["first", "ok"])
    response = _start(Client(), study, code="forged")
    assert response.status_code == 400 and b"not valid for this study" in response.content


def test_returning_workers_pass_the_door_of_a_full_study(db):
    study, first = _full_study("door-return")
    # The worker who holds the only place comes back through the link: their batch, not the door.
    response = _start(first, study, code="first")
    assert response.status_code == 302
    assert "/a/" in current_task_url(first, study)
    # So does a worker who used up the qualification: they get their code.
    failed = Participant.objects.create(
        study=study, platform="code", external_hash=pseudonymise("code", "failed"), consented_at=timezone.now()
    )
    Participant.objects.filter(pk=failed.pk).update(qualification_attempts=study.qualification_attempts_allowed)
    again = Client()
    assert _start(again, study, code="failed").status_code == 302
    done = again.get(reverse("annotations:done", args=[study.slug]))
    assert study.code_failed_qualification in done.content.decode()


def test_a_place_taken_after_the_door_shows_the_same_exit_after_qualifying(db):
    study = build_study("race", instructions=1, overlap=1)
    services.generate_batches(study=study, condition="plain", seed=1, pairs_per_batch=1)
    late = Client()
    enter(late, study, code="late")  # the door saw a free place
    quick = Client()
    enter(quick, study, code="quick")
    qualify(quick, study)
    current_task_url(quick, study)  # ... which this worker took meanwhile
    qualify(late, study)
    page = late.get(reverse("annotations:work", args=[study.slug])).content.decode()
    assert "No task is free right now" in page and no_work_code(study) in page
    assert f'id="try-again" href="{reverse("annotations:work", args=[study.slug])}"' in page
    assert "before any work" not in page


# --- The hub: capacity against recruitment, and adding a round ----------------------------


@pytest.fixture
def owned_full(researcher, db):
    study, first = _full_study("hub-full")
    study.created_by = researcher
    study.save(update_fields=["created_by"])
    return study


def test_the_hub_shows_capacity_and_warns_when_recruitment_exceeds_it(researcher_client, owned_full):
    hub = reverse("annotations:study", args=[owned_full.slug])
    page = researcher_client.get(hub).content.decode()
    assert re.search(r'id="capacity-free">0<', page) and re.search(r'id="capacity-places">1<', page)
    assert 'id="capacity-warning"' not in page  # nobody waiting and no plan: nothing to warn about
    assert "no work available" in page and no_work_code(owned_full) in page  # the recruitment box's fourth code
    assert 'id="recruitment-capacity"' in page
    planned = researcher_client.get(hub + "?places=5").content.decode()
    warning = re.search(r'id="capacity-warning">(.*?)</p>', planned, re.S).group(1)
    assert "You open 5 places but only 0 are free: 5 workers would be turned away" in " ".join(warning.split())
    assert "add 5 rounds" in " ".join(warning.split())  # a round of one instruction adds 1 place
    assert 'class="capacity-warning"' in planned.split('id="recruitment-title"')[1]  # the recruitment box too
    Assignment.objects.update(leased_until=timezone.now() - timedelta(minutes=1))
    fits = researcher_client.get(hub + "?places=1").content.decode()
    assert 'id="capacity-ok"' in fits and 'id="capacity-warning"' not in fits
    ignored = researcher_client.get(hub + "?places=lots").content.decode()  # not a count: no plan
    assert 'id="capacity-ok"' not in ignored and 'id="capacity-warning"' not in ignored


def test_waiting_workers_raise_the_warning_without_a_plan(researcher_client, owned_full):
    waiting = Participant.objects.create(study=owned_full, platform="code", external_hash="x" * 64, qualified=True)
    assert waiting.assignments.count() == 0
    page = researcher_client.get(reverse("annotations:study", args=[owned_full.slug])).content.decode()
    assert 'id="capacity-warning"' in page and "1 qualified worker holds no batch" in " ".join(page.split())


def test_adding_a_round_from_the_hub_adds_places(researcher_client, owned_full):
    url = reverse("annotations:add-round", args=[owned_full.slug])
    response = researcher_client.post(url, {"condition": "plain", "seed": 2, "pairs_per_batch": 1, "places": "3"})
    assert response.status_code == 302
    assert response["Location"] == reverse("annotations:study", args=[owned_full.slug]) + "?places=3#capacity"
    batch = Batch.objects.get(study=owned_full, index=1)
    assert (batch.condition, batch.label, batch.seed, round_of(batch.label)) == (
        "plain",
        "round 2: instruction 0",
        2,
        2,
    )
    message = [str(m) for m in get_messages(response.wsgi_request)]
    assert message == [
        "Round 2 of plain: 1 new batch (2 tasks, 1 place for workers at 1 per batch), beside 1 batch of earlier rounds."
    ]
    assert study_capacity(owned_full).free == 1
    # The worker who was turned away now gets in.
    assert _start(Client(), owned_full, code="late").status_code == 302


def test_a_bad_round_is_a_form_error_in_place(researcher_client, owned_full):
    url = reverse("annotations:add-round", args=[owned_full.slug])
    response = researcher_client.post(
        url, {"condition": "nonsense", "seed": 2, "pairs_per_batch": 1}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 422 and b'id="round-form"' in response.content and b"<html" not in response.content
    whole = researcher_client.post(url, {"condition": "plain", "seed": -1, "pairs_per_batch": 1})
    assert whole.status_code == 422 and b'id="capacity"' in whole.content
    assert Batch.objects.filter(study=owned_full).count() == 1


def test_another_researchers_study_gets_no_round(other_researcher, owned_full):
    client = Client()
    client.force_login(other_researcher)
    url = reverse("annotations:add-round", args=[owned_full.slug])
    assert client.post(url, {"condition": "plain", "seed": 2, "pairs_per_batch": 1}).status_code == 404
    assert Batch.objects.filter(study=owned_full).count() == 1


# --- Rounds: a condition grows ------------------------------------------------------------


def test_a_second_design_is_refused_with_the_reason_and_the_way_to_add_a_round(db):
    study = build_study("again", instructions=2)
    services.generate_batches(study=study, condition="order", seed=4, pairs_per_batch=2)
    with pytest.raises(ValidationError) as refused:
        services.generate_batches(study=study, condition="order", seed=4, pairs_per_batch=2)
    text = refused.value.messages[0]
    assert "already has 2 order batches (round 1, seed 4)" in text and "add a round" in text


def test_rounds_continue_the_indexes_and_repeat_a_design_with_the_same_seed(db):
    study = build_study("grow", instructions=2)
    first = services.generate_batches(study=study, condition="bandwagon", seed=4, pairs_per_batch=2)
    second = services.generate_batches(study=study, condition="bandwagon", seed=4, pairs_per_batch=2, new_round=True)
    third = services.generate_batches(study=study, condition="bandwagon", seed=9, pairs_per_batch=2, new_round=True)
    assert [b.index for b in first + second + third] == [0, 1, 2, 3, 4, 5]
    assert [b.label for b in second] == ["round 2: instruction 0", "round 2: instruction 1"]
    assert [round_of(b.label) for b in third] == [3, 3]

    def design(batch):
        return [(t.pair_id, t.arrangement, t.cue) for t in batch.tasks.order_by("position")]

    assert design(first[0]) == design(second[0])  # same seed, same design: new workers on it
    ranking = services.generate_batches(study=study, condition="ranking", seed=1, rankings_per_batch=1)
    more = services.generate_batches(study=study, condition="ranking", seed=2, rankings_per_batch=1, new_round=True)
    assert [b.index for b in ranking + more] == [0, 1, 2, 3] and more[0].label.startswith("round 2: #")


def test_the_command_and_the_api_add_a_round(db, researcher):
    build_study("cli", instructions=2)
    call_command("generate_batches", "--study", "cli", "--condition", "plain", "--seed", "1", stdout=StringIO())
    out = StringIO()
    call_command("generate_batches", "--study", "cli", "--condition", "plain", "--seed", "2", "--new-round", stdout=out)
    assert "Round 2 of plain: 2 new batches" in out.getvalue()
    api = APIClient()
    api.force_authenticate(researcher)
    url = "/api/studies/cli/batches/generate"
    refused = api.post(url, {"condition": "plain", "seed": 3}, format="json")
    assert refused.status_code == 422 and "new round" in refused.json()["detail"]
    added = api.post(url, {"condition": "plain", "seed": 3, "new_round": True}, format="json")
    assert added.status_code == 201 and added.json()["round"] == 3
    assert added.json()["message"].startswith("Round 3 of plain: 2 new batches")


def test_the_generate_form_explains_the_refusal_and_takes_a_new_round(researcher_client, researcher, db):
    study = build_study("form", instructions=2, created_by=researcher)
    url = reverse("annotations:generate", args=[study.slug])
    researcher_client.post(url, {"condition": "order", "seed": 1, "pairs_per_batch": 1})
    again = researcher_client.post(
        url, {"condition": "order", "seed": 1, "pairs_per_batch": 1}, headers={"HX-Request": "true"}
    )
    assert again.status_code == 422 and "add a round" in html.unescape(again.content.decode())
    grown = researcher_client.post(url, {"condition": "order", "seed": 2, "pairs_per_batch": 1, "new_round": "on"})
    assert grown.status_code == 302 and study.batches.count() == 4
    assert [str(m) for m in get_messages(grown.wsgi_request)][-1].startswith("Round 2 of order: 2 new batches")


# --- An imported study grows ---------------------------------------------------------------


def _imported(slug: str = "pilot-votes"):
    import_study(root=GENERIC, slug=slug)
    return Study.objects.get(slug=slug)


def test_an_imported_study_grows_a_round_beside_its_votes(db):
    study = _imported()
    imported = list(study.batches.filter(condition="order").values_list("index", flat=True))
    assert imported and all(b.label.startswith(IMPORT_LABEL) for b in study.batches.all())
    capacity = study_capacity(study)
    assert capacity.places == 0 and capacity.imported_batches == study.batches.count() and capacity.entered == 0
    # No new_round needed: imported votes are not a design.
    made = services.generate_batches(study=study, condition="order", seed=1, pairs_per_batch=3)
    assert min(b.index for b in made) == max(imported) + 1
    text = describe_round(study=study, batches=made)
    assert (
        text.startswith(f"Round 1 of order: {len(made)} new batch") and f"beside {len(imported)} imported batch" in text
    )
    # A worker is given a new batch, never an imported one.
    worker = Client()
    enter(worker, study, code="crowd-1")
    qualify(worker, study)
    current_task_url(worker, study)
    assert Assignment.objects.get(participant__label__startswith="p-").batch in made


def test_an_imported_batch_is_never_offered_even_after_its_work_is_rejected(db):
    study = _imported("rejected-votes")
    Assignment.objects.filter(batch__study=study).update(review=Assignment.Review.REJECTED)  # places "freed"
    assert study_capacity(study).places == 0 and not has_free_place(study)
    response = _start(Client(), study, code="crowd-1")
    assert b"No task is free right now" in response.content
    participant = Participant.objects.create(study=study, platform="code", external_hash="y" * 64, qualified=True)
    assert services.claim_order(study=study, participant=participant) == []
