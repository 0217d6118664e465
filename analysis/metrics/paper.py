"""The CoBBLEr paper's human-machine and inter-annotator numbers (docs/methods.md, "Reproduction").

Pure functions over the frames of ``analysis.loaders``; each mirrors one computation
of the authors' analysis, with their RBO variant, tie rule, item deletions and
rounding, so the printed numbers come out (49.6%, 44%, Figure 5, the inter-annotator
agreement, the human bias rates).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from analysis.metrics.rankings import HUMAN_BIAS_TIE_ORDER, rankings_by
from analysis.metrics.rbo import rbo_many
from annotations.vocabulary import Arrangement, CrowdChoice

P = 0.8  # the authors' persistence everywhere
ACL_DROPPED = ("dolly", "redpajama")
# Candidates each ACL evaluator's list loses besides dolly and redpajama (the 44% headline).
ACL_EXTRA_DROPS = {
    "llamav2": ("llamav2",),
    "mistral": ("mistral", "olmo", "llamav2"),
    "olmo": ("mistral", "olmo", "llamav2"),
}


def _borda_sum(rankings: pd.DataFrame) -> pd.DataFrame:
    """Summed Borda counts (models ranked below) per (instruction, candidate) over raters."""
    rows = [
        (inst, key, len(ranking) - 1 - pos)
        for inst, ranking in zip(rankings["instruction"], rankings["ranking"], strict=True)
        for pos, key in enumerate(ranking)
    ]
    frame = pd.DataFrame(rows, columns=["instruction", "candidate", "score"])
    return frame.groupby(["instruction", "candidate"], as_index=False)["score"].sum()


def aggregated_human(rankings: pd.DataFrame, *, order: Sequence[str]) -> pd.Series:
    """Per instruction: the 6 annotators' Borda counts summed, sorted stably (T2)."""
    return rankings_by(_borda_sum(rankings), group=["instruction"], tie_break="canonical", order=order)


def judge_rankings(aggregates: pd.DataFrame, *, tie_break: str, order: Sequence[str]) -> pd.Series:
    """Per (judge, instruction): the judge's ranking by wins."""
    frame = aggregates.rename(columns={"wins": "score"})
    return rankings_by(frame, group=["judge", "instruction"], tie_break=tie_break, order=order)


def mean_rbo(left: pd.Series, right: pd.Series, *, variant: str, drop: Sequence[str] = ()) -> float:
    """Mean over shared index values (instructions) of RBO(left, right) after deleting ``drop``."""
    return mean_rbos([(left, right, drop)], variant=variant)[0]


def mean_rbos(cells: Sequence[tuple[pd.Series, pd.Series, Sequence[str]]], *, variant: str) -> list[float]:
    """``mean_rbo`` of every (left, right, drop) cell, with one ``rbo_many`` call for all of them
    (each pair's RBO is computed on its own, so the numbers are those of a call per cell)."""
    xs: list[list] = []
    ys: list[list] = []
    ends = []
    for left, right, drop in cells:
        shared = left.index.intersection(right.index)
        xs += [[k for k in ranking if k not in drop] for ranking in left.loc[shared].tolist()]
        ys += [[k for k in ranking if k not in drop] for ranking in right.loc[shared].tolist()]
        ends.append(len(xs))
    values = rbo_many(xs, ys, P, variant=variant, ties="w")  # = rbo_score per instruction, bit for bit
    starts = [0, *ends[:-1]]
    return [float(np.mean(values[a:b])) if b > a else float("nan") for a, b in zip(starts, ends, strict=True)]


def rbo_human_machine_v1(rankings: pd.DataFrame, v1: pd.DataFrame, *, order: Sequence[str]) -> float:
    """The v1 headline (49.6%): aggregated humans vs the 15 candidate-evaluators' summed wins, RBO_trunc, T2."""
    human = aggregated_human(rankings, order=order)
    machine = v1[v1["judge"].isin(order[:15])]
    summed = machine.groupby(["instruction", "candidate"], as_index=False)["wins"].sum()
    machine_rank = rankings_by(
        summed.rename(columns={"wins": "score"}), group=["instruction"], tie_break="canonical", order=order
    )
    return mean_rbo(human, machine_rank, variant="trunc")


def rbo_human_vs_evaluator_v1(rankings: pd.DataFrame, v1: pd.DataFrame, *, order: Sequence[str]) -> dict[str, float]:
    """Figure 5: aggregated humans vs each evaluator, RBO_trunc, T2, rounded to 3."""
    human = aggregated_human(rankings, order=order)
    machine = judge_rankings(v1[v1["judge"].isin(order[:15])], tie_break="canonical", order=order)
    judges = sorted(machine.index.get_level_values("judge").unique(), key=list(order).index)
    values = mean_rbos([(human, machine.xs(judge, level="judge"), ()) for judge in judges], variant="trunc")
    return {judge: round(value, 3) for judge, value in zip(judges, values, strict=True)}


def rbo_human_machine_acl(
    rankings: pd.DataFrame, acl: pd.DataFrame, *, order: Sequence[str]
) -> tuple[float, pd.DataFrame]:
    """The ACL headline (44%): each annotator x each ACL evaluator, RBO_ext on 13 models, T1; the mean of cells.

    Returns the headline and the rounded cells (annotator, judge, value).
    """
    machine = judge_rankings(acl, tie_break="alpha", order=order)
    judges = {
        judge: machine.xs(judge, level="judge") for judge in sorted(machine.index.get_level_values("judge").unique())
    }
    keys, cells = [], []
    for rater, mine in rankings.groupby("rater", sort=True):
        human = mine.set_index("instruction")["ranking"]
        for judge, theirs in judges.items():
            keys.append((rater, judge))
            cells.append((human, theirs, ACL_DROPPED + ACL_EXTRA_DROPS.get(judge, ())))
    values = mean_rbos(cells, variant="ext")
    frame = pd.DataFrame(
        [(rater, judge, round(value, 3)) for (rater, judge), value in zip(keys, values, strict=True)],
        columns=["rater", "judge", "value"],
    )
    return float(frame["value"].mean()), frame


