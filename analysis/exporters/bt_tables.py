"""The report's ``bt_rankings`` as two tidy tables (CSV and HTML): one row per scored system, one per subject.

Each subject appears twice when it has a length-controlled fit: ``variant`` "uncontrolled" and
"length-controlled"; lists of system names become one comma-separated cell.
"""

from __future__ import annotations

UNCONTROLLED = "uncontrolled"
CONTROLLED = "length-controlled"
SYSTEM_COLUMNS = ["subject", "variant", "rank", "system", "score", "ci95_low", "ci95_high", "n", "held_by_ridge"]
SUBJECT_COLUMNS = [
    "subject",
    "variant",
    "n_comparisons",
    "n_ties",
    "n_instructions",
    "vs_humans.kendall_tau",
    "vs_humans.kendall_tau_ci95_low",
    "vs_humans.kendall_tau_ci95_high",
    "vs_humans.rbo",
    "vs_humans.rbo_ci95_low",
    "vs_humans.rbo_ci95_high",
    "beta",
    "beta_ci95_low",
    "beta_ci95_high",
]


def _variants(row: dict) -> list[tuple[str, dict]]:
    controlled = row.get("length_controlled")
    return [(UNCONTROLLED, row), *([(CONTROLLED, controlled)] if controlled else [])]


def system_rows(rows: list[dict]) -> list[dict]:
    return [
        {
            "subject": row["subject"],
            "variant": variant,
            "rank": rank,
            **{k: s.get(k) for k in ("system", "score", "ci95", "n", "held_by_ridge", "log_strength")},
        }
        for row in rows
        for variant, block in _variants(row)
        for rank, s in enumerate(block["systems"], start=1)
    ]


def subject_rows(rows: list[dict]) -> list[dict]:
    out = []
    for row in rows:
        for variant, block in _variants(row):
            out.append(
                {
                    "subject": row["subject"],
                    "variant": variant,
                    **{k: row.get(k) for k in ("n_comparisons", "n_ties", "n_instructions")},
                    "vs_humans": block.get("vs_humans"),
                    "beta": block.get("beta"),
                    "beta_ci95": block.get("beta_ci95"),
                    "tie_nu": block.get("tie_nu"),
                    "vs_uncontrolled": block.get("vs_uncontrolled"),
                    **{k: ", ".join(row.get(k) or []) for k in ("excluded", "never_lost", "never_won")},
                    "mle_exists": row.get("mle_exists"),
                    "method": row.get("method"),
                }
            )
    return out
