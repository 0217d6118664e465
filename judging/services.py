"""Judge-job workflows: create judges, start/pause/resume/cancel jobs, sweep stale work."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from datetime import timedelta
from decimal import Decimal
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotations.models import Instruction, Pair, Response, Study
from annotations.services.rewrites import missing_rewrites_message, rewrites_for, showable
from judging import conditions, enqueue, generation_params, parsers, prompts
from judging.batch import driver
from judging.generate.finish import own_candidate_key
from judging.models import GenerationJob, JudgeJob, Judgment, LLMJob, RegisteredModel
from judging.runner import enqueue_sync, kind_of, maybe_complete
from judging.runner.dispatch import chunked
from judging.vocabulary import Parser, RowStatus

logger = logging.getLogger(__name__)
BASELINES = tuple(RegisteredModel.Baseline.values)


class JobError(ValueError):
    """Bad input for a job; nothing was changed."""


class ModelRefused(JobError):
    """The model may not send requests (an ungranted server key, generation settings outside
    the allowlist): the API answers 422 naming its model field, as the model form does."""


# --- judges ---------------------------------------------------------------------------


def ensure_baseline_judge(*, name: str) -> RegisteredModel:
    """The built-in baseline judge called ``name`` (longer, first-slot, last-slot, random)."""
    if name not in BASELINES:
        raise JobError(f"unknown baseline {name!r}; use {', '.join(BASELINES)}")
    judge, _ = RegisteredModel.objects.get_or_create(
        name=name,
        defaults={
            "kind": RegisteredModel.Kind.BASELINE,
            "baseline": name,
            "max_concurrency": 4,
            "requests_per_minute": 0,
        },
    )
    return judge


def create_judge(
    *,
    name: str,
    base_url: str = "",
    model: str = "",
    api_key_env: str = "",
    api_key: str = "",
    baseline: str = "",
    generation: dict[str, Any] | None = None,
    max_concurrency: int = 8,
    requests_per_minute: int = 600,
    price_in_per_1k: Decimal = Decimal(0),
    price_out_per_1k: Decimal = Decimal(0),
    self_candidate_key: str = "",
    request_timeout: float = 60.0,
    transport: str = RegisteredModel.Transport.OPENAI,
    owner: Any = None,
) -> RegisteredModel:
    """Create an endpoint judge (or a baseline). JobError on bad input or a taken name.

    ValidationError when the key variable lacks JUDGE_KEY_ENV_PREFIX or is not granted to
    ``owner`` (judging.models.grants), when JUDGE_ALLOWED_HOSTS refuses ``base_url`` or when
    ``generation`` holds a parameter outside judging.generation_params. Without ``owner``
    the judge is public (like the baselines).
    """
    if RegisteredModel.objects.filter(name=name).exists():
        raise JobError(RegisteredModel.NAME_NOT_AVAILABLE)
    if baseline:
        return RegisteredModel.objects.create(
            name=name, kind=RegisteredModel.Kind.BASELINE, baseline=_check_baseline(baseline), requests_per_minute=0
        )
    if not base_url or not model:
        raise JobError("an endpoint judge needs --base-url and --model")
    if max_concurrency < 1:
        raise JobError("max concurrency must be at least 1")
    judge = RegisteredModel(
        name=name,
        kind=RegisteredModel.Kind.OPENAI,
        base_url=base_url,
        model=model,
        api_key_env=api_key_env,
        generation=generation or {},
        max_concurrency=max_concurrency,
        requests_per_minute=requests_per_minute,
        price_in_per_1k=price_in_per_1k,
        price_out_per_1k=price_out_per_1k,
        self_candidate_key=self_candidate_key,
        request_timeout=request_timeout,
        transport=transport,
        owner=owner,
    )
    judge.set_api_key(api_key)
    judge.full_clean()
    judge.save()
    return judge


def _check_baseline(baseline: str) -> str:
    if baseline not in BASELINES:
        raise JobError(f"unknown baseline {baseline!r}; use {', '.join(BASELINES)}")
    return baseline


DEMO_JUDGE = "simulated-judge"
# Hosts a demo judge may be moved between: the simulator mounted in a local `make run`.
_LOCAL_SIMULATOR_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})


def local_simulator_url(*, host: str, port: int) -> str:
    """The simulator of the server `make run` serves on ``host:port`` (a wildcard bind is called on loopback)."""
    host = "127.0.0.1" if host in ("", "0.0.0.0", "::") else host
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}/sim/v1"


def is_local_simulator_url(url: str) -> bool:
    parts = urlsplit(url)
    return (
        parts.scheme == "http"
        and parts.hostname in _LOCAL_SIMULATOR_HOSTS
        and parts.path.rstrip("/").endswith("/sim/v1")
    )


def point_demo_judge_at(*, base_url: str) -> bool:
    """Move the demo's simulated judge to ``base_url`` (the simulator on the port actually served).

    Only the demo judge itself: the public (unowned) judge called DEMO_JUDGE whose model is a
    ``sim:`` string and whose URL is a local simulator already, so a researcher's judge (or a
    demo judge someone pointed at a real endpoint) is never touched. True when it moved.
    """
    judge = RegisteredModel.objects.filter(
        name=DEMO_JUDGE, owner__isnull=True, kind=RegisteredModel.Kind.OPENAI, model__startswith="sim:"
    ).first()
    if (
        judge is None
        or judge.base_url == base_url
        or not (is_local_simulator_url(base_url) and is_local_simulator_url(judge.base_url))
    ):
        return False
    # Conditional on the URL read: an edit made meanwhile (in the judge form) wins.
    moved = RegisteredModel.objects.filter(pk=judge.pk, base_url=judge.base_url).update(base_url=base_url)
    if moved:
        logger.info("demo judge %s now calls %s", DEMO_JUDGE, base_url)
    return bool(moved)


def ensure_demo_judges() -> list[RegisteredModel]:
    """The demo's simulated judge (at settings.SIMULATOR_BASE_URL) plus the four baselines."""
    sim, _ = RegisteredModel.objects.update_or_create(
        name=DEMO_JUDGE,
        defaults={
            "kind": RegisteredModel.Kind.OPENAI,
            "base_url": settings.SIMULATOR_BASE_URL,
            "model": "sim:order_first=0.3,bandwagon=0.5,distractor=0.2,length=0.2,invalid=0.03,cot=0.5,latency_ms=50,seed=1",
            "max_concurrency": 8,
            "requests_per_minute": 6000,
            "price_in_per_1k": Decimal("0.0005"),
            "price_out_per_1k": Decimal("0.0015"),
            "request_timeout": 30.0,
        },
    )
    return [sim, *(ensure_baseline_judge(name=b) for b in BASELINES)]


