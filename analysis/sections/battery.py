"""The report's ``battery``: every cue bias for every subject, CALM's robustness rate beside the
platform's paired effect, and the judge's effect against people's on the same condition.

One row per (subject, cue bias) the ``bias`` table has a row for; [] when it has none. The
effect, its test, interval, correction and claim are the bias table's own (read, never
recomputed: ``analysis.summary.claims.bias_claim`` words the claim as the summary does);
robustness and the difference are ``analysis.metrics.battery``. Definitions: docs/methods.md,
"The bias battery".
"""

from __future__ import annotations

import pandas as pd

from analysis import loaders
from analysis.metrics.battery import (
    HUMANS,
    Robustness,
    human_robustness_units,
    judge_minus_humans,
    judge_robustness_units,
    robustness,
)
from analysis.metrics.bias import judge_bias_units
from analysis.metrics.bias_rows import human_units, judge_units
from analysis.metrics.human_bias import human_bias_records, human_bias_units
from analysis.metrics.reference import UNCUED
from analysis.profiles import Profile
from analysis.sections.bias import attach_lengths
from analysis.summary.claims import bias_claim
from annotations.biases import CROWD_CUED, CUE_CONDITIONS, REGISTRY
from annotations.models import Study

EFFECT_UNITS = ["subject", "bias", "instruction", "diff", "size"]
JUDGE_REFERENCE = (
    "the same judge's unperturbed verdicts (plain and order conditions) on the same pair with the same answer in "
    "the first slot; a tie is a verdict, an invalid output is left out; a verdict with several references scores "
    "the share it equals"
)
HUMAN_REFERENCE = (
    "every counted unperturbed answer (plain and order conditions, any rater) on the same pair in the same "
    "arrangement; nobody answers a pair both with and without the cue, so people's rate also holds their "
    "disagreement with each other"
)
DIFFERENCE_METHOD = (
    "the judge's effect (hits - mirror) / n minus people's on the same condition, each over the units the bias "
    "table tested; two-sided cluster-robust (CR1) t test and t interval over instructions (the clusters both "
    "share), min(G) - 1 df; descriptive: no claim and no correction"
)


def build(*, study: Study, profile: Profile, bias_rows: list[dict]) -> list[dict]:
    """Battery rows for the report (after its ``bias`` section, whose rows it reads)."""
    if not any(r["bias"] in REGISTRY for r in bias_rows):
        return []  # no cue rows: nothing to load
    return from_frames(
        bias_rows,
        loaders.judgments_frame(study),
        loaders.human_pairwise_frame(study, profile=profile),
        loaders.responses_frame(study),
        profile=profile,
    )


def from_frames(
    bias_rows: list[dict],
    judgments: pd.DataFrame,
    answers: pd.DataFrame,
    responses: pd.DataFrame,
    *,
    profile: Profile,
) -> list[dict]:
    """The rows from the bias table's rows and the loaders' frames (the report's and the tests' one path)."""
    cue_rows = [r for r in bias_rows if r["bias"] in REGISTRY]
    if not cue_rows:
        return []
    if not judgments.empty:
        judgments = judgments[judgments["condition"].isin([*CUE_CONDITIONS, *UNCUED])]
    judge_units_, judge_counts = judge_robustness_units(judgments)
    human_units_, human_counts = human_robustness_units(answers)
    units = pd.concat([judge_units_, human_units_], ignore_index=True)
    counts = pd.concat([judge_counts, human_counts], ignore_index=True).set_index(["subject", "bias"])
    effects = _effect_units(judgments, answers, responses, profile=profile)
    humans = {r["bias"]: r for r in cue_rows if r["subject"] == HUMANS}
    # Humans first (the reference), then judges by name; biases in the registry's order.
    cue_rows = sorted(cue_rows, key=lambda r: (r["subject"] != HUMANS, r["subject"], list(REGISTRY).index(r["bias"])))
    out = []
    for row in cue_rows:
        subject, bias = row["subject"], row["bias"]
        mine = units[(units["subject"] == subject) & (units["bias"] == bias)]
        answered = int(counts["answered"].get((subject, bias), 0))
        rate = robustness(mine, unmatched=answered - len(mine), two_way=subject == HUMANS)
        vs, reason = _versus_humans(row, humans.get(bias), effects)
        plugin = REGISTRY[bias]
        out.append(
            {
                "subject": subject,
                "bias": bias,
                "label": plugin.words.name,
                "short": plugin.short,
                "perturbs": plugin.perturbs,
                "n": row["n"],
                "robustness": _robustness_block(rate, subject),
                "effect": _effect_block(row, profile=profile),
                "vs_humans": vs,
                "vs_humans_reason": reason,
                "profile": profile.name,
                "method": "robustness: CALM's share of verdicts unchanged by the cue; effect: the bias table's "
                "paired, clustered (hits - mirror) / n with its test, interval and claim; vs_humans: the judge's "
                "effect minus people's (docs/methods.md, 'The bias battery')",
            }
        )
    return out


