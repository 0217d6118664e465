"""Report exporters: JSON (schema-validated), CSV (zip of tidy tables), HTML (self-contained)."""

from __future__ import annotations

from analysis.exporters.csv_export import to_csv_zip
from analysis.exporters.figures import render_figures
from analysis.exporters.html_export import report_context, to_html
from analysis.exporters.json_export import to_json, validate

FORMATS = {
    "json": ("application/json", "json"),
    "csv": ("application/zip", "zip"),
    "html": ("text/html; charset=utf-8", "html"),
}


def export(report: dict, fmt: str, *, figures: list[dict] | None = None) -> bytes:
    """The report in one format; ValueError for an unknown format or a report off the schema."""
    if fmt == "json":
        return to_json(report)
    if fmt == "csv":
        return to_csv_zip(report)
    if fmt == "html":
        return to_html(report, figures)
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


__all__ = ["FORMATS", "export", "render_figures", "report_context", "to_csv_zip", "to_html", "to_json", "validate"]
