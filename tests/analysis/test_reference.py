"""Length and self-preference against people on the same pairs (analysis.metrics.reference), by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import ndtr

from analysis.metrics.reference import human_pair_rates, reference_rows
from analysis.summary.claims import reference_claim

N_INSTRUCTIONS = 60
PAIRS_PER_INSTRUCTION = 4  # 240 pairs: response a is always the longer one


def _judgments(chooses_a) -> pd.DataFrame:
    """One judge, order run, both presentations; ``chooses_a(pair, presentation)`` -> response a chosen."""
    rows = []
    for pair in range(N_INSTRUCTIONS * PAIRS_PER_INSTRUCTION):
        for presentation, slot1_is_a in ((1, True), (2, False)):
            chose_a = chooses_a(pair, presentation)
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
                    "arrangement": "ab",
                    "cue_slot": None,
                    "choice": choice,
                }
            )
    return pd.DataFrame(rows)


def test_ties_are_left_out_of_peoples_rate():
    rates = human_pair_rates(_votes(lambda pair: ("A", "B", "T", "T")))
    assert rates["rate_a"].tolist() == [0.5] * 240 and rates["votes"].tolist() == [2] * 240


def test_a_judge_that_always_picks_the_longer_answer_is_claimed_against_split_people():
    [row] = reference_rows(_judgments(lambda pair, shown: True), _votes(lambda pair: ("A", "B")))
    # People split every pair evenly; the judge chose the longer answer on all 240 of them.
    assert (row["reference"], row["n"], row["clusters"]) == ("humans", 240, 60)
    assert row["judge_rate"] == 1.0 and row["reference_rate"] == 0.5
    assert row["even_rate"] > 0.99 and row["value"] == pytest.approx(row["even_rate"] - 0.5)
    assert row["ci95"][0] > 0 and row["p_value"] < 0.001
    # Every answer chose the longer one: the model's interval would be the point [1, 1]; finite
    # data give Wilson's interval for 240 of 240 pairs instead (the rule of three's neighbour).
    low = (240 + 1.96**2 / 2 - 1.96 * np.sqrt(1.96**2 / 4)) / (240 + 1.96**2) - 0.5
    assert row["ci95"][0] == pytest.approx(low, abs=1e-3) and row["ci95"][0] < row["value"]
    row["p_adjusted"] = row["p_value"]
    claim = reference_claim(row, correction="holm")
    assert claim["verdict"] == "biased"
    assert claim["text"].startswith("biased toward longer answers at equal quality as people judge it")


def test_following_quality_more_closely_than_people_is_not_a_length_bias():
    # Longer answers are better here: people's preference for the longer answer is z ~ N(0.8, 0.7^2)
    # per pair, a vote chooses it with probability Phi(z). The judge only follows quality, twice
    # as sharply as people: Phi(2 z). No preference of its own.
    rng = np.random.default_rng(7)
    z = rng.normal(0.8, 0.7, size=N_INSTRUCTIONS * PAIRS_PER_INSTRUCTION)
    judge = rng.random((z.size, 2)) < ndtr(2 * z)[:, None]
    people = rng.random((z.size, 6)) < ndtr(z)[:, None]
    [row] = reference_rows(
        _judgments(lambda pair, shown: bool(judge[pair, shown - 1])),
        _votes(lambda pair: tuple("A" if v else "B" for v in people[pair])),
    )
    # Raw rates alone would read as a length preference: the judge chooses the longer answer
    # more often than people do on the same pairs.
    assert row["judge_rate"] > row["reference_rate"] + 0.04
    # The model sees a judge sharper than people (k > 1) and no preference where people are even.
    assert row["sharpness"] > 1.3 and row["ci95"][0] < 0 < row["ci95"][1]
    row["p_adjusted"] = row["p_value"]
    assert reference_claim(row, correction="holm")["verdict"] == "no_evidence"


def test_choosing_longer_answers_less_than_people_is_reported_not_claimed():
    [row] = reference_rows(_judgments(lambda pair, shown: pair % 4 == 0), _votes(lambda pair: ("A", "B")))
    assert row["value"] < 0 and row["p_value"] < 0.05 and row["ci95"][1] < 0
    row["p_adjusted"] = row["p_value"]
    claim = reference_claim(row, correction="holm")
    assert claim["verdict"] == "no_evidence" and "less often than an unbiased judge would" in claim["text"]


def test_without_human_votes_there_is_no_reference_row():
    assert reference_rows(_judgments(lambda pair, shown: True), _votes(lambda pair: ())) == []
