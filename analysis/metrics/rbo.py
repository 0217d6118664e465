"""Rank-biased overlap (Webber, Moffat & Zobel 2010), with the tie treatments of Corsi & Urbano (2024).

A ranking is a sequence whose elements are items or *tie groups* (a set, frozenset,
tuple or list of items that share a rank): ``["red", {"blue", "green"}, "pink"]``.

Scores:
- ``trunc``: the truncated prefix sum (1-p) sum_{d<=k} p^(d-1) A_d to the depth of the
  shorter list. This is what ``rbo`` 0.1.3's ``.rbo(p)`` returns and what CoBBLEr used
  (p = 0.8); its ceiling is 1 - p^k, so two identical 15-item lists score
  0.965, not 1.
- ``min``, ``max``, ``res`` = max - min, ``ext``: Webber's bounds and extrapolation for
  possibly uneven lists. For complete rankings of the same items (our drag-to-rank
  lists) ``ext`` = ``min`` + ``res`` = ``max``, and identical lists score exactly 1.

Tie treatments (Corsi & Urbano, "The Treatment of Ties in Rank-Biased Overlap", SIGIR 2024):
- ``w``: ties are true equality; a tied group is seen whole as soon as its first rank
  is reached and agreement uses Webber's Eq. 28, A_d = 2 X_d / (|S_:d| + |L_:d|).
- ``a``: the expected RBO over random tie breaking. A group occupying ranks t..b
  contributes (d - t + 1) / (b - t + 1) of each item at depth d in t..b (the chance a
  random permutation of the group has put it above d), and A_d = X_d / d.
- ``b``: the ``a`` contributions, with the overlap normalised like a cosine so that a
  ranking compared with itself scores 1: A_d = X_d / (||c_S(d)|| ||c_L(d)||).
Without ties all three coincide.

Validated to 1e-9 on all 10,000 rows of Urbano's reference file (tests/analysis/test_rbo.py).
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

SCORES = ("ext", "min", "max", "res", "trunc")
TIES = ("w", "a", "b")
Ranking = Sequence[object]


@dataclass(frozen=True)
class _Flat:
    """A ranking flattened to items with the first and last 0-based rank of their group."""

    items: list[Hashable]
    top: np.ndarray
    bottom: np.ndarray

    @property
    def tied(self) -> bool:
        return bool(np.any(self.top != self.bottom))


def _flatten(ranking: Ranking) -> _Flat:
    items, top, bottom = _flatten_lists(ranking)
    return _Flat(items, np.asarray(top), np.asarray(bottom))


def _flatten_lists(ranking: Ranking) -> tuple[list[Hashable], list[int], list[int]]:
    """Items, and the first and last 0-based rank of each item's group (callers never mutate them).

    A report scores each judge's ranking of an instruction against every other subject's, so
    the same ranking is flattened dozens of times: rankings of names and frozen tie groups
    (hashable, and equal exactly when RBO sees the same ranking) are flattened once.
    """
    if set(map(type, ranking)) <= _CACHEABLE:
        return _flatten_cached(tuple(ranking))
    return _flatten_uncached(ranking)


_CACHEABLE = {str, frozenset}


@functools.lru_cache(maxsize=4096)
def _flatten_cached(ranking: tuple[Hashable, ...]) -> tuple[list[Hashable], list[int], list[int]]:
    return _flatten_uncached(ranking)


def _flatten_uncached(ranking: Ranking) -> tuple[list[Hashable], list[int], list[int]]:
    if not any(issubclass(t, _GROUPS) for t in set(map(type, ranking))):  # no tie groups: the common case
        listed = list(ranking)
        if len(set(listed)) != len(listed):
            raise ValueError("a ranking lists an item twice")
        ranks = list(range(len(listed)))
        return listed, ranks, ranks
    items: list[Hashable] = []
    top: list[int] = []
    bottom: list[int] = []
    rank = 0
    for element in ranking:
        if not isinstance(element, _GROUPS):  # the common case: a single item
            items.append(element)
            top.append(rank)
            bottom.append(rank)
            rank += 1
            continue
        group = _group(element)
        last = rank + len(group) - 1
        for item in group:
            items.append(item)
            top.append(rank)
            bottom.append(last)
        rank += len(group)
    if len(set(items)) != len(items):
        raise ValueError("a ranking lists an item twice")
    return items, top, bottom


def _group(element: object) -> list[Hashable]:
    # Strings are items, never groups of characters.
    if isinstance(element, _GROUPS):
        return sorted(element, key=str)  # order inside a group is meaningless
    return [element]


_GROUPS = (set, frozenset, tuple, list)


def parse_ranking(text: str) -> list[object]:
    """Urbano's text form: ``"a (b c) d"`` = a first, then b and c tied, then d."""
    out: list[object] = []
    group: list[str] | None = None
    for token in text.split():
        if token.startswith("("):
            group = []
            token = token[1:]
        closing = token.endswith(")")
        token = token.rstrip(")")
        if group is not None:
            group.append(token)
            if closing:
                out.append(frozenset(group))
                group = None
        else:
            out.append(token)
    if group is not None:
        raise ValueError(f"unclosed tie group in {text!r}")
    return out


