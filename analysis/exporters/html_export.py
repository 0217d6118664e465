"""HTML export: one self-contained file (inline CSS, plots as data: URIs, no URL anywhere)."""

from __future__ import annotations

import json

from django.conf import settings
from django.template.loader import render_to_string

from analysis.exporters.column_words import column_label, table_label
from analysis.exporters.figures import render_figures
from analysis.exporters.methods import methods_paragraphs
from analysis.exporters.tidy_tables import Table, method_legend, tidy_tables
from analysis.summary import describe_work
from analysis.summary.claims import share_reason
from analysis.summary.headline import headline

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


def _html_table(table: Table, reason: dict | None, links: dict[str, str], *, correction: str | None = None) -> dict:
    """Cells for the template; method columns show a key into the table's methods legend.

    The cell keeps the full text in ``data-value``, so the page carries the same values as
    the CSV; only what is shown is shortened. Headers show words (``column_words``) and keep
    their CSV key in ``data-column``.
    """
    legend = [
        item | {"column_label": column_label(item["column"], correction=correction)} for item in method_legend(table)
    ]
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
        "title": table_label(table.name),
        "columns": table.columns,
        "headers": [(c, column_label(c, correction=correction)) for c in table.columns],
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
    correction = (report.get("profile_choices") or {}).get("correction")
    return {
        "report": report,
        "figures": figures if figures is not None else render_figures(report),
        "tables": [_html_table(t, reasons.get(t.name), links, correction=correction) for t in tidy_tables(report)],
        "methods": methods_paragraphs(report),
        "verdict": lc.get("verdict"),
        "summary": [_card(card) for card in report.get("summary") or []],
        "counted_text": describe_work(counted) if counted else None,
        "links": links,
        # Only judges that met human votes on the same pairs have a length-control verdict to show.
        "headlines": [_headline(row) for row in lc.get("judge_vs_human") or [] if row.get("n")],
    }


def _card(card: dict) -> dict:
    """A verdict card as the template shows it: its label, its headline (built from its claims for
    reports computed before cards had one) and, for the humans, lines in words that describe
    people rather than charge them (the JSON's claims and lines are unchanged)."""
    humans = card.get("kind") == "humans"
    lines = [line | {"shown": _human_words(line) if humans else line["text"]} for line in card.get("lines") or []]
    return card | {
        "label": "the reference" if humans else VERDICT_WORDS.get(card["verdict"], card["verdict"]),
        "headline": card.get("headline") or (headline(card) if card.get("claims") else card.get("text")),
        "shown_lines": lines or [c | {"shown": c["text"]} for c in card.get("claims") or []],
    }


def _human_words(line: dict) -> str:
    """ "biased toward bandwagon cues (...)" -> "leaned toward bandwagon cues (...)": people are the reference."""
    text = line["text"]
    return "leaned " + text.removeprefix("biased ") if line.get("verdict") == "biased" else text


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
