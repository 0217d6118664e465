"""Length-controlled agreement (docs/methods.md, "Length control"), as pure functions over DataFrames.

Input frames (built by ``analysis.loaders.length`` or by hand in tests):

``votes`` - one row per human vote; ``verdicts`` - one row per judge call, plus a
``judge`` column. Both have:

- ``unit``: the question, the cluster the bootstrap resamples (MT-Bench question_id);
- ``item``: what a pair key is about (question x turn, i.e. one Instruction);
- ``condition``: plain, order, bandwagon, ... (humans and judges are joined per condition);
- ``first`` / ``second``: the two systems as written or shown (slot 1, slot 2);
- ``cue``: "" or the slot a bandwagon/attentional cue pointed at ("first"/"second");
- ``winner``: "first", "second" or "tie" (for a judge "tie" also means
  "tie (inconsistent)"; unparseable judge rows are left out by the loader);
- ``len_first`` / ``len_second``: answer lengths in the profile's unit and scope.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.length.stats import cluster_rate

BINS = ("<5%", "<10%", "10-30%", ">30%")
# The three non-overlapping strata partition the keys; differences are taken between them.
PARTITION = ("<10%", "10-30%", ">30%")
MATCHED = "<10%"
KEY = ["item", "condition", "a", "b", "cue"]
VOTE_COLUMNS = ["unit", "item", "condition", "first", "second", "cue", "winner", "len_first", "len_second"]
VERDICT_COLUMNS = ["judge", *VOTE_COLUMNS]


def relative_difference(la: pd.Series, lb: pd.Series) -> pd.Series:
    """d = |la - lb| / max(la, lb), and 0 when both answers are empty."""
    top = np.maximum(la.to_numpy(dtype=float), lb.to_numpy(dtype=float))
    diff = np.abs(la.to_numpy(dtype=float) - lb.to_numpy(dtype=float))
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.where(top > 0, diff / np.where(top > 0, top, 1.0), 0.0)
    return pd.Series(d, index=la.index)


def in_bin(d: pd.Series, name: str) -> pd.Series:
    if name == "<5%":
        return d < 0.05
    if name == "<10%":
        return d < 0.10
    if name == "10-30%":
        return (d >= 0.10) & (d <= 0.30)
    if name == ">30%":
        return d > 0.30
    raise ValueError(f"unknown stratum {name!r}")


def partition_bin(d: pd.Series) -> pd.Series:
    return pd.Series(np.where(d < 0.10, "<10%", np.where(d <= 0.30, "10-30%", ">30%")), index=d.index)


def orient(frame: pd.DataFrame, *, join: str) -> pd.DataFrame:
    """Pair keys per the join rule, with the winner as "a" / "b" / "tie".

    ``ordered`` keeps the key as written (a reversed human key never meets the
    judge's row); ``unordered`` sorts the two systems and flips winner and lengths
    with them, so every orientation of a pair lands on one key.
    """
    if join not in ("ordered", "unordered"):
        raise ValueError(f"unknown join {join!r}; choose ordered or unordered")
    out = frame.copy()
    swap = (out["first"] > out["second"]) if join == "unordered" else pd.Series(False, index=out.index)
    out["a"] = out["first"].where(~swap, out["second"])
    out["b"] = out["second"].where(~swap, out["first"])
    out["la"] = out["len_first"].where(~swap, out["len_second"]).astype(float)
    out["lb"] = out["len_second"].where(~swap, out["len_first"]).astype(float)
    as_written = out["winner"].map({"first": "a", "second": "b", "tie": "tie"})
    flipped = as_written.map({"a": "b", "b": "a", "tie": "tie"})
    out["w"] = as_written.where(~swap, flipped)
    if join == "unordered":
        # A cue names a slot, and slots are what the unordered join forgets.
        out["cue"] = ""
    out["d"] = relative_difference(out["la"], out["lb"])
    return out


def human_majority(votes: pd.DataFrame) -> pd.DataFrame:
    """One row per key with a decisive majority (ties ignored; equal counts drop the key)."""
    if votes.empty:
        return pd.DataFrame(columns=[*KEY, "unit", "d", "majority"])
    g = votes.assign(va=votes["w"] == "a", vb=votes["w"] == "b").groupby(KEY, sort=False)
    keys = g.agg(unit=("unit", "first"), d=("d", "first"), na=("va", "sum"), nb=("vb", "sum")).reset_index()
    keys["majority"] = np.where(keys["na"] > keys["nb"], "a", np.where(keys["nb"] > keys["na"], "b", ""))
    return keys[keys["majority"] != ""].drop(columns=["na", "nb"])


def judge_verdicts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """One verdict per judge and key.

    Several rows on one key (both presentations of a CoBBLEr pair under the
    unordered join) merge the way ``gpt4_pair`` merged GPT-4's two orders: equal
    winners stand, anything else is a tie (inconsistent).
    """
    if verdicts.empty:
        return pd.DataFrame(columns=["judge", *KEY, "unit", "la", "lb", "d", "w"])
    g = verdicts.groupby(["judge", *KEY], sort=False)
    out = g.agg(
        unit=("unit", "first"),
        la=("la", "first"),
        lb=("lb", "first"),
        d=("d", "first"),
        w=("w", "first"),
        kinds=("w", "nunique"),
    ).reset_index()
    out.loc[out["kinds"] > 1, "w"] = "tie"
    return out.drop(columns=["kinds"])


def null_scored(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """Rows where both the length-only null and ``column`` decide, with ``agree``."""
    decisive = frame[(frame[column] != "tie") & (frame["la"] != frame["lb"])]
    longer = np.where(decisive["la"] > decisive["lb"], "a", "b")
    return decisive.assign(agree=longer == decisive[column].to_numpy(), bin=partition_bin(decisive["d"]))


def count_rate(agree: pd.Series, units: pd.Series) -> dict:
    """Agreement over ``agree`` with a cluster-robust interval, ``units`` (questions) as clusters."""
    return cluster_rate(agree.to_numpy(dtype=float), units.to_numpy())


def prefixed(prefix: str, r: dict) -> dict:
    return {f"{prefix}_{k}": v for k, v in r.items()}


def decide_verdict(*, matched: dict, matched_null: dict, overall: float | None) -> tuple[str, str]:
    """The pre-registered rule (docs/methods.md, "Length control", Verdict), with the reason it fired."""
    ci, nci = matched["ci95"], matched_null["ci95"]
    if ci is None or (ci[1] - ci[0]) / 2 > 0.15:
        return "inconclusive", f"judge interval on {MATCHED} pairs wider than +-15 points (n={matched['n']})"
    if nci is not None and ci[0] <= nci[1] and nci[0] <= ci[1]:
        return "length-confounded", f"judge interval on {MATCHED} pairs overlaps the length-only null's"
    if ci[0] > 0.5 and overall is not None and ci[1] >= overall - 0.10:
        return "semantic", f"judge interval on {MATCHED} pairs above 0.5, apart from the null, near overall agreement"
    return "inconclusive", f"judge interval on {MATCHED} pairs not above 0.5 or far below overall agreement"
