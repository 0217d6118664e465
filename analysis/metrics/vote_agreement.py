"""Human vs judge agreement on single votes: percent, its chance level, Cohen's kappa, clustered intervals.

Each human vote is compared with the judge's verdict on the same screen. The votes are not
independent: the votes on one instruction meet the same judge verdict and share the
instruction's responses, and one rater's votes share the rater's habits (how often they tie,
how carefully they read). A Wilson interval over votes therefore covers 75-80%, not 95%.
Here every interval is cluster-robust (docs/methods.md "Ties and agreement units"):

- the variance of the percent agreement, a ratio sum(agree) / n, is the CR1 cluster-robust
  variance (``cluster_tests.cluster_variance``), two-way over raters and instructions
  (one-way over instructions when every vote is one rater's);
- the percent interval is Wilson at the effective sample size n / design effect (never
  narrower than Wilson at n, and well behaved at 0 and 1, like ``stats.cluster_wilson``), with
  the normal quantile replaced by Student's t on (clusters - 1) degrees of freedom, the
  small-sample reference of ``cluster_tests.cluster_t``;
- ``chance`` is the agreement expected if the judge's labels were independent of the humans'
  (sum_k p_judge(k) p_human(k), as in Cohen's kappa) and ``kappa`` = (value - chance) /
  (1 - chance); kappa's interval is kappa +- t se, se from the same clustered variance of
  kappa's linearisation (its influence function: the uncertainty of the chance level is in it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.special import stdtr, stdtrit

from analysis.metrics.cluster_tests import cluster_variance, clustered_wilson

TWO_WAY = (
    "cluster-robust (CR1) variance two-way over raters and instructions; percent: Wilson at the effective "
    "n = n / design effect (>= 1), kappa: kappa +- t se (delta method); t on min(raters, instructions) - 1 df"
)
ONE_WAY = (
    "cluster-robust (CR1) variance over instructions (one rater); percent: Wilson at the effective "
    "n = n / design effect (>= 1), kappa: kappa +- t se (delta method); t on instructions - 1 df"
)
NO_INTERVAL = "no interval: the votes come from one instruction (a clustered interval needs at least 2)"


@dataclass(frozen=True)
class VoteAgreement:
    value: float  # share of votes whose label equals the judge's verdict
    n: int  # votes
    ci95: list[float | None]
    chance: float  # agreement expected with independent labels
    kappa: float | None  # Cohen's kappa; None when chance is 1 (one label on both sides)
    kappa_ci95: list[float | None]
    # One-sided p of kappa <= 0 on the interval's own t and se: below 0.025 exactly when the
    # interval's lower end is above 0. Claims adjust it across a judge's conditions (Holm).
    kappa_p: float | None
    n_instructions: int
    n_raters: int
    df: int | None  # degrees of freedom of the t reference (None: no interval)
    design_effect: float | None  # clustered variance of the percent over the binomial one (>= 1)
    interval: str  # how the intervals were computed, in words


def vote_agreement(
    human: np.ndarray, judge: np.ndarray, *, instructions: np.ndarray, raters: np.ndarray
) -> VoteAgreement:
    """Percent agreement, chance level and kappa of paired labels, with intervals clustered by rater and instruction.

    ``human[i]`` and ``judge[i]`` are the two labels of vote i (any comparable values: a / b /
    tie outcomes); ``instructions[i]`` and ``raters[i]`` its clusters.
    """
    labels = _Labels.of(human, judge)
    same = (labels.human == labels.judge).astype(float)
    instruction_codes, n_instructions = _codes(instructions)
    rater_codes, n_raters = _codes(raters)
    result = VoteAgreement(
        value=float(same.mean()),
        n=int(same.size),
        ci95=[None, None],
        chance=labels.chance,
        kappa=labels.kappa,
        kappa_ci95=[None, None],
        kappa_p=None,
        n_instructions=n_instructions,
        n_raters=n_raters,
        df=None,
        design_effect=None,
        interval=NO_INTERVAL,
    )
    if n_instructions < 2:
        return result
    # Every vote is one rater's: with several raters they are a second, crossed clustering.
    two_way = n_raters >= 2
    clusterings = [rater_codes, instruction_codes] if two_way else [instruction_codes]
    df = (min(n_raters, n_instructions) if two_way else n_instructions) - 1
    t = float(stdtrit(df, 0.975))
    ci95, deff = _percent_interval(same, clusterings, t)
    kappa_se = _kappa_se(labels, same, clusterings)
    return replace(
        result,
        ci95=ci95,
        kappa_ci95=_kappa_interval(labels.kappa, kappa_se, t),
        kappa_p=_kappa_p(labels.kappa, kappa_se, df),
        df=df,
        design_effect=deff,
        interval=TWO_WAY if two_way else ONE_WAY,
    )


@dataclass(frozen=True)
class _Labels:
    """Both label vectors as codes into one sorted vocabulary, with their marginal shares."""

    human: np.ndarray
    judge: np.ndarray
    p_human: np.ndarray
    p_judge: np.ndarray

    @classmethod
    def of(cls, human: np.ndarray, judge: np.ndarray) -> _Labels:
        human, judge = np.asarray(human), np.asarray(judge)
        # Sorted like cohen_kappa's union1d, so chance and kappa are its numbers to the last bit.
        vocabulary, codes = np.unique(np.concatenate([human, judge]), return_inverse=True)
        n, k = human.size, vocabulary.size
        return cls(
            codes[:n],
            codes[n:],
            np.bincount(codes[:n], minlength=k) / n,
            np.bincount(codes[n:], minlength=k) / n,
        )

    @property
    def chance(self) -> float:
        """sum_k p_human(k) p_judge(k): the agreement of two independent labellings with these marginals."""
        return float((self.p_human * self.p_judge).sum())

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa; None when chance is 1 (both sides gave the one same label throughout)."""
        chance = self.chance
        if chance >= 1:
            return None
        return (float((self.human == self.judge).mean()) - chance) / (1 - chance)


