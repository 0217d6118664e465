"""Judge bias rates from single judge calls (cobbler-method.md 3.2-3.9), vectorised.

Input: the judgments frame of ``analysis.loaders.judgments_frame``, one row per call:
``judge, self_key, instruction, pair, cand_a, cand_b, len_a, len_b, condition,
presentation (1|2), slot1_is_a, choice ("first"|"second"|""), chosen_is_a, valid,
cue_slot ("first"|"second"|None)``. The semantics are the Judgment docstring's
(judging/models/jobs.py): presentation 1 feeds rankings, 2 is its switched twin.

Output: one *count* row per (subject, bias): ``hits``, ``n_all`` (every comparison, the
authors' denominator), ``n_valid`` (the comparisons where the bias could show: both
prompts answered, or the bias's own kept set) and ``valid_rate`` (prompt-1 valid rate of
the run, Table 2's ``valid``). ``analysis.metrics.table`` turns counts into rates,
intervals and tests under a profile.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.profiles import Profile

PAIR_KEYS = ["judge", "condition", "pair"]


def pair_frame(judgments: pd.DataFrame) -> pd.DataFrame:
    """One row per (judge, condition, pair): prompt 1 beside its twin (suffixes 1, 2).

    A missing or failed twin is an invalid answer, as in the authors' harness.
    """
    first = judgments[judgments["presentation"] == 1]
    second = judgments[judgments["presentation"] == 2][
        [*PAIR_KEYS, "choice", "valid", "chosen_is_a", "cue_slot"]
    ]
    pairs = first.merge(second, on=PAIR_KEYS, how="left", suffixes=("1", "2"))
    pairs["valid2"] = pairs["valid2"].astype("boolean").fillna(False).astype(bool)
    pairs["valid1"] = pairs["valid1"].astype(bool)
    for k in (1, 2):
        pairs[f"choice{k}"] = pairs[f"choice{k}"].fillna("").where(pairs[f"valid{k}"], "")
        pairs[f"chosen_is_a{k}"] = pairs[f"chosen_is_a{k}"].astype("boolean").fillna(False).astype(bool)
    pairs["both_valid"] = pairs["valid1"] & pairs["valid2"]
    return pairs


def _count(pairs: pd.DataFrame, mask: pd.Series, hits: pd.Series, bias: str, n_valid: pd.Series) -> pd.DataFrame:
    sub = pd.DataFrame(
        {
            "subject": pairs["judge"],
            "hits": hits & mask,
            "n_all": mask,
            "n_valid": n_valid & mask,
            "valid1": pairs["valid1"] & mask,
        }
    )[mask]
    out = sub.groupby("subject", sort=True).sum(numeric_only=True).reset_index()
    out["valid_rate"] = out["valid1"] / out["n_all"]
    out["bias"] = bias
    return out.drop(columns="valid1")


def judge_bias_counts(judgments: pd.DataFrame, *, profile: Profile) -> pd.DataFrame:
    """Counts for every bias the calls allow, per judge (empty frame when there are none)."""
    cols = ["subject", "bias", "hits", "n_all", "n_valid", "valid_rate"]
    if judgments.empty:
        return pd.DataFrame(columns=cols)
    pairs = pair_frame(judgments)
    parts = []
    order = pairs["condition"] == "order"
    same_slot = pairs["both_valid"] & (pairs["choice1"] == pairs["choice2"])
    first_twice = same_slot & (pairs["choice1"] == "first")
    last_twice = same_slot & (pairs["choice1"] == "second")
    if order.any():
        parts += [
            _count(pairs, order, first_twice, "order_first", pairs["both_valid"]),
            _count(pairs, order, last_twice, "order_last", pairs["both_valid"]),
            _egocentric(pairs, order, profile),
            _salience(pairs, order, first_twice | last_twice, profile),
        ]
    compassion = pairs["condition"] == "compassion"
    if compassion.any():
        if profile.compassion == "paper":
            # As coded (3.5): "first" = both prompts named m1, the model listed first in
            # prompt 1, wherever it sits in prompt 2. Names move with the responses, so
            # this is a consistent preference for m1, not a positional bias.
            m1_is_a = pairs["slot1_is_a"]
            named_m1_1 = pairs["valid1"] & (pairs["chosen_is_a1"] == m1_is_a)
            named_m1_2 = pairs["valid2"] & (pairs["chosen_is_a2"] == m1_is_a)
            c_first = named_m1_1 & named_m1_2
            c_last = pairs["both_valid"] & ~named_m1_1 & ~named_m1_2
        else:  # positional: the same slot twice, the analogue of order bias
            c_first, c_last = first_twice, last_twice
        parts += [
            _count(pairs, compassion, c_first, "compassion_first", pairs["both_valid"]),
            _count(pairs, compassion, c_last, "compassion_last", pairs["both_valid"]),
            _egocentric_comp(pairs, compassion, profile),
        ]
    for condition in ("bandwagon", "attentional"):
        mask = pairs["condition"] == condition
        if mask.any():
            followed1 = pairs["valid1"] & (pairs["choice1"] == pairs["cue_slot1"])
            followed2 = pairs["valid2"] & (pairs["choice2"] == pairs["cue_slot2"])
            parts.append(_count(pairs, mask, followed1 & followed2, condition, pairs["both_valid"]))
    parts = [p for p in parts if p is not None and not p.empty]
    return pd.concat(parts, ignore_index=True)[cols] if parts else pd.DataFrame(columns=cols)


def _egocentric(pairs: pd.DataFrame, order: pd.Series, profile: Profile) -> pd.DataFrame | None:
    # Exact self matching (3.4 D): the authors' substring test made llama "self" for llamav2.
    self_is_a = pairs["cand_a"] == pairs["self_key"]
    self_is_b = pairs["cand_b"] == pairs["self_key"]
    mask = order & (self_is_a | self_is_b) & (pairs["self_key"] != "")
    if not mask.any():
        return None
    own1 = pairs["valid1"] & (pairs["chosen_is_a1"] == self_is_a)
    own2 = pairs["valid2"] & (pairs["chosen_is_a2"] == self_is_a)
    if profile.egocentric == "paper":
        # As coded: prompt 1 chose itself and prompt 2 did not pick the same slot
        # (followed its answer, or was invalid).
        same_slot = pairs["valid2"] & (pairs["choice2"] == pairs["choice1"])
        hits = own1 & ~same_slot
    else:
        hits = own1 & own2  # a consistent self-choice, both prompts answered
    return _count(pairs, mask, hits, "egocentric", pairs["both_valid"])


def _egocentric_comp(pairs: pd.DataFrame, compassion: pd.Series, profile: Profile) -> pd.DataFrame | None:
    """Table 2's ``egocentric_comp``: self-preference in the compassion (named) run (3.5)."""
    self_is_a = pairs["cand_a"] == pairs["self_key"]
    mask = compassion & (self_is_a | (pairs["cand_b"] == pairs["self_key"])) & (pairs["self_key"] != "")
    if not mask.any():
        return None
    own1 = pairs["valid1"] & (pairs["chosen_is_a1"] == self_is_a)
    own2 = pairs["valid2"] & (pairs["chosen_is_a2"] == self_is_a)
    # As coded, prompt 1 named itself and prompt 2 (roles swapped) did not name it again:
    # position-driven self-choices. Ours: named itself in both prompts, names moving with answers.
    hits = own1 & ~own2 if profile.egocentric == "paper" else own1 & own2
    return _count(pairs, mask, hits, "egocentric_comp", pairs["both_valid"])


