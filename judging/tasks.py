"""Celery interface of the judge runner: ids in, services do the work, results in DB rows."""
from __future__ import annotations

import logging
from datetime import timedelta

from celery import Task, shared_task
from django.conf import settings
from django.db import OperationalError
from django.utils import timezone

from judging import runner, services
from judging.models import JudgeJob

logger = logging.getLogger(__name__)


class ChunkTask(Task):
    def on_failure(self, exc: BaseException, task_id: str, args: tuple, kwargs: dict, einfo: object) -> None:
        # A bug (not a judge error: those are stored per judgment) stops the job visibly
        # instead of letting the sweeper replay the same crash forever.
        job_id = args[0] if args else kwargs.get("job_id")
        JudgeJob.objects.filter(pk=job_id, status__in=JudgeJob.ACTIVE).update(
            status=JudgeJob.Status.FAILED, error=f"a chunk crashed: {type(exc).__name__}",
            finished_at=timezone.now(),
        )
        logger.error("job %s failed: chunk task crashed with %s", job_id, type(exc).__name__)


@shared_task(
    base=ChunkTask,
    acks_late=True,  # redeliver if the worker dies mid-chunk; safe: claims make it idempotent
    # Only the database being briefly away is retried here: LLM errors are retried per call
    # inside the chunk (honouring Retry-After), so one bad call never replays a whole chunk.
    autoretry_for=(OperationalError,),
    max_retries=5,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    # A chunk of 50 calls with backoff can take minutes; prefork enforces these limits,
    # the threads pool ignores them (lease renewal then keeps the claim honest).
    soft_time_limit=1500,
    time_limit=1800,
)
def run_judgment_chunk(job_id: int, judgment_ids: list[int]) -> None:
    """Judge the still-pending rows among ``judgment_ids``; a no-op for finished work."""
    runner.run_chunk(job_id=job_id, judgment_ids=judgment_ids)


@shared_task(acks_late=True)
def sweep_stale_judge_work() -> int:
    """Periodic: re-enqueue pending work of running jobs that made no progress lately."""
    return services.requeue_stale_work(stale_after=timedelta(seconds=settings.JUDGING_STALE_SECONDS))
