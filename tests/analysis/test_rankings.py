"""Rankings from pairwise outcomes with the tie rules of analysis.metrics.rankings (the authors' two, and tie-aware)."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.metrics.rankings import rank, rankings_by, wins_from_judgments

ORDER = ["vicuna", "baize", "koala", "alpaca"]


def test_tie_rules_order_equal_scores_differently():
    keys, scores = ORDER, [1, 3, 1, 1]
    assert rank(keys, scores, tie_break="alpha") == ["baize", "alpaca", "koala", "vicuna"]  # T1
    assert rank(keys, scores, tie_break="canonical") == ["baize", "vicuna", "koala", "alpaca"]  # T2
    assert rank(keys, scores, tie_break="tie-aware") == ["baize", frozenset({"vicuna", "koala", "alpaca"})]
    with pytest.raises(ValueError, match="unknown tie rule"):
        rank(keys, scores, tie_break="coin")


def test_rankings_by_matches_rank_for_every_group():
    frame = pd.DataFrame({"instruction": [0] * 4 + [1] * 4, "candidate": ORDER * 2, "score": [1, 3, 1, 1, 0, 0, 2, 2]})
    for rule in ("alpha", "canonical", "tie-aware"):
        got = rankings_by(frame, group=["instruction"], tie_break=rule, order=ORDER)
        for inst, g in frame.groupby("instruction"):
            assert got[inst] == rank(g["candidate"].tolist(), g["score"].tolist(), tie_break=rule, order=ORDER)


def test_wins_over_appearances_ignore_invalid_answers_but_count_them_as_shown():
    judgments = pd.DataFrame(
        {
            "judge": "j",
            "condition": "order",
            "instruction": 0,
            "presentation": [1, 1, 1, 2],
            "cand_a": ["vicuna", "vicuna", "baize", "vicuna"],
            "cand_b": ["baize", "koala", "koala", "baize"],
            "valid": [True, False, True, True],
            "chosen_is_a": [False, False, True, True],
        }
    )
    got = wins_from_judgments(judgments, presentations="prompt1").set_index("candidate")
    assert got.loc["baize", "wins"] == 2 and got.loc["baize", "appearances"] == 2
    assert got.loc["vicuna", "wins"] == 0 and got.loc["vicuna", "appearances"] == 2
    assert got.loc["koala", "score"] == 0  # shown twice, never won (one answer was invalid)
    # Both presentations (the default): the prompt-2 call counts too, vicuna wins it.
    both = wins_from_judgments(judgments).set_index("candidate")
    assert both.loc["vicuna", "wins"] == 1 and both.loc["vicuna", "appearances"] == 3
    assert both.loc["baize", "wins"] == 2 and both.loc["baize", "appearances"] == 3
    with pytest.raises(ValueError, match="unknown presentation rule"):
        wins_from_judgments(judgments, presentations="prompt2")


def _order_run(a_first: list[bool], *, judge) -> pd.DataFrame:
    """One instruction, the 6 pairs of ORDER (a = the earlier key), both presentations.

    ``a_first[i]``: prompt 1 of pair i shows its response a first (prompt 2 swaps);
    ``judge(first_key, second_key)`` returns the slot it picks ("first"/"second").
    """
    rows = []
    pairs = [(ORDER[i], ORDER[j]) for i in range(4) for j in range(i + 1, 4)]
    for (a, b), first_is_a in zip(pairs, a_first, strict=True):
        for presentation in (1, 2):
            slot1_is_a = first_is_a if presentation == 1 else not first_is_a
            shown = (a, b) if slot1_is_a else (b, a)
            picked = judge(*shown)
            rows.append(
                {
                    "judge": "j",
                    "condition": "order",
                    "instruction": 0,
                    "presentation": presentation,
                    "cand_a": a,
                    "cand_b": b,
                    "valid": True,
                    "chosen_is_a": (picked == "first") == slot1_is_a,
                }
            )
    return pd.DataFrame(rows)


def test_a_position_biased_judge_ranks_by_canonical_order_only_under_the_authors_rule():
    """Hand-worked: a judge that always picks the first slot, on the 6 pairs of 4 candidates.

    Authors' plan and rule (prompt 1 shows a first; prompt-1 wins): vicuna wins its 3
    pairs, baize 2, koala 1, alpaca 0, so the "ranking" is exactly the canonical order.
    Both presentations: every candidate wins 3 of its 6 appearances (score 1/2), so the
    judge has no preference to show and the ranking is one tie.
    """
    always_first = lambda first, second: "first"  # noqa: E731
    canonical = _order_run([True] * 6, judge=always_first)
    authors = wins_from_judgments(canonical, presentations="prompt1").set_index("candidate")
    assert authors["wins"].to_dict() == {"vicuna": 3, "baize": 2, "koala": 1, "alpaca": 0}
    ranks = rankings_by(authors.reset_index(), group=["instruction"], tie_break="alpha")
    assert ranks[0] == ORDER  # T1 (alphabetical) ties cannot explain it: the wins do
    for plan in ([True] * 6, [True, False, True, False, True, False]):
        both = wins_from_judgments(_order_run(plan, judge=always_first)).set_index("candidate")
        assert set(both["wins"]) == {3} and set(both["appearances"]) == {6} and set(both["score"]) == {0.5}
        assert rankings_by(both.reset_index(), group=["instruction"], tie_break="tie-aware")[0] == [frozenset(ORDER)]


def test_both_presentations_keep_a_real_preference():
    """Hand-worked: a judge that prefers the earlier key (vicuna > baize > koala > alpaca) whatever
    the slot wins 2 x (3, 2, 1, 0) = (6, 4, 2, 0) of 6 appearances each under both presentations."""
    prefers_earlier = lambda first, second: "first" if ORDER.index(first) < ORDER.index(second) else "second"  # noqa: E731
    got = wins_from_judgments(_order_run([True, False, False, True, True, False], judge=prefers_earlier))
    got = got.set_index("candidate")
    assert got["wins"].to_dict() == {"vicuna": 6, "baize": 4, "koala": 2, "alpaca": 0}
    assert got.loc["baize", "score"] == pytest.approx(4 / 6)