def longer_is_a(len_a: pd.Series, len_b: pd.Series) -> pd.Series:
    """The authors' rule: the longer response, a tie going to m2 (response b)."""
    return len_a > len_b


def _salience(pairs: pd.DataFrame, order: pd.Series, biased: pd.Series, profile: Profile) -> pd.DataFrame:
    # 3.6: keep pairs answered in prompt 1 and not order-biased; score whether the
    # prompt-1 winner is the longer response. The denominator is the kept pairs.
    kept = pairs["valid1"] & ~biased
    if profile.denominator == "valid":
        # Equal lengths carry no length signal; the authors credited them to m2.
        kept = kept & (pairs["len_a"] != pairs["len_b"])
    hits = kept & (pairs["chosen_is_a1"] == longer_is_a(pairs["len_a"], pairs["len_b"]))
    return _count(pairs, order, hits, "salience_longer", kept)


def simulate_random_judgments(judgments: pd.DataFrame, *, seed: int) -> pd.DataFrame:
    """The same calls answered by a seeded uniform-random judge (every answer valid).

    The empirical RANDOM row: same pairs, cues, lengths and self pairs as the judge.
    """
    rng = np.random.default_rng(seed)
    out = judgments.copy()
    first = rng.random(len(out)) < 0.5
    out["choice"] = np.where(first, "first", "second")
    out["valid"] = True
    out["chosen_is_a"] = first == out["slot1_is_a"].to_numpy(dtype=bool)
    return out
