"""The report's ``battery`` as one tidy table (CSV and HTML): one row per subject and cue bias.

The nested blocks of a row (robustness, effect, vs_humans) become prefixed columns, every
interval two columns (``_ci95_low``, ``_ci95_high``, empty when there is none), so each CSV row
stands alone.
"""

from __future__ import annotations

COLUMNS = [
    "subject",
    "bias",
    "label",
    "n",
    "robustness",
    "robustness_ci95_low",
    "robustness_ci95_high",
    "robustness_n",
    "robustness_unmatched",
    "effect",
    "effect_ci95_low",
    "effect_ci95_high",
    "p_value",
    "p_adjusted",
    "claim",
    "vs_humans",
    "vs_humans_ci95_low",
    "vs_humans_ci95_high",
    "vs_humans_p_value",
    "vs_humans_reason",
    "profile",
]


def _interval(name: str, ci: list | None) -> dict:
    low, high = ci if ci else (None, None)
    return {f"{name}_ci95_low": low, f"{name}_ci95_high": high}


def rows(battery: list[dict]) -> list[dict]:
    out = []
    for row in battery:
        rate, effect, versus = row["robustness"], row["effect"], row.get("vs_humans") or {}
        out.append(
            {
                "subject": row["subject"],
                "bias": row["bias"],
                "label": row["label"],
                "n": row["n"],
                "robustness": rate["rate"],
                **_interval("robustness", rate.get("ci95")),
                "robustness_n": rate["n"],
                "robustness_unmatched": rate.get("unmatched"),
                "effect": effect["estimate"],
                **_interval("effect", effect.get("ci95")),
                "p_value": effect.get("p_value"),
                "p_adjusted": effect.get("p_adjusted"),
                "claim": effect.get("claim"),
                "vs_humans": versus.get("difference"),
                **_interval("vs_humans", versus.get("ci95")),
                "vs_humans_p_value": versus.get("p_value"),
                "vs_humans_reason": row.get("vs_humans_reason"),
                "profile": row.get("profile"),
                "robustness_clusters": rate.get("clusters"),
                "robustness_reason": rate.get("reason"),
                "robustness_reference": rate.get("reference"),
                "robustness_interval": rate.get("interval"),
                "effect_test": effect.get("test"),
                "effect_interval": effect.get("interval"),
                "claim_text": effect.get("claim_text"),
                "vs_humans_method": versus.get("method"),
                "method": row.get("method"),
            }
        )
    return out
