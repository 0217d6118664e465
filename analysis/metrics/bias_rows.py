"""Bias counts -> contract rows: rate, cluster-robust interval, RANDOM reference, test, correction.

Row keys (design.md ``bias``): subject, bias, value, n, valid_rate, random, ci95, p_value;
extras: ``value_all``/``n_all`` (every comparison), ``value_valid``/``n_valid`` (valid
comparisons), ``hits``/``mirror`` (the counts the sign test compares), ``null`` (the
hypothesis tested, in words), ``null_value`` (the row's expected value under it),
``p_adjusted``, ``interval`` and ``method``; bandwagon/attentional add ``cue_following`` and
``no_cue_agreement``. Every definition is written out in docs/methods.md ("Bias rates").

- ``random`` is the theoretical uniform-random judge (cobbler-method.md 3.9), a reference
  column only: it enters no test.
- Tests are exact two-sided sign tests of ``hits`` against ``mirror`` (Binomial(hits +
  mirror, 1/2)); the rows whose no-bias value is not a fixed number (order_first,
  order_last, compassion_first, compassion_last: it depends on how consistent the judge
  is) carry no test of their own; their bias is tested by ``position_preference``.
- Intervals are cluster-robust: a seeded cluster bootstrap over instructions (judges) or
  over raters and instructions (humans, two-way), turned into a Wilson interval at the
  effective sample size (``stats.cluster_wilson``) for rates, and a normal interval with
  the bootstrap standard error (floored at the independent-pairs one) for
  ``position_preference``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.metrics.stats import (
    Z95,
    benjamini_hochberg,
    cluster_weights,
    cluster_wilson,
    holm,
    ratio_replicates,
    sign_test,
    wilson,
)
from annotations.vocabulary import Condition

# Expected rates of a uniform-random judge (cobbler-method.md 3.9). Egocentric: the own
# response in prompt 1 (1/2) times prompt 2 not the same slot (1/2); the compassion-run
# version likewise (own in prompt 1, then own again or not: 1/2 x 1/2 either way).
# position_preference = order_first - order_last = 0.25 - 0.25.
RANDOM_THRESHOLD = {
    "order_first": 0.25,
    "order_last": 0.25,
    "position_preference": 0.0,
    "compassion_first": 0.25,
    "compassion_last": 0.25,
    "egocentric": 0.25,
    "egocentric_comp": 0.25,
    "salience_longer": 0.5,
    Condition.BANDWAGON: 0.25,
    Condition.ATTENTIONAL: 0.25,
}
BIAS_ORDER = list(RANDOM_THRESHOLD)
SIGNED = "position_preference"  # value = (hits - mirror) / n, in [-1, 1]
BOOTSTRAP_REPLICATES = 1000
BOOTSTRAP_SEED = 20240

# The null hypothesis of each tested row (the sign test of hits against mirror).
NULLS = {
    "position_preference": "no position preference: a pair answered with the same slot twice is as likely "
    "to be first-first as last-last",
    "egocentric": "no self-preference: the judge's own response is as likely as the other one to get the row's outcome",
    "egocentric_comp": "no self-preference: the judge's own response is as likely as the other one to get "
    "the row's outcome",
    "salience_longer": "no length preference: among kept pairs the longer response is chosen half the time",
    Condition.BANDWAGON: "the cue has no effect: with the same arrangement, following the cue both times is as "
    "likely as going against it both times (cue-following share = the judge's own no-cue "
    "agreement with the cued answer = 1/2)",
    Condition.ATTENTIONAL: "the distractor has no effect: with the same arrangement, choosing the mentioned system "
    "both times is as likely as choosing the other both times (share = the judge's own "
    "no-distractor agreement = 1/2)",
}
UNTESTED = {
    "order_first": "not tested alone (its no-bias value depends on the judge's consistency); see position_preference",
    "order_last": "not tested alone (its no-bias value depends on the judge's consistency); see position_preference",
    "compassion_first": "not tested alone (its no-bias value depends on the judge's consistency)",
    "compassion_last": "not tested alone (its no-bias value depends on the judge's consistency)",
}
UNIT_COLUMNS = ["subject", "bias", "c0", "c1", "num", "den"]


def rates(counts: pd.DataFrame, *, denominator: str) -> pd.DataFrame:
    """Add ``value``/``n`` (the profile's denominator) and both alternatives to count rows."""
    out = counts.copy()
    if "mirror" not in out.columns:
        out["mirror"] = 0
    top = np.where(out["bias"] == SIGNED, out["hits"] - out["mirror"], out["hits"]).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["value_all"] = top / out["n_all"]
        out["value_valid"] = top / out["n_valid"]
    # Salience is always over its kept pairs (3.6): "all" means every kept pair there.
    salience = out["bias"] == "salience_longer"
    out.loc[salience, "value_all"] = out.loc[salience, "value_valid"]
    use_all = denominator == "all"
    out["value"] = out["value_all"] if use_all else out["value_valid"]
    out["n"] = np.where(use_all & ~salience, out["n_all"], out["n_valid"])
    return out


def judge_units(units: pd.DataFrame, *, denominator: str) -> pd.DataFrame:
    """Per-instruction judge counts -> bootstrap units (``num``/``den`` under the denominator)."""
    if units.empty:
        return pd.DataFrame(columns=UNIT_COLUMNS)
    use_all = (denominator == "all") & (units["bias"] != "salience_longer")
    num = np.where(units["bias"] == SIGNED, units["hits"] - units["mirror"], units["hits"]).astype(float)
    den = np.where(use_all, units["n_all"], units["n_valid"]).astype(float)
    return pd.DataFrame(
        {
            "subject": units["subject"].to_numpy(),
            "bias": units["bias"].to_numpy(),
            "c0": units["instruction"].to_numpy(),
            "c1": 0,
            "num": num,
            "den": den,
        }
    )


def human_units(units: pd.DataFrame) -> pd.DataFrame:
    """Human rater records -> bootstrap units, clustered by rater (c0) and instruction (c1)."""
    if units.empty:
        return pd.DataFrame(columns=UNIT_COLUMNS)
    return units.rename(columns={"rater": "c0", "instruction": "c1"})[UNIT_COLUMNS]


def intervals(units: pd.DataFrame, observed: pd.DataFrame) -> dict[tuple[str, str], list[float]]:
    """Cluster-robust 95% interval per (subject, bias) of ``observed`` (see the module docstring)."""
    out: dict[tuple[str, str], list[float]] = {}
    if units.empty or observed.empty:
        return out
    lookup = observed.set_index(["subject", "bias"])
    for (subject, bias), g in units.groupby(["subject", "bias"], sort=False):
        if (subject, bias) not in lookup.index:
            continue
        row = lookup.loc[(subject, bias)]
        value, n = float(row["value"]), float(row["n"])
        if not np.isfinite(value) or n <= 0:
            continue
        codes = [pd.factorize(g["c0"])[0], pd.factorize(g["c1"])[0]]
        weights = cluster_weights(codes, replicates=BOOTSTRAP_REPLICATES, seed=BOOTSTRAP_SEED)
        reps = ratio_replicates(g["num"].to_numpy(), g["den"].to_numpy(), weights)
        out[(subject, bias)] = _signed_interval(row, reps) if bias == SIGNED else cluster_wilson(value, n, reps)
    return out


def _signed_interval(row: pd.Series, reps: np.ndarray) -> list[float]:
    """value +- 1.96 se, se = max(cluster-bootstrap sd, independent-pairs sd), clipped to [-1, 1].

    Independent pairs: each pair scores +1 (first twice), -1 (last twice) or 0, so
    var = (p_first + p_last - value^2) / n.
    """
    value, n = float(row["value"]), float(row["n"])
    share = (float(row["hits"]) + float(row["mirror"])) / n if n > 0 else 0.0
    iid = np.sqrt(max(share - value**2, 0.0) / n) if n > 0 else 0.0
    finite = reps[np.isfinite(reps)]
    boot = float(np.std(finite, ddof=1)) if finite.size > 1 else 0.0
    se = max(iid, boot)
    return [float(max(-1.0, value - Z95 * se)), float(min(1.0, value + Z95 * se))]


def finish_rows(observed: pd.DataFrame, units: pd.DataFrame | None = None, *, correction: str) -> list[dict]:
    """Interval, test and table-wide correction for every observed rate row.

    ``units`` are the bootstrap units (``judge_units``/``human_units``); without them the
    interval is Wilson on the pooled calls (no clustering known).
    """
    if observed.empty:
        return []
    merged = observed.copy()
    if "mirror" not in merged.columns:
        merged["mirror"] = 0
    merged["bias_rank"] = merged["bias"].map(BIAS_ORDER.index)
    merged = merged.sort_values(["subject", "bias_rank"]).reset_index(drop=True)
    cis = intervals(units if units is not None else pd.DataFrame(columns=UNIT_COLUMNS), merged)
    tested = merged["bias"].isin(list(NULLS)) & (merged["n"] > 0)
    merged["p_value"] = [
        sign_test(int(h), int(h) + int(m)) if t else np.nan
        for h, m, t in zip(merged["hits"], merged["mirror"], tested, strict=True)
    ]
    adjust = holm if correction == "holm" else benjamini_hochberg
    merged["p_adjusted"] = adjust(merged["p_value"].to_numpy())
    family = "Holm" if correction == "holm" else "Benjamini-Hochberg"
    rows = []
    for r in merged.itertuples(index=False):
        n = int(r.n)
        value = _f(r.value)
        ci = cis.get((r.subject, r.bias))
        if ci is None and value is not None and n > 0:
            ci = wilson(value, n) if r.bias != SIGNED else [float("nan"), float("nan")]
        is_tested = r.bias in NULLS and n > 0
        row = {
            "subject": r.subject,
            "bias": r.bias,
            "value": value,
            "n": n,
            "valid_rate": _f(r.valid_rate),
            "random": RANDOM_THRESHOLD[r.bias],
            "ci95": [_f(x) for x in ci] if ci is not None else None,
            "p_value": _f(r.p_value),
            "p_adjusted": _f(r.p_adjusted),
            "value_all": _f(r.value_all),
            "n_all": int(r.n_all),
            "value_valid": _f(r.value_valid),
            "n_valid": int(r.n_valid),
            "hits": int(r.hits),
            "mirror": int(r.mirror),
            "null": NULLS.get(r.bias, UNTESTED.get(r.bias, "")),
            "null_value": _null_value(r) if is_tested else None,
            "interval": _interval_text(r.bias, r.subject),
            "method": (
                f"exact two-sided sign test of hits vs mirror (Binomial(hits + mirror, 1/2)); "
                f"{family} across the table's tested rows"
                if is_tested
                else "no test (descriptive)"
            ),
        }
        if r.bias in (Condition.BANDWAGON, Condition.ATTENTIONAL) and int(r.n_valid) > 0:
            # Per prompt, the share choosing the cued slot among pairs with both prompts answered:
            # (2 * followed twice + 1 * consistent) / (2 * n_valid) = 1/2 + (hits - mirror) / (2 n_valid).
            row["cue_following"] = 0.5 + (int(r.hits) - int(r.mirror)) / (2 * int(r.n_valid))
            row["no_cue_agreement"] = 0.5
        if "records" in merged.columns and pd.notna(r.records):
            row["records"] = int(r.records)
        rows.append(row)
    return rows


def _null_value(r: object) -> float | None:
    """The row's expected value under its null, given hits + mirror (the discordant total)."""
    n = int(r.n)  # type: ignore[attr-defined]
    if n <= 0:
        return None
    if r.bias == SIGNED:  # type: ignore[attr-defined]
        return 0.0
    return (int(r.hits) + int(r.mirror)) / 2 / n  # type: ignore[attr-defined]


def _interval_text(bias: str, subject: str) -> str:
    clusters = "raters and instructions (two-way)" if subject == "humans" else "instructions"
    shape = (
        "normal, se = max(bootstrap sd, independent-pairs sd)"
        if bias == SIGNED
        else "Wilson at the effective n = n / design effect (>= 1)"
    )
    return f"95% cluster bootstrap over {clusters}, {BOOTSTRAP_REPLICATES} replicates, seed {BOOTSTRAP_SEED}; {shape}"


def _f(x: object) -> float | None:
    """JSON-safe float: NaN (an undefined rate or test) becomes null."""
    try:
        value = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return value if np.isfinite(value) else None
