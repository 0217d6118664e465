"""Celery side of batch mode: submit a job's rows, poll each batch until it is collected.

One poll chain per batch: ``poll_batch`` re-schedules itself every ``BATCH_POLL_SECONDS``
while the provider works. The chain carries a token kept in the cache; starting a new
chain (after a worker restart, or by the sweeper) replaces the token, and a superseded
chain stops at its next wake, so polls never multiply. A chain lost with a killed worker
is restarted when a worker comes up (``worker_ready``) and by the periodic sweeper. Chains
are started, and polls sent, by task name from ``judging.enqueue``.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.core.cache import cache
from django.db import OperationalError
from django.utils import timezone

from judging import enqueue
from judging.batch import driver
from judging.models import BatchRun
from judging.runner import kind_of

logger = logging.getLogger(__name__)
State = BatchRun.State
# A PREPARING batch older than this lost its worker between taking rows and creating it.
PREPARING_GRACE = timedelta(minutes=10)


@shared_task(
    name=enqueue.SUBMIT_BATCH, acks_late=True, autoretry_for=(OperationalError,), max_retries=5, retry_backoff=2
)
def submit_batch(kind: str, job_id: int) -> int:
    """Submit the job's free pending rows as batches; returns the number of BatchRuns made."""
    job = kind_of(kind).job_model.objects.filter(pk=job_id).first()
    if job is None:
        return 0
    before = driver.runs_of(job).count()
    driver.submit_now(job)
    return driver.runs_of(job).count() - before


@shared_task(name=enqueue.POLL_BATCH, acks_late=True, autoretry_for=(OperationalError,), max_retries=5, retry_backoff=2)
def poll_batch(batch_run_id: int, token: str = "") -> str:
    """Poll one batch; while it runs, come back in BATCH_POLL_SECONDS (same chain)."""
    current = cache.get(enqueue.poll_token_key(batch_run_id))
    if token and current and current != token:
        return "superseded"  # a newer chain polls this batch
    if current is None and token:
        cache.set(enqueue.poll_token_key(batch_run_id), token, timeout=None)  # the cache forgot: adopt
    state = driver.poll(batch_run_id)
    if state == State.SUBMITTED:
        enqueue.batch_poll(batch_run_id, token, countdown=settings.BATCH_POLL_SECONDS)
    else:
        cache.delete(enqueue.poll_token_key(batch_run_id))
    return state


@shared_task(name="judging.tasks.sweep_batches", acks_late=True)
def sweep_batches(stale_after: float | None = None) -> int:
    """Periodic: restart lost poll chains; release rows of batches that were never created.

    A submitted batch not polled for three poll intervals (at least a minute) lost its
    chain. Returns the number of chains started.
    """
    quiet = timedelta(seconds=max(3 * settings.BATCH_POLL_SECONDS, 60) if stale_after is None else stale_after)
    now = timezone.now()
    started = 0
    for run_id in BatchRun.objects.filter(state=State.SUBMITTED, last_polled_at__lt=now - quiet).values_list(
        "pk", flat=True
    ):
        enqueue.batch_poll_chain(run_id, countdown=0)
        started += 1
    for run in BatchRun.objects.filter(
        state=State.PREPARING, created_at__lt=now - PREPARING_GRACE, provider_batch_id=""
    ):
        driver.fail(run.job, run, "the worker stopped before the batch was created")
    return started


def resume_all_polls() -> int:
    """A new chain for every submitted batch (a worker restart lost the chains it held)."""
    runs = list(BatchRun.objects.filter(state=State.SUBMITTED).values_list("pk", flat=True))
    for run_id in runs:
        enqueue.batch_poll_chain(run_id, countdown=0)
    return len(runs)


@worker_ready.connect
def _resume_polls_on_start(**_: object) -> None:
    # Polls waiting in a killed worker (countdown messages it had reserved) come back from
    # Redis only after its visibility timeout (an hour); restart them now instead.
    try:
        resumed = resume_all_polls()
    except Exception:  # never stop a worker from starting; the sweeper retries
        logger.exception("could not resume batch polls on worker start")
        return
    if resumed:
        logger.info("resumed polling of %d submitted batches", resumed)
