"""Tasks import services, never the reverse: the circle tasks <-> services cannot come back.

Only a ``tasks`` module (a Celery wrapper over the services) and an app's ``enqueue`` module
(the one place its workflows send messages from) may import a ``tasks`` module. Every import
counts, lazy ones inside functions too (parsed with ast, as in test_layering).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT
from tests.foundation.test_layering import imported_modules, module_name

pytestmark = pytest.mark.smoke

PACKAGES = ("annotations", "judging", "analysis", "cobbler_site")
MAY_IMPORT_TASKS = ("tasks", "enqueue")  # module file names


def is_tasks_module(name: str) -> bool:
    return name.split(".")[-1] == "tasks" or ".tasks." in f"{name}."


def tasks_imports(path: Path) -> list[str]:
    module = module_name(path)
    found = imported_modules(path.read_text(), module=module, is_package=path.name == "__init__.py")
    # `from judging.tasks import run_work_chunk` reads as judging.tasks.run_work_chunk.
    return [f"{path.relative_to(PROJECT_ROOT)}:{line}: {name}" for line, name in found if is_tasks_module(name)]


def test_only_tasks_and_enqueue_modules_import_tasks():
    offenders = [
        hit
        for package in PACKAGES
        for path in sorted((PROJECT_ROOT / package).rglob("*.py"))
        if path.stem not in MAY_IMPORT_TASKS and "migrations" not in path.parts
        for hit in tasks_imports(path)
    ]
    assert not offenders, "import tasks only from tasks.py or enqueue.py:\n" + "\n".join(offenders)


def test_the_check_sees_a_lazy_import():
    # The test above is only as good as its parser: a function-level import must count.
    source = "def f():\n    from judging.batch.tasks import submit_batch\n"
    found = imported_modules(source, module="judging.services")
    assert [name for _, name in found if is_tasks_module(name)] == ["judging.batch.tasks.submit_batch"]
