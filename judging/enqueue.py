"""Where judging sends its Celery messages from (tests/foundation/test_task_imports.py).

The runner, the batch driver and the services send work through these functions, by task
name (``cobbler_site.foundation.messages``: after commit, or in place when Celery runs
eagerly): this module imports no tasks module, so the send path runs one way (the tasks at the
edge import the runner, the driver and the services; nothing below imports a task). The
tasks take their names from here, so a name cannot drift from its task.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.cache import cache

from cobbler_site.foundation.messages import send_on_commit

RUN_WORK_CHUNK = "judging.tasks.run_work_chunk"
SUBMIT_BATCH = "judging.tasks.submit_batch"
POLL_BATCH = "judging.tasks.poll_batch"


def work_chunks(kind: str, job_id: int, chunks: list[list[int]], *, countdown: float | None = None) -> int:
    """One ``run_work_chunk`` message per chunk of row ids, after ``countdown`` seconds if given."""
    for ids in chunks:
        send_on_commit(RUN_WORK_CHUNK, (kind, job_id, ids), countdown=countdown)
    return len(chunks)


def batch_submission(kind: str, job_id: int) -> None:
    """Submit the job's free pending rows to the Batch API in a worker (never in the caller)."""
    send_on_commit(SUBMIT_BATCH, (kind, job_id))


def poll_token_key(batch_run_id: int) -> str:
    """The cache key of the token of a batch's current poll chain."""
    return f"batch-poll-chain:{batch_run_id}"


def batch_poll_chain(batch_run_id: int, *, countdown: float | None = None) -> str:
    """Start a (new) poll chain for a batch, polled after ``countdown`` (default
    BATCH_POLL_SECONDS); an older chain for it stops at its next wake. Returns its token."""
    token = uuid.uuid4().hex
    cache.set(poll_token_key(batch_run_id), token, timeout=None)
    batch_poll(batch_run_id, token, countdown=settings.BATCH_POLL_SECONDS if countdown is None else countdown)
    return token


def batch_poll(batch_run_id: int, token: str, *, countdown: float) -> None:
    """The next poll of a chain (``poll_batch`` re-schedules itself with this)."""
    send_on_commit(POLL_BATCH, (batch_run_id, token), countdown=countdown)
