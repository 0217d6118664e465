"""Bias counts -> contract rows: rate, interval, RANDOM thresholds, test and correction.

Row keys (design.md ``bias``): subject, bias, value, n, valid_rate, random, ci95, p_value;
extras: ``value_all``/``n_all`` (every comparison), ``value_valid``/``n_valid`` (valid
comparisons), ``random_empirical``/``random_n`` (a seeded uniform-random judge on the same
pairs), ``z``, ``p_adjusted`` and ``method``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.metrics.stats import benjamini_hochberg, holm, two_proportion_z, wilson

# Expected rates of a uniform-random judge (cobbler-method.md 3.9). Egocentric: the own
# response in prompt 1 (1/2) times prompt 2 not the same slot (1/2); the compassion-run
# version likewise (own in prompt 1, then own again or not: 1/2 x 1/2 either way).
RANDOM_THRESHOLD = {
    "order_first": 0.25, "order_last": 0.25, "compassion_first": 0.25, "compassion_last": 0.25,
    "egocentric": 0.25, "egocentric_comp": 0.25, "salience_longer": 0.5, "bandwagon": 0.25,
    "attentional": 0.25,
}
BIAS_ORDER = list(RANDOM_THRESHOLD)


def rates(counts: pd.DataFrame, *, denominator: str) -> pd.DataFrame:
    """Add ``value``/``n`` (the profile's denominator) and both alternatives to count rows."""
    out = counts.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        out["value_all"] = out["hits"] / out["n_all"]
        out["value_valid"] = out["hits"] / out["n_valid"]
    # Salience is always over its kept pairs (3.6): "all" means every kept pair there.
    salience = out["bias"] == "salience_longer"
    out.loc[salience, "value_all"] = out.loc[salience, "value_valid"]
    use_all = denominator == "all"
    out["value"] = out["value_all"] if use_all else out["value_valid"]
    out["n"] = np.where(use_all & ~salience, out["n_all"], out["n_valid"])
    return out


def finish_rows(observed: pd.DataFrame, random: pd.DataFrame, *, correction: str) -> list[dict]:
    """Join observed and simulated-random rates, test each row, correct across the table."""
    if observed.empty:
        return []
    merged = observed.merge(
        random[["subject", "bias", "value", "n"]].rename(columns={"value": "random_empirical", "n": "random_n"}),
        on=["subject", "bias"], how="left",
    )
    merged["bias_rank"] = merged["bias"].map(BIAS_ORDER.index)
    merged = merged.sort_values(["subject", "bias_rank"]).reset_index(drop=True)
    tests = [two_proportion_z(v, int(n), r, int(rn) if pd.notna(rn) else 0)
             for v, n, r, rn in zip(merged["value"], merged["n"], merged["random_empirical"], merged["random_n"],
                                    strict=True)]
    merged["z"] = [t[0] for t in tests]
    merged["p_value"] = [t[1] for t in tests]
    adjust = holm if correction == "holm" else benjamini_hochberg
    merged["p_adjusted"] = adjust(merged["p_value"].to_numpy())
    method = (f"two-sample z test vs a seeded uniform-random judge on the same pairs; "
              f"{'Holm' if correction == 'holm' else 'Benjamini-Hochberg'} across the table")
    rows = []
    for r in merged.itertuples(index=False):
        rows.append({
            "subject": r.subject, "bias": r.bias, "value": _f(r.value), "n": int(r.n),
            "valid_rate": _f(r.valid_rate), "random": RANDOM_THRESHOLD[r.bias],
            "ci95": [_f(x) for x in wilson(float(r.value), int(r.n))], "p_value": _f(r.p_value),
            "p_adjusted": _f(r.p_adjusted), "z": _f(r.z),
            "value_all": _f(r.value_all), "n_all": int(r.n_all),
            "value_valid": _f(r.value_valid), "n_valid": int(r.n_valid),
            "random_empirical": _f(r.random_empirical), "random_n": int(r.random_n) if pd.notna(r.random_n) else 0,
            "method": method,
        } | ({"records": int(r.records)} if "records" in merged.columns and pd.notna(r.records) else {}))
    return rows


def _f(x: object) -> float | None:
    """JSON-safe float: NaN (an undefined rate or test) becomes null."""
    try:
        value = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return value if np.isfinite(value) else None
