"""Length and self-preference measured against a quality reference on the same pairs.

A judge that picks the better answer also picks the longer one whenever longer answers are
better, and its own system's answer whenever its system is better. Its raw
``salience_longer`` and ``egocentric`` rates therefore mix quality with bias, and a test of
them against 1/2 calls a judge that only judges quality "biased" (docs/methods.md,
"Length and self-preference against a reference"). The estimand here removes quality the
only way the data allows: by asking whether the judge chooses the longer (own) answer **more
often than a reference does on the same pairs**.

- Judge rate per pair: the share of its two presentations (both answered) that chose the
  target response (the longer one; its own system's one). Averaging the two presentations
  removes any position effect.
- Reference rate per pair: the share of counted human votes on the pair, in the un-cued
  conditions (plain, order), that chose the target, over decisive votes (ties left out). Gold labels will
  come first once studies carry them. A judge that behaves like one more human rater has an
  expected difference of zero on every pair. The other judges are **not** a reference: one
  biased judge in the pool shifts any consensus (mean or median) and makes an unbiased judge
  look biased the other way (the calibration study: an unbiased judge against a pool holding
  one 50% length-biased judge measured -0.08 [-0.10, -0.06], p = 5e-5, with the median).
- Estimate: the mean over pairs of judge rate - reference rate; clusters are instructions.
  Test: the sign-flip permutation test of the per-instruction sums of the differences
  (``cluster_tests.sign_flip_p``); interval: cluster-robust (CR1) t interval on G - 1 df.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.metrics.agreement import TIE, vote_outcomes
from analysis.metrics.bias import pair_frame
from analysis.metrics.cluster_tests import DRAWS, EXACT_MAX, cluster_t, sign_flip_p
from annotations.vocabulary import Condition

MIN_REFERENCE_PAIRS = 30  # below this many shared pairs a reference is not used
UNCUED = (Condition.PLAIN, Condition.ORDER)
# Which judge run each row reads: the order run (both presentations, nothing named), and the
# compassion run (real model names) for self-preference when names are shown.
RUNS = {"salience_longer": Condition.ORDER, "egocentric": Condition.ORDER, "egocentric_comp": Condition.COMPASSION}
TARGETS = {"salience_longer": "the longer answer", "egocentric": "its own answer", "egocentric_comp": "its own answer"}


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
    outcome = vote_outcomes(uncued["choice"], uncued["presentation"])
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


def reference_rows(judgments: pd.DataFrame, human_answers: pd.DataFrame) -> list[dict]:
    """One row per (judge, confounded bias) with at least 30 pairs that people voted on; see the module docstring."""
    judges = judge_pair_rates(judgments)
    if judges.empty:
        return []
    people = human_pair_rates(human_answers).set_index("pair")
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
            row = _against_people(scoped, target, people, bias)
            if row is not None:
                rows.append({"subject": name, "bias": bias, "condition": str(condition)} | row)
    return rows


def _against_people(mine: pd.DataFrame, target: pd.Series, people: pd.DataFrame, bias: str) -> dict | None:
    if people.empty:
        return None
    reference = _toward_target(mine["pair"].map(people["rate_a"]), target)
    shared = reference.notna()
    if int(shared.sum()) < MIN_REFERENCE_PAIRS:
        return None
    votes = int(mine.loc[shared, "pair"].map(people["votes"]).sum())
    detail = f"{votes} decisive human votes on these pairs (plain and order conditions; ties left out)"
    judge = _toward_target(mine["rate_a"], target)
    return _estimate(mine.loc[shared, "instruction"], judge[shared], reference[shared], "humans", detail, bias)


def _estimate(
    instruction: pd.Series, judge: pd.Series, reference: pd.Series, name: str, detail: str, bias: str
) -> dict:
    diff = (judge - reference).to_numpy(dtype=float)
    codes = pd.factorize(instruction)[0]
    sums = np.bincount(codes, weights=diff)
    p = sign_flip_p(sums)
    t = cluster_t(diff, np.ones(diff.size), [codes])
    clusters = int(codes.max()) + 1 if codes.size else 0
    draws = "exact" if np.count_nonzero(sums) <= EXACT_MAX else f"{DRAWS} draws"
    return {
        "reference": name,
        "reference_detail": detail,
        "target": TARGETS[bias],
        "value": float(diff.mean()),
        "judge_rate": float(judge.mean()),
        "reference_rate": float(reference.mean()),
        "n": int(diff.size),
        "clusters": clusters,
        "ci95": [float(x) for x in t.ci95],
        "p_value": float(p),
        "p_adjusted": None,
        "family": True,
        "estimand": f"judge's rate of choosing {TARGETS[bias]} minus the {name}' rate on the same pairs",
        "test": f"two-sided sign-flip permutation test of the per-instruction sums of the differences "
        f"({clusters} instructions; {draws})",
        "interval": f"cluster-robust (CR1) t interval over instructions, {max(clusters - 1, 0)} df",
    }
