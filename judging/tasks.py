"""Celery interface of the judge runner: ids in, services do the work, results in DB rows."""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from celery.contrib.django.task import DjangoTask
from celery.signals import worker_ready
from django.conf import settings
from django.db import OperationalError
from django.utils import timezone

from judging import enqueue, llm, runner, services
from judging.batch.tasks import poll_batch, submit_batch, sweep_batches  # noqa: F401 - registers them

logger = logging.getLogger(__name__)


@worker_ready.connect
def _build_tls_context(**_kwargs: object) -> None:
    """Load the CA bundle once the worker is up, not within a model's first calls (``llm.tls_context``)."""
    llm.tls_context()


class ChunkTask(DjangoTask):  # DjangoTask: delay_on_commit, as every task of the app
    def on_failure(self, exc: BaseException, task_id: str, args: tuple, kwargs: dict, einfo: object) -> None:
        # A bug (not a judge error: those are stored per judgment) stops the job visibly
        # instead of letting the sweeper replay the same crash forever.
        if self.name.endswith("run_work_chunk"):
            kind = args[0] if args else kwargs.get("kind", "judge")
            job_id = args[1] if len(args) > 1 else kwargs.get("job_id")
        else:
            kind, job_id = "judge", args[0] if args else kwargs.get("job_id")
        job_model = runner.kind_of(kind).job_model
        job_model.objects.filter(pk=job_id, status__in=job_model.ACTIVE).update(
            status=job_model.Status.FAILED,
            error=f"a chunk crashed: {type(exc).__name__}",
            finished_at=timezone.now(),
        )
        logger.error("job %s failed: chunk task crashed with %s", job_id, type(exc).__name__)


@shared_task(
    name=enqueue.RUN_WORK_CHUNK,
    base=ChunkTask,
    acks_late=True,  # redeliver if the worker dies mid-chunk; safe: claims make it idempotent
    # Only the database being briefly away is retried here: LLM errors defer their row
    # (not_before, honouring Retry-After) and a later chunk retries it, so no wait holds a slot.
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
def run_work_chunk(kind: str, job_id: int, row_ids: list[int]) -> None:
    """Answer the still-pending rows among ``row_ids`` of a judge ("judge") or generation
    ("generate") job; a no-op for finished work."""
    runner.run_chunk(kind, job_id, row_ids)


@shared_task(
    base=ChunkTask,
    acks_late=True,
    autoretry_for=(OperationalError,),
    max_retries=5,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    soft_time_limit=1500,
    time_limit=1800,
)
def run_judgment_chunk(job_id: int, judgment_ids: list[int]) -> None:
    """The old name (messages queued before the upgrade): a judge chunk."""
    runner.run_chunk("judge", job_id, judgment_ids)


@shared_task(acks_late=True)
def sweep_stale_judge_work() -> int:
    """Periodic: re-enqueue pending work of running jobs that made no progress lately."""
    return services.requeue_stale_work(stale_after=timedelta(seconds=settings.JUDGING_STALE_SECONDS))
