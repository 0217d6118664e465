"""The judge leaderboard's own measures (docs/methods.md "Judge leaderboard"), as pure functions.

- ``null_vs_majority``: the length-only null judge on the same footing as a judge.
- ``human_ceiling``: how well one person agrees with the majority of the *other* people on the
  same key, the ceiling a judge's agreement with the human majority is read against (AlpacaEval's
  "human agreement": each vote against the mode of the others).
- ``first_slot_rate`` and ``longer_rate``: the share of a subject's decisive choices that went to
  the answer shown first, and to the longer answer, in the un-cued runs (AlpacaEval's "P(prefers
  first)" and "P(prefers longer)"); descriptive, not bias tests (a judge that follows quality
  prefers longer answers wherever they are better).

Each comes with the cluster-robust interval over instructions the length section uses
(``analysis.length.stats.cluster_rate``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.length.core import KEY, human_majority
from analysis.length.stats import cluster_rate
from annotations.vocabulary import Condition

UNCUED = (Condition.PLAIN, Condition.ORDER)  # the runs with nothing in the prompt but the pair


def human_ceiling(votes: pd.DataFrame) -> dict:
    """Leave-one-out agreement of a decisive vote with the majority of the other decisive votes on
    its key (keys where the others tie or are absent do not count). ``votes``: oriented votes
    (``analysis.length.core.orient``: ``w`` "a" / "b" / "tie", ``unit`` the cluster)."""
    decisive = votes[votes["w"].isin(["a", "b"])]
    if decisive.empty:
        return cluster_rate(np.array([]), np.array([]))
    counts = decisive.assign(va=decisive["w"] == "a").groupby(KEY, sort=False)["va"].agg(na="sum", n="size")
    joined = decisive.join(counts, on=KEY)
    own_a = (joined["w"] == "a").astype(int)
    others_a = joined["na"] - own_a
    others_b = joined["n"] - joined["na"] - (1 - own_a)
    majority = np.where(others_a > others_b, "a", np.where(others_b > others_a, "b", ""))
    scored = joined[majority != ""]
    agree = (scored["w"].to_numpy() == majority[majority != ""]).astype(float)
    return cluster_rate(agree, scored["unit"].to_numpy())


def null_vs_majority(votes: pd.DataFrame) -> dict:
    """The length-only null judge (always the longer answer) against the decisive human majority of
    each key, on keys whose answers differ in length: the judges' own estimand, on the same keys."""
    keys = human_majority(votes)
    lengths = votes.drop_duplicates(KEY).set_index(KEY)[["la", "lb"]]
    keys = keys.join(lengths, on=KEY)
    keys = keys[keys["la"] != keys["lb"]]
    longer = np.where(keys["la"] > keys["lb"], "a", "b")
    return cluster_rate((longer == keys["majority"].to_numpy()).astype(float), keys["unit"].to_numpy())


def first_slot_rate(first: np.ndarray, clusters: np.ndarray) -> dict:
    """Share of decisive choices for the answer shown first; ``first`` per choice (bool)."""
    return cluster_rate(np.asarray(first, dtype=float), np.asarray(clusters))


def longer_rate(chose_longer: np.ndarray, clusters: np.ndarray) -> dict:
    """Share of decisive choices, on pairs of unequal length, for the longer answer."""
    return cluster_rate(np.asarray(chose_longer, dtype=float), np.asarray(clusters))


def judge_choice_rates(judgments: pd.DataFrame, judge: str) -> tuple[dict, dict]:
    """(first-slot rate, longer rate) of one judge's valid calls in the plain and order runs."""
    mine = judgments[(judgments["judge"] == judge) & judgments["valid"] & judgments["condition"].isin(UNCUED)]
    first = mine["choice"] == "first"
    unequal = mine[mine["len_a"] != mine["len_b"]]
    longer = unequal["chosen_is_a"] == (unequal["len_a"] > unequal["len_b"])
    return (
        first_slot_rate(first.to_numpy(), mine["instruction"].to_numpy()),
        longer_rate(longer.to_numpy(), unequal["instruction"].to_numpy()),
    )


def human_choice_rates(votes: pd.DataFrame) -> tuple[dict, dict]:
    """(first-slot rate, longer rate) of people's decisive votes in the plain and order runs.
    ``votes``: the length loader's frame (``first``/``second``/``winner``/``len_first``/``len_second``)."""
    mine = votes[votes["condition"].isin(UNCUED) & votes["winner"].isin(["first", "second"])]
    first = mine["winner"] == "first"
    unequal = mine[mine["len_first"] != mine["len_second"]]
    chose_first = unequal["winner"] == "first"
    longer = chose_first == (unequal["len_first"] > unequal["len_second"])
    return (
        first_slot_rate(first.to_numpy(), mine["unit"].to_numpy()),
        longer_rate(longer.to_numpy(), unequal["unit"].to_numpy()),
    )
