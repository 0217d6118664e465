"""The report's ``bias`` section: every judge's and the humans' bias rates under a profile.

Definitions, nulls, tests and intervals: docs/methods.md ("Bias rates") and
``analysis.metrics.bias_rows``. No simulated judge enters any number: ``random`` is the
theoretical uniform-random reference (docs/methods.md, "The reference column `random`").
"""

from __future__ import annotations

import pandas as pd

from analysis import loaders
from analysis.metrics.bias import judge_bias_counts, judge_bias_units
from analysis.metrics.bias_rows import adjust, family_text, finish_rows, human_units, judge_units, rates
from analysis.metrics.consistency import human_consistency_records
from analysis.metrics.human_bias import (
    count_units,
    human_bias_counts,
    human_bias_records,
    human_bias_units,
    twin_frame,
)
from analysis.metrics.reference import reference_rows
from analysis.profiles import Profile
from annotations.biases import CROWD_CUED
from annotations.models import Study
from annotations.vocabulary import Condition

# Which human study supplies each human bias (salience comes from the order study).
HUMAN_STUDY = {
    "order_first": Condition.ORDER,
    "order_last": Condition.ORDER,
    "position_preference": Condition.ORDER,
    "position_consistency": Condition.ORDER,
    "salience_longer": Condition.ORDER,
    # A cue bias's human rows come from its own crowd condition.
    **{c: c for c in CROWD_CUED},
}


def build(*, study: Study, profile: Profile) -> list[dict]:
    """Contract rows for judges (from single calls) and humans (from approved answers)."""
    return build_section(study=study, profile=profile)["bias"]


def build_section(*, study: Study, profile: Profile) -> dict[str, list[dict]]:
    """The report's ``bias`` rows and ``bias_reference`` rows, corrected as one family per subject."""
    return section_from_frames(
        loaders.judgments_frame(study),
        loaders.human_pairwise_frame(study, profile=profile),
        loaders.responses_frame(study),
        loaders.assignment_reviews(study, profile=profile),
        profile=profile,
        gold=loaders.gold_pairs_frame(study),
    )


def section_from_frames(
    judgments: pd.DataFrame,
    human_answers: pd.DataFrame,
    responses: pd.DataFrame,
    reviews: pd.DataFrame,
    *,
    profile: Profile,
    gold: pd.DataFrame | None = None,
) -> dict[str, list[dict]]:
    """The section from the loaders' frames: the one path the report and the validity harness share.

    ``bias_reference`` measures length and self-preference against a quality reference on the
    same pairs (analysis.metrics.reference); its rows join their subject's claim family, so
    the correction is applied once over both lists.
    """
    judges = judge_rows(judgments, profile=profile)
    humans = human_rows(human_answers, responses, reviews, profile=profile)
    observed = pd.concat([judges[0], humans[0]], ignore_index=True)
    units = pd.concat([judges[1], humans[1]], ignore_index=True)
    rows = finish_rows(observed, units, correction=profile.correction)
    references = reference_rows(judgments, human_answers, gold)
    adjust(rows + references, correction=profile.correction)
    for row in references:
        row["method"] = f"{row['test']}; {family_text(profile.correction)}"
    return {"bias": rows, "bias_reference": references}


def from_frames(
    judgments: pd.DataFrame,
    human_answers: pd.DataFrame,
    responses: pd.DataFrame,
    reviews: pd.DataFrame,
    *,
    profile: Profile,
) -> list[dict]:
    """The ``bias`` rows alone (see ``section_from_frames``)."""
    return section_from_frames(judgments, human_answers, responses, reviews, profile=profile)["bias"]


def judge_rows(judgments: pd.DataFrame, *, profile: Profile) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(observed rates, bootstrap units clustered by instruction) for every judge in ``judgments``."""
    if judgments.empty:
        return pd.DataFrame(), pd.DataFrame()
    observed = rates(judge_bias_counts(judgments, profile=profile), denominator=profile.denominator)
    units = judge_units(judge_bias_units(judgments, profile=profile), denominator=profile.denominator)
    return observed, units


def attach_lengths(answers: pd.DataFrame, responses: pd.DataFrame, *, unit: str) -> pd.DataFrame:
    """Add ``units_a``/``units_b``: each pair's response lengths in ``unit``."""
    units = count_units(responses["text"], unit)
    length = dict(zip(responses["response"], units, strict=True))
    return answers.assign(units_a=answers["resp_a"].map(length), units_b=answers["resp_b"].map(length))


def human_rows(
    answers: pd.DataFrame, responses: pd.DataFrame, reviews: pd.DataFrame, *, profile: Profile
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(observed rates, bootstrap units clustered by rater and instruction) for the humans."""
    if answers.empty:
        return pd.DataFrame(), pd.DataFrame()
    answers = attach_lengths(answers, responses, unit=profile.human_length_unit)
    per_rater = profile.human_average == "per-rater"
    records = human_bias_records(answers, denominator=profile.denominator)
    # position_consistency joins here, not in human_bias_records: the paper section reads those
    # records as the authors' human_bias columns, which have no consistency.
    consistency = human_consistency_records(twin_frame(answers))
    if not consistency.empty:
        records = pd.concat([records, consistency], ignore_index=True)
    counts = human_bias_counts(records, per_rater=per_rater)
    out = rates(counts, denominator="valid")  # only approved (valid) work is loaded
    # The authors' figure is the mean of per-rater rates, not the pooled rate.
    out["value"] = out["value_mean"]
    out["value_all"] = out["value_mean"]
    out["value_valid"] = out["value_mean"]
    # Valid = the work loaders.counted_work lets count (approved, or + pending by profile).
    ok = reviews["counts"] if "counts" in reviews else reviews["review"] == "approved"
    approved = reviews.assign(ok=ok.astype(bool)).groupby("condition")["ok"].mean()
    out["valid_rate"] = out["bias"].map(HUMAN_STUDY).map(approved)
    return out, human_units(human_bias_units(records, per_rater=per_rater))
