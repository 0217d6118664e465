"""`manage.py seed_demo [--if-empty] [--no-jobs] [--no-crowd] [--no-report]`: the demo study, ready to explore.

It lives in cobbler_site, above the apps, because it wires all three: the study content,
crowd batches and a simulated crowd answering them (annotations), the demo judges and
jobs (judging), and the first report on what is there (analysis), so the dashboard and the
report page open on a finished report.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from analysis.data_version import data_version
from analysis.models import ReportRun
from analysis.services import execute_report_run
from annotations.biases import CALM, REWRITTEN
from annotations.importers.demo import seed_demo_study
from annotations.models import Batch, Condition, Pair, Response, ResponseRewrite, Study
from annotations.services.design import generate_batches
from annotations.simulation.crowd import simulate_crowd
from annotations.vocabulary import RewriteKind
from judging.generate.prompts import DEFAULT_REWRITE_VERSION, hash_of, rewrite_messages
from judging.generate.rewrite_output import read_rewrite
from judging.models import JudgeJob
from judging.services import ensure_demo_judges, point_demo_judge_at, start_judge_job
from judging.simulator.behaviour import Knobs, rewrite_text
from judging.vocabulary import Baseline

DEMO_USER = "researcher"
DEMO_SEED = 2024
DEMO_PROFILE = "default"
# The crowd side of the demo: every condition the worker pages support, CALM's included, so the
# report's battery table has people beside the judge for every new bias (sentiment on the demo's
# own rewrites, _ensure_rewrites), and cot (the order design, reasoning written first) beside the
# judge's cot run.
DEMO_CONDITIONS = (
    Condition.RANKING,
    Condition.ORDER,
    Condition.BANDWAGON,
    Condition.ATTENTIONAL,
    *CALM,
    *REWRITTEN,
    Condition.COT,
)
# The judge side: the simulated judge on the paper's bias runs, CALM's and the cot run (the order
# run's pairs judged after thinking step by step), and the length-only null.
DEMO_JOBS: tuple[tuple[str, list[str]], ...] = (
    (
        "simulated-judge",
        [Condition.ORDER, Condition.BANDWAGON, Condition.ATTENTIONAL, *CALM, *REWRITTEN, Condition.COT],
    ),
    (Baseline.LONGER, [Condition.ORDER]),
)


class Command(BaseCommand):
    help = (
        "Create or update the demo study (idempotent): content, crowd batches answered by a simulated "
        "crowd, the simulated judge and baselines, two demo judge jobs and the first report (profile "
        "default, computed here as the report worker computes it; again only when the data changed). With "
        "DEBUG on, also a local 'researcher' login. The simulated judge calls SIMULATOR_BASE_URL (brought up "
        "to date even with --if-empty)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--if-empty", action="store_true", help="do nothing if any study exists")
        parser.add_argument("--no-jobs", action="store_true", help="do not queue the demo judge jobs")
        parser.add_argument(
            "--no-crowd", action="store_true", help="do not let the simulated crowd answer the demo batches"
        )
        parser.add_argument("--no-report", action="store_true", help="do not compute the demo report")

    def handle(
        self, *args: Any, if_empty: bool, no_jobs: bool, no_crowd: bool, no_report: bool = False, **options: Any
    ) -> None:
        if if_empty and Study.objects.exists():
            # Seeded earlier, maybe for another port: the demo judge must still reach this server.
            if point_demo_judge_at(base_url=settings.SIMULATOR_BASE_URL):
                self.stdout.write(f"demo judge now calls {settings.SIMULATOR_BASE_URL}")
            self.stdout.write("seed_demo: studies exist already; nothing to do.")
            return
        study = seed_demo_study()
        self.stdout.write(
            f"demo study '{study.slug}': {study.instructions.count()} instructions, "
            f"{study.candidates.count()} systems, "
            f"{Pair.objects.filter(instruction__study=study).count()} pairs"
        )
        self._ensure_rewrites(study)
        self._ensure_batches(study)
        if not no_crowd:
            self.stdout.write(simulate_crowd(study=study, seed=DEMO_SEED).describe())
        judges = {judge.name: judge for judge in ensure_demo_judges()}
        self.stdout.write(f"judges: {', '.join(sorted(judges))}")
        if not no_jobs:
            self._ensure_jobs(study, judges)
        if settings.DEBUG:
            self._ensure_local_researcher()
        if not no_report:
            self._ensure_report(study)

    def _ensure_rewrites(self, study: Study) -> None:
        """The demo's sentiment rewrites, made here without a call like the demo's answers: what the
        simulator answers a rewrite job's sentiment-v1 prompt (the same answer between a cheerful
        opening and closing paragraph), read as a rewrite job reads it. A real study gets its
        rewrites from ``run_rewrites``; the provenance says which this is."""
        version = DEFAULT_REWRITE_VERSION[RewriteKind.SENTIMENT]
        paired = Pair.objects.filter(instruction__study=study)
        ids = set(paired.values_list("response_a_id", flat=True)) | set(paired.values_list("response_b_id", flat=True))
        missing = Response.objects.filter(pk__in=ids).exclude(rewrites__kind=RewriteKind.SENTIMENT)
        had = len(ids) - missing.count()
        made = []
        for response in missing.select_related("instruction").order_by("pk"):
            messages = rewrite_messages(response.instruction.text, response.text, version=version)
            read = read_rewrite(rewrite_text(Knobs(seed=DEMO_SEED), messages) or "", response.text)
            if read.problem:
                continue
            provenance = {
                "model": "the simulator's rewrite, made by seed_demo without a call (demo content)",
                "prompt_version": version,
                "prompt_hash": hash_of(messages),
                "messages": messages,
            }
            made.append(
                ResponseRewrite(response=response, kind=RewriteKind.SENTIMENT, text=read.text, provenance=provenance)
            )
        ResponseRewrite.objects.bulk_create(made)
        self.stdout.write(f"sentiment rewrites: {len(made)} made, {had} already there")

    def _ensure_batches(self, study: Study) -> None:
        for condition in DEMO_CONDITIONS:
            if Batch.objects.filter(study=study, condition=condition).exists():
                continue  # generate_batches refuses a second design for a condition
            generate_batches(study=study, condition=condition, seed=DEMO_SEED, pairs_per_batch=5, rankings_per_batch=4)
        counts = {c: Batch.objects.filter(study=study, condition=c).count() for c in DEMO_CONDITIONS}
        self.stdout.write("crowd batches: " + ", ".join(f"{c} {n}" for c, n in counts.items()))

    def _ensure_jobs(self, study: Study, judges: dict) -> None:
        for name, conditions in DEMO_JOBS:
            if JudgeJob.objects.filter(study=study, judge=judges[name]).exists():
                continue
            job = start_judge_job(study=study, judge=judges[name], condition_names=conditions, seed=DEMO_SEED)
            # The simulated judge answers at SIMULATOR_BASE_URL, i.e. the web server that
            # `make run` starts next; calls made before it is up are retried.
            self.stdout.write(f"queued judge job {job.pk}: {name} on {', '.join(conditions)} ({job.total} calls)")

    def _ensure_report(self, study: Study) -> None:
        """The first report, computed by the report worker's own service, once per state of the data.

        The judge jobs are only queued here (the worker runs them once the server is up), so this
        report counts the crowd and says the judges have nothing completed yet; the report page
        says it is stale once their calls arrive. A failure is recorded on the run and reported,
        never fatal: the platform still starts and the page offers to recompute.
        """
        latest = ReportRun.objects.latest_done(study=study, profile=DEMO_PROFILE)
        if latest is not None and latest.data_version == data_version(study):
            self.stdout.write(f"demo report: run {latest.pk} is up to date; nothing to compute")
            return
        if ReportRun.objects.active().filter(study=study, profile=DEMO_PROFILE).exists():
            self.stdout.write("demo report: a run is already queued; the worker computes it")
            return
        started = time.monotonic()
        run = ReportRun.objects.create(study=study, profile=DEMO_PROFILE, data_version=data_version(study))
        if not run.claim():
            return
        try:
            execute_report_run(run=run)
        except Exception as exc:  # recorded on the run by execute_report_run; the page shows it
            self.stderr.write(
                f"demo report: run {run.pk} failed ({type(exc).__name__}: {exc}); recompute it on its page"
            )
            return
        self.stdout.write(f"demo report: run {run.pk} ({DEMO_PROFILE}) computed in {time.monotonic() - started:.1f} s")

    def _ensure_local_researcher(self) -> None:
        # Only ever with DEBUG on: a well-known password is fine on a laptop, never on a server.
        users = get_user_model()
        if not users.objects.filter(username=DEMO_USER).exists():
            users.objects.create_superuser(DEMO_USER, "researcher@localhost", DEMO_USER)
        self.stdout.write(
            f"local demo account: user '{DEMO_USER}', password '{DEMO_USER}' (staff; DEBUG only, "
            "for this machine; never use it on a server)"
        )
