"""The one module of analysis that sends its Celery tasks (tests/foundation/test_task_imports.py).

The services queue work through these functions, by task name (``cobbler_site.foundation.messages``):
``analysis.tasks`` imports the services, which enqueue through here, so an import would close a
circle. The task takes its name from here, so a name cannot drift from its task.
"""

from __future__ import annotations

from cobbler_site.foundation.messages import send_on_commit

BUILD_REPORT_RUN = "analysis.tasks.build_report_run"


def report_run(run_id: int) -> None:
    """Compute the ReportRun ``run_id`` in a worker, once the current transaction commits."""
    send_on_commit(BUILD_REPORT_RUN, (run_id,))
