"""Issue 22 item 5: every researcher page, and the HTML export, fits a 390 px phone.

The pages are enumerated from the URLconf (as the authorization matrix does): every
researcher route that answers a GET with an HTML page, on the demo as `make run` seeds it
(the report computed, a generation job, work waiting for review). Chromium opens
each at 390 x 844 and the page may not scroll sideways: plots shrink, wide tables scroll in
their own box, long lines wrap.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import URLPattern, reverse

from analysis.models import ReportRun
from analysis.tasks import build_report_run
from annotations.models import Assignment, Response, ResponseRewrite
from annotations.vocabulary import RewriteKind
from cobbler_site.foundation.access import Audience, audience_of
from judging.models import GenerationJob, JudgeJob, RegisteredModel
from tests.analysis.test_report_browser import _login
from tests.conftest import ARTIFACTS
from tests.foundation.test_authorization_matrix import ROUTES

pytestmark = [pytest.mark.browser, pytest.mark.slow]
PHONE = {"width": 390, "height": 844}
TOLERANCE = 1  # px: sub-pixel rounding
SHOTS = ARTIFACTS / "screenshots"
# Pages every run must reach (the enumeration below may never silently drop them).
MUST_VISIT = (
    "analysis:dashboard",
    "analysis:report",
    "annotations:study",
    "annotations:review-list",
    "annotations:study_import",
    "judging:judges",
    "judging:judge-new",
    "judging:judge-edit",
    "judging:jobs",
    "judging:job",
    "judging:generations",
    "judging:generation",
    "judging:rewrites",
)


def _url(route: str, pattern: URLPattern, values: dict[str, object]) -> str | None:
    url = "/" + route.lstrip("^")
    for name in pattern.pattern.regex.groupindex:
        if name not in values:
            return None
        url = re.sub(rf"\(\?P<{name}>[^)]*\)|<(?:\w+:)?{name}>", str(values[name]), url)
    return url.replace("^", "").replace("$", "")


def _researcher_pages(client: Client, values: dict[str, object]) -> dict[str, str]:
    """name -> URL of every researcher (or public) route that GETs an HTML page (not the API, not a download)."""
    pages = {}
    for route, pattern in ROUTES:
        if route.startswith("api/") or audience_of(pattern.callback) not in (Audience.RESEARCHER, Audience.PUBLIC):
            continue
        url = _url(route, pattern, values)
        if url is None:
            continue
        response = client.get(url)
        html = response.get("Content-Type", "").startswith("text/html")
        if response.status_code == 200 and html and not response.has_header("Content-Disposition"):
            pages[f"{pattern.callback.__module__.split('.')[0]}:{pattern.name}"] = url
    return pages


def _width(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


# What sticks out past the viewport without a scrolling box to hold it (what to fix when a page
# is too wide); an absolutely positioned element escapes a scrolling box that is not positioned.
STICKING_OUT = """limit => {
  const held = el => {
    const absolute = ["absolute", "fixed"].includes(getComputedStyle(el).position);
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const style = getComputedStyle(a);
      if (style.overflowX !== "visible" && (!absolute || style.position !== "static")) return true;
    }
    return false;
  };
  const name = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
    + (typeof el.className === "string" && el.className.trim() ? "." + el.className.trim().split(/\\s+/).join(".") : "");
  const out = [];
  for (const el of document.body.querySelectorAll("*")) {
    const right = el.getBoundingClientRect().right;
    if (right > limit && !held(el)) out.push(`${name(el)} right=${Math.round(right)}`);
  }
  return out.slice(-8);
}"""


@pytest.fixture
def phone_world(transactional_db, demo_study):
    run = ReportRun.objects.create(study=demo_study, profile="default")
    build_report_run(run.pk)
    run.refresh_from_db()
    assert run.status == ReportRun.Status.DONE, run.error
    job = JudgeJob.objects.filter(study=demo_study).first()
    assert job is not None
    generation = GenerationJob.objects.create(
        study=demo_study, generator=job.judge, candidate_key="phone-gen", status=GenerationJob.Status.RUNNING
    )
    # A long unbroken rewrite: the rewrites page must wrap it, not widen.
    response = Response.objects.filter(instruction__study=demo_study).first()
    ResponseRewrite.objects.update_or_create(
        response=response, kind=RewriteKind.SENTIMENT, defaults={"text": "Wonderful! " + "x" * 600}
    )
    assignment = Assignment.objects.filter(batch__study=demo_study, status=Assignment.Status.SUBMITTED).first()
    assert assignment is not None
    return {
        "slug": demo_study.slug,
        "job_id": job.pk,
        "generation_id": generation.pk,
        "assignment_id": assignment.pk,
        "run": run,
    }


def test_every_researcher_page_and_the_html_export_fit_a_phone(
    browser, live_server, phone_world, tmp_path, django_user_model
):
    staff = Client()
    login = {"username": "frank", "password": "frank-password"}
    values = {k: v for k, v in phone_world.items() if k != "run"}
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    _login(page, live_server, django_user_model)
    frank = django_user_model.objects.get(username="frank")
    # A model of frank's own: only its owner may open its edit and delete pages.
    values["judge_id"] = RegisteredModel.objects.create(
        name="phone-judge", kind=RegisteredModel.Kind.BASELINE, baseline="longer", owner=frank
    ).pk
    assert staff.login(**login)
    pages = _researcher_pages(staff, values)
    missing = [name for name in MUST_VISIT if name not in pages]
    assert not missing, (missing, sorted(pages))

    # The HTML export as the download route hands it out, opened from disk.
    export = staff.get(f"/studies/{phone_world['slug']}/report/download/html/")
    assert export.status_code == 200 and "attachment" in export["Content-Disposition"]
    (tmp_path / "report.html").write_bytes(export.content)

    SHOTS.mkdir(parents=True, exist_ok=True)
    widths, wide = {}, []
    targets = [(name, live_server.url + url) for name, url in sorted(pages.items())]
    targets.append(("analysis:report-download html", (tmp_path / "report.html").as_uri()))
    for name, url in targets:
        page.goto(url)
        page.wait_for_load_state("load")
        assert url.endswith(reverse("login")) or "login" not in page.url, url  # still logged in
        if "report" in name:  # the plots are what widened the report: wait until they are drawn
            page.wait_for_function("[...document.images].every(i => i.complete)")
        widths[name] = _width(page)
        if widths[name] > PHONE["width"] + TOLERANCE:
            culprits = page.evaluate(STICKING_OUT, PHONE["width"] + TOLERANCE)
            wide.append(f"{name} {url}: {widths[name]} px ({', '.join(culprits)})")
            page.screenshot(path=str(SHOTS / f"phone-too-wide-{name.replace(':', '-').replace(' ', '-')}.png"))
    print("\n".join(f"{w:>5} px  {n}" for n, w in sorted(widths.items())))
    assert not wide, "pages wider than a 390 px phone:\n" + "\n".join(wide)
    context.close()
