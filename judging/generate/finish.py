"""What a completed generation job leaves in its study: its answers become Responses of the
model's candidate, with new pairs (``finish_generation_job``), and which candidate a model
wrote (``own_candidate_key``, the egocentric condition's self).

Below the runner and the services: the runner finishes a generation job here when it
completes it, and judge-job planning asks here for a model's own candidate, so this module
imports neither.
"""

from __future__ import annotations

import logging
import random

from django.db import transaction
from django.db.models import F, Max

from annotations.models import Candidate, Pair, Response, Study
from judging.generate.provenance import provenance
from judging.generate.rewrite_output import finish_rewrite_job
from judging.models import Generation, GenerationJob, RegisteredModel

logger = logging.getLogger(__name__)


def finish_generation_job(job: GenerationJob) -> GenerationJob:
    """Turn the job's stored answers into Responses of its candidate and extend the pairs.

    Called by the runner when the job completes. Idempotent and transactional: the job
    row is locked, and only DONE generations not yet linked to a Response are written,
    so a second call (or one after a resume retried failures) adds only what is new.
    Failed generations make no response. A rewrite job's answers become rewrites instead
    (``judging.generate.rewrite_output``).
    """
    if job.rewrite_kind:
        return finish_rewrite_job(job)
    with transaction.atomic():
        job = GenerationJob.objects.select_for_update().select_related("generator", "study").get(pk=job.pk)
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


def _candidate(job: GenerationJob) -> Candidate:
    # Last in the study's canonical order, so its responses are pairs' ``response_b``.
    last = Candidate.objects.filter(study=job.study).aggregate(m=Max("position"))["m"]
    candidate, _ = Candidate.objects.get_or_create(
        study=job.study,
        key=job.candidate_key,
        defaults={"name": job.generator.name, "position": 0 if last is None else last + 1},
    )
    return candidate


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


def own_candidate_key(*, study: Study, model: RegisteredModel) -> str:
    """The study's candidate this registered model wrote (its latest completed generation job),
    else the model's manual ``self_candidate_key``; "" when it has none."""
    key = (
        GenerationJob.objects.filter(
            study=study, generator=model, status=GenerationJob.Status.COMPLETED, candidate__isnull=False
        )
        .order_by("-finished_at", "-pk")
        .values_list("candidate__key", flat=True)
        .first()
    )
    return key or model.self_candidate_key
