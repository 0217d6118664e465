"""Intervals, tests and multiple-comparison corrections shared by the metric modules."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

# scipy.special, not scipy.stats: the same ndtr/ndtri that norm.sf/norm.ppf call (bit for
# bit), without the ~1 s import of scipy.stats on every report.
from scipy.special import ndtr, ndtri

Z95 = float(ndtri(0.975))


def wilson(value: float, n: int, z: float = Z95) -> list[float]:
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


def two_proportion_z(p1: float, n1: int, p2: float, n2: int) -> tuple[float, float]:
    """Two-sided two-sample z test of p1 (n1) against p2 (n2) with the pooled variance.

    Returns (z, p_value); (nan, nan) when either sample is empty or the pooled
    proportion is 0 or 1 (no variance, the test is undefined).
    """
    if n1 <= 0 or n2 <= 0:
        return float("nan"), float("nan")
    pooled = (p1 * n1 + p2 * n2) / (n1 + n2)
    var = pooled * (1 - pooled) * (1 / n1 + 1 / n2)
    if var <= 0:
        return float("nan"), float("nan")
    z = (p1 - p2) / np.sqrt(var)
    return float(z), float(2 * ndtr(-abs(z)))  # = 2 * norm.sf(|z|)


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