def _codes(labels: np.ndarray) -> tuple[np.ndarray, int]:
    codes, levels = pd.factorize(np.asarray(labels))
    return codes, int(levels.size)


def _percent_interval(same: np.ndarray, clusterings: list[np.ndarray], t: float) -> tuple[list[float | None], float]:
    """Wilson at n / deff, deff = clustered variance / binomial variance (>= 1), quantile t."""
    ci95, deff = clustered_wilson(same, clusterings, t)
    return [_finite(x) for x in ci95], deff


def _kappa_se(labels: _Labels, same: np.ndarray, clusterings: list[np.ndarray]) -> float | None:
    """The clustered standard error of kappa, from the variance of the mean of its influence values.

    kappa = (p_o - p_e) / (1 - p_e), p_e = sum_k h_k j_k. A vote moves p_o by (same - p_o)
    and p_e by (j[h_i] - p_e) + (h[j_i] - p_e), so its influence on kappa is
    [(same - p_o) + (p_o - 1) / (1 - p_e) ((j[h_i] - p_e) + (h[j_i] - p_e))] / (1 - p_e).
    The variance is never below the independent-votes one (as the percent's deff >= 1).
    """
    kappa = labels.kappa
    if kappa is None:
        return None
    chance, p_o = labels.chance, float(same.mean())
    moved_chance = (labels.p_judge[labels.human] - chance) + (labels.p_human[labels.judge] - chance)
    influence = ((same - p_o) + (p_o - 1) / (1 - chance) * moved_chance) / (1 - chance)
    n = influence.size
    _, variance, _ = cluster_variance(influence, np.ones(n), clusterings)
    independent = float(np.sum(influence**2)) / (n * (n - 1)) if n > 1 else 0.0
    return float(np.sqrt(max(variance if np.isfinite(variance) else 0.0, independent)))


def _kappa_interval(kappa: float | None, se: float | None, t: float) -> list[float | None]:
    """kappa +- t se, clipped to [-1, 1]."""
    if kappa is None or se is None:
        return [None, None]
    return [max(-1.0, kappa - t * se), min(1.0, kappa + t * se)]


def _kappa_p(kappa: float | None, se: float | None, df: int) -> float | None:
    """One-sided p of "kappa <= 0" on Student's t with ``df``: the test the interval inverts."""
    if kappa is None or se is None:
        return None
    if se == 0:
        return 0.0 if kappa > 0 else 1.0
    return float(stdtr(df, -kappa / se))


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None
