"""Chromium opens the report page (profile switched with htmx) and the exported HTML file offline."""

from __future__ import annotations

import pytest
from django.urls import reverse

from analysis.exporters import export
from analysis.models import ReportRun
from analysis.plots import BUILDERS
from analysis.tasks import build_report_run
from tests.analysis.test_length_builders import WORKED_ANSWERS, WORKED_VERDICTS, WORKED_VOTES, mtbench_study
from tests.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = ARTIFACTS / "screenshots"


@pytest.fixture
def done_study(transactional_db):
    study = mtbench_study(slug="br", answers=WORKED_ANSWERS, votes=WORKED_VOTES, verdicts=WORKED_VERDICTS)
    for profile in ("default", "mtbench-post"):
        run = ReportRun.objects.create(study=study, profile=profile)
        build_report_run(run.pk)
    return study


def _login(page, live_server, django_user_model):
    django_user_model.objects.create_user("frank", password="frank-password", is_staff=True)
    page.goto(live_server.url + reverse("login"))
    page.fill("input[name=username]", "frank")
    page.fill("input[name=password]", "frank-password")
    page.click("button[type=submit], input[type=submit]")


def test_report_page_shows_plots_and_switches_profile(browser, live_server, done_study, django_user_model):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    _login(page, live_server, django_user_model)
    page.goto(live_server.url + reverse("analysis:report", args=["br"]))
    assert page.locator("figure[data-figure]").count() == len(BUILDERS)  # one per plot builder
    assert page.locator("#report-body").get_attribute("data-profile") == "default"
    page.screenshot(path=str(SHOTS / "report-page.png"), full_page=False)
    page.select_option("#profile-select", "mtbench-post")
    page.wait_for_selector('#report-body[data-profile="mtbench-post"]')
    assert "profile=mtbench-post" in page.url  # hx-push-url
    assert "ordered" in page.locator("#table-length_control_summary + .table-wrap").inner_text()
    page.screenshot(path=str(SHOTS / "report-page-mtbench-post.png"), full_page=True)


def test_exported_html_opens_offline(browser, done_study, tmp_path):
    run = ReportRun.objects.filter(study=done_study, profile="default").get()
    path = tmp_path / "report.html"
    path.write_bytes(export(run.result, "html", figures=run.figures))
    SHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, offline=True)
    attempts: list[str] = []

    def block(route):
        attempts.append(route.request.url)
        route.abort()

    context.route(lambda url: not url.startswith(("file:", "data:")), block)
    page = context.new_page()
    page.goto(path.as_uri())
    images = page.locator("figure img")
    assert images.count() == len(BUILDERS)
    # Every plot decoded (an image that failed to load has naturalWidth 0).
    assert all(w > 100 for w in images.evaluate_all("els => els.map(e => e.naturalWidth)"))
    page.screenshot(path=str(SHOTS / "report-export.png"), full_page=False)
    assert attempts == []
    context.close()
