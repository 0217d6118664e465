"""Issue 22 item 5 in Chromium: the "acceptable" bar of a ranking must be placed or confirmed
before the ranking goes in (by keyboard too, with axe on the warning), and a long list scrolls
while an answer is dragged near the edge of a phone's screen."""

from __future__ import annotations

import pytest
from django.test import Client
from playwright.sync_api import expect

from annotations import services
from annotations.models import Submission
from tests.annotations.axe import run_axe, serious
from tests.annotations.conftest import build_study, current_task_url, enter, qualify
from tests.annotations.test_browser import _drag
from tests.annotations.test_worker_browser_robust import LONG, VIEWPORTS, _cookie_context, _order

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _ranking_page(browser, live_server, slug: str, viewport: dict, *, long: bool = False, **options):
    texts = {(i, k): f"{k}: {LONG}" for i in range(2) for k in ("alpha", "beta", "gamma", "delta")} if long else None
    study = build_study(slug, instructions=2, overlap=1, texts=texts)
    services.generate_batches(study=study, condition="ranking", seed=4, rankings_per_batch=2)
    worker = Client()
    enter(worker, study, code=f"{slug}-worker")
    qualify(worker, study)
    url = current_task_url(worker, study)
    context = _cookie_context(browser, worker, live_server.url, viewport, **options)
    page = context.new_page()
    page.goto(live_server.url + url)
    page.wait_for_selector("form.task[data-ready] #ranking")  # rank.js has initialised the form
    return context, page


@pytest.mark.django_db(transaction=True)
def test_an_untouched_bar_must_be_confirmed_before_the_ranking_goes_in_by_keyboard(live_server, browser):
    context, page = _ranking_page(browser, live_server, "bar-keys", VIEWPORTS["desktop"])
    assert page.is_checked("#bar-confirm") is False and _order(page)[0] == "bar"

    # Only the keyboard: order an answer below the bar (the bar stays on top), then submit.
    page.focus("#ranking li:nth-child(3)")
    page.keyboard.press("ArrowUp")
    assert _order(page)[0] == "bar" and not page.is_checked("#bar-confirm")  # the bar itself never moved
    page.focus("#submit-ranking")
    page.keyboard.press("Enter")
    expect(page.locator("#bar-warning")).to_be_visible()
    expect(page.locator("#bar-confirm")).to_be_focused()  # where the worker confirms it
    page.wait_for_timeout(300)
    assert Submission.objects.count() == 0 and page.url.endswith("/0")
    row = run_axe(page, name="task: ranking, bar not placed", viewport="desktop")
    assert not serious(row), serious(row)

    page.keyboard.press("Space")  # "the bar is where I want it": on top, nothing acceptable
    assert page.is_checked("#bar-confirm")
    expect(page.locator("#bar-warning")).to_be_hidden()
    order = _order(page)
    page.focus("#submit-ranking")
    page.keyboard.press("Enter")
    page.wait_for_url("**/a/*/1")
    first = Submission.objects.get()
    assert first.bar_position == 0 and first.ranking == [int(v) for v in order if v != "bar"]

    # Task 2: moving the bar places it (the box is ticked for the worker) and the ranking goes in.
    page.wait_for_selector("form.task[data-ready] #ranking")
    page.focus("#ranking li.bar")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.is_checked("#bar-confirm")
    page.focus("#submit-ranking")
    page.keyboard.press("Enter")
    page.wait_for_url("**/done")
    assert Submission.objects.get(task__position=1).bar_position == 2
    context.close()


@pytest.mark.django_db(transaction=True)
def test_dragging_the_bar_on_a_phone_places_it(live_server, browser):
    context, page = _ranking_page(browser, live_server, "bar-drag", VIEWPORTS["phone"])
    page.click("#submit-ranking")
    expect(page.locator("#bar-warning")).to_be_visible()
    assert Submission.objects.count() == 0
    items = page.locator("#ranking li")
    _drag(page, items.nth(0), items.nth(2))  # the bar, below the first two answers
    order = _order(page)
    assert order[0] != "bar" and page.is_checked("#bar-confirm")
    expect(page.locator("#bar-warning")).to_be_hidden()
    page.click("#submit-ranking")
    page.wait_for_url("**/a/*/1")
    assert Submission.objects.get().bar_position == order.index("bar") > 0
    context.close()


@pytest.mark.django_db(transaction=True)
def test_a_long_list_scrolls_while_an_answer_is_dragged_to_the_edge_of_a_phone(live_server, browser):
    context, page = _ranking_page(
        browser,
        live_server,
        "bar-scroll",
        VIEWPORTS["phone"],
        long=True,
        has_touch=True,
        is_mobile=True,
        device_scale_factor=3,
    )
    assert page.eval_on_selector("#ranking", "el => el.getBoundingClientRect().height") > 1000
    assert page.evaluate("window.scrollY") == 0
    before = _order(page)
    cdp = context.new_cdp_session(page)
    handle = page.locator("#ranking li:nth-child(2) .handle").bounding_box()
    x, y = handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2

    def touch(kind: str, to_y: float) -> None:
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": [{"x": x, "y": to_y}]})

    touch("touchStart", y)
    bottom = VIEWPORTS["phone"]["height"] - 20  # inside the autoscroll band at the screen's bottom edge
    for i in range(1, 21):
        touch("touchMove", y + (bottom - y) * i / 20)
        page.wait_for_timeout(16)
    for i in range(60):  # held near the edge (a finger never stays perfectly still)
        touch("touchMove", bottom - (i % 2))
        page.wait_for_timeout(25)
    scrolled = page.evaluate("window.scrollY")
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    page.wait_for_timeout(300)
    assert scrolled > 200, scrolled  # the page scrolled under the dragged answer...
    after = _order(page)
    assert after != before and after.index(before[1]) > 1  # ...and the answer was carried down
    context.close()