# --- jobs --------------------------------------------------------------------------------


def pairs_for(*, study: Study, pair_set: str) -> list[Pair]:
    """The pairs of ``pair_set``, in pk order, with their instruction and responses (and the
    responses' candidates) loaded once each and shared by every pair that holds them: a
    15-candidate study has 14 pairs per response, and building a copy per pair took most of
    a 10,000-call job's planning (0.4 of 0.6 s), before its first request could go out."""
    qs = Pair.objects.filter(instruction__study=study)
    if pair_set == JudgeJob.PairSet.HUMAN:
        qs = qs.filter(tasks__kind="pairwise", tasks__batch__study=study).distinct()
    elif pair_set != JudgeJob.PairSet.ALL:
        raise JobError(f"unknown pair set {pair_set!r}; use all or human")
    pairs = list(qs.order_by("pk"))
    instructions = Instruction.objects.in_bulk({p.instruction_id for p in pairs})
    responses = Response.objects.select_related("candidate").in_bulk(
        {p.response_a_id for p in pairs} | {p.response_b_id for p in pairs}
    )
    for pair in pairs:
        pair.instruction = instructions[pair.instruction_id]
        pair.response_a = responses[pair.response_a_id]
        pair.response_b = responses[pair.response_b_id]
    return pairs


def start_judge_job(
    *,
    study: Study,
    judge: RegisteredModel,
    condition_names: list[str],
    pair_set: str = "all",
    budget_usd: Decimal | None = None,
    bandwagon_percent: int | None = None,
    parser: str = Parser.ROBUST,
    prompt_version: str | None = None,
    seed: int = 0,
    created_by: Any = None,
    mode: str = JudgeJob.Mode.SYNC,
) -> JudgeJob:
    """Create the job with one Judgment row per call and enqueue it in chunks.

    ``mode="batch"`` sends the rows through the Batch API instead (judging.batch).

    A judge with a prompt template (Arena-Hard's, MT-Bench's, a researcher's) is asked with it
    and its answers read with the template's verdict format; ``prompt_version`` (a CoBBLEr prompt
    version, default ``v1``) is then left out, or names that template.

    Raises JobError (nothing written) on bad input: unknown condition, parser, prompt
    version or pair set, an imported judge, no pairs, a negative budget, a condition the
    judge's template cannot host.
    """
    planned = plan_judge_job(
        study=study,
        judge=judge,
        condition_names=condition_names,
        pair_set=pair_set,
        budget_usd=budget_usd,
        bandwagon_percent=bandwagon_percent,
        parser=parser,
        prompt_version=prompt_version,
        seed=seed,
        created_by=created_by,
        mode=mode,
    )
    job, pairs, names = planned.job, planned.pairs, planned.names
    # Inside a caller's transaction nothing is visible before the end anyway: start RUNNING.
    streaming = not transaction.get_connection().in_atomic_block
    job.status = JudgeJob.Status.QUEUED if streaming else JudgeJob.Status.RUNNING
    job.started_at = job.heartbeat_at = timezone.now()
    job.save(force_insert=True)
    # Rows are written and enqueued in committed batches, so workers start on the first
    # batch while later ones are still being planned (a 10k-call job would otherwise wait
    # seconds). QUEUED keeps the job from completing before its last batch exists.
    for rows in _plan_batches(job, pairs, names):
        with transaction.atomic():
            Judgment.objects.bulk_create(rows)
            keyed = [(row.pk, row.prompt_hash) for row in rows]
            if mode == JudgeJob.Mode.SYNC:
                enqueue.work_chunks("judge", job.pk, chunked(keyed))  # sent when this batch commits
    transaction.on_commit(lambda: _finish_queueing(job))
    if mode == JudgeJob.Mode.BATCH:  # one submission once every row exists
        enqueue.batch_submission("judge", job.pk)
    logger.info("job %s: %s judgments for judge %s on %s", job.pk, job.total, judge.name, study.slug)
    return job