def rbo013_identical_ext(n: int, p: float = P) -> float:
    """``rbo`` 0.1.3's ``RankingSimilarity(S, S).rbo_ext(p)`` for a list of n items, float for float.

    The same operations in the same order as the package's loop (Eq. 32, equal lengths,
    every agreement exactly 1.0), so rounding matches: 1.0 for most n, but
    1.0000000000000002 for n = 8, 11, 12, 13 at p = 0.8.
    """
    if n == 0:
        return 1.0
    total = 1.0 * (1 - p) * 1
    ext_term = 1 * p
    for d in range(1, n):
        total = total + 1.0 * (1 - p) * (p**d) * 1.0
        ext_term = 1.0 * 1.0 * p ** (d + 1)
    return total + 0 + ext_term


def authors_rbo_ext_is_one(x: Sequence, y: Sequence, p: float = P) -> bool:
    """Would the authors' ``rbo_ext(...) == 1`` have been true for these two rankings?

    Only identical lists reach 1 (any disagreement costs far more than a rounding
    error), and for those the package's float is ``rbo013_identical_ext``.
    """
    return list(x) == list(y) and rbo013_identical_ext(len(x), p) == 1.0


def iaa_ranking(rankings: pd.DataFrame, *, variant: str = "trunc", drop: Sequence[str] = ()) -> float:
    """Ranking-study IAA: mean over annotator pairs (a < b; no diagonal) of the rounded per-pair mean RBO."""
    by_rater = {r: g.set_index("instruction")["ranking"] for r, g in rankings.groupby("rater", sort=True)}
    pairs = [(by_rater[a], by_rater[b], drop) for a, b in combinations(sorted(by_rater), 2)]
    cells = [round(value, 3) for value in mean_rbos(pairs, variant=variant)]
    cells = [c for c in cells if c != 1]  # the authors' filter; no cell is 1 here
    return float(np.mean(cells)) if cells else float("nan")


def human_bias_iaa(answers: pd.DataFrame, *, candidate_of: dict[int, str]) -> float:
    """Human bias-study IAA: per batch, RBO_ext between raters' selection-ratio rankings, averaged.

    Per rater: ratio = wins / appearances over the batch's tasks, sorted stably with the
    authors' tie order (``HUMAN_BIAS_TIE_ORDER``). The authors dropped rater pairs whose RBO "== 1"; as their
    ``rbo`` 0.1.3 computes it, identical 13-item rankings score 1.0000000000000002 and were
    kept, so only a pair the package scores exactly 1.0 is dropped (none in the CoBBLEr data;
    ``authors_rbo_ext_is_one``). The batch mean is rounded to 3 decimals, then the batch
    means are averaged and rounded.
    """
    work = answers.assign(
        cand_a=answers["resp_a"].map(candidate_of),
        cand_b=answers["resp_b"].map(candidate_of),
    )
    slot_a_is_a = work["arrangement"] == Arrangement.AB
    chose_a = (work["choice"] == CrowdChoice.A) == slot_a_is_a
    work = work.assign(winner=np.where(chose_a, work["cand_a"], work["cand_b"]))
    shown = pd.concat(
        [
            work[["batch", "rater", "cand_a"]].rename(columns={"cand_a": "candidate"}),
            work[["batch", "rater", "cand_b"]].rename(columns={"cand_b": "candidate"}),
        ]
    )
    appear = shown.value_counts().rename("appearances")
    wins = work[["batch", "rater", "winner"]].rename(columns={"winner": "candidate"}).value_counts().rename("wins")
    ratios = pd.concat([appear, wins], axis=1).fillna({"wins": 0}).reset_index()
    ratios["score"] = ratios["wins"] / ratios["appearances"]
    # One sort for all (batch, rater) rankings, one batched RBO for all rater pairs; the same
    # numbers as rank() per rater and rbo_score() per pair (bit for bit: the == 1 filter sees them).
    ranked = rankings_by(ratios, group=["batch", "rater"], tie_break="canonical", order=HUMAN_BIAS_TIE_ORDER)
    if ranked.empty:
        return float("nan")
    pairs: list[tuple[object, list, list]] = []
    for batch, mine in ranked.groupby(level="batch", sort=True):
        by_rater = dict(zip(mine.index.get_level_values("rater"), mine.tolist(), strict=True))
        pairs += [(batch, by_rater[a], by_rater[b]) for a, b in combinations(sorted(by_rater), 2)]
    scores = rbo_many([x for _, x, _ in pairs], [y for _, _, y in pairs], P, variant="ext", ties="w")
    per_batch: dict[object, list[float]] = {}
    for (batch, _x, _y), value in zip(pairs, scores.tolist(), strict=True):
        per_batch.setdefault(batch, []).append(value)
    batch_means = []
    for batch, values in per_batch.items():
        # The authors' "!= 1" filter saw rbo 0.1.3's floats: drop a pair only where that
        # package returns exactly 1.0 (identical lists of some lengths), never otherwise.
        pairs_here = [(x, y) for b, x, y in pairs if b == batch]
        values = [v for v, (x, y) in zip(values, pairs_here, strict=True) if not authors_rbo_ext_is_one(x, y)]
        if values:
            batch_means.append(round(float(np.mean(values)), 3))
    return round(float(np.mean(batch_means)), 3) if batch_means else float("nan")
