"""Worker pages in Chromium as a worker uses them: Back and Forward at every step, a phone's
swipe, a second tab, and axe-core on every page at desktop and phone sizes (issue 12)."""

from __future__ import annotations

import time

import pytest
from django.test import Client
from django.urls import reverse
from playwright.sync_api import expect

from annotations import services
from annotations.models import Assignment, Condition, Pair, QualificationItem, Study, Submission, Task
from tests.annotations.axe import run_axe, serious
from tests.annotations.conftest import build_study, current_task_url, enter, mturk_worker_id, prolific_id, qualify
from tests.conftest import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.slow]
VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
LONG = " ".join(["This answer goes on for a while so that the list is long on a phone."] * 6)


def _study(slug: str, overlap: int = 2) -> Study:
    """One batch: two rankings (long answers), two bandwagon twins and an order task."""
    texts = {(i, k): f"{k}: {LONG}" for i in range(2) for k in ("alpha", "beta", "gamma", "delta")}
    study = build_study(slug, instructions=2, overlap=overlap, texts=texts)
    [batch] = services.generate_batches(study=study, condition="ranking", seed=4, rankings_per_batch=2)
    ins = study.instructions.get(index=0)
    responses = list(ins.responses.order_by("candidate__position"))
    pair = Pair.objects.create(instruction=ins, response_a=responses[0], response_b=responses[2])
    common = {"batch": batch, "kind": "pairwise", "instruction": ins, "pair": pair, "pair_index": 0}
    Task.objects.create(
        position=2, condition=Condition.BANDWAGON, arrangement="ab", cue={"cue_slot": "A", "percent": 85}, **common
    )
    Task.objects.create(
        position=3, condition=Condition.BANDWAGON, arrangement="ab", cue={"cue_slot": "B", "percent": 85}, **common
    )
    Task.objects.create(position=4, condition=Condition.ORDER, arrangement="ba", cue={"order": "last"}, **common)
    return study


def _order(page) -> list[str]:
    return page.eval_on_selector_all("#ranking li input[name=answer]", "els => els.map(e => e.value)")


def _healthy(page, base: str) -> None:
    """A real page of ours: not Chrome's error page (too many redirects), not a blank one."""
    page.wait_for_load_state("load")
    assert page.url.startswith(base), page.url
    body = page.content()
    assert "ERR_TOO_MANY_REDIRECTS" not in body and "redirected you too many times" not in body
    assert page.locator("main h1, form#task-form").count() >= 1, page.url


def _back_and_forward(page, base: str, *, expect_path: str | None = None) -> None:
    """Back then Forward; wherever Back lands (an earlier page or, through a redirect, the
    current step) must be a working page, and Forward must bring the worker back."""
    before = page.url
    page.go_back()
    if page.url != "about:blank":  # Back from the first page leaves the site
        _healthy(page, base)
    page.go_forward()
    if page.url == "about:blank" or not page.url.startswith(base):
        page.goto(before)
    _healthy(page, base)
    if expect_path:
        page.wait_for_url(f"**{expect_path}")


def shot(page, name: str) -> None:
    (ARTIFACTS / "screenshots").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "screenshots" / f"{name}.png"), full_page=True)


