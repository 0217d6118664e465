"""The one module of analysis that reaches its Celery tasks (tests/foundation/test_task_imports.py).

The services queue work through these functions; the tasks module imports the services, never
the other way round. The task is imported when called: ``analysis.tasks`` imports the services,
which enqueue through here, so an import at the top would be a circle at import time.

Every message leaves when the current transaction commits (at once outside one), so the worker
never looks for a row it cannot see yet.
"""

from __future__ import annotations


def report_run(run_id: int) -> None:
    """Compute the ReportRun ``run_id`` in a worker."""
    from analysis.tasks import build_report_run

    build_report_run.delay_on_commit(run_id)  # type: ignore[attr-defined]  # Celery 5.4+; not in celery-types 0.26
