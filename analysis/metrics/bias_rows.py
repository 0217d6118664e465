"""Bias counts -> contract rows: rate, cluster-robust interval, RANDOM reference, test, correction.

Row keys (schema ``cobbler-report/1``, ``bias``): subject, bias, value, n, valid_rate, random, ci95, p_value;
extras: ``value_all``/``n_all`` (every comparison), ``value_valid``/``n_valid`` (valid
comparisons), ``hits``/``mirror`` (the counts the test compares), ``null`` (the hypothesis
tested, in words), ``null_value`` (the row's expected value under it), ``effect`` ((hits -
mirror) / n, the tested effect) with ``effect_ci95``, ``clusters``, ``test``, ``family``
(whether the row enters its subject's claim family), ``role`` (claimed | descriptive),
``p_adjusted``, ``interval`` and ``method``; bandwagon/attentional add ``cue_following`` (with
``cue_following_ci95``) and ``no_cue_agreement``. Every definition is in docs/methods.md ("Bias rates").

- ``random`` is the theoretical uniform-random judge (docs/methods.md, "The reference column
  `random`"), a reference column only: it enters no test.
- Tests compare ``hits`` with ``mirror`` at the level of clusters, because pairs share
  instructions, responses and raters (``analysis.metrics.cluster_tests``): judges by a
  sign-flip randomisation test over instructions, humans by a two-way (raters x
  instructions) cluster-robust t test. The rows whose no-bias value is not a fixed number
  (order_first, order_last, compassion_first, compassion_last: it depends on how consistent
  the judge is) carry no test of their own; their bias is tested by ``position_preference``.
- Only the ``CLAIMED`` rows enter a claim family (``adjust``: Holm within a subject by default).
- Intervals are cluster-robust: rates get a seeded cluster bootstrap over instructions
  (judges) or raters and instructions (humans, two-way), turned into a Wilson interval at the
  effective sample size (``stats.cluster_wilson``); the tested effect (and
  ``position_preference``, whose value it is) gets Tango's paired score interval at the
  effective sample size, which stays open when no pair is discordant.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.metrics.cluster_tests import (
    DRAWS,
    EXACT_MAX,
    cluster_t,
    cluster_variance,
    clustered_tango,
    sign_flip_p,
    tango_paired,
)
from analysis.metrics.stats import (
    benjamini_hochberg,
    cluster_weights,
    cluster_wilson,
    holm,
    ratio_replicates,
    sign_test,
    wilson,
)
from annotations.biases import CUE_CONDITIONS, REGISTRY, SWAP_CLAIMED, SWAP_CONFOUNDED, SWAP_REGISTRY

# Expected rates of a uniform-random judge (a fair coin per prompt), in report order. A tested
# row's value is its plugin's (annotations.biases: SwapBias.random; a cue bias, the cued answer
# both times, 1/2 x 1/2). order_first / order_last / compassion_*: the same slot twice, 1/2 x 1/2;
# position_consistency: the second coin lands on the same response as the first half the time.
_SWAP_RANDOM = {row: b.random for row, b in SWAP_REGISTRY.items()}
RANDOM_THRESHOLD = {
    "order_first": 0.25,
    "order_last": 0.25,
    "position_preference": _SWAP_RANDOM["position_preference"],
    "position_consistency": 0.5,
    "compassion_first": 0.25,
    "compassion_last": 0.25,
    "egocentric": _SWAP_RANDOM["egocentric"],
    "egocentric_comp": _SWAP_RANDOM["egocentric_comp"],
    "salience_longer": _SWAP_RANDOM["salience_longer"],
    **dict.fromkeys(CUE_CONDITIONS, 0.25),
}
BIAS_ORDER = list(RANDOM_THRESHOLD)
SIGNED = "position_preference"  # value = (hits - mirror) / n, in [-1, 1]
HUMANS = "humans"
# Rows a verdict may claim from: their null holds whatever the answers' quality (the cue or the
# slot moves between the two presentations of the same pair, the answers do not).
CLAIMED = (*SWAP_CLAIMED, *CUE_CONDITIONS)
# Rows whose raw rate mixes the bias with quality (longer or own answers may simply be better):
# descriptive; their claims are made against a reference on the same pairs (metrics/reference.py).
CONFOUNDED = SWAP_CONFOUNDED
BOOTSTRAP_REPLICATES = 1000
BOOTSTRAP_SEED = 20240

# The null hypothesis of each tested row (the sign test of hits against mirror).
NULLS = {
    **{row: bias.null for row, bias in SWAP_REGISTRY.items()},
    **{condition: bias.null for condition, bias in REGISTRY.items()},
}
UNTESTED = {
    "order_first": "not tested alone (its no-bias value depends on the judge's consistency); see position_preference",
    "order_last": "not tested alone (its no-bias value depends on the judge's consistency); see position_preference",
    "position_consistency": "not tested (descriptive): the share of pairs judged the same way in both "
    "presentations (the same response, or a tie both times); a judge that sees only quality scores 1",
    "compassion_first": "not tested alone (its no-bias value depends on the judge's consistency)",
    "compassion_last": "not tested alone (its no-bias value depends on the judge's consistency)",
}
UNIT_COLUMNS = ["subject", "bias", "c0", "c1", "num", "den", "diff", "size"]


def rates(counts: pd.DataFrame, *, denominator: str) -> pd.DataFrame:
    """Add ``value``/``n`` (the profile's denominator) and both alternatives to count rows."""
    out = counts.copy()
    if "mirror" not in out.columns:
        out["mirror"] = 0
    top = np.where(out["bias"] == SIGNED, out["hits"] - out["mirror"], out["hits"]).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["value_all"] = top / out["n_all"]
        out["value_valid"] = top / out["n_valid"]
    # Salience is always over its kept pairs: "all" means every kept pair there.
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
            # The tested effect's pieces: hits - mirror over the row's n, per instruction.
            "diff": (units["hits"] - units["mirror"]).astype(float).to_numpy(),
            "size": den,
        }
    )


