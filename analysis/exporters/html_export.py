"""HTML export: one self-contained file (inline CSS, plots as data: URIs, no URL anywhere)."""
from __future__ import annotations

import json

from django.conf import settings
from django.template.loader import render_to_string

from analysis.exporters.figures import render_figures
from analysis.exporters.methods import methods_paragraphs
from analysis.exporters.tables import Table, tidy_tables

CSS_PATH = settings.BASE_DIR / "static" / "analysis" / "report.css"


def _display(value: object) -> tuple[str, str]:
    """(shown text, exact value for data-value) of one cell."""
    if value is None:
        return "—", ""
    if isinstance(value, bool):
        return str(value).lower(), str(value).lower()
    if isinstance(value, float):
        return f"{value:.3f}", repr(value)
    if isinstance(value, list | dict):
        text = json.dumps(value)
        return text, text
    return str(value), str(value)


def _html_table(table: Table) -> dict:
    rows = [[_display(row[c]) for c in table.columns] for row in table.rows]
    return {"name": table.name, "columns": table.columns, "rows": rows}


def report_context(report: dict, figures: list[dict] | None = None) -> dict:
    """What the report body template needs; shared by the page and the HTML export."""
    lc = report.get("length_control") or {}
    return {
        "report": report,
        "figures": figures if figures is not None else render_figures(report),
        "tables": [_html_table(t) for t in tidy_tables(report)],
        "methods": methods_paragraphs(report),
        "verdict": lc.get("verdict"),
        # Only judges that met human votes on the same pairs have a length-control verdict to show.
        "headlines": [row for row in lc.get("judge_vs_human") or [] if row.get("n")],
    }


def to_html(report: dict, figures: list[dict] | None = None) -> bytes:
    context = report_context(report, figures)
    context["inline_css"] = CSS_PATH.read_text() if CSS_PATH.exists() else ""
    return render_to_string("analysis/export.html", context).encode()
