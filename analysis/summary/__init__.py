"""The report's verdict summary and honest states (docs/methods.md, "Verdict summary")."""

from __future__ import annotations

from analysis.summary.cards import build_summary
from analysis.summary.claims import ALPHA, MIN_INSTRUCTIONS, MIN_PAIRS, MIN_VOTES
from analysis.summary.work import counted_work, describe_work, empty_reasons

__all__ = [
    "ALPHA",
    "MIN_INSTRUCTIONS",
    "MIN_PAIRS",
    "MIN_VOTES",
    "build_summary",
    "counted_work",
    "describe_work",
    "empty_reasons",
]
