"""Capacity first and studies that grow, walked in Chromium (issue 22, items 1 and 2).

(a) A full study turns a new Prolific worker away at the door, before consent, with the code
and the way back; the researcher sees the shortfall on the hub, adds a round, and the same
worker's "Try again" leads into consent, the qualification and a task.
(b) An imported study (the generic fixture's pilot votes) grows: a new round of order batches
from the hub, the message saying what was made, and a worker given a task of the new round.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from playwright.sync_api import expect

from annotations import services
from annotations.importers.generic_write import import_study
from annotations.models import Assignment, Participant, QualificationItem, Study
from annotations.services.capacity import no_work_code
from tests.annotations.axe import run_axe, serious
from tests.annotations.conftest import build_study, current_task_url, enter, prolific_id, qualify
from tests.annotations.test_hub_browser import login

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GENERIC = Path(__file__).resolve().parent.parent / "fixtures" / "generic_study"


def _consent_and_qualify(page, study: Study) -> None:
    page.wait_for_url("**/consent")
    page.check("#agree")
    page.click("#consent-continue")
    page.wait_for_url("**/instructions")
    page.click("#start-qualification")
    page.wait_for_url("**/qualify")
    for item in QualificationItem.for_study(study):
        if page.locator(f"input[name=q{item.pk}]").count():  # the drawn ones
            page.check(f"input[name=q{item.pk}][value={item.gold}]")
    page.click("#qualify-submit")
    page.wait_for_url("**/a/*/*")
    page.wait_for_selector("form.task")


@pytest.mark.django_db(transaction=True)
def test_a_full_study_turns_workers_away_at_the_door_until_a_round_is_added(live_server, browser, researcher):
    base = live_server.url
    study = build_study("door", instructions=1, overlap=1, created_by=researcher)
    services.generate_batches(study=study, condition="plain", seed=1, pairs_per_batch=1)
    first = Client()  # takes the only place
    enter(first, study, code="first")
    qualify(first, study)
    current_task_url(first, study)

    # The worker arrives from Prolific: told at once, before consent, with the code and the way back.
    worker = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    worker.route("https://app.prolific.com/**", lambda route: route.abort())
    pid = prolific_id("late-worker")
    worker.goto(f"{base}/s/{study.slug}/start?PROLIFIC_PID={pid}&STUDY_ID=st&SESSION_ID=se1")
    expect(worker.locator("h1")).to_have_text("No task is free right now")
    expect(worker.locator("#no-work")).to_contain_text("before any work")
    code = no_work_code(study)
    expect(worker.locator("#no-work-code")).to_have_text(code)
    expect(worker.locator("#prolific-return")).to_have_attribute(
        "href", f"https://app.prolific.com/submissions/complete?cc={code}"
    )
    assert worker.locator("#agree").count() == 0
    assert serious(run_axe(worker, name="no work at the door", viewport="phone", suite="capacity")) == []
    assert not Participant.objects.filter(study=study, platform="prolific").exists()

    # The researcher sees the shortfall against the places they open, and adds a round.
    hub = browser.new_page(viewport={"width": 1280, "height": 900})
    login(hub, base, "alice", "alice-password")
    hub.goto(f"{base}/crowd/studies/{study.slug}/")
    expect(hub.locator("#capacity-free")).to_have_text("0")
    hub.fill("#id_places", "2")
    hub.click("#places-check")
    expect(hub.locator("#capacity-warning")).to_contain_text("only 0 are free: 2 workers would be turned away")
    expect(hub.locator("#recruitment-capacity")).to_contain_text("2 too few")
    assert serious(run_axe(hub, name="hub: capacity warning", viewport="desktop", suite="capacity")) == []
    hub.select_option("#round-form select[name=condition]", "plain")
    hub.fill("#round-form input[name=seed]", "2")
    hub.fill("#round-form input[name=pairs_per_batch]", "1")
    with hub.expect_navigation():  # htmx follows HX-Redirect to the hub, keeping the plan
        hub.click("#round-submit")
    expect(hub.locator(".messages")).to_contain_text("Round 2 of plain: 1 new batch")
    expect(hub.locator("#capacity-free")).to_have_text("1")
    expect(hub.locator("#capacity-warning")).to_contain_text("only 1 is free: 1 worker would be turned away")

    # The same worker tries again: consent, the qualification and a task of the new round.
    worker.click("#try-again")
    _consent_and_qualify(worker, study)
    assignment = Assignment.objects.get(participant__platform="prolific")
    assert assignment.batch.label == "round 2: instruction 0"


@pytest.mark.django_db(transaction=True)
def test_an_imported_study_grows_a_round_and_a_worker_gets_its_task(live_server, browser, researcher):
    base = live_server.url
    import_study(root=GENERIC, slug="pilot-votes", created_by=researcher)
    study = Study.objects.get(slug="pilot-votes")
    imported = study.batches.count()

    hub = browser.new_page(viewport={"width": 1280, "height": 900})
    login(hub, base, "alice", "alice-password")
    hub.goto(f"{base}/crowd/studies/{study.slug}/")
    expect(hub.locator("#capacity-none")).to_be_visible()
    expect(hub.locator("#capacity-imported")).to_contain_text(f"{imported} imported batches")
    # "Generate" no longer fails on the imported votes: a round beside them, and what was made.
    hub.select_option("#id_condition", "order")
    hub.fill("#id_seed", "7")
    hub.fill("#id_pairs_per_batch", "2")
    with hub.expect_navigation():
        hub.click("#generate-submit")
    made = list(study.batches.filter(seed=7))
    imported_order = study.batches.filter(condition="order", seed__isnull=True).count()
    assert made and study.batches.count() == imported + len(made)
    message = hub.locator(".messages")
    expect(message).to_contain_text(f"Round 1 of order: {len(made)} new batch")
    expect(message).to_contain_text(f"beside {imported_order} imported batch")
    expect(hub.locator("#capacity-free")).to_have_text(str(len(made) * study.overlap))

    # A worker from a participant-code link is given a task of the new round, never an imported batch.
    worker = browser.new_page(viewport={"width": 1100, "height": 900})
    dialogs: list[str] = []
    worker.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    worker.goto(f"{base}/s/{study.slug}/start?code=crowd-1")
    _consent_and_qualify(worker, study)
    assignment = Assignment.objects.get(participant__platform="code", participant__label__startswith="p-")
    assert assignment.batch in made
    assert dialogs == []  # answer texts are shown as text (the fixture has a <script> answer)
