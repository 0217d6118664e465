"""Length and self-preference against people on the same pairs (analysis.metrics.reference), by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.metrics.reference import human_pair_rates, reference_rows
from analysis.summary.claims import reference_claim

N_INSTRUCTIONS = 10
PAIRS_PER_INSTRUCTION = 4  # 40 pairs: response a is always the longer one


def _judgments(chooses_a) -> pd.DataFrame:
    """One judge, order run, both presentations; ``chooses_a(pair)`` -> response a chosen in both."""
    rows = []
    for pair in range(N_INSTRUCTIONS * PAIRS_PER_INSTRUCTION):
        for presentation, slot1_is_a in ((1, True), (2, False)):
            chose_a = chooses_a(pair)
            rows.append(
                {
                    "judge": "j",
                    "self_key": "",
                    "job": 1,
                    "instruction": pair // PAIRS_PER_INSTRUCTION,
                    "pair": pair,
                    "cand_a": "x",
                    "cand_b": "y",
                    "len_a": 300,
                    "len_b": 100,
                    "condition": "order",
                    "presentation": presentation,
                    "slot1_is_a": slot1_is_a,
                    "choice": "first" if chose_a == slot1_is_a else "second",
                    "chosen_is_a": chose_a,
                    "valid": True,
                    "cue_slot": None,
                }
            )
    return pd.DataFrame(rows)


def _votes(choices_of) -> pd.DataFrame:
    """Human votes in the order condition: ``choices_of(pair)`` -> letters as shown under "ab"."""
    rows = []
    for pair in range(N_INSTRUCTIONS * PAIRS_PER_INSTRUCTION):
        for k, choice in enumerate(choices_of(pair)):
            rows.append(
                {
                    "rater": k,
                    "rater_label": f"r{k}",
                    "batch": 1,
                    "instruction": pair // PAIRS_PER_INSTRUCTION,
                    "condition": "order",
                    "pair_index": pair,
                    "position": k,
                    "pair": pair,
                    "resp_a": 2 * pair,
                    "resp_b": 2 * pair + 1,
                    "presentation": "ab",
                    "cue_slot": None,
                    "choice": choice,
                }
            )
    return pd.DataFrame(rows)


def test_ties_are_left_out_of_peoples_rate():
    rates = human_pair_rates(_votes(lambda pair: ("A", "B", "T", "T")))
    assert rates["rate_a"].tolist() == [0.5] * 40 and rates["votes"].tolist() == [2] * 40


def test_a_judge_that_always_picks_the_longer_answer_is_claimed_against_split_people():
    [row] = reference_rows(_judgments(lambda pair: True), _votes(lambda pair: ("A", "B")))
    # The judge chose the longer answer on all 40 pairs, people on half: +0.50 on every pair.
    assert (row["reference"], row["n"], row["clusters"]) == ("humans", 40, 10)
    assert row["judge_rate"] == 1.0 and row["reference_rate"] == 0.5 and row["value"] == pytest.approx(0.5)
    # Every instruction leans the same way: the exact sign-flip p over 10 clusters is 2 / 2^10.
    assert row["p_value"] == pytest.approx(2 / 1024)
    row["p_adjusted"] = row["p_value"]
    claim = reference_claim(row, correction="holm")
    assert claim["verdict"] == "biased" and claim["text"].startswith("biased toward longer answers, more than people")


def test_choosing_longer_answers_less_than_people_is_reported_not_claimed():
    [row] = reference_rows(_judgments(lambda pair: pair % 2 == 0), _votes(lambda pair: ("A", "A")))
    assert row["value"] == pytest.approx(-0.5) and row["p_value"] < 0.05
    row["p_adjusted"] = row["p_value"]
    claim = reference_claim(row, correction="holm")
    assert claim["verdict"] == "no_evidence" and "less often than people" in claim["text"]


def test_without_human_votes_there_is_no_reference_row():
    assert reference_rows(_judgments(lambda pair: True), _votes(lambda pair: ())) == []
