"""The summary's alt-test line: one per judge, read off its ``alt_test`` row at the profile's epsilon.

Nothing is recomputed. A passed test says the judge could replace the annotators at that
margin; a test that did not pass says only that this was not shown (failing to reject is no
evidence that the judge is worse: with few items or annotators the test has little power);
an untestable study says why (docs/methods.md, "The alternative annotator test").
"""

from __future__ import annotations


def alt_test_claims(subject: str, rows: list[dict]) -> list[dict]:
    """The judge's claim at the profile's epsilon, or none when the report has no row for it."""
    return [alt_test_claim(r) for r in rows if r["subject"] == subject and r.get("profile_epsilon")]


def alt_test_claim(row: dict) -> dict:
    claim = {
        "kind": "alt_test",
        "metric": "alt_test",
        "subject": row["subject"],
        "epsilon": row["epsilon"],
        "value": row.get("advantage_prob"),
        "winning_rate": row.get("winning_rate"),
        "passed": row.get("passed"),
        "annotators": row.get("n_annotators", 0),
        "n": row.get("n_items", 0),
        "unit": "items",
    }
    if not row.get("testable"):
        return claim | {
            "verdict": "not_enough_data",
            "text": f"cannot be tested against your annotators (alt-test): {row.get('reason')}",
        }
    wins = sum(1 for p in (row.get("p_values") or {}).values() if p.get("rejected"))
    tested = row["n_annotators"]
    margin = f"at epsilon = {row['epsilon']:g}" + (f" ({row['annotator_kind']})" if row.get("annotator_kind") else "")
    advantage = f"advantage {row['advantage_prob']:.2f}"
    if row["passed"]:
        text = f"could replace your annotators {margin}: wins against {wins} of {tested}, {advantage}"
    else:
        text = (
            f"not shown to replace your annotators {margin}: wins against {wins} of {tested} (needs half), {advantage}"
        )
    return claim | {"verdict": "measured", "text": f"{text} (alt-test on {row['n_items']} items)"}
