"""Cluster-level inference for paired counts: the tests and intervals every claimed bias row uses.

Pairs are not independent: the pairs of one instruction share its responses (and a judge's
mood for that instruction), one rater's answers share the rater. Counting pairs as
independent (a sign test on pooled counts) therefore claims too often, more so the larger
the study (docs/methods.md "Null hypotheses and tests"). Here the unit of inference is
the cluster:

- ``sign_flip_p``: the randomisation test of sum(hits - mirror) over independent clusters
  (instructions). Under the null each cluster's difference is symmetric about 0, so its
  sign is a fair coin; exact enumeration up to ``EXACT_MAX`` non-zero clusters, else
  ``DRAWS`` seeded draws (p = (1 + as extreme) / (1 + draws)).
- ``cluster_t``: the cluster-robust (CR1) standard error of the ratio sum(d) / sum(m), one-way
  or two-way (Cameron, Gelbach and Miller 2011: V = V_rater + V_instruction - V_cell), with a
  t reference on min(G) - 1 degrees of freedom. Humans are tested with it (raters x
  instructions cannot be sign-flipped independently).
- ``clustered_wilson``: the Wilson interval of a share at the effective sample size n / deff,
  deff from the CR1 variance (one-way or two-way), with Student's t on min(G) - 1 df in place
  of the normal quantile: percent agreement with human votes and accuracy on gold labels.
- ``ratio_difference_t``: the same CR1 t test and interval for the difference of two such ratios
  measured on shared clusters (a judge's effect minus people's on the same instructions): the
  linearised scores of both ratios are summed per cluster, so what the two share is accounted for.
- ``tango_paired``: Tango's score interval (1998) for a paired difference of proportions
  (b - c) / n. It stays open at b = c = 0, where a normal interval collapses to a point.
  ``clustered_tango`` evaluates it at the effective sample size n / deff, the design effect
  from the cluster-robust variance (never below 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np
from scipy.special import stdtr, stdtrit

from analysis.metrics.stats import Z95, wilson

EXACT_MAX = 16  # 2^16 sign patterns: exact below this many non-zero clusters
DRAWS = 20000
SEED = 20241203
_CHUNK = 2000


def sign_flip_p(diffs: np.ndarray, *, draws: int = DRAWS, seed: int = SEED) -> float:
    """Two-sided sign-flip p-value of sum(diffs), one difference per independent cluster.

    Clusters with a zero difference cannot change the statistic and are left out. No
    non-zero cluster gives p = 1 (no evidence either way).
    """
    d = np.asarray(diffs, dtype=float)
    d = d[np.isfinite(d) & (d != 0)]
    if d.size == 0:
        return 1.0
    observed = abs(d.sum()) - 1e-9 * max(1.0, float(np.abs(d).sum()))  # ties count as extreme
    if d.size <= EXACT_MAX:
        signs = np.array(list(product((1.0, -1.0), repeat=int(d.size))))
        return float(np.mean(np.abs(signs @ d) >= observed))
    rng = np.random.default_rng(seed)
    extreme = 0
    for start in range(0, draws, _CHUNK):
        size = min(_CHUNK, draws - start)
        signs = rng.integers(0, 2, size=(size, d.size), dtype=np.int8) * 2 - 1
        extreme += int(np.count_nonzero(np.abs(signs @ d) >= observed))
    return (1 + extreme) / (1 + draws)


@dataclass(frozen=True)
class ClusterT:
    effect: float  # sum(d) / sum(m)
    se: float  # cluster-robust standard error
    df: int  # degrees of freedom of the t reference (min clusters - 1)
    p_value: float  # two-sided t test of effect = 0
    ci95: list[float]  # effect +- t(0.975, df) se


def _cr1(scores: np.ndarray, codes: np.ndarray) -> tuple[float, int]:
    """Sum over clusters of the squared cluster score, with the G / (G - 1) correction."""
    levels, inverse = np.unique(codes, return_inverse=True)
    g = levels.size
    sums = np.bincount(inverse, weights=scores, minlength=g)
    if g < 2:
        return 0.0, g
    return float(g / (g - 1) * np.sum(sums**2)), g


def cluster_variance(d: np.ndarray, m: np.ndarray, codes: list[np.ndarray]) -> tuple[float, float, int]:
    """(effect, variance, clusters) of sum(d) / sum(m), clustered one-way or two-way.

    ``codes``: one array of cluster labels per clustering (instruction; or rater and
    instruction). Two-way: V_1 + V_2 - V_12 (the intersection cells), or the larger one-way
    variance when that difference is not positive. ``clusters`` is the smallest number
    of clusters of any clustering (the t reference's G).
    """
    d, m = np.asarray(d, dtype=float), np.asarray(m, dtype=float)
    total = float(m.sum())
    if total <= 0:
        return float("nan"), float("nan"), 0
    effect = float(d.sum() / total)
    scores = (d - effect * m) / total
    parts = [_cr1(scores, np.asarray(c)) for c in codes]
    g = min(p[1] for p in parts)
    if len(parts) == 1:
        return effect, parts[0][0], g
    cells = np.unique(np.stack([np.asarray(c).astype(str) for c in codes], axis=1), axis=0, return_inverse=True)[1]
    both, _ = _cr1(scores, cells.ravel())
    variance = parts[0][0] + parts[1][0] - both
    if variance <= 0:
        variance = max(parts[0][0], parts[1][0])
    return effect, variance, g


def cluster_t(d: np.ndarray, m: np.ndarray, codes: list[np.ndarray]) -> ClusterT:
    """Cluster-robust t test and interval of sum(d) / sum(m) (see ``cluster_variance``)."""
    effect, variance, g = cluster_variance(d, m, codes)
    nan = float("nan")
    if not np.isfinite(effect) or g < 2:
        return ClusterT(effect, nan, max(g - 1, 0), nan, [nan, nan])
    se = float(np.sqrt(max(variance, 0.0)))
    df = g - 1
    if se == 0:
        p = 1.0 if effect == 0 else 0.0
        return ClusterT(effect, se, df, p, [effect, effect])
    t = effect / se
    p = float(2 * stdtr(df, -abs(t)))
    q = float(stdtrit(df, 0.975))
    return ClusterT(effect, se, df, p, [effect - q * se, effect + q * se])


def ratio_difference_t(
    first: tuple[np.ndarray, np.ndarray, np.ndarray], second: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> ClusterT:
    """CR1 t test and interval of sum(d1) / sum(m1) - sum(d2) / sum(m2), clustered one-way.

    Each argument is ``(d, m, cluster labels)``; the labels of both live in one space
    (instruction ids), so a cluster that holds units of both ratios contributes one score, the
    difference of its two linearised parts (the delta method of ``cluster_variance``). With
    fewer than 2 clusters there is no interval (NaN) and no test.
    """
    nan = float("nan")
    parts, estimates = [], []
    for sign, (d, m, labels) in ((1.0, first), (-1.0, second)):
        d, m = np.asarray(d, dtype=float), np.asarray(m, dtype=float)
        total = float(m.sum())
        if total <= 0:
            return ClusterT(nan, nan, 0, nan, [nan, nan])
        estimate = float(d.sum() / total)
        estimates.append(estimate)
        parts.append((sign * (d - estimate * m) / total, np.asarray(labels).astype(str)))
    effect = estimates[0] - estimates[1]
    scores = np.concatenate([s for s, _ in parts])
    labels = np.concatenate([c for _, c in parts])
    variance, g = _cr1(scores, labels)
    if g < 2:
        return ClusterT(effect, nan, max(g - 1, 0), nan, [nan, nan])
    se, df = float(np.sqrt(max(variance, 0.0))), g - 1
    if se == 0:
        return ClusterT(effect, se, df, 1.0 if effect == 0 else 0.0, [effect, effect])
    q = float(stdtrit(df, 0.975))
    return ClusterT(effect, se, df, float(2 * stdtr(df, -abs(effect / se))), [effect - q * se, effect + q * se])


def clustered_wilson(hits: np.ndarray, codes: list[np.ndarray], t: float) -> tuple[list[float], float]:
    """(Wilson interval at n / deff with quantile ``t``, deff) of the share mean(hits), hits in {0, 1}.

    deff = the cluster-robust (CR1) variance of the share over the binomial one p(1 - p)/n,
    floored at 1, so the interval is never narrower than for independent units. At a share of
    0 or 1 neither variance exists: Wilson at n, which stays open there.
    """
    hits = np.asarray(hits, dtype=float)
    n = hits.size
    value, variance, _ = cluster_variance(hits, np.ones(n), codes)
    binomial = value * (1 - value) / n
    deff = float(max(1.0, variance / binomial)) if binomial > 0 and np.isfinite(variance) else 1.0
    return wilson(value, n / deff, z=t), deff


def tango_paired(b: float, c: float, n: float, z: float = Z95) -> list[float]:
    """Tango's score interval (1998) for (b - c) / n, a paired difference of proportions.

    ``b`` and ``c`` are the two discordant counts (first twice / last twice; followed the cue
    twice / against it twice...), the rest of ``n`` carries no information on the difference.
    The interval is every Delta whose score statistic
    (b - c - n Delta) / sqrt(n (2 q + Delta (1 - Delta))), q the maximum-likelihood
    probability of the ``c`` cell under the constraint p_b - p_c = Delta, is within z. It
    depends only on b, c and n, and stays open at b = c = 0 (to 3.84 / (n + 3.84) on either
    side, Wilson's bound at 0), where a normal interval collapses to the point [0, 0].
    Fagerland, Lydersen and Laake (2013) recommend it for paired proportions.
    """
    if n <= 0:
        return [float("nan"), float("nan")]
    estimate = (b - c) / n

    def score(delta: float) -> float:
        big_b = (b + c) - delta * (2 * n - b + c)
        q = (big_b + np.sqrt(max(big_b**2 + 8 * n * c * delta * (1 - delta), 0.0))) / (4 * n)
        q = max(q, -delta, 0.0)
        variance = n * (2 * q + delta * (1 - delta))
        if variance <= 0:
            return float("inf") if b - c - n * delta > 0 else float("-inf") if b - c - n * delta < 0 else 0.0
        return (b - c - n * delta) / np.sqrt(variance)

    def root(lo: float, hi: float, target: float) -> float:
        # score is decreasing in delta: find where it crosses ``target`` between lo and hi.
        for _ in range(60):
            mid = (lo + hi) / 2
            if score(mid) > target:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    lower = -1.0 if score(-1.0 + 1e-12) <= z else root(-1.0 + 1e-12, estimate, z)
    upper = 1.0 if score(1.0 - 1e-12) >= -z else root(estimate, 1.0 - 1e-12, -z)
    return [float(max(-1.0, lower)), float(min(1.0, upper))]


def design_effect_paired(b: float, c: float, n: float, cluster_var: float) -> float:
    """Cluster-robust variance of (b - c) / n over the independent-pairs one, floored at 1."""
    if n <= 0 or not np.isfinite(cluster_var):
        return 1.0
    effect = (b - c) / n
    iid = ((b + c) / n - effect**2) / n
    if iid <= 0:
        return 1.0
    return float(max(1.0, cluster_var / iid))


def clustered_tango(b: float, c: float, n: float, cluster_var: float) -> list[float]:
    """``tango_paired`` at the effective sample size n / deff (counts scaled alike)."""
    deff = design_effect_paired(b, c, n, cluster_var)
    return tango_paired(b / deff, c / deff, n / deff)
