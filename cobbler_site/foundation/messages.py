"""Sending a Celery task by its registered name, when the current transaction commits.

The apps' ``enqueue`` modules send through here, so nothing below a ``tasks`` module imports
one (tests/foundation/test_task_imports.py). A name needs no registry in the sending process:
a web process never imports the tasks modules, and ``send_task`` routes by name (judging's
tasks to the llm queue) as ``delay`` does. With ``CELERY_TASK_ALWAYS_EAGER`` the task runs in
place instead, as ``delay`` would; only then are the tasks modules imported, to find it.

Every message leaves when the current transaction commits (at once outside one), so a worker
never looks for rows it cannot see yet.
"""

from __future__ import annotations

import functools

from celery import current_app
from django.db import transaction


def send_on_commit(task: str, args: tuple, *, countdown: float | None = None) -> None:
    """Send ``task`` (its registered name) with ``args`` once the transaction commits."""
    transaction.on_commit(functools.partial(_send, task, args, countdown or None))


def _send(task: str, args: tuple, countdown: float | None) -> None:
    app = current_app
    if app.conf.task_always_eager:
        app.loader.import_default_modules()  # registers every app's tasks by name
        app.tasks[task].apply(args=args)
        return
    app.send_task(task, args=args, countdown=countdown)
