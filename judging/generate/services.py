"""Generation-job workflows: plan and start one; whether its answers are in the study yet.

The calls themselves run on the judge runner (``judging.runner``: claims, retries, cache,
budget, pause/resume/cancel, batch mode); this module only plans the rows and, once the
runner reports the job complete, the study side is written by ``judging.generate.finish``.
"""

from __future__ import annotations

import logging
import re
from decimal import Decimal
from typing import Any, NamedTuple

from django.db import transaction
from django.utils import timezone

from annotations.models import Candidate, Instruction, Response, Study
from judging import generation_params
from judging.generate import prompts
from judging.generate.rewrite_output import is_read
from judging.models import Generation, GenerationJob, RegisteredModel
from judging.services import JobError, check_sendable, enqueue_pending

logger = logging.getLogger(__name__)
# Settings a job may send with every request (on top of the model's own ``generation``).
ALLOWED_PARAMS = frozenset(
    {"max_tokens", "temperature", "top_p", "seed", "stop", "presence_penalty", "frequency_penalty"}
)
_KEY = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


# --- start ---------------------------------------------------------------------------------


def start_generation_job(
    *,
    study: Study,
    generator: RegisteredModel,
    candidate_key: str = "",
    params: dict[str, Any] | None = None,
    budget_usd: Decimal | None = None,
    pair_policy: str = GenerationJob.PairPolicy.ALL,
    pair_sample_size: int | None = None,
    seed: int = 0,
    mode: str = GenerationJob.Mode.SYNC,
    prompt_version: str = prompts.DEFAULT_VERSION,
    created_by: Any = None,
) -> GenerationJob:
    """Create the job with one Generation row per instruction still to answer, and enqueue it.

    Raises JobError (nothing written) on bad input: a model that may not generate (a
    baseline, imported results, ``use_as_generator`` off), a candidate key taken by a
    candidate that is not this model's earlier output, nothing left to answer, bad
    params, pair policy, sample size, mode or budget. When the key is this model's earlier
    output, only the instructions it has no answer to yet are generated.
    """
    planned = plan_generation_job(
        study=study,
        generator=generator,
        candidate_key=candidate_key,
        params=params,
        budget_usd=budget_usd,
        pair_policy=pair_policy,
        pair_sample_size=pair_sample_size,
        seed=seed,
        mode=mode,
        prompt_version=prompt_version,
        created_by=created_by,
    )
    job = planned.job
    with transaction.atomic():
        job.status = GenerationJob.Status.RUNNING
        job.started_at = job.heartbeat_at = timezone.now()
        job.save(force_insert=True)
        Generation.objects.bulk_create(generation_rows(job, planned.instructions))
        transaction.on_commit(lambda: enqueue_pending(job=job))
    logger.info("generation job %s: %s answers from %s on %s", job.pk, job.total, generator.name, study.slug)
    return job


class GenerationJobPlan(NamedTuple):
    """A generation job as start_generation_job would create it, before anything is written:
    the job (unsaved) and the instructions it answers. judging.estimates prices it."""

    job: GenerationJob
    instructions: list[Instruction]


def plan_generation_job(
    *,
    study: Study,
    generator: RegisteredModel,
    candidate_key: str = "",
    params: dict[str, Any] | None = None,
    budget_usd: Decimal | None = None,
    pair_policy: str = GenerationJob.PairPolicy.ALL,
    pair_sample_size: int | None = None,
    seed: int = 0,
    mode: str = GenerationJob.Mode.SYNC,
    prompt_version: str = prompts.DEFAULT_VERSION,
    created_by: Any = None,
) -> GenerationJobPlan:
    """Validate a generation job's input and build its job, unsaved (writes nothing).

    The same checks and the same JobError as start_generation_job, which saves what this
    returns; the estimate before launch (judging.estimates) prices it without saving.
    """
    key = _check_model_and_key(study=study, generator=generator, candidate_key=candidate_key)
    params = check_params(params)
    _check_options(
        pair_policy=pair_policy,
        pair_sample_size=pair_sample_size,
        mode=mode,
        budget_usd=budget_usd,
        prompt_version=prompt_version,
    )
    answered = set(
        Response.objects.filter(instruction__study=study, candidate__key=key).values_list("instruction_id", flat=True)
    )
    instructions = [i for i in study.instructions.order_by("index") if i.pk not in answered]
    if not instructions:
        raise JobError(
            f"study {study.slug!r} has no instructions without an answer from candidate {key!r}"
            if answered
            else f"study {study.slug!r} has no instructions"
        )
    if pair_policy == GenerationJob.PairPolicy.SAMPLE:
        possible = _possible_pairs(study, key, instructions)
        assert pair_sample_size is not None  # _check_options requires one for a sample
        if pair_sample_size > possible:
            raise JobError(
                f"pair sample size {pair_sample_size} is more than the {possible} pairs the new answers can form"
            )
    return GenerationJobPlan(
        GenerationJob(
            study=study,
            generator=generator,
            candidate_key=key,
            params=params,
            prompt_version=prompt_version,
            pair_policy=pair_policy,
            pair_sample_size=pair_sample_size,
            seed=seed,
            mode=mode,
            budget_usd=budget_usd,
            created_by=created_by,
            total=len(instructions),
        ),
        instructions,
    )


