"""Chance-corrected agreement: Krippendorff's alpha (nominal, ordinal) and Fleiss' kappa.

Written here rather than imported: the ``krippendorff`` package on PyPI is GPL-3.0-or-later.
Both statistics are sums over units, so each is computed from per-instruction
sufficient statistics and bootstrapped over instructions with one matrix product.

Input for both: a tidy frame with ``group`` (the bootstrap unit, an instruction),
``unit`` (what is rated: a response in a ranking, a task in a pairwise study),
``rater`` and ``value`` (a rank position, a chosen slot...).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.metrics.stats import bootstrap_weights, percentile_interval
from annotations.vocabulary import AS_CROWD_CHOICE, Arrangement, CrowdChoice


@dataclass(frozen=True)
class Agreement:
    value: float
    n: int  # pairable units (alpha) or units (kappa)
    ci95: list[float]


def _value_counts(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per unit: counts of each value; plus each unit's group index and the sorted value domain."""
    domain = np.sort(frame["value"].unique())
    units = frame.groupby(["group", "unit"], sort=True)
    codes = np.searchsorted(domain, frame["value"].to_numpy())
    unit_idx = units.ngroup().to_numpy()
    counts = np.zeros((units.ngroups, domain.size))
    np.add.at(counts, (unit_idx, codes), 1.0)
    unit_groups = units.size().index.get_level_values("group")
    group_codes = pd.factorize(unit_groups, sort=True)[0]
    return counts, group_codes, domain


def _coincidences(counts: np.ndarray, group_codes: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, Krippendorff's coincidence matrix sum_u (n_u n_u' - diag n_u) / (m_u - 1)."""
    m = counts.sum(axis=1)
    pairable = m >= 2
    c, g, m = counts[pairable], group_codes[pairable], m[pairable]
    per_unit = (np.einsum("ui,uj->uij", c, c) - np.einsum("ui,ij->uij", c, np.eye(c.shape[1]))) / (m - 1)[:, None, None]
    out = np.zeros((n_groups, c.shape[1], c.shape[1]))
    np.add.at(out, g, per_unit)
    return out


def _delta2(marginals: np.ndarray, domain: np.ndarray, level: str) -> np.ndarray:
    """Squared distance matrices (batch, V, V) for the level of measurement."""
    v = domain.size
    if level == "nominal":
        return np.broadcast_to(1.0 - np.eye(v), (*marginals.shape[:-1], v, v))
    if level == "ordinal":
        # delta_ck = sum_{g=c..k} n_g - (n_c + n_k) / 2, from the value marginals.
        cum = np.cumsum(marginals, axis=-1)
        lo = np.minimum.outer(np.arange(v), np.arange(v))
        hi = np.maximum.outer(np.arange(v), np.arange(v))
        before = np.where(lo > 0, np.take(cum, np.maximum(lo - 1, 0), axis=-1), 0.0)
        span = np.take(cum, hi, axis=-1) - before
        d = span - (marginals[..., :, None] + marginals[..., None, :]) / 2
        return d**2
    raise ValueError(f"unsupported level {level!r}; use nominal or ordinal")


def _alpha(coincidence: np.ndarray, domain: np.ndarray, level: str) -> np.ndarray:
    marginals = coincidence.sum(axis=-1)
    n = marginals.sum(axis=-1)
    d2 = _delta2(marginals, domain, level)
    observed = (coincidence * d2).sum(axis=(-2, -1))
    expected = (marginals[..., :, None] * marginals[..., None, :] * d2).sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        # Undefined (nan) when every pairable value is the same: no expected disagreement.
        return np.where(expected > 0, 1 - (n - 1) * observed / expected, np.nan)


def krippendorff_alpha(frame: pd.DataFrame, *, level: str, replicates: int = 1000, seed: int = 0) -> Agreement:
    """Krippendorff's alpha with a bootstrap interval over ``group``s (missing ratings allowed)."""
    if frame.empty:
        return Agreement(float("nan"), 0, [float("nan"), float("nan")])
    counts, group_codes, domain = _value_counts(frame)
    n_groups = int(group_codes.max()) + 1
    per_group = _coincidences(counts, group_codes, n_groups)
    value = float(_alpha(per_group.sum(axis=0), domain, level))
    n_units = int((counts.sum(axis=1) >= 2).sum())
    ci = [float("nan"), float("nan")]
    if n_groups >= 2 and replicates:
        w = bootstrap_weights(n_groups, replicates=replicates, seed=seed)
        boot = np.einsum("bg,gij->bij", w, per_group)
        ci = percentile_interval(_alpha(boot, domain, level))
    return Agreement(value, n_units, ci)


