"""A whole worker session in Debian's Chromium (headless), with a screenshot of every screen."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotations import services
from annotations.models import Assignment, Condition, Pair, Submission, Task
from tests.annotations.conftest import build_study
from tests.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.slow]
XSS = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'
SHOTS = ARTIFACTS / "screenshots"


def _mixed_study():
    """One batch: two rankings, a bandwagon twin pair and an order task (sequential reveal)."""
    study = build_study(
        "browser", instructions=2, overlap=1, texts={(0, "gamma"): XSS, (1, "beta"): "Line one\nLine two"}
    )
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


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"worker-{name}.png"), full_page=True)


def _order(page):
    return page.eval_on_selector_all("#ranking li input[name=answer]", "els => els.map(e => e.value)")


def _drag(page, source, target):
    """A real mouse drag: down on the source, move in steps, up below the target."""
    s, t = source.bounding_box(), target.bounding_box()
    page.mouse.move(s["x"] + 12, s["y"] + s["height"] / 2)
    page.mouse.down()
    for i in range(1, 16):
        page.mouse.move(
            s["x"] + 12, s["y"] + s["height"] / 2 + (t["y"] + t["height"] * 0.75 - s["y"] - s["height"] / 2) * i / 15
        )
        page.wait_for_timeout(20)
    page.mouse.up()


@pytest.mark.django_db(transaction=True)
def test_a_whole_worker_session(live_server, browser):
    study = _mixed_study()
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.route("https://app.prolific.com/**", lambda route: route.abort())
    page.goto(
        f"{live_server.url}/s/{study.slug}/start?PROLIFIC_PID=5eb1c0de5eb1c0de5eb1c0de&STUDY_ID=st&SESSION_ID=se1"
    )

    # Consent: the box is required.
    shot(page, "consent")
    page.click("#consent-continue")
    page.wait_for_selector("#consent-form .error")
    page.check("#agree")
    page.click("#consent-continue")
    page.wait_for_url("**/instructions")
    shot(page, "instructions")
    page.click("#start-qualification")

    # Qualification: fail once, then pass.
    page.wait_for_url("**/qualify")
    items = list(study.qualification_items.order_by("position"))
    for item in [i for i in items if page.locator(f"input[name=q{i.pk}]").count()]:  # the drawn ones
        page.check(f"input[name=q{item.pk}][value={'B' if item.gold == 'A' else 'A'}]")
    page.click("#qualify-submit")
    page.wait_for_selector("#qualify-form .error")
    shot(page, "qualification-failed")
    for item in [i for i in items if page.locator(f"input[name=q{i.pk}]").count()]:  # the drawn ones
        page.check(f"input[name=q{item.pk}][value={item.gold}]")
    page.click("#qualify-submit")

    # Task 1: ranking by mouse drag; the XSS answer shows as text and runs nothing.
    page.wait_for_selector("form.task[data-ready] #ranking")  # rank.js has initialised the form
    assert page.evaluate("window.__xss") is None
    assert page.get_by_text("<script>window.__xss=1</script>", exact=False).count() in (0, 1)
    before = _order(page)
    items_el = page.locator("#ranking li")
    _drag(page, items_el.nth(4), items_el.nth(0))  # last answer to the top
    after = _order(page)
    # Whether Sortable drops it just above or just below the bar (which starts on top)
    # depends on pixels; what matters is that it now leads the answers.
    assert after != before and [v for v in after if v != "bar"][0] == before[4]
    _drag(page, items_el.nth(0), items_el.nth(2))  # the bar (now 2nd) stays draggable too
    shot(page, "ranking-drag")
    final = _order(page)
    page.click("#submit-ranking")
    page.wait_for_url("**/1")
    first = Submission.objects.get(task__position=0)
    expected = [int(v) for v in final if v != "bar"]
    assert first.ranking == expected and first.bar_position == final.index("bar")
    assert page.evaluate("window.__xss") is None

    # Task 2: keyboard only (buttons and arrow keys), on a phone-sized viewport.
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    page.wait_for_selector("form.task[data-ready] #ranking")  # rank.js has initialised the form
    before = _order(page)
    page.focus("#ranking li:nth-child(5) .move-up")
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    page.focus("#ranking li:nth-child(1)")
    page.keyboard.press("ArrowDown")
    after = _order(page)
    assert after != before and after[2] == before[4] and after[1] == before[0]
    # The bar (moved last) is announced by the answers above it, not as a rank position.
    assert page.inner_text("#rank-status") == "The acceptable bar: 1 of 4 answers above it"
    shot(page, "ranking-keyboard-phone")
    page.focus("#submit-ranking")
    page.keyboard.press("Enter")
    page.wait_for_url("**/2")
    assert Submission.objects.get(task__position=1).ranking == [int(v) for v in after if v != "bar"]
    page.set_viewport_size({"width": 1100, "height": 900})

    # Task 3: pairwise bandwagon, then reload and resume at task 4.
    page.wait_for_selector("#cue-banner")
    assert "85% of people believe that System A is better" in page.inner_text("#cue-banner")
    shot(page, "bandwagon")
    page.click("#choose-b")
    page.wait_for_url("**/3")
    page.goto(
        f"{live_server.url}/s/{study.slug}/start?PROLIFIC_PID=5eb1c0de5eb1c0de5eb1c0de&STUDY_ID=st&SESSION_ID=se1"
    )
    page.wait_for_url("**/3")
    assert "System B is better" in page.inner_text("#cue-banner")
    page.click("#choose-a")

    # Task 5: order condition: B can't be opened before A, the choice waits for both.
    page.wait_for_url("**/4")
    assert page.is_disabled("#choose-a")
    page.click("#reveal-b summary")
    expect(page.locator("#reveal-b")).not_to_have_attribute("open", "")
    page.click("#reveal-a summary")
    page.click("#reveal-b summary")
    # The toggle handler runs after the click returns; wait for it rather than race it.
    expect(page.locator("#choose-a")).to_be_enabled()
    shot(page, "order-reveal")
    page.click("#choose-a")

    # Completion code and the way back to Prolific.
    page.wait_for_url("**/done")
    code = page.inner_text("#completion-code")
    assert code == study.code_completed
    assert page.get_attribute("#prolific-return", "href") == f"https://app.prolific.com/submissions/complete?cc={code}"
    shot(page, "done")
    assignment = Assignment.objects.get()
    assert assignment.status == "submitted" and assignment.submissions.count() == 5
    assert all(s.time_on_task_ms is not None for s in assignment.submissions.all())
    # The README shows worker-{ranking-drag,bandwagon,ranking-keyboard-phone}.png from
    # test-artifacts/screenshots/, copied into docs/screenshots/ by hand: a test run never
    # rewrites committed files.
