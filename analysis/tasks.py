"""Report runs in the worker: thin, id-only, idempotent."""

from __future__ import annotations

from celery import shared_task

from analysis import enqueue, services
from analysis.models import ReportRun


@shared_task(
    name=enqueue.BUILD_REPORT_RUN,  # sent by name (analysis.enqueue)
    queue="default",
    acks_late=True,  # a worker killed mid-run redelivers; claim() lets a stale run be retaken
    soft_time_limit=600,  # a full CoBBLEr report takes seconds; ten minutes means something is wrong
    time_limit=660,
)
def build_report_run(run_id: int) -> None:
    """Compute the report of one ReportRun. Returns quietly if the row is gone or already taken."""
    run = ReportRun.objects.select_related("study").filter(pk=run_id).first()
    if run is None or not run.claim():
        return
    services.execute_report_run(run=run)
