"""Honest report states: which work counted, what waits for review, why a section is empty,
the data version a report read and the page's warning when newer data exists, methods legends."""

from __future__ import annotations

import csv
import io
import re
import zipfile

import pytest
from django.urls import reverse
from django.utils.html import escape

from analysis.data_version import data_version
from analysis.exporters import export
from analysis.exporters.tidy_tables import tidy_tables
from analysis.models import ReportRun
from analysis.report import build_report
from analysis.services import start_report_run
from analysis.summary import describe_work
from analysis.tasks import build_report_run
from annotations import services
from annotations.models import Assignment, Pair, Participant, ReviewDecision, Study, Submission
from judging.models import JudgeJob, Judgment, RegisteredModel
from tests.annotations.conftest import build_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    """One instruction, one order pair (two twin tasks); alice approved, bob waiting for review."""
    study = build_study("states", instructions=1, overlap=4)
    services.generate_batches(study=study, condition="order", seed=1, pairs_per_batch=1)
    for label, review in (("alice", "approved"), ("bob", "pending")):
        submit(study, label, review=review)
    return study


def submit(study: Study, label: str, *, review: str = "pending") -> Assignment:
    batch = study.batches.get(condition="order")
    p = Participant.objects.create(study=study, platform="code", external_hash=label, label=label, qualified=True)
    a = Assignment.objects.create(batch=batch, participant=p, status="submitted", review=review)
    for task in batch.tasks.order_by("position"):
        ids = task.expected_response_ids()
        Submission.objects.create(
            assignment=a, task=task, choice="A", chosen_response_id=ids[0], idempotency_key=f"{label}-{task.pk}"
        )
    return a


def judge_once(study: Study) -> Judgment:
    judge, _ = RegisteredModel.objects.get_or_create(name="j", defaults={"kind": "baseline", "baseline": "first-slot"})
    job = JudgeJob.objects.create(study=study, judge=judge, conditions=["order"], status="completed")
    pair = Pair.objects.filter(instruction__study=study).first()
    return Judgment.objects.create(
        job=job,
        pair=pair,
        condition="order",
        presentation=1,
        slot1_response=pair.response_a,
        choice="first",
        chosen_response=pair.response_a,
        valid=True,
        status="done",
    )


def _done(study: Study) -> ReportRun:
    run = ReportRun.objects.create(study=study, profile="default")
    build_report_run(run.pk)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return run


def _page(client, study: Study) -> str:
    return client.get(reverse("analysis:report", args=[study.slug])).content.decode()


def test_the_counted_work_block_counts_under_the_profiles_rule(study):
    report = build_report(study=study, profile="default")
    counted = report["counted_work"]
    assert counted["rule"] == "approved" and counted["flagged_work"] == "keep"
    assert counted["assignments"] == {
        "submitted": 2,
        "approved": 1,
        "pending": 1,
        "rejected": 0,
        "in_progress": 0,
        "counted": 1,
        "waiting_for_review": 1,
    }
    assert counted["answers"]["pairwise"] == {"submitted": 4, "counted": 2, "waiting_for_review": 2}
    # The bias section counted exactly the approved rater's pair.
    [row] = [r for r in report["bias"] if r["subject"] == "humans" and r["bias"] == "position_preference"]
    assert row["n"] == 1


def test_the_page_says_which_work_counts_and_links_to_the_study_hub(study, researcher_client):
    _done(study)
    page = _page(researcher_client, study)
    hub = reverse("annotations:study", args=[study.slug])
    assert f'href="{hub}"' in page
    text = re.search(r'id="counted-work">(.*?)</p>', page, re.S).group(1)
    assert text == (
        "Counts approved work only: 1 of 2 submitted assignments (2 answers); 1 wait for review, "
        "0 rejected, 0 still in progress."
    )


def test_empty_sections_say_why_and_what_to_do(db, researcher_client):
    study = build_study("waiting", instructions=1, overlap=4)
    services.generate_batches(study=study, condition="order", seed=1, pairs_per_batch=1)
    submit(study, "carol")  # waits for review: nothing counts yet
    job = JudgeJob.objects.create(
        study=study,
        conditions=["order"],
        status="running",
        judge=RegisteredModel.objects.create(name="q", kind="baseline", baseline="first-slot"),
    )
    report = build_report(study=study, profile="default")
    assert report["counted_work"]["judge_jobs"]["not_counted"] == [{"job": job.pk, "judge": "q", "status": "running"}]
    [waiting] = [c for c in report["summary"] if c["subject"] == "q"]
    assert waiting["verdict"] == "no_data" and f"no completed judge job (job {job.pk} running)" in waiting["text"]
    bias = report["no_data"]["bias"]
    assert bias["reason"] == (
        "No completed judge job (1 running); only completed jobs count; "
        "No approved pairwise human answers: 2 submitted answers wait for review"
    )
    assert [p["link"] for p in bias["parts"]] == ["jobs", "study"]
    assert report["no_data"]["paper"]["action"] == "switch the profile above"
    human = next(c for c in report["summary"] if c["subject"] == "humans")
    assert human["verdict"] == "no_data" and "1 waiting for review" in human["text"]
    # The page links each action; the offline export keeps the words and no URL.
    _done(study)
    page = _page(researcher_client, study)
    hub = reverse("annotations:study", args=[study.slug])
    assert (f'2 submitted answers wait for review: <a href="{hub}">review them on the study page</a>.') in page
    assert f'<a href="{reverse("judging:jobs")}">watch or resume them on the judging page</a>' in page
    html = export(report, "html").decode()
    assert "wait for review: review them on the study page." in html and "href=" not in html