def _contributions(flat: _Flat, index: dict[Hashable, int], n_items: int, depth: int, ties: str) -> np.ndarray:
    """c[i, d-1]: how much of item i a reader has seen at depth d (0..1)."""
    c = np.zeros((n_items, depth))
    d0 = np.arange(depth)  # 0-based depth index
    rows = np.fromiter((index[i] for i in flat.items), dtype=np.intp, count=len(flat.items))
    top, bottom = flat.top[:, None], flat.bottom[:, None]
    if ties == "w":
        c[rows] = (d0[None, :] >= top).astype(float)
    else:
        size = (bottom - top + 1).astype(float)
        c[rows] = np.clip((d0[None, :] - top + 1) / size, 0.0, 1.0)
    return c


def _agreement(x: np.ndarray, cs: np.ndarray, cl: np.ndarray, depth: np.ndarray, ties: str) -> np.ndarray:
    if ties == "w":
        return 2 * x / (cs.sum(axis=0) + cl.sum(axis=0))
    if ties == "a":
        return x / depth
    return x / np.sqrt((cs**2).sum(axis=0)) / np.sqrt((cl**2).sum(axis=0))


def rbo(x: Ranking, y: Ranking, p: float, *, ties: str = "a", scores: Iterable[str] = SCORES) -> dict[str, float]:
    """RBO of two rankings (items or tie groups) at persistence ``p``; returns the asked ``scores``."""
    wanted = tuple(scores)
    if not 0 < p < 1:
        raise ValueError("p must be strictly between 0 and 1")
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}")
    if unknown := set(wanted) - set(SCORES):
        raise ValueError(f"unknown RBO scores {sorted(unknown)}")
    fx, fy = _flatten(x), _flatten(y)
    if not fx.items or not fy.items:
        raise ValueError("RBO of an empty ranking is undefined")
    short, long_ = (fx, fy) if len(fx.items) <= len(fy.items) else (fy, fx)
    if not (short.tied or long_.tied):
        ties = "w"  # all treatments coincide; w is the cheapest
    s, l = len(short.items), len(long_.items)
    in_short = set(short.items)
    only_long = [i for i in long_.items if i not in in_short]  # L \ S, in L's order
    universe = short.items + only_long
    index = {item: k for k, item in enumerate(universe)}
    cs = _contributions(short, index, len(universe), l, ties)
    cl = _contributions(long_, index, len(universe), l, ties)
    seen = (cs * cl).sum(axis=0)  # X_d for d = 1..l, from what both lists show
    depth = np.arange(1, l + 1, dtype=float)
    weights = p**depth
    k = (1 - p) / p

    # Depths 1..s: both lists are visible.
    a_short = _agreement(seen[:s], cs[:, :s], cl[:, :s], depth[:s], ties)
    a_s = a_short[-1]
    out: dict[str, float] = {}
    if "trunc" in wanted:
        out["trunc"] = float(k * np.sum(a_short * weights[:s]))

    # Depths s+1..l: the short list has ended; its missing items are assumed
    # absent (min), the best possible (max) or agreeing at rate A_s (ext).
    tail = slice(s, l)
    x_l = seen[-1]

    def beyond_s(x_tail: np.ndarray) -> np.ndarray:
        if ties == "w":
            return 2 * x_tail / (depth[tail] + cl[:, tail].sum(axis=0))
        if ties == "a":
            return x_tail / depth[tail]
        return x_tail / np.sqrt(depth[tail]) / np.sqrt((cl[:, tail] ** 2).sum(axis=0))

    def total(a_tail: np.ndarray, after_l: float) -> float:
        a = np.concatenate([a_short, a_tail])
        return float(k * (np.sum(a * weights) + after_l))

    if {"min", "max", "res"} & set(wanted):
        after_min = x_l * (np.log(1 / (1 - p)) - np.sum(weights / depth))
        rbo_min = total(beyond_s(seen[tail]), after_min)
        # Max: the short list's unseen ranks s+1..d hold the first d-s items that only
        # the long list has, so each of them counts as soon as the long list shows it.
        extra = cl[[index[i] for i in only_long[: l - s]]][:, tail]
        x_max = seen[tail] + np.triu(extra).sum(axis=0)
        f = int(round(l + s - x_l))
        dd = np.arange(l + 1, f + 1, dtype=float)
        after_max = np.sum((2 * dd - l - s + x_l) / dd * p**dd) + p ** (f + 1) / (1 - p)
        rbo_max = total(beyond_s(x_max), after_max)
        out.update({"min": rbo_min, "max": rbo_max, "res": rbo_max - rbo_min})
    if "ext" in wanted:
        # Each unseen rank of the short list agrees at rate A_s, weighted by how much
        # of a long-only item the long list has revealed at that depth.
        if l > s:
            partial = cl[[index[i] for i in only_long]][:, tail]
            shown = np.where(partial > 0, partial, np.nan)
            mean_shown = np.nanmean(shown, axis=0)
            x_ext = seen[tail] + (depth[tail] - s) * a_s * mean_shown
        else:
            x_ext = seen[tail]
        after_ext = (x_l + (l - s) * a_s) / l * p ** (l + 1) / (1 - p)
        out["ext"] = total(beyond_s(x_ext), after_ext)
    return {name: out[name] for name in wanted}


