"""Length and self-preference against gold labels: the first reference where the study has them.

Where the correct answer of a pair is known, a preference for the longer (own) answer needs no
model of people: split the judge's gold pairs by whether the gold answer *is* the target (the
longer answer, its own system's), and average its share of choices for the target over the two
groups::

    value = (P(target | gold is the target) + P(target | gold is the other)) / 2 - 1/2

A judge that only follows correctness, at any accuracy ``acc`` and however correlated length and
correctness are in the study, chooses the target with ``acc`` in the first group and ``1 - acc``
in the second: ``value = 0``. A pull toward the target raises both shares, so ``value > 0``.
Averaging the two groups (not pooling the pairs) is what removes the confound: how often longer
answers are correct only changes how many pairs each group has.

Per pair, the judge's share is over its two presentations (both answered, in the order run), so a
position effect cancels. Inference is cluster-robust over instructions: the estimate is linear in
the per-pair shares, its influence values are summed per instruction (CR1 factor G / (G - 1)), and
a t test of ``value = 0`` runs on G - 1 degrees of freedom. Where every share is 0 or 1 (a
deterministic judge) the sandwich variance is 0; the interval is then widened to the one Wilson's
intervals of the two group shares give, as for the people reference.
"""

from __future__ import annotations

import numpy as np
from scipy.special import stdtr, stdtrit

from analysis.metrics.stats import wilson

MIN_GOLD_PAIRS = 30  # below this many gold pairs with a target, no gold reference row
MIN_PER_GROUP = 5  # each group (gold is / is not the target) needs a few pairs to be averaged


def gold_reference(shares: np.ndarray, gold_is_target: np.ndarray, clusters: np.ndarray) -> dict | None:
    """The estimate over a judge's gold pairs; None when a group is (nearly) empty or < 2 clusters.

    ``shares``: per pair, the judge's share of its two presentations choosing the target;
    ``gold_is_target``: per pair, whether the gold answer is the target; ``clusters``: instruction codes.
    """
    shares = np.asarray(shares, dtype=float)
    gold_is_target = np.asarray(gold_is_target, dtype=bool)
    codes = np.unique(np.asarray(clusters), return_inverse=True)[1]
    g = int(codes.max()) + 1 if codes.size else 0
    n1, n0 = int(gold_is_target.sum()), int((~gold_is_target).sum())
    if shares.size < MIN_GOLD_PAIRS or min(n1, n0) < MIN_PER_GROUP or g < 2:
        return None
    m1, m0 = float(shares[gold_is_target].mean()), float(shares[~gold_is_target].mean())
    value = (m1 + m0) / 2 - 0.5
    influence = np.where(gold_is_target, (shares - m1) / (2 * n1), (shares - m0) / (2 * n0))
    per_cluster = np.bincount(codes, weights=influence, minlength=g)
    se = float(np.sqrt(g / (g - 1) * np.sum(per_cluster**2)))
    df = g - 1
    q = float(stdtrit(df, 0.975))
    interval = [value - q * se, value + q * se]
    # se 0: every pair gave the same share in its group; any departure from 1/2 is then certain.
    p_value = float(2 * stdtr(df, -abs(value / se))) if se > 0 else float(value == 0)
    if {*np.unique(shares)} <= {0.0, 1.0}:
        # All-or-nothing shares: the sandwich is 0 for a deterministic judge; finite data cannot
        # exclude a rate just short of the one seen.
        lo1, hi1 = wilson(m1, n1)
        lo0, hi0 = wilson(m0, n0)
        interval = [min(interval[0], (lo1 + lo0) / 2 - 0.5), max(interval[1], (hi1 + hi0) / 2 - 0.5)]
    return {
        "value": value,
        "ci95": [max(interval[0], -0.5), min(interval[1], 0.5)],
        "p_value": p_value,
        "share_when_gold_is_target": m1,
        "share_when_gold_is_other": m0,
        "pairs_gold_is_target": n1,
        "pairs_gold_is_other": n0,
        "n": int(shares.size),
        "clusters": g,
        "df": df,
        "se": se,
    }
