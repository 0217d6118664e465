"""`run_judges --study SLUG --judge NAME [--conditions order,bandwagon] [--pair-set all|human] [--batch] [--wait]
[--dry-run]`."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotations.vocabulary import Condition
from judging import conditions, estimates, prompts, services
from judging.management.job_commands import budget_option, dry_run_text, study_option, wait_with_progress
from judging.models import JudgeJob, RegisteredModel
from judging.vocabulary import Parser


class Command(BaseCommand):
    help = "Start a judge job (baseline judges longer/first-slot/last-slot/random are created on demand)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument("--judge", required=True)
        parser.add_argument(
            "--conditions",
            default=Condition.ORDER,
            help=f"comma list of {','.join(conditions.SUPPORTED)} (egocentric and salience come from order)",
        )
        parser.add_argument("--pair-set", default="all", choices=["all", "human"])
        parser.add_argument("--budget", default=None, help="USD; the job stops cleanly when reached")
        parser.add_argument("--bandwagon-percent", type=int, default=None)
        parser.add_argument("--parser", default=Parser.ROBUST, choices=[Parser.ROBUST, Parser.PAPER])
        parser.add_argument(
            "--prompt-version",
            default=None,
            help=f"a CoBBLEr prompt version (default {prompts.DEFAULT_VERSION}); a judge with a prompt "
            "template is asked with its template",
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--batch",
            action="store_true",
            help="send the calls through the model's Batch API (batch price, answered within 24 h)",
        )
        parser.add_argument("--wait", action="store_true", help="show a progress bar until the job ends")
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="print the calls, tokens and cost the job would spend, and a proposed budget; create nothing",
        )

    def handle(self, *args: Any, **o: Any) -> None:
        budget = budget_option(o["budget"])
        study = study_option(o["study"])
        try:
            # One transaction: an auto-created baseline judge is rolled back with a bad job.
            with transaction.atomic():
                judge = RegisteredModel.objects.filter(name=o["judge"]).first()
                if judge is None and o["judge"] in services.BASELINES:
                    judge = services.ensure_baseline_judge(name=o["judge"])
                if judge is None:
                    raise CommandError(f"no judge called {o['judge']!r} (create it with create_judge)")
                options = {
                    "study": study,
                    "judge": judge,
                    "condition_names": o["conditions"].split(","),
                    "pair_set": o["pair_set"],
                    "budget_usd": budget,
                    "bandwagon_percent": o["bandwagon_percent"],
                    "parser": o["parser"],
                    "prompt_version": o["prompt_version"],
                    "seed": o["seed"],
                    "mode": JudgeJob.Mode.BATCH if o["batch"] else JudgeJob.Mode.SYNC,
                }
                if o["dry_run"]:
                    lines = estimates.summary_lines(estimates.estimate_judge_job(**options))
                    transaction.set_rollback(True)  # a baseline judge made on demand goes too
                else:
                    job = services.start_judge_job(**options)
        except services.JobError as exc:
            raise CommandError(str(exc)) from None
        if o["dry_run"]:
            self.stdout.write(dry_run_text(judge, study, lines))
            return
        via = " through the Batch API" if job.mode == JudgeJob.Mode.BATCH else ""
        self.stdout.write(f"job {job.pk}: {job.total} judgments queued{via} for {judge.name} on {study.slug}")
        if o["wait"]:
            wait_with_progress(self.stdout, job, "job")
