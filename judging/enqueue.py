"""The one module of judging that reaches its Celery tasks (tests/foundation/test_task_imports.py).

The runner, the batch driver and the services send work through these functions; the tasks
modules import the runner and the services, never the other way round. Each function imports
its task when called: ``judging.tasks`` imports the runner, which enqueues through here, so an
import at the top would be a circle at import time.

Every message leaves when the current transaction commits (at once outside one), so a worker
never looks for rows it cannot see yet.
"""

from __future__ import annotations


def work_chunks(kind: str, job_id: int, chunks: list[list[int]], *, countdown: float | None = None) -> int:
    """One ``run_work_chunk`` message per chunk of row ids, after ``countdown`` seconds if given."""
    from judging.tasks import run_work_chunk

    for ids in chunks:
        if countdown:
            run_work_chunk.apply_async_on_commit((kind, job_id, ids), countdown=countdown)
        else:
            run_work_chunk.delay_on_commit(kind, job_id, ids)
    return len(chunks)


def batch_submission(kind: str, job_id: int) -> None:
    """Submit the job's free pending rows to the Batch API in a worker (never in the caller)."""
    from judging.batch.tasks import submit_batch

    submit_batch.delay_on_commit(kind, job_id)  # type: ignore[attr-defined]  # Celery 5.4+; not in celery-types 0.26


def batch_poll_chain(batch_run_id: int) -> str:
    """Start polling a submitted batch (a new chain; an older one for it stops)."""
    from judging.batch.tasks import schedule_poll

    return schedule_poll(batch_run_id)
