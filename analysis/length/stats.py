"""Intervals used by length control (docs/methods.md, "Length control").

Single agreements: a Wilson interval at the effective sample size n / design effect, the
design effect coming from a seeded cluster bootstrap over questions (the ``unit`` column),
so votes or verdicts on one question are not treated as independent; never narrower than
Wilson at n. Differences between strata: a percentile cluster bootstrap over questions.
The verdict's overlap rule uses the former."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.metrics import stats as metrics_stats


def wilson_counts(successes: int, n: int) -> list[float] | None:
    """``analysis.metrics.stats.wilson`` (the one Wilson interval) of successes / n, or None
    when there is nothing to estimate (length control reports a missing interval as null)."""
    if n <= 0:
        return None
    return metrics_stats.wilson(successes / n, n)


CLUSTER_SEED = 20240601
CLUSTER_RESAMPLES = 1000


def rate(successes: int, n: int) -> dict:
    """Agreement, n and Wilson interval as one dict; agreement is None when n == 0."""
    return {
        "agreement": (successes / n) if n else None,
        "n": int(n),
        "ci95": wilson_counts(successes, n),
    }


def cluster_rate(
    agree: np.ndarray, units: np.ndarray, *, seed: int = CLUSTER_SEED, resamples: int = CLUSTER_RESAMPLES
) -> dict:
    """Agreement, n and the cluster-robust interval (questions resampled) as one dict."""
    agree = np.asarray(agree, dtype=float)
    n = int(agree.size)
    if n == 0:
        return {"agreement": None, "n": 0, "ci95": None}
    codes, _ = pd.factorize(pd.Series(units))
    q = int(codes.max()) + 1
    hits = np.bincount(codes, weights=agree, minlength=q)
    sizes = np.bincount(codes, minlength=q).astype(float)
    weights = metrics_stats.bootstrap_weights(q, replicates=resamples, seed=seed)
    reps = metrics_stats.ratio_replicates(hits, sizes, weights)
    value = float(agree.sum() / n)
    return {"agreement": value, "n": n, "ci95": metrics_stats.cluster_wilson(value, n, reps)}


def bootstrap_difference(
    scored: pd.DataFrame, *, first: str, second: str, seed: int, resamples: int
) -> list[float] | None:
    """Percentile 95% interval of agreement(first) - agreement(second), resampling questions.

    ``scored`` has one row per scored item with columns ``unit`` (the question, the
    resampling cluster), ``bin`` and ``agree`` (bool). Questions, not items, are
    resampled because votes on one question are not independent.
    """
    part = scored[scored["bin"].isin([first, second])]
    if part.empty:
        return None
    units = pd.Index(part["unit"].unique())
    codes = units.get_indexer(part["unit"])
    q = len(units)
    sums = np.zeros((2, 2, q))  # [bin][agree-count, n][unit]
    for b, name in enumerate((first, second)):
        mask = (part["bin"] == name).to_numpy()
        sums[b, 0] = np.bincount(codes[mask], weights=part["agree"].to_numpy()[mask].astype(float), minlength=q)
        sums[b, 1] = np.bincount(codes[mask], minlength=q)
    if sums[0, 1].sum() == 0 or sums[1, 1].sum() == 0:
        return None
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, q, size=(resamples, q))
    # weights[r, u] = how often question u was drawn in resample r; one matrix product per bin.
    weights = np.zeros((resamples, q))
    np.add.at(weights, (np.repeat(np.arange(resamples), q), draws.ravel()), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        a = (weights @ sums[0, 0]) / (weights @ sums[0, 1])
        b = (weights @ sums[1, 0]) / (weights @ sums[1, 1])
    diff = a - b
    diff = diff[~np.isnan(diff)]
    if diff.size < resamples // 2:
        # Most resamples missed one stratum entirely: no honest interval.
        return None
    low, high = np.percentile(diff, [2.5, 97.5])
    return [float(low), float(high)]