def rbo_score(x: Ranking, y: Ranking, *, p: float, variant: str, ties: str = "a") -> float:
    """One RBO number: ``variant`` is one of ``ext``, ``min``, ``max``, ``res``, ``trunc``."""
    return rbo(x, y, p, ties=ties, scores=(variant,))[variant]


def rbo_many(xs: Sequence[Ranking], ys: Sequence[Ranking], p: float, *, variant: str, ties: str = "a") -> np.ndarray:
    """``rbo_score(x, y, ...)`` for every pair of ``xs`` and ``ys``, as an array (the same numbers).

    For ``trunc`` and ``ext`` the pairs are computed together, grouped by shape (lengths,
    overlap, tie treatment), with the arithmetic of ``rbo``: the same operations in the
    same order, so the results are bit-identical (checked on random tied and untied,
    even and uneven pairs). Other variants go through ``rbo`` one pair at a time.
    """
    if len(xs) != len(ys):
        raise ValueError("xs and ys differ in length")
    if not 0 < p < 1:
        raise ValueError("p must be strictly between 0 and 1")
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}")
    if variant not in SCORES:
        raise ValueError(f"unknown RBO scores {[variant]}")
    out = np.empty(len(xs))
    if variant not in ("trunc", "ext"):
        for row, (x, y) in enumerate(zip(xs, ys, strict=True)):
            out[row] = rbo_score(x, y, p=p, variant=variant, ties=ties)
        return out
    # (s, l, universe size, tie treatment) -> rows and their rank arrays (see _pair_batch).
    buckets: dict[
        tuple[int, int, int, str], tuple[list[int], list[list[int]], list[list[int]], list[list[int]], list[list[int]]]
    ] = {}
    for row, (x, y) in enumerate(zip(xs, ys, strict=True)):
        fx, fy = _flatten_lists(x), _flatten_lists(y)
        if not fx[0] or not fy[0]:
            raise ValueError("RBO of an empty ranking is undefined")
        # rbo's choice: x is the short list unless y is strictly shorter.
        (i_s, t_s, b_s), (i_l, t_l, b_l) = (fx, fy) if len(fx[0]) <= len(fy[0]) else (fy, fx)
        s, l = len(i_s), len(i_l)
        tied = t_s != b_s or t_l != b_l
        at = {item: k for k, item in enumerate(i_l)}
        in_short = set(i_s)
        universe = i_s + [i for i in i_l if i not in in_short]  # S, then L \ S in L's order
        absent = l + 1  # a rank no depth reaches: contributes 0 at every depth
        top_l = [t_l[at[i]] if i in at else absent for i in universe]
        bottom_l = [b_l[at[i]] if i in at else absent for i in universe]
        pad = [absent] * (len(universe) - s)
        rows, top_s, bottom_s, tops_l, bottoms_l = buckets.setdefault(
            (s, l, len(universe), ties if tied else "w"), ([], [], [], [], [])
        )
        rows.append(row)
        top_s.append(t_s + pad)
        bottom_s.append(b_s + pad)
        tops_l.append(top_l)
        bottoms_l.append(bottom_l)
    for (s, l, _u, mode), (rows, top_s, bottom_s, tops_l, bottoms_l) in buckets.items():
        out[rows] = _pair_batch(
            np.array(top_s),
            np.array(bottom_s),
            np.array(tops_l),
            np.array(bottoms_l),
            s=s,
            l=l,
            p=p,
            ties=mode,
            variant=variant,
        )
    return out


