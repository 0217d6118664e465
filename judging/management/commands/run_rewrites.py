"""`run_rewrites --study SLUG --model NAME [--kind sentiment] [--prompt-version V] [--max-tokens N]
[--budget USD] [--batch] [--wait] [--dry-run]`: a registered model rewrites the study's answers for
a bias whose perturbation a model makes (sentiment), before a judge job or a crowd design uses it."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotations.vocabulary import RewriteKind
from judging import services
from judging.estimates import estimate_rewrite_job, summary_lines
from judging.generate.rewrite_output import is_read
from judging.generate.rewrites import start_rewrite_job
from judging.management.job_commands import (
    budget_option,
    dry_run_text,
    generator_option,
    study_option,
    wait_until_finalised,
)
from judging.models import GenerationJob


class Command(BaseCommand):
    help = (
        "Rewrite every answer in the study's pairs with a registered model (sentiment: a more confident, "
        "cheerful tone), for the sentiment condition of judge jobs and crowd designs."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument("--model", required=True, help="a registered model with use_as_generator on")
        parser.add_argument("--kind", default=RewriteKind.SENTIMENT, choices=RewriteKind.values)
        parser.add_argument("--prompt-version", default="", help="default: the kind's current prompt (sentiment-v1)")
        parser.add_argument("--max-tokens", type=int, default=None)
        parser.add_argument("--budget", default=None, help="USD; the job stops cleanly when reached")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--batch", action="store_true", help="run through the Batch API (batch price)")
        parser.add_argument("--wait", action="store_true", help="show a progress bar until the job ends")
        parser.add_argument("--dry-run", action="store_true", help="print the calls and cost; create nothing")

    def handle(self, *args: Any, **o: Any) -> None:
        budget = budget_option(o["budget"])
        study = study_option(o["study"])
        model = generator_option(o["model"])
        options = {
            "study": study,
            "generator": model,
            "kind": o["kind"],
            "prompt_version": o["prompt_version"],
            "params": {"max_tokens": o["max_tokens"]} if o["max_tokens"] is not None else {},
            "budget_usd": budget,
            "seed": o["seed"],
            "mode": GenerationJob.Mode.BATCH if o["batch"] else GenerationJob.Mode.SYNC,
        }
        try:
            if o["dry_run"]:
                lines = summary_lines(estimate_rewrite_job(**options))
                self.stdout.write(dry_run_text(model, study, lines))
                return
            job = start_rewrite_job(**options)
        except services.JobError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"rewrite job {job.pk}: {job.total} {job.rewrite_kind} rewrites queued from {model.name} "
            f"on {study.slug} (prompt {job.prompt_version})"
        )
        if o["wait"]:
            self._wait(job)

    def _wait(self, job: GenerationJob) -> None:
        job = wait_until_finalised(self.stdout, job, "rewrite job", finalised=is_read)
        self.stdout.write(
            f"{job.rewrite_kind} rewrites: {job.rewrites_created} made, {job.rewrites_rejected} answers unusable "
            f"(see the rewrites page), {job.failed} calls failed"
        )