def _axe(page, name: str, viewport: str, table: list) -> None:
    row = run_axe(page, name=name, viewport=viewport)
    table.append(row)
    assert not serious(row), (name, viewport, serious(row))


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_a_batch_with_back_and_forward_at_every_step_and_axe_on_every_page(live_server, browser, viewport):
    study = _study(f"robust-{viewport}")
    base = live_server.url
    table: list = []
    context = browser.new_context(viewport=VIEWPORTS[viewport])
    page = context.new_page()
    # No page.route() here: Playwright turns the HTTP cache off for routed pages, and the
    # cache is what replayed stale redirects on Back (the countdown is stopped below).

    page.goto(f"{base}/s/{study.slug}/start")
    _axe(page, "entry link without an id (400)", viewport, table)
    page.goto(f"{base}/s/{study.slug}/start?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1")
    expect(page.locator("#sample-task")).to_be_visible()
    _axe(page, "MTurk preview", viewport, table)
    shot(page, f"worker-mturk-preview-{viewport}")

    page.goto(f"{base}/s/{study.slug}/start?PROLIFIC_PID={prolific_id(viewport)}&STUDY_ID=st&SESSION_ID=se1")
    page.wait_for_url("**/consent")
    _axe(page, "consent", viewport, table)
    _back_and_forward(page, base, expect_path="/consent")
    page.click("#consent-continue")
    page.wait_for_selector("#consent-form .error")
    _axe(page, "consent, box not ticked", viewport, table)
    page.check("#agree")
    page.click("#consent-continue")
    page.wait_for_url("**/instructions")
    _axe(page, "instructions", viewport, table)
    _back_and_forward(page, base, expect_path="/instructions")

    page.click("#start-qualification")
    page.wait_for_url("**/qualify")
    _axe(page, "qualification", viewport, table)
    _back_and_forward(page, base, expect_path="/qualify")
    items = list(QualificationItem.for_study(study))
    assert page.inner_text("#attempts-left") == "2"
    for item in [i for i in items if page.locator(f"input[name=q{i.pk}]").count()]:  # the drawn ones
        page.check(f"input[name=q{item.pk}][value={'B' if item.gold == 'A' else 'A'}]")
    page.click("#qualify-submit")
    page.wait_for_selector("#qualify-form .error")
    expect(page.locator("#attempts-left")).to_have_text("1")  # counted without a reload
    _axe(page, "qualification, one failed try", viewport, table)
    for item in [i for i in items if page.locator(f"input[name=q{i.pk}]").count()]:  # the drawn ones
        page.check(f"input[name=q{item.pk}][value={item.gold}]")
    page.click("#qualify-submit")

    # Task 1: the bar must be placed or confirmed; an untouched ranking is questioned once,
    # then goes in as shown.
    page.wait_for_url("**/a/*/0")
    page.wait_for_selector("form.task[data-ready] #ranking")  # rank.js has initialised the form
    _axe(page, "task: ranking", viewport, table)
    _back_and_forward(page, base, expect_path="/0")
    shown = _order(page)
    page.click("#submit-ranking")
    expect(page.locator("#bar-warning")).to_be_visible()
    assert Submission.objects.count() == 0
    _axe(page, "task: ranking, bar not placed", viewport, table)
    page.check("#bar-confirm")  # on top: no answer is acceptable
    expect(page.locator("#bar-warning")).to_be_hidden()
    page.click("#submit-ranking")
    expect(page.locator("#untouched-warning")).to_be_visible()
    assert Submission.objects.count() == 0 and page.url.endswith("/0")
    _axe(page, "task: ranking, untouched warning", viewport, table)
    shot(page, f"worker-untouched-warning-{viewport}")
    page.click("#submit-ranking")
    page.wait_for_url("**/a/*/1")
    first = Submission.objects.get(task__position=0)
    assert first.ranking == [int(v) for v in shown if v != "bar"]

    # Back: the answered task is not shown again; the worker lands on the current one.
    page.go_back()
    page.wait_for_url("**/a/*/1")
    _healthy(page, base)
    page.go_forward()
    _healthy(page, base)
    page.wait_for_url("**/a/*/1")

    # Task 2: moved with the buttons, so no question; the announcement skips the bar.
    page.wait_for_selector("form.task[data-ready] #ranking")  # rank.js has initialised the form
    page.focus("#ranking li:nth-child(3) .move-up")  # answer 2 (the bar is on top)
    page.keyboard.press("Enter")
    status = page.inner_text("#rank-status")
    assert status.endswith("position 1 of 4, below the acceptable bar"), status
    page.focus("#ranking li.bar")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.inner_text("#rank-status") == "The acceptable bar: 2 of 4 answers above it"
    page.click("#submit-ranking")
    page.wait_for_url("**/a/*/2")
    assert Submission.objects.get(task__position=1).bar_position == 2

    page.wait_for_selector("#cue-banner")
    _axe(page, "task: pairwise (bandwagon)", viewport, table)
    _back_and_forward(page, base, expect_path="/2")
    page.click("#choose-b")
    page.wait_for_url("**/a/*/3")
    page.click("#choose-a")

    # The order condition: B before A gets a hint, not silence.
    page.wait_for_url("**/a/*/4")
    page.click("#reveal-b summary")
    expect(page.locator("#reveal-hint")).to_contain_text("Open System A's answer first")
    expect(page.locator("#reveal-b")).not_to_have_attribute("open", "")
    _axe(page, "task: order, B opened first", viewport, table)
    shot(page, f"worker-order-hint-{viewport}")
    page.click("#reveal-a summary")
    expect(page.locator("#reveal-hint")).to_have_text("Now open System B's answer.")
    page.click("#reveal-b summary")
    expect(page.locator("#choose-a")).to_be_enabled()
    expect(page.locator("#reveal-hint")).to_have_text("")  # both open: no stale "now open B"
    _axe(page, "task: order, both open", viewport, table)
    page.click("#choose-a")

    # Completion: an announced countdown the worker can stop, then Back and Forward.
    page.wait_for_url("**/done")
    expect(page.locator("#return-countdown")).to_be_visible()
    expect(page.locator("#countdown-status")).to_contain_text("Going back to Prolific in")
    assert page.locator("meta[http-equiv]").count() == 0
    _axe(page, "completion (Prolific)", viewport, table)
    shot(page, f"worker-done-countdown-{viewport}")
    page.click("#countdown-cancel")
    expect(page.locator("#countdown-status")).to_contain_text("Staying on this page")
    page.wait_for_timeout(1500)
    assert page.url.endswith("/done")
    _back_and_forward(page, base, expect_path="/done")
    page.go_back()  # lands on the last task's URL, which sends the worker to the completion page
    _healthy(page, base)
    page.wait_for_url("**/done")
    assert Assignment.objects.get().status == "submitted"
    context.close()


