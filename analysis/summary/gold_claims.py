"""The summary's accuracy-on-gold line: one per subject whose study has gold pairs it judged.

Read off the subject's overall ``gold_accuracy`` row (``category`` null); nothing is
recomputed. Below ``MIN_PAIRS`` units the line says there is not enough data, as every other
measured statistic of the summary does (docs/methods.md, "Verdict summary"); the row's numbers
stay in the claim and the table.
"""

from __future__ import annotations

from analysis.summary.claims import MIN_PAIRS

HUMANS = "humans"


def gold_claims(subject: str, rows: list[dict]) -> list[dict]:
    """The subject's accuracy claim, or none when it judged no gold pair."""
    return [gold_claim(r) for r in rows if r["subject"] == subject and r.get("category") is None]


def gold_claim(row: dict) -> dict:
    n, unit = row["n"], row.get("unit", "gold pair")
    claim = {
        "kind": "accuracy",
        "metric": "gold_accuracy",
        "subject": row["subject"],
        "value": row["value"],
        "ci95": row.get("ci95"),
        "n": n,
        "unit": unit,
        "correct": row.get("correct"),
        "pairs": row.get("pairs"),
        "instructions": row.get("instructions"),
        "both_orders": row.get("both_orders"),
        "min_n": MIN_PAIRS,
    }
    if n < MIN_PAIRS or row["value"] is None:
        return claim | {
            "verdict": "not_enough_data",
            "text": f"not enough data for accuracy on gold labels (n = {n} {_plural(unit, n)}; need about {MIN_PAIRS})",
        }
    return claim | {"verdict": "measured", "text": f"accuracy on gold labels {_estimate(row)} ({_how(row)})"}


def _how(row: dict) -> str:
    """n, clusters and how a unit was scored, in words."""
    n, both = row["n"], row.get("both_orders") or 0
    where = f"{row.get('instructions')} instructions"
    if row["subject"] == HUMANS:
        size = f"{n} rater x pair units: {row.get('pairs')} gold pairs, {row.get('raters')} raters, {where}"
        read = "each person's un-cued votes on a pair"
    else:
        size = f"{n} gold pairs over {where}"
        read = "both presentations" if both == n else f"both presentations on {both} of {n} pairs, one on the rest"
    return f"{size}; {read}, JudgeBench rule: correct when the gold answer was chosen more often than the other"


def _estimate(row: dict) -> str:
    ci = row.get("ci95")
    if not ci or None in ci:
        return f"{row['value']:.2f}"
    return f"{row['value']:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"


def _plural(unit: str, n: int) -> str:
    return unit if n == 1 else f"{unit}s"
