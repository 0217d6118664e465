"""Report workflows: compose a report, run it in the worker, export it to a file."""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from django.db import IntegrityError, transaction

from analysis import enqueue
from analysis.data_version import changes_since, data_counts, data_version, version_of
from analysis.exporters import FORMATS, export, render_figures, validate
from analysis.exporters.methods import build_manifest
from analysis.models import ReportRun
from analysis.profiles import get_profile
from analysis.report import build_report
from annotations.models import Instruction, Pair, Response, Study, Submission
from judging.models import Judgment

log = logging.getLogger(__name__)


def study_counts(*, study: Study) -> dict:
    return {
        "study_source": study.source,
        "instructions": Instruction.objects.filter(study=study).count(),
        "responses": Response.objects.filter(instruction__study=study).count(),
        "pairs": Pair.objects.filter(instruction__study=study).count(),
        # Answers to study items: attention checks and gold items are not data.
        "human_submissions": Submission.objects.filter(task__batch__study=study, task__role="item").count(),
        "judgments": Judgment.objects.filter(job__study=study).count(),
    }


def compose_report(
    *,
    study: Study,
    profile: str,
    progress: Callable[[str, float], None] | None = None,
    data_files: list[Path] | None = None,
    jobs: list[int] | None = None,
) -> dict:
    """The full cobbler-report/1 dict plus its reproducibility manifest, schema-checked.

    ``jobs`` names the judge jobs that count (docs/methods.md "Re-runs"; default: the
    latest completed job per judge and condition). Raises ValueError for an unknown
    profile, a bad job selection or a report off the schema.
    """
    report = build_report(study=study, profile=profile, progress=progress, jobs=jobs)
    report["manifest"] = build_manifest(
        report=report, counts=study_counts(study=study), data_files=data_files, source_files=study.source_files
    )
    validate(report)
    return report


def start_report_run(*, study: Study, profile: str, user=None) -> ReportRun:
    """Queue a report run, or return the one already queued/running for this study and profile.

    Idempotent: the partial unique constraint lets only one active run exist, so a
    double click joins the first. Raises ValueError for an unknown profile.
    """
    get_profile(profile)
    existing = ReportRun.objects.active().filter(study=study, profile=profile).first()
    if existing is not None:
        return existing
    try:
        with transaction.atomic():
            # The version at queue time; the worker replaces it with the one the report read.
            run = ReportRun.objects.create(
                study=study, profile=profile, created_by=user, data_version=data_version(study)
            )
    except IntegrityError:
        # Lost the race to a concurrent request: join the run it created.
        return ReportRun.objects.active().get(study=study, profile=profile)
    enqueue.report_run(run.pk)
    return run


def execute_report_run(*, run: ReportRun) -> None:
    """Compute the report and its figures for a claimed run; marks it FAILED on any error."""
    try:
        report = compose_report(
            study=run.study, profile=run.profile, progress=lambda s, f: run.report_progress(s, 0.85 * f)
        )
        # The data the report read (taken before its first query), so the page can tell it is stale.
        run.data_version = report["data_version"]
        ReportRun.objects.filter(pk=run.pk).update(data_version=run.data_version)
        run.report_progress("plots", 0.9)
        figures = render_figures(report)
        run.finish(result=report, figures=figures)
    except Exception as exc:  # recorded on the row, shown to the researcher, re-raised
        # Saving the result can fail too; a run left "running" would make the page poll forever.
        log.exception("report run %s failed", run.pk)
        run.mark_failed(f"{type(exc).__name__}: {exc}")
        raise


def write_report(
    *,
    study: Study,
    profile: str,
    fmt: str,
    out: Path,
    data_files: list[Path] | None = None,
    jobs: list[int] | None = None,
) -> int:
    """Build and write one export to ``out`` atomically; returns bytes written.

    Checks format and destination before computing anything, so bad input fails fast
    and leaves no partial file. Raises ValueError with a one-line reason.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    get_profile(profile)
    out = out.expanduser().resolve()
    if out.is_dir():
        raise ValueError(f"{out} is a directory")
    if not out.parent.is_dir() or not os.access(out.parent, os.W_OK):
        raise ValueError(f"cannot write to {out.parent}: not a writable directory")
    for path in data_files or []:
        if not path.is_file():
            raise ValueError(f"data file {path} not found")
    report = compose_report(study=study, profile=profile, data_files=data_files, jobs=jobs)
    payload = export(report, fmt)
    with tempfile.NamedTemporaryFile(dir=out.parent, prefix=f".{out.name}.", delete=False) as handle:
        handle.write(payload)
    os.replace(handle.name, out)
    return len(payload)


def staleness(*, run: ReportRun) -> dict | None:
    """What changed in the study since ``run`` read its data; None when nothing did.

    ``{"changes": {"answers", "reviews", "judgments", "jobs"}, "version", "current"}``;
    a run from before data versions existed (no version) counts as stale, with no counts.
    """
    counts = data_counts(run.study)
    current = version_of(counts)
    stored = run.data_version or (run.result or {}).get("data_version") or ""
    if stored == current:
        return None
    old = (run.result or {}).get("data_counts")
    return {"changes": changes_since(old, counts) if old else None, "version": stored, "current": current}
