"""The review-history path in Chromium (issue 22, item 3): reject with a note, then approve. The
approval asks why before anything changes, and the history shows both decisions by name."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotations import services
from annotations.models import Assignment, ReviewDecision
from tests.annotations.conftest import build_study
from tests.annotations.test_hub_browser import login
from tests.annotations.test_review import HOSTILE, _submit_all

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def submitted(transactional_db, researcher):
    study = build_study("rhb", instructions=1, created_by=researcher, overlap=1)
    services.generate_batches(study=study, condition="plain", seed=2, pairs_per_batch=2)
    return study, _submit_all(study, code="hist-worker")


def test_reject_with_a_note_then_approve_asks_why_and_keeps_both_decisions(live_server, browser, submitted):
    study, work = submitted
    entry = f"#review-{work.pk}"
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    login(page, live_server.url, "alice", "alice-password")
    page.goto(live_server.url + reverse("annotations:review-list", args=[study.slug]))

    # A first decision needs no confirmation: reject with a reason and an (untrusted) note.
    page.select_option(f"#reason-{work.pk}", "too_fast")
    page.fill(f"#note-{work.pk}", HOSTILE)
    page.click(f"{entry} button.reject")
    expect(page.locator(f"{entry} .state")).to_have_text("✗ Rejected")
    expect(page.locator(f"{entry} .entry-facts")).to_contain_text(f"note: “{HOSTILE}”")  # shown as text

    # Approving now is a change: the entry asks why, and nothing has changed yet.
    page.click(f"{entry} button.approve")
    confirm = page.locator(f"#confirm-{work.pk}")
    expect(confirm).to_contain_text("Change this decision?")
    expect(confirm).to_contain_text("by alice")
    expect(page.locator(f"{entry} .state")).to_have_text("✗ Rejected")
    reason = page.locator(f"#change-reason-{work.pk}")
    expect(reason).to_be_visible()
    page.click(f"#confirm-change-{work.pk}")  # empty: the browser keeps the form (required)
    assert reason.evaluate("el => el.validity.valueMissing")
    assert Assignment.objects.get(pk=work.pk).review == "rejected" and ReviewDecision.objects.count() == 1

    reason.fill("The checks were misgraded; the answers match the reference.")
    page.click(f"#confirm-change-{work.pk}")
    expect(page.locator(f"{entry} .state")).to_have_text("✓ Approved")
    facts = page.locator(f"{entry} .entry-facts")
    expect(facts).not_to_contain_text("note:")  # the rejection note stays in the history only
    expect(facts).to_contain_text("by alice")

    history = page.locator(f"#history-{work.pk}")
    expect(history).to_have_attribute("open", "")
    expect(history.locator("summary")).to_have_text("Review history (2 decisions)")
    items = history.locator("li.decision")
    expect(items).to_have_count(2)
    expect(items.nth(0)).to_contain_text("alice")
    expect(items.nth(0)).to_contain_text("Pending → Rejected")
    expect(items.nth(0)).to_contain_text(HOSTILE)
    expect(items.nth(1)).to_contain_text("alice")
    expect(items.nth(1)).to_contain_text("Rejected → Approved")
    expect(items.nth(1)).to_contain_text("Why changed: “The checks were misgraded")
    assert page.locator("script:has-text('alert')").count() == 0  # the note never became markup

    # Cancelling a second change leaves the approval as it was.
    page.select_option(f"#reason-{work.pk}", "low_effort")
    page.click(f"{entry} button.reject")
    page.click(f"#confirm-cancel-{work.pk}")
    expect(page.locator(f"{entry} .state")).to_have_text("✓ Approved")
    assert ReviewDecision.objects.count() == 2

    # The history is exported beside the page.
    csv_text = page.request.get(live_server.url + (page.locator("#history-csv").get_attribute("href") or "")).text()
    assert csv_text.count("alice") == 2 and "The checks were misgraded" in csv_text
    work.refresh_from_db()
    assert (work.review, work.review_reason, work.review_note) == ("approved", "", "")
