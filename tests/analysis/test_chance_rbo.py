"""The chance level of a mean RBO (docs/methods.md "Chance RBO"): random orderings of five answers
agree far above 0, and a report must not read that as agreement."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.metrics.ranking_agreement import chance_rbo, rbo_row

ITEMS = ["a", "b", "c", "d", "e"]


def _expected_ext_chance(n: int, p: float) -> float:
    # Two full untied rankings, one uniformly random: E[overlap at depth d] / d = d / n, and
    # RBO_ext = (X_n / n) p^n + (1 - p) / p * sum_d (X_d / d) p^d is linear in the overlaps.
    return p**n + (1 - p) / p * sum(d / n * p**d for d in range(1, n + 1))


def _series(rankings: list[list]) -> pd.Series:
    return pd.Series(rankings, index=range(len(rankings)))


def test_the_untied_null_matches_the_closed_form():
    same = _series([ITEMS] * 40)
    chance = chance_rbo(same, same, observed=1.0, variant="ext", p=0.8, ties="a", seed=3)
    assert chance["value"] == pytest.approx(_expected_ext_chance(5, 0.8), abs=0.01)  # 0.672
    low, high = chance["range95"]
    assert low < chance["value"] < high < 1.0
    # Perfect agreement beats every draw: the smallest p a 200-draw test can give.
    assert chance["p_above"] == pytest.approx(1 / 201)


def test_a_ranking_at_chance_is_not_above_it():
    import random

    rng = random.Random(5)
    left = _series([ITEMS] * 30)
    right = _series([rng.sample(ITEMS, 5) for _ in range(30)])
    row = rbo_row(
        "human_vs_judge", "humans", "j", left, right, variant="ext", p=0.8, ties="a", seed=1, with_chance=True
    )
    assert row["chance"]["p_above"] > 0.05
    assert abs(row["value"] - row["chance"]["value"]) < 0.05


def test_tied_rankings_keep_their_groups_under_the_null():
    tied = _series([["a", frozenset({"b", "c"}), "d", "e"]] * 20)
    chance = chance_rbo(tied, tied, observed=1.0, variant="ext", p=0.8, ties="a", seed=2, draws=50)
    assert 0.5 < chance["value"] < 0.9 and chance["draws"] == 50
    assert chance["p_above"] == pytest.approx(1 / 51)


def test_the_row_has_no_chance_unless_asked():
    same = _series([ITEMS] * 3)
    assert "chance" not in rbo_row("judge_vs_judge", "x", "y", same, same, variant="ext", p=0.8, ties="a", seed=1)