def rbo_renamed(
    cases: Sequence[tuple[Ranking, Ranking, np.ndarray]], p: float, *, variant: str, ties: str = "a"
) -> list[np.ndarray | None]:
    """For each ``(x, y, renamings)``: ``rbo_score(x renamed, y)`` for every row of ``renamings``
    (the same numbers).

    Row r renames x's items among themselves, tie groups kept: the item at position i of x's
    items in sorted order becomes the one at position ``renamings[r, i]`` (the permutation
    null of ``ranking_agreement.chance_rbo``). The rank arrays of the renamed rankings are
    built in numpy, and every case of one shape (length, tie treatment) is scored in one
    ``_pair_batch``, without building a ranking per row. A case is None unless the variant
    is ``trunc`` or ``ext`` and x and y rank the same string items (then ``rbo_many`` applies).
    """
    out: list[np.ndarray | None] = [None] * len(cases)
    if variant not in ("trunc", "ext") or ties not in TIES or not 0 < p < 1:
        return out
    buckets: dict[tuple[int, str], list[tuple[int, tuple[np.ndarray, ...]]]] = {}
    for case, (x, y, renamings) in enumerate(cases):
        renamed = _renamed_ranks(x, y, renamings)
        if renamed is not None:
            k, tied, ranks = renamed
            buckets.setdefault((k, ties if tied else "w"), []).append((case, ranks))
    for (k, mode), members in buckets.items():
        stacked = [np.concatenate(part) for part in zip(*(ranks for _case, ranks in members), strict=True)]
        scores = _pair_batch(*stacked, s=k, l=k, p=p, ties=mode, variant=variant)
        start = 0
        for case, ranks in members:
            out[case] = scores[start : start + len(ranks[0])]
            start += len(ranks[0])
    return out


def _renamed_ranks(x: Ranking, y: Ranking, renamings: np.ndarray) -> tuple[int, bool, tuple[np.ndarray, ...]] | None:
    """``_pair_batch``'s rank arrays (short = renamed x, long = y) for every renaming, as ``rbo_many``
    would build them from the renamed rankings; with the length and whether either side has ties."""
    items_x, top_x, bottom_x = _flatten_lists(x)
    items_y, top_y, bottom_y = _flatten_lists(y)
    if not items_x or set(items_x) != set(items_y) or not all(isinstance(i, str) for i in items_x):
        return None
    k = len(items_x)
    code = {item: n for n, item in enumerate(sorted(items_x, key=str))}  # the order ``_group`` sorts in
    named = np.asarray(renamings)[:, [code[i] for i in items_x]]  # each row's new name at x's positions
    # rbo lists a tie group's items in name order; groups (equal tops) stay where they are.
    by_group = np.argsort(np.asarray(top_x) * k + named, axis=1)
    universe = np.take_along_axis(named, by_group, axis=1)  # x is the short list (equal lengths)
    at_y = np.empty((2, k), dtype=np.int64)  # first and last rank in y, by item code
    at_y[:, [code[i] for i in items_y]] = [top_y, bottom_y]
    rows = len(universe)
    ranks = (
        np.tile(np.asarray(top_x, dtype=np.int64), (rows, 1)),
        np.tile(np.asarray(bottom_x, dtype=np.int64), (rows, 1)),
        at_y[0][universe],
        at_y[1][universe],
    )
    return k, top_x != bottom_x or top_y != bottom_y, ranks