def human_units(units: pd.DataFrame) -> pd.DataFrame:
    """Human rater records -> bootstrap units, clustered by rater (c0) and instruction (c1)."""
    if units.empty:
        return pd.DataFrame(columns=UNIT_COLUMNS)
    return units.rename(columns={"rater": "c0", "instruction": "c1"})[UNIT_COLUMNS]


def intervals(units: pd.DataFrame, observed: pd.DataFrame) -> dict[tuple[str, str], list[float]]:
    """Cluster-robust 95% interval of every rate row of ``observed`` (see the module docstring).

    ``position_preference`` is not here: its value is the tested effect, whose interval
    comes from ``inference``.
    """
    out: dict[tuple[str, str], list[float]] = {}
    if units.empty or observed.empty:
        return out
    lookup = observed.set_index(["subject", "bias"])
    for (subject, bias), g in units.groupby(["subject", "bias"], sort=False):
        if (subject, bias) not in lookup.index or bias == SIGNED:
            continue
        row = lookup.loc[(subject, bias)]
        value, n = float(row["value"]), float(row["n"])
        if not np.isfinite(value) or n <= 0:
            continue
        codes = [pd.factorize(g["c0"])[0], pd.factorize(g["c1"])[0]]
        weights = cluster_weights(codes, replicates=BOOTSTRAP_REPLICATES, seed=BOOTSTRAP_SEED)
        reps = ratio_replicates(g["num"].to_numpy(), g["den"].to_numpy(), weights)
        out[(subject, bias)] = cluster_wilson(value, n, reps)
    return out


