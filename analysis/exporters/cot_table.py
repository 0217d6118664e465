"""The report's ``cot`` as one tidy table (CSV and HTML): one row per judge and outcome."""

from __future__ import annotations

from analysis.metrics.cot import OUTCOMES

COLUMNS = [
    "judge",
    "outcome",
    "without",
    "with_cot",
    "effect",
    "ci95_low",
    "ci95_high",
    "n",
    "instructions",
    "p_value",
    "p_holm",
    "claim",
    "reason",
    "profile",
]


def rows(cot: list[dict]) -> list[dict]:
    out = []
    for row in cot:
        for outcome in OUTCOMES:
            r = row[outcome]
            low, high = r["ci95"] if r.get("ci95") else (None, None)
            out.append(
                {
                    "judge": row["judge"], "outcome": outcome, "without": r["without"], "with_cot": r["with_cot"],
                    "effect": r["effect"], "ci95_low": low, "ci95_high": high, "n": r["n"],
                    "instructions": r["instructions"], "p_value": r["p_value"], "p_holm": r["p_holm"],
                    "claim": r["claim"], "reason": r.get("reason"), "profile": row["profile"],
                    "estimand": r["estimand"], "method": row["method"],
                }
            )  # fmt: skip
    return out