def _cookie_context(browser, client: Client, base: str, viewport: dict, **options):
    """A browser context that is the worker a Django test client entered as (same signed cookie)."""
    context = browser.new_context(viewport=viewport, **options)
    context.add_cookies([{"name": k, "value": m.value, "url": base} for k, m in client.cookies.items()])
    return context


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_axe_on_the_other_worker_pages(live_server, browser, viewport):
    """The pages a normal run does not pass: conflict, no work, MTurk completion, failed qualification."""
    study = _study(f"axe-{viewport}", overlap=1)
    base, table = live_server.url, []
    # Qualified while a place was free: a study that is full at the door turns new workers away there.
    late, failed = Client(), Client()
    enter(late, study, code=f"late-{viewport}")
    qualify(late, study)
    enter(failed, study, code=f"fail-{viewport}")

    # A second tab answers first: the first tab is told.
    mturk = Client()
    enter(
        mturk,
        study,
        workerId=mturk_worker_id(viewport),
        assignmentId="ASSIGN1",
        hitId="H",
        turkSubmitTo="https://workersandbox.mturk.com",
    )
    qualify(mturk, study)
    url = current_task_url(mturk, study)
    context = _cookie_context(browser, mturk, base, VIEWPORTS[viewport])
    tab1, tab2 = context.new_page(), context.new_page()
    tab1.goto(base + url)
    tab2.goto(base + url)
    tab2.check("#bar-confirm")
    tab2.click("#submit-ranking")
    tab2.click("#submit-ranking")
    tab2.wait_for_url("**/a/*/1")
    tab1.check("#bar-confirm")
    tab1.click("#submit-ranking")
    tab1.click("#submit-ranking")
    expect(tab1.locator("#task-conflict")).to_contain_text("answered in another tab")
    _axe(tab1, "task: answered in another tab", viewport, table)
    shot(tab1, f"worker-second-tab-{viewport}")
    tab1.click("#conflict-continue")
    tab1.wait_for_url("**/a/*/1")
    assert Submission.objects.count() == 1

    # Nobody else gets a batch (overlap 1): no work.
    other = _cookie_context(browser, late, base, VIEWPORTS[viewport]).new_page()
    other.goto(f"{base}/s/{study.slug}/work")
    expect(other.locator("h1")).to_have_text("No task is free right now")
    _axe(other, "no work free", viewport, table)

    # The MTurk worker finishes: the page posts the HIT back.
    Assignment.objects.filter(participant__platform="mturk").update(status=Assignment.Status.SUBMITTED)
    tab1.goto(f"{base}/s/{study.slug}/done")
    expect(tab1.locator("#mturk-submit-form")).to_have_attribute(
        "action", "https://workersandbox.mturk.com/mturk/externalSubmit"
    )
    _axe(tab1, "completion (MTurk)", viewport, table)
    shot(tab1, f"worker-done-mturk-{viewport}")

    # A failed qualification.
    failed.post(reverse("annotations:consent", args=[study.slug]), {"agree": "yes"})
    failed_page = _cookie_context(browser, failed, base, VIEWPORTS[viewport]).new_page()
    study.participants.filter(platform="code", qualified=False).update(
        qualification_attempts=study.qualification_attempts_allowed
    )
    failed_page.goto(f"{base}/s/{study.slug}/done")
    expect(failed_page.locator("#completion-code")).to_have_text(study.code_failed_qualification)
    _axe(failed_page, "completion (failed qualification)", viewport, table)


