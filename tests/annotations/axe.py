"""axe-core in the browser tests: inject the vendored axe.min.js, run it, count by impact."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import ARTIFACTS, PROJECT_ROOT

AXE_JS = PROJECT_ROOT / "tests" / "vendor" / "axe-core" / "axe.min.js"
IMPACTS = ("critical", "serious", "moderate", "minor")
RESULTS = ARTIFACTS / "axe"

_RUN = """async (include) => {
  const r = await axe.run(include ? {include: [include]} : document, {resultTypes: ["violations"]});
  return r.violations.map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.length,
    targets: v.nodes.slice(0, 3).map(n => n.target.join(" "))}));
}"""


def run_axe(page, *, name: str, viewport: str, suite: str = "worker", include: str | None = None) -> dict:
    """Violations of ``page`` by impact; appends a row to test-artifacts/axe/<suite>.jsonl.

    ``include``: a CSS selector to check only that part of the page. Injected through page.evaluate (the DevTools protocol), not a <script> tag: the page's
    CSP allows no inline script, and the test must not loosen it.
    """
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(AXE_JS.read_text())
    violations = page.evaluate(_RUN, include)
    counts = {impact: sum(1 for v in violations if v["impact"] == impact) for impact in IMPACTS}
    row = {"page": name, "viewport": viewport, **counts, "violations": violations}
    RESULTS.mkdir(parents=True, exist_ok=True)
    with Path(RESULTS / f"{suite}.jsonl").open("a") as f:
        f.write(json.dumps(row) + "\n")
    return row


def serious(row: dict) -> list[dict]:
    return [v for v in row["violations"] if v["impact"] in ("critical", "serious")]
