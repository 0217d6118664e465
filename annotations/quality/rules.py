"""The thresholds of the submission quality flags, with a study's overrides (Study.quality_rules).

docs/methods.md "Crowd quality" defines each flag; these are its default thresholds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError

from annotations.models import Study

DEFAULT_RULES: dict[str, float | int] = {
    # Flag too_fast when the median seconds per task is below this.
    "min_median_seconds": 4.0,
    # Flag straight_line only for work with at least this many answers of one kind.
    "straight_line_min_tasks": 6,
    # Flag attention_failed / gold_failed when more checks than this were failed (0: any failure).
    "attention_fail_max": 0,
    "gold_fail_max": 0,
    # Flag qualification_attempts when the worker needed more attempts than this.
    "qualification_attempts_max": 1,
    # Flag majority_disagreement when the share of compared answers against the other raters'
    # majority is above this ...
    "majority_disagreement_max": 0.5,
    # ... counting a task only when it has at least this many raters (this one included) ...
    "min_raters_for_majority": 3,
    # ... and only when at least this many of the worker's tasks could be compared.
    "majority_min_tasks": 4,
}

# Which rules are shares or seconds (any non-negative number) and which are counts.
_NUMBERS = {"min_median_seconds", "majority_disagreement_max"}
_AT_LEAST_ONE = {"straight_line_min_tasks", "min_raters_for_majority", "majority_min_tasks"}


def validate_rules(overrides: Any) -> dict[str, float | int]:
    """The overrides, checked: a dict of known rule names to numbers. ValidationError names the problem.

    For forms and the API (a study's ``quality_rules``); returns the cleaned overrides only,
    not merged with the defaults.
    """
    if overrides in (None, ""):
        return {}
    if not isinstance(overrides, Mapping):
        raise ValidationError("Quality rules must be an object of rule names to numbers.")
    unknown = sorted(str(k) for k in overrides if k not in DEFAULT_RULES)
    if unknown:
        raise ValidationError(f"Unknown quality rule {unknown[0]!r}; the rules are: {', '.join(DEFAULT_RULES)}.")
    cleaned: dict[str, float | int] = {}
    for name, value in overrides.items():
        # bool is an int in Python; "true" as a threshold is a mistake, not 1.
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValidationError(f"Quality rule {name!r} must be a number, not {value!r}.")
        if name in _NUMBERS:
            if not 0 <= value < float("inf"):
                raise ValidationError(f"Quality rule {name!r} must be a non-negative number (got {value!r}).")
            if name == "majority_disagreement_max" and value > 1:
                raise ValidationError(f"Quality rule {name!r} is a share between 0 and 1 (got {value!r}).")
            cleaned[name] = float(value)
            continue
        if not float(value).is_integer():
            raise ValidationError(f"Quality rule {name!r} must be a whole number (got {value!r}).")
        lowest = 1 if name in _AT_LEAST_ONE else 0
        if value < lowest:
            raise ValidationError(f"Quality rule {name!r} must be at least {lowest} (got {value!r}).")
        cleaned[name] = int(value)
    return cleaned


def rules_for(study: Study) -> dict[str, float | int]:
    """The study's thresholds: DEFAULT_RULES with its ``quality_rules`` overrides (validated)."""
    return {**DEFAULT_RULES, **validate_rules(study.quality_rules)}
