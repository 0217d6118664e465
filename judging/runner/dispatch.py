"""Getting rows onto the queue as synchronous chunks, and finishing a job (batch mode is
``judging.batch.driver``, above the runner; ``judging.services.enqueue_pending`` picks)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models import Max
from django.utils import timezone

from judging import enqueue
from judging.generate.finish import finish_generation_job
from judging.runner.work import WorkKind, kind_of
from judging.vocabulary import RowStatus


def chunked(keyed: list[tuple[int, str]]) -> list[list[int]]:
    """Rows sorted by prompt hash, in chunks that never split a hash: identical prompts (plain
    repeats one order presentation) meet in one chunk, which calls the model once."""
    chunks: list[list[int]]
    chunk: list[int]
    size, chunks, chunk, last_hash = settings.JUDGING_CHUNK_SIZE, [], [], None
    for pk, prompt_hash in sorted(keyed, key=lambda row: (row[1] or "", row[0])):
        if len(chunk) >= size and prompt_hash != last_hash:
            chunks.append(chunk)
            chunk = []
        chunk.append(pk)
        last_hash = prompt_hash
    if chunk:
        chunks.append(chunk)
    return chunks


def send(kind: str, job_id: int, chunks: list[list[int]], countdown: float | None = None) -> int:
    return enqueue.work_chunks(kind, job_id, chunks, countdown=countdown)


def _sync_rows(work: WorkKind, job: Any) -> Any:
    return (
        work.rows(job).filter(status=RowStatus.PENDING, batch__isnull=True).exclude(claimed_until__gte=timezone.now())
    )


def enqueue_sync(job: Any, row_ids: list[int] | None = None) -> int:
    """Synchronous chunks for the job's unclaimed pending rows (only ``row_ids`` if given):
    ready rows now, deferred rows (not_before) with a countdown. Returns chunks sent."""
    work = kind_of(job)
    rows = _sync_rows(work, job)
    if row_ids is not None:
        rows = rows.filter(pk__in=row_ids)
    now = timezone.now()
    ready = rows.exclude(not_before__gt=now).values_list("pk", "prompt_hash")
    sent = send(work.name, job.pk, chunked(list(ready.iterator(chunk_size=5000))))
    later = rows.filter(not_before__gt=now)
    last = later.aggregate(at=Max("not_before"))["at"]
    if last is not None:
        countdown = max(0.05, (last - now).total_seconds())
        sent += send(work.name, job.pk, chunked(list(later.values_list("pk", "prompt_hash"))), countdown)
    return sent


def schedule_deferred(work: WorkKind, job: Any, ids: list[int]) -> int:
    """After a chunk: its rows waiting for a retry go back to the queue with a countdown."""
    if not ids:
        return 0
    # Every deferred row, due or not: a short Retry-After may already have passed.
    later = work.rows(job).filter(
        pk__in=ids, status=RowStatus.PENDING, batch__isnull=True, claim_token="", not_before__isnull=False
    )
    last = later.aggregate(at=Max("not_before"))["at"]
    if last is None:
        return 0
    countdown = max(0.0, (last - timezone.now()).total_seconds())
    return send(work.name, job.pk, [list(later.values_list("pk", flat=True))], countdown)


def maybe_complete(job: Any) -> bool:
    """``job.complete_if_done()``; for a generation job, the one caller that completed it also
    finishes it (responses, pairs). Safe to call from every chunk."""
    done = job.complete_if_done()
    if done and kind_of(job).name == "generate":
        finish_generation_job(job)
    return done
