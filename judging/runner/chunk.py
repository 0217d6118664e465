"""One chunk of rows: claim, answer from the cache, call concurrently, count, store, release.

Concurrency model: a Celery task runs one chunk in its own thread; the HTTP calls of every
chunk of a model in the process go through one thread pool per model (``max_concurrency``
threads), further limited by the model's adaptive concurrency (halved on 429s) and its
shared token buckets (RPM/TPM across every process). At most JUDGING_CHUNKS_PER_MODEL chunks
of one model run at once in a process; a chunk beyond that goes back to the queue with a
countdown instead of waiting, so one model never takes every worker slot. HTTP threads never
touch the database: the chunk's thread counts its requests (in one write) before handing
them over, stores results in small batches, un-counts requests a stop kept from going out,
renews its claim and notices pause, cancel and budget.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils import timezone

from judging import llm
from judging.runner import claims, dispatch, limits, store
from judging.runner.calls import Answered, Crashed, Report, attempt
from judging.runner.store import Outcome
from judging.runner.work import Request, WorkKind, estimate_cost, kind_of
from judging.vocabulary import ModelKind, RowStatus

logger = logging.getLogger(__name__)
FLUSH_SECONDS = 0.5
FLUSH_SIZE = 32
# How long one task keeps claiming more rows of its job: its turn (CONTINUE_SECONDS), after
# which it makes way once another job of the same model is refused a slot here, and at most
# CONTINUE_MAX_SECONDS in any case (well inside the task's soft time limit and the broker's
# visibility timeout). Ending a turn re-sends the job's rest as messages, which costs CPU the
# calls need, so an uncontended job is not cut into turns.
CONTINUE_SECONDS = 30.0
CONTINUE_MAX_SECONDS = 600.0
# Two chunks of a job look for its next rows alike, so one may find them all just taken: it
# looks again rather than ending (an end re-sends the job's rest, see CONTINUE_SECONDS).
CLAIM_TRIES = 3

MoreRows = Callable[[int], list[int]]  # claims up to n more of the job's rows; their ids


def chunks_per_model() -> int:
    """JUDGING_CHUNKS_PER_MODEL, default 2: with the model's pool shared by its chunks, two
    keep ``max_concurrency`` calls in flight between chunks."""
    return settings.JUDGING_CHUNKS_PER_MODEL


def busy_countdown() -> float:
    """Seconds before a chunk refused for its model's cap is offered again (jittered)."""
    return settings.JUDGING_BUSY_COUNTDOWN * random.uniform(1.0, 2.0)


_pools_lock = threading.Lock()
_pools: dict[tuple[int, int], ThreadPoolExecutor] = {}


def _pool(judge: llm.ModelSnapshot) -> ThreadPoolExecutor:
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
        called_id = work.job_model.objects.filter(pk=job_id).values_list(work.model_field, flat=True).first()
        if called_id is None:
            return 0
        model_id = _model_of.setdefault(key, called_id)
    slot = limits.chunk_slots.take(model_id, chunks_per_model(), key)
    if slot == limits.ChunkSlots.LEFT:
        # A chunk of the same job runs here: it claims these rows itself (_run_holding_slot),
        # and the job's last chunk to leave re-sends what is still pending, so re-sending now
        # would only churn the queue, at a cost of ~15% of the throughput.
        return 0
    if slot == limits.ChunkSlots.FULL:
        # At the model's cap with other jobs: offered again after a countdown (a paused,
        # cancelled or finished job's message is dropped: resume enqueues what is left).
        if work.job_model.objects.filter(pk=job_id, status__in=work.job_model.ACTIVE).exists():
            dispatch.send(work.name, job_id, [ids], countdown=busy_countdown())
        return 0
    resend = False
    try:
        job = work.job_model.objects.select_related(work.model_field).filter(pk=job_id).first()
        if job is None or job.status not in work.job_model.ACTIVE:
            return 0
        stored, resend = _run_holding_slot(work, job, ids, model_id)
        return stored
    finally:
        # Re-sent only once the slot is free: from then on a message of this job takes a slot
        # itself, so none is left to a chunk that has already looked for the last time.
        if limits.chunk_slots.give_back(model_id, key) or resend:
            _resend(work, job_id)


