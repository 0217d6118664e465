"""Generation-job workflows: start one, and turn its answers into a candidate with pairs.

The calls themselves run on the judge runner (``judging.runner``: claims, retries, cache,
budget, pause/resume/cancel, batch mode); this module only plans the rows and, once the
runner reports the job complete, writes the study side (``finish_generation_job``).
"""

from __future__ import annotations

import logging
import random
import re
from decimal import Decimal
from typing import Any, NamedTuple

from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from annotations.models import Candidate, Instruction, Pair, Response, Study
from judging import generation_params
from judging.generate import prompts
from judging.models import Generation, GenerationJob, Judge
from judging.services import JobError, check_sendable

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
    judge: Judge,
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
        judge=judge,
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
        transaction.on_commit(lambda: _enqueue(job))
    logger.info("generation job %s: %s answers from %s on %s", job.pk, job.total, judge.name, study.slug)
    return job


class GenerationJobPlan(NamedTuple):
    """A generation job as start_generation_job would create it, before anything is written:
    the job (unsaved) and the instructions it answers. judging.estimates prices it."""

    job: GenerationJob
    instructions: list[Instruction]


def plan_generation_job(
    *,
    study: Study,
    judge: Judge,
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
    key = _check_model_and_key(study=study, judge=judge, candidate_key=candidate_key)
    params = _check_params(params)
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
            judge=judge,
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
    sent = {**(job.judge.generation or {}), **job.params}
    rows = []
    for instruction in instructions:
        messages = prompts.messages_for(instruction.text, version=job.prompt_version)
        rows.append(
            Generation(
                job=job, instruction=instruction, messages=messages, params=sent, prompt_hash=prompts.hash_of(messages)
            )
        )
    return rows


def _enqueue(job: GenerationJob) -> None:
    from judging.runner import enqueue_pending  # the runner imports this module back

    enqueue_pending(job)


def _check_model_and_key(*, study: Study, judge: Judge, candidate_key: str) -> str:
    if judge.kind != Judge.Kind.OPENAI:
        raise JobError(f"model {judge.name!r} is a {judge.get_kind_display().lower()} and cannot write answers")
    if not judge.use_as_generator:
        raise JobError(f"model {judge.name!r} is not enabled as a generator (use_as_generator)")
    check_sendable(judge)
    key = candidate_key or judge.name
    if not _KEY.match(key):
        raise JobError(f"candidate key {key!r} must be 1-64 letters, digits or _.:-")
    existing = Candidate.objects.filter(study=study, key=key).first()
    if existing is not None and not GenerationJob.objects.filter(study=study, judge=judge, candidate=existing).exists():
        raise JobError(
            f"study {study.slug!r} already has a candidate {key!r} that {judge.name!r} "
            f"did not write; choose another candidate key"
        )
    if GenerationJob.objects.filter(
        study=study, candidate_key=key, status__in=(*GenerationJob.ACTIVE, GenerationJob.Status.PAUSED)
    ).exists():
        raise JobError(f"a generation job for candidate {key!r} on {study.slug!r} is already under way")
    return key


def _check_params(params: dict[str, Any] | None) -> dict[str, Any]:
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


# --- finish --------------------------------------------------------------------------------


def finish_generation_job(job: GenerationJob) -> GenerationJob:
    """Turn the job's stored answers into Responses of its candidate and extend the pairs.

    Called by the runner when the job completes. Idempotent and transactional: the job
    row is locked, and only DONE generations not yet linked to a Response are written,
    so a second call (or one after a resume retried failures) adds only what is new.
    Failed generations make no response.
    """
    with transaction.atomic():
        job = GenerationJob.objects.select_for_update().select_related("judge", "study").get(pk=job.pk)
        fresh = list(
            job.generations.filter(status=Generation.Status.DONE, response__isnull=True)
            .select_related("instruction")
            .order_by("instruction__index")
        )
        if not fresh:
            return job  # nothing new (a repeat call, or every answer failed: no empty candidate)
        candidate = _candidate(job)
        responses = _responses(job, candidate, fresh)
        pairs = extend_pairs(job, candidate, responses)
        GenerationJob.objects.filter(pk=job.pk).update(
            candidate=candidate,
            responses_created=F("responses_created") + len(responses),
            pairs_created=F("pairs_created") + pairs,
        )
    job.refresh_from_db()
    logger.info("generation job %s: candidate %s, %d responses, %d pairs", job.pk, candidate.key, len(responses), pairs)
    return job


def is_finalised(job: GenerationJob) -> bool:
    """Completed and every stored answer is a Response (finish_generation_job has run)."""
    return (
        job.status == GenerationJob.Status.COMPLETED
        and not job.generations.filter(status=Generation.Status.DONE, response__isnull=True).exists()
    )


def _candidate(job: GenerationJob) -> Candidate:
    # Last in the study's canonical order, so its responses are pairs' ``response_b``.
    last = Candidate.objects.filter(study=job.study).aggregate(m=Max("position"))["m"]
    candidate, _ = Candidate.objects.get_or_create(
        study=job.study,
        key=job.candidate_key,
        defaults={"name": job.judge.name, "position": 0 if last is None else last + 1},
    )
    return candidate


def provenance(job: GenerationJob, row: Generation) -> dict[str, Any]:
    """What a response records about how it was made (shown with the response)."""
    judge = job.judge
    return {
        "model": judge.name,
        "model_id": judge.model,
        "base_url": judge.base_url,
        "params": row.params,
        "prompt_version": job.prompt_version,
        "prompt_hash": row.prompt_hash,
        "messages": row.messages,
        "mode": job.mode,
        "job": job.pk,
        "generated_at": (row.completed_at or timezone.now()).isoformat(),
        "tokens_in": row.tokens_in,
        "tokens_out": row.tokens_out,
        "cached": row.cached,
    }


def _responses(job: GenerationJob, candidate: Candidate, rows: list[Generation]) -> list[Response]:
    taken = dict(Response.objects.filter(candidate=candidate).values_list("instruction_id", "pk"))
    made: list[Response] = []
    for row in rows:
        if row.instruction_id in taken:
            # Answered meanwhile (another job): keep the text judgments may already have seen.
            Generation.objects.filter(pk=row.pk).update(response_id=taken[row.instruction_id])
            continue
        response = Response.objects.create(
            instruction=row.instruction, candidate=candidate, text=row.raw_text, provenance=provenance(job, row)
        )
        Generation.objects.filter(pk=row.pk).update(response=response)
        made.append(response)
    return made


def extend_pairs(job: GenerationJob, candidate: Candidate, responses: list[Response]) -> int:
    """Pairs of the new responses with other candidates' responses to the same instruction.

    Canonical like every importer: ``response_a`` is the candidate earlier in the study's
    order. A sample is seeded by the job's seed over natural keys (instruction index,
    candidate key), so the same seed on the same study picks the same pairs.
    """
    if job.pair_policy == GenerationJob.PairPolicy.NONE or not responses:
        return 0
    others = (
        Response.objects.filter(instruction__in=[r.instruction_id for r in responses])
        .exclude(candidate=candidate)
        .select_related("candidate", "instruction")
    )
    by_instruction: dict[int, list[Response]] = {}
    for other in others:
        by_instruction.setdefault(other.instruction_id, []).append(other)
    options = []
    for mine in responses:
        for other in by_instruction.get(mine.instruction_id, []):
            options.append(((other.instruction.index, other.candidate.key), mine, other))
    options.sort(key=lambda option: option[0])
    if job.pair_policy == GenerationJob.PairPolicy.SAMPLE:
        # A resumed job's later answers only fill what the sample still lacks.
        size = max(0, min((job.pair_sample_size or 0) - job.pairs_created, len(options)))
        options = sorted(random.Random(f"pair-sample:{job.seed}").sample(options, size), key=lambda option: option[0])
    known = set(Pair.objects.filter(instruction__in=by_instruction).values_list("response_a_id", "response_b_id"))
    order = {c.pk: (c.position, c.key) for c in Candidate.objects.filter(study=job.study)}
    new = []
    for _key, mine, other in options:
        a, b = sorted((mine, other), key=lambda r: order[r.candidate_id])
        if (a.pk, b.pk) not in known:
            known.add((a.pk, b.pk))
            new.append(Pair(instruction_id=a.instruction_id, response_a=a, response_b=b))
    Pair.objects.bulk_create(new)
    return len(new)


# --- egocentric --------------------------------------------------------------------------


def own_candidate_key(*, study: Study, judge: Judge) -> str:
    """The study's candidate this registered model wrote (its latest completed generation job),
    else the model's manual ``self_candidate_key``; "" when it has none."""
    key = (
        GenerationJob.objects.filter(
            study=study, judge=judge, status=GenerationJob.Status.COMPLETED, candidate__isnull=False
        )
        .order_by("-finished_at", "-pk")
        .values_list("candidate__key", flat=True)
        .first()
    )
    return key or judge.self_candidate_key