class JudgeJobPlan(NamedTuple):
    """A judge job as start_judge_job would create it, before anything is written: the job
    (unsaved), its pairs and its normalised conditions. judging.estimates prices it."""

    job: JudgeJob
    pairs: list[Pair]
    names: list[str]


def plan_judge_job(
    *,
    study: Study,
    judge: RegisteredModel,
    condition_names: list[str],
    pair_set: str = "all",
    budget_usd: Decimal | None = None,
    bandwagon_percent: int | None = None,
    parser: str = Parser.ROBUST,
    prompt_version: str | None = None,
    seed: int = 0,
    created_by: Any = None,
    mode: str = JudgeJob.Mode.SYNC,
) -> JudgeJobPlan:
    """Validate a judge job's input and build its job, unsaved (writes nothing).

    The same checks and the same JobError as start_judge_job, which saves what this returns;
    the estimate before launch (judging.estimates) prices it without saving.
    """
    template = judge.template()
    names = _validate(
        judge=judge,
        condition_names=condition_names,
        parser=parser,
        prompt_version=prompt_version,
        budget_usd=budget_usd,
    )
    prompt_version = template.version if template else prompt_version or prompts.DEFAULT_VERSION
    if template is not None:
        refusals = [r for r in (template.refusal(name) for name in names) if r]
        if refusals:
            raise JobError(refusals[0])
    percent = study.bandwagon_percent if bandwagon_percent is None else bandwagon_percent
    if not 0 <= percent <= 100:
        raise JobError("bandwagon percent must be between 0 and 100")
    pairs = pairs_for(study=study, pair_set=pair_set)
    if not pairs:
        raise JobError(f"study {study.slug!r} has no pairs in pair set {pair_set!r}")
    if mode not in JudgeJob.Mode.values:
        raise JobError(f"unknown mode {mode!r}; use {' or '.join(JudgeJob.Mode.values)}")
    total = 0
    for name in names:
        # A model-made perturbation shows only the pairs whose two answers both have a rewrite.
        rewrites = rewrites_for(name, pairs)
        shown = sum(showable(p, rewrites) for p in pairs)
        if not shown:
            raise JobError(missing_rewrites_message(name, study.slug))
        total += len(conditions.PRESENTATIONS.get(name, (1, 2))) * shown
    job = JudgeJob(
        study=study,
        judge=judge,
        conditions=names,
        pair_set=pair_set,
        parser=parser,
        prompt_version=prompt_version,
        own_template=judge.own_template,
        template_hash=template.hash if template else prompts.version_hash(prompt_version),
        verdict_format=template.verdict_format if template else judge.verdict_format,
        verdict_spec=dict(template.verdict_spec or {}) if template else {},
        bandwagon_percent=percent,
        seed=seed,
        budget_usd=budget_usd,
        created_by=created_by,
        self_candidate_key=_self_key(study, judge),
        mode=mode,
        total=total,
    )
    return JudgeJobPlan(job, pairs, names)