def _resend(work: WorkKind, job_id: int) -> None:
    """The job's claimable rows back on the queue, behind other jobs' work (if it still runs)."""
    job = work.job_model.objects.filter(pk=job_id, status__in=work.job_model.ACTIVE).first()
    if job is not None:
        dispatch.enqueue_sync(job)


def _run_holding_slot(work: WorkKind, job: Any, ids: list[int], model_id: int) -> tuple[int, bool]:
    """Claim ``ids`` and keep the model's pool fed from the job's next claimable rows until
    none is left, the job stops or its turn is over (CONTINUE_SECONDS). Returns the rows
    stored, and whether what is left should go back to the queue (``run_chunk`` sends it)."""
    token = uuid.uuid4().hex
    started = time.monotonic()
    turn_over = False

    def more_rows(n: int) -> list[int]:
        # Holding one of the model's chunk slots, the chunk claims the job's next rows itself
        # instead of waiting for their messages (which may sit in a countdown after being
        # refused by the cap), and before its last calls are back, so the pool never drains
        # between claims. Bounded in time when other jobs of the same model wait for the slot.
        nonlocal turn_over
        turn_over = turn_over or _turn_over(model_id, started)
        if turn_over:
            return []
        for _ in range(CLAIM_TRIES):
            next_ids = _next_rows(work, job, n)
            if not next_ids:
                return []
            if claims.claim(work, job, next_ids, token):
                return next_ids
        return []

    stored = 0
    deferred: list[int] = []
    if claims.claim(work, job, ids, token):
        try:
            stored, deferred = _run_claimed(work, job, token, ids, more_rows)
        finally:
            claims.release(work, job, token)
    # Only the rows this chunk deferred: a long turn touches thousands of rows, and one IN list
    # of all of them was the largest CPU cost in a profile of the worker (py-spy, --gil).
    dispatch.schedule_deferred(work, job, deferred)
    dispatch.maybe_complete(job)
    # What is left goes back to the queue: after our turn, and also after a normal end, for
    # claimable rows no message is on its way for (released by a stopped chunk elsewhere).
    return stored, turn_over or bool(_next_rows(work, job, settings.JUDGING_CHUNK_SIZE))


def _turn_over(model_id: int, started: float) -> bool:
    """Past CONTINUE_SECONDS while another job of the model waits here, or past the maximum."""
    held = time.monotonic() - started
    if held > CONTINUE_MAX_SECONDS:
        return True
    return held > CONTINUE_SECONDS and limits.chunk_slots.wanted_since(model_id, started)


_model_of: dict[tuple[str, int], int] = {}  # a job never changes its model


def _next_rows(work: WorkKind, job: Any, size: int) -> list[int]:
    rows = claims.claimable(work.rows(job), timezone.now()).order_by("prompt_hash", "pk")
    keyed = list(rows.values_list("pk", "prompt_hash")[: size + 20])
    ids = [pk for pk, _ in keyed[:size]]
    for pk, prompt_hash in keyed[size:]:  # never split identical prompts (see dispatch.chunked)
        if prompt_hash != keyed[size - 1][1]:
            break
        ids.append(pk)
    return ids


def _run_claimed(work: WorkKind, job: Any, token: str, ids: list[int], more_rows: MoreRows) -> tuple[int, list[int]]:
    """Answer the rows this chunk holds (``token``), and those ``more_rows`` claims while
    calls are out: from the cache, then by calling. Returns the rows stored, and the ids of
    those a transient error deferred (``store`` puts them back with a ``not_before``)."""
    judge = llm.ModelSnapshot.of(job.called_model)
    baseline = judge.kind == ModelKind.BASELINE
    calls = _Calls(work, job, token, judge)
    try:
        calls.take(_plan(work, job, token, ids, baseline=baseline))
        calls.collect(lambda n: _plan(work, job, token, more_rows(n), baseline=baseline))
    finally:
        calls.stop_sending()
    calls.answer_twins()
    calls.flush()
    return calls.stored, calls.deferred


