"""The report's ``cot``: per judge with a cot run and an order run, what thinking step by step
changed on the same pairs (consistency, and accuracy on gold pairs), with its test and interval.

Definitions: ``analysis.metrics.cot`` and docs/methods.md ("Chain of thought"). No cot run: no
rows (``no_data`` says how to get one).
"""

from __future__ import annotations

from analysis import loaders
from analysis.metrics.cot import MIN_INSTRUCTIONS, OUTCOMES, cot_rows
from analysis.profiles import Profile
from annotations.models import Study
from annotations.vocabulary import Condition

METHOD = (
    "the cot run (the order run's pairs and arrangements, the prompt asking to think step by step) against the "
    "order run, paired per pair; effect = mean of (with cot - without) per pair; test: sign-flip over "
    f"instructions, Holm over the judge's two outcomes; interval: CR1 t over instructions; a change is claimed "
    f"when Holm's p < 0.05 and the interval excludes 0, from {MIN_INSTRUCTIONS} instructions"
)
OUTCOME_WORDS = {
    "consistency": "consistency: the same response chosen in both presentations (or a tie twice), on the pairs "
    "both runs answered",
    "gold_accuracy": "accuracy on gold pairs by JudgeBench's rule over both presentations, on the gold pairs both "
    "runs judged",
}


def build(*, study: Study, profile: Profile) -> list[dict]:
    judgments = loaders.judgments_frame(study)
    if judgments.empty or not (judgments["condition"] == Condition.COT).any():
        return []
    rows = cot_rows(judgments, loaders.gold_pairs_frame(study))
    for row in rows:
        row["profile"] = profile.name
        row["method"] = METHOD
        for outcome in OUTCOMES:
            row[outcome]["estimand"] = OUTCOME_WORDS[outcome]
    return rows
