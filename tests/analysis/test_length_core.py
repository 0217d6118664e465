"""Pure length-control functions on hand-made DataFrames (numbers worked out in comments)."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.length import (
    VERDICT_COLUMNS,
    VOTE_COLUMNS,
    decide_verdict,
    length_control_table,
    relative_difference,
    wilson_counts,
)
from analysis.length.stats import bootstrap_difference


def votes(rows):
    return pd.DataFrame(rows, columns=VOTE_COLUMNS)


def verdicts(rows):
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def test_wilson_matches_the_closed_form():
    # 8/10: centre (0.8 + 1.9208/10) / 1.38415 = .71672, half = 1.96*sqrt(.016 + .0096)/1.38415 = .22654
    low, high = wilson_counts(8, 10)
    assert low == pytest.approx(0.49016, abs=1e-4)
    assert high == pytest.approx(0.94332, abs=1e-4)
    assert wilson_counts(0, 0) is None
    assert wilson_counts(0, 5)[0] == 0.0


def test_relative_difference_is_zero_for_two_empty_answers():
    d = relative_difference(pd.Series([0, 100, 50]), pd.Series([0, 90, 100]))
    assert list(d) == [0.0, pytest.approx(0.1), 0.5]


@pytest.mark.parametrize(
    ("matched", "null", "overall", "expected"),
    [
        ({"n": 10, "ci95": [0.40, 0.95]}, {"ci95": [0.4, 0.6]}, 0.8, "inconclusive"),  # half-width .275
        ({"n": 200, "ci95": [0.48, 0.62]}, {"ci95": [0.43, 0.57]}, 0.8, "length-confounded"),
        ({"n": 200, "ci95": [0.85, 0.93]}, {"ci95": [0.43, 0.57]}, 0.9, "semantic"),
        ({"n": 200, "ci95": [0.60, 0.70]}, {"ci95": [0.43, 0.57]}, 0.9, "inconclusive"),  # .70 < .9 - .1
        ({"n": 200, "ci95": [0.20, 0.30]}, {"ci95": [0.43, 0.57]}, 0.3, "inconclusive"),  # below 0.5
        ({"n": 0, "ci95": None}, {"ci95": None}, None, "inconclusive"),
    ],
)
def test_the_preregistered_verdict_rule(matched, null, overall, expected):
    assert decide_verdict(matched=matched, matched_null=null, overall=overall)[0] == expected


def _matched_study(judge_hits: int, null_hits: int, n: int = 200) -> tuple[pd.DataFrame, pd.DataFrame]:
    """n questions, each one key with d = .05 (lengths 100 vs 95) and one vote for 'first'.

    The judge picks 'first' on judge_hits keys; the longer answer is 'first' on null_hits keys.
    """
    v, j = [], []
    for q in range(n):
        lf, ls = (100, 95) if q < null_hits else (95, 100)
        v.append((f"q{q}", f"q{q}", "plain", "m1", "m2", "", "first", lf, ls))
        j.append(("judge", f"q{q}", f"q{q}", "plain", "m1", "m2", "", "first" if q < judge_hits else "second", lf, ls))
    return votes(v), verdicts(j)


def test_a_judge_far_above_the_null_on_matched_pairs_is_semantic():
    # Judge 180/200 = .90, Wilson [.851, .932] (half-width .04); null 100/200, Wilson [.431, .569].
    out = length_control_table(*_matched_study(180, 100), join="unordered")
    (row,) = out["judge_vs_human"]
    assert (row["matched_agreement"], row["matched_n"]) == (0.9, 200)
    assert row["matched_null_agreement"] == 0.5
    assert row["headline_share"] == 0.0  # (.5 - .5) / (.9 - .5)
    assert out["verdict"] == "semantic"


def test_a_judge_no_better_than_length_is_length_confounded():
    # Judge 110/200 = .55 [.481, .617] overlaps the null's 100/200 [.431, .569].
    assert length_control_table(*_matched_study(110, 100), join="unordered")["verdict"] == "length-confounded"


def test_two_presentations_merge_like_gpt4_pair():
    # One key, judged in both orders: agreeing rows stand, disagreeing ones become a tie.
    v = votes([("q", "q", "order", "a", "b", "", "first", 10, 20)])
    agree = verdicts(
        [
            ("j", "q", "q", "order", "a", "b", "", "first", 10, 20),
            ("j", "q", "q", "order", "b", "a", "", "second", 20, 10),
        ]
    )
    split = verdicts(
        [
            ("j", "q", "q", "order", "a", "b", "", "first", 10, 20),
            ("j", "q", "q", "order", "b", "a", "", "first", 20, 10),
        ]
    )
    assert length_control_table(v, agree, join="unordered")["judge_vs_human"][0]["n"] == 1
    row = length_control_table(v, split, join="unordered")["judge_vs_human"][0]
    assert (row["n"], row["s1_n"], row["s1_agreement"]) == (0, 1, 0.0)  # a tie: no key, one S1 miss


def test_strata_difference_has_a_bootstrap_interval_over_questions():
    # <10% keys always agree, >30% keys never: every resample gives a difference of exactly 1.
    rows = [("j", f"q{i}", f"q{i}", "plain", "m1", "m2", "", "first", 100, 98 if i < 10 else 10) for i in range(20)]
    v = votes(
        [
            (f"q{i}", f"q{i}", "plain", "m1", "m2", "", "first" if i < 10 else "second", 100, 98 if i < 10 else 10)
            for i in range(20)
        ]
    )
    out = length_control_table(v, verdicts(rows), join="unordered", seed=1, resamples=200)
    diff = next(
        r for r in out["strata_differences"] if r["subject"] == "judge" and (r["a"], r["b"]) == ("<10%", ">30%")
    )
    assert diff["difference"] == 1.0
    assert diff["ci95"] == [1.0, 1.0]


def test_bootstrap_interval_is_seeded_and_brackets_the_estimate():
    scored = pd.DataFrame(
        {
            "unit": [f"q{i % 30}" for i in range(120)],
            "bin": ["<10%"] * 60 + [">30%"] * 60,
            "agree": [i % 3 != 0 for i in range(60)] + [i % 2 == 0 for i in range(60)],
        }
    )
    first = bootstrap_difference(scored, first="<10%", second=">30%", seed=7, resamples=500)
    again = bootstrap_difference(scored, first="<10%", second=">30%", seed=7, resamples=500)
    assert first == again
    assert first[0] < (40 / 60 - 30 / 60) < first[1]


def test_malformed_frames_are_one_clear_error():
    with pytest.raises(ValueError, match="unknown winners"):
        length_control_table(votes([("q", "q", "plain", "a", "b", "", "A", 1, 2)]), verdicts([]), join="ordered")
    with pytest.raises(ValueError, match="unknown join"):
        length_control_table(votes([]), verdicts([]), join="sideways")