@dataclass
class _Plan:
    """What a claimed chunk needs: answers the cache has, requests to send, and the twins
    (identical requests in the chunk) answered from their leader's call."""

    from_cache: list[Outcome]
    leaders: list[Request]
    twins: list[Request]

    @property
    def empty(self) -> bool:
        return not (self.from_cache or self.leaders or self.twins)


def _plan(work: WorkKind, job: Any, token: str, ids: list[int], *, baseline: bool) -> _Plan:
    """The plan for those of ``ids`` this chunk holds and that are still pending."""
    if not ids:
        return _Plan([], [], [])
    held = work.rows(job).filter(pk__in=ids, claim_token=token, status=RowStatus.PENDING).values_list("pk", flat=True)
    requests = work.requests(job, work.load(job, list(held)))
    if baseline:  # baselines are free and seeded per row: never cached, never shared
        return _Plan([], requests, [])
    hits = claims.cached([r.cache_key for r in requests])
    from_cache = [
        Outcome(r, llm.Completion(hit.raw_text, hit.tokens_in, hit.tokens_out, 0), cached=True)
        for r in requests
        if (hit := hits.get(r.cache_key)) is not None
    ]
    leaders: dict[str, Request] = {}
    twins = []
    for r in requests:
        if r.cache_key in hits:
            continue
        if r.cache_key in leaders:
            twins.append(r)
        else:
            leaders[r.cache_key] = r
    return _Plan(from_cache, list(leaders.values()), twins)


