"""In Chromium: a generation job's answers change from pending to done on the open page, without a
reload, and the page stops polling once the job is finished (issue 22 item 8)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from judging.generate.finish import finish_generation_job
from judging.generate.services import start_generation_job
from judging.models import Generation
from tests.judging.conftest import build_study
from tests.judging.test_generation import _answer_all, _model

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_answers_refresh_while_the_job_runs(live_server, browser, researcher):
    study = build_study()
    study.created_by = researcher
    study.save()
    job = start_generation_job(study=study, generator=_model("gen"), created_by=researcher)
    page = browser.new_page()
    page.goto(f"{live_server.url}/accounts/login/?next=/judging/generations/{job.pk}/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "alice-password")
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url(f"**/judging/generations/{job.pk}/")
    page.evaluate("window.__noReload = true")
    expect(page.locator("#generation-rows tbody tr[data-status=pending]")).to_have_count(3)

    first = job.generations.order_by("instruction__index").first()
    first.status, first.raw_text = Generation.Status.DONE, "the first answer"
    first.save()
    row = page.locator(f"#generation-row-{first.pk}")
    expect(row).to_have_attribute("data-status", "done", timeout=10_000)
    expect(row).to_contain_text("the first answer")

    _answer_all(job)
    finish_generation_job(job)
    expect(page.locator("#generation-outcome")).to_contain_text("now answers 3 instructions", timeout=10_000)
    expect(page.locator("#generation-rows tbody tr[data-status=done]")).to_have_count(3)
    assert page.get_attribute("#generation-progress", "hx-trigger") is None  # polling stopped
    assert page.evaluate("window.__noReload") is True  # the same page all along