def _wait_until_still(page, timeout: float = 10.0) -> None:
    """Until the page has not scrolled for 150 ms (a touch fling has ended)."""
    deadline = time.monotonic() + timeout
    last = page.evaluate("window.scrollY")
    while time.monotonic() < deadline:
        page.wait_for_timeout(150)
        now = page.evaluate("window.scrollY")
        if now == last:
            return
        last = now
    raise AssertionError(f"the page kept scrolling for {timeout} s")


@pytest.mark.django_db(transaction=True)
def test_a_swipe_over_an_answer_scrolls_the_phone_and_only_the_handle_drags(live_server, browser):
    study = _study("swipe", overlap=1)
    worker = Client()
    enter(worker, study, code="phone-worker")
    qualify(worker, study)
    url = current_task_url(worker, study)
    context = _cookie_context(
        browser, worker, live_server.url, VIEWPORTS["phone"], has_touch=True, is_mobile=True, device_scale_factor=3
    )
    page = context.new_page()
    page.goto(live_server.url + url)
    page.wait_for_selector("form.task[data-ready] #ranking")  # rank.js has initialised the form
    assert page.evaluate("matchMedia('(pointer: coarse)').matches")
    assert "by-handle" in page.get_attribute("#ranking", "class")
    list_height = page.eval_on_selector("#ranking", "el => el.getBoundingClientRect().height")
    assert list_height > 1000  # the long list of the report (1,236 px there)
    before = _order(page)
    cdp = context.new_cdp_session(page)

    def swipe(x: float, y0: float, y1: float, steps: int = 12) -> None:
        cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y0}]})
        for i in range(1, steps + 1):
            cdp.send(
                "Input.dispatchTouchEvent",
                {"type": "touchMove", "touchPoints": [{"x": x, "y": y0 + (y1 - y0) * i / steps}]},
            )
            page.wait_for_timeout(16)
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        page.wait_for_timeout(400)

    # Bring the third item's top to y=400, then swipe up over it and into the second: a
    # drag there would reorder the two (the old pages did, with touch-action: none).
    target = page.eval_on_selector(
        "#ranking li:nth-child(3)", "el => Math.round(el.getBoundingClientRect().top + window.scrollY - 400)"
    )
    page.evaluate("y => window.scrollTo(0, y)", target)
    page.wait_for_function("y => Math.abs(window.scrollY - y) < 2", arg=target)
    start_y = page.evaluate("window.scrollY")
    body = page.locator("#ranking li:nth-child(3) .answer-body").bounding_box()
    # The swipe starts on the answer's text wherever the page settled, and runs 450 px up.
    y0 = min(body["y"] + body["height"] / 2, 700)  # clear of the submit bar at the bottom
    assert body["y"] < y0 < body["y"] + body["height"] and y0 - 450 > 0
    swipe(body["x"] + body["width"] / 2, y0, y0 - 450)
    assert page.evaluate("window.scrollY") - start_y > 200  # the page scrolled...
    assert _order(page) == before  # ...and nothing moved

    # The handle does drag: the first answer goes above the bar (both fit on the screen).
    _wait_until_still(page)  # a swipe flings on: a scroll issued meanwhile would be overtaken
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_function("() => window.scrollY === 0")
    handle = page.locator("#ranking li:nth-child(2) .handle").bounding_box()
    bar = page.locator("#ranking li.bar").bounding_box()
    swipe(
        handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2, bar["y"] + bar["height"] * 0.2, steps=20
    )
    after = _order(page)
    assert after == [before[1], "bar", *before[2:]], (before, after)
    assert page.evaluate("window.scrollY") < 50  # a drag, not a scroll
    shot(page, "worker-ranking-touch-phone")
    context.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_the_recruitment_links_copy_to_the_clipboard(live_server, browser, researcher, viewport):
    study = _study(f"recruit-{viewport}")
    study.created_by = researcher
    study.save(update_fields=["created_by"])
    staff = Client()
    staff.force_login(researcher)
    context = _cookie_context(browser, staff, live_server.url, VIEWPORTS[viewport])
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page = context.new_page()
    page.goto(f"{live_server.url}/crowd/studies/{study.slug}/")
    prolific = page.input_value("#prolific-url")
    assert prolific.startswith(f"{live_server.url}/s/{study.slug}/start?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}")
    for field in ("prolific-url", "cc-url-1", "mturk-xml"):
        page.click(f"button[data-copy={field}]")
        expect(page.locator("#copy-status")).to_have_text("Copied to the clipboard.")
        assert page.evaluate("navigator.clipboard.readText()") == page.input_value(f"#{field}")
        page.evaluate("document.getElementById('copy-status').textContent = ''")
    row = run_axe(page, name="researcher crowd page: recruitment links", viewport=viewport, include="#recruitment")
    assert not serious(row), serious(row)
    page.locator("#recruitment").screenshot(
        path=str(ARTIFACTS / "screenshots" / f"researcher-recruitment-{viewport}.png")
    )
    context.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_an_accepted_hit_inside_mturks_frame_offers_its_own_tab(live_server, browser, viewport):
    """A stand-in page at MTurk's worker origin (served by the test) frames the entry link:
    frame-ancestors lets it, and the page offers the study in its own tab (no cookies in a
    cross-site frame). Chromium's local-network check is off in this browser only: the
    stand-in is "public", the test server is on loopback."""
    study = _study(f"frame-{viewport}", overlap=1)
    base, table = live_server.url, []
    lax = browser.browser_type.launch(
        executable_path=CHROMIUM, headless=True, args=[*CHROMIUM_ARGS, "--disable-features=LocalNetworkAccessChecks"]
    )
    try:
        page = lax.new_context(viewport=VIEWPORTS[viewport]).new_page()
        hit = f"{base}/s/{study.slug}/start?workerId=AWORKERF000001&assignmentId=AF&hitId=H&turkSubmitTo=https://www.mturk.com"
        page.route(
            "https://worker.mturk.com/**",
            lambda route: route.fulfill(
                content_type="text/html",
                body=f'<!doctype html><title>HIT</title><iframe src="{hit}" width="900" height="700"></iframe>',
            ),
        )
        page.goto("https://worker.mturk.com/projects/p/tasks/t")
        frame = page.frame_locator("iframe")
        expect(frame.locator("#open-in-tab")).to_be_visible()
        assert frame.locator("#open-in-tab").get_attribute("target") == "_blank"
        assert study.participants.count() == 0
        [inner] = [f for f in page.frames if f.url.startswith(base)]
        _axe(inner, "MTurk: open in a new tab (framed)", viewport, table)
        with page.expect_popup() as popup:
            frame.locator("#open-in-tab").click()
        tab = popup.value
        tab.wait_for_url("**/consent")  # top-level: the cookie sticks, the study starts
        assert study.participants.count() == 1
    finally:
        lax.close()
