"""A judge's preference for a target answer at equal quality, with people as the quality reference.

Comparing the judge's raw rate of choosing the longer (own) answer with people's rate on the
same pairs still mixes two things when longer answers really are better: a length preference,
and a judge that simply follows quality *more closely* than people do (it moves away from
1/2 in whichever direction people lean, so it also chooses the longer answer more often). A
judge that follows quality less closely does the opposite. The model below separates them:

- every pair p has a latent standardised preference ``z_p`` of people for the target answer,
  ``z_p ~ N(mu, sigma^2)`` over the pairs of the study;
- a person's decisive vote chooses the target with probability ``Phi(z_p)``;
- the judge chooses it with probability ``Phi(k z_p + b)``: ``k`` is how closely the judge
  follows what people see in the pair (1: as closely as people, 0: not at all), ``b`` is its
  preference for the target **on pairs people find even**.

``b = 0`` for any judge that only follows quality, however sharply or loosely; a judge that
behaves like one more rater has ``k = 1, b = 0``. The estimand reported is ``Phi(b)``: the
share of choices for the target on pairs people are split on evenly (1/2 without a bias).

Fit: maximum likelihood (with weak priors against separation, ``PRIOR_PRECISION``), integrating ``z_p`` out by Gauss-Hermite quadrature (every pair's
people votes and the judge's two presentations share one ``z_p``). Inference: the
cluster-robust sandwich (scores summed per instruction, CR1 correction), a t reference on
G - 1 degrees of freedom for ``b``, the interval mapped through ``Phi``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_ndtr, ndtr, ndtri, stdtr, stdtrit

from analysis.metrics.stats import wilson

NODES, WEIGHTS = np.polynomial.hermite.hermgauss(20)  # 32 nodes move b by < 1e-4
_LOG_WEIGHTS = np.log(WEIGHTS / np.sqrt(np.pi))
_STEP = 1e-4  # finite-difference step for scores and the Hessian (parameters are O(1))


# Weak normal priors (precision per parameter: mu, log sigma, k, b) keep the fit finite where
# the data separate (a judge that always picks the longer answer: b -> infinity; people split
# evenly on every pair: sigma -> 0). Centred on "no lean, unit spread, follows people, no bias";
# a prior sd of 3 on b moves a fitted b of 0.3 by less than 0.001 at 100 pairs.
PRIOR_MEAN = np.array([0.0, 0.0, 1.0, 0.0])
PRIOR_PRECISION = np.array([1 / 9, 1 / 4, 1 / 9, 1 / 9])
BOUNDS = [(-4.0, 4.0), (np.log(0.05), np.log(5.0)), (-5.0, 5.0), (-4.0, 4.0)]


def _penalty(theta: np.ndarray) -> float:
    return float(0.5 * np.sum(PRIOR_PRECISION * (theta - PRIOR_MEAN) ** 2))


@dataclass(frozen=True)
class QualityMatched:
    even_rate: float  # Phi(b): the judge's share for the target where people split evenly
    even_ci95: list[float]
    b: float
    se: float
    df: int
    p_value: float  # two-sided t test of b = 0
    sharpness: float  # k
    people_lean: float  # Phi(mu / sqrt(1 + sigma^2)): people's overall share for the target
    converged: bool
    pairs: int
    clusters: int


def _pair_loglik(theta: np.ndarray, y: np.ndarray, n: np.ndarray, m: np.ndarray, j: np.ndarray) -> np.ndarray:
    """log P(data of each pair): people chose the target y of n times, the judge m of j times."""
    mu, log_sigma, k, b = theta
    z = mu + np.sqrt(2.0) * np.exp(log_sigma) * NODES[None, :]  # (pairs, nodes)
    people = y[:, None] * log_ndtr(z) + (n - y)[:, None] * log_ndtr(-z)
    eta = k * z + b
    judge = m[:, None] * log_ndtr(eta) + (j - m)[:, None] * log_ndtr(-eta)
    terms = people + judge + _LOG_WEIGHTS[None, :]
    top = terms.max(axis=1, keepdims=True)
    return (top + np.log(np.exp(terms - top).sum(axis=1, keepdims=True)))[:, 0]


def _scores(theta: np.ndarray, data: tuple) -> np.ndarray:
    """Per-pair gradient of the log-likelihood (central differences), shape (pairs, 4)."""
    out = np.empty((data[0].size, theta.size))
    for i in range(theta.size):
        step = np.zeros_like(theta)
        step[i] = _STEP
        out[:, i] = (_pair_loglik(theta + step, *data) - _pair_loglik(theta - step, *data)) / (2 * _STEP)
    return out


def _hessian(theta: np.ndarray, data: tuple) -> np.ndarray:
    """Hessian of the total log-likelihood, by central differences of the summed scores."""
    size = theta.size
    h = np.empty((size, size))
    for i in range(size):
        step = np.zeros_like(theta)
        step[i] = _STEP
        h[i] = (_scores(theta + step, data).sum(axis=0) - _scores(theta - step, data).sum(axis=0)) / (2 * _STEP)
    return (h + h.T) / 2


def fit(
    people_target: np.ndarray,
    people_votes: np.ndarray,
    judge_target: np.ndarray,
    judge_answers: np.ndarray,
    clusters: np.ndarray,
) -> QualityMatched | None:
    """Fit the model to one judge's pairs (arrays aligned per pair; clusters = instruction codes).

    None when the fit cannot be made: fewer than two clusters, or a singular information matrix
    (e.g. people unanimous on every pair, so their lean and spread cannot be told apart).
    """
    data = tuple(np.asarray(a, dtype=float) for a in (people_target, people_votes, judge_target, judge_answers))
    codes = np.unique(np.asarray(clusters), return_inverse=True)[1]
    g = int(codes.max()) + 1 if codes.size else 0
    if g < 2:
        return None
    share = float(data[0].sum() / max(data[1].sum(), 1.0))
    judge_share = float(data[2].sum() / max(data[3].sum(), 1.0))
    start = np.array([_probit(share), 0.0, 1.0, _probit(judge_share) - _probit(share)])
    result = minimize(lambda t: -_pair_loglik(t, *data).sum() + _penalty(t), start, method="L-BFGS-B", bounds=BOUNDS)
    theta = result.x
    try:
        bread = np.linalg.inv(-_hessian(theta, data) + np.diag(PRIOR_PRECISION))
    except np.linalg.LinAlgError:
        return None
    cluster_scores = np.zeros((g, theta.size))
    np.add.at(cluster_scores, codes, _scores(theta, data))
    meat = g / (g - 1) * cluster_scores.T @ cluster_scores
    variance = bread @ meat @ bread
    se = float(np.sqrt(variance[3, 3])) if variance[3, 3] > 0 else float("nan")
    if not np.isfinite(se):
        return None
    mu, log_sigma, k, b = (float(x) for x in theta)
    df = g - 1
    q = float(stdtrit(df, 0.975))
    interval = [float(ndtr(b - q * se)), float(ndtr(b + q * se))]
    if judge_share in (0.0, 1.0):
        # Separated: the judge chose the target every time (or never), b sits at the prior's
        # edge and its sandwich se is ~0, so the interval would be the point [1, 1]. Finite data
        # cannot exclude a rate just short of it: widen to Wilson's interval for that all-or-
        # nothing share over the pairs it answered (the rule of three's neighbour).
        wide = wilson(judge_share, float(np.count_nonzero(data[3])))
        interval = [min(interval[0], wide[0]), max(interval[1], wide[1])]
    return QualityMatched(
        even_rate=float(ndtr(b)),
        even_ci95=interval,
        b=b,
        se=se,
        df=df,
        p_value=float(2 * stdtr(df, -abs(b / se))) if se > 0 else 1.0,
        sharpness=k,
        people_lean=float(ndtr(mu / np.sqrt(1 + np.exp(2 * log_sigma)))),
        converged=bool(result.success),
        pairs=int(codes.size),
        clusters=g,
    )


def _probit(share: float) -> float:
    return float(ndtri(min(max(share, 0.02), 0.98)))
