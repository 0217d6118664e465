"""The flag thresholds and a study's overrides (annotations.quality.rules)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from annotations.quality import DEFAULT_RULES, rules_for, validate_rules
from tests.annotations.conftest import build_study


def test_the_defaults():
    assert DEFAULT_RULES["min_median_seconds"] == 4.0
    assert DEFAULT_RULES["straight_line_min_tasks"] == 6
    assert DEFAULT_RULES["attention_fail_max"] == 0
    assert DEFAULT_RULES["qualification_attempts_max"] == 1
    assert DEFAULT_RULES["majority_disagreement_max"] == 0.5
    assert DEFAULT_RULES["min_raters_for_majority"] == 3


@pytest.mark.django_db
def test_a_study_overrides_some_rules_and_keeps_the_rest():
    study = build_study("rules", instructions=1, quality_rules={"min_median_seconds": 2, "attention_fail_max": 1})
    rules = rules_for(study)
    assert rules == {**DEFAULT_RULES, "min_median_seconds": 2.0, "attention_fail_max": 1}
    assert isinstance(rules["min_median_seconds"], float)
    assert rules_for(build_study("no-rules", instructions=1)) == DEFAULT_RULES


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"min_seconds": 3}, "Unknown quality rule 'min_seconds'; the rules are: min_median_seconds"),
        ({"min_median_seconds": "4"}, "'min_median_seconds' must be a number, not '4'"),
        ({"attention_fail_max": True}, "'attention_fail_max' must be a number, not True"),
        ({"attention_fail_max": 0.5}, "'attention_fail_max' must be a whole number"),
        ({"attention_fail_max": -1}, "'attention_fail_max' must be at least 0"),
        ({"min_raters_for_majority": 0}, "'min_raters_for_majority' must be at least 1"),
        ({"majority_disagreement_max": 1.5}, "share between 0 and 1"),
        ({"min_median_seconds": float("nan")}, "non-negative number"),
        ({"min_median_seconds": -2}, "non-negative number"),
        (["min_median_seconds"], "must be an object"),
    ],
)
def test_bad_rules_are_refused_with_a_clear_message(overrides, message):
    with pytest.raises(ValidationError) as caught:
        validate_rules(overrides)
    assert message in caught.value.messages[0]


def test_whole_floats_are_counts_and_empty_is_none():
    assert validate_rules({"straight_line_min_tasks": 8.0}) == {"straight_line_min_tasks": 8}
    assert validate_rules({}) == {} and validate_rules(None) == {}
