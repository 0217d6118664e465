"""The report as tidy tables: one list of rows per CSV file, shared by the CSV and HTML exports,
so the numbers in both come from one flattening of the JSON."""

from __future__ import annotations

from dataclasses import dataclass, field

from analysis.exporters import battery_table, bt_tables, cot_table

LEADING = {
    "leaderboard": [
        "subject",
        "kind",
        "agreement",
        "agreement_ci95_low",
        "agreement_ci95_high",
        "agreement_n",
        "agreement_condition",
        "alt_advantage",
        "alt_winning_rate",
        "alt_passed",
        "gold_accuracy",
        "position_consistency",
        "p_first_slot",
        "p_longer",
        "biased_toward",
        "cost_per_1000",
        "seconds_per_1000",
    ],
    "alt_test": [
        "subject",
        "epsilon",
        "profile_epsilon",
        "testable",
        "winning_rate",
        "advantage_prob",
        "passed",
        "n_annotators",
        "n_items",
        "reason",
    ],
    "bias": ["subject", "bias", "value", "n", "valid_rate", "random", "ci95_low", "ci95_high", "p_value"],
    "bias_reference": [
        "subject",
        "bias",
        "reference",
        "value",
        "judge_rate",
        "reference_rate",
        "n",
        "clusters",
        "ci95_low",
        "ci95_high",
        "p_value",
        "p_adjusted",
    ],
    "battery": battery_table.COLUMNS,
    "cot": cot_table.COLUMNS,
    "gold_accuracy": ["subject", "category", "value", "n", "ci95_low", "ci95_high", "correct", "unit", "pairs"],
    "agreement": ["kind", "metric", "a", "b", "value", "n", "ci95_low", "ci95_high"],
    "length_control_summary": ["key", "value"],
    "length_control_judge_vs_human": ["judge", "condition", "agreement", "n", "ci95_low", "ci95_high"],
    "length_control_null_vs_human": ["condition", "agreement", "n", "ci95_low", "ci95_high"],
    "length_control_null_vs_judge": ["judge", "condition", "agreement", "n", "ci95_low", "ci95_high"],
    "length_control_strata": ["judge", "condition", "bin", "judge_agreement", "judge_n", "null_agreement", "null_n"],
    "length_control_null_strata": ["condition", "bin", "null_agreement", "null_n", "null_ci95_low", "null_ci95_high"],
    "length_control_strata_differences": [
        "judge",
        "condition",
        "subject",
        "a",
        "b",
        "difference",
        "ci95_low",
        "ci95_high",
    ],
    "bt_rankings": bt_tables.SYSTEM_COLUMNS,
    "bt_rankings_subjects": bt_tables.SUBJECT_COLUMNS,
    "paper": ["key", "value"],
    "manifest": ["key", "value"],
}
# Columns whose text is the same method for many rows: the page and the HTML export show a key
# into a legend under the table instead of repeating it (the CSV and JSON keep the text).
LEGEND_COLUMNS = {
    "bias": ("null", "method", "interval", "test"),
    "bias_reference": ("reference_detail", "estimand", "test", "interval", "method"),
    "battery": (
        "robustness_reference",
        "robustness_interval",
        "effect_test",
        "effect_interval",
        "vs_humans_method",
        "method",
    ),
    "cot": ("estimand", "method"),
    "gold_accuracy": ("estimand", "method", "interval"),
    "agreement": ("ties_rule", "unit", "aggregate", "interval"),
    "bt_rankings_subjects": ("method",),
    "leaderboard": ("method",),
    "alt_test": ("method",),
}
LEGEND_PREFIX = {
    "bias": "B",
    "bias_reference": "R",
    "battery": "Y",
    "cot": "C",
    "gold_accuracy": "G",
    "agreement": "A",
    "bt_rankings_subjects": "T",
    "leaderboard": "L",
    "alt_test": "X",
}
LC_SCALARS = (
    "unit",
    "join",
    "scope",
    "interval",
    "difference_interval",
    "seed",
    "verdict",
    "verdict_reason",
    "verdict_judge",
    "verdict_condition",
)


