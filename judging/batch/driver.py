"""Batch mode for any job: submit its pending rows as Batch API files, collect the results.

A row is out in a batch while ``row.batch`` points at a ``BatchRun``; ``submit`` only takes
pending rows with no batch and no live claim, so a row is never in two batches, nor in a
batch and a synchronous chunk at once. Everything a poller needs is in the database (the
provider's batch and file ids on the BatchRun, the rows pointing at it), so any worker can
poll any batch after a restart. Collecting is one transaction: the results are stored
(``store_results(..., batch=True)``, idempotent) and the failures (error file lines, non-200
answers, rows missing from the output, a batch that failed or expired) leave the batch and
go to synchronous calls (``enqueue_sync``), all or nothing.

Calls are counted when the batch is created, before anything is sent: one per request line,
on the job and on the row that carried it. Identical prompts (same cache key) share one line;
the others take its answer from the cache through a synchronous chunk, free, as twins do in
synchronous mode.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, Sum
from django.utils import timezone

from judging import enqueue, generation_params, llm
from judging.batch import client
from judging.models import BatchRun, CachedCompletion, GenerationJob, RegisteredModel
from judging.runner import Request, Result, enqueue_sync, kind_of, maybe_complete, store_results
from judging.runner.work import estimate_cost
from judging.vocabulary import RowStatus

logger = logging.getLogger(__name__)
State = BatchRun.State


def _job_ref(job: Any) -> dict[str, Any]:
    return {"generation_job": job} if isinstance(job, GenerationJob) else {"judge_job": job}


def runs_of(job: Any):  # a QuerySet of BatchRun
    return BatchRun.objects.filter(**_job_ref(job))


def can_batch(model: RegisteredModel) -> bool:
    """Only endpoint models speak the Batch API (baselines answer locally).

    A model whose key or generation settings would be refused goes to synchronous calls
    instead, where ``judging.llm.complete`` fails each row with the reason (nothing is sent).
    """
    if model.kind != RegisteredModel.Kind.OPENAI or model.key_refusal():
        return False
    try:
        generation_params.check(model.generation)
    except generation_params.GenerationParamError:
        return False
    return True


def custom_id(kind_name: str, row_pk: int) -> str:
    return f"{kind_name}-{row_pk}"


@dataclass
class Line:
    """One request line of a batch file and the rows its answer is for (identical prompts)."""

    request: Request
    rows: list[int]

    @property
    def carrier(self) -> int:
        return self.rows[0]


def plan_lines(requests: Iterable[Request]) -> list[Line]:
    """One line per cache key: identical prompts to the same model are asked once."""
    by_key: dict[str, Line] = {}
    for request in sorted(requests, key=lambda r: r.row.pk):
        line = by_key.get(request.cache_key)
        if line is None:
            by_key[request.cache_key] = Line(request, [request.row.pk])
        else:
            line.rows.append(request.row.pk)
    return list(by_key.values())


def _body(model: RegisteredModel, request: Request) -> dict[str, Any]:
    return {"model": model.model, "messages": request.messages, **request.body}


# --- submit ----------------------------------------------------------------------------------


def submit(job: Any) -> int:
    """Queue a submission of the job's free pending rows (what ``enqueue_pending`` calls in
    batch mode); returns 1 when one was queued, 0 when there is nothing to submit.

    The uploads happen in the ``submit_batch`` task, never in the caller (a web request,
    the sweeper).
    """
    job.refresh_from_db()
    if job.status not in job.ACTIVE:
        return 0
    if not _free_rows(job).exists():
        # Resumed after its last batch was collected (while paused, say): nothing will
        # finish it but this.
        maybe_complete(job)
        return 0
    enqueue.batch_submission(kind_of(job).name, job.pk)
    return 1


def submit_now(job: Any) -> BatchRun | None:
    """Send every free pending row of ``job`` out in batches; returns the last BatchRun made.

    Rows answered by the cache, and every row when the model cannot batch, go to synchronous
    calls instead. Nothing is submitted for a job that is not running (a pause stops new
    submissions; batches already out keep going and are still collected).
    """
    job.refresh_from_db()
    if job.status not in job.ACTIVE:
        return None
    if not can_batch(job.called_model):
        ids = list(_free_rows(job).values_list("pk", flat=True))
        if ids:
            enqueue_sync(job, ids)
        return None
    synced: set[int]
    last, synced = None, set()
    while True:
        run, cached = _submit_one(job, exclude=synced)
        synced |= cached
        if run is None and not cached:
            return last
        if run is not None:
            last = run
            if run.state == State.FAILED:
                return last  # the provider refused the batch: its rows went to synchronous calls


def _free_rows(job: Any):  # a QuerySet of rows
    kind = kind_of(job)
    now = timezone.now()
    return (
        kind.rows(job)
        .filter(status=RowStatus.PENDING, batch__isnull=True)
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
        .order_by("pk")
    )


def _submit_one(job: Any, exclude: set[int]) -> tuple[BatchRun | None, set[int]]:
    """One batch of free rows; also returns the rows sent to synchronous calls (cache hits)."""
    kind = kind_of(job)
    model = job.called_model
    with transaction.atomic():
        # Taking the rows is its own short transaction, so no two submitters take the same row.
        ids = list(
            _free_rows(job)
            .exclude(pk__in=exclude)
            .select_for_update(skip_locked=True)
            .values_list("pk", flat=True)[: settings.BATCH_MAX_REQUESTS]
        )
        if not ids:
            return None, set()
        requests = kind.requests(job, kind.load(job, ids))
        cached = set(
            CachedCompletion.objects.filter(key__in={r.cache_key for r in requests}).values_list("key", flat=True)
        )
        lines: list[tuple[Line, bytes]]
        lines, size, to_sync = [], 0, [r.row.pk for r in requests if r.cache_key in cached]
        for line in plan_lines(r for r in requests if r.cache_key not in cached):
            encoded = (
                json.dumps(
                    client.request_line(custom_id(kind.name, line.carrier), _body(model, line.request)),
                    ensure_ascii=False,
                ).encode()
                + b"\n"
            )
            if lines and size + len(encoded) > settings.BATCH_MAX_BYTES:
                break  # the rest waits for the next batch
            lines.append((line, encoded))
            size += len(encoded)
        if to_sync:  # answered from the cache by a synchronous chunk, at no cost
            transaction.on_commit(lambda: enqueue_sync(job, to_sync))
        estimates = [estimate_cost(model, line.request, batch=True) for line, _ in lines]
        if lines and job.budget_usd is not None:
            lines, estimates = _affordable(job, lines, estimates)
        if not lines:
            return None, set(to_sync)
        run = BatchRun.objects.create(state=State.PREPARING, request_count=len(lines), **_job_ref(job))
        row_ids = [pk for line, _ in lines for pk in line.rows]
        kind.rows(job).filter(pk__in=row_ids).update(batch=run)
        if job.budget_usd is not None:  # what the budget gate counts as spent until the answer is in
            for (line, _), estimate in zip(lines, estimates, strict=True):
                kind.rows(job).filter(pk=line.carrier).update(in_flight_usd=estimate)
    return _send(job, run, b"".join(encoded for _, encoded in lines), [line for line, _ in lines]), set(to_sync)


def _affordable(job: Any, lines: list, estimates: list[Decimal]) -> tuple[list, list[Decimal]]:
    """The lines the budget still pays for; none left stops the job (BUDGET_EXHAUSTED)."""
    job_model = type(job)
    current = job_model.objects.select_for_update().get(pk=job.pk)
    out = kind_of(job).rows(job).filter(status=RowStatus.PENDING, in_flight_usd__gt=0).aggregate(
        usd=Sum("in_flight_usd")
    )["usd"] or Decimal(0)
    left = current.budget_left() - out
    taken = 0
    while taken < len(lines) and estimates[taken] <= left:
        left -= estimates[taken]
        taken += 1
    if taken == 0:
        job_model.objects.filter(pk=job.pk, status__in=job_model.ACTIVE).update(
            status=job_model.Status.BUDGET_EXHAUSTED, finished_at=timezone.now()
        )
    return lines[:taken], estimates[:taken]


def _uncount(job: Any, carriers: list[int]) -> None:
    """Lines the provider never answered (nor failed) were no calls after all."""
    if carriers:
        type(job).objects.filter(pk=job.pk).update(calls=F("calls") - len(carriers))
        kind_of(job).rows(job).filter(pk__in=carriers, attempts__gt=0).update(attempts=F("attempts") - 1)


def _send(job: Any, run: BatchRun, content: bytes, lines: list[Line]) -> BatchRun:
    kind = kind_of(job)
    snapshot = llm.ModelSnapshot.of(job.called_model)
    # Counted before anything is sent: a worker dying mid-upload still leaves them counted.
    type(job).objects.filter(pk=job.pk).update(calls=F("calls") + len(lines))
    kind.rows(job).filter(pk__in=[line.carrier for line in lines]).update(attempts=F("attempts") + 1)
    try:
        file_id = client.upload(snapshot, content, f"{kind.name}-job{job.pk}-batch{run.pk}.jsonl")
        BatchRun.objects.filter(pk=run.pk).update(input_file_id=file_id)
        status = client.create(snapshot, file_id, {"job": f"{kind.name}-{job.pk}", "batch_run": str(run.pk)})
    except (llm.TransientError, llm.PermanentError) as exc:
        # The provider would not take the batch (no Batch API, a bad key, down): nothing was
        # answered, so the calls are not counted (``fail``) and every row goes to synchronous calls.
        type(job).objects.filter(pk=job.pk).update(last_error=str(exc), last_error_at=timezone.now())
        fail(job, run, f"batch not created: {exc}")
        run.refresh_from_db()
        return run
    BatchRun.objects.filter(pk=run.pk).update(
        state=State.SUBMITTED,
        provider_batch_id=status.id,
        provider_status=status.status,
        submitted_at=timezone.now(),
        last_polled_at=timezone.now(),
    )
    run.refresh_from_db()
    logger.info("job %s: batch %s submitted (%d requests) as %s", job.pk, run.pk, len(lines), status.id)
    enqueue.batch_poll_chain(run.pk)
    return run


def fail(job: Any, run: BatchRun, error: str) -> None:
    """A batch that will never answer: its rows leave it and go to synchronous calls, and its
    lines (counted when it was made) are no calls."""
    with transaction.atomic():
        if (
            BatchRun.objects.filter(pk=run.pk, state__in=(State.PREPARING, State.SUBMITTED)).update(state=State.FAILED)
            == 0
        ):
            return  # collected or failed already
        kind = kind_of(job)
        rows = kind.load(
            job, list(kind.rows(job).filter(batch=run, status=RowStatus.PENDING).values_list("pk", flat=True))
        )
        _uncount(job, [line.carrier for line in plan_lines(kind.requests(job, rows))] if rows else [])
        ids = _release(job, run, None)
        BatchRun.objects.filter(pk=run.pk).update(state=State.FAILED, error=error[:2000], collected_at=timezone.now())
    logger.warning("job %s: batch %s failed (%s); %d rows go to synchronous calls", job.pk, run.pk, error, len(ids))


def _release(job: Any, run: BatchRun, only: set[int] | None) -> list[int]:
    """Take rows out of ``run`` (all, or ``only``) and send them to synchronous calls on commit."""
    rows = kind_of(job).rows(job).filter(batch=run, status=RowStatus.PENDING)
    if only is not None:
        rows = rows.filter(pk__in=only)
    ids = list(rows.values_list("pk", flat=True))
    rows.update(batch=None, in_flight_usd=0)
    job.refresh_from_db()
    if ids and job.status in job.ACTIVE:  # paused or cancelled: resume enqueues them
        transaction.on_commit(lambda: enqueue_sync(job, ids))
    return ids


# --- poll and collect ------------------------------------------------------------------------


def poll(batch_run_id: int) -> str:
    """Ask the provider about one submitted batch; collect it when it is done. Returns the state.

    Transient errors (the provider down for a while) leave the batch submitted: the next
    poll tries again. A permanent error (the provider no longer knows the batch) fails it
    and its rows go to synchronous calls.
    """
    run = BatchRun.objects.select_related("judge_job__judge", "generation_job__generator").get(pk=batch_run_id)
    if run.state != State.SUBMITTED:
        return run.state
    job = run.job
    snapshot = llm.ModelSnapshot.of(job.called_model)
    try:
        if job.status == job.Status.CANCELLED and run.provider_status not in ("cancelling", *client.FINAL_STATUSES):
            status = client.cancel(snapshot, run.provider_batch_id)
        else:
            status = client.retrieve(snapshot, run.provider_batch_id)
    except llm.TransientError as exc:
        BatchRun.objects.filter(pk=run.pk).update(last_polled_at=timezone.now(), error=f"poll: {exc}")
        return State.SUBMITTED
    except llm.PermanentError as exc:
        fail(job, run, f"poll: {exc}")
        return State.FAILED
    BatchRun.objects.filter(pk=run.pk).update(
        provider_status=status.status,
        completed_count=status.completed,
        failed_count=status.failed,
        request_count=status.total or run.request_count,
        last_polled_at=timezone.now(),
        error="",
    )
    if not status.is_final:
        return State.SUBMITTED
    try:
        return collect(run.pk, status, snapshot)
    except llm.TransientError as exc:  # an output file could not be read now: try at the next poll
        BatchRun.objects.filter(pk=run.pk).update(error=f"collect: {exc}")
        return State.SUBMITTED


def collect(batch_run_id: int, status: client.BatchStatus, snapshot: llm.ModelSnapshot) -> str:
    """Read the output and error files into the rows, in one transaction."""
    output = client.content(snapshot, status.output_file_id) if status.output_file_id else b""
    errors = client.content(snapshot, status.error_file_id) if status.error_file_id else b""
    with transaction.atomic():
        run = (
            BatchRun.objects.select_for_update(skip_locked=True).filter(pk=batch_run_id, state=State.SUBMITTED).first()
        )
        if run is None:
            return State.COLLECTED  # another poller holds it, or collected it already
        job = run.job
        kind = kind_of(job)
        rows = kind.load(
            job, list(kind.rows(job).filter(batch=run, status=RowStatus.PENDING).values_list("pk", flat=True))
        )
        answers, failures = read_output(output, errors, prefix=f"{kind.name}-")
        results: list[Result] = []
        failed_ids: dict[int, str] = {}
        twins: set[int] = set()
        unanswered: list[int] = []
        for line in plan_lines(kind.requests(job, rows)):
            hit = next((pk for pk in line.rows if pk in answers), None)
            if hit is None:
                error = next((failures[pk] for pk in line.rows if pk in failures), "")
                if not error:  # never run (a cancelled, expired or failed batch): not a call
                    unanswered.append(line.carrier)
                    error = f"batch {status.status}" if status.status != "completed" else "missing from the output"
                failed_ids.update(dict.fromkeys(line.rows, error))
                continue
            # calls=0: every line was counted when the batch was created, before it was sent.
            results.append(Result(hit, answers[hit], calls=0))
            # Identical prompts rode on this one line: they take its answer from the cache
            # (written below, in this transaction) through a synchronous chunk, at no cost,
            # exactly as twins in a synchronous chunk do.
            twins.update(pk for pk in line.rows if pk != hit)
        stored = store_results(job, results, batch=True) if results else 0
        _uncount(job, unanswered)
        released = _release(job, run, set(failed_ids) | twins)
        for error, ids in group_failures({pk: failed_ids[pk] for pk in released if pk in failed_ids}).items():
            kind.rows(job).filter(pk__in=ids).update(error=error[:500])
        if failed_ids:
            type(job).objects.filter(pk=job.pk).update(
                last_error=next(iter(failed_ids.values()))[:500], last_error_at=timezone.now()
            )
        BatchRun.objects.filter(pk=run.pk).update(
            state=State.COLLECTED, collected_at=timezone.now(), error=status.errors
        )
        transaction.on_commit(lambda: maybe_complete(type(job).objects.get(pk=job.pk)))
    logger.info(
        "job %s: batch %s collected: %d stored, %d failed (to synchronous calls), %d twins",
        job.pk,
        run.pk,
        stored,
        len(failed_ids),
        len(twins),
    )
    return State.COLLECTED


def read_output(output: bytes, errors: bytes, *, prefix: str) -> tuple[dict[int, llm.Completion], dict[int, str]]:
    """row pk -> Completion for the 200 answers; row pk -> error text for the rest.

    ``prefix`` is the kind's custom_id prefix ("judge-"). Error texts start like the
    synchronous ones ("429 rate limited", "500 server error").
    """
    answers: dict[int, llm.Completion] = {}
    failures: dict[int, str] = {}
    for raw in (output + b"\n" + errors).splitlines():
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
            named = str(line["custom_id"])
            if not named.startswith(prefix):
                raise ValueError(named)
            cid = int(named.removeprefix(prefix))
        except (ValueError, KeyError, TypeError):
            continue  # a line naming no row of ours cannot be matched; its row counts as missing
        response = line.get("response") or {}
        code = response.get("status_code") if isinstance(response, dict) else None
        if code == 200:
            try:
                body = response["body"]
                text = body["choices"][0]["message"]["content"] or ""
                usage = body.get("usage") or {}
                answers[cid] = llm.Completion(
                    text, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0), 0
                )
            except (KeyError, IndexError, TypeError, ValueError):
                failures[cid] = "malformed chat completion"
            continue
        failures[cid] = _line_error(code, line.get("error"))
    return answers, failures


def _line_error(code: int | None, error: Any) -> str:
    if code == 429:
        return "429 rate limited"
    if isinstance(code, int) and code >= 500:
        return f"{code} server error"
    detail = ""
    if isinstance(error, dict):
        detail = str(error.get("code") or error.get("message") or "")[:200]
    return f"{code} batch request failed" if code else f"batch request failed: {detail or 'no answer'}"


def summary(job: Any) -> list[dict[str, Any]]:
    """The job's batches for its page and its API."""
    return [
        {
            "id": run.pk,
            "state": run.state,
            "provider_status": run.provider_status,
            "provider_batch_id": run.provider_batch_id,
            "requests": run.request_count,
            "completed": run.completed_count,
            "failed": run.failed_count,
            "error": run.error,
            "submitted_at": run.submitted_at,
            "last_polled_at": run.last_polled_at,
            "collected_at": run.collected_at,
        }
        for run in runs_of(job).order_by("pk")
    ]


def group_failures(failed: dict[int, str]) -> dict[str, list[int]]:
    grouped: dict[str, list[int]] = defaultdict(list)
    for pk, error in failed.items():
        grouped[error].append(pk)
    return dict(grouped)
