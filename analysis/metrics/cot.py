"""``cot``: what asking a judge to think step by step changes, on the same pairs.

CALM (Ye et al., 2025) reads chain-of-thought as a bias of the judging *procedure*: the same
pairs judged with and without a "think step by step" instruction. Here the ``cot`` run is the
order run (both presentations, the answers swapped) with that instruction in place of "do not
explain", so every pair the judge saw in both runs gives a paired comparison:

- ``consistency``: the pair judged the same way in both presentations (``consistency.judge_consistent``:
  the same response twice, or a tie twice), with cot minus without. n = the pairs both runs
  answered (both prompts of both runs gave a verdict), so an invalid output changes nothing.
- ``gold_accuracy``: on gold pairs, JudgeBench's rule per run (+1 for each presentation that chose
  the gold answer, -1 for the other, 0 for a tie or no verdict; correct when the sum is > 0),
  with cot minus without. n = the gold pairs both runs judged (an invalid output stays in as a 0,
  as in ``gold_accuracy``).

Each is the mean of per-pair differences d in {-1, 0, 1}. Test: the sign-flip test of
sum(d) over instructions (``cluster_tests.sign_flip_p``), Holm-adjusted over the judge's two
outcomes (one family per judge, as the bias rows); interval: the cluster-robust (CR1) t interval
over instructions (``cluster_tests.cluster_t``). A change is claimed when the adjusted p is below
0.05 and the interval excludes 0; with fewer than ``MIN_INSTRUCTIONS`` instructions nothing is.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.metrics.bias import pair_frame
from analysis.metrics.cluster_tests import cluster_t, sign_flip_p
from analysis.metrics.consistency import judge_consistent
from analysis.metrics.stats import holm
from annotations.vocabulary import Condition, JudgeSlot

MIN_INSTRUCTIONS = 5
ALPHA = 0.05
OUTCOMES = ("consistency", "gold_accuracy")
RUNS = (Condition.ORDER, Condition.COT)


def _per_pair(judgments: pd.DataFrame, gold: pd.DataFrame) -> pd.DataFrame:
    """One row per (judge, run, pair): consistent, answered, gold score (NaN off gold pairs)."""
    calls = judgments[judgments["condition"].isin(RUNS)]
    if calls.empty:
        return pd.DataFrame(columns=["judge", "condition", "pair", "instruction", "answered", "consistent", "score"])
    pairs = pair_frame(calls)
    out = pairs[["judge", "condition", "pair", "instruction"]].copy()
    out["answered"] = pairs["answered"].astype(bool)
    out["consistent"] = judge_consistent(pairs).astype(bool)
    out["score"] = np.nan
    if not gold.empty:
        gold_is_a = pairs["pair"].map(gold.set_index("pair")["gold_is_a"])
        on_gold = gold_is_a.notna()
        score = pd.Series(0, index=pairs.index)
        for k in (1, 2):
            decisive = pairs[f"valid{k}"] & pairs[f"choice{k}"].isin((JudgeSlot.FIRST, JudgeSlot.SECOND))
            right = pairs[f"chosen_is_a{k}"] == gold_is_a.fillna(False).astype(bool)
            score += np.where(decisive, np.where(right, 1, -1), 0)
        out.loc[on_gold, "score"] = (score[on_gold] > 0).astype(float)
    return out


def _compare(d: pd.Series, instruction: pd.Series) -> dict:
    """Mean of the per-pair differences, with its test over instructions and its interval."""
    d = d.astype(float).to_numpy()
    codes = instruction.to_numpy()
    n, clusters = int(d.size), int(pd.unique(codes).size)
    result: dict = {
        "n": n, "instructions": clusters, "effect": None, "ci95": None, "p_value": None, "p_holm": None, "claim": None,
    }  # fmt: skip
    if n == 0:
        result["reason"] = "no pair judged in both runs"
        return result
    t = cluster_t(d, np.ones(n), [codes])
    per_instruction = pd.Series(d).groupby(codes).sum().to_numpy()
    p = sign_flip_p(per_instruction)
    result.update(effect=t.effect, ci95=None if not np.isfinite(t.ci95[0]) else t.ci95, p_value=p)
    if clusters < MIN_INSTRUCTIONS:
        result["reason"] = f"{clusters} instruction(s): a change is claimed from {MIN_INSTRUCTIONS}"
    return result


def _claim(outcomes: list[dict]) -> None:
    """Holm over one judge's tested outcomes, then the claim where the test and the interval agree."""
    tested = [r for r in outcomes if r["p_value"] is not None and "reason" not in r]
    for r, adjusted in zip(tested, holm(np.array([r["p_value"] for r in tested])), strict=True):
        r["p_holm"] = float(adjusted)
        ci = r["ci95"]
        if adjusted < ALPHA and ci is not None and (ci[0] > 0 or ci[1] < 0):
            r["claim"] = "higher" if r["effect"] > 0 else "lower"


def cot_rows(judgments: pd.DataFrame, gold: pd.DataFrame) -> list[dict]:
    """Per judge with both a ``cot`` and an ``order`` run: the two outcomes, cot minus without.

    ``judgments``: ``loaders.judgments_frame``; ``gold``: ``loaders.gold_pairs_frame`` (may be empty).
    """
    per_pair = _per_pair(judgments, gold)
    rows = []
    for judge, mine in per_pair.groupby("judge", sort=True):
        runs = {c: r.set_index("pair") for c, r in mine.groupby("condition")}
        if set(runs) != set(RUNS):
            continue
        plain, cot = runs[Condition.ORDER], runs[Condition.COT]
        both = plain.join(cot, lsuffix="_plain", rsuffix="_cot", how="inner")
        answered = both[both["answered_plain"] & both["answered_cot"]]
        consistency = _compare(
            answered["consistent_cot"].astype(int) - answered["consistent_plain"].astype(int),
            answered["instruction_plain"],
        )
        consistency.update(
            without=float(answered["consistent_plain"].mean()) if len(answered) else None,
            with_cot=float(answered["consistent_cot"].mean()) if len(answered) else None,
        )
        on_gold = both[both["score_plain"].notna() & both["score_cot"].notna()]
        accuracy = _compare(on_gold["score_cot"] - on_gold["score_plain"], on_gold["instruction_plain"])
        accuracy.update(
            without=float(on_gold["score_plain"].mean()) if len(on_gold) else None,
            with_cot=float(on_gold["score_cot"].mean()) if len(on_gold) else None,
        )
        if on_gold.empty:
            accuracy["reason"] = "no gold labels on the pairs both runs judged"
        _claim([consistency, accuracy])
        rows.append({"judge": judge, "consistency": consistency, "gold_accuracy": accuracy})
    return rows
