"""The whole length-control table for one study: every number of the section."""

from __future__ import annotations

import pandas as pd

from analysis.length.core import (
    BINS,
    KEY,
    MATCHED,
    PARTITION,
    VERDICT_COLUMNS,
    VOTE_COLUMNS,
    count_rate,
    decide_verdict,
    human_majority,
    in_bin,
    judge_verdicts,
    null_scored,
    orient,
    partition_bin,
    prefixed,
)
from analysis.length.stats import bootstrap_difference

DEFAULT_SEED = 20240601
DEFAULT_RESAMPLES = 1000


def _check(frame: pd.DataFrame, columns: list[str], name: str) -> pd.DataFrame:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} frame lacks columns {missing}")
    bad = set(frame["winner"].unique()) - {"first", "second", "tie"}
    if bad:
        raise ValueError(f"{name} frame has unknown winners {sorted(bad)}")
    return frame[columns]


def length_control_table(
    votes: pd.DataFrame,
    verdicts: pd.DataFrame,
    *,
    join: str,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> dict:
    """Judge-vs-majority, per-vote S1/S2, the length-only null, strata, verdicts.

    Rows are per (judge, condition); MT-Bench has one condition ("plain"). Raises
    ValueError on malformed frames; returns empty lists where there is no data.
    """
    v = orient(_check(votes, VOTE_COLUMNS, "votes"), join=join)
    j = orient(_check(verdicts, VERDICT_COLUMNS, "verdicts"), join=join)
    majority = human_majority(v)
    verdict_rows = judge_verdicts(j)
    null_votes = null_scored(v, "w")

    out: dict = {
        "judge_vs_human": [],
        "null_vs_human": count_rate(null_votes["agree"], null_votes["unit"]),
        "null_vs_human_by_condition": [
            {"condition": c, **count_rate(g["agree"], g["unit"])} for c, g in null_votes.groupby("condition", sort=True)
        ],
        "null_vs_judge": [],
        "strata": [],
        "null_strata": _null_strata(null_votes),
        "strata_differences": [],
        "counts": {
            "votes": int(len(v)),
            "decisive_votes": int((v["w"] != "tie").sum()),
            "keys": int(v.groupby(KEY).ngroups) if len(v) else 0,
            "majority_keys": int(len(majority)),
            "judge_rows": int(len(j)),
            "judge_keys": int(len(verdict_rows)),
        },
    }
    for (judge, condition), rows in verdict_rows.groupby(["judge", "condition"], sort=True):
        _judge_block(out, judge, condition, rows, v, majority, null_votes, seed, resamples)

    primary = max(out["judge_vs_human"], key=lambda r: (r["n"], r["judge"]), default=None)
    if primary is None:
        out["verdict"] = "inconclusive"
        out["verdict_reason"] = "no judge verdicts joined to human votes"
    else:
        out["verdict"] = primary["verdict"]
        out["verdict_reason"] = primary["verdict_reason"]
        out["verdict_judge"] = primary["judge"]
        out["verdict_condition"] = primary["condition"]
    return out


def _null_strata(null_votes: pd.DataFrame) -> list[dict]:
    rows = []
    for condition, g in null_votes.groupby("condition", sort=True):
        for name in BINS:
            sel = g[in_bin(g["d"], name)]
            r = count_rate(sel["agree"], sel["unit"])
            rows.append({"bin": name, "condition": condition, **prefixed("null", r)})
    return rows


def _judge_block(
    out: dict,
    judge: str,
    condition: str,
    rows: pd.DataFrame,
    votes: pd.DataFrame,
    majority: pd.DataFrame,
    null_votes: pd.DataFrame,
    seed: int,
    resamples: int,
) -> None:
    decisive = rows[rows["w"] != "tie"]
    joined = majority.merge(decisive[[*KEY, "w"]], on=KEY, how="inner")
    joined = joined.assign(agree=joined["majority"] == joined["w"], bin=partition_bin(joined["d"]))
    overall = count_rate(joined["agree"], joined["unit"])

    # Per-vote agreement (Zheng et al.): S1 keeps ties as a third class, S2 drops them.
    per_vote = votes.merge(rows[[*KEY, "w"]].rename(columns={"w": "jw"}), on=KEY, how="inner")
    s1 = count_rate(per_vote["w"] == per_vote["jw"], per_vote["unit"])
    s2_rows = per_vote[(per_vote["w"] != "tie") & (per_vote["jw"] != "tie")]
    s2 = count_rate(s2_rows["w"] == s2_rows["jw"], s2_rows["unit"])

    nulls = null_votes[null_votes["condition"] == condition]
    null_judge = null_scored(rows, "w")
    null_overall = count_rate(nulls["agree"], nulls["unit"])
    out["null_vs_judge"].append(
        {"judge": judge, "condition": condition, **count_rate(null_judge["agree"], null_judge["unit"])}
    )

    strata = {}
    for name in BINS:
        jsel, nsel = joined[in_bin(joined["d"], name)], nulls[in_bin(nulls["d"], name)]
        jr = count_rate(jsel["agree"], jsel["unit"])
        nr = count_rate(nsel["agree"], nsel["unit"])
        strata[name] = (jr, nr)
        out["strata"].append(
            {"bin": name, "judge": judge, "condition": condition, **prefixed("judge", jr), **prefixed("null", nr)}
        )
    matched, matched_null = strata[MATCHED]
    verdict, reason = decide_verdict(matched=matched, matched_null=matched_null, overall=overall["agreement"])
    out["judge_vs_human"].append(
        {
            "judge": judge,
            "condition": condition,
            **overall,
            **prefixed("s1", s1),
            **prefixed("s2", s2),
            **prefixed("matched", matched),
            **prefixed("matched_null", matched_null),
            "null_agreement": null_overall["agreement"],
            "headline_share": _headline(null_overall["agreement"], overall["agreement"]),
            "verdict": verdict,
            "verdict_reason": reason,
        }
    )
    for subject, scored in (("judge", joined), ("null", nulls)):
        for i, first in enumerate(PARTITION):
            for second in PARTITION[i + 1 :]:
                out["strata_differences"].append(
                    _difference(judge, condition, subject, scored, first, second, seed, resamples)
                )


def _headline(null: float | None, judge: float | None) -> float | None:
    """(null - 0.5) / (judge - 0.5): the share of the judge's above-chance agreement length recovers."""
    if null is None or judge is None or judge == 0.5:
        return None
    return (null - 0.5) / (judge - 0.5)


def _difference(
    judge: str, condition: str, subject: str, scored: pd.DataFrame, first: str, second: str, seed: int, resamples: int
) -> dict:
    a, b = scored[scored["bin"] == first], scored[scored["bin"] == second]
    diff = (a["agree"].mean() - b["agree"].mean()) if len(a) and len(b) else None
    return {
        "judge": judge,
        "condition": condition,
        "subject": subject,
        "a": first,
        "b": second,
        "difference": None if diff is None else float(diff),
        "ci95": bootstrap_difference(scored, first=first, second=second, seed=seed, resamples=resamples)
        if diff is not None
        else None,
    }
