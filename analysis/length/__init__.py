"""Length-controlled agreement: pure functions over DataFrames (docs/methods.md, "Length control")."""

from __future__ import annotations

from analysis.length.control_table import DEFAULT_RESAMPLES, DEFAULT_SEED, length_control_table
from analysis.length.core import BINS, VERDICT_COLUMNS, VOTE_COLUMNS, decide_verdict, relative_difference
from analysis.length.stats import wilson_counts

__all__ = [
    "BINS",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "VERDICT_COLUMNS",
    "VOTE_COLUMNS",
    "decide_verdict",
    "length_control_table",
    "relative_difference",
    "wilson_counts",
]
