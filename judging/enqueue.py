"""Where judging sends its Celery messages from (tests/foundation/test_task_imports.py).

The runner, the batch driver and the services send work through these functions, by task
name: this module imports no tasks module, so the send path runs one way (the tasks at the
edge import the runner, the driver and the services; nothing below imports a task). The
tasks take their names from here, so a name cannot drift from its task.

Every message leaves when the current transaction commits (at once outside one), so a worker
never looks for rows it cannot see yet.
"""

from __future__ import annotations

import functools
import uuid

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.db import transaction

RUN_WORK_CHUNK = "judging.tasks.run_work_chunk"
SUBMIT_BATCH = "judging.tasks.submit_batch"
POLL_BATCH = "judging.tasks.poll_batch"


def _send_on_commit(task: str, args: tuple, countdown: float | None = None) -> None:
    transaction.on_commit(functools.partial(_send, task, args, countdown or None))


def _send(task: str, args: tuple, countdown: float | None) -> None:
    app = current_app
    if app.conf.task_always_eager:  # CELERY_TASK_ALWAYS_EAGER: run it here, as Task.delay would
        app.loader.import_default_modules()  # registers the tasks by name
        app.tasks[task].apply(args=args)
        return
    # send_task applies the task routes by name (judging.tasks.* -> the llm queue), as delay does.
    app.send_task(task, args=args, countdown=countdown)


def work_chunks(kind: str, job_id: int, chunks: list[list[int]], *, countdown: float | None = None) -> int:
    """One ``run_work_chunk`` message per chunk of row ids, after ``countdown`` seconds if given."""
    for ids in chunks:
        _send_on_commit(RUN_WORK_CHUNK, (kind, job_id, ids), countdown)
    return len(chunks)


def batch_submission(kind: str, job_id: int) -> None:
    """Submit the job's free pending rows to the Batch API in a worker (never in the caller)."""
    _send_on_commit(SUBMIT_BATCH, (kind, job_id))


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
    _send_on_commit(POLL_BATCH, (batch_run_id, token), countdown)