def _self_key(study: Study, judge: RegisteredModel) -> str:
    # Egocentric bias without a manual --self-candidate: the answers this model generated.
    return own_candidate_key(study=study, model=judge)


def _finish_queueing(job: LLMJob) -> None:
    if job.transition((job.Status.QUEUED,), job.Status.RUNNING):
        maybe_complete(job)  # every chunk may have finished before the last batch was in


def _validate(
    *,
    judge: RegisteredModel,
    condition_names: list[str],
    parser: str,
    prompt_version: str | None,
    budget_usd: Decimal | None,
) -> list[str]:
    if judge.kind == RegisteredModel.Kind.IMPORTED:
        raise JobError(f"judge {judge.name!r} holds imported results and cannot be called")
    check_sendable(judge)
    if parser not in parsers.PARSERS:
        raise JobError(f"unknown parser {parser!r}; use {', '.join(parsers.PARSERS)}")
    template = judge.template()
    if template is not None:
        if prompt_version and prompt_version != template.version:
            raise JobError(
                f"judge {judge.name!r} is asked with its prompt template {template.version!r}; "
                f"leave the prompt version out (it names a CoBBLEr prompt, {prompt_version!r})"
            )
    elif prompt_version is not None and prompt_version not in prompts.available_versions():
        raise JobError(f"unknown prompt version {prompt_version!r}")
    if budget_usd is not None and budget_usd < 0:
        raise JobError("the budget cannot be negative")
    try:
        return conditions.normalise(condition_names)
    except ValueError as exc:
        raise JobError(str(exc)) from None


def check_sendable(judge: RegisteredModel) -> None:
    """ModelRefused unless ``judge`` may send requests: its owner holds a grant for its server
    key variable, and its generation settings are allow-listed (both checked again per request)."""
    refusal = judge.key_refusal()
    if refusal:
        raise ModelRefused(refusal)
    try:
        generation_params.check(judge.generation)
    except generation_params.GenerationParamError as exc:
        raise ModelRefused(f"model {judge.name!r}: {exc}") from None


def _plan_batches(
    job: JudgeJob, pairs: list[Pair], names: list[str], first: int = 100, largest: int = 1000
) -> Iterator[list[Judgment]]:
    """Judgment rows, with their prompt hashes, in batches that never split a pair (twin
    prompts stay together). The first batch is small, so the workers start within a few
    milliseconds; each next one doubles, up to ``largest``, which keeps the writes few."""
    rows: list[Judgment] = []
    size = first
    template = job.template()
    for pair_rows in judgments_per_pair(job, pairs, names):
        if len(rows) >= size:
            yield rows
            rows, size = [], min(2 * size, largest)
        for row in pair_rows:
            row.prompt_hash = conditions.render_for(
                version=job.prompt_version,
                condition=row.condition,
                pair=row.pair,
                slot1_response_id=row.slot1_response_id,
                cue=row.cue,
                template=template,
            ).hash
        rows.extend(pair_rows)
    if rows:
        yield rows


