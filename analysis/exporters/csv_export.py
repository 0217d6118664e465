"""CSV export: a zip of tidy tables (one file per table, a header row even when empty)."""

from __future__ import annotations

import csv
import io
import json
import zipfile

from analysis.exporters.tidy_tables import tidy_tables
from cobbler_site.foundation.csv_safety import safe_cell, safe_row


def _cell(value: object) -> object:
    # repr() of a float round-trips exactly, so a reader gets the JSON's number back.
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list | dict):
        return json.dumps(value)
    # Text that a spreadsheet would run as a formula gets a leading "'" (cobbler_site.foundation.csv_safety).
    return safe_cell(value)


def to_csv_zip(report: dict) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for table in tidy_tables(report):
            text = io.StringIO()
            writer = csv.writer(text, lineterminator="\n")
            writer.writerow(safe_row(table.columns))
            for row in table.rows:
                writer.writerow([_cell(row[c]) for c in table.columns])
            archive.writestr(f"{table.name}.csv", text.getvalue())
    return buffer.getvalue()
