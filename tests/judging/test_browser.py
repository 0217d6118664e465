"""A researcher launches a judge job in Chromium and watches the progress bar fill without reloading."""

from __future__ import annotations

import pytest

from tests.conftest import ARTIFACTS
from tests.judging.conftest import open_launch_form

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.slow]


@pytest.fixture
def page(browser):
    return browser.new_page()


def test_launch_and_watch_a_job(live_server, page, researcher, study, make_sim_judge, judge_worker):
    make_sim_judge(name="sim-judge", knobs="latency_ms=150,invalid=0.1,seed=2", max_concurrency=4)
    judge_worker()
    open_launch_form(page, live_server)
    page.select_option("select[name=study]", label="tiny")
    page.select_option("select[name=judge]", label="sim-judge")
    page.check("input[name=conditions][value=bandwagon]")
    page.fill("input[name=budget_usd]", "5")
    page.click("#launch-form button[type=submit]")
    page.wait_for_url("**/judging/jobs/*/")
    page.evaluate("window.__noReload = true")  # survives only if the page never reloads
    page.wait_for_selector("#job-progress[data-status=running]")
    first = page.inner_text("#fig-done")
    page.wait_for_selector("#job-progress[data-status=completed]", timeout=90_000)
    ARTIFACTS.joinpath("screenshots").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "screenshots" / "judge-job-completed.png"), full_page=True)
    assert page.evaluate("window.__noReload") is True
    assert page.inner_text("#fig-done") == "72 / 72" != first
    assert int(page.inner_text("#fig-invalid")) > 0
    assert page.get_attribute("progress", "value") == "100.0"
    assert page.locator("[hx-trigger]").count() == 0  # polling stopped
