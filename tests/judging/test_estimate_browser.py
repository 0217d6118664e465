"""The launch form's estimate in Chromium: "Preview estimate", then htmx keeps it current."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from judging.estimates import estimate_judge_job
from tests.judging.conftest import open_launch_form

# expect() polls from Playwright's own world: the page's CSP allows no evaluated script.
pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_estimate_follows_the_form_and_proposes_the_budget(live_server, browser, researcher, study, make_sim_judge):
    judge = make_sim_judge(name="sim-judge", knobs="seed=2")
    page = browser.new_page()
    open_launch_form(page, live_server)
    page.select_option("select[name=study]", label="tiny")
    page.select_option("select[name=judge]", label="sim-judge")
    page.click("#launch-form button[name=preview]")
    page.wait_for_selector("#estimate-calls")
    assert page.inner_text("#estimate-calls") == "36"
    one = estimate_judge_job(study=study, judge=judge, condition_names=["order"])
    assert page.input_value("input[name=budget_usd]") == str(one.proposed_budget_usd)
    # A change asks for a new estimate by itself; the budget we proposed follows it.
    page.check("input[name=conditions][value=bandwagon]")
    expect(page.locator("#estimate-calls")).to_have_text("72")
    two = estimate_judge_job(study=study, judge=judge, condition_names=["order", "bandwagon"])
    expect(page.locator("input[name=budget_usd]")).to_have_value(str(two.proposed_budget_usd))
    assert page.inner_text("#estimate-cost") == str(two.cost_usd)
