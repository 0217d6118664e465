"""Rewrite jobs: a registered model rewrites a study's answers for a bias whose perturbation a
model makes (sentiment). Planned here, run by the generation runner like any generation job
(claims, retries, cache, budget, pause/resume/cancel, batch mode), read into
``ResponseRewrite`` rows by ``judging.generate.rewrite_output`` when it completes.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any, NamedTuple

from django.db import transaction
from django.utils import timezone

from annotations.models import Pair, Response, ResponseRewrite, Study
from annotations.vocabulary import RewriteKind
from judging.generate import prompts
from judging.generate.services import check_generator, check_params
from judging.models import Generation, GenerationJob, RegisteredModel
from judging.services import JobError, enqueue_pending

logger = logging.getLogger(__name__)


class RewriteJobPlan(NamedTuple):
    """A rewrite job as start_rewrite_job would create it, unsaved, and the responses it rewrites."""

    job: GenerationJob
    responses: list[Response]


def plan_rewrite_job(
    *,
    study: Study,
    generator: RegisteredModel,
    kind: str = RewriteKind.SENTIMENT,
    params: dict[str, Any] | None = None,
    budget_usd: Decimal | None = None,
    seed: int = 0,
    mode: str = GenerationJob.Mode.SYNC,
    prompt_version: str = "",
    created_by: Any = None,
) -> RewriteJobPlan:
    """Validate a rewrite job and build it, unsaved (writes nothing); JobError on bad input.

    It rewrites every answer that stands in one of the study's pairs and has no rewrite of this
    kind yet, so a second job after new pairs (or failures) does only what is missing.
    """
    if kind not in RewriteKind.values:
        raise JobError(f"unknown rewrite kind {kind!r}; use {', '.join(RewriteKind.values)}")
    version = prompt_version or prompts.DEFAULT_REWRITE_VERSION[kind]
    if version not in prompts.rewrite_versions(kind):
        raise JobError(f"unknown {kind} rewrite prompt {version!r}; use {', '.join(prompts.rewrite_versions(kind))}")
    check_generator(generator)
    params = check_params(params)
    if mode not in GenerationJob.Mode.values:
        raise JobError(f"unknown mode {mode!r}; use {', '.join(GenerationJob.Mode.values)}")
    if budget_usd is not None and budget_usd < 0:
        raise JobError("the budget cannot be negative")
    if GenerationJob.objects.filter(
        study=study, rewrite_kind=kind, status__in=(*GenerationJob.ACTIVE, GenerationJob.Status.PAUSED)
    ).exists():
        raise JobError(f"a {kind} rewrite job on {study.slug!r} is already under way")
    paired = Pair.objects.filter(instruction__study=study)
    in_pairs = set(paired.values_list("response_a_id", flat=True)) | set(paired.values_list("response_b_id", flat=True))
    if not in_pairs:
        raise JobError(f"study {study.slug!r} has no pairs: there is nothing to rewrite")
    done = set(
        ResponseRewrite.objects.filter(response_id__in=in_pairs, kind=kind).values_list("response_id", flat=True)
    )
    responses = list(
        Response.objects.filter(pk__in=in_pairs - done)
        .select_related("instruction", "candidate")
        .order_by("instruction__index", "candidate__position", "candidate__key")
    )
    if not responses:
        raise JobError(f"every answer in a pair of {study.slug!r} already has a {kind} rewrite")
    job = GenerationJob(
        study=study,
        generator=generator,
        rewrite_kind=kind,
        params=params,
        prompt_version=version,
        pair_policy=GenerationJob.PairPolicy.NONE,
        seed=seed,
        mode=mode,
        budget_usd=budget_usd,
        created_by=created_by,
        total=len(responses),
    )
    return RewriteJobPlan(job, responses)


def rewrite_rows(job: GenerationJob, responses: list[Response]) -> list[Generation]:
    """The job's unsaved rows, one per response, holding exactly what is sent."""
    sent = {**(job.generator.generation or {}), **job.params}
    rows = []
    for response in responses:
        messages = prompts.rewrite_messages(response.instruction.text, response.text, version=job.prompt_version)
        rows.append(
            Generation(
                job=job,
                instruction=response.instruction,
                source=response,
                messages=messages,
                params=sent,
                prompt_hash=prompts.hash_of(messages),
            )
        )
    return rows


def start_rewrite_job(**options: Any) -> GenerationJob:
    """Plan (``plan_rewrite_job``'s arguments and JobError), save and enqueue a rewrite job."""
    planned = plan_rewrite_job(**options)
    job = planned.job
    with transaction.atomic():
        job.status = GenerationJob.Status.RUNNING
        job.started_at = job.heartbeat_at = timezone.now()
        job.save(force_insert=True)
        Generation.objects.bulk_create(rewrite_rows(job, planned.responses))
        transaction.on_commit(lambda: enqueue_pending(job=job))
    logger.info(
        "rewrite job %s: %s %s rewrites by %s on %s", job.pk, job.total, job.rewrite_kind, job.generator, job.study
    )
    return job
