"""Spreadsheet formula injection: what every CSV the platform writes does to a cell first.

A spreadsheet opening a CSV runs a cell that starts with ``=``, ``+``, ``-`` or ``@``
as a formula (``=HYPERLINK(...)``, ``=cmd|...``), and tab or carriage return can hide
such a start. Per OWASP's "CSV Injection" advice, such a cell is written with a
single quote in front, which spreadsheets show as text; a reader of the raw CSV
can drop it again.

Only text is neutralised. Numbers stay numbers: ``int``, ``float``, ``Decimal`` and
``bool`` values pass through (``-0.25`` is written as ``-0.25``), and so does a string
that is nothing but a decimal number such as ``"-3"`` or ``"-1.5e-3"``: a spreadsheet
reads it as that number and it cannot call anything. Everything else that starts
with one of the six characters gets the quote, ``"-"`` and ``"+1 (555)"`` included.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def safe_cell(value: object) -> object:
    """``value`` with a leading single quote if it is text a spreadsheet would run."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def safe_row(values: Iterable[object]) -> list[object]:
    return [safe_cell(value) for value in values]