def inference(units: pd.DataFrame | None, hits: int, mirror: int, n: int, *, two_way: bool) -> dict:
    """The cluster-level test of hits against mirror and the interval of the effect (hits - mirror) / n.

    Judges (one clustering, instructions): the sign-flip randomisation test of the
    per-instruction sums of hits - mirror. Humans (raters x instructions): the same test over
    raters and over instructions, the larger p-value. Either way the effect's interval is Tango's paired score interval
    at the effective n (``cluster_tests.clustered_tango``). Without units (no clustering
    known), the exact sign test on pooled pairs and Tango at n.
    """
    if units is None or units.empty:
        return {
            "p_value": sign_test(hits, hits + mirror),
            "effect_ci95": tango_paired(hits, mirror, n),
            "clusters": None,
            "test": "exact two-sided sign test of hits vs mirror on pooled pairs (no clusters known)",
        }
    diff, size = units["diff"].to_numpy(dtype=float), units["size"].to_numpy(dtype=float)
    if two_way:
        codes = [pd.factorize(units["c0"])[0], pd.factorize(units["c1"])[0]]
        result = cluster_t(diff, size, codes)
        variance = result.se**2 if np.isfinite(result.se) else float("nan")
        # Sign-flip over instructions is exact when raters have no habits of their own, over raters
        # when instructions share nothing; the larger p holds in either case (the two-way CR1 t
        # test claimed about 1.5 times too often on 50 instructions x 35 raters: docs/methods.md).
        p_instructions = sign_flip_p(np.bincount(codes[1], weights=diff))
        p_raters = sign_flip_p(np.bincount(codes[0], weights=diff))
        p = max(p_instructions, p_raters)
        clusters = min(len(set(c)) for c in codes)
        test = (
            f"two-sided sign-flip permutation tests of the per-rater ({len(set(codes[0]))}) and the "
            f"per-instruction ({len(set(codes[1]))}) sums of hits - mirror; the larger p-value"
        )
    else:
        codes = [pd.factorize(units["c0"])[0]]
        _, variance, clusters = cluster_variance(diff, size, codes)
        sums = np.bincount(codes[0], weights=diff)
        p = sign_flip_p(sums)
        test = (
            f"two-sided sign-flip permutation test of the per-instruction sums of hits - mirror "
            f"({clusters} instructions; {'exact' if np.count_nonzero(sums) <= EXACT_MAX else f'{DRAWS} draws'})"
        )
    return {"p_value": p, "effect_ci95": clustered_tango(hits, mirror, n, variance), "clusters": clusters, "test": test}


def adjust(rows: list[dict], *, correction: str) -> None:
    """Set ``p_adjusted`` on every row of a claim family (``family`` true), in place.

    ``holm`` (default): Holm within each subject's family, so a judge's verdict does not
    depend on which other judges share the report. ``bh``: Benjamini-Hochberg across every
    family row of the table. Rows outside a family keep ``p_adjusted`` None.
    """
    for row in rows:
        row["p_adjusted"] = None
    members = [r for r in rows if r.get("family") and r.get("p_value") is not None]
    if correction == "holm":
        groups: dict[str, list[dict]] = {}
        for r in members:
            groups.setdefault(r["subject"], []).append(r)
        batches = list(groups.values())
    else:
        batches = [members]
    adjuster = holm if correction == "holm" else benjamini_hochberg
    for batch in batches:
        if batch:
            for r, q in zip(batch, adjuster(np.array([r["p_value"] for r in batch], dtype=float)), strict=True):
                r["p_adjusted"] = _f(q)


def family_text(correction: str) -> str:
    if correction == "holm":
        return "Holm within the subject's claimed rows"
    return "Benjamini-Hochberg across the table's claimed rows"


