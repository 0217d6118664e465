"""Sentiment's crowd condition in Chromium: a worker answers a designed sentiment pair (the cue on
each side once) with Back and Reload in between; the cued slot shows the stored rewrite as text,
the other slot the original answer, and no answer is lost or stored twice (issue 24; the
guarantees of tests/annotations/test_calm_crowd_browser.py for CALM's seeded conditions)."""

from __future__ import annotations

import pytest
from django.test import Client
from playwright.sync_api import expect

from annotations import services
from annotations.models import Assignment, ResponseRewrite, Study, Submission, Task
from annotations.vocabulary import Condition, RewriteKind
from tests.annotations.conftest import build_study, current_task_url, enter, qualify
from tests.annotations.test_worker_browser_robust import VIEWPORTS, _axe, _cookie_context

pytestmark = [pytest.mark.browser, pytest.mark.slow]
HOSTILE = "<script>window.pwned = 1</script><b>bold?</b>"


def _study(slug: str) -> Study:
    """One sentiment batch of one pair, every answer rewritten with markup in the rewrite."""
    study = build_study(slug, instructions=1, overlap=1)
    for response in study.instructions.get().responses.all():
        ResponseRewrite.objects.create(
            response=response, kind=RewriteKind.SENTIMENT, text=f"{HOSTILE} Great news! {response.text}"
        )
    services.generate_batches(study=study, condition=Condition.SENTIMENT, seed=3, pairs_per_batch=1)
    return study


def _expect_rewrite_in_cued_slot(page, task: Task) -> None:
    cued = task.cue["cue_slot"].lower()
    other = "b" if cued == "a" else "a"
    expect(page.locator(f"#slot-{cued}")).to_contain_text(task.cue["rewritten"])  # the markup as text
    expect(page.locator(f"#slot-{other}")).not_to_contain_text("Great news!")
    assert page.locator("#cue-banner").count() == 0 and page.locator(f"#slot-{cued} b").count() == 0
    assert page.evaluate("() => window.pwned === undefined")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_a_worker_answers_a_sentiment_pair_through_back_and_reload(live_server, browser, viewport):
    study = _study(f"sentiment-{viewport}")
    base, table = live_server.url, []
    worker = Client()
    enter(worker, study, code=f"sentiment-{viewport}")
    qualify(worker, study)
    url = current_task_url(worker, study)
    context = _cookie_context(browser, worker, base, VIEWPORTS[viewport])
    page = context.new_page()
    page.goto(base + url)
    tasks = list(Task.objects.filter(batch__study=study).order_by("position"))
    assert sorted(t.cue["cue_slot"] for t in tasks) == ["A", "B"]

    _expect_rewrite_in_cued_slot(page, tasks[0])
    _axe(page, "task: sentiment", viewport, table)
    page.reload()  # a reload shows the same task and the same rewrite, and stores nothing
    _expect_rewrite_in_cued_slot(page, tasks[0])
    assert Submission.objects.count() == 0
    page.click("#choose-b")
    page.wait_for_url("**/a/*/1")
    _expect_rewrite_in_cued_slot(page, tasks[1])  # the twin: the other answer's rewrite, in the other slot

    # Back to the answered task lands on the current one; Reload after it adds nothing.
    page.go_back()
    page.wait_for_url("**/a/*/1")
    page.reload()
    page.wait_for_url("**/a/*/1")
    assert Submission.objects.count() == 1 and Submission.objects.get().choice == "B"
    page.keyboard.press("1")  # the key shortcut chooses System A
    page.wait_for_url("**/done")
    page.go_back()  # the last task's URL sends the worker to the completion page
    page.wait_for_url("**/done")
    page.reload()
    page.wait_for_url("**/done")

    submissions = Submission.objects.order_by("task__position")
    assert [(s.task.position, s.choice) for s in submissions] == [(0, "B"), (1, "A")]
    assert Assignment.objects.get().status == Assignment.Status.SUBMITTED
    context.close()