def test_an_empty_study_says_no_judge_job_and_no_answers(db):
    report = build_report(study=Study.objects.create(slug="void", name="Void"), profile="default")
    assert report["no_data"]["bias"]["reason"] == "No judge job on this study; No pairwise human answers yet"
    assert report["summary"] == []


def test_the_data_version_moves_with_answers_reviews_and_judgments(study, researcher_client):
    run = _done(study)
    assert run.data_version == run.result["data_version"] == data_version(study)
    assert "stale-warning" not in _page(researcher_client, study)

    versions = [data_version(study)]
    submit(study, "dave")
    versions.append(data_version(study))
    page = _page(researcher_client, study)
    assert "Newer data since this report was computed (2 new answers / 1 review" not in page
    assert "Newer data since this report was computed (2 new answers / 0 reviews / 0 judgments): recompute." in page

    ReviewDecision.objects.record(assignment=Assignment.objects.get(participant__label="bob"), decision="approved")
    versions.append(data_version(study))
    assert "(2 new answers / 1 review / 0 judgments)" in _page(researcher_client, study)

    judge_once(study)
    versions.append(data_version(study))
    assert "(2 new answers / 1 review / 1 judgment / 1 judge job change)" in _page(researcher_client, study)
    assert len(set(versions)) == 4

    # Recomputing reads the new data: the warning goes.
    _done(study)
    assert "stale-warning" not in _page(researcher_client, study)


def test_a_review_that_swaps_approved_and_rejected_still_moves_the_version(study):
    before = data_version(study)
    alice, bob = (Assignment.objects.get(participant__label=n) for n in ("alice", "bob"))
    Assignment.objects.filter(pk=alice.pk).update(review="rejected")
    Assignment.objects.filter(pk=bob.pk).update(review="approved")
    assert data_version(study) != before


def test_a_queued_run_records_the_version_it_was_queued_on(study, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        run = start_report_run(study=study, profile="default")
    assert run.data_version == data_version(study) and len(run.data_version) == 16


def test_method_strings_go_into_a_legend_and_the_csv_keeps_them(study, researcher_client):
    run = _done(study)
    page = _page(researcher_client, study)
    [bias] = [t for t in tidy_tables(run.result) if t.name == "bias"]
    methods = sorted({r["method"] for r in bias.rows})
    legend = re.search(r'<dl class="method-legend" data-legend="bias">(.*?)</dl>', page, re.S).group(1)
    for text in methods:
        assert legend.count(escape(text)) == 1
    # Each row shows a key into the legend, never the 90-character text itself.
    table = re.search(r'<table data-table="bias">(.*?)</table>', page, re.S).group(1)
    assert all(f">{escape(text)}</td>" not in table for text in methods)
    assert re.search(r">B\d+</td>", table)
    archive = zipfile.ZipFile(io.BytesIO(export(run.result, "csv")))
    rows = list(csv.DictReader(io.StringIO(archive.read("bias.csv").decode())))
    assert sorted({r["method"] for r in rows}) == methods


def test_a_report_from_before_summaries_and_versions_says_so(study, researcher_client):
    run = _done(study)
    old = {
        k: v
        for k, v in run.result.items()
        if k not in ("summary", "data_version", "data_counts", "counted_work", "no_data")
    }
    ReportRun.objects.filter(pk=run.pk).update(result=old, data_version="")
    page = _page(researcher_client, study)
    assert "This report was computed before verdict summaries existed: recompute it." in page
    assert "computed before data versions were recorded" in page
    assert 'id="counted-work"' not in page


def test_the_counted_work_line_names_the_flag_rule():
    counted = {
        "rule": "approved+pending",
        "flagged_work": "exclude",
        "assignments": {"counted": 3, "submitted": 4, "waiting_for_review": 2, "rejected": 1, "in_progress": 0},
        "answers": {"pairwise": {"counted": 6}, "ranking": {"counted": 1}},
    }
    assert describe_work(counted) == (
        "Counts approved and not-yet-reviewed work: 3 of 4 submitted assignments "
        "(7 answers); 2 wait for review, 1 rejected, 0 still in progress; work with "
        "a quality flag does not count."
    )
