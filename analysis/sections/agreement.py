"""The report's ``agreement`` section: humans vs judges, annotators with each other, judges with each other.

- Rankings: RBO (the profile's variant, p and tie rule) per instruction, averaged, with a
  seeded bootstrap over instructions; Krippendorff's alpha (ordinal) on rank positions.
- Pairwise studies: Krippendorff's alpha (nominal), Fleiss' kappa and percent agreement per
  condition over the raters, on (condition, pair, cued response) units with outcomes a / b /
  tie; human vs judge percent agreement and Cohen's kappa on the same pairs. Ties are a third
  outcome (and, where there are tie votes, also left out: rows say which in ``ties``).
Judge rankings come from single calls (prompt-1 wins over appearances) and, for an
imported CoBBLEr study, from the stored win counts (``source`` says which).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from analysis import loaders
from analysis.metrics.agreement import (
    TIE,
    cue_targets,
    fleiss_kappa,
    krippendorff_alpha,
    percent_agreement,
    rater_units,
    vote_outcomes,
)
from analysis.metrics.paper import _borda_sum
from analysis.metrics.ranking_agreement import choice_agreement_rows, pairwise_rbo_rows, rbo_row
from analysis.metrics.rankings import rankings_by, wins_from_judgments
from analysis.profiles import Profile
from annotations.models import Study
from annotations.vocabulary import Arrangement, Condition, arrangement_of

SEED = 7
JUDGE_RANKING_CONDITIONS = (Condition.ORDER, Condition.PLAIN)  # prompt 1 of these feeds rankings (the authors' rule)


def build(*, study: Study, profile: Profile) -> list[dict]:
    order = loaders.candidate_order(study)
    rankings = loaders.human_rankings_frame(study, profile=profile)
    judgments = loaders.judgments_frame(study)
    aggregates = loaders.aggregates_frame(study, collection="v1", run="order")  # the only rows used here
    ties = "a" if profile.tie_break == "tie-aware" else "w"
    rbo: dict[str, Any] = {"variant": profile.rbo_variant, "p": profile.rbo_p, "ties": ties, "seed": SEED}
    judge_ranks = _judge_rankings(judgments, aggregates, profile=profile, order=order)

    rows: list[dict | None] = []  # None: a pair with nothing to compare, dropped at the end
    if not rankings.empty:
        by_rater = {r: g.set_index("instruction")["ranking"] for r, g in rankings.groupby("rater", sort=True)}
        rows += pairwise_rbo_rows("inter_annotator", by_rater, with_chance=True, **rbo)
        rows.append(_alpha_row(rankings))
        human = rankings_by(_borda_sum(rankings), group=["instruction"], tie_break=profile.tie_break, order=order)
        for (source, judge), ranks in judge_ranks.items():
            rows.append(
                rbo_row("human_vs_judge", "humans", judge, human, ranks, source=source, with_chance=True, **rbo)
            )
            for rater, mine in by_rater.items():
                rows.append(rbo_row("human_vs_judge", rater, judge, mine, ranks, source=source, **rbo))
    for source in sorted({s for s, _ in judge_ranks}):
        mine = {j: r for (s, j), r in judge_ranks.items() if s == source}
        rows += [r | {"source": source} for r in pairwise_rbo_rows("judge_vs_judge", mine, **rbo)]
    answers = loaders.human_pairwise_frame(study, profile=profile)
    if not answers.empty:
        rows += _pairwise_rows(answers, judgments)
    return [r for r in rows if r is not None]


def _judge_rankings(
    judgments: pd.DataFrame, aggregates: pd.DataFrame, *, profile: Profile, order: list[str]
) -> dict[tuple[str, str], pd.Series]:
    out: dict[tuple[str, str], pd.Series] = {}
    usable = judgments[judgments["condition"].isin(JUDGE_RANKING_CONDITIONS)]
    if not usable.empty:
        # Wins over appearances in both presentations ("both"), or prompt 1 only (the
        # authors' rule, profile cobbler-paper): docs/methods.md "Order run counterbalancing".
        scores = wins_from_judgments(usable, presentations=profile.judge_rankings)
        # One ranking per judge: the order run when there is one, else plain.
        scores = scores.sort_values("condition").drop_duplicates(["judge", "instruction", "candidate"], keep="first")
        ranks = rankings_by(scores, group=["judge", "instruction"], tie_break=profile.tie_break, order=order)
        for judge in ranks.index.get_level_values("judge").unique():
            out[("judgments", judge)] = ranks.xs(judge, level="judge")
    stored = aggregates[(aggregates["collection"] == "v1") & (aggregates["run"] == "order")]
    if not stored.empty:
        ranks = rankings_by(
            stored.rename(columns={"wins": "score"}),
            group=["judge", "instruction"],
            tie_break=profile.tie_break,
            order=order,
        )
        for judge in ranks.index.get_level_values("judge").unique():
            out[("imported:v1", judge)] = ranks.xs(judge, level="judge")
    return out


def _alpha_row(rankings: pd.DataFrame) -> dict:
    """Krippendorff's alpha (ordinal) with units = (instruction, candidate), values = rank position."""
    positions = pd.DataFrame(
        [
            (r, i, key, pos + 1)
            for r, i, ranking in rankings[["rater", "instruction", "ranking"]].itertuples(index=False)
            for pos, key in enumerate(ranking)
        ],
        columns=["rater", "group", "candidate", "value"],
    )
    positions["unit"] = positions["group"].astype(str) + ":" + positions["candidate"]
    result = krippendorff_alpha(positions, level="ordinal", seed=SEED)
    return {
        "kind": "inter_annotator",
        "metric": "krippendorff_alpha",
        "a": "all",
        "b": "all",
        "value": _f(result.value),
        "n": result.n,
        "ci95": [_f(x) for x in result.ci95],
        "level": "ordinal",
        "condition": "ranking",
    }