def generation_rows(job: GenerationJob, instructions: list[Instruction]) -> list[Generation]:
    """The job's unsaved Generation rows, one per instruction, holding exactly what is sent."""
    # What is sent: the model's own settings, then the job's (the job wins).
    sent = {**(job.generator.generation or {}), **job.params}
    rows = []
    for instruction in instructions:
        messages = prompts.messages_for(instruction.text, version=job.prompt_version)
        rows.append(
            Generation(
                job=job, instruction=instruction, messages=messages, params=sent, prompt_hash=prompts.hash_of(messages)
            )
        )
    return rows


def check_generator(generator: RegisteredModel) -> None:
    """JobError unless ``generator`` may write text: a called model, enabled as a generator,
    allowed to send (also what a rewrite job asks of its model)."""
    if generator.kind != RegisteredModel.Kind.OPENAI:
        raise JobError(f"model {generator.name!r} is a {generator.get_kind_display().lower()} and cannot write answers")
    if not generator.use_as_generator:
        raise JobError(f"model {generator.name!r} is not enabled as a generator (use_as_generator)")
    check_sendable(generator)


def _check_model_and_key(*, study: Study, generator: RegisteredModel, candidate_key: str) -> str:
    check_generator(generator)
    key = candidate_key or generator.name
    if not _KEY.match(key):
        raise JobError(f"candidate key {key!r} must be 1-64 letters, digits or _.:-")
    existing = Candidate.objects.filter(study=study, key=key).first()
    if (
        existing is not None
        and not GenerationJob.objects.filter(study=study, generator=generator, candidate=existing).exists()
    ):
        raise JobError(
            f"study {study.slug!r} already has a candidate {key!r} that {generator.name!r} "
            f"did not write; choose another candidate key"
        )
    if GenerationJob.objects.filter(
        study=study, candidate_key=key, status__in=(*GenerationJob.ACTIVE, GenerationJob.Status.PAUSED)
    ).exists():
        raise JobError(f"a generation job for candidate {key!r} on {study.slug!r} is already under way")
    return key


def check_params(params: dict[str, Any] | None) -> dict[str, Any]:
    params = dict(params or {})
    unknown = sorted(set(params) - ALLOWED_PARAMS)
    if unknown:
        raise JobError(f"unknown generation setting {unknown[0]!r}; use {', '.join(sorted(ALLOWED_PARAMS))}")
    try:  # the same types and ranges as a model's own settings
        return generation_params.check(params)
    except generation_params.GenerationParamError as exc:
        raise JobError(str(exc)) from None


def _check_options(
    *, pair_policy: str, pair_sample_size: int | None, mode: str, budget_usd: Decimal | None, prompt_version: str
) -> None:
    if pair_policy not in GenerationJob.PairPolicy.values:
        raise JobError(f"unknown pair policy {pair_policy!r}; use {', '.join(GenerationJob.PairPolicy.values)}")
    if pair_policy == GenerationJob.PairPolicy.SAMPLE:
        if pair_sample_size is None or pair_sample_size < 1:
            raise JobError("a pair sample needs a sample size of at least 1")
    elif pair_sample_size is not None:
        raise JobError("a pair sample size goes only with pair policy 'sample'")
    if mode not in GenerationJob.Mode.values:
        raise JobError(f"unknown mode {mode!r}; use {', '.join(GenerationJob.Mode.values)}")
    if budget_usd is not None and budget_usd < 0:
        raise JobError("the budget cannot be negative")
    if prompt_version not in prompts.available_versions():
        raise JobError(f"unknown answer prompt version {prompt_version!r}")


def _possible_pairs(study: Study, key: str, instructions: list[Instruction]) -> int:
    return Response.objects.filter(instruction__in=instructions).exclude(candidate__key=key).count()


# --- finish ---------------------------------------------------------------------------------


def is_finalised(job: GenerationJob) -> bool:
    """Completed and every stored answer is a Response, or for a rewrite job read into a rewrite
    or noted unusable (finish_generation_job has run)."""
    if job.rewrite_kind:
        return is_read(job)
    return (
        job.status == GenerationJob.Status.COMPLETED
        and not job.generations.filter(status=Generation.Status.DONE, response__isnull=True).exists()
    )