def judgments_per_pair(
    job: JudgeJob, pairs: list[Pair], names: list[str], *, only: set[int] | None = None
) -> Iterator[list[Judgment]]:
    """Each pair's unsaved Judgment rows (prompts not rendered yet): what start_judge_job
    writes and what judging.estimates prices, planned once. ``only`` (pair ids) keeps the
    rows of a sample of the pairs, planned as for the whole job."""
    # Which response prompt 1 of the order/compassion runs shows first: seeded, balanced.
    a_first = conditions.a_first_plan(pairs, seed=job.seed, version=job.prompt_version)
    template = job.template()
    rewrites = {name: rewrites_for(name, pairs) for name in names}
    for pair in pairs if only is None else [p for p in pairs if p.pk in only]:
        yield [
            Judgment(
                job=job,
                pair=pair,
                condition=condition,
                presentation=spec["presentation"],
                slot1_response=spec["slot1_response"],
                cue=spec["cue"],
                template_version=job.prompt_version,
                template_hash=job.template_hash,
            )
            for condition in names
            for spec in conditions.plan(
                pair=pair,
                condition=condition,
                seed=job.seed,
                version=job.prompt_version,
                bandwagon_percent=job.bandwagon_percent,
                self_key=job.self_candidate_key,
                a_first=a_first[pair.pk],
                template=template,
                rewrites=rewrites[condition],
            )
        ]


def enqueue_pending(*, job: LLMJob) -> int:
    """Send the job's pending rows on (any job type): a batch-mode job's to the Batch API
    driver, else its unclaimed, un-deferred, non-batched rows as synchronous chunks; returns
    chunks (or batch submissions) sent.

    Safe to repeat: a duplicate message finds its rows claimed or done and does nothing.
    """
    if job.mode == LLMJob.Mode.BATCH:
        return driver.submit(job)
    return enqueue_sync(job)


def pause_job(*, job: LLMJob) -> bool:
    """Stop starting calls; in-flight calls finish and are stored. Idempotent."""
    return job.pause()


def cancel_job(*, job: LLMJob) -> bool:
    """Stop the job; its pending rows stay pending so it can be resumed. Idempotent."""
    return job.cancel()


def resume_job(*, job: LLMJob, budget_usd: Decimal | None = None) -> bool:
    """Run again (a judge or a generation job): failed rows are retried, pending ones
    re-enqueued.

    ``budget_usd`` raises the budget of a job stopped by it. Returns False when the job
    is already running or completed with nothing left to do.
    """
    job_model, rows = type(job), kind_of(job).rows(job)
    if budget_usd is not None:
        if budget_usd < 0:
            raise JobError("the budget cannot be negative")
        job_model._default_manager.filter(pk=job.pk).update(budget_usd=budget_usd)  # its ``objects``
        job.refresh_from_db()
    with transaction.atomic():
        retried = rows.filter(status=RowStatus.FAILED).update(
            status=RowStatus.PENDING,
            error="",
            claim_token="",
            claimed_until=None,
            not_before=None,
        )
        if retried:
            job_model._default_manager.filter(pk=job.pk).update(failed=F("failed") - retried)
        job.refresh_from_db()
        if job.status == job_model.Status.COMPLETED and retried:
            job.transition((job_model.Status.COMPLETED,), job_model.Status.RUNNING, finished_at=None)
        elif not job.mark_running():
            return False
        transaction.on_commit(lambda: enqueue_pending(job=job))
    return True


# What the job pages' buttons call, by the name in their URL (an unknown name is a 404 there).
JOB_ACTIONS: dict[str, Callable[..., bool]] = {"pause": pause_job, "resume": resume_job, "cancel": cancel_job}


def requeue_stale_work(*, stale_after: timedelta) -> int:
    """Periodic sweeper: re-enqueue pending work of running jobs (judge and generation) that
    stopped moving.

    Covers messages lost with a killed worker (the filesystem broker drops them; Redis
    gives them back only after its visibility timeout). Returns the number of chunks sent.
    """
    cutoff = timezone.now() - stale_after
    chunks = 0
    for job_model in (JudgeJob, GenerationJob):
        for job in job_model.objects.filter(status=job_model.Status.RUNNING, heartbeat_at__lt=cutoff):
            sent = enqueue_pending(job=job)
            if sent:
                job_model.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now())
                logger.info("job %s: re-enqueued %d stale chunks", job.pk, sent)
            else:
                maybe_complete(job)
            chunks += sent
    return chunks
