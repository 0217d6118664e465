"""One chunk of rows: claim, answer from the cache, call concurrently, count, store, release.

Concurrency model: a Celery task runs one chunk in its own thread; the HTTP calls of every
chunk of a model in the process go through one thread pool per model (``max_concurrency``
threads), further limited by the model's adaptive concurrency (halved on 429s) and its
shared token buckets (RPM/TPM across every process). At most JUDGING_CHUNKS_PER_MODEL chunks
of one model run at once in a process; a chunk beyond that goes back to the queue with a
countdown instead of waiting, so one model never takes every worker slot. HTTP threads never
touch the database: the chunk's thread counts each request before it is sent, stores
results in small batches, renews its claim and notices pause, cancel and budget.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.utils import timezone

from judging import llm
from judging.runner import claims, dispatch, limits, store
from judging.runner.calls import attempt
from judging.runner.store import Outcome
from judging.runner.work import WorkKind, estimate_cost, kind_of
from judging.vocabulary import JudgeKind, RowStatus

logger = logging.getLogger(__name__)
FLUSH_SECONDS = 0.5
FLUSH_SIZE = 32
CONTINUE_SECONDS = 30.0  # how long one task keeps claiming more rows of its job


def chunks_per_model() -> int:
    """JUDGING_CHUNKS_PER_MODEL, default 2: with the model's pool shared by its chunks, two
    keep ``max_concurrency`` calls in flight between chunks."""
    return settings.JUDGING_CHUNKS_PER_MODEL


def busy_countdown() -> float:
    """Seconds before a chunk refused for its model's cap is offered again (jittered)."""
    return settings.JUDGING_BUSY_COUNTDOWN * random.uniform(1.0, 2.0)


_pools_lock = threading.Lock()
_pools: dict[tuple[int, int], ThreadPoolExecutor] = {}


def _pool(judge: llm.JudgeSnapshot) -> ThreadPoolExecutor:
    key = (judge.id, judge.max_concurrency)
    with _pools_lock:
        if key not in _pools:
            _pools[key] = ThreadPoolExecutor(judge.max_concurrency, thread_name_prefix=f"model{judge.id}")
        return _pools[key]


def run_chunk(
    kind: str = "judge",
    job_id: int | None = None,
    row_ids: list[int] | None = None,
    *,
    judgment_ids: list[int] | None = None,
) -> int:
    """Answer the still-pending rows among ``row_ids``; returns how many were stored.

    Idempotent: rows already finished, claimed by a live chunk elsewhere, deferred or out in
    a batch are skipped, so redelivered or duplicate messages never call twice for a row.
    """
    work = kind_of(kind)
    if job_id is None:  # an old-style message without its job: no such job, nothing to answer
        return 0
    ids = list(row_ids if row_ids is not None else judgment_ids or [])
    key = (work.name, job_id)
    model_id = _model_of.get(key)
    if model_id is None:  # the first chunk of this job here: one query, then cached
        judge_id = work.job_model.objects.filter(pk=job_id).values_list("judge_id", flat=True).first()
        if judge_id is None:
            return 0
        model_id = _model_of.setdefault(key, judge_id)
    if not limits.chunk_slots.try_take(model_id, chunks_per_model(), key):
        # At the model's cap. A chunk of the same job running here claims these rows itself
        # (_run_holding_slot) and re-enqueues what is left when its time is up, so the
        # message is dropped: re-sending it would only churn the queue, at a cost of ~15% of
        # the throughput. Otherwise it is offered again after a countdown (a paused,
        # cancelled or finished job's message is dropped: resume enqueues what is left).
        if limits.chunk_slots.runs_job(key):
            return 0
        if work.job_model.objects.filter(pk=job_id, status__in=work.job_model.ACTIVE).exists():
            dispatch.send(work.name, job_id, [ids], countdown=busy_countdown())
        return 0
    try:
        job = work.job_model.objects.select_related("judge").filter(pk=job_id).first()
        if job is None or job.status not in work.job_model.ACTIVE:
            return 0
        return _run_holding_slot(work, job, ids)
    finally:
        limits.chunk_slots.give_back(model_id, key)


def _run_holding_slot(work: WorkKind, job: Any, ids: list[int]) -> int:
    stored = 0
    touched = list(ids)
    deadline = time.monotonic() + CONTINUE_SECONDS
    out_of_time = False
    while True:
        token = uuid.uuid4().hex
        if not claims.claim(work, job, ids, token):
            break
        try:
            stored += _run_claimed(work, job, token)
        finally:
            claims.release(work, job, token)
        # Holding one of the model's chunk slots, carry on with the job's next claimable
        # rows instead of waiting for their messages (which may sit in a countdown after
        # being refused by the cap): the model's pool stays full. Bounded in time, so
        # other jobs of the same model get the slot in turn.
        if not _still_active(job):
            break
        if time.monotonic() > deadline:
            out_of_time = True
            break
        ids = _next_rows(work, job)
        touched += ids
    dispatch.schedule_deferred(work, job, touched)
    # What is left goes back to the queue, behind other jobs' work: after our time is up, and
    # also after a normal end, for rows whose messages reached this process while we held the
    # slot (dropped by run_chunk) but that became claimable only after our last look.
    if _still_active(job) and (out_of_time or _next_rows(work, job)):
        dispatch.enqueue_sync(job)
    dispatch.maybe_complete(job)
    return stored


_model_of: dict[tuple[str, int], int] = {}  # a job never changes its model


def _still_active(job: Any) -> bool:
    return type(job).objects.filter(pk=job.pk, status__in=type(job).ACTIVE).exists()


