"""The report's ``cot`` as one tidy table (CSV and HTML): one row per judge (people last) and outcome.

``minus_humans``: the judge's change minus people's on the pairs both have (None on people's rows
and where people have no cot run).
"""

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
    "minus_humans",
    "minus_humans_ci95_low",
    "minus_humans_ci95_high",
]


def rows(cot: list[dict]) -> list[dict]:
    out = []
    for row in cot:
        for outcome in OUTCOMES:
            r = row[outcome]
            low, high = r["ci95"] if r.get("ci95") else (None, None)
            minus = r.get("minus_humans") or {}
            minus_low, minus_high = minus["ci95"] if minus.get("ci95") else (None, None)
            out.append(
                {
                    "judge": row["judge"], "outcome": outcome, "without": r["without"], "with_cot": r["with_cot"],
                    "effect": r["effect"], "ci95_low": low, "ci95_high": high, "n": r["n"],
                    "instructions": r["instructions"], "p_value": r["p_value"], "p_holm": r["p_holm"],
                    "claim": r["claim"], "reason": r.get("reason"), "profile": row["profile"],
                    "minus_humans": minus.get("effect"), "minus_humans_ci95_low": minus_low,
                    "minus_humans_ci95_high": minus_high,
                    "estimand": r["estimand"], "method": row["method"],
                }
            )  # fmt: skip
    return out
