"""The bias battery's own measures: CALM's robustness rate and the judge-minus-humans difference.

For every cue bias (``annotations.biases.REGISTRY``) and subject, beside the paired clustered
effect the bias table already computes (``analysis.metrics.bias_rows``):

- **Robustness rate** (CALM, Ye et al. 2025): the share of verdicts unchanged by the
  perturbation. A cued verdict is compared with the same subject's unperturbed verdicts (the
  plain and order conditions, ``reference.UNCUED``: the same prompt with no cue) on the same
  pair *with the same answer in the first slot*, so position plays no part; it scores the share
  of those references it equals (1 or 0 with one reference). A tie is a verdict like the others;
  an invalid output (no verdict) is left out on either side, and a cued verdict with no reference
  in its arrangement is counted as ``unmatched``. People: nobody answers a pair both with and
  without the cue, so a cued answer is compared with every counted unperturbed answer on the same
  pair and arrangement, by anyone: people's rate also holds their disagreement with each other.
- **Interval**: ``cluster_tests.clustered_wilson`` (the CR1 design effect, Wilson at the
  effective n, t on min(G) - 1 df), over instructions for judges and over raters and instructions
  for people, as the gold-accuracy rows do.
- **Judge minus humans**: the judge's effect (hits - mirror) / n minus people's on the same
  condition, each read off the units the bias table tested, with ``cluster_tests.ratio_difference_t``
  over instructions (the clusters both share).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.special import stdtrit

from analysis.metrics.cluster_tests import clustered_wilson, ratio_difference_t
from analysis.metrics.reference import UNCUED
from annotations.biases import CROWD_CUED, CUE_CONDITIONS

HUMANS = "humans"
UNIT_COLUMNS = ["subject", "bias", "instruction", "rater", "pair", "unchanged"]
COUNT_COLUMNS = ["subject", "bias", "answered", "matched"]


@dataclass(frozen=True)
class Robustness:
    rate: float | None
    ci95: list[float] | None
    n: int  # cued verdicts with at least one unperturbed reference
    pairs: int
    unmatched: int  # answered cued verdicts with no reference in their arrangement
    clusters: int  # instructions
    raters: int | None  # people only
    df: int | None
    design_effect: float | None
    interval: str


def _judge_verdicts(judgments: pd.DataFrame) -> pd.Series:
    """Each call's verdict: "first" / "second" / "tie", or "" for no verdict (an invalid output)."""
    if "verdict" in judgments.columns:
        return judgments["verdict"].fillna("").astype(str)
    return judgments["choice"].fillna("").where(judgments["valid"].astype(bool), "")


def judge_robustness_units(judgments: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per matched cued call: ``unchanged`` in [0, 1]; answered and matched counts per judge and bias)."""
    if judgments.empty:
        return pd.DataFrame(columns=UNIT_COLUMNS), pd.DataFrame(columns=COUNT_COLUMNS)
    frame = judgments.assign(verdict_=_judge_verdicts(judgments), rater=None)
    frame = frame[frame["verdict_"] != ""]
    keys = ["judge", "pair", "slot1_is_a"]
    reference = frame[frame["condition"].isin(UNCUED)][[*keys, "verdict_"]]
    cued = frame[frame["condition"].isin(CUE_CONDITIONS)].rename(columns={"judge": "subject", "condition": "bias"})
    cued = cued.assign(judge=cued["subject"])
    return _units(cued, reference, keys)


def human_robustness_units(answers: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The same for people: a cued answer against the counted unperturbed answers on its pair and arrangement."""
    if answers.empty:
        return pd.DataFrame(columns=UNIT_COLUMNS), pd.DataFrame(columns=COUNT_COLUMNS)
    # Every counted answer names a letter or a tie ("T"): each is a verdict.
    frame = answers.assign(verdict_=answers["choice"].fillna("").astype(str))
    frame = frame[frame["verdict_"] != ""]
    keys = ["pair", "arrangement"]
    reference = frame[frame["condition"].isin(UNCUED)][[*keys, "verdict_"]]
    cued = frame[frame["condition"].isin(CROWD_CUED)].rename(columns={"condition": "bias"})
    return _units(cued.assign(subject=HUMANS), reference, keys)