def finish_rows(observed: pd.DataFrame, units: pd.DataFrame | None = None, *, correction: str) -> list[dict]:
    """Interval, cluster-level test and correction for every observed rate row.

    ``units`` are the per-cluster units (``judge_units``/``human_units``); without them the
    rate interval is Wilson on the pooled calls and the test the pooled sign test.
    Only the ``CLAIMED`` rows enter a claim family; the ``CONFOUNDED`` rows carry their
    test as a description (their claims are made against a reference, analysis.metrics.reference).
    """
    if observed.empty:
        return []
    merged = observed.copy()
    if "mirror" not in merged.columns:
        merged["mirror"] = 0
    merged["bias_rank"] = merged["bias"].map(BIAS_ORDER.index)
    merged = merged.sort_values(["subject", "bias_rank"]).reset_index(drop=True)
    units = units if units is not None else pd.DataFrame(columns=UNIT_COLUMNS)
    cis = intervals(units, merged)
    # iter(): dict() of a GroupBy would call its .keys attribute (the grouping columns).
    by_row = dict(iter(units.groupby(["subject", "bias"], sort=False))) if not units.empty else {}
    rows = []
    for r in merged.itertuples(index=False):
        n = int(r.n)
        value = _f(r.value)
        hits, mirror = int(r.hits), int(r.mirror)
        is_tested = r.bias in NULLS and n > 0
        test = (
            inference(by_row.get((r.subject, r.bias)), hits, mirror, n, two_way=r.subject == HUMANS)
            if is_tested
            else None
        )
        ci = cis.get((r.subject, r.bias))
        if r.bias == SIGNED and test is not None:
            ci = test["effect_ci95"]
        if ci is None and value is not None and n > 0:
            ci = wilson(value, n) if r.bias != SIGNED else [float("nan"), float("nan")]
        row = {
            "subject": r.subject,
            "bias": r.bias,
            "value": value,
            "n": n,
            "valid_rate": _f(r.valid_rate),
            "random": RANDOM_THRESHOLD[r.bias],
            "ci95": [_f(x) for x in ci] if ci is not None else None,
            "p_value": _f(test["p_value"]) if test else None,
            "p_adjusted": None,
            "value_all": _f(r.value_all),
            "n_all": int(r.n_all),
            "value_valid": _f(r.value_valid),
            "n_valid": int(r.n_valid),
            "hits": hits,
            "mirror": mirror,
            "null": NULLS.get(r.bias, UNTESTED.get(r.bias, "")),
            "null_value": _null_value(r) if is_tested else None,
            "interval": _interval_text(r.bias, r.subject),
            "family": bool(is_tested and r.bias in CLAIMED),
            "role": "claimed" if r.bias in CLAIMED else "descriptive",
        }
        if test is not None:
            row |= {
                "effect": (hits - mirror) / n,
                "effect_ci95": [_f(x) for x in test["effect_ci95"]],
                "clusters": test["clusters"],
                "test": test["test"],
                "method": test["test"]
                + (
                    f"; {family_text(correction)}"
                    if r.bias in CLAIMED
                    else "; descriptive (no claim: longer or own answers may simply be better, see bias_reference)"
                ),
            }
        else:
            row["method"] = "no test (descriptive)"
        if r.bias in CUE_CONDITIONS and int(r.n_valid) > 0:
            # Per prompt, the share choosing the cued slot among pairs with both prompts answered:
            # (2 * followed twice + 1 * consistent) / (2 * n_valid) = 1/2 + (hits - mirror) / (2 n_valid).
            n_valid = int(r.n_valid)
            row["cue_following"] = 0.5 + (hits - mirror) / (2 * n_valid)
            row["no_cue_agreement"] = 0.5
            if test is not None:
                # The same effect on the per-prompt scale: cue_following - 1/2 = effect * n / (2 n_valid).
                row["cue_following_ci95"] = [_f(0.5 + x * n / (2 * n_valid)) for x in test["effect_ci95"]]
        if "records" in merged.columns and pd.notna(r.records):
            row["records"] = int(r.records)
        rows.append(row)
    adjust(rows, correction=correction)
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
    clusters = "raters and instructions (two-way)" if subject == HUMANS else "instructions"
    if bias == SIGNED:
        return (
            f"Tango's paired score interval of (hits - mirror) / n at the effective n = n / design effect, "
            f"the design effect from the cluster-robust variance over {clusters}"
        )
    return (
        f"95% cluster bootstrap over {clusters}, {BOOTSTRAP_REPLICATES} replicates, seed {BOOTSTRAP_SEED}; "
        f"Wilson at the effective n = n / design effect (>= 1)"
    )


def _f(x: object) -> float | None:
    """JSON-safe float: NaN (an undefined rate or test) becomes null."""
    try:
        value = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return value if np.isfinite(value) else None
