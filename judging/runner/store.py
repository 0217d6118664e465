"""Counting and storing: every request is counted before it is sent, every answer stored once.

``admit`` runs in the chunk's thread before it hands requests to its HTTP threads: in one
transaction for the whole chunk it bumps ``row.attempts`` and ``job.calls`` and sets
``row.in_flight_usd`` to the estimated cost, only for requests the job may still afford (the
job row is locked when it has a budget, so two processes never both spend the last dollar).
No request waits for a database write on its way out. A request counted but never sent (the
chunk stopped first: pause, cancel, budget) is un-counted by ``unadmit``, so the counts stay
exact; a chunk that crashes leaves its counted rows marked, and their next claimant charges
them as lost (an upper bound: some may never have gone out). ``store`` then writes answers,
failures and deferrals of rows this chunk still holds, and the job's counters with F()
expressions.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Sum
from django.utils import timezone

from judging import llm
from judging.models import CachedCompletion
from judging.runner.claims import IN_FLIGHT_MARK
from judging.runner.work import Request, Result, WorkKind, kind_of
from judging.vocabulary import ModelKind, RowStatus


@dataclass
class Outcome:
    request: Request
    completion: llm.Completion | None = None
    error: str = ""
    retry_at: datetime | None = None  # a transient error: try again from then on
    cached: bool = False
    calls: int = 0  # requests this outcome added (already counted by ``admit`` in sync mode)


def admit(kind: WorkKind, job: Any, asks: list[tuple[Request, Decimal]]) -> tuple[list[Request], list[Request], str]:
    """Count the requests the job may send now.

    Returns (admitted, held, stop): ``held`` requests do not fit the budget while other
    requests are out (whose answers may cost less than estimated: ask again after they are
    stored); ``stop`` is the job's new or current inactive status when the job must stop
    ("budget_exhausted" once a request does not fit with nothing out), else "".
    """
    job_model = type(job)
    stop = ""
    held: list[Request] = []
    with transaction.atomic():
        # Without a budget nothing here needs the job row: pause and cancel are noticed by
        # the chunk between flushes (``_watch``), so the hot path is two statements.
        current = None
        if job.budget_usd is not None:
            current = (
                job_model.objects.select_for_update()
                .only("status", "budget_usd", "cost_usd", "lost_cost_usd")
                .get(pk=job.pk)
            )
            if current.status not in job_model.ACTIVE:
                return [], [], current.status
        admitted = asks
        if current is not None and current.budget_usd is not None:
            out = kind.rows(job).filter(status=RowStatus.PENDING, in_flight_usd__gt=0).aggregate(
                usd=Sum("in_flight_usd")
            )["usd"] or Decimal(0)
            left = current.budget_usd - current.cost_usd - current.lost_cost_usd - out
            admitted = []
            for index, (request, estimate) in enumerate(asks):
                if estimate > left:
                    if out > 0 or admitted:
                        held = [r for r, _ in asks[index:]]
                    else:
                        stop = job_model.Status.BUDGET_EXHAUSTED
                    break
                admitted.append((request, estimate))
                left -= estimate
            if stop:
                job_model.objects.filter(pk=job.pk, status__in=job_model.ACTIVE).update(
                    status=stop, finished_at=timezone.now()
                )
        if admitted:
            _mark_sent(kind, [(r.row.pk, max(e, IN_FLIGHT_MARK)) for r, e in admitted])
            job_model.objects.filter(pk=job.pk).update(calls=F("calls") + len(admitted))
    for request, _ in admitted:
        request.row.attempts += 1
    return [r for r, _ in admitted], held, stop


def unadmit(kind: WorkKind, job: Any, requests: list[Request]) -> None:
    """Un-count requests ``admit`` counted that were never sent, in one transaction."""
    if not requests:
        return
    qn = connection.ops.quote_name
    sql = "UPDATE {} SET {} = {} - 1, {} = 0 WHERE {} = %s".format(
        qn(kind.row_model._meta.db_table), qn("attempts"), qn("attempts"), qn("in_flight_usd"), qn("id")
    )
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.executemany(sql, [[r.row.pk] for r in requests])
        type(job).objects.filter(pk=job.pk).update(calls=F("calls") - len(requests))
    for request in requests:
        request.row.attempts -= 1
        request.row.in_flight_usd = Decimal(0)


def _mark_sent(kind: WorkKind, marks: list[tuple[int, Decimal]]) -> None:
    qn = connection.ops.quote_name
    sql = "UPDATE {} SET {} = {} + 1, {} = %s WHERE {} = %s".format(
        qn(kind.row_model._meta.db_table), qn("attempts"), qn("attempts"), qn("in_flight_usd"), qn("id")
    )
    with connection.cursor() as cursor:
        cursor.executemany(sql, [[str(usd), pk] for pk, usd in marks])


def _write_rows(kind: WorkKind, rows: list[Any]) -> None:
    # One parametrised UPDATE run with executemany (pipelined by psycopg 3): bulk_update's
    # CASE expressions cost ~10 ms of CPU per row, the budget of the whole call.
    if not rows:
        return
    model = kind.row_model
    fields = [model._meta.get_field(name) for name in kind.stored_fields]
    qn = connection.ops.quote_name
    sql = "UPDATE {} SET {} WHERE {} = %s".format(
        qn(model._meta.db_table), ", ".join(f"{qn(f.column)} = %s" for f in fields), qn("id")
    )
    params = [[f.get_db_prep_save(getattr(row, f.attname), connection) for f in fields] + [row.pk] for row in rows]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def _as_stored(usd: Decimal) -> Decimal:
    """A row's cost as its column stores it (6 places, half up as PostgreSQL rounds), so the
    job's total is exactly the sum of its rows however many stores the answers came in."""
    return usd.quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP)


