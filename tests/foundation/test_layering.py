"""The apps depend one way: cobbler_site.foundation <- annotations <- judging <- analysis, with
the rest of cobbler_site (settings, URLs, the Celery app, commands, ``cobbler_site/wiring/``) on top.

Every module of an app is parsed (ast, not imported), and every import in it counts, at the
top, inside functions and under ``if TYPE_CHECKING`` alike: a lazy import is still a
dependency, only a hidden one. ``importlib.import_module("...")`` with a literal name counts too.
Code that needs two apps at once belongs in the top of ``cobbler_site`` (its commands and
``cobbler_site/wiring/``), which no app may import in turn; what every app needs (access,
throttling, API shapes, text and CSV safety) is ``cobbler_site.foundation``, which imports no app.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.smoke

# What each layer must not import. Of cobbler_site, the apps may import only the foundation.
SITE_TOP = ("cobbler_site",)
FOUNDATION = "cobbler_site.foundation"
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
    inside = name == FOUNDATION or name.startswith(FOUNDATION + ".")
    return not inside and any(name == bad or name.startswith(bad + ".") for bad in forbidden)


def offenders(app: str, forbidden: tuple[str, ...]) -> list[str]:
    lines = []
    for path in sorted((PROJECT_ROOT / app).rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        names = imported_modules(source, module=module_name(path), is_package=path.name == "__init__.py")
        lines += [
            f"{path.relative_to(PROJECT_ROOT)}:{line} imports {name}"
            for line, name in names
            if offends(name, forbidden)
        ]
    return lines


@pytest.mark.parametrize("app", sorted(FORBIDDEN))
def test_app_imports_only_downstream(app):
    assert (PROJECT_ROOT / app / "models").exists() or (PROJECT_ROOT / app / "models.py").exists()
    found = offenders(app, FORBIDDEN[app])
    assert not found, f"{app} must not import {', '.join(FORBIDDEN[app])}:\n" + "\n".join(found)


def test_the_foundation_imports_no_app_and_nothing_above_it():
    assert FOUNDATION == "cobbler_site.foundation" and (PROJECT_ROOT / "cobbler_site" / "foundation").is_dir()
    found = offenders("cobbler_site/foundation", ("annotations", "judging", "analysis", *SITE_TOP))
    assert not found, "cobbler_site.foundation must import no app and no other part of cobbler_site:\n" + "\n".join(
        found
    )


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
    assert not offends("cobbler_site.foundation.access", FORBIDDEN["annotations"])
    assert offends("cobbler_site.wiring.cobbler_import", FORBIDDEN["annotations"])
    assert offends("cobbler_site.celery", FORBIDDEN["analysis"])


# --- import cycles between modules ------------------------------------------------------------
#
# The cycles that exist, each a set of modules that import one another (directly or around a
# loop, lazy imports included). Issue 25 untangled the last seven; the list may only stay empty
# or shrink: a new cycle, or a module joining one, fails below, and so does an entry that is gone.
KNOWN_CYCLES: tuple[set[str], ...] = ()
CODE = ("annotations", "judging", "analysis", "cobbler_site")


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (a name resolves to its longest module prefix)."""
    paths = {
        module_name(path): path
        for app in CODE
        for path in (PROJECT_ROOT / app).rglob("*.py")
        if "migrations" not in path.parts
    }
    graph = {}
    for module, path in paths.items():
        names = imported_modules(path.read_text(encoding="utf-8"), module=module, is_package=path.name == "__init__.py")
        targets = set()
        for _line, name in names:
            parts = name.split(".")
            found = next((".".join(parts[:k]) for k in range(len(parts), 0, -1) if ".".join(parts[:k]) in paths), None)
            if found and found != module:
                targets.add(found)
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            child = next(edges, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def test_no_new_import_cycle():
    found = cycles(import_graph())
    new = [sorted(c) for c in found if not any(c <= known for known in KNOWN_CYCLES)]
    assert not new, "new import cycles (break them; never add them to KNOWN_CYCLES):\n" + "\n".join(map(str, new))
    gone = [sorted(k) for k in KNOWN_CYCLES if not any(c <= k and len(c) > 1 for c in found)]
    assert not gone, "these cycles are gone: delete them from KNOWN_CYCLES:\n" + "\n".join(map(str, gone))


def test_the_cycle_finder_finds_a_loop_and_only_loops():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [{"a", "b", "c"}]
