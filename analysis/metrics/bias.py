"""Judge bias rates from single judge calls (docs/methods.md, "Bias rates"), vectorised.

Input: the judgments frame of ``analysis.loaders.judgments_frame``, one row per call:
``judge, self_key, instruction, pair, cand_a, cand_b, len_a, len_b, condition,
presentation (1|2), slot1_is_a, choice ("first"|"second"|""), chosen_is_a, valid,
cue_slot ("first"|"second"|None)``. The semantics are the Judgment docstring's
(judging/models/jobs.py): presentation 1 feeds rankings, 2 is its switched twin.

Output: one *count* row per (subject, bias): ``hits``, ``mirror`` (the hits of the same
definition with the roles swapped: last twice for first twice, against the cue both times
for following it both times, the other response for the judge's own, the shorter for the
longer; the sign test of docs/methods.md compares the two), ``n_all`` (every comparison,
the authors' denominator), ``n_valid`` (the comparisons where the bias could show: both
prompts answered, or the bias's own kept set) and ``valid_rate`` (prompt-1 valid rate of
the run, Table 2's ``valid``). ``judge_bias_units`` gives the same counts per instruction,
the cluster the intervals resample. ``analysis.metrics.bias_rows`` turns counts into rates,
intervals and tests under a profile.

``position_preference`` (order_first - order_last) is counted as hits = first twice,
mirror = last twice, over the order run's denominator; ``position_consistency`` as hits = the
same response or a tie in both presentations (``analysis.metrics.consistency``), mirror 0.
"""

from __future__ import annotations

import pandas as pd

from analysis.metrics.consistency import BIAS as CONSISTENCY
from analysis.metrics.consistency import judge_consistent
from analysis.profiles import Profile
from annotations.biases import CUE_CONDITIONS
from annotations.vocabulary import Condition
from judging.vocabulary import TIE

PAIR_KEYS = ["judge", "condition", "pair"]


def pair_frame(judgments: pd.DataFrame) -> pd.DataFrame:
    """One row per (judge, condition, pair): prompt 1 beside its twin (suffixes 1, 2).

    A missing or failed twin is an invalid answer, as in the authors' harness. ``tie1``/``tie2``:
    the call's verdict was a tie (``valid`` stays False for a tie: no slot was chosen).
    """
    judgments = judgments.assign(tie=_ties(judgments))
    first = judgments[judgments["presentation"] == 1]
    second = judgments[judgments["presentation"] == 2][
        [*PAIR_KEYS, "choice", "valid", "chosen_is_a", "cue_slot", "tie"]
    ]
    pairs = first.merge(second, on=PAIR_KEYS, how="left", suffixes=("1", "2"))
    pairs["valid2"] = pairs["valid2"].astype("boolean").fillna(False).astype(bool)
    pairs["valid1"] = pairs["valid1"].astype(bool)
    pairs["tie2"] = pairs["tie2"].astype("boolean").fillna(False).astype(bool)
    pairs["tie1"] = pairs["tie1"].astype(bool)
    for k in (1, 2):
        pairs[f"choice{k}"] = pairs[f"choice{k}"].fillna("").where(pairs[f"valid{k}"], "")
        pairs[f"chosen_is_a{k}"] = pairs[f"chosen_is_a{k}"].astype("boolean").fillna(False).astype(bool)
    pairs["both_valid"] = pairs["valid1"] & pairs["valid2"]
    # The n of the pair outcomes (order, position preference, compassion, egocentric, bandwagon,
    # attentional): both prompts gave a verdict, a slot or a tie. A tie is an answered pair that
    # is neither a hit nor a mirror: people's rule too (docs/methods.md "Ties").
    pairs["answered"] = (pairs["valid1"] | pairs["tie1"]) & (pairs["valid2"] | pairs["tie2"])
    return pairs


def _ties(judgments: pd.DataFrame) -> pd.Series:
    """Whether each call's verdict was a tie; False throughout for a frame without verdicts."""
    if "verdict" not in judgments.columns:
        return pd.Series(False, index=judgments.index)
    return (judgments["verdict"] == TIE).astype(bool)


