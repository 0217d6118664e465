"""axe-core on every researcher page at desktop and phone sizes: zero serious or critical
violations (issue 12, item 6). Prints the table (page, viewport, violations by impact) and
appends each row to test-artifacts/axe/researcher.jsonl."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from analysis.models import ReportRun
from analysis.tasks import build_report_run
from annotations import services
from annotations.models import Response, ResponseRewrite
from judging.models import GenerationJob, JudgeJob, RegisteredModel
from tests.annotations.axe import IMPACTS, run_axe, serious
from tests.annotations.conftest import build_study
from tests.annotations.test_hub_browser import login
from tests.annotations.test_review import HOSTILE, PROLIFIC_PID, STRAIGHT, TOO_FAST, _submit_all

pytestmark = [pytest.mark.browser, pytest.mark.slow]
VIEWPORTS = {"desktop": {"width": 1280, "height": 860}, "phone": {"width": 390, "height": 844}}


@pytest.fixture
def site(transactional_db, researcher) -> dict:
    """A study with flagged, approved and rejected work, a judge job, a generation job and a report."""
    study = build_study("axe", instructions=2, texts={(0, "alpha"): HOSTILE}, created_by=researcher, overlap=3)
    services.generate_batches(study=study, condition="bandwagon", seed=3, pairs_per_batch=2)
    fast = _submit_all(study, code=PROLIFIC_PID, flags=[TOO_FAST, STRAIGHT], rationale="A, always.", ms=700)
    approved = _submit_all(study, code="careful", choice="B")
    rejected = _submit_all(study, code="third", flags=[TOO_FAST])
    services.review_assignment(assignment=approved, decision="approved")
    services.review_assignment(
        assignment=rejected, decision="rejected", reason="too_fast", note="under a second per task"
    )
    judge = RegisteredModel.objects.create(
        name="axe-longer", kind=RegisteredModel.Kind.BASELINE, baseline="longer", owner=researcher
    )
    job = JudgeJob.objects.create(
        study=study,
        judge=judge,
        conditions=["order"],
        created_by=researcher,
        status=JudgeJob.Status.COMPLETED,
        finished_at=timezone.now(),
    )
    generation = GenerationJob.objects.create(
        study=study,
        generator=judge,
        candidate_key="axe-gen",
        created_by=researcher,
        status=GenerationJob.Status.COMPLETED,
        finished_at=timezone.now(),
    )
    # A sentiment rewrite beside its (hostile) original, for the rewrites page.
    original = Response.objects.get(instruction__study=study, instruction__index=0, candidate__key="alpha")
    ResponseRewrite.objects.create(
        response=original,
        kind="sentiment",
        text="Great news! " + original.text,
        provenance={"model": judge.name, "prompt_version": "sentiment-v1", "job": generation.pk},
    )
    run = ReportRun.objects.create(study=study, profile="default", created_by=researcher)
    build_report_run(run.pk)
    return {"study": study, "job": job, "judge": judge, "generation": generation, "fast": fast}


def _table(rows: list[dict]) -> str:
    head = f"{'page':<34} {'viewport':<8} " + " ".join(f"{i:>8}" for i in IMPACTS)
    lines = [head, "-" * len(head)]
    lines += [f"{r['page']:<34} {r['viewport']:<8} " + " ".join(f"{r[i]:>8}" for i in IMPACTS) for r in rows]
    return "\n".join(lines)


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_every_researcher_page_has_no_serious_axe_violation(live_server, browser, site, viewport):
    base, study = live_server.url, site["study"]
    page = browser.new_context(viewport=VIEWPORTS[viewport]).new_page()
    rows: list[dict] = []

    def check(name: str) -> None:
        page.wait_for_load_state("load")
        rows.append(run_axe(page, name=name, viewport=viewport, suite="researcher"))

    page.goto(base + reverse("login"))
    check("login")
    login(page, base, "alice", "alice-password")
    for name, url in (
        ("studies", reverse("analysis:dashboard")),
        ("study hub", reverse("annotations:study", args=[study.slug])),
        ("review", reverse("annotations:review-list", args=[study.slug])),
        ("review, flagged only", reverse("annotations:review-list", args=[study.slug]) + "?flag=any&state=pending"),
        ("import", reverse("annotations:study_import")),
        ("judge jobs", reverse("judging:jobs")),
        ("judge job", reverse("judging:job", args=[site["job"].pk])),
        ("models", reverse("judging:judges")),
        ("model form", reverse("judging:judge-new")),
        ("generation jobs", reverse("judging:generations")),
        ("generation job", reverse("judging:generation", args=[site["generation"].pk])),
        ("rewrites", reverse("judging:rewrites", args=[study.slug])),
        ("report", reverse("analysis:report", args=[study.slug])),
    ):
        page.goto(base + url)
        if name == "review":
            page.locator("details.answers").first.evaluate("d => d.open = true")
        check(name)
    page.goto(base + reverse("annotations:review-list", args=[study.slug]))
    page.fill("#id_platform_id", PROLIFIC_PID)
    page.click("#lookup-submit")
    page.wait_for_selector("#lookup-result")
    check("review, lookup result")
    page.goto(base + reverse("judging:judges"))
    # The page a browser without JS gets (htmx would put the result into the list instead).
    with page.expect_navigation():
        page.evaluate(
            f"() => document.querySelector('form[action=\"{reverse('judging:judge-test', args=[site['judge'].pk])}\"]').submit()"
        )
    check("model connection test")

    print("\n" + _table(rows))
    bad = [(r["page"], serious(r)) for r in rows if serious(r)]
    assert not bad, bad