def _units(cued: pd.DataFrame, reference: pd.DataFrame, keys: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    cued = cued.reset_index(drop=True).rename_axis("call").reset_index()
    answered = cued.groupby(["subject", "bias"], sort=False).size().rename("answered")
    columns = list(dict.fromkeys(["call", "subject", "bias", "instruction", "rater", "pair", *keys, "verdict_"]))
    merged = cued[columns].merge(reference.rename(columns={"verdict_": "reference_"}), on=keys, how="inner")
    if merged.empty:
        counts = answered.reset_index().assign(matched=0)
        return pd.DataFrame(columns=UNIT_COLUMNS), counts[COUNT_COLUMNS]
    merged["same"] = (merged["verdict_"] == merged["reference_"]).astype(float)
    # One unit per cued verdict: the share of its references it equals.
    units = merged.groupby("call", sort=True).agg(
        subject=("subject", "first"),
        bias=("bias", "first"),
        instruction=("instruction", "first"),
        rater=("rater", "first"),
        pair=("pair", "first"),
        unchanged=("same", "mean"),
    )
    matched = units.groupby(["subject", "bias"], sort=False).size().rename("matched")
    counts = pd.concat([answered, matched], axis=1).fillna(0).astype(int).reset_index()
    return units.reset_index(drop=True)[UNIT_COLUMNS], counts[COUNT_COLUMNS]


def robustness(units: pd.DataFrame, *, unmatched: int, two_way: bool) -> Robustness:
    """The robustness rate of one subject and bias with its clustered interval (module docstring)."""
    unchanged = units["unchanged"].to_numpy(dtype=float)
    n = int(unchanged.size)
    instruction_codes, instructions = pd.factorize(units["instruction"])
    rater_codes, raters = pd.factorize(units["rater"]) if two_way else (None, [])
    two_way = two_way and len(raters) >= 2
    base = Robustness(
        rate=float(unchanged.mean()) if n else None,
        ci95=None,
        n=n,
        pairs=int(units["pair"].nunique()),
        unmatched=unmatched,
        clusters=len(instructions),
        raters=len(raters) if rater_codes is not None else None,
        df=None,
        design_effect=None,
        interval="no interval: a clustered interval needs verdicts on at least 2 instructions",
    )
    if n == 0 or len(instructions) < 2:
        return base
    codes = [rater_codes, instruction_codes] if two_way and rater_codes is not None else [instruction_codes]
    df = (min(len(raters), len(instructions)) if two_way else len(instructions)) - 1
    ci95, deff = clustered_wilson(unchanged, codes, float(stdtrit(df, 0.975)))
    clusters = "two-way over raters and instructions" if two_way else "over instructions"
    return replace(
        base,
        ci95=[float(x) for x in ci95],
        df=df,
        design_effect=deff,
        interval=f"cluster-robust (CR1) variance {clusters}; Wilson at the effective n = n / design effect (>= 1), "
        f"t on {df} df",
    )


@dataclass(frozen=True)
class Difference:
    difference: float | None
    ci95: list[float] | None
    p_value: float | None
    clusters: int
    df: int | None


def judge_minus_humans(judge: pd.DataFrame, humans: pd.DataFrame) -> Difference:
    """The judge's effect minus people's, from the bias table's units of each (``diff``, ``size``, ``instruction``)."""
    result = ratio_difference_t(
        (judge["diff"], judge["size"], judge["instruction"]),
        (humans["diff"], humans["size"], humans["instruction"]),
    )
    finite = bool(np.isfinite(result.effect))
    has_interval = finite and result.df >= 1 and np.isfinite(result.se)
    clusters = len(set(map(str, judge["instruction"])) | set(map(str, humans["instruction"])))
    return Difference(
        difference=float(result.effect) if finite else None,
        ci95=[float(x) for x in result.ci95] if has_interval else None,
        p_value=float(result.p_value) if has_interval else None,
        clusters=clusters,
        df=result.df if has_interval else None,
    )