def _count(
    pairs: pd.DataFrame, mask: pd.Series, hits: pd.Series, bias: str, n_valid: pd.Series, mirror: pd.Series
) -> pd.DataFrame:
    """Per (subject, instruction) counts of one bias over the pairs in ``mask``."""
    sub = pd.DataFrame(
        {
            "subject": pairs["judge"],
            "instruction": pairs["instruction"],
            "hits": hits & mask,
            "mirror": mirror & mask,
            "n_all": mask,
            "n_valid": n_valid & mask,
            "valid1": pairs["valid1"] & mask,
        }
    )[mask]
    out = sub.groupby(["subject", "instruction"], sort=True).sum(numeric_only=True).reset_index()
    out["bias"] = bias
    return out


UNIT_COLUMNS = ["subject", "bias", "instruction", "hits", "mirror", "n_all", "n_valid", "valid1"]


def judge_bias_counts(judgments: pd.DataFrame, *, profile: Profile) -> pd.DataFrame:
    """Counts for every bias the calls allow, per judge (empty frame when there are none)."""
    cols = ["subject", "bias", "hits", "mirror", "n_all", "n_valid", "valid_rate"]
    units = judge_bias_units(judgments, profile=profile)
    if units.empty:
        return pd.DataFrame(columns=cols)
    out = units.groupby(["subject", "bias"], sort=False).sum(numeric_only=True).reset_index()
    out["valid_rate"] = out["valid1"] / out["n_all"]
    return out.sort_values("subject", kind="stable")[cols].reset_index(drop=True)


def judge_bias_units(judgments: pd.DataFrame, *, profile: Profile) -> pd.DataFrame:
    """Per (judge, bias, instruction) counts; the instruction is the bootstrap's cluster."""
    if judgments.empty:
        return pd.DataFrame(columns=UNIT_COLUMNS)
    pairs = pair_frame(judgments)
    parts = []
    order = pairs["condition"] == Condition.ORDER
    same_slot = pairs["both_valid"] & (pairs["choice1"] == pairs["choice2"])
    first_twice = same_slot & (pairs["choice1"] == "first")
    last_twice = same_slot & (pairs["choice1"] == "second")
    nothing = pd.Series(False, index=pairs.index)
    if order.any():
        parts += [
            _count(pairs, order, first_twice, "order_first", pairs["answered"], last_twice),
            _count(pairs, order, last_twice, "order_last", pairs["answered"], first_twice),
            _count(pairs, order, first_twice, "position_preference", pairs["answered"], last_twice),
            # Descriptive, no mirror: the same response (or a tie) in both presentations.
            _count(pairs, order, judge_consistent(pairs), CONSISTENCY, pairs["answered"], nothing),
            _egocentric(pairs, order, profile),
            _salience(pairs, order, first_twice | last_twice, profile),
        ]
    compassion = pairs["condition"] == Condition.COMPASSION
    if compassion.any():
        if profile.compassion == "paper":
            # As the authors coded it: "first" = both prompts named m1, the model listed first in
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
            _count(pairs, compassion, c_first, "compassion_first", pairs["answered"], c_last),
            _count(pairs, compassion, c_last, "compassion_last", pairs["answered"], c_first),
            _egocentric_comp(pairs, compassion, profile),
        ]
    for condition in CUE_CONDITIONS:
        mask = pairs["condition"] == condition
        if mask.any():
            followed1 = pairs["valid1"] & (pairs["choice1"] == pairs["cue_slot1"])
            followed2 = pairs["valid2"] & (pairs["choice2"] == pairs["cue_slot2"])
            # Against the cue both times: the mirror image (same arrangement, the cue moved).
            against1 = pairs["valid1"] & (pairs["choice1"] != pairs["cue_slot1"])
            against2 = pairs["valid2"] & (pairs["choice2"] != pairs["cue_slot2"])
            parts.append(_count(pairs, mask, followed1 & followed2, condition, pairs["answered"], against1 & against2))
    parts = [p for p in parts if p is not None and not p.empty]
    return pd.concat(parts, ignore_index=True)[UNIT_COLUMNS] if parts else pd.DataFrame(columns=UNIT_COLUMNS)


