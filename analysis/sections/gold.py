"""The report's ``gold_accuracy``: each judge's and the humans' accuracy on the study's gold pairs.

One row per subject over every gold pair it judged (``category`` null), then one per
instruction category (the study format's ``category``, stored as ``Instruction.kind``) when the
gold pairs carry categories. Definitions: ``analysis.metrics.gold_accuracy`` and
docs/methods.md ("Accuracy on gold labels"). No gold pairs, or nobody judged them: no rows.
"""

from __future__ import annotations

import pandas as pd

from analysis import loaders
from analysis.metrics.gold_accuracy import HUMANS, gold_accuracy, human_gold_units, judge_gold_units
from analysis.profiles import Profile
from annotations.models import Study
from annotations.vocabulary import Condition

RULE = (
    "JudgeBench's rule over the presentations read: +1 for each choice of the gold answer, -1 for each "
    "choice of the other, 0 for a tie or an invalid output; correct when the sum is > 0"
)
ESTIMAND = {
    "judge": f"share of the gold pairs the judge was called on that it judged correctly; {RULE}; an invalid "
    "output stays in n (it scores 0)",
    HUMANS: f"share of (rater, gold pair) units judged correctly, one person's votes on one pair; {RULE}: "
    "one person's accuracy, comparable to one judge's (not the crowd majority's)",
}
RUN_WORDS = {
    Condition.ORDER: "the order run (both presentations)",
    Condition.PLAIN: "the plain run (one presentation)",
}
HUMAN_RUN_WORDS = {
    Condition.ORDER: "the order condition's twin tasks (both presentations)",
    Condition.PLAIN: "the plain condition (one presentation)",
}


def build(*, study: Study, profile: Profile) -> list[dict]:
    gold = loaders.gold_pairs_frame(study)
    if gold.empty:
        return []
    return from_frames(loaders.judgments_frame(study), loaders.human_pairwise_frame(study, profile=profile), gold)


def from_frames(judgments: pd.DataFrame, human_answers: pd.DataFrame, gold: pd.DataFrame) -> list[dict]:
    """Rows from the loaders' frames: humans first, then judges by name; overall, then by category."""
    units = pd.concat(
        [u for u in (human_gold_units(human_answers, gold), judge_gold_units(judgments, gold)) if not u.empty]
        or [pd.DataFrame(columns=["subject"])],
        ignore_index=True,
    )
    rows = []
    for subject in sorted(units["subject"].unique(), key=lambda s: (s != HUMANS, s)):
        mine = units[units["subject"] == subject]
        rows.append(_row(subject, None, mine, gold))
        for category in sorted(c for c in mine["category"].unique() if c):
            rows.append(_row(subject, category, mine[mine["category"] == category], gold))
    return rows


def _row(subject: str, category: str | None, units: pd.DataFrame, gold: pd.DataFrame) -> dict:
    human = subject == HUMANS
    result = gold_accuracy(units, two_way=human)
    in_scope = gold if category is None else gold[gold["category"] == category]
    return {
        "subject": subject,
        "category": category,
        "value": result.value,
        "n": result.n,
        "ci95": result.ci95,
        "correct": result.correct,
        "unit": "rater x gold pair" if human else "gold pair",
        "pairs": result.pairs,
        "gold_pairs": len(in_scope),
        "instructions": result.instructions,
        "raters": result.raters if human else None,
        "both_orders": result.both_orders,
        "df": result.df,
        "design_effect": result.design_effect,
        "estimand": ESTIMAND[HUMANS if human else "judge"],
        "method": _method(units, human=human),
        "interval": result.interval,
    }


def _method(units: pd.DataFrame, *, human: bool) -> str:
    """Which presentations were read, with how many units each, and the rule that chose them."""
    words, unit = (HUMAN_RUN_WORDS, "units") if human else (RUN_WORDS, "gold pairs")
    counts = units["run"].value_counts()
    parts = [f"{words[run]} on {int(counts[run])} {unit}" for run in words if run in counts]
    rule = (
        "the rater's order twins where they hold the pair, else the rater's plain votes; cued conditions and "
        "gold quality-control tasks never"
        if human
        else "the order run where it holds the pair, else the plain run; cued and named runs never"
    )
    return "read from " + "; ".join(parts) + f" ({rule})"
