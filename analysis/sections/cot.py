"""The report's ``cot``: per judge with a cot run and an order run, what thinking step by step
changed on the same pairs (consistency, and accuracy on gold pairs), with its test and interval;
then people's row when the crowd answered both the order and the cot condition, and on each judge
outcome the judge's change minus people's.

Definitions: ``analysis.metrics.cot`` and docs/methods.md ("Chain of thought"). No cot run of a
judge or of people: no rows (``no_data`` says how to get one).
"""

from __future__ import annotations

from analysis import loaders
from analysis.metrics.cot import MIN_INSTRUCTIONS, OUTCOMES, cot_rows, human_cot_row
from analysis.profiles import Profile
from annotations.models import Study
from annotations.vocabulary import Condition

METHOD = (
    "the cot run (the order run's pairs and arrangements, the prompt asking to think step by step) against the "
    "order run, paired per pair; effect = mean of (with cot - without) per pair; test: sign-flip over "
    f"instructions, Holm over the judge's two outcomes; interval: CR1 t over instructions; a change is claimed "
    f"when Holm's p < 0.05 and the interval excludes 0, from {MIN_INSTRUCTIONS} instructions"
)
HUMAN_METHOD = (
    "the crowd cot condition (the crowd order design, each pair twice with the positions swapped for one worker, "
    "the same pairs for the same design seed, a written step-by-step reasoning required before the choice) "
    "against the crowd order condition; per rater and pair consistent or not, and JudgeBench's score on gold "
    "pairs; per pair the mean over the raters who answered it, different raters in the two runs; effect = mean "
    "over the pairs of both runs of (cot mean - order mean); test: sign-flip over instructions, Holm over "
    "people's two outcomes; interval: CR1 t over instructions; a change is claimed when Holm's p < 0.05 and the "
    f"interval excludes 0, from {MIN_INSTRUCTIONS} instructions. A rater who answers several instructions links "
    "them, which the instruction-level test does not model"
)
OUTCOME_WORDS = {
    "consistency": "consistency: the same response chosen in both presentations (or a tie twice), on the pairs "
    "both runs answered",
    "gold_accuracy": "accuracy on gold pairs by JudgeBench's rule over both presentations, on the gold pairs both "
    "runs judged",
}


def build(*, study: Study, profile: Profile) -> list[dict]:
    judgments = loaders.judgments_frame(study)
    gold = loaders.gold_pairs_frame(study)
    answers = loaders.human_pairwise_frame(study, profile=profile)
    people = human_cot_row(answers, gold)
    rows = []
    if not judgments.empty and (judgments["condition"] == Condition.COT).any():
        rows = cot_rows(judgments, gold, answers)
    if people is not None:
        rows.append(people)
    for row in rows:
        row["profile"] = profile.name
        row["method"] = HUMAN_METHOD if row is people else METHOD
        for outcome in OUTCOMES:
            row[outcome]["estimand"] = OUTCOME_WORDS[outcome]
    return rows
