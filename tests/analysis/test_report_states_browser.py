"""Chromium reads the verdict summary, the counted-work line and the stale-data warning on the
report page, and the same cards in the exported HTML opened offline."""

from __future__ import annotations

import pytest
from django.urls import reverse

from analysis.exporters import export
from analysis.models import ReportRun
from analysis.tasks import build_report_run
from tests.analysis.test_report_browser import _login
from tests.analysis.test_summary_builders import answer, summary_study
from tests.annotations.axe import run_axe, serious
from tests.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = ARTIFACTS / "screenshots"


@pytest.fixture
def done_study(transactional_db):
    study = summary_study()
    run = ReportRun.objects.create(study=study, profile="default")
    build_report_run(run.pk)
    return study


def test_the_page_leads_with_the_summary_and_warns_when_data_is_newer(
    browser, live_server, done_study, django_user_model
):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    _login(page, live_server, django_user_model)
    url = live_server.url + reverse("analysis:report", args=[done_study.slug])
    page.goto(url)
    cards = page.locator("article.summary-card")
    assert cards.count() == 4
    first = page.locator('article.summary-card[data-subject="first-judge"]')
    assert first.get_attribute("data-verdict") == "biased"
    # The headline reads at a glance; the lines fold under it, in the page but closed (issue 22).
    assert "prefers the first answer" in first.locator(".summary-headline").inner_text()
    assert (
        first.locator('li[data-statistic="position_preference"]')
        .text_content()
        .startswith("Biased toward the first position (+0.70")
    )
    assert first.locator("h3 .badge").inner_text() == "biased"
    assert page.locator("#counted-work").inner_text().startswith("Counts approved work only: 39 of 52")
    # The summary sits above the plots, in view without scrolling.
    assert page.locator("#summary").bounding_box()["y"] < page.locator("figure").first.bounding_box()["y"]
    assert page.locator("#stale-warning").count() == 0
    row = run_axe(page, name="report page: summary", viewport="1280x900", suite="report", include="#summary")
    assert serious(row) == []
    page.screenshot(path=str(SHOTS / "report-summary.png"), full_page=False)
    page.screenshot(path=str(SHOTS / "report-summary-full.png"), full_page=True)

    # A worker's answer is replaced: the page says the report is stale, and by how much.
    assignment = done_study.batches.get(condition="order", index=0).assignments.first()
    task = assignment.batch.tasks.order_by("position").first()
    assignment.submissions.filter(task=task).delete()
    answer(assignment, task, rater=0)
    page.goto(url)
    warning = page.locator("#stale-warning")
    assert (
        "Newer data since this report was computed (1 new answer / 0 reviews / 0 judgments): recompute."
        in warning.inner_text()
    )
    assert page.locator("#study-hub-link").get_attribute("href") == reverse("annotations:study", args=[done_study.slug])


def test_the_exported_html_carries_the_cards_offline(browser, done_study, tmp_path):
    run = ReportRun.objects.get(study=done_study)
    path = tmp_path / "report.html"
    path.write_bytes(export(run.result, "html", figures=run.figures))
    context = browser.new_context(viewport={"width": 1280, "height": 900}, offline=True)
    page = context.new_page()
    page.goto(path.as_uri())
    assert page.locator("article.summary-card").count() == len(run.result["summary"]) == 4
    assert page.locator('dl.method-legend[data-legend="bias"] dt').count() >= 3
    context.close()
