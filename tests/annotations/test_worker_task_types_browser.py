"""The study-configured task types in Chromium: pre- and post-study surveys with Back and
Forward, the 1 / 2 / 0 shortcuts, a required rationale, and axe-core on every new page at
desktop and phone sizes (issue 12 item 3)."""

from __future__ import annotations

import pytest
from django.test import Client
from playwright.sync_api import expect

from annotations import services
from annotations.models import Assignment, Submission
from tests.annotations.axe import run_axe, serious
from tests.annotations.conftest import build_study, current_task_url, enter, qualify
from tests.annotations.test_worker_browser_robust import VIEWPORTS, _back_and_forward, _cookie_context, _healthy, shot
from tests.annotations.test_worker_task_types import SURVEYS

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _axe(page, name: str, viewport: str) -> None:
    row = run_axe(page, name=name, viewport=viewport)
    assert not serious(row), (name, viewport, serious(row))


def _press_outside_a_text_box(page, key: str) -> None:
    page.locator("#progress-label").click()  # focus leaves the rationale box
    page.keyboard.press(key)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_surveys_shortcuts_and_a_required_rationale_in_the_browser(live_server, browser, viewport):
    study = build_study(
        f"types-{viewport}", instructions=1, overlap=1, allow_ties=True, rationale="required", surveys=SURVEYS
    )
    services.generate_batches(study=study, condition="plain", seed=5, pairs_per_batch=2)
    base = live_server.url
    client = Client()
    enter(client, study, code=f"types-{viewport}")
    qualify(client, study)
    context = _cookie_context(browser, client, base, VIEWPORTS[viewport])
    page = context.new_page()

    # Pre-study survey: after the batch is claimed, before the first task.
    page.goto(f"{base}/s/{study.slug}/work")
    page.wait_for_url("**/survey/pre")
    _axe(page, "pre-study survey", viewport)
    # Past the browser's own check of the required fields, the server refuses and says why.
    page.evaluate("document.querySelectorAll('#survey-form [required]').forEach(el => el.removeAttribute('required'))")
    page.click("#survey-submit")
    expect(page.locator("#survey-error")).to_be_visible()
    _axe(page, "pre-study survey, answer missing", viewport)
    assert Assignment.objects.get().survey == {}
    page.check("input[name=q-experience][value=Daily]")
    page.fill("textarea[name=q-note]", "<b>not bold</b>")
    shot(page, f"worker-pre-survey-{viewport}")
    page.click("#survey-submit")
    page.wait_for_url("**/a/*/0")
    _back_and_forward(page, base, expect_path="/0")  # Back to the survey lands on the task
    page.go_back()
    page.wait_for_url("**/a/*/0")
    _healthy(page, base)
    assert Assignment.objects.get().survey == {"pre": {"experience": "Daily", "note": "<b>not bold</b>"}}

    # Task 1: a required rationale; "1" typed into it is text, not a choice.
    page.wait_for_selector("form.task[data-ready] #choose-tie")
    expect(page.locator("#key-hint")).to_contain_text("0 for no preference")
    _axe(page, "task: pairwise with tie and rationale", viewport)
    shot(page, f"worker-tie-rationale-{viewport}")
    _press_outside_a_text_box(page, "1")  # the empty required box stops it in the browser
    page.wait_for_timeout(500)
    assert Submission.objects.count() == 0 and page.url.endswith("/0")
    page.fill("#rationale", "")
    page.type("#rationale", "1 because it follows the reference")
    page.wait_for_timeout(300)
    assert Submission.objects.count() == 0 and page.url.endswith("/0")
    _press_outside_a_text_box(page, "1")
    page.wait_for_url("**/a/*/1")
    for position, key in ((1, "2"), (2, "0"), (3, "1")):
        page.fill("#rationale", f"reason {position}")
        _press_outside_a_text_box(page, key)
        page.wait_for_url(f"**/a/*/{position + 1}" if position < 3 else "**/survey/post")
    rows = list(Submission.objects.order_by("task__position").values_list("choice", "rationale", "chosen_response"))
    assert [r[:2] for r in rows] == [
        ("A", "1 because it follows the reference"),
        ("B", "reason 1"),
        ("T", "reason 2"),
        ("A", "reason 3"),
    ]
    assert rows[2][2] is None and all(r[2] is not None for r in rows if r[0] != "T")

    # Post-study survey: before the completion code, which it does not show.
    _axe(page, "post-study survey", viewport)
    assert study.code_completed not in page.content()
    shot(page, f"worker-post-survey-{viewport}")
    _back_and_forward(page, base, expect_path="/survey/post")
    page.check("input[name=q-difficulty][value='4']")
    page.click("#survey-submit")
    page.wait_for_url("**/done")
    expect(page.locator("#completion-code")).to_have_text(study.code_completed)
    page.go_back()  # the answered survey sends the worker on to the code
    page.wait_for_url("**/done")
    _healthy(page, base)
    assert Assignment.objects.get().survey == {
        "pre": {"experience": "Daily", "note": "<b>not bold</b>"},
        "post": {"difficulty": 4},
    }
    context.close()


@pytest.mark.django_db(transaction=True)
def test_the_shortcuts_wait_for_both_answers_in_the_order_condition(live_server, browser):
    study = build_study("types-order", instructions=1, overlap=1)
    services.generate_batches(study=study, condition="order", seed=5, pairs_per_batch=1)
    client = Client()
    enter(client, study, code="order-keys")
    qualify(client, study)
    url = current_task_url(client, study)
    page = _cookie_context(browser, client, live_server.url, VIEWPORTS["desktop"]).new_page()
    # A key pressed as soon as the page is parsed already finds the choices locked: rank.js
    # initialises before DOMContentLoaded ends, not in htmx's later first htmx:load.
    page.goto(live_server.url + url, wait_until="domcontentloaded")
    assert page.evaluate("document.querySelector('form.task').dataset.ready") == "1"
    page.keyboard.press("2")
    expect(page.locator("#reveal-hint")).to_contain_text("before choosing")
    page.keyboard.press("0")  # no tie in this study: nothing happens
    assert Submission.objects.count() == 0
    page.click("#reveal-a summary")
    page.click("#reveal-b summary")
    # The choices unlock on the details' "toggle" event, which the browser queues after the click.
    expect(page.locator("#choose-b")).to_be_enabled()
    page.keyboard.press("2")
    page.wait_for_url("**/a/*/1")
    assert Submission.objects.get().choice == "B"
