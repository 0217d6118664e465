"""Length and self-preference against gold labels (analysis.metrics.gold_reference): by hand, and by
simulation the way the validity harness tests a claim: judges with no bias, counted false claims."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student_t

from analysis.metrics.gold_reference import gold_reference
from analysis.metrics.reference import reference_rows
from analysis.summary.claims import reference_claim
from tests.analysis.test_reference import _judgments, _votes


def test_a_worked_example_by_hand():
    # 6 pairs over 3 instructions (2 each). Gold is the target on pairs 0, 2, 4 (group 1), not on 1, 3, 5.
    shares = np.array([1.0, 0.5, 0.5, 0.0, 1.0, 0.5])
    gold_is_target = np.array([True, False, True, False, True, False])
    clusters = np.array([0, 0, 1, 1, 2, 2])
    # m1 = (1 + .5 + 1) / 3 = 5/6, m0 = (.5 + 0 + .5) / 3 = 1/3: value = (5/6 + 1/3) / 2 - 1/2 = 1/12.
    # Influence: group 1 (y - 5/6) / 6 -> [1/36, -1/18, 1/36]; group 0 (y - 1/3) / 6 -> [1/36, -1/18, 1/36].
    # Per instruction: [1/36 + 1/36, -1/18 - 1/18, 1/36 + 1/36] = [1/18, -1/9, 1/18].
    # se^2 = 3/2 x (1/324 + 1/81 + 1/324) = 3/2 x 6/324 = 1/36: se = 1/6; t = 0.5 on 2 df.
    import analysis.metrics.gold_reference as module

    old = module.MIN_GOLD_PAIRS, module.MIN_PER_GROUP
    module.MIN_GOLD_PAIRS, module.MIN_PER_GROUP = 6, 3
    try:
        result = gold_reference(shares, gold_is_target, clusters)
    finally:
        module.MIN_GOLD_PAIRS, module.MIN_PER_GROUP = old
    assert result is not None
    assert result["value"] == pytest.approx(1 / 12) and result["se"] == pytest.approx(1 / 6)
    assert result["p_value"] == pytest.approx(2 * student_t.sf(0.5, 2))
    q = student_t.ppf(0.975, 2)
    assert result["ci95"] == pytest.approx([max(1 / 12 - q / 6, -0.5), min(1 / 12 + q / 6, 0.5)])
    assert (result["share_when_gold_is_target"], result["share_when_gold_is_other"]) == pytest.approx((5 / 6, 1 / 3))


def _simulate(rng, *, instructions: int, per: int, pull: float, p_longer_correct: float) -> tuple:
    """A judge per instruction with its own accuracy (0.6-0.95), judging each gold pair twice: it
    picks the longer answer with probability ``pull``, else the correct one with its accuracy."""
    n = instructions * per
    clusters = np.repeat(np.arange(instructions), per)
    accuracy = rng.uniform(0.6, 0.95, instructions)[clusters]
    longer_correct = rng.random(n) < p_longer_correct
    picks = []
    for _ in range(2):
        pulled = rng.random(n) < pull
        correct = rng.random(n) < accuracy
        picks.append(np.where(pulled, True, correct == longer_correct))  # True: chose the longer
    shares = (picks[0].astype(float) + picks[1]) / 2
    return shares, longer_correct, clusters


@pytest.mark.parametrize("p_longer_correct", [0.5, 0.75, 0.9])
def test_a_judge_that_only_follows_correctness_is_rarely_called_biased(p_longer_correct):
    """The null: no pull, whatever the accuracy and however often longer answers are correct.
    Measured: false claims (p < 0.05, toward) in 600 simulated studies of 40 instructions x 5 pairs:
    4.0%, 2.5% and 1.8% where longer answers are correct 50%, 75% and 90% of the time; the
    interval covered 0 in 94%, 95% and 93%."""
    rng = np.random.default_rng(7)
    false, covered, runs = 0, 0, 600
    for _ in range(runs):
        result = gold_reference(*_simulate(rng, instructions=40, per=5, pull=0.0, p_longer_correct=p_longer_correct))
        assert result is not None
        false += result["p_value"] < 0.05 and result["ci95"][0] > 0
        covered += result["ci95"][0] <= 0 <= result["ci95"][1]
    # One-sided claims from a two-sided 5% test: about 2.5% expected; the raw rate would be ~100%
    # at 0.9 (a judge at 80% accuracy chooses longer answers ~74% of the time).
    assert false / runs <= 0.045, false / runs
    assert covered / runs >= 0.92, covered / runs


def test_a_ten_percent_pull_toward_longer_answers_is_found():
    rng = np.random.default_rng(11)
    found = sum(
        (r := gold_reference(*_simulate(rng, instructions=150, per=5, pull=0.1, p_longer_correct=0.75)))["p_value"]
        < 0.05
        and r["ci95"][0] > 0
        for _ in range(300)
    )
    # 750 gold pairs; the estimate is pull / 2 = 0.05. Measured: 96% (83% at 500 pairs, 68% at 300).
    assert found / 300 >= 0.9, found / 300


def test_gold_comes_first_and_people_are_described_beside_it():
    judgments = _judgments(lambda pair, shown: True)  # always the longer answer (response a)
    votes = _votes(lambda pair: ("A", "B"))
    # Gold on every pair, the longer answer correct on two of every four.
    gold = pd.DataFrame({"pair": range(240), "gold_is_a": [p % 4 < 2 for p in range(240)]})
    rows = reference_rows(judgments, votes, gold)
    assert [(r["reference"], r["family"]) for r in rows] == [("gold", True), ("humans", False)]
    row = rows[0]
    assert row["value"] == pytest.approx(0.5) and row["share_when_gold_is_target"] == 1.0
    assert row["share_when_gold_is_other"] == 1.0 and row["n"] == 240 and row["clusters"] == 60
    assert row["ci95"][0] < 0.5  # a deterministic judge still gets an interval, not the point [0.5, 0.5]
    row["p_adjusted"] = row["p_value"]
    claim = reference_claim(row, correction="holm")
    assert claim["verdict"] == "biased"
    assert claim["text"].startswith(
        "biased toward longer answers whether or not they are the correct answer (gold labels): it chose them 1.00 "
        "when they are correct and 1.00 when they are not"
    )


def test_too_few_gold_pairs_leave_people_as_the_reference():
    judgments = _judgments(lambda pair, shown: True)
    gold = pd.DataFrame({"pair": range(20), "gold_is_a": [p % 2 == 0 for p in range(20)]})
    rows = reference_rows(judgments, _votes(lambda pair: ("A", "B")), gold)
    assert [(r["reference"], r["family"]) for r in rows] == [("humans", True)]
