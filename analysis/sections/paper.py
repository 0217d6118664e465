"""The report's ``paper`` section: the CoBBLEr paper's numbers recomputed from the database.

Filled only under the ``cobbler-paper`` profile (analysis.report), from an
``import_cobbler`` study: the human ranking study (condition "ranking"), the three
human bias studies, and the evaluators' stored win counts (AggregateJudgment:
collection v1 = model_annotations/, acl = model_annotations/new/, bias = model_bias/<run>/).
Keys beyond the contract: ``valid_rates`` (run -> judge -> valid-response rate),
``rbo_human_machine_acl_cells`` and ``notes``. Parts without data are left out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import loaders
from analysis.metrics import paper
from analysis.metrics.human_bias import TOKENIZER_NOTE, human_bias_records
from analysis.profiles import Profile
from analysis.sections.bias import attach_lengths
from annotations.models import Study
from annotations.vocabulary import Condition

HUMAN_BIAS_STUDIES = {
    Condition.ORDER: Condition.ORDER,
    Condition.BANDWAGON: Condition.BANDWAGON,
    Condition.ATTENTIONAL: Condition.ATTENTIONAL,
}


def build(*, study: Study, profile: Profile) -> dict:
    order = loaders.candidate_order(study)
    rankings = loaders.human_rankings_frame(study, profile=profile)
    out: dict = {}
    v1 = loaders.aggregates_frame(study, collection="v1", run="order")  # the agreement section's too
    acl = loaders.aggregates_frame(study, collection="acl", run="order")
    if not rankings.empty and not v1.empty:
        out["rbo_human_machine_v1"] = paper.rbo_human_machine_v1(rankings, v1, order=order)
        out["rbo_human_vs_evaluator_v1"] = paper.rbo_human_vs_evaluator_v1(rankings, v1, order=order)
    if not rankings.empty and not acl.empty:
        headline, cells = paper.rbo_human_machine_acl(rankings, acl, order=order)
        out["rbo_human_machine_acl"] = headline
        out["rbo_human_machine_acl_cells"] = cells.to_dict("records")
    if not rankings.empty:
        out["iaa_ranking_rbo_trunc"] = paper.iaa_ranking(rankings, variant="trunc")
        out["iaa_ranking_rbo_ext_13"] = paper.iaa_ranking(rankings, variant="ext", drop=paper.ACL_DROPPED)
    out |= _human_bias(study, profile)
    bias_runs = loaders.aggregate_totals_frame(study, collection="bias")
    if not bias_runs.empty:
        out["valid_rates"] = valid_rates(bias_runs)
    out["notes"] = {
        "rbo": "p=0.8; v1, Figure 5 and IAA: truncated prefix sum (rbo 0.1.3 .rbo), ties in key order; "
        "ACL: extrapolated RBO on 13 models, ties by name; cells rounded to 3 decimals",
        "human_salience_tokens": TOKENIZER_NOTE,
    }
    return out


def _human_bias(study: Study, profile: Profile) -> dict:
    answers = loaders.human_pairwise_frame(study, profile=profile)
    if answers.empty:
        return {}
    responses = loaders.responses_frame(study)
    answers = attach_lengths(answers, responses, unit=profile.human_length_unit)
    records = human_bias_records(answers, denominator=profile.denominator)
    rate = np.where(records["n"] > 0, records["hits"] / records["n"].clip(lower=1), 0.0)
    means = records.assign(rate=rate).groupby("bias")["rate"].mean()
    candidate_of = dict(zip(responses["response"], responses["candidate"], strict=True))
    iaa = {
        name: paper.human_bias_iaa(answers[answers["condition"] == condition], candidate_of=candidate_of)
        for name, condition in HUMAN_BIAS_STUDIES.items()
        if (answers["condition"] == condition).any()
    }
    return {
        "human_bias": {k: float(v) for k, v in means.items()},
        "human_bias_iaa_rbo_ext": iaa,
    }


def valid_rates(bias_runs: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Per run and judge: prompt-1 wins / all comparisons (Table 2's ``valid``), from the
    per-instruction totals of ``loaders.aggregate_totals_frame``.

    Every valid prompt-1 answer gives exactly one win, so the wins of an instruction
    sum to its valid answers; the comparisons are C(k, 2) for the k candidates listed.
    """
    per_instruction = bias_runs.set_index(["run", "judge", "instruction"])[["wins", "k"]]
    per_instruction["pairs"] = per_instruction["k"] * (per_instruction["k"] - 1) // 2
    totals = per_instruction.groupby(["run", "judge"])[["wins", "pairs"]].sum()
    out: dict[str, dict[str, float]] = {}
    for (run, judge), row in totals.iterrows():
        out.setdefault(run, {})[judge] = float(row["wins"] / row["pairs"])
    return out