def _effect_units(
    judgments: pd.DataFrame, answers: pd.DataFrame, responses: pd.DataFrame, *, profile: Profile
) -> pd.DataFrame:
    """The bias table's per-cluster units of every cue row (the same functions the bias section calls)."""
    parts = []
    cued = judgments[judgments["condition"].isin(CUE_CONDITIONS)] if not judgments.empty else judgments
    if not cued.empty:
        found = judge_units(judge_bias_units(cued, profile=profile), denominator=profile.denominator)
        parts.append(found.rename(columns={"c0": "instruction"})[EFFECT_UNITS])
    people = answers[answers["condition"].isin(CROWD_CUED)] if not answers.empty else answers
    if not people.empty:
        with_lengths = attach_lengths(people, responses, unit=profile.human_length_unit)
        records = human_bias_records(with_lengths, denominator=profile.denominator)
        found = human_units(human_bias_units(records, per_rater=profile.human_average == "per-rater"))
        parts.append(found.rename(columns={"c1": "instruction"})[EFFECT_UNITS])
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=EFFECT_UNITS)


def _robustness_block(rate: Robustness, subject: str) -> dict:
    reason = None
    if rate.rate is None:
        reason = (
            "no cued verdict has an unperturbed verdict on the same pair and arrangement: run the plain or order "
            "condition on the same pairs"
            if subject != HUMANS
            else "no cued answer has a counted unperturbed answer (plain or order condition) on the same pair and "
            "arrangement"
        )
    return {
        "rate": rate.rate,
        "ci95": rate.ci95,
        "n": rate.n,
        "pairs": rate.pairs,
        "unmatched": rate.unmatched,
        "clusters": rate.clusters,
        "raters": rate.raters,
        "df": rate.df,
        "design_effect": rate.design_effect,
        "reference": HUMAN_REFERENCE if subject == HUMANS else JUDGE_REFERENCE,
        "interval": rate.interval,
        "reason": reason,
    }


def _effect_block(row: dict, *, profile: Profile) -> dict:
    claim = bias_claim(row, correction=profile.correction) or {}
    clusters = "raters and instructions" if row["subject"] == HUMANS else "instructions"
    return {
        "estimate": row.get("effect"),
        "ci95": row.get("effect_ci95"),
        "p_value": row.get("p_value"),
        "p_adjusted": row.get("p_adjusted"),
        "claim": claim.get("verdict"),
        "claim_text": claim.get("text"),
        "hits": row.get("hits"),
        "mirror": row.get("mirror"),
        "clusters": row.get("clusters"),
        "null": row.get("null"),
        "test": row.get("test"),
        "interval": "Tango's paired score interval of (hits - mirror) / n at the effective n = n / design effect, "
        f"the design effect from the cluster-robust variance over {clusters} (the bias table's effect_ci95)",
    }


def _versus_humans(row: dict, people: dict | None, effects: pd.DataFrame) -> tuple[dict | None, str | None]:
    """(the judge-minus-humans block, None) or (None, why there is none)."""
    bias = row["bias"]
    if row["subject"] == HUMANS:
        return None, "people are the reference"
    if REGISTRY[bias].judge_only:
        return None, f"{bias} has no crowd condition (a judge-only bias)"
    if people is None or not people.get("n"):
        return None, f"no counted human answers on the {bias} condition"
    if row.get("effect") is None:
        return None, "the judge has no answered pairs on this condition"
    mine = effects[(effects["subject"] == row["subject"]) & (effects["bias"] == bias)]
    theirs = effects[(effects["subject"] == HUMANS) & (effects["bias"] == bias)]
    result = judge_minus_humans(mine, theirs)
    return (
        {
            # The bias rows' own effects, so the difference reads off the two rows exactly.
            "difference": row["effect"] - people["effect"],
            "ci95": result.ci95,
            "p_value": result.p_value,
            "judge_effect": row["effect"],
            "humans_effect": people["effect"],
            "humans_n": people["n"],
            "clusters": result.clusters,
            "df": result.df,
            "method": DIFFERENCE_METHOD,
        },
        None,
    )
