"""The one module of analysis that reaches its Celery tasks (tests/foundation/test_task_imports.py).

The services queue work through these functions; the tasks module imports the services, never
the other way round. The task is found by its name in the Celery app's registry (which imports
every app's tasks module when first read), not imported: ``analysis.tasks`` imports the
services, which enqueue through here, so an import would close a circle.

Every message leaves when the current transaction commits (at once outside one), so the worker
never looks for a row it cannot see yet.
"""

from __future__ import annotations

from celery import current_app

BUILD_REPORT_RUN = "analysis.tasks.build_report_run"


def report_run(run_id: int) -> None:
    """Compute the ReportRun ``run_id`` in a worker."""
    # delay_on_commit: Celery 5.4+; not in celery-types 0.26
    current_app.tasks[BUILD_REPORT_RUN].delay_on_commit(run_id)  # type: ignore[attr-defined]
