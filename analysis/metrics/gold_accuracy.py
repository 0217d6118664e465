"""Accuracy against gold labels (``Pair.gold_response``), by JudgeBench's rule over presentations.

JudgeBench (Tan et al., 2024) judges each pair in both orders and scores the presentations a
subject saw: +1 for each choice of the gold answer, -1 for each choice of the other, 0 for a
tie or an invalid output; the pair is correct when the sum is > 0. So a subject that picks the
same slot in both orders (one right, one wrong) is not credited, a tie next to a right choice
is, and an invalid output is never rewarded (it stays in n as a 0).

- **Judges**, per (judge, gold pair): the calls of the order run (both presentations) when the
  judge has any there, else of its plain run (one presentation). The cued and named runs
  (bandwagon, attentional, compassion, ...) never count: their cue is what they measure.
- **Humans**, per (rater, gold pair): the rater's counted votes in the order condition (the
  twin tasks, both presentations) when there are any, else in the plain condition; cued
  conditions never count. The unit is one person's judgement of a pair, the analogue of one
  judge's: pooling every person's votes on a pair into one sum would score the crowd's
  majority, which improves with the number of raters and is not comparable to one judge.
  Gold quality-control tasks (``Task.role`` gold) are not data: workers are screened on
  them, so accuracy there is raised by selection.

value = correct units / units. Interval: ``cluster_tests.clustered_wilson``, the CR1 variance
over instructions (humans: two-way over raters and instructions), Wilson at n / deff with t on
min(clusters) - 1 df; no interval from one instruction.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.special import stdtrit

from analysis.metrics.agreement import vote_outcomes
from analysis.metrics.cluster_tests import clustered_wilson
from annotations.vocabulary import Arrangement, Condition, JudgeSlot

# The runs a gold pair is read from, the preferred first: both presentations, then one.
RUNS = (Condition.ORDER, Condition.PLAIN)
SLOTS = (JudgeSlot.FIRST, JudgeSlot.SECOND)
HUMANS = "humans"
UNIT_COLUMNS = ["subject", "rater", "pair", "instruction", "category", "run", "score", "presentations", "both_orders"]


def judge_gold_units(judgments: pd.DataFrame, gold: pd.DataFrame) -> pd.DataFrame:
    """One row per (judge, gold pair) it was called on: the JudgeBench ``score`` and what it read.

    ``judgments``: ``loaders.judgments_frame``; ``gold``: ``loaders.gold_pairs_frame``.
    """
    if judgments.empty or gold.empty:
        return pd.DataFrame(columns=UNIT_COLUMNS)
    calls = judgments[judgments["condition"].isin(RUNS) & judgments["pair"].isin(gold["pair"])]
    if calls.empty:
        return pd.DataFrame(columns=UNIT_COLUMNS)
    gold_is_a = calls["pair"].map(gold.set_index("pair")["gold_is_a"]).astype(bool)
    # A tie (the verdict formats' "tie") and an invalid output choose no slot: 0.
    decisive = calls["valid"].astype(bool) & calls["choice"].isin(SLOTS)
    score = np.where(decisive, np.where(calls["chosen_is_a"].astype(bool) == gold_is_a, 1, -1), 0)
    calls = calls.assign(subject=calls["judge"], rater=calls["judge"], score=score, shown_a=calls["slot1_is_a"])
    return _units(calls, gold)


def human_gold_units(answers: pd.DataFrame, gold: pd.DataFrame) -> pd.DataFrame:
    """One row per (rater, gold pair) the rater voted on un-cued: the JudgeBench ``score`` of their votes.

    ``answers``: ``loaders.human_pairwise_frame`` (counted work, study items only).
    """
    if answers.empty or gold.empty:
        return pd.DataFrame(columns=UNIT_COLUMNS)
    votes = answers[answers["condition"].isin(RUNS) & answers["pair"].isin(gold["pair"])]
    if votes.empty:
        return pd.DataFrame(columns=UNIT_COLUMNS)
    gold_side = np.where(votes["pair"].map(gold.set_index("pair")["gold_is_a"]).astype(bool), "a", "b")
    outcome = vote_outcomes(votes["choice"], votes["arrangement"])  # "a", "b" or "tie"
    score = np.where(outcome == gold_side, 1, np.where(outcome.isin(["a", "b"]), -1, 0))
    votes = votes.assign(subject=HUMANS, score=score, shown_a=votes["arrangement"] == Arrangement.AB)
    return _units(votes, gold)


def _units(rows: pd.DataFrame, gold: pd.DataFrame) -> pd.DataFrame:
    """Sum the scores per (subject, rater, pair) over the preferred run that has rows for it."""
    rank = rows["condition"].map({run: k for k, run in enumerate(RUNS)})
    keys = ["subject", "rater", "pair"]
    rows = rows[rank == rank.groupby([rows[k] for k in keys]).transform("min")]
    rows = rows.assign(shown_a=rows["shown_a"].astype(bool), shown_b=~rows["shown_a"].astype(bool))
    out = (
        rows.groupby(keys, sort=True)
        .agg(
            instruction=("instruction", "first"),
            run=("condition", "first"),
            score=("score", "sum"),
            presentations=("score", "size"),
            saw_a_first=("shown_a", "max"),
            saw_b_first=("shown_b", "max"),
        )
        .reset_index()
    )
    out["category"] = out["pair"].map(gold.set_index("pair")["category"]).fillna("")
    out["both_orders"] = out["saw_a_first"] & out["saw_b_first"]
    return out[UNIT_COLUMNS]


@dataclass(frozen=True)
class GoldAccuracy:
    value: float  # correct units / units
    n: int  # units: gold pairs (judges) or rater x gold pair (humans)
    correct: int
    pairs: int  # distinct gold pairs
    instructions: int
    raters: int
    both_orders: int  # units read in both presentations
    ci95: list[float] | None
    df: int | None
    design_effect: float | None
    interval: str


def gold_accuracy(units: pd.DataFrame, *, two_way: bool) -> GoldAccuracy:
    """Accuracy over ``units`` (rows of ``judge_gold_units`` / ``human_gold_units``) with its clustered interval.

    ``two_way``: cluster by raters and instructions (humans, when there are two raters or more).
    """
    correct = (units["score"].to_numpy() > 0).astype(float)
    instruction_codes, instructions = pd.factorize(units["instruction"])
    rater_codes, raters = pd.factorize(units["rater"])
    n_instructions, n_raters = len(instructions), len(raters)
    two_way = two_way and n_raters >= 2
    result = GoldAccuracy(
        value=float(correct.mean()),
        n=int(correct.size),
        correct=int(correct.sum()),
        pairs=int(units["pair"].nunique()),
        instructions=n_instructions,
        raters=n_raters,
        both_orders=int(units["both_orders"].sum()),
        ci95=None,
        df=None,
        design_effect=None,
        interval="no interval: the gold pairs come from one instruction (a clustered interval needs at least 2)",
    )
    if n_instructions < 2:
        return result
    codes = [rater_codes, instruction_codes] if two_way else [instruction_codes]
    df = (min(n_raters, n_instructions) if two_way else n_instructions) - 1
    ci95, deff = clustered_wilson(correct, codes, float(stdtrit(df, 0.975)))
    clusters = "two-way over raters and instructions" if two_way else "over instructions"
    return replace(
        result,
        ci95=ci95,
        df=df,
        design_effect=deff,
        interval=f"cluster-robust (CR1) variance {clusters}; Wilson at the effective n = n / design effect "
        f"(>= 1), t on {df} df",
    )
