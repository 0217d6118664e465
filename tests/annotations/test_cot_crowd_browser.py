"""cot's crowd condition in Chromium, on a desktop and a phone: a worker opens both answers, cannot
choose before writing the reasoning, writes it (markup shown as text), chooses, and Back and Reload
in between neither lose an answer nor store one twice (issue 24; the guarantees of
tests/annotations/test_sentiment_crowd_browser.py for the cue conditions)."""

from __future__ import annotations

import pytest
from django.test import Client
from playwright.sync_api import expect

from annotations import services
from annotations.biases import cot
from annotations.models import Assignment, Study, Submission
from annotations.vocabulary import Condition
from tests.annotations.conftest import build_study, current_task_url, enter, qualify
from tests.annotations.test_worker_browser_robust import VIEWPORTS, _axe, _cookie_context, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]
REASONING = "<b>bold?</b> Step by step: System A follows the reference, System B skips a step."


def _study(slug: str) -> Study:
    study = build_study(slug, instructions=1, overlap=1)  # the study itself asks for no rationale
    services.generate_batches(study=study, condition=Condition.COT, seed=3, pairs_per_batch=1)
    return study


def _open_both(page) -> None:
    page.click("#reveal-a summary")
    page.click("#reveal-b summary")
    expect(page.locator("#choose-a")).to_be_enabled()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_a_worker_writes_the_reasoning_then_chooses_through_back_and_reload(live_server, browser, viewport):
    study = _study(f"cot-{viewport}")
    base, table = live_server.url, []
    worker = Client()
    enter(worker, study, code=f"cot-{viewport}")
    qualify(worker, study)
    url = current_task_url(worker, study)
    context = _cookie_context(browser, worker, base, VIEWPORTS[viewport])
    page = context.new_page()
    page.goto(base + url)

    expect(page.locator("#cot-instruction")).to_have_text(cot.WORKER_INSTRUCTION)
    _axe(page, "task: cot", viewport, table)
    _open_both(page)
    page.click("#choose-a")  # no reasoning yet: the browser keeps the form (the box is required)
    expect(page.locator("#rationale")).to_be_focused()
    assert Submission.objects.count() == 0
    page.reload()  # a reload shows the same task and stores nothing
    assert Submission.objects.count() == 0
    _open_both(page)
    page.fill("#rationale", REASONING)
    page.click("#choose-b")
    page.wait_for_url("**/a/*/1")

    # Back to the answered task lands on the current one; Reload after it adds nothing.
    page.go_back()
    page.wait_for_url("**/a/*/1")
    page.reload()
    page.wait_for_url("**/a/*/1")
    assert [(s.choice, s.rationale) for s in Submission.objects.all()] == [("B", REASONING)]
    _open_both(page)
    page.fill("#rationale", "Step by step: System A answers every part of the question.")
    shot(page, f"worker-cot-{viewport}")  # the README's cot task (test-artifacts/screenshots)
    page.keyboard.press("Escape")  # leave the box: the key shortcuts never fire while typing
    page.locator("#reveal-b summary").focus()
    page.keyboard.press("1")
    page.wait_for_url("**/done")
    page.go_back()
    page.wait_for_url("**/done")

    submissions = Submission.objects.order_by("task__position")
    assert [(s.task.position, s.choice) for s in submissions] == [(0, "B"), (1, "A")]
    assert Assignment.objects.get().status == Assignment.Status.SUBMITTED
    context.close()
