"""The review page in Chromium: select all, reject in bulk with a reason, one approval in place
with htmx; and on a phone no researcher page of the crowd side scrolls sideways."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotations import services
from annotations.models import Assignment
from tests.annotations.conftest import build_study
from tests.annotations.test_hub_browser import login
from tests.annotations.test_review import STRAIGHT, TOO_FAST, _submit_all

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def queue(transactional_db, researcher):
    study = build_study("rb", instructions=2, created_by=researcher, overlap=3)
    services.generate_batches(study=study, condition="plain", seed=3, pairs_per_batch=2)
    made = [_submit_all(study, code=f"w-{n}", flags=[TOO_FAST, STRAIGHT][: n % 3]) for n in range(3)]
    return study, made


def test_select_all_reject_with_a_reason_then_approve_one_in_place(live_server, browser, queue):
    study, made = queue
    page = browser.new_page(viewport={"width": 1280, "height": 860})
    login(page, live_server.url, "alice", "alice-password")
    page.goto(live_server.url + reverse("annotations:review-list", args=[study.slug]))
    page.check("#select-all")
    assert page.eval_on_selector_all("input[name=assignment]", "bs => bs.every(b => b.checked)")
    page.click("#bulk-reject")  # no reason yet: refused, nothing changed
    expect(page.locator("#bulk-form")).to_contain_text("Choose a reason for the rejection.")
    assert not Assignment.objects.filter(review="rejected").exists()
    page.check("#select-all")
    page.select_option("#bulk-reason", "low_effort")
    page.fill("#bulk-note", "answers do not match the reference")
    page.click("#bulk-reject")
    expect(page.locator(".messages")).to_contain_text("3 submissions rejected.")
    assert set(Assignment.objects.values_list("review", "review_reason")) == {("rejected", "low_effort")}
    first = made[0]
    page.click(f"#review-{first.pk} button.approve")
    # Overturning a rejection asks why first (tests/annotations/test_review_history_browser.py).
    page.fill(f"#change-reason-{first.pk}", "rechecked: the answers match")
    page.click(f"#confirm-change-{first.pk}")
    expect(page.locator(f"#review-{first.pk} .state")).to_have_text("✓ Approved")
    expect(page.locator(f"#review-{first.pk} details.answers")).to_have_attribute("open", "")
    first.refresh_from_db()
    assert (first.review, first.review_reason) == ("approved", "")


def test_no_crowd_researcher_page_scrolls_sideways_on_a_phone(live_server, browser, queue):
    study, _made = queue
    page = browser.new_page(viewport={"width": 390, "height": 844})
    login(page, live_server.url, "alice", "alice-password")
    for url in (
        reverse("analysis:dashboard"),
        reverse("annotations:study", args=[study.slug]),
        reverse("annotations:review-list", args=[study.slug]),
    ):
        page.goto(live_server.url + url)
        page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        width, viewport = page.evaluate(
            "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert width <= viewport, (url, width)
