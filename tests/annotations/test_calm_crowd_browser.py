"""CALM's crowd conditions in Chromium: a worker answers an authority and a refinement task with
Back, Reload and a second tab in between, and no answer is lost or stored twice (issue 24; the
guarantees of tests/annotations/test_worker_browser_robust.py for the earlier conditions)."""

from __future__ import annotations

import random

import pytest
from django.test import Client
from playwright.sync_api import expect

from annotations.models import Assignment, Batch, Condition, Pair, Study, Submission, Task
from annotations.services.design import crowd_cue
from tests.annotations.conftest import build_study, current_task_url, enter, qualify
from tests.annotations.test_worker_browser_robust import VIEWPORTS, _axe, _cookie_context

pytestmark = [pytest.mark.browser, pytest.mark.slow]
HOSTILE = "<script>window.pwned = 1</script><b>bold?</b>"


def _study(slug: str) -> Study:
    """One batch: an authority pair and a refinement pair, each shown twice (the cue on A, then on B)."""
    texts = {(0, k): f"{k} answers: {HOSTILE}" for k in ("alpha", "beta", "gamma", "delta")}
    study = build_study(slug, instructions=1, overlap=1, texts=texts)
    batch = Batch.objects.create(study=study, condition=Condition.AUTHORITY, index=0, seed=1, label="calm")
    ins = study.instructions.get()
    responses = list(ins.responses.order_by("candidate__position"))
    rng = random.Random(5)
    position = 0
    for pair_index, (condition, (a, b)) in enumerate(
        [(Condition.AUTHORITY, (responses[0], responses[1])), (Condition.REFINEMENT, (responses[2], responses[3]))]
    ):
        pair = Pair.objects.create(instruction=ins, response_a=a, response_b=b)
        for slot in "AB":
            Task.objects.create(
                batch=batch,
                position=position,
                kind=Task.Kind.PAIRWISE,
                condition=condition,
                instruction=ins,
                pair=pair,
                pair_index=pair_index,
                arrangement="ab",
                cue=crowd_cue(condition, slot, rng, study.bandwagon_percent),
            )
            position += 1
    return study


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_a_worker_answers_authority_and_refinement_through_back_reload_and_a_second_tab(live_server, browser, viewport):
    study = _study(f"calm-{viewport}")
    base, table = live_server.url, []
    worker = Client()
    enter(worker, study, code=f"calm-{viewport}")
    qualify(worker, study)
    url = current_task_url(worker, study)
    context = _cookie_context(browser, worker, base, VIEWPORTS[viewport])
    page = context.new_page()
    page.goto(base + url)
    tasks = list(Task.objects.filter(batch__study=study).order_by("position"))

    # Authority, the citation on System A: shown in A's answer as text, no banner, no markup run.
    citation = tasks[0].cue["citation"]
    expect(page.locator("#slot-a")).to_contain_text("Reference: " + citation)
    expect(page.locator("#slot-b")).not_to_contain_text("Reference:")
    expect(page.locator("#slot-a")).to_contain_text(HOSTILE)  # the answer's markup, shown as text
    assert page.locator("#cue-banner").count() == 0 and page.locator("#slot-a b").count() == 0
    assert page.evaluate("() => window.pwned === undefined")
    _axe(page, "task: authority", viewport, table)
    page.reload()  # a reload shows the same task and the same citation, and stores nothing
    expect(page.locator("#slot-a")).to_contain_text("Reference: " + citation)
    assert Submission.objects.count() == 0
    page.click("#choose-b")
    page.wait_for_url("**/a/*/1")
    expect(page.locator("#slot-b")).to_contain_text("Reference: " + tasks[1].cue["citation"])

    # Back to the answered task lands on the current one; Reload after it adds nothing.
    page.go_back()
    page.wait_for_url("**/a/*/1")
    page.reload()
    page.wait_for_url("**/a/*/1")
    assert Submission.objects.count() == 1
    page.keyboard.press("1")  # the key shortcut chooses System A
    page.wait_for_url("**/a/*/2")

    # Refinement: the claim above the pair names the cued system; the answers are unchanged.
    banner = page.locator("#cue-banner")
    expect(banner).to_have_text("Note: System A is a refined version of System B: it was revised to improve on it.")
    expect(banner).to_have_attribute("role", "note")
    expect(page.locator("#slot-a")).not_to_contain_text("Reference:")
    _axe(page, "task: refinement", viewport, table)

    # A second tab on the same task answers first: the first tab is told, nothing is stored twice.
    tab2 = context.new_page()
    tab2.goto(page.url)
    tab2.click("#choose-a")
    tab2.wait_for_url("**/a/*/3")
    page.click("#choose-b")
    expect(page.locator("#task-conflict")).to_contain_text("answered in another tab")
    assert Submission.objects.count() == 3
    assert Submission.objects.get(task__position=2).choice == "A"  # the first answer counts
    page.click("#conflict-continue")
    page.wait_for_url("**/a/*/3")
    expect(page.locator("#cue-banner")).to_contain_text("System B is a refined version of System A")
    page.click("#choose-b")
    page.wait_for_url("**/done")
    page.go_back()  # the last task's URL sends the worker to the completion page
    page.wait_for_url("**/done")
    page.reload()
    page.wait_for_url("**/done")

    submissions = Submission.objects.order_by("task__position")
    assert [s.task.position for s in submissions] == [0, 1, 2, 3]
    assert [s.choice for s in submissions] == ["B", "A", "A", "B"]
    assert Assignment.objects.get().status == Assignment.Status.SUBMITTED
    context.close()