def _fleiss(category_totals: np.ndarray, agree_sum: np.ndarray, n_units: np.ndarray, raters: int) -> np.ndarray:
    p_bar = agree_sum / n_units
    p_j = category_totals / (n_units[..., None] * raters)
    p_e = (p_j**2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p_e < 1, (p_bar - p_e) / (1 - p_e), np.nan)


def fleiss_kappa(frame: pd.DataFrame, *, replicates: int = 1000, seed: int = 0) -> Agreement:
    """Fleiss' kappa over units rated by the modal number of raters (others are dropped).

    Fleiss' statistic assumes the same number of raters per unit; in CoBBLEr every
    batch has exactly 3 valid raters, so nothing is dropped there. The mode is taken over
    units with at least two raters (MT-Bench keys have 1 to 5 votes, mostly one).
    """
    if frame.empty:
        return Agreement(float("nan"), 0, [float("nan"), float("nan")])
    counts, group_codes, _domain = _value_counts(frame)
    m = counts.sum(axis=1)
    if not (m >= 2).any():
        return Agreement(float("nan"), 0, [float("nan"), float("nan")])
    # The modal count among units at least two raters judged (single votes are not pairable).
    raters = int(pd.Series(m[m >= 2]).mode().iloc[0])
    keep = m == raters
    if not keep.any():
        return Agreement(float("nan"), 0, [float("nan"), float("nan")])
    # Only instructions with a kept unit take part (and are resampled).
    counts, group_codes = counts[keep], pd.factorize(group_codes[keep], sort=True)[0]
    n_groups = int(group_codes.max()) + 1
    agree = ((counts**2).sum(axis=1) - raters) / (raters * (raters - 1))
    totals = np.zeros((n_groups, counts.shape[1]))
    np.add.at(totals, group_codes, counts)
    agree_g = np.bincount(group_codes, weights=agree, minlength=n_groups)
    units_g = np.bincount(group_codes, minlength=n_groups).astype(float)
    value = float(_fleiss(totals.sum(axis=0), agree_g.sum(), units_g.sum(), raters))
    ci = [float("nan"), float("nan")]
    if n_groups >= 2 and replicates:
        w = bootstrap_weights(n_groups, replicates=replicates, seed=seed)
        ci = percentile_interval(_fleiss(w @ totals, w @ agree_g, w @ units_g, raters))
    return Agreement(value, int(keep.sum()), ci)


def cohen_kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa of two label vectors of equal length (nan when chance agreement is 1)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.size == 0:
        return float("nan")
    labels = np.union1d(a, b)
    pa = (a[:, None] == labels).mean(axis=0)
    pb = (b[:, None] == labels).mean(axis=0)
    p_e = float((pa * pb).sum())
    p_o = float((a == b).mean())
    return (p_o - p_e) / (1 - p_e) if p_e < 1 else float("nan")


def percent_agreement(frame: pd.DataFrame, *, replicates: int = 1000, seed: int = 0) -> Agreement:
    """Pairwise percent agreement between raters: agreeing rater pairs / all rater pairs.

    Over units with at least two values: a unit with value counts n_v has
    sum_v n_v (n_v - 1) / 2 agreeing pairs out of m (m - 1) / 2. Same input as alpha;
    n = pairable units; bootstrap interval over ``group``s.
    """
    if frame.empty:
        return Agreement(float("nan"), 0, [float("nan"), float("nan")])
    counts, group_codes, _domain = _value_counts(frame)
    m = counts.sum(axis=1)
    keep = m >= 2
    if not keep.any():
        return Agreement(float("nan"), 0, [float("nan"), float("nan")])
    counts, m, group_codes = counts[keep], m[keep], pd.factorize(group_codes[keep], sort=True)[0]
    n_groups = int(group_codes.max()) + 1
    agree = np.bincount(group_codes, weights=(counts * (counts - 1)).sum(axis=1) / 2, minlength=n_groups)
    pairs = np.bincount(group_codes, weights=m * (m - 1) / 2, minlength=n_groups)
    value = float(agree.sum() / pairs.sum())
    ci = [float("nan"), float("nan")]
    if n_groups >= 2 and replicates:
        w = bootstrap_weights(n_groups, replicates=replicates, seed=seed)
        with np.errstate(divide="ignore", invalid="ignore"):
            ci = percentile_interval((w @ agree) / (w @ pairs))
    return Agreement(value, int(m.size), ci)


