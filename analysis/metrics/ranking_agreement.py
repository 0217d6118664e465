"""RBO and choice agreement between rankings and between choices (tidy rows for the report)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from analysis.metrics.rbo import rbo_ext_batch, rbo_many, rbo_renamed, rbo_trunc_batch
from analysis.metrics.stats import bootstrap_mean
from analysis.metrics.vote_agreement import vote_agreement

BATCHED = {"trunc": rbo_trunc_batch, "ext": rbo_ext_batch}


def rbo_per_instruction(left: pd.Series, right: pd.Series, *, variant: str, p: float, ties: str) -> np.ndarray:
    """RBO for every instruction both series rank (index = instruction).

    Complete, untied rankings of the same items (the usual case: drag-to-rank lists,
    judges without ties) go through the vectorised batch functions; anything else
    through ``rbo_many`` (the general implementation's numbers, batched where it can).
    """
    return _scores(_align(left, right, variant=variant), variant=variant, p=p, ties=ties)


@dataclass(frozen=True)
class _Aligned:
    """Two series' rankings of the instructions both rank, and their integer codes when batchable."""

    xs: list
    ys: list
    codes: tuple[np.ndarray, np.ndarray] | None


def _align(left: pd.Series, right: pd.Series, *, variant: str) -> _Aligned:
    shared = left.index.intersection(right.index)
    xs, ys = left.loc[shared].tolist(), right.loc[shared].tolist()
    return _Aligned(xs, ys, _as_codes(xs, ys) if variant in BATCHED else None)


def _scores(aligned: _Aligned, *, variant: str, p: float, ties: str) -> np.ndarray:
    if aligned.codes is not None:
        return BATCHED[variant](aligned.codes[0], aligned.codes[1], p)
    return rbo_many(aligned.xs, aligned.ys, p, variant=variant, ties=ties)


def _as_codes(xs: list, ys: list) -> tuple[np.ndarray, np.ndarray] | None:
    if not xs:
        return None
    k = len(xs[0])
    for x, y in zip(xs, ys, strict=True):
        if len(x) != k or len(y) != k:
            return None
        # Types first (at C speed), then the per-type test: the same as isinstance per item.
        if any(issubclass(t, frozenset) for t in {*map(type, x), *map(type, y)}) or set(x) != set(y):
            return None
    vocab = {key: n for n, key in enumerate(sorted({key for x in xs for key in x}))}
    return (np.array([[vocab[key] for key in x] for x in xs]), np.array([[vocab[key] for key in y] for y in ys]))


# Draws of the permutation null (docs/methods.md "Chance RBO"): enough for a stable mean and a
# 95% range to two decimals, cheap because the untied case is one vectorised call. Tied
# rankings go through the general RBO, about 40 us a pair: 50 draws keep a CoBBLEr report's
# agreement section near a second (the p-value's floor is then 1/51).
CHANCE_DRAWS = 200
CHANCE_DRAWS_TIED = 50


def rbo_row(
    kind: str,
    a: str,
    b: str,
    left: pd.Series,
    right: pd.Series,
    *,
    variant: str,
    p: float,
    ties: str,
    seed: int,
    with_chance: bool = False,
    **extra: object,
) -> dict | None:
    """One agreement row: mean RBO over shared instructions, bootstrap interval over them.

    ``with_chance`` adds ``chance``: what the same mean RBO is when ``left``'s items are put in
    random order (its tie structure kept), so a reader can tell agreement from list length.
    """
    aligned = _align(left, right, variant=variant)  # shared by the value and its chance level
    values = _scores(aligned, variant=variant, p=p, ties=ties)
    if values.size == 0:
        return None
    row: dict[str, Any] = {
        "kind": kind,
        "metric": f"rbo_{variant}",
        "a": a,
        "b": b,
        "value": float(values.mean()),
        "n": int(values.size),
        "ci95": bootstrap_mean(values, seed=seed),
        "p": p,
        "ties": ties,
    }
    if with_chance:
        row["chance"] = _chance(aligned, observed=row["value"], variant=variant, p=p, ties=ties, seed=seed)
    return row | extra


def chance_rbo(
    left: pd.Series,
    right: pd.Series,
    *,
    observed: float,
    variant: str,
    p: float,
    ties: str,
    seed: int,
    draws: int | None = None,
) -> dict:
    """The permutation null of a mean RBO: ``left``'s items shuffled per instruction, ``draws`` times.

    Returns the null's mean, the 2.5-97.5 percentile range of the null mean over this many
    instructions, and the one-sided permutation p-value of ``observed`` ((1 + draws at or above
    it) / (1 + draws)); ``draws`` defaults to CHANCE_DRAWS, or CHANCE_DRAWS_TIED with ties. Five answers at p = 0.8 give a chance RBO_ext of about 0.67, not 0.
    """
    aligned = _align(left, right, variant=variant)
    return _chance(aligned, observed=observed, variant=variant, p=p, ties=ties, seed=seed, draws=draws)


def _chance(
    aligned: _Aligned, *, observed: float, variant: str, p: float, ties: str, seed: int, draws: int | None = None
) -> dict:
    xs, ys, codes = aligned.xs, aligned.ys, aligned.codes
    rng = np.random.default_rng(seed)
    if codes is not None:
        draws = draws or CHANCE_DRAWS
        a, b = (np.repeat(c, draws, axis=0) for c in codes)
        null = BATCHED[variant](rng.permuted(a, axis=1), b, p).reshape(len(xs), draws).mean(axis=0)
    else:
        draws = draws or CHANCE_DRAWS_TIED
        null = _tied_null(xs, ys, draws=draws, rng=rng, p=p, variant=variant, ties=ties).mean(axis=1)
    low, high = np.percentile(null, [2.5, 97.5])
    above = int(np.sum(null >= observed - 1e-12))
    return {
        "value": float(null.mean()),
        "range95": [float(low), float(high)],
        "draws": draws,
        "p_above": (1 + above) / (1 + draws),
    }


def _tied_null(
    xs: list, ys: list, *, draws: int, rng: np.random.Generator, p: float, variant: str, ties: str
) -> np.ndarray:
    """(draws, instructions) RBO of each ``xs`` ranking with its items renamed at random, against ``ys``.

    The renamings are drawn draw by draw, instruction by instruction (the seeded sequence the
    null has always used); all draws are then scored in a few batches (``rbo_renamed``), or
    through ``rbo_many`` for an instruction whose two lists do not rank the same items.
    """
    items = [_items(x) for x in xs]
    sizes = {len(own) for own in items}
    if len(sizes) == 1:
        # One call draws the same renamings in the same order as a permutation per draw and
        # instruction (Generator.permuted shuffles row by row, as permutation does), 25x faster.
        (size,) = sizes
        drawn = rng.permuted(np.tile(np.arange(size), (draws * len(items), 1)), axis=1)
        per_instruction = list(drawn.reshape(draws, len(items), size).transpose(1, 0, 2))
    else:
        renamings = [[rng.permutation(len(own)) for own in items] for _ in range(draws)]
        per_instruction = [np.array([drawn[col] for drawn in renamings]) for col in range(len(xs))]
    batched = rbo_renamed(list(zip(xs, ys, per_instruction, strict=True)), p, variant=variant, ties=ties)
    null = np.empty((draws, len(xs)))
    for col, (x, y, own, perms, scores) in enumerate(zip(xs, ys, items, per_instruction, batched, strict=True)):
        if scores is None:
            scores = rbo_many([_relabelled(x, own, perm) for perm in perms], [y] * draws, p, variant=variant, ties=ties)
        null[:, col] = scores
    return null


def _items(ranking: list) -> list:
    """The items a ranking holds, tied groups opened, in the order renamings index them."""
    return sorted({key for entry in ranking for key in (entry if isinstance(entry, frozenset) else (entry,))}, key=str)


def _relabelled(ranking: list, items: list, perm: np.ndarray) -> list:
    """``ranking`` with ``items[i]`` renamed ``items[perm[i]]``; tied groups stay groups."""
    names = dict(zip(items, (items[i] for i in perm), strict=True))
    return [frozenset(names[k] for k in e) if isinstance(e, frozenset) else names[e] for e in ranking]


def pairwise_rbo_rows(
    kind: str,
    rankings: dict[str, pd.Series],
    *,
    variant: str,
    p: float,
    ties: str,
    seed: int,
    with_chance: bool = False,
) -> list[dict]:
    """Every unordered pair (a < b; never the diagonal) plus their mean as ``a = b = "all"``
    (whose ``chance`` is the mean of the pairs' chance levels)."""
    pairs = [
        rbo_row(
            kind, a, b, rankings[a], rankings[b], variant=variant, p=p, ties=ties, seed=seed, with_chance=with_chance
        )
        for a, b in combinations(sorted(rankings), 2)
    ]
    rows = [r for r in pairs if r is not None]
    if rows:
        values = np.array([r["value"] for r in rows])
        mean = {
            "kind": kind,
            "metric": f"rbo_{variant}",
            "a": "all",
            "b": "all",
            "value": float(values.mean()),
            "n": len(rows),
            "ci95": bootstrap_mean(values, seed=seed),
            "p": p,
            "ties": ties,
            "aggregate": "mean of pairs",
        }
        if with_chance:
            mean["chance"] = {
                "value": float(np.mean([r["chance"]["value"] for r in rows])),
                "aggregate": "mean of pairs",
            }
        rows.append(mean)
    return rows


def choice_agreement_rows(human: pd.DataFrame, judge: pd.DataFrame, *, condition: str, judge_name: str) -> list[dict]:
    """Human vs judge on the same calls: percent agreement and Cohen's kappa on the chosen response.

    ``human``: ``rater, instruction, key, chose_a``; ``judge``: ``key, chose_a``, where ``key``
    identifies the same pair in the same arrangement and cue (so the two saw the same screen).
    Intervals are clustered by instruction and rater (``vote_agreement``: votes on one
    instruction meet one verdict, one rater's votes share the rater), analytic, with no seed.
    The percent rows also carry the chance level and kappa the claims read.
    """
    joined = human.merge(judge[["key", "chose_a"]], on="key", suffixes=("_h", "_j"))
    if joined.empty:
        return []
    rows = []
    # Integer codes once, sliced per rater: far cheaper than a pandas group per rater.
    _, labels = np.unique(
        np.concatenate([joined["chose_a_h"].to_numpy(), joined["chose_a_j"].to_numpy()]), return_inverse=True
    )
    human_labels, judge_labels = labels[: len(joined)], labels[len(joined) :]
    instructions = pd.factorize(joined["instruction"])[0]
    raters, names = pd.factorize(joined["rater"], sort=True)
    everyone = np.arange(len(joined))
    by_rater = np.split(np.argsort(raters, kind="stable"), np.cumsum(np.bincount(raters))[:-1])
    for name, votes in [("humans", everyone), *zip(map(str, names), by_rater, strict=True)]:
        result = vote_agreement(
            human_labels[votes], judge_labels[votes], instructions=instructions[votes], raters=raters[votes]
        )
        common = {
            "kind": "human_vs_judge",
            "a": name if name != "humans" else f"humans:{condition}",
            "b": judge_name,
            "n": result.n,
            "condition": condition,
            "n_instructions": result.n_instructions,
            "n_raters": result.n_raters,
            "interval": result.interval,
            "df": result.df,
            "chance": result.chance,
        }
        rows.append(
            common
            | {
                "metric": "percent",
                "value": result.value,
                "ci95": result.ci95,
                "design_effect": result.design_effect,
                "kappa": result.kappa,
                "kappa_ci95": result.kappa_ci95,
                "kappa_p": result.kappa_p,
            }
        )
        # The same kappa as the percent row's (cohen_kappa on the same labels), as its own row.
        rows.append(common | {"metric": "cohen_kappa", "value": result.kappa, "ci95": result.kappa_ci95})
    return rows