@dataclass
class Table:
    name: str
    columns: list[str]
    rows: list[dict] = field(default_factory=list)


def flat_row(row: dict) -> dict:
    """Intervals [low, high] become two columns; nested dicts become dotted keys."""
    out: dict = {}
    for key, value in row.items():
        if isinstance(value, list | tuple) and len(value) == 2 and all(_is_number(v) for v in value):
            out[f"{key}_low"], out[f"{key}_high"] = value
        elif isinstance(value, dict):
            out.update({f"{key}.{k}": v for k, v in flat_row(value).items()})
        else:
            out[key] = value
    return out


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def flatten_mapping(mapping: dict, prefix: str = "") -> list[dict]:
    rows = []
    for key, value in mapping.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            rows.extend(flatten_mapping(value, path + "."))
        else:
            rows.append({"key": path, "value": value})
    return rows


def _table(name: str, rows: list[dict]) -> Table:
    flat = [flat_row(r) for r in rows]
    columns = list(LEADING[name])
    for r in flat:
        columns.extend(k for k in r if k not in columns)
    # A null interval has no _low/_high keys; keep those cells empty, not missing.
    return Table(name, columns, [{c: r.get(c) for c in columns} for r in flat])


def method_legend(table: Table) -> list[dict]:
    """``[{key, column, text}]``: each distinct method text of the table's legend columns, keyed in order."""
    legend: list[dict] = []
    seen: set[tuple[str, str]] = set()
    for column in LEGEND_COLUMNS.get(table.name, ()):
        if column not in table.columns:
            continue
        for row in table.rows:
            text = row[column]
            if isinstance(text, str) and text and (column, text) not in seen:
                seen.add((column, text))
                legend.append({"key": f"{LEGEND_PREFIX[table.name]}{len(legend) + 1}", "column": column, "text": text})
    return legend


def tidy_tables(report: dict) -> list[Table]:
    lc = report.get("length_control") or {}
    null_rows = []
    if lc:
        null_rows = [{"condition": "(all)", **lc.get("null_vs_human", {})}, *lc.get("null_vs_human_by_condition", [])]
    summary = [{"key": k, "value": lc[k]} for k in LC_SCALARS if k in lc]
    summary += [{"key": f"counts.{k}", "value": v} for k, v in (lc.get("counts") or {}).items()]
    # The leaderboard leads: one row per judge, the null judge and the human ceiling, side by side.
    board = [r | {"biased_toward": ", ".join(r.get("biased_toward") or [])} for r in report.get("leaderboard") or []]
    # Per-annotator p-values and skipped annotators stay in the JSON (one column each would be wide).
    alt = [{k: v for k, v in r.items() if k not in ("p_values", "skipped")} for r in report.get("alt_test") or []]
    return [
        _table("leaderboard", board),
        _table("bias", report.get("bias") or []),
        _table("bias_reference", report.get("bias_reference") or []),
        _table("battery", battery_table.rows(report.get("battery") or [])),
        _table("cot", cot_table.rows(report.get("cot") or [])),
        _table("gold_accuracy", report.get("gold_accuracy") or []),
        _table("alt_test", alt),
        _table("agreement", report.get("agreement") or []),
        _table("length_control_summary", summary),
        _table("length_control_judge_vs_human", lc.get("judge_vs_human", [])),
        _table("length_control_null_vs_human", null_rows),
        _table("length_control_null_vs_judge", lc.get("null_vs_judge", [])),
        _table("length_control_strata", lc.get("strata", [])),
        _table("length_control_null_strata", lc.get("null_strata", [])),
        _table("length_control_strata_differences", lc.get("strata_differences", [])),
        _table("bt_rankings", bt_tables.system_rows(report.get("bt_rankings") or [])),
        _table("bt_rankings_subjects", bt_tables.subject_rows(report.get("bt_rankings") or [])),
        _table("paper", flatten_mapping(report.get("paper") or {})),
        _table("manifest", flatten_mapping(report.get("manifest") or {})),
    ]
