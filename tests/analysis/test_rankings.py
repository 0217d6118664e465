"""Rankings from pairwise outcomes with the tie rules of cobbler-method.md 3.10."""
from __future__ import annotations

import pandas as pd
import pytest

from analysis.metrics.rankings import borda, rank, rankings_by, wins_from_judgments

ORDER = ["vicuna", "baize", "koala", "alpaca"]


def test_tie_rules_order_equal_scores_differently():
    keys, scores = ORDER, [1, 3, 1, 1]
    assert rank(keys, scores, tie_break="alpha") == ["baize", "alpaca", "koala", "vicuna"]  # T1
    assert rank(keys, scores, tie_break="canonical") == ["baize", "vicuna", "koala", "alpaca"]  # T2
    assert rank(keys, scores, tie_break="tie-aware") == ["baize", frozenset({"vicuna", "koala", "alpaca"})]
    with pytest.raises(ValueError, match="unknown tie rule"):
        rank(keys, scores, tie_break="coin")


def test_rankings_by_matches_rank_for_every_group():
    frame = pd.DataFrame({"instruction": [0] * 4 + [1] * 4, "candidate": ORDER * 2,
                          "score": [1, 3, 1, 1, 0, 0, 2, 2]})
    for rule in ("alpha", "canonical", "tie-aware"):
        got = rankings_by(frame, group=["instruction"], tie_break=rule, order=ORDER)
        for inst, g in frame.groupby("instruction"):
            assert got[inst] == rank(g["candidate"].tolist(), g["score"].tolist(), tie_break=rule, order=ORDER)


def test_wins_over_appearances_ignore_invalid_answers_but_count_them_as_shown():
    judgments = pd.DataFrame({
        "judge": "j", "condition": "order", "instruction": 0, "presentation": [1, 1, 1, 2],
        "cand_a": ["vicuna", "vicuna", "baize", "vicuna"], "cand_b": ["baize", "koala", "koala", "baize"],
        "valid": [True, False, True, True], "chosen_is_a": [False, False, True, True],
    })
    got = wins_from_judgments(judgments).set_index("candidate")
    assert got.loc["baize", "wins"] == 2 and got.loc["baize", "appearances"] == 2
    assert got.loc["vicuna", "wins"] == 0 and got.loc["vicuna", "appearances"] == 2
    assert got.loc["koala", "score"] == 0  # shown twice, never won (one answer was invalid)


def test_borda_counts_models_ranked_below():
    assert borda(["b", "a", "c"]) == {"b": 2, "a": 1, "c": 0}