def _next_rows(work: WorkKind, job: Any) -> list[int]:
    size = settings.JUDGING_CHUNK_SIZE
    rows = claims.claimable(work.rows(job), timezone.now()).order_by("prompt_hash", "pk")
    keyed = list(rows.values_list("pk", "prompt_hash")[: size + 20])
    ids = [pk for pk, _ in keyed[:size]]
    for pk, prompt_hash in keyed[size:]:  # never split identical prompts (see dispatch.chunked)
        if prompt_hash != keyed[size - 1][1]:
            break
        ids.append(pk)
    return ids


def _run_claimed(work: WorkKind, job: Any, token: str) -> int:
    judge = llm.JudgeSnapshot.of(job.judge)
    rows = work.load(
        job, list(work.rows(job).filter(claim_token=token, status=RowStatus.PENDING).values_list("pk", flat=True))
    )
    requests = work.requests(job, rows)
    baseline = judge.kind == JudgeKind.BASELINE
    outcomes: list[Outcome] = []
    misses = requests
    if not baseline:  # baselines are free and seeded per row, so never cached
        hits = claims.cached([r.cache_key for r in requests])
        outcomes = [
            Outcome(
                r,
                llm.Completion(
                    hits[r.cache_key].raw_text, hits[r.cache_key].tokens_in, hits[r.cache_key].tokens_out, 0
                ),
                cached=True,
            )
            for r in requests
            if r.cache_key in hits
        ]
        misses = [r for r in requests if r.cache_key not in hits]
    # Identical requests in this chunk: call once, answer the twins from that call.
    leaders: dict[str, Any] = {}
    twins = []
    for r in misses:
        (twins.append(r) if r.cache_key in leaders and not baseline else leaders.setdefault(r.cache_key, r))
    model_limits = (
        None
        if baseline
        else limits.for_model(judge.id, judge.max_concurrency, judge.requests_per_minute, judge.tokens_per_minute)
    )
    inbox: queue.Queue = queue.Queue()
    stop = threading.Event()
    pool = _pool(judge)
    for r in leaders.values():
        pool.submit(attempt, judge, model_limits, r, estimate_cost(job.judge, r), inbox, stop)
    waiting = len(leaders)
    by_key: dict[str, Outcome | None] = {}
    stored = 0
    last_flush = last_renew = time.monotonic()
    held: list[Any] = []  # asks waiting for the budget until the requests out are stored
    stored_since = False
    try:
        while waiting:
            messages = _drain(inbox, timeout=FLUSH_SECONDS)
            asks = [m[1] for m in messages if m[0] == "ask"]
            if asks or (held and (stored_since or not messages)):
                held = _answer(work, job, held + asks, stop)
            stored_since = False
            for tag, value in messages:
                if tag == "crash":
                    raise value
                if tag in ("done", "skip"):
                    waiting -= 1
                    if tag == "done":
                        outcomes.append(value)
                        by_key[value.request.cache_key] = value
                    else:
                        by_key[value.cache_key] = None
            now = time.monotonic()
            if len(outcomes) >= FLUSH_SIZE or (now - last_flush >= FLUSH_SECONDS):
                if outcomes:
                    stored += store.store(work, job, outcomes, token=token)
                    outcomes, stored_since = [], True
                _watch(job, stop)
                last_flush = now
            if now - last_renew >= settings.JUDGING_LEASE_SECONDS / 3:
                # Heartbeat: a slow but live chunk keeps its rows; a dead one loses them.
                claims.renew(work, job, token)
                last_renew = now
    finally:
        stop.set()
        for ticket in held + [v for tag, v in _drain(inbox, timeout=0) if tag == "ask"]:
            ticket.answered.set()  # refused: nothing is sent after we stopped
    for twin in twins:
        leader = by_key.get(twin.cache_key)
        if leader is None:
            continue  # the leader was never sent: the twin stays pending
        if leader.completion is not None:
            outcomes.append(Outcome(twin, leader.completion, cached=True))
        else:
            outcomes.append(Outcome(twin, error=leader.error, retry_at=leader.retry_at))
    if outcomes:
        stored += store.store(work, job, outcomes, token=token)
    return stored


def _drain(inbox: queue.Queue, timeout: float) -> list[tuple[str, Any]]:
    messages = []
    try:
        messages.append(inbox.get(timeout=timeout) if timeout else inbox.get_nowait())
        while True:
            messages.append(inbox.get_nowait())
    except queue.Empty:
        pass
    return messages


def _answer(work: WorkKind, job: Any, asks: list[Any], stop: threading.Event) -> list[Any]:
    """Count the requests about to be sent, then let exactly those go; returns the asks
    held back for the budget until the requests already out are stored."""
    admitted: list[Any] = []
    held: list[Any] = []
    try:
        if not stop.is_set():
            admitted, held, why = store.admit(work, job, [(t.request, t.estimate) for t in asks])
            if why:
                stop.set()
                logger.info("job %s: no new calls (%s)", job.pk, why)
    finally:
        ok, wait = {id(r) for r in admitted}, {id(r) for r in held}
        for t in asks:
            if id(t.request) not in wait or stop.is_set():
                t.allowed = id(t.request) in ok
                t.answered.set()
    return [t for t in asks if id(t.request) in wait and not stop.is_set()]


def _watch(job: Any, stop: threading.Event) -> None:
    """Pause, cancel or a budget stop noticed between calls: no new request starts."""
    status = type(job).objects.filter(pk=job.pk).values_list("status", flat=True).first()
    if status not in type(job).ACTIVE:
        stop.set()
