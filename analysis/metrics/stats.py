"""Intervals, tests and multiple-comparison corrections shared by the metric modules."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

# scipy.special, not scipy.stats: the same ndtr/ndtri that norm.sf/norm.ppf call (bit for
# bit), without the ~1 s import of scipy.stats on every report.
from scipy.special import bdtr, ndtri

Z95 = float(ndtri(0.975))


def wilson(value: float, n: float, z: float = Z95) -> list[float]:
    """Wilson score interval for a proportion ``value`` observed over ``n`` trials."""
    if n <= 0 or not np.isfinite(value):
        return [float("nan"), float("nan")]
    denom = 1 + z**2 / n
    centre = (value + z**2 / (2 * n)) / denom
    half = z * np.sqrt(value * (1 - value) / n + z**2 / (4 * n**2)) / denom
    # At 0 and 1 the bound is exact in theory but centre - half leaves a ~1e-19 residue.
    lo = 0.0 if value <= 0 else float(max(0.0, centre - half))
    hi = 1.0 if value >= 1 else float(min(1.0, centre + half))
    return [lo, hi]


def sign_test(k: int, m: int) -> float:
    """Exact two-sided sign test: P-value of ``k`` successes in ``m`` trials under Binomial(m, 1/2).

    Equals ``scipy.stats.binomtest(k, m, 0.5).pvalue`` (the symmetric null makes the
    "as or less likely" rule the doubled smaller tail): min(1, 2 * P(X <= min(k, m - k))).
    With no trials (m = 0) there is no evidence either way and the P-value is 1.
    """
    k, m = int(k), int(m)
    if m < 0 or k < 0 or k > m:
        raise ValueError(f"sign test needs 0 <= k <= m, got k={k}, m={m}")
    if m == 0:
        return 1.0
    return float(min(1.0, 2.0 * bdtr(min(k, m - k), m, 0.5)))


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error); NaNs stay NaN and are not counted."""
    p = np.asarray(p_values, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    if ok.size == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = order.size
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(adjusted, 1.0)
    return out


def benjamini_hochberg(p_values: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (false discovery rate); NaNs stay NaN."""
    p = np.asarray(p_values, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    if ok.size == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = order.size
    scaled = p[order] * m / np.arange(1, m + 1)
    out[order] = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    return out


def bootstrap_weights(n_units: int, *, replicates: int, seed: int) -> np.ndarray:
    """(replicates, n_units) multiplicities of a with-replacement resample of the units.

    Metrics that are sums over units (instructions) can then be bootstrapped with one
    matrix product instead of a Python loop. Cached (read-only): a report draws the same
    (n, replicates, seed) weights hundreds of times, and the multinomial draw dominates.
    """
    return _bootstrap_weights(n_units, replicates, seed)


@lru_cache(maxsize=64)
def _bootstrap_weights(n_units: int, replicates: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(n_units, np.full(n_units, 1.0 / n_units), size=replicates).astype(float)
    weights.setflags(write=False)
    return weights


def cluster_weights(codes: list[np.ndarray], *, replicates: int, seed: int) -> np.ndarray:
    """(replicates, units) bootstrap weights of units nested in one or more crossed clusterings.

    ``codes[j]`` gives each unit's level (0..L_j-1) in clustering j (instruction; rater and
    instruction). Each clustering's levels are resampled with replacement independently
    (seed + j), and a unit's weight is the product of its levels' multiplicities: the
    "pigeonhole" two-way cluster bootstrap (Owen 2007) for two clusterings, the plain
    cluster bootstrap for one.
    """
    units = len(codes[0]) if codes else 0
    out = np.ones((replicates, units))
    for j, c in enumerate(codes):
        c = np.asarray(c, dtype=np.int64)
        levels = int(c.max()) + 1 if c.size else 0
        if levels == 0:
            continue
        out = out * bootstrap_weights(levels, replicates=replicates, seed=seed + j)[:, c]
    return out


def ratio_replicates(num: np.ndarray, den: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Bootstrap replicates of sum(num) / sum(den) under unit ``weights`` (NaN where den is 0)."""
    top = weights @ np.asarray(num, dtype=float)
    bottom = weights @ np.asarray(den, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), np.nan)


def design_effect(value: float, n: float, replicates: np.ndarray) -> float:
    """Variance of the cluster-bootstrap replicates over the binomial variance value(1-value)/n, floored at 1.

    1 when either variance is undefined or zero (a rate of 0 or 1, fewer than 2 replicates).
    """
    reps = np.asarray(replicates, dtype=float)
    reps = reps[np.isfinite(reps)]
    binomial = value * (1 - value) / n if n > 0 and np.isfinite(value) else 0.0
    if reps.size < 2 or binomial <= 0:
        return 1.0
    return float(max(1.0, np.var(reps, ddof=1) / binomial))


def cluster_wilson(value: float, n: float, replicates: np.ndarray, z: float = Z95) -> list[float]:
    """Wilson interval at the effective sample size n / design effect (never narrower than Wilson at n).

    The design effect comes from the cluster bootstrap (``design_effect``), so the interval
    widens with the dependence between calls of one instruction (or one rater), and keeps
    Wilson's behaviour at rates of 0 and 1 where a percentile bootstrap collapses to a point.
    """
    if n <= 0 or not np.isfinite(value):
        return [float("nan"), float("nan")]
    return wilson(value, n / design_effect(value, n, replicates), z)


def percentile_interval(samples: np.ndarray) -> list[float]:
    samples = np.asarray(samples, dtype=float)
    samples = samples[np.isfinite(samples)]
    if samples.size == 0:
        return [float("nan"), float("nan")]
    lo, hi = np.percentile(samples, [2.5, 97.5])
    return [float(lo), float(hi)]


def bootstrap_mean(values: np.ndarray, *, replicates: int = 1000, seed: int = 0) -> list[float]:
    """95% percentile interval of the mean of per-unit ``values`` (one value per instruction)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size < 2:
        return [float("nan"), float("nan")]
    w = bootstrap_weights(values.size, replicates=replicates, seed=seed)
    return percentile_interval(w @ values / values.size)
