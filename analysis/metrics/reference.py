"""Length and self-preference measured against a quality reference on the same pairs.

A judge that picks the better answer also picks the longer one whenever longer answers are
better, and its own system's answer whenever its system is better. Its raw
``salience_longer`` and ``egocentric`` rates therefore mix quality with bias, and a test of
them against 1/2 calls a judge that only judges quality "biased" (docs/methods.md,
"Length and self-preference against a reference"). Comparing the judge's raw rate with
people's on the same pairs is not enough either: where longer answers are better, a judge
that follows quality *more closely* than people also chooses them more often (the validity
harness: 56% false claims for a judge that answers like one sharp rater, at 5,250 pairs).

- Judge per pair: how many of its two presentations (both answered) chose the target
  response (the longer one; its own system's one). Both orders count, so a position effect
  cancels.
- Reference per pair: the counted decisive human votes on the pair in the un-cued conditions
  (plain, order) and how many chose the target (ties left out).
- Gold labels, where the study has them on at least 30 of the judge's pairs, come first
  (``analysis.metrics.gold_reference``): they need no model of people; the people row is then
  described beside the gold one. The other judges are **not** a reference: one biased judge in the
  pool shifts any consensus (mean or median) and makes an unbiased judge look biased the other
  way (the calibration study: an unbiased judge against a pool holding one 50% length-biased
  judge measured -0.08 [-0.10, -0.06], p = 5e-5, with the median).
- Estimate, test and interval: ``quality_matched.fit``, the judge's share for the target on
  pairs people split evenly, with the judge free to follow people's quality signal more or less
  closely; clusters are instructions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.metrics.agreement import TIE, vote_outcomes
from analysis.metrics.bias import pair_frame
from analysis.metrics.gold_reference import MIN_GOLD_PAIRS, gold_reference
from analysis.metrics.quality_matched import QualityMatched, fit
from annotations.biases import SWAP_CONFOUNDED, SWAP_REGISTRY
from annotations.vocabulary import Condition

MIN_REFERENCE_PAIRS = 30  # below this many shared pairs a reference is not used
UNCUED = (Condition.PLAIN, Condition.ORDER)
# Which judge run each row reads: the order run (both presentations, nothing named), and the
# compassion run (real model names) for self-preference when names are shown.
# (annotations.biases: each confounded SwapBias's run and target; length first, the rows' order
# in every report so far.)
RUNS = {row: SWAP_REGISTRY[row].run for row in sorted(SWAP_CONFOUNDED, key=lambda r: r != "salience_longer")}
TARGETS = {row: SWAP_REGISTRY[row].target for row in SWAP_CONFOUNDED}


def judge_pair_rates(judgments: pd.DataFrame) -> pd.DataFrame:
    """One row per (judge, condition, pair) answered in both presentations: ``rate_a``, the share choosing a."""
    cols = ["judge", "self_key", "condition", "pair", "instruction", "cand_a", "cand_b", "len_a", "len_b"]
    if judgments.empty:
        return pd.DataFrame(columns=[*cols, "rate_a"])
    pairs = pair_frame(judgments)
    pairs = pairs[pairs["both_valid"]]
    rate_a = (pairs["chosen_is_a1"].astype(float) + pairs["chosen_is_a2"].astype(float)) / 2
    out = pairs.assign(rate_a=rate_a)
    return out[[*cols, "rate_a"]].reset_index(drop=True)


def human_pair_rates(answers: pd.DataFrame) -> pd.DataFrame:
    """Per pair, over counted decisive un-cued votes (ties left out): ``rate_a`` and ``votes``."""
    if answers.empty:
        return pd.DataFrame(columns=["pair", "rate_a", "votes"])
    uncued = answers[answers["condition"].isin(UNCUED)]
    outcome = vote_outcomes(uncued["choice"], uncued["arrangement"])
    # Decisive votes only: a tie counted as one half pulls people's rate toward 1/2, and a judge
    # that never ties would then look biased toward whatever people lean to (longer answers).
    score = outcome.map({"a": 1.0, "b": 0.0, TIE: np.nan})
    votes = uncued.assign(score=score)[score.notna()]
    return votes.groupby("pair", sort=True)["score"].agg(rate_a="mean", votes="size").reset_index()


def _target_is_a(rows: pd.DataFrame, bias: str) -> pd.Series:
    """Per pair row: True when the target is response a, False when b, NaN when there is none."""
    if bias == "salience_longer":
        longer_a = rows["len_a"] > rows["len_b"]
        return longer_a.where(rows["len_a"] != rows["len_b"])
    own_a = rows["cand_a"] == rows["self_key"]
    own_b = rows["cand_b"] == rows["self_key"]
    return own_a.where((own_a | own_b) & (rows["self_key"] != ""))


def _toward_target(rate_a: pd.Series, target_is_a: pd.Series) -> pd.Series:
    return rate_a.where(target_is_a.astype(bool), 1 - rate_a)


def reference_rows(
    judgments: pd.DataFrame, human_answers: pd.DataFrame, gold: pd.DataFrame | None = None
) -> list[dict]:
    """Rows per (judge, confounded bias): against gold labels (at least 30 gold pairs) and against
    people (at least 30 pairs they voted on). Where both exist the gold row carries the claim and
    the people row is described beside it (``family`` false); see the module docstring."""
    judges = judge_pair_rates(judgments)
    if judges.empty:
        return []
    people = human_pair_rates(human_answers).set_index("pair")
    gold = gold if gold is not None else pd.DataFrame(columns=["pair", "gold_is_a"])
    rows = []
    for (name, condition), mine in judges.groupby(["judge", "condition"], sort=True):
        for bias, run in RUNS.items():
            if condition != run:
                continue
            target = _target_is_a(mine, bias)
            scoped = mine[target.notna()]
            if scoped.empty:
                continue
            target = target[target.notna()]
            candidates = (_against_gold(scoped, target, gold, bias), _against_people(scoped, target, people, bias))
            found = [row for row in candidates if row is not None]
            for row in found[1:]:  # the gold row, when there is one, is the claim
                row |= {"family": False, "role": "descriptive"}
            rows += [{"subject": name, "bias": bias, "condition": str(condition)} | row for row in found]
    return rows


def _against_gold(mine: pd.DataFrame, target: pd.Series, gold: pd.DataFrame, bias: str) -> dict | None:
    if gold.empty:
        return None
    gold_is_a = mine["pair"].map(gold.drop_duplicates("pair").set_index("pair")["gold_is_a"])
    on_gold = gold_is_a.notna()
    if int(on_gold.sum()) < MIN_GOLD_PAIRS:
        return None
    mine, target, gold_is_a = mine[on_gold], target[on_gold].astype(bool), gold_is_a[on_gold].astype(bool)
    shares = _toward_target(mine["rate_a"], target).to_numpy(dtype=float)
    gold_is_target = (gold_is_a == target).to_numpy()
    result = gold_reference(shares, gold_is_target, mine["instruction"].to_numpy())
    if result is None:
        return None
    words = TARGETS[bias]
    return result | {
        "reference": "gold",
        "reference_detail": f"{result['n']} gold pairs: {result['pairs_gold_is_target']} where the gold answer is "
        f"{words}, {result['pairs_gold_is_other']} where it is the other",
        "target": words,
        "even_rate": None,
        "sharpness": None,
        "judge_rate": float(shares.mean()),
        "reference_rate": float(gold_is_target.mean()),
        "p_adjusted": None,
        "family": True,
        "role": "claimed",
        "estimand": f"the mean of the judge's share of choices for {words} on gold pairs where the gold answer is "
        f"{words} ({result['share_when_gold_is_target']:.2f}) and where it is the other "
        f"({result['share_when_gold_is_other']:.2f}), minus 1/2: 0 for a judge that only follows correctness, "
        "at any accuracy",
        "test": f"two-sided cluster-robust t test of the estimate = 0 ({result['clusters']} instructions, "
        f"{result['df']} df)",
        "interval": f"cluster-robust (CR1) t interval over instructions, {result['df']} df; widened to the groups' "
        "Wilson intervals where every share is 0 or 1",
    }


def _against_people(mine: pd.DataFrame, target: pd.Series, people: pd.DataFrame, bias: str) -> dict | None:
    if people.empty:
        return None
    reference = _toward_target(mine["pair"].map(people["rate_a"]), target)
    shared = reference.notna()
    if int(shared.sum()) < MIN_REFERENCE_PAIRS:
        return None
    mine, target, reference = mine[shared], target[shared], reference[shared]
    votes = mine["pair"].map(people["votes"]).to_numpy(dtype=float)
    judge = _toward_target(mine["rate_a"], target).to_numpy(dtype=float)
    result = fit(
        people_target=np.round(reference.to_numpy(dtype=float) * votes),
        people_votes=votes,
        judge_target=np.round(judge * 2),  # of its two presentations
        judge_answers=np.full(judge.size, 2.0),
        clusters=mine["instruction"].to_numpy(),
    )
    if result is None:
        return None
    detail = f"{int(votes.sum())} decisive human votes on these pairs (plain and order conditions; ties left out)"
    return _row(result, float(judge.mean()), float(reference.mean()), "humans", detail, bias)


def _row(result: QualityMatched, judge_rate: float, reference_rate: float, name: str, detail: str, bias: str) -> dict:
    target = TARGETS[bias]
    return {
        "reference": name,
        "reference_detail": detail,
        "target": target,
        # The tested effect: the judge's share for the target where people split evenly, minus 1/2.
        "value": result.even_rate - 0.5,
        "ci95": [x - 0.5 for x in result.even_ci95],
        "even_rate": result.even_rate,
        "sharpness": result.sharpness,
        "judge_rate": judge_rate,
        "reference_rate": reference_rate,
        "n": result.pairs,
        "clusters": result.clusters,
        "p_value": result.p_value,
        "p_adjusted": None,
        "family": True,
        "estimand": f"the judge's share of choices for {target} on pairs the {name} split evenly, minus 1/2, "
        f"from a model in which the judge may follow what the {name} see in a pair more or less closely "
        f"than they do (fitted: {result.sharpness:.2f} times as closely) without that counting as a preference",
        "test": f"two-sided cluster-robust t test of the preference term ({result.clusters} instructions, "
        f"{result.df} df)",
        "interval": f"cluster-robust (CR1 sandwich) t interval over instructions, {result.df} df, mapped "
        "through the normal distribution function",
    }