def _egocentric(pairs: pd.DataFrame, order: pd.Series, profile: Profile) -> pd.DataFrame | None:
    # Exact self matching: the authors' substring test made llama "self" for llamav2.
    self_is_a = pairs["cand_a"] == pairs["self_key"]
    self_is_b = pairs["cand_b"] == pairs["self_key"]
    mask = order & (self_is_a | self_is_b) & (pairs["self_key"] != "")
    if not mask.any():
        return None
    own1 = pairs["valid1"] & (pairs["chosen_is_a1"] == self_is_a)
    own2 = pairs["valid2"] & (pairs["chosen_is_a2"] == self_is_a)
    other1 = pairs["valid1"] & ~own1
    other2 = pairs["valid2"] & ~own2
    if profile.egocentric == "paper":
        # As coded: prompt 1 chose itself and prompt 2 did not pick the same slot
        # (followed its answer, or was invalid). Mirror: the same for the other response.
        same_slot = pairs["valid2"] & (pairs["choice2"] == pairs["choice1"])
        hits, mirror = own1 & ~same_slot, other1 & ~same_slot
    else:
        # A consistent self-choice, both prompts answered; mirror: the other one twice.
        hits, mirror = own1 & own2, other1 & other2
    return _count(pairs, mask, hits, "egocentric", pairs["answered"], mirror)


def _egocentric_comp(pairs: pd.DataFrame, compassion: pd.Series, profile: Profile) -> pd.DataFrame | None:
    """Table 2's ``egocentric_comp``: self-preference in the compassion (named) run."""
    self_is_a = pairs["cand_a"] == pairs["self_key"]
    mask = compassion & (self_is_a | (pairs["cand_b"] == pairs["self_key"])) & (pairs["self_key"] != "")
    if not mask.any():
        return None
    own1 = pairs["valid1"] & (pairs["chosen_is_a1"] == self_is_a)
    own2 = pairs["valid2"] & (pairs["chosen_is_a2"] == self_is_a)
    other1 = pairs["valid1"] & ~own1
    other2 = pairs["valid2"] & ~own2
    # As coded, prompt 1 named itself and prompt 2 (roles swapped) did not name it again:
    # position-driven self-choices. Ours: named itself in both prompts, names moving with answers.
    # Mirrors: the same definitions with the other model in the judge's place.
    if profile.egocentric == "paper":
        hits, mirror = own1 & ~own2, other1 & ~other2
    else:
        hits, mirror = own1 & own2, other1 & other2
    return _count(pairs, mask, hits, "egocentric_comp", pairs["answered"], mirror)


def longer_is_a(len_a: pd.Series, len_b: pd.Series) -> pd.Series:
    """The authors' rule: the longer response, a tie going to m2 (response b)."""
    return len_a > len_b


def _salience(pairs: pd.DataFrame, order: pd.Series, biased: pd.Series, profile: Profile) -> pd.DataFrame:
    """Whether the prompt-1 winner is the longer response, over the kept pairs.

    Kept (docs/methods.md, "Rows, hits and mirrors"), under ``denominator``:
    - ``valid`` (default; the humans' rule too): both prompts answered, the same response
      chosen in both presentations, and lengths that differ (equal lengths carry no signal);
    - ``all`` (the authors'): prompt 1 answered and not the same slot twice, so a pair whose
      prompt 2 was invalid is kept, and equal lengths are credited to m2 (response b).
    """
    if profile.denominator == "valid":
        # For a both-valid pair "not the same slot twice" is exactly "the same response twice".
        consistent = pairs["both_valid"] & (pairs["chosen_is_a1"] == pairs["chosen_is_a2"])
        kept = consistent & (pairs["len_a"] != pairs["len_b"])
    else:
        kept = pairs["valid1"] & ~biased
    hits = kept & (pairs["chosen_is_a1"] == longer_is_a(pairs["len_a"], pairs["len_b"]))
    return _count(pairs, order, hits, "salience_longer", kept, kept & ~hits)
