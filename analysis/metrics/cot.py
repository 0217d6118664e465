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

People (``human_cot_row``): the crowd ``cot`` condition is the crowd order design (each pair twice,
the positions swapped, one worker) with a written reasoning required before the choice, and with
the same design seed it holds the order run's pairs. Per rater and pair, ``consistent`` is
``consistency.human_consistency_records``'s rule and the gold score JudgeBench's rule over the two
answers (a tie scores 0); each is averaged per (run, pair) over the raters who answered it, the
runs are joined on the pair, and d = cot mean - order mean per pair goes through the same test,
interval and Holm family (people's two outcomes) as a judge's. Different raters answer the two
runs, and a rater who answers several instructions links them, which the instruction-level test
does not model.

Judge minus people (``minus_humans`` on each judge outcome, when people have both runs): the
judge's effect minus people's on the pairs both have, with the CR1 t interval and test of
``cluster_tests.ratio_difference_t`` over instructions. Descriptive: no correction, no claim.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.metrics.battery import HUMANS
from analysis.metrics.bias import pair_frame
from analysis.metrics.cluster_tests import cluster_t, ratio_difference_t, sign_flip_p
from analysis.metrics.consistency import judge_consistent
from analysis.metrics.human_bias import twin_frame
from analysis.metrics.stats import holm
from annotations.vocabulary import Condition, CrowdChoice, JudgeSlot

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


def _outcome(paired: pd.DataFrame) -> dict:
    """``_compare`` of one outcome's per-pair frame (``without``, ``with_cot``, ``instruction``), with both means."""
    result = _compare(paired["with_cot"] - paired["without"], paired["instruction"])
    result.update(
        without=float(paired["without"].mean()) if len(paired) else None,
        with_cot=float(paired["with_cot"].mean()) if len(paired) else None,
    )
    return result


def _judge_paired(mine: pd.DataFrame) -> dict[str, pd.DataFrame] | None:
    """One judge's per-pair outcomes of both runs, indexed by pair; None without both runs."""
    runs = {c: r.set_index("pair") for c, r in mine.groupby("condition")}
    if set(runs) != set(RUNS):
        return None
    plain, cot = runs[Condition.ORDER], runs[Condition.COT]
    both = plain.join(cot, lsuffix="_plain", rsuffix="_cot", how="inner")
    answered = both[both["answered_plain"] & both["answered_cot"]]
    on_gold = both[both["score_plain"].notna() & both["score_cot"].notna()]
    return {
        "consistency": _side_by_side(answered, "consistent").astype({"without": int, "with_cot": int}),
        "gold_accuracy": _side_by_side(on_gold, "score"),
    }


def _side_by_side(both: pd.DataFrame, column: str) -> pd.DataFrame:
    """One outcome of the two runs joined per pair (suffixes _plain, _cot): without, with_cot, instruction."""
    return pd.DataFrame(
        {
            "without": both[f"{column}_plain"],
            "with_cot": both[f"{column}_cot"],
            "instruction": both["instruction_plain"],
        }
    )


def _human_paired(answers: pd.DataFrame, gold: pd.DataFrame) -> tuple[dict[str, pd.DataFrame], int] | None:
    """People's per-pair outcomes (means over raters) of both runs, indexed by pair, and the raters on them.

    None when people did not answer both the order and the cot condition.
    """
    runs = answers[answers["condition"].isin(RUNS)] if not answers.empty else answers
    if runs.empty or set(runs["condition"]) != set(RUNS):
        return None
    twins = twin_frame(runs)
    if twins.empty or set(twins["condition"]) != set(RUNS):
        return None
    # chose_a is <NA> for a tie: a tie and a letter are not the same choice, two ties are.
    same_response = (twins["chose_a1"] == twins["chose_a2"]).fillna(False).astype(bool)
    tie_twice = (twins["choice1"] == CrowdChoice.TIE) & (twins["choice2"] == CrowdChoice.TIE)
    twins["consistent"] = (same_response | tie_twice).astype(float)
    gold_is_a = twins["pair"].map(gold.set_index("pair")["gold_is_a"]) if not gold.empty else twins["pair"] * np.nan
    on_gold = gold_is_a.notna().to_numpy()
    gold_a = gold_is_a.where(gold_is_a.notna(), False).astype(bool).to_numpy()
    score = np.zeros(len(twins), dtype=int)
    for k in (1, 2):
        chose_a = twins[f"chose_a{k}"]
        letter = chose_a.notna().to_numpy()
        right = chose_a.fillna(False).astype(bool).to_numpy() == gold_a
        score += np.where(letter, np.where(right, 1, -1), 0)
    twins["score"] = np.where(on_gold, (score > 0).astype(float), np.nan)
    per_pair = twins.groupby(["condition", "pair"], sort=True).agg(
        consistent=("consistent", "mean"), score=("score", "mean"), instruction=("instruction", "first")
    )
    plain, cot = per_pair.loc[Condition.ORDER], per_pair.loc[Condition.COT]
    both = plain.join(cot, lsuffix="_plain", rsuffix="_cot", how="inner")
    on_gold_pairs = both[both["score_plain"].notna() & both["score_cot"].notna()]
    paired = {"consistency": _side_by_side(both, "consistent"), "gold_accuracy": _side_by_side(on_gold_pairs, "score")}
    raters = int(twins.loc[twins["pair"].isin(both.index), "rater"].nunique())
    return paired, raters


def _minus_humans(judge: pd.DataFrame, people: pd.DataFrame) -> dict | None:
    """The judge's effect minus people's on the pairs both have; None when either has no pair."""
    if judge.empty or people.empty:
        return None
    shared = judge.index.intersection(people.index)
    mine, theirs = judge.loc[shared], people.loc[shared]
    result: dict = {
        "effect": None, "ci95": None, "p_value": None, "n": int(len(shared)),
        "instructions": int(mine["instruction"].nunique()),
    }  # fmt: skip
    if shared.empty:
        result["reason"] = "no pair in both the judge's runs and people's"
        return result
    ones = np.ones(len(shared))
    t = ratio_difference_t(
        ((mine["with_cot"] - mine["without"]).to_numpy(float), ones, mine["instruction"].to_numpy()),
        ((theirs["with_cot"] - theirs["without"]).to_numpy(float), ones, theirs["instruction"].to_numpy()),
    )
    finite = bool(np.all(np.isfinite(t.ci95)))
    result.update(
        effect=float(t.effect),
        ci95=[float(x) for x in t.ci95] if finite else None,
        p_value=float(t.p_value) if np.isfinite(t.p_value) else None,
    )
    if not finite:
        result["reason"] = f"{result['instructions']} instruction(s): an interval needs 2"
    return result


def human_cot_row(answers: pd.DataFrame, gold: pd.DataFrame) -> dict | None:
    """People's row (subject ``HUMANS``): the two outcomes, cot minus order, per pair averaged over raters.

    ``answers``: ``loaders.human_pairwise_frame``; ``gold``: ``loaders.gold_pairs_frame`` (may be
    empty). None when people did not answer both the order and the cot condition.
    """
    found = _human_paired(answers, gold)
    if found is None:
        return None
    paired, raters = found
    consistency, accuracy = _outcome(paired["consistency"]), _outcome(paired["gold_accuracy"])
    if paired["consistency"].empty:
        consistency["reason"] = "no pair answered in both runs"
    if paired["gold_accuracy"].empty:
        accuracy["reason"] = "no gold labels on the pairs both runs answered"
    _claim([consistency, accuracy])
    return {"judge": HUMANS, "raters": raters, "consistency": consistency, "gold_accuracy": accuracy}


def cot_rows(judgments: pd.DataFrame, gold: pd.DataFrame, answers: pd.DataFrame | None = None) -> list[dict]:
    """Per judge with both a ``cot`` and an ``order`` run: the two outcomes, cot minus without.

    ``judgments``: ``loaders.judgments_frame``; ``gold``: ``loaders.gold_pairs_frame`` (may be empty).
    ``answers``: ``loaders.human_pairwise_frame``; when people answered both runs, each outcome gets
    ``minus_humans`` (the judge's effect minus people's on the pairs both have). People's own row is
    ``human_cot_row``.
    """
    people = _human_paired(answers, gold) if answers is not None else None
    per_pair = _per_pair(judgments, gold)
    rows = []
    for judge, mine in per_pair.groupby("judge", sort=True):
        paired = _judge_paired(mine)
        if paired is None:
            continue
        consistency, accuracy = _outcome(paired["consistency"]), _outcome(paired["gold_accuracy"])
        if paired["gold_accuracy"].empty:
            accuracy["reason"] = "no gold labels on the pairs both runs judged"
        _claim([consistency, accuracy])
        if people is not None:
            for outcome, result in (("consistency", consistency), ("gold_accuracy", accuracy)):
                result["minus_humans"] = _minus_humans(paired[outcome], people[0][outcome])
        rows.append({"judge": judge, "consistency": consistency, "gold_accuracy": accuracy})
    return rows