class _Calls:
    """The chunk thread's side of its calls: counts requests before handing them to the
    model's HTTP threads, collects their reports, stores answers in small batches,
    un-counts what was never sent, keeps the claim alive and notices pause, cancel and
    budget between flushes."""

    def __init__(self, work: WorkKind, job: Any, token: str, judge: llm.ModelSnapshot) -> None:
        self.work, self.job, self.token, self.judge = work, job, token, judge
        self.free = judge.kind == ModelKind.BASELINE  # answered locally: nothing to count
        self.limits = (
            None
            if self.free
            else limits.for_model(judge.id, judge.max_concurrency, judge.requests_per_minute, judge.tokens_per_minute)
        )
        self.inbox: queue.Queue[Report] = queue.Queue()
        self.stop = threading.Event()
        self.out = 0  # requests handed to HTTP threads that have not reported yet
        self.held: list[Request] = []  # wait for the budget until requests out are stored
        self.outcomes: list[Outcome] = []  # not stored yet
        self.unsent: list[Request] = []  # counted but never sent: not un-counted yet
        self.by_key: dict[str, Outcome] = {}  # what each leader's call brought
        self.twins: list[Request] = []  # answered from their leader's call at the end
        self.stored = 0
        self.deferred: list[int] = []  # rows whose outcome was a transient error (a retry later)

    def take(self, plan: _Plan) -> None:
        """The cache's answers wait for the next flush; the leaders go out now."""
        self.outcomes += plan.from_cache
        self.twins += plan.twins
        self.send(plan.leaders)

    def send(self, requests: list[Request]) -> None:
        """Count ``requests`` (those the budget allows now; the rest are held) and hand
        them to the HTTP threads."""
        self.held = []
        if self.stop.is_set() or not requests:
            return
        admitted = requests
        if not self.free:
            asks = [(r, estimate_cost(self.job.called_model, r)) for r in requests]
            admitted, self.held, why = store.admit(self.work, self.job, asks)
            if why:
                self.stop_sending()
                logger.info("job %s: no new calls (%s)", self.job.pk, why)
        pool = _pool(self.judge)
        for r in admitted:
            pool.submit(attempt, self.judge, self.limits, r, self.inbox, self.stop)
        self.out += len(admitted)

    def collect(self, more: Callable[[int], _Plan]) -> None:
        """Until every request handed out has reported and none is held for the budget.

        Once half of the chunk's calls are back, ``more`` plans up to a chunk's worth of
        the job's next rows, so the chunk's thread claims and counts them while the other
        half is still out: never more than JUDGING_CHUNK_SIZE requests are counted and not
        yet back, as for a single claim (the over-count bound of docs/judging-runtime.md).
        """
        size = settings.JUDGING_CHUNK_SIZE
        last_flush = last_renew = time.monotonic()
        rows_left = True
        while True:
            if rows_left and self.out <= size // 2 and not self.held and not self.stop.is_set():
                plan = more(size - self.out)
                rows_left = not plan.empty
                self.take(plan)
            elif not (self.out or (self.held and not self.stop.is_set())):
                break
            # Nothing out and nothing held: only answers from the cache came in, so look again now.
            reports = _drain(self.inbox, timeout=FLUSH_SECONDS if self.out or self.held else 0)
            for report in reports:
                self._report(report)
            now = time.monotonic()
            if len(self.outcomes) >= FLUSH_SIZE or now - last_flush >= FLUSH_SECONDS:
                stored = self.flush()
                _watch(self.job, self.stop)
                last_flush = now
                # Held requests ask again once answers are stored (they may cost less than
                # estimated), or when nothing happened here (other chunks may have stored).
                if self.held and (stored or not reports):
                    self.send(self.held)
            if now - last_renew >= settings.JUDGING_LEASE_SECONDS / 3:
                # Heartbeat: a slow but live chunk keeps its rows; a dead one loses them.
                claims.renew(self.work, self.job, self.token)
                last_renew = now

    def _report(self, report: Report) -> None:
        if isinstance(report, Crashed):
            raise report.error
        self.out -= 1
        if isinstance(report, Answered):
            self.outcomes.append(report.outcome)
            self.by_key[report.outcome.request.cache_key] = report.outcome
        elif not self.free:
            self.unsent.append(report.request)

    def stop_sending(self) -> None:
        """Nothing more goes out: HTTP threads not yet sending report ``NotSent``."""
        self.stop.set()
        self.held = []

    def answer_twins(self) -> None:
        for twin in self.twins:
            leader = self.by_key.get(twin.cache_key)
            if leader is None:
                continue  # the leader was never sent: the twin stays pending
            if leader.completion is not None:
                self.outcomes.append(Outcome(twin, leader.completion, cached=True))
            else:
                self.outcomes.append(Outcome(twin, error=leader.error, retry_at=leader.retry_at))

    def flush(self) -> int:
        """Store the outcomes collected and un-count the requests not sent; returns rows stored."""
        stored = 0
        if self.outcomes:
            self.deferred += [o.request.row.pk for o in self.outcomes if o.completion is None and o.retry_at]
            stored = store.store(self.work, self.job, self.outcomes, token=self.token)
            self.outcomes = []
            self.stored += stored
        if self.unsent:
            store.unadmit(self.work, self.job, self.unsent)
            self.unsent = []
        return stored


def _drain(inbox: queue.Queue[Report], timeout: float) -> list[Report]:
    reports = []
    try:
        reports.append(inbox.get(timeout=timeout) if timeout else inbox.get_nowait())
        while True:
            reports.append(inbox.get_nowait())
    except queue.Empty:
        pass
    return reports


def _watch(job: Any, stop: threading.Event) -> None:
    """Pause, cancel or a budget stop noticed between calls: no new request starts."""
    status = type(job).objects.filter(pk=job.pk).values_list("status", flat=True).first()
    if status not in type(job).ACTIVE:
        stop.set()
