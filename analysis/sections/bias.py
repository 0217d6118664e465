"""The report's ``bias`` section: every judge's and the humans' bias rates under a profile."""
from __future__ import annotations

import pandas as pd

from analysis import loaders
from analysis.metrics.bias import judge_bias_counts, simulate_random_judgments
from analysis.metrics.human_bias import (
    count_units,
    human_bias_counts,
    human_bias_records,
    simulate_random_raters,
)
from analysis.metrics.table import finish_rows, rates
from analysis.profiles import Profile
from annotations.models import Study

SEED = 20240  # the empirical RANDOM judge; fixed so reports are reproducible

# Which human study supplies each human bias (salience comes from the order study).
HUMAN_STUDY = {"order_first": "order", "order_last": "order", "salience_longer": "order",
               "bandwagon": "bandwagon", "attentional": "attentional"}


def build(*, study: Study, profile: Profile) -> list[dict]:
    """Contract rows for judges (from single calls) and humans (from approved answers)."""
    judges = judge_rows(loaders.judgments_frame(study), profile=profile)
    humans = human_rows(
        loaders.human_pairwise_frame(study), loaders.responses_frame(study),
        loaders.assignment_reviews(study), profile=profile,
    )
    observed = pd.concat([judges[0], humans[0]], ignore_index=True)
    random = pd.concat([judges[1], humans[1]], ignore_index=True)
    return finish_rows(observed, random, correction=profile.correction)


def judge_rows(judgments: pd.DataFrame, *, profile: Profile) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(observed, random) rate frames for every judge in ``judgments``."""
    if judgments.empty:
        return pd.DataFrame(), pd.DataFrame()
    observed = rates(judge_bias_counts(judgments, profile=profile), denominator=profile.denominator)
    simulated = simulate_random_judgments(judgments, seed=SEED)
    random = rates(judge_bias_counts(simulated, profile=profile), denominator=profile.denominator)
    return observed, random


def attach_lengths(answers: pd.DataFrame, responses: pd.DataFrame, *, unit: str) -> pd.DataFrame:
    """Add ``units_a``/``units_b``: each pair's response lengths in ``unit``."""
    units = count_units(responses["text"], unit)
    length = dict(zip(responses["response"], units, strict=True))
    return answers.assign(units_a=answers["resp_a"].map(length), units_b=answers["resp_b"].map(length))


def human_rows(answers: pd.DataFrame, responses: pd.DataFrame, reviews: pd.DataFrame, *,
               profile: Profile) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(observed, random) rate frames for the humans (subject "humans")."""
    if answers.empty:
        return pd.DataFrame(), pd.DataFrame()
    answers = attach_lengths(answers, responses, unit=profile.human_length_unit)
    per_rater = profile.human_average == "per-rater"

    def frame(data: pd.DataFrame) -> pd.DataFrame:
        counts = human_bias_counts(human_bias_records(data), per_rater=per_rater)
        out = rates(counts, denominator="valid")  # only approved (valid) work is loaded
        # The authors' figure is the mean of per-rater rates (3.14), not the pooled rate.
        out["value"] = out["value_mean"]
        out["value_all"] = out["value_mean"]
        out["value_valid"] = out["value_mean"]
        approved = reviews.assign(ok=reviews["review"] == "approved").groupby("condition")["ok"].mean()
        out["valid_rate"] = out["bias"].map(HUMAN_STUDY).map(approved)
        return out

    return frame(answers), frame(simulate_random_raters(answers, seed=SEED))
