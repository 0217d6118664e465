"""The apps depend one way: annotations <- judging <- analysis, with cobbler_site on top.

Every module of an app is parsed (ast, not imported), and every import in it counts, at the
top, inside functions and under ``if TYPE_CHECKING`` alike: a lazy import is still a
dependency, only a hidden one. ``importlib.import_module("...")`` with a literal name counts too.
Code that needs two apps at once belongs in ``cobbler_site`` (its commands and
``cobbler_site/wiring/``), which no app may import in turn.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.smoke

# What each app must not import. cobbler_site's shared helpers (access, throttle, csv_safety,
# api_schema) sit below the apps; only its cross-app layer sits above them.
SITE_TOP = ("cobbler_site.wiring", "cobbler_site.management")
FORBIDDEN = {
    "annotations": ("judging", "analysis", *SITE_TOP),
    "judging": ("analysis", *SITE_TOP),
    "analysis": SITE_TOP,
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PROJECT_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, *, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, dotted name) of every module the source imports, relative imports resolved."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                anchor = package[: len(package) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            # `from judging import models` imports judging.models: check the full names too.
            found += [(node.lineno, f"{base}.{alias.name}" if base else alias.name) for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def offends(name: str, forbidden: tuple[str, ...]) -> bool:
    return any(name == bad or name.startswith(bad + ".") for bad in forbidden)


def offenders(app: str) -> list[str]:
    lines = []
    for path in sorted((PROJECT_ROOT / app).rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        names = imported_modules(source, module=module_name(path), is_package=path.name == "__init__.py")
        lines += [
            f"{path.relative_to(PROJECT_ROOT)}:{line} imports {name}"
            for line, name in names
            if offends(name, FORBIDDEN[app])
        ]
    return lines


@pytest.mark.parametrize("app", sorted(FORBIDDEN))
def test_app_imports_only_downstream(app):
    assert (PROJECT_ROOT / app / "models").exists() or (PROJECT_ROOT / app / "models.py").exists()
    found = offenders(app)
    assert not found, f"{app} must not import {', '.join(FORBIDDEN[app])}:\n" + "\n".join(found)


def test_the_checker_sees_hidden_imports():
    source = """
import judging.models
from judging import services
from analysis.metrics import bias as b
from . import shown
from ..judging import x


def lazy():
    from analysis.report import build
    import importlib
    return importlib.import_module("judging.tasks")


if TYPE_CHECKING:
    from judging.models import Judge
"""
    names = [name for _line, name in imported_modules(source, module="annotations.views.pages")]
    bad = [name for name in names if offends(name, FORBIDDEN["annotations"])]
    assert sorted(bad) == [
        "analysis.metrics.bias",
        "analysis.report.build",
        "judging.models",
        "judging.models.Judge",
        "judging.services",
        "judging.tasks",
    ]
    assert "annotations.views.shown" in names
    assert "annotations.judging.x" in names  # relative: still inside the app, not the judging app
    assert not offends("judgingx", ("judging",))