# --- Pairwise votes as outcomes and units (docs/methods.md "Ties and agreement units") ---

TIE = "tie"
# Which of the pair's canonical responses a vote chose, from the slot and the arrangement.
_OUTCOME = {
    (CrowdChoice.A, Arrangement.AB): "a",
    (CrowdChoice.B, Arrangement.AB): "b",
    (CrowdChoice.A, Arrangement.BA): "b",
    (CrowdChoice.B, Arrangement.BA): "a",
}


def vote_outcomes(choice: pd.Series, arrangement: pd.Series) -> pd.Series:
    """``a`` (the pair's response_a won), ``b``, or ``tie`` for a "T" vote; None if unreadable.

    A tie is a tie whatever the arrangement: it is never read as a slot.
    """
    return pd.Series(
        [TIE if c == CrowdChoice.TIE else _OUTCOME.get((c, p)) for c, p in zip(choice, arrangement, strict=True)],
        index=choice.index,
        dtype=object,
    )


def cue_targets(cue_slot: pd.Series, arrangement: pd.Series) -> pd.Series:
    """The canonical response (``a``/``b``) a cue pointed at (slot ``A``/``B`` or ``first``/``second``); ``-`` if none."""
    slot = cue_slot.map(AS_CROWD_CHOICE)
    return pd.Series(
        [_OUTCOME.get((c, p), "-") for c, p in zip(slot, arrangement, strict=True)], index=cue_slot.index, dtype=object
    )


def rater_units(answers: pd.DataFrame) -> pd.DataFrame:
    """Human pairwise answers as a tidy ``group, unit, rater, value`` frame for alpha, kappa and percent.

    ``answers`` has ``rater, instruction, condition, pair, arrangement ("ab"|"ba"), cue_slot,
    choice`` (and optionally ``batch, position`` to order repeats). A unit is one pair (for
    MT-Bench: question, model pair, turn) under one condition with the cue on the same
    response: (condition, pair, cue target). When some rater answered both presentations of
    a unit (twin tasks), each presentation is its own unit, so no rater gives two values to
    one unit; a rater who still repeats a unit keeps the first answer. The value is the
    outcome (``a``, ``b`` or ``tie``); the bootstrap group is the instruction.
    """
    cols = ["group", "unit", "rater", "value"]
    if answers.empty:
        return pd.DataFrame(columns=cols)
    order = [c for c in ("rater", "batch", "position") if c in answers]
    frame = answers.sort_values(order, kind="stable") if order else answers
    cue = frame["cue_slot"] if "cue_slot" in frame else pd.Series(None, index=frame.index, dtype=object)
    frame = frame.assign(
        value=vote_outcomes(frame["choice"], frame["arrangement"]),
        base=frame["condition"].astype(str)
        + ":"
        + frame["pair"].astype(str)
        + ":"
        + cue_targets(cue, frame["arrangement"]),
    )
    frame = frame[frame["value"].notna()]
    repeats = frame.groupby(["base", "rater"])["value"].transform("size")
    twinned = set(frame.loc[repeats > 1, "base"])
    split = frame["base"].isin(twinned)
    unit = frame["base"].where(~split, frame["base"] + ":" + frame["arrangement"].astype(str))
    tidy = frame.assign(unit=unit, group=frame["instruction"])
    tidy = tidy.drop_duplicates(["unit", "rater"], keep="first")
    return tidy[cols].reset_index(drop=True)
