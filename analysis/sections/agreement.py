"""The report's ``agreement`` section: humans vs judges, annotators with each other, judges with each other.

- Rankings: RBO (the profile's variant, p and tie rule) per instruction, averaged, with a
  seeded bootstrap over instructions; Krippendorff's alpha (ordinal) on rank positions.
- Pairwise studies: Krippendorff's alpha (nominal) and Fleiss' kappa per condition over
  the raters; human vs judge percent agreement and Cohen's kappa on the same screens.
Judge rankings come from single calls (prompt-1 wins over appearances) and, for an
imported CoBBLEr study, from the stored win counts (``source`` says which).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import loaders
from analysis.metrics.agreement import fleiss_kappa, krippendorff_alpha
from analysis.metrics.paper import _borda_sum
from analysis.metrics.ranking_agreement import choice_agreement_rows, pairwise_rbo_rows, rbo_row
from analysis.metrics.rankings import rankings_by, wins_from_judgments
from analysis.profiles import Profile
from annotations.models import Study

SEED = 7
JUDGE_RANKING_CONDITIONS = ("order", "plain")  # prompt 1 of these feeds rankings (3.2)


def build(*, study: Study, profile: Profile) -> list[dict]:
    order = loaders.candidate_order(study)
    rankings = loaders.human_rankings_frame(study)
    judgments = loaders.judgments_frame(study)
    aggregates = loaders.aggregates_frame(study, collection="v1", run="order")  # the only rows used here
    ties = "a" if profile.tie_break == "tie-aware" else "w"
    rbo = {"variant": profile.rbo_variant, "p": profile.rbo_p, "ties": ties, "seed": SEED}
    judge_ranks = _judge_rankings(judgments, aggregates, profile=profile, order=order)

    rows: list[dict] = []
    if not rankings.empty:
        by_rater = {r: g.set_index("instruction")["ranking"] for r, g in rankings.groupby("rater", sort=True)}
        rows += pairwise_rbo_rows("inter_annotator", by_rater, **rbo)
        rows.append(_alpha_row(rankings))
        human = rankings_by(_borda_sum(rankings), group=["instruction"], tie_break=profile.tie_break, order=order)
        for (source, judge), ranks in judge_ranks.items():
            rows.append(rbo_row("human_vs_judge", "humans", judge, human, ranks, source=source, **rbo))
            for rater, mine in by_rater.items():
                rows.append(rbo_row("human_vs_judge", rater, judge, mine, ranks, source=source, **rbo))
    for source in sorted({s for s, _ in judge_ranks}):
        mine = {j: r for (s, j), r in judge_ranks.items() if s == source}
        rows += [r | {"source": source} for r in pairwise_rbo_rows("judge_vs_judge", mine, **rbo)]
    answers = loaders.human_pairwise_frame(study)
    if not answers.empty:
        rows += _pairwise_rows(answers, judgments)
    return [r for r in rows if r is not None]


def _judge_rankings(judgments: pd.DataFrame, aggregates: pd.DataFrame, *, profile: Profile,
                    order: list[str]) -> dict[tuple[str, str], pd.Series]:
    out: dict[tuple[str, str], pd.Series] = {}
    usable = judgments[judgments["condition"].isin(JUDGE_RANKING_CONDITIONS)]
    if not usable.empty:
        scores = wins_from_judgments(usable)
        # One ranking per judge: the order run when there is one, else plain.
        scores = scores.sort_values("condition").drop_duplicates(["judge", "instruction", "candidate"], keep="first")
        ranks = rankings_by(scores, group=["judge", "instruction"], tie_break=profile.tie_break, order=order)
        for judge in ranks.index.get_level_values("judge").unique():
            out[("judgments", judge)] = ranks.xs(judge, level="judge")
    stored = aggregates[(aggregates["collection"] == "v1") & (aggregates["run"] == "order")]
    if not stored.empty:
        ranks = rankings_by(stored.rename(columns={"wins": "score"}), group=["judge", "instruction"],
                            tie_break=profile.tie_break, order=order)
        for judge in ranks.index.get_level_values("judge").unique():
            out[("imported:v1", judge)] = ranks.xs(judge, level="judge")
    return out


def _alpha_row(rankings: pd.DataFrame) -> dict:
    """Krippendorff's alpha (ordinal) with units = (instruction, candidate), values = rank position."""
    positions = pd.DataFrame(
        [(r, i, key, pos + 1) for r, i, ranking in rankings[["rater", "instruction", "ranking"]].itertuples(index=False)
         for pos, key in enumerate(ranking)],
        columns=["rater", "group", "candidate", "value"],
    )
    positions["unit"] = positions["group"].astype(str) + ":" + positions["candidate"]
    result = krippendorff_alpha(positions, level="ordinal", seed=SEED)
    return {"kind": "inter_annotator", "metric": "krippendorff_alpha", "a": "all", "b": "all",
            "value": _f(result.value), "n": result.n, "ci95": [_f(x) for x in result.ci95], "level": "ordinal",
            "condition": "ranking"}


def _pairwise_rows(answers: pd.DataFrame, judgments: pd.DataFrame) -> list[dict]:
    rows = []
    chose_a = (answers["choice"] == "A") == (answers["presentation"] == "ab")
    answers = answers.assign(chose_a=chose_a)
    for condition, group in answers.groupby("condition", sort=True):
        tidy = group.assign(group=group["instruction"], unit=group["batch"].astype(str) + ":" + group["position"].astype(str),
                            value=group["choice"])
        alpha = krippendorff_alpha(tidy, level="nominal", seed=SEED)
        kappa = fleiss_kappa(tidy, seed=SEED)
        for metric, res in (("krippendorff_alpha", alpha), ("fleiss_kappa", kappa)):
            rows.append({"kind": "inter_annotator", "metric": metric, "a": f"raters:{condition}", "b": f"raters:{condition}",
                         "value": _f(res.value), "n": res.n, "ci95": [_f(x) for x in res.ci95], "condition": condition,
                         "level": "nominal"})
        rows += _human_vs_judge_choices(group, judgments, condition=str(condition))
    return rows


def _human_vs_judge_choices(answers: pd.DataFrame, judgments: pd.DataFrame, *, condition: str) -> list[dict]:
    mine = judgments[(judgments["condition"] == condition) & judgments["valid"]]
    if mine.empty:
        return []
    # The same screen: the same pair, the same response in the first slot, the same cued slot.
    cue = answers["cue_slot"].map({"A": "first", "B": "second"}).fillna("-")
    human = answers.assign(key=answers["pair"].astype(str) + ":" + (answers["presentation"] == "ab").astype(str) + ":" + cue,
                           rater=answers["rater_label"].where(answers["rater_label"] != "", answers["rater"].astype(str)))
    judge_key = mine["pair"].astype(str) + ":" + mine["slot1_is_a"].astype(str) + ":" + mine["cue_slot"].fillna("-")
    judge = mine.assign(key=judge_key, chose_a=mine["chosen_is_a"])
    rows = []
    for name, g in judge.groupby("judge", sort=True):
        rows += choice_agreement_rows(human[["rater", "key", "chose_a"]], g, condition=condition,
                                      judge_name=str(name), seed=SEED)
    return rows


def _f(x: float) -> float | None:
    return float(x) if x is not None and np.isfinite(x) else None