def _pair_batch(
    top_s: np.ndarray,
    bottom_s: np.ndarray,
    top_l: np.ndarray,
    bottom_l: np.ndarray,
    *,
    s: int,
    l: int,
    p: float,
    ties: str,
    variant: str,
) -> np.ndarray:
    """``rbo(...)[variant]`` (trunc or ext) for n pairs of the same shape, mirroring ``rbo`` step by step.

    Arrays are (n, universe): the first and last 0-based rank of each universe item in the
    short and the long list (universe = the short list's items, then the long list's others).
    """
    d0 = np.arange(l)

    def contributions(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:  # (n, universe, depth)
        top, bottom = top[:, :, None], bottom[:, :, None]
        if ties == "w":
            return (d0 >= top).astype(float)
        size = (bottom - top + 1).astype(float)
        return np.clip((d0 - top + 1) / size, 0.0, 1.0)

    def agreement(x: np.ndarray, cs: np.ndarray, cl: np.ndarray, depth: np.ndarray) -> np.ndarray:
        if ties == "w":
            return 2 * x / (cs.sum(axis=1) + cl.sum(axis=1))
        if ties == "a":
            return x / depth
        return x / np.sqrt((cs**2).sum(axis=1)) / np.sqrt((cl**2).sum(axis=1))

    cs, cl = contributions(top_s, bottom_s), contributions(top_l, bottom_l)
    seen = (cs * cl).sum(axis=1)
    depth = np.arange(1, l + 1, dtype=float)
    weights = p**depth
    k = (1 - p) / p
    a_short = agreement(seen[:, :s], cs[:, :, :s], cl[:, :, :s], depth[:s])
    a_s = a_short[:, -1]
    if variant == "trunc":
        return k * np.ascontiguousarray(a_short * weights[:s]).sum(axis=1)
    x_l = seen[:, -1]
    if l > s:
        partial = cl[:, s:, s:]  # the long-only items (universe rows s..) at depths s+1..l
        shown = np.where(partial > 0, partial, np.nan)
        mean_shown = np.nanmean(shown, axis=1)
        x_ext = seen[:, s:] + (depth[s:] - s) * a_s[:, None] * mean_shown
        if ties == "w":
            a_tail = 2 * x_ext / (depth[s:] + cl[:, :, s:].sum(axis=1))
        elif ties == "a":
            a_tail = x_ext / depth[s:]
        else:
            a_tail = x_ext / np.sqrt(depth[s:]) / np.sqrt((cl[:, :, s:] ** 2).sum(axis=1))
        a = np.concatenate([a_short, a_tail], axis=1)
    else:
        a = a_short
    after_ext = (x_l + (l - s) * a_s) / l * p ** (l + 1) / (1 - p)
    return k * (np.ascontiguousarray(a * weights).sum(axis=1) + after_ext)


def rbo_trunc_batch(xs: np.ndarray, ys: np.ndarray, p: float) -> np.ndarray:
    """Truncated RBO for many pairs of untied, equal-length rankings of integer codes at once.

    ``xs``, ``ys``: (n, k) arrays; row r of each is a permutation of the same k codes.
    Vectorised because the paper section compares thousands of 15-item lists.
    """
    return _prefix_agreement_sum(xs, ys, p)[0]


def rbo_ext_batch(xs: np.ndarray, ys: np.ndarray, p: float) -> np.ndarray:
    """Extrapolated RBO for many pairs of untied, equal-length rankings (conjoint lists)."""
    trunc, a_k, k = _prefix_agreement_sum(xs, ys, p)
    return trunc + a_k * p**k


def _prefix_agreement_sum(xs: np.ndarray, ys: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray, int]:
    xs, ys = np.asarray(xs), np.asarray(ys)
    if xs.shape != ys.shape or xs.ndim != 2:
        raise ValueError("rank arrays must have the same (n, k) shape")
    n, k = xs.shape
    codes = int(max(xs.max(), ys.max())) + 1
    # Depth at which each item enters each list; an item is shared at depth d once
    # it has entered both, so X_d counts items whose later entry is <= d. The item at
    # column j of xs entered xs at depth j.
    enter_y = np.empty((n, codes), dtype=np.intp)
    rows = np.arange(n)[:, None]
    enter_y[rows, ys] = np.arange(k)
    both = np.maximum(np.arange(k), enter_y[rows, xs])  # (n, k) per item of xs
    # Items becoming shared at each depth: whole counts, so a bincount (not np.add.at, which
    # is many times slower) gives exactly the same floats.
    hits = np.bincount((rows * k + both).ravel(), minlength=n * k).reshape(n, k).astype(float)
    overlap = np.cumsum(hits, axis=1)
    agreement = overlap / np.arange(1, k + 1)
    trunc = (1 - p) * (agreement * p ** np.arange(k)).sum(axis=1)
    return trunc, agreement[:, -1], k
