"""The report's ``alt_test``: may this judge replace the study's annotators? (docs/methods.md,
"The alternative annotator test"; the math in ``analysis.metrics.alt_test``).

One row per (judge, epsilon) over ``EPSILONS`` (and the profile's own, if it is another), the
profile's marked ``profile_epsilon``. A judge the study cannot test (no item with the profile's
number of annotators, no verdict on those items, or no annotator with the profile's number of
items) gets one row, at the profile's epsilon, with ``testable`` false and the ``reason``: never
numbers the data do not support.
"""

from __future__ import annotations

import pandas as pd

from analysis import loaders
from analysis.metrics.alt_test import Comparison, alt_test, human_labels, judge_labels, leave_one_out
from analysis.profiles import Profile
from annotations.models import Study

EPSILONS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3)
FDR_Q = 0.05
# The paper's recommended margins by who the annotators are (Calderon, Reichart and Dror 2025).
ANNOTATOR_KINDS = {0.2: "experts", 0.15: "skilled annotators", 0.1: "crowd workers"}
METHOD = (
    "alt-test (Calderon, Reichart and Dror 2025), leave one annotator out: an item is a pair; a subject's label "
    "combines its presentations in the plain and order runs (the same response every time gives it, otherwise "
    "tie; outputs with no verdict dropped); on each item shared by the judge, the excluded annotator j and at "
    "least one other, S = share of the other annotators with the same label (accuracy, ties a class), "
    "W_judge = [S_judge >= S_j], W_j = [S_j >= S_judge], d = W_j - W_judge; one-sided one-sample t-test of "
    "H0 mean(d) >= epsilon on n - 1 df (zero variance: p = 0 if d < epsilon, else 1); Benjamini-Yekutieli at "
    "q = 0.05 over the tested annotators (p_adjusted <= q is rejected); winning_rate = share rejected, "
    "advantage_prob = mean over them of rho = mean(W_judge), passed = winning_rate >= 0.5"
)


def build(*, study: Study, profile: Profile) -> list[dict]:
    return from_frames(loaders.judgments_frame(study), loaders.human_pairwise_frame(study, profile=profile), profile)


def from_frames(judgments: pd.DataFrame, answers: pd.DataFrame, profile: Profile) -> list[dict]:
    """Rows by judge name, each judge's epsilons ascending."""
    if judgments.empty:
        return []
    humans = human_labels(answers)
    judges = judge_labels(judgments)
    rows = []
    for judge in sorted(judgments["judge"].unique()):
        labels = judges[judges["subject"] == judge].set_index("item")["label"]
        rows += _judge_rows(str(judge), labels, humans, profile)
    return rows


def _judge_rows(judge: str, labels: pd.Series, humans: pd.DataFrame, profile: Profile) -> list[dict]:
    min_items = max(profile.alt_test_min_items, 2)  # a t-test needs 2 items
    per_item = humans.groupby("item")["subject"].nunique() if not humans.empty else pd.Series(dtype=int)
    shared = per_item[per_item >= max(profile.alt_test_min_annotators, 2)].index
    comparisons = leave_one_out(labels, humans, min_annotators=profile.alt_test_min_annotators) if len(shared) else []
    items_of = {c.annotator: len(c.items) for c in comparisons}
    tested = [c for c in comparisons if len(c.items) >= min_items]
    skipped = [
        {"annotator": name, "items": items_of.get(name, 0)}
        for name in sorted(humans["subject"].unique())
        if name not in {c.annotator for c in tested}
    ]
    reason = _untestable(labels, shared, comparisons, tested, profile=profile, min_items=min_items)
    if reason is not None:
        return [_row(judge, profile.alt_test_epsilon, profile, tested=[], skipped=skipped) | {"reason": reason}]
    return [
        _row(judge, epsilon, profile, tested=tested, skipped=skipped)
        for epsilon in sorted({*EPSILONS, profile.alt_test_epsilon})
    ]


def _untestable(
    labels: pd.Series,
    shared: pd.Index,
    comparisons: list[Comparison],
    tested: list[Comparison],
    *,
    profile: Profile,
    min_items: int,
) -> str | None:
    need = max(profile.alt_test_min_annotators, 2)
    if not len(shared):
        return f"needs {need} annotators per item: no item has un-cued labels from {need} annotators"
    if not labels.index.isin(shared).any():
        items = f"{len(shared)} item" + ("" if len(shared) == 1 else "s")
        return f"no label of this judge (plain or order run) on the {items} with {need} or more annotators"
    if not tested:
        most = max((len(c.items) for c in comparisons), default=0)
        return (
            f"needs {min_items} items per annotator shared with the judge and another annotator: "
            f"the most any annotator has is {most}"
        )
    return None


def _row(judge: str, epsilon: float, profile: Profile, *, tested: list[Comparison], skipped: list[dict]) -> dict:
    row: dict = {
        "subject": judge,
        "epsilon": epsilon,
        "profile_epsilon": _same(epsilon, profile.alt_test_epsilon),
        "annotator_kind": ANNOTATOR_KINDS.get(round(epsilon, 6)),
        "testable": bool(tested),
        "reason": None,
        "winning_rate": None,
        "advantage_prob": None,
        "passed": None,
        "n_annotators": len(tested),
        "n_items": len({item for c in tested for item in c.items}),
        "q": FDR_Q,
        "min_annotators": profile.alt_test_min_annotators,
        "min_items": profile.alt_test_min_items,
        "p_values": {},
        "skipped": skipped,
        "method": METHOD,
    }
    if not tested:
        return row
    result = alt_test(tested, epsilon=epsilon, q=FDR_Q)
    return row | {
        "winning_rate": result.winning_rate,
        "advantage_prob": result.advantage_prob,
        "passed": result.passed,
        "p_values": {
            t.annotator: {
                "items": t.items,
                "rho": t.rho,
                "annotator_rho": t.annotator_rho,
                "mean_d": t.mean_d,
                "t": t.t,
                "p": t.p,
                "p_adjusted": t.p_adjusted,
                "rejected": t.rejected,
            }
            for t in result.tests
        },
    }


def _same(a: float, b: float) -> bool:
    return round(a, 6) == round(b, 6)
