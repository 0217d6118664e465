"""Runs one chunk of judgments: claim, call the judge concurrently, store, count.

Concurrency model: a Celery task runs one chunk in its own thread; the HTTP calls of every
chunk in the process go through one thread pool per judge sized ``max_concurrency``, so a
single worker process keeps that many calls in flight (the limit is per worker process,
like Inspect's ``max_connections``). HTTP threads never touch the database; the chunk's
thread parses and stores results in small batches, renews its claim, and watches the job's
gate (paused, cancelled, budget) so that no new call starts once the job must stop.
"""
from __future__ import annotations

import hashlib
import logging
import random
import threading
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from judging import conditions, llm, parsers
from judging.models import CachedCompletion, JudgeJob, Judgment
from judging.prompts import RenderedPrompt

logger = logging.getLogger(__name__)
FLUSH_SECONDS = 0.5
FLUSH_SIZE = 32


def _lease() -> timedelta:
    return timedelta(seconds=settings.JUDGING_LEASE_SECONDS)


class Gate:
    """Process-local 'may this job spend more?' shared by the HTTP threads of its chunks."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open = True
        self.remaining: Decimal | None = None

    def update(self, job: JudgeJob) -> None:
        with self.lock:
            self.remaining = job.budget_left()
            self.open = job.status in JudgeJob.ACTIVE and (
                self.remaining is None or self.remaining > 0
            )

    def spend(self, cost: Decimal) -> None:
        # Close at once when this process alone has spent the rest of the budget,
        # instead of waiting for the next flush to notice.
        with self.lock:
            if self.remaining is not None:
                self.remaining -= cost
                if self.remaining <= 0:
                    self.open = False


class RateLimiter:
    """Spaces request starts to ``rpm`` per minute (per process, like Celery's rate_limit)."""

    def __init__(self, rpm: int) -> None:
        self.interval = 60.0 / rpm if rpm else 0.0
        self.next_at = 0.0
        self.lock = threading.Lock()

    def acquire(self) -> None:
        if not self.interval:
            return
        with self.lock:
            now = time.monotonic()
            start = max(now, self.next_at)
            self.next_at = start + self.interval
        if start > now:
            time.sleep(start - now)


_registry_lock = threading.Lock()
_gates: dict[int, Gate] = {}
_pools: dict[tuple[int, int], ThreadPoolExecutor] = {}
_limiters: dict[tuple[int, int], RateLimiter] = {}


def _gate(job_id: int) -> Gate:
    with _registry_lock:
        return _gates.setdefault(job_id, Gate())


def _pool(judge: llm.JudgeSnapshot) -> ThreadPoolExecutor:
    key = (judge.id, judge.max_concurrency)
    with _registry_lock:
        if key not in _pools:
            _pools[key] = ThreadPoolExecutor(judge.max_concurrency, thread_name_prefix=f"judge{judge.id}")
        return _pools[key]


def _limiter(judge: llm.JudgeSnapshot) -> RateLimiter:
    key = (judge.id, judge.requests_per_minute)
    with _registry_lock:
        return _limiters.setdefault(key, RateLimiter(judge.requests_per_minute))


@dataclass
class Item:
    judgment: Judgment
    prompt: RenderedPrompt
    cache_key: str
    texts: tuple[str, str]


@dataclass
class Outcome:
    item: Item
    completion: llm.Completion | None = None
    error: str = ""
    skipped: bool = False
    calls: int = 0
    cached: bool = False


def _backoff(attempt: int) -> float:
    base, cap = settings.JUDGING_BACKOFF_BASE, settings.JUDGING_BACKOFF_CAP
    return min(cap, base * 2**attempt) * random.uniform(0.5, 1.0)  # full jitter would starve


def _call(judge: llm.JudgeSnapshot, item: Item, gate: Gate, seed: int) -> Outcome:
    """Runs in an HTTP thread: retries transient errors, never touches the database."""
    outcome = Outcome(item)
    j = item.judgment
    seed_parts = (seed, j.pair_id, j.condition, j.presentation)
    for attempt in range(settings.JUDGING_MAX_ATTEMPTS):
        if not gate.open:
            outcome.skipped = True
            return outcome
        if judge.kind != "baseline":
            _limiter(judge).acquire()
            outcome.calls += 1
        try:
            outcome.completion = llm.complete(judge, item.prompt.messages, seed_parts=seed_parts,
                                              labels=item.prompt.answer_labels, texts=item.texts)
        except llm.PermanentError as exc:
            outcome.error = str(exc)
            return outcome
        except llm.TransientError as exc:
            outcome.error = str(exc)
            delay = exc.retry_after if exc.retry_after is not None else _backoff(attempt)
            delay = min(delay, settings.JUDGING_BACKOFF_CAP)
            deadline = time.monotonic() + delay
            while time.monotonic() < deadline and gate.open:  # a pause cuts the wait short
                time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
            continue
        gate.spend(judge.price(outcome.completion.tokens_in, outcome.completion.tokens_out))
        outcome.error = ""
        return outcome
    outcome.error = f"gave up after {settings.JUDGING_MAX_ATTEMPTS} attempts: {outcome.error}"
    return outcome


def claim(job: JudgeJob, judgment_ids: list[int], token: str) -> int:
    """Conditional UPDATE: only pending rows nobody holds (or whose holder's lease ran out)."""
    now = timezone.now()
    return (
        Judgment.objects.filter(job_id=job.pk, pk__in=judgment_ids, status=Judgment.Status.PENDING)
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
        .update(claim_token=token, claimed_until=now + _lease())
    )


def _items(job: JudgeJob, token: str) -> list[Item]:
    rows = Judgment.objects.filter(claim_token=token, status=Judgment.Status.PENDING).select_related(
        "pair__instruction", "pair__response_a__candidate", "pair__response_b__candidate"
    )
    identity = job.judge.cache_identity()
    items = []
    for row in rows:
        prompt = conditions.render_for(version=job.prompt_version, condition=row.condition,
                                       pair=row.pair, slot1_response_id=row.slot1_response_id,
                                       cue=row.cue)
        a, b = row.pair.response_a, row.pair.response_b
        texts = (a.text, b.text) if row.slot1_response_id == a.pk else (b.text, a.text)
        cache_key = llm_cache_key(identity, prompt.hash)
        items.append(Item(row, prompt, cache_key, texts))
    return items


def llm_cache_key(judge_identity: str, prompt_hash: str) -> str:
    return hashlib.sha256(f"{judge_identity}:{prompt_hash}".encode()).hexdigest()


def _from_cache(job: JudgeJob, items: list[Item]) -> tuple[list[Outcome], list[Item]]:
    # Baselines are free and seeded per judgment, so they are never cached.
    if job.judge.kind == "baseline":
        return [], items
    hits = {c.key: c for c in CachedCompletion.objects.filter(key__in=[i.cache_key for i in items])}
    cached = [Outcome(i, llm.Completion(hits[i.cache_key].raw_text, hits[i.cache_key].tokens_in,
                                        hits[i.cache_key].tokens_out, 0), cached=True)
              for i in items if i.cache_key in hits]
    return cached, [i for i in items if i.cache_key not in hits]


def run_chunk(*, job_id: int, judgment_ids: list[int]) -> int:
    """Judge the still-pending judgments among ``judgment_ids``; returns how many were stored.

    Idempotent: rows already DONE, or claimed by a live chunk elsewhere, are skipped, so
    redelivered or duplicate messages never call the judge for a stored judgment.
    """
    job = JudgeJob.objects.select_related("judge").filter(pk=job_id).first()
    if job is None or job.status not in JudgeJob.ACTIVE:
        return 0
    token = uuid.uuid4().hex
    if not claim(job, judgment_ids, token):
        maybe_complete(job)
        return 0
    stored = 0
    try:
        stored = _run_claimed(job, token)
    finally:
        # Whatever we did not store (pause, cancel, budget, crash) goes back to the pool.
        Judgment.objects.filter(claim_token=token, status=Judgment.Status.PENDING).update(
            claim_token="", claimed_until=None
        )
    maybe_complete(job)
    return stored


def _run_claimed(job: JudgeJob, token: str) -> int:
    gate = _gate(job.pk)
    gate.update(job)
    judge = llm.JudgeSnapshot.of(job.judge)
    items = _items(job, token)
    outcomes, misses = _from_cache(job, items)
    # Identical prompts in this chunk: call once, answer the twins from that call.
    leaders: dict[str, Item] = {}
    twins: list[Item] = []
    for item in misses:
        (twins.append(item) if item.cache_key in leaders and judge.kind != "baseline"
         else leaders.setdefault(item.cache_key, item))
    pool = _pool(judge)
    futures: set[Future] = {pool.submit(_call, judge, item, gate, job.seed) for item in leaders.values()}
    by_key: dict[str, Outcome] = {}
    stored = 0
    last_flush = last_renew = time.monotonic()
    while futures:
        finished, futures = wait(futures, timeout=FLUSH_SECONDS, return_when=FIRST_COMPLETED)
        for f in finished:
            outcome = f.result()
            outcomes.append(outcome)
            by_key[outcome.item.cache_key] = outcome
        now = time.monotonic()
        if len(outcomes) >= FLUSH_SIZE or (outcomes and now - last_flush >= FLUSH_SECONDS):
            stored += store(job, token, outcomes, gate)
            outcomes, last_flush = [], now
        elif now - last_flush >= FLUSH_SECONDS:
            _refresh_gate(job, gate)
            last_flush = now
        if now - last_renew >= settings.JUDGING_LEASE_SECONDS / 3:
            # Heartbeat: a slow but live chunk keeps its rows; a dead one loses them.
            Judgment.objects.filter(claim_token=token, status=Judgment.Status.PENDING).update(
                claimed_until=timezone.now() + _lease()
            )
            last_renew = now
    for twin in twins:
        leader = by_key[twin.cache_key]
        if leader.completion is not None:
            outcomes.append(Outcome(twin, leader.completion, cached=True))
        elif not leader.skipped:
            outcomes.append(Outcome(twin, error=leader.error))
    if outcomes:
        stored += store(job, token, outcomes, gate)
    return stored


def _refresh_gate(job: JudgeJob, gate: Gate) -> None:
    job.refresh_from_db(fields=["status", "cost_usd", "budget_usd"])
    if job.status in JudgeJob.ACTIVE and job.budget_usd is not None and job.cost_usd >= job.budget_usd:
        job.transition(JudgeJob.ACTIVE, JudgeJob.Status.BUDGET_EXHAUSTED,
                        finished_at=timezone.now())
        logger.info("job %s stopped: budget of %s USD reached", job.pk, job.budget_usd)
    gate.update(job)


STORED_FIELDS = ("status", "raw_text", "choice", "valid", "chosen_response", "tokens_in", "tokens_out",
                 "latency_ms", "cost_usd", "cached", "error", "claim_token", "claimed_until",
                 "completed_at", "prompt_hash", "attempts")


def _fill(job: JudgeJob, o: Outcome, now: object) -> dict[str, object]:
    """Set the result on the row object; returns its counter deltas."""
    j = o.item.judgment
    j.claim_token, j.claimed_until, j.completed_at = "", None, now
    j.attempts += o.calls  # HTTP requests for this row, retries included
    j.prompt_hash = o.item.prompt.hash
    if o.completion is None:
        j.status, j.error = Judgment.Status.FAILED, o.error[:1000]
        return {"failed": 1}
    c = o.completion
    choice = parsers.parse(job.parser, c.text, labels=o.item.prompt.answer_labels,
                           echo_strings=o.item.prompt.echo_strings)
    other = j.pair.response_b_id if j.slot1_response_id == j.pair.response_a_id else j.pair.response_a_id
    cost = Decimal(0) if o.cached else job.judge.price(c.tokens_in, c.tokens_out)
    j.status, j.raw_text, j.choice, j.valid = Judgment.Status.DONE, c.text, choice or "", choice is not None
    j.chosen_response_id = (j.slot1_response_id if choice == "first" else other) if choice else None
    j.tokens_in, j.tokens_out, j.latency_ms, j.cost_usd = c.tokens_in, c.tokens_out, c.latency_ms, cost
    j.cached, j.error = o.cached, ""
    return {"done": 1, "invalid": int(choice is None), "tokens_in": 0 if o.cached else c.tokens_in,
            "tokens_out": 0 if o.cached else c.tokens_out, "cost_usd": cost, "cached": int(o.cached)}


def _write_rows(rows: list[Judgment]) -> None:
    # One parametrised UPDATE run with executemany (pipelined by psycopg 3): bulk_update's
    # CASE expressions cost ~10 ms of CPU per row, the budget of the whole judgment.
    if not rows:
        return
    fields = [Judgment._meta.get_field(name) for name in STORED_FIELDS]
    qn = connection.ops.quote_name
    sql = "UPDATE {} SET {} WHERE {} = %s".format(
        qn(Judgment._meta.db_table), ", ".join(f"{qn(f.column)} = %s" for f in fields), qn("id"))
    params = [[f.get_db_prep_save(getattr(row, f.attname), connection) for f in fields] + [row.pk]
              for row in rows]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def store(job: JudgeJob, token: str, outcomes: list[Outcome], gate: Gate) -> int:
    """Store a batch of outcomes and bump the job's counters (F() expressions) in one transaction.

    Only rows we still hold are written: SELECT ... FOR UPDATE on (our token, PENDING) locks
    them, so a claimant whose lease check races with us finds them DONE and skips them.
    """
    now = timezone.now()
    totals: dict[str, object] = {"calls": sum(o.calls for o in outcomes)}
    new_cache, rows = [], []
    with transaction.atomic():
        ids = [o.item.judgment.pk for o in outcomes if not o.skipped]
        held = set(Judgment.objects.select_for_update().filter(
            pk__in=ids, claim_token=token, status=Judgment.Status.PENDING).values_list("pk", flat=True))
        for o in outcomes:
            if o.skipped or o.item.judgment.pk not in held:
                continue
            for key, value in _fill(job, o, now).items():
                totals[key] = totals.get(key, 0) + value
            rows.append(o.item.judgment)
            if o.completion and not o.cached and job.judge.kind != "baseline":
                c = o.completion
                new_cache.append(CachedCompletion(key=o.item.cache_key, raw_text=c.text,
                                                  tokens_in=c.tokens_in, tokens_out=c.tokens_out))
        _write_rows(rows)
        CachedCompletion.objects.bulk_create(new_cache, ignore_conflicts=True)
        updates = {k: F(k) + v for k, v in totals.items() if v}
        JudgeJob.objects.filter(pk=job.pk).update(heartbeat_at=now, **updates)
    _refresh_gate(job, gate)
    return int(totals.get("done", 0)) + int(totals.get("failed", 0))


def maybe_complete(job: JudgeJob) -> bool:
    """RUNNING -> COMPLETED once nothing is pending. Safe to call from every chunk.

    A budget stop that came with the very last call is a completion too.
    """
    if Judgment.objects.filter(job_id=job.pk, status=Judgment.Status.PENDING).exists():
        return False
    return job.transition((JudgeJob.Status.RUNNING, JudgeJob.Status.BUDGET_EXHAUSTED),
                          JudgeJob.Status.COMPLETED,
                           finished_at=timezone.now())
