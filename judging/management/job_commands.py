"""What the job commands (run_judges, generate_answers, run_rewrites) share: reading their
common options, the dry run's output and the progress bar of ``--wait``."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.management.base import CommandError

from annotations.models import Study
from judging.batch.driver import runs_of
from judging.generate.finish import finish_generation_job
from judging.models import GenerationJob, JudgeJob, RegisteredModel

# How long --wait gives the runner to finish a generation or rewrite job's output (the
# candidate, or the rewrites) after the job shows completed, before the command does it.
FINALISE_GRACE_SECONDS = 10.0


def budget_option(value: str | None) -> Decimal | None:
    try:
        return Decimal(value) if value is not None else None
    except InvalidOperation:
        raise CommandError(f"--budget must be a number, got {value!r}") from None


def study_option(slug: str) -> Study:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise CommandError(f"no study with slug {slug!r}")
    return study


def generator_option(name: str) -> RegisteredModel:
    model = RegisteredModel.objects.filter(name=name).first()
    if model is None:
        raise CommandError(f"no registered model called {name!r} (create it with create_judge)")
    return model


def dry_run_text(model: RegisteredModel, study: Study, lines: list[str]) -> str:
    return "\n".join([f"dry run: nothing created; {model.name} on {study.slug}", *lines])


def wait_with_progress(stdout: Any, job: Any, what: str) -> None:
    """Redraw the progress bar every second until the job (judge or generation) finishes;
    CommandError (a non-zero exit) unless it completed."""
    while True:
        job.refresh_from_db()
        stdout.write("\r" + progress_line(job), ending="")
        stdout.flush()
        if job.is_finished:
            break
        time.sleep(1)
    stdout.write("")
    if job.status != job.Status.COMPLETED:
        raise CommandError(f"{what} {job.pk} ended {job.status}")


def wait_until_finalised(
    stdout: Any, job: GenerationJob, what: str, *, finalised: Callable[[GenerationJob], bool]
) -> GenerationJob:
    """``wait_with_progress``, then the job's output (``finalised``) from the runner, or from
    here once FINALISE_GRACE_SECONDS have passed without it (finishing is idempotent)."""
    wait_with_progress(stdout, job, what)
    deadline = time.monotonic() + FINALISE_GRACE_SECONDS
    while not finalised(job) and time.monotonic() < deadline:
        time.sleep(0.3)
        job.refresh_from_db()
    return job if finalised(job) else finish_generation_job(job)


def progress_line(job: Any, width: int = 30) -> str:
    p = job.progress()
    filled = int(width * p["percent"] / 100)
    rate = f"{p['rate']:.1f}/s" if p["rate"] else "-/s"
    eta = f"ETA {p['eta']:.0f}s" if p["eta"] is not None else job.status
    invalid = f"{job.invalid} invalid " if hasattr(job, "invalid") else ""  # judge jobs parse verdicts
    return (
        f"[{'#' * filled}{'.' * (width - filled)}] {p['percent']:5.1f}% {job.done}/{job.total} done "
        f"{job.failed} failed {invalid}{job.tokens_in + job.tokens_out} tok "
        f"${job.cost_usd:.4f} {rate} {eta}{batch_note(job)}"
    )


def batch_note(job: JudgeJob) -> str:
    """' | batches: 1 in_progress, 2 collected' for a batch-mode job (the provider's states)."""
    if job.mode != JudgeJob.Mode.BATCH:
        return ""
    states = Counter(run.provider_status if run.state == "submitted" else run.state for run in runs_of(job))
    return " | batches: " + (", ".join(f"{n} {state}" for state, n in sorted(states.items())) or "none yet")