def _apply(kind: WorkKind, job: Any, o: Outcome, now: datetime, *, batch: bool) -> dict[str, Any]:
    """Set the outcome on the row object; returns the job's counter deltas."""
    row = o.request.row
    row.in_flight_usd = Decimal(0)
    row.batch = None
    if o.completion is None and o.retry_at is not None and row.attempts < settings.JUDGING_MAX_ATTEMPTS:
        # Deferred: back to the pool, and no chunk claims it before retry_at.
        row.claim_token, row.claimed_until, row.not_before, row.error = "", None, o.retry_at, o.error[:1000]
        return {}
    row.claim_token, row.claimed_until, row.completed_at, row.not_before = "", None, now, None
    if o.completion is None:
        error = o.error if o.retry_at is None else f"gave up after {row.attempts} attempts: {o.error}"
        row.status, row.error = RowStatus.FAILED, error[:1000]
        return {"failed": 1}
    c = o.completion
    deltas: dict[str, Any] = kind.fill(job, row, o.request, c)
    cost = Decimal(0) if o.cached else _as_stored(job.called_model.price(c.tokens_in, c.tokens_out, batch=batch))
    row.status, row.raw_text, row.error, row.cached = RowStatus.DONE, c.text, "", o.cached
    row.tokens_in, row.tokens_out, row.latency_ms, row.cost_usd = c.tokens_in, c.tokens_out, c.latency_ms, cost
    deltas.update(
        {
            "done": 1,
            "tokens_in": 0 if o.cached else c.tokens_in,
            "tokens_out": 0 if o.cached else c.tokens_out,
            "cost_usd": cost,
            "cached": int(o.cached),
        }
    )
    return deltas


def store(kind: WorkKind, job: Any, outcomes: list[Outcome], *, token: str = "", batch: bool = False) -> int:
    """Store outcomes of rows still held (by ``token``; in batch mode rows out in a batch) and
    bump the job's counters in one transaction; returns rows finished (done or failed).

    SELECT ... FOR UPDATE on the held rows locks them, so a claimant whose lease check races
    with us finds them finished and skips them. Rows already finished are skipped.
    """
    now = timezone.now()
    totals: dict[str, Any] = {}
    rows, new_cache = [], []
    last_error = ""
    with transaction.atomic():
        held = (
            kind.rows(job)
            .select_for_update()
            .filter(pk__in=[o.request.row.pk for o in outcomes], status=RowStatus.PENDING)
        )
        held = held.filter(batch__isnull=False) if batch else held.filter(claim_token=token)
        held_ids = set(held.values_list("pk", flat=True))
        for o in outcomes:
            if o.request.row.pk not in held_ids:
                continue
            if o.calls:  # requests not counted by ``admit`` (batch results)
                o.request.row.attempts += o.calls
                totals["calls"] = totals.get("calls", 0) + o.calls
            for key, value in _apply(kind, job, o, now, batch=batch).items():
                totals[key] = totals.get(key, 0) + value
            last_error = o.error or last_error
            rows.append(o.request.row)
            c = o.completion
            if c is not None and not o.cached and job.called_model.kind != ModelKind.BASELINE:
                new_cache.append(
                    CachedCompletion(
                        key=o.request.cache_key, raw_text=c.text, tokens_in=c.tokens_in, tokens_out=c.tokens_out
                    )
                )
        _write_rows(kind, rows)
        CachedCompletion.objects.bulk_create(new_cache, ignore_conflicts=True)
        if "invalid" in totals and not hasattr(job, "invalid"):
            totals.pop("invalid")
        updates = {k: F(k) + v for k, v in totals.items() if v}
        if last_error:
            updates.update(last_error=last_error[:1000], last_error_at=now)
        type(job).objects.filter(pk=job.pk).update(heartbeat_at=now, **updates)
    return int(totals.get("done", 0)) + int(totals.get("failed", 0))


def store_results(job: Any, results: list[Result], *, batch: bool = False) -> int:
    """Store ``results`` for pending rows of ``job`` (batch: rows whose ``batch`` is set, else
    rows nobody holds a claim on), in one transaction; returns rows stored.

    Each result's ``calls`` are added to ``job.calls`` and ``row.attempts`` here (a batch
    request is counted when its answer arrives); a result without a completion fails its
    row with ``error``. Prices use the batch price when ``batch``. Idempotent: rows already
    finished are skipped.
    """
    kind = kind_of(job)
    by_id = {r.row_id: r for r in results}
    rows = kind.load(job, list(by_id))
    requests = {r.row.pk: r for r in kind.requests(job, rows)} if rows else {}
    outcomes = [
        Outcome(
            requests[row.pk], completion=by_id[row.pk].completion, error=by_id[row.pk].error, calls=by_id[row.pk].calls
        )
        for row in rows
    ]
    return store(kind, job, outcomes, batch=batch)
