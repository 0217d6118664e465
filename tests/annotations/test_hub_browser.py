"""A researcher sets up a crowd study in Chromium without the admin or the CLI: create it from the
demo content, generate its batches, change its task settings, find review and the worker links."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotations.models import Study
from tests.annotations.conftest import build_study
from tests.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def login(page, base: str, username: str, password: str) -> None:
    page.goto(base + reverse("login"))
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_load_state("load")


@pytest.mark.django_db(transaction=True)
def test_create_a_study_and_its_batches_from_the_browser(live_server, browser, researcher):
    build_study("source", instructions=3)  # shared content (no owner), like the seeded demo
    base = live_server.url
    page = browser.new_page(viewport={"width": 1280, "height": 860})
    login(page, base, "alice", "alice-password")
    page.click("nav >> text=Studies")
    page.wait_for_url("**/dashboard/")
    page.fill("#id_name", "Browser study")
    page.fill("#id_slug", "browser-study")
    page.select_option("#id_from_study", "source")
    page.fill("#id_overlap", "2")
    page.click("#study-form button[type=submit]")
    page.wait_for_url("**/crowd/studies/browser-study/")
    study = Study.objects.get(slug="browser-study")
    assert study.created_by == researcher and study.overlap == 2 and study.instructions.count() == 3
    expect(page.locator("#count-instructions")).to_have_text("3")

    page.select_option("#id_condition", "bandwagon")
    page.fill("#id_seed", "5")
    page.fill("#id_pairs_per_batch", "2")
    with page.expect_navigation():  # the hub reloads with the new batches
        page.click("#generate-submit")
    expect(page.locator("#progress tr")).to_have_count(1 + 3)  # a header and one row per instruction
    assert study.batches.filter(condition="bandwagon").count() == 3
    expect(page.locator("#progress")).to_contain_text("0 / 0 / 2")
    # The same condition again is refused on the page, in place, and nothing is added.
    page.select_option("#id_condition", "bandwagon")
    page.click("#generate-submit")
    expect(page.locator("#generate-form .errorlist")).to_contain_text("already has")
    assert study.batches.count() == 3

    page.check("#id_allow_ties")
    page.select_option("#id_rationale", "required")
    # The raw JSON is the advanced option, in a closed <details>; the rules have their own fields.
    expect(page.locator("#id_quality_rules")).to_be_hidden()
    page.click("#quality-rules-json summary")
    page.fill("#id_quality_rules", '{"min_median_seconds": "soon"}')
    page.click("#settings-save")
    expect(page.locator("#quality-rules-error")).to_contain_text("must be a number")
    study.refresh_from_db()
    assert study.allow_ties is False
    page.fill("#id_quality_rules", "")
    page.fill("#id_rule_min_median_seconds", "5")
    with page.expect_navigation():
        page.click("#settings-save")
    expect(page.locator(".messages")).to_contain_text("Study settings saved.")
    study.refresh_from_db()
    assert (study.allow_ties, study.rationale, study.quality_rules) == (True, "required", {"min_median_seconds": 5.0})

    assert page.input_value("#prolific-url").startswith(
        f"{base}/s/browser-study/start?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
    )
    page.screenshot(path=str(ARTIFACTS / "screenshots" / "study-hub.png"), full_page=True)
    page.click("#review-link")
    page.wait_for_url("**/review/")
    expect(page.locator("#no-submissions")).to_be_visible()
