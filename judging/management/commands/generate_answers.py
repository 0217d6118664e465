"""`generate_answers --study SLUG --model NAME [--max-tokens N] [--budget USD] [--wait] [--pairs all|none|N]
[--dry-run]`."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from judging import services
from judging.estimates import estimate_generation_job, summary_lines
from judging.generate.services import is_finalised, start_generation_job
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
        "Generate candidate answers for a study's instructions from a registered model, "
        "then extend the study's pairs with the new candidate."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument("--model", required=True, help="a registered model (create_judge NAME ...)")
        parser.add_argument("--max-tokens", type=int, default=None)
        parser.add_argument("--budget", default=None, help="USD; the job stops cleanly when reached")
        parser.add_argument(
            "--pairs",
            default="all",
            help="all (pair with every existing candidate), none, or N (a seeded sample of N pairs)",
        )
        parser.add_argument("--seed", type=int, default=0, help="seeds the pair sample")
        parser.add_argument("--candidate-key", default="", help="default: the model's name")
        parser.add_argument("--batch", action="store_true", help="run through the Batch API (batch price)")
        parser.add_argument("--wait", action="store_true", help="show a progress bar until the job ends")
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="print the calls, tokens and cost the job would spend, and a proposed budget; create nothing",
        )

    def handle(self, *args: Any, **o: Any) -> None:
        budget = budget_option(o["budget"])
        policy, size = _pair_policy(o["pairs"])
        study = study_option(o["study"])
        model = generator_option(o["model"])
        params = {"max_tokens": o["max_tokens"]} if o["max_tokens"] is not None else {}
        options = {
            "study": study,
            "generator": model,
            "candidate_key": o["candidate_key"],
            "params": params,
            "budget_usd": budget,
            "pair_policy": policy,
            "pair_sample_size": size,
            "seed": o["seed"],
            "mode": GenerationJob.Mode.BATCH if o["batch"] else GenerationJob.Mode.SYNC,
        }
        try:
            if o["dry_run"]:
                lines = summary_lines(estimate_generation_job(**options))
                self.stdout.write(dry_run_text(model, study, lines))
                return
            job = start_generation_job(**options)
        except services.JobError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"generation job {job.pk}: {job.total} answers queued from {model.name} "
            f"on {study.slug} as candidate {job.candidate_key}"
        )
        if o["wait"]:
            self._wait(job)

    def _wait(self, job: GenerationJob) -> None:
        job = wait_until_finalised(self.stdout, job, "generation job", finalised=is_finalised)
        self.stdout.write(
            f"candidate {job.candidate_key}: {job.responses_created} responses, "
            f"{job.pairs_created} pairs added, {job.failed} answers failed"
        )


def _pair_policy(value: str) -> tuple[str, int | None]:
    if value in ("all", "none"):
        return value, None
    try:
        size = int(value)
    except ValueError:
        raise CommandError(f"--pairs must be all, none or a number, got {value!r}") from None
    if size < 1:
        raise CommandError(f"--pairs must be at least 1, got {size}")
    return GenerationJob.PairPolicy.SAMPLE, size
