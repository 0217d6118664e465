"""HTML export: one self-contained file (inline CSS, plots as data: URIs, no URL anywhere)."""

from __future__ import annotations

import json

from django.conf import settings
from django.template.loader import render_to_string

from analysis.exporters.figures import render_figures
from analysis.exporters.methods import methods_paragraphs
from analysis.exporters.tidy_tables import Table, method_legend, tidy_tables
from analysis.summary import describe_work
from analysis.summary.claims import share_reason

CSS_PATH = settings.BASE_DIR / "static" / "analysis" / "report.css"
VERDICT_WORDS = {
    "biased": "biased",
    "no_evidence": "no evidence of bias",
    "measured": "measured",
    "not_enough_data": "not enough data",
    "no_data": "no data",
}


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


def _html_table(table: Table, reason: dict | None, links: dict[str, str]) -> dict:
    """Cells for the template; method columns show a key into the table's methods legend.

    The cell keeps the full text in ``data-value``, so the page carries the same values as
    the CSV; only what is shown is shortened.
    """
    legend = method_legend(table)
    keys = {(item["column"], item["text"]): item["key"] for item in legend}
    rows = []
    for row in table.rows:
        cells = []
        for c in table.columns:
            shown, exact = _display(row[c])
            key = keys.get((c, row[c])) if isinstance(row[c], str) else None
            cells.append((key or shown, exact))
        rows.append(cells)
    return {
        "name": table.name,
        "columns": table.columns,
        "rows": rows,
        "legend": legend,
        "empty": _with_link(reason, links) if not table.rows else None,
    }


def _with_link(reason: dict | None, links: dict[str, str]) -> list[dict]:
    """One or more "why no data" parts, each with its page URL when the page has one (never the export)."""
    if not reason:
        return [{"reason": "Nothing to show for this study", "action": None, "href": None}]
    parts = reason.get("parts") or [reason]
    return [{"reason": p["reason"], "action": p.get("action"), "href": links.get(p.get("link") or "")} for p in parts]


def report_context(report: dict, figures: list[dict] | None = None, *, links: dict[str, str] | None = None) -> dict:
    """What the report body template needs; shared by the page and the HTML export.

    ``links`` maps the page names of the "why no data" reasons ("study", "jobs") to URLs;
    the export passes none, so it stays free of any URL.
    """
    lc = report.get("length_control") or {}
    reasons = report.get("no_data") or {}
    links = links or {}
    counted = report.get("counted_work")
    return {
        "report": report,
        "figures": figures if figures is not None else render_figures(report),
        "tables": [_html_table(t, reasons.get(t.name), links) for t in tidy_tables(report)],
        "methods": methods_paragraphs(report),
        "verdict": lc.get("verdict"),
        "summary": [
            card | {"label": VERDICT_WORDS.get(card["verdict"], card["verdict"])}
            for card in report.get("summary") or []
        ],
        "counted_text": describe_work(counted) if counted else None,
        "links": links,
        # Only judges that met human votes on the same pairs have a length-control verdict to show.
        "headlines": [_headline(row) for row in lc.get("judge_vs_human") or [] if row.get("n")],
    }


def _headline(row: dict) -> dict:
    """A length-control row with its share in words: a percentage only when it reads as one (0-100%).

    ``share_percent`` is None and ``share_reason`` says why when the share is outside [0, 1] or
    the judge agrees no better than chance (the rule of the summary's length claims).
    """
    reason = share_reason(row)
    percent = None if reason is not None else f"{row['headline_share']:.0%}"
    return row | {"share_percent": percent, "share_reason": reason}


def to_html(report: dict, figures: list[dict] | None = None) -> bytes:
    context = report_context(report, figures)
    context["inline_css"] = CSS_PATH.read_text() if CSS_PATH.exists() else ""
    return render_to_string("analysis/export.html", context).encode()
