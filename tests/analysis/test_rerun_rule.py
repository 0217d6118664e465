"""One rule for re-runs (docs/methods.md, "Re-runs"): which judge job's calls count."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from analysis import loaders
from analysis.report import build_report
from annotations.models import Pair
from judging.models import JudgeJob, Judgment, RegisteredModel
from tests.judging.conftest import build_study


def _job(study, judge, conditions, status="completed", choice="first"):
    """A job whose every call of ``conditions`` picked ``choice`` on all 18 pairs."""
    job = JudgeJob.objects.create(study=study, judge=judge, conditions=conditions, status=status)
    for pair in _pairs(study):
        for condition in conditions:
            for presentation in (1,) if condition == "plain" else (1, 2):
                slots = (pair.response_a, pair.response_b) if presentation == 1 else (pair.response_b, pair.response_a)
                Judgment.objects.create(
                    job=job,
                    pair=pair,
                    condition=condition,
                    presentation=presentation,
                    slot1_response=slots[0],
                    raw_text=choice,
                    choice=choice,
                    chosen_response=slots[0 if choice == "first" else 1],
                    valid=True,
                    status="done",
                )
    return job


def _pairs(study):
    return Pair.objects.filter(instruction__study=study).select_related("response_a", "response_b").order_by("pk")


@pytest.fixture
def setting(db):
    study = build_study("rerun")
    judge = RegisteredModel.objects.create(name="j1", kind="baseline", baseline="first-slot")
    other = RegisteredModel.objects.create(name="j2", kind="baseline", baseline="last-slot")
    return study, judge, other


def _jobs_used(frame):
    return {(j, c): set(g["job"]) for (j, c), g in frame.groupby(["judge", "condition"])}


def test_the_latest_completed_job_per_judge_and_condition_counts(setting):
    """Hand-worked: j1 ran order+plain (A), order again (B), plain again (C, still running),
    order a third time (D, cancelled); j2 ran order once (E, completed).

    order of j1 -> B (A is older, D is not completed); plain of j1 -> A (C is running);
    order of j2 -> E. Nothing is mixed: 36 order calls and 18 plain calls per judge.
    """
    study, j1, j2 = setting
    a = _job(study, j1, ["order", "plain"])
    b = _job(study, j1, ["order"], choice="second")
    _job(study, j1, ["plain"], status="running")
    _job(study, j1, ["order"], status="cancelled")
    e = _job(study, j2, ["order"])
    frame = loaders.judgments_frame(study)
    assert _jobs_used(frame) == {("j1", "order"): {b.pk}, ("j1", "plain"): {a.pk}, ("j2", "order"): {e.pk}}
    assert len(frame) == 36 + 18 + 36
    assert set(frame[(frame["judge"] == "j1") & (frame["condition"] == "order")]["choice"]) == {"second"}
    rows = loaders.counted_jobs(study)
    assert [(r["judge"], r["condition"], r["job"], r["named"]) for r in rows] == [
        ("j1", "order", b.pk, False),
        ("j1", "plain", a.pk, False),
        ("j2", "order", e.pk, False),
    ]


def test_named_jobs_count_alone_whatever_their_status(setting):
    study, j1, j2 = setting
    a = _job(study, j1, ["order", "plain"])
    _job(study, j1, ["order"])
    d = _job(study, j1, ["order"], status="cancelled")
    frame = loaders.judgments_frame(study, jobs=[a.pk])
    assert _jobs_used(frame) == {("j1", "order"): {a.pk}, ("j1", "plain"): {a.pk}}
    with loaders.named_jobs([d.pk]):  # what ``report --jobs`` sets for every section
        assert _jobs_used(loaders.judgments_frame(study)) == {("j1", "order"): {d.pk}}
    assert _jobs_used(loaders.judgments_frame(study))[("j1", "order")] != {d.pk}  # the block ended
    with pytest.raises(ValueError, match=f"jobs {a.pk} and {d.pk} both hold 'order' calls of judge 'j1'"):
        loaders.counted_jobs(study, [a.pk, d.pk])
    with pytest.raises(ValueError, match="job 999999 is not a judge job of study 'rerun'"):
        loaders.counted_jobs(study, [999999])


def test_no_completed_job_means_no_calls(setting):
    study, j1, _ = setting
    _job(study, j1, ["order"], status="running")
    assert loaders.judgments_frame(study).empty
    assert loaders.counted_jobs(study) == []


def test_the_report_lists_the_jobs_used_and_the_command_takes_jobs(setting, tmp_path):
    study, j1, _ = setting
    a = _job(study, j1, ["order"])
    b = _job(study, j1, ["order"], choice="second")
    report = build_report(study=study, profile="default")
    assert [(r["job"], r["named"]) for r in report["judge_jobs"]] == [(b.pk, False)]
    out = tmp_path / "r.json"
    call_command("report", "--study", study.slug, "--format", "json", "--out", str(out), "--jobs", str(a.pk))
    written = json.loads(out.read_text())
    assert [(r["job"], r["named"]) for r in written["judge_jobs"]] == [(a.pk, True)]
    first = {r["bias"]: r["value"] for r in written["bias"] if r["subject"] == "j1"}
    assert first["order_first"] == 1.0  # job a always took the first slot, b the second
    with pytest.raises(CommandError, match="--jobs wants comma-separated job ids"):
        call_command("report", "--study", study.slug, "--format", "json", "--out", str(out), "--jobs", "a,b")
    with pytest.raises(CommandError, match="is not a judge job of study"):
        call_command("report", "--study", study.slug, "--format", "json", "--out", str(out), "--jobs", "999999")