TIE_RULES = {
    # Length-control setup S1: a tie is a third outcome. Tie vs a response is disagreement,
    # tie vs tie is agreement.
    "third-class": "a tie vote is a third outcome: tie vs a response disagrees, tie vs tie agrees",
    # Setup S2: tie votes are left out (only emitted when there are tie votes).
    "excluded": "tie votes are left out",
}
RATER_UNIT = (
    "condition, pair (MT-Bench: question, model pair, turn), cued response; split by presentation for twin tasks"
)


def _pairwise_rows(answers: pd.DataFrame, judgments: pd.DataFrame) -> list[dict]:
    """Rater agreement (alpha, Fleiss' kappa, percent) and human vs judge, per condition.

    Votes are outcomes (which response won, or a tie; never a slot for a tie) on the units
    of ``rater_units``. Every statistic is given with ties as a third class and, when
    there are tie votes, again without them (``ties`` names the rule on each row).
    """
    rows = []
    for condition, group in answers.groupby("condition", sort=True):
        tidy = rater_units(group)
        variants = [("third-class", tidy)]
        if (tidy["value"] == TIE).any():
            variants.append(("excluded", tidy[tidy["value"] != TIE]))
        for ties, data in variants:
            stats = (
                ("krippendorff_alpha", krippendorff_alpha(data, level="nominal", seed=SEED)),
                ("fleiss_kappa", fleiss_kappa(data, seed=SEED)),
                ("percent", percent_agreement(data, seed=SEED)),
            )
            for metric, res in stats:
                rows.append(
                    {
                        "kind": "inter_annotator",
                        "metric": metric,
                        "a": f"raters:{condition}",
                        "b": f"raters:{condition}",
                        "value": _f(res.value),
                        "n": res.n,
                        "ci95": [_f(x) for x in res.ci95],
                        "condition": condition,
                        "level": "nominal",
                        "ties": ties,
                        "ties_rule": TIE_RULES[ties],
                        "unit": RATER_UNIT,
                    }
                )
        rows += _human_vs_judge_choices(group, judgments, condition=str(condition))
    return rows


def _human_vs_judge_choices(answers: pd.DataFrame, judgments: pd.DataFrame, *, condition: str) -> list[dict]:
    """Each human vote against the judge's verdict on the same pair, as outcomes.

    The judge's verdict for a vote is its call on the same screen (same pair, same response
    in slot 1, same cue), else its only call on the same unit (pair and cued response): a
    judge that saw the pair once (MT-Bench gpt-4, a plain run) is compared with votes in
    either orientation. A judge's own ties and invalid outputs are not verdicts.
    """
    mine = judgments[(judgments["condition"] == condition) & judgments["valid"]]
    if mine.empty:
        return []
    human = answers.assign(
        outcome=vote_outcomes(answers["choice"], answers["arrangement"]),
        base=answers["pair"].astype(str) + ":" + cue_targets(answers["cue_slot"], answers["arrangement"]),
        rater=answers["rater_label"].where(answers["rater_label"] != "", answers["rater"].astype(str)),
    )
    human = human[human["outcome"].notna()]
    human = human.assign(
        screen=human["base"] + ":" + (human["arrangement"] == Arrangement.AB).astype(str),
        key=np.arange(len(human)).astype(str),
    )
    judge_arrangement = mine["slot1_is_a"].map(arrangement_of)
    judge = mine.assign(
        outcome=np.where(mine["chosen_is_a"], "a", "b"),
        base=mine["pair"].astype(str) + ":" + cue_targets(mine["cue_slot"], judge_arrangement),
    )
    judge = judge.assign(screen=judge["base"] + ":" + mine["slot1_is_a"].astype(str))
    rows = []
    for name, g in judge.groupby("judge", sort=True):
        by_screen = g.drop_duplicates("screen", keep="last").set_index("screen")["outcome"]
        single = g.groupby("base")["outcome"].agg(lambda v: v.iloc[0] if len(v) == 1 else None).dropna()
        verdict = human["screen"].map(by_screen).fillna(human["base"].map(single))
        found = verdict.notna()
        if not found.any():
            continue
        # choice_agreement_rows compares any labels: here outcomes a / b / tie, not booleans.
        votes = human[found].assign(chose_a=human.loc[found, "outcome"])
        calls = human[found].assign(chose_a=verdict[found])[["key", "chose_a"]]
        variants = [("third-class", votes)]
        if (votes["chose_a"] == TIE).any():
            variants.append(("excluded", votes[votes["chose_a"] != TIE]))
        for ties, v in variants:
            # The instruction goes along: the intervals are clustered by it (and by rater).
            out = choice_agreement_rows(
                v[["rater", "instruction", "key", "chose_a"]], calls, condition=condition, judge_name=str(name)
            )
            rows += [r | {"ties": ties, "ties_rule": TIE_RULES[ties]} for r in out]
    return rows


def _f(x: float) -> float | None:
    return float(x) if x is not None and np.isfinite(x) else None
