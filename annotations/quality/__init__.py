"""Crowd quality control: check tasks injected into batches, and per-submission flags.

docs/methods.md "Crowd quality" defines every check, flag and threshold.
"""

from __future__ import annotations

from annotations.quality.flags import compute_flags, flag_assignment, reflag_batch, reflag_study
from annotations.quality.rules import DEFAULT_RULES, rules_for, validate_rules

__all__ = (
    "DEFAULT_RULES",
    "compute_flags",
    "flag_assignment",
    "reflag_batch",
    "reflag_study",
    "rules_for",
    "validate_rules",
)
