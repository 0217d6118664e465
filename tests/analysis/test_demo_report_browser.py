"""Issue 13's done-means: the first report after `make run` answers at a glance, with people in it.

The demo is seeded as `make run` seeds it (content, the simulated crowd through the real worker
services, both demo judge jobs answered by the simulator over HTTP), the report is computed as
the worker computes it, and Chromium reads the page: summary cards first, human rows in the bias,
RBO and rater-agreement tables, and no plot panel that is empty without saying why.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from analysis.models import ReportRun
from analysis.plots import build_plots
from analysis.tasks import build_report_run
from tests.analysis.test_report_browser import _login
from tests.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = ARTIFACTS / "screenshots"


@pytest.fixture
def demo_report(transactional_db, demo_study) -> ReportRun:
    run = ReportRun.objects.create(study=demo_study, profile="default")
    build_report_run(run.pk)
    run.refresh_from_db()
    assert run.status == ReportRun.Status.DONE, run.error
    return run


def _panels_without_reason(report: dict) -> list[str]:
    """Plot panels that draw nothing, or say "no data" without a reason under it."""
    problems = []
    for plot in build_plots(report):
        for ax in plot.figure.axes:
            texts = [t.get_text() for t in ax.texts if t.get_text().strip()]
            if any("no data" in t for t in texts):
                if len(texts) < 2:
                    problems.append(f"{plot.name}: 'no data' without a reason")
            elif ax.axison and not (ax.patches or ax.collections or ax.lines or ax.images):
                problems.append(f"{plot.name}: an empty panel")
    return problems


def _rows(page, table: str, column: int) -> list[str]:
    return page.locator(f'table[data-table="{table}"] tbody tr td:nth-child({column})').all_inner_texts()


def test_the_demo_report_leads_with_verdicts_and_compares_people_with_judges(
    browser, live_server, demo_report, django_user_model
):
    report = demo_report.result
    assert _panels_without_reason(report) == []

    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    _login(page, live_server, django_user_model)
    page.goto(live_server.url + reverse("analysis:report", args=["demo"]))

    # The verdict summary comes before the plots and tables: one card for the humans, one per judge.
    cards = page.locator("article.summary-card")
    subjects = cards.evaluate_all("els => els.map(e => e.dataset.subject)")
    assert {"humans", "simulated-judge", "longer"} <= set(subjects)
    assert page.locator("#summary").evaluate(
        "s => s.compareDocumentPosition(document.querySelector('.figures')) & Node.DOCUMENT_POSITION_FOLLOWING"
    )
    judge = page.locator('article.summary-card[data-subject="simulated-judge"]')
    assert judge.get_attribute("data-verdict") == "biased"
    assert judge.locator('li[data-verdict="biased"]').count() >= 1

    # Each card opens with its one-sentence headline; the findings fold under it, closed, and open
    # from the keyboard (issue 22).
    by_subject = {card["subject"]: card for card in report["summary"]}
    for subject in ("humans", "simulated-judge", "longer"):
        card = page.locator(f'article.summary-card[data-subject="{subject}"]')
        assert card.locator(".summary-headline").inner_text() == by_subject[subject]["headline"]
        assert card.locator("details.summary-findings").get_attribute("open") is None
    assert not judge.locator("ul.summary-claims").is_visible()
    judge.locator("details.summary-findings > summary").focus()
    page.keyboard.press("Enter")
    assert judge.locator("ul.summary-claims").is_visible()
    assert judge.locator('li[data-verdict="biased"]').first.inner_text().startswith("Biased toward")
    # People are the reference: a neutral badge, never the judges' red "biased" one.
    humans = page.locator('article.summary-card[data-subject="humans"]')
    assert "verdict-biased" not in (humans.get_attribute("class") or "")
    assert humans.locator(".badge.verdict-biased").count() == 0
    assert humans.locator("h3 .badge").inner_text() == "the reference"
    assert judge.locator("h3 .badge.verdict-biased").inner_text() == "biased"
    # Table headers in words, with the CSV key kept on the header.
    assert page.locator('table[data-table="bias"] th[data-column="p_adjusted"]').inner_text() == "Holm-adjusted p"

    # Which work counts, and what waits for review (the demo's careless workers stay pending).
    counted = page.locator("#counted-work").inner_text()
    assert "approved" in counted and "wait for review" in counted

    # Every plot decoded and captioned.
    images = page.locator("figure[data-figure] img")
    assert images.count() == len(demo_report.figures) >= 4
    assert all(w > 100 for w in images.evaluate_all("els => els.map(e => e.naturalWidth)"))

    # Human rows in the bias table, human-vs-judge RBO and rater agreement in the agreement table.
    assert "humans" in _rows(page, "bias", 1)
    kinds = _rows(page, "agreement", 1)
    assert "human_vs_judge" in kinds and "inter_annotator" in kinds
    page.screenshot(path=str(SHOTS / "demo-report-summary.png"), full_page=False)

    # The page's claims are the JSON's: the same human bias rows, computed, not typed in.
    human_bias = [r for r in report["bias"] if r["subject"] == "humans" and r.get("n")]
    assert human_bias and all(r["n"] >= 30 for r in human_bias if r["bias"] in ("bandwagon", "attentional"))
