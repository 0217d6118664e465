"""The report's plots, drawn with matplotlib (Agg, no pyplot state) and embedded as PNG data: URIs.

Each figure carries a caption that says how it was computed (profile, n, interval);
an empty section gives a small "no data" figure instead of an error.
"""
from __future__ import annotations

import base64
import io

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

BIAS_ORDER = ["order_first", "order_last", "compassion_first", "compassion_last", "egocentric",
              "egocentric_comp", "salience_longer", "bandwagon", "attentional"]
COLOURS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]


def _uri(fig: Figure) -> str:
    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def _no_data(title: str) -> str:
    fig = Figure(figsize=(6, 1.4))
    ax = fig.add_subplot()
    ax.axis("off")
    ax.text(0.5, 0.5, f"{title}: no data", ha="center", va="center", fontsize=12, color="#666")
    return _uri(fig)


def _subjects(rows: list[dict]) -> list[str]:
    # Humans first, so they stand beside the judges they are compared with.
    names = sorted({r["subject"] for r in rows})
    return sorted(names, key=lambda s: (s != "humans", s))


def _errors(values: list, cis: list) -> np.ndarray:
    low = [v - c[0] if (v is not None and c) else 0 for v, c in zip(values, cis, strict=True)]
    high = [c[1] - v if (v is not None and c) else 0 for v, c in zip(values, cis, strict=True)]
    return np.array([low, high]).clip(min=0)


def _grouped_bars(rows: list[dict], value_key: str, *, with_ci: bool, with_random: bool, ylabel: str) -> str:
    biases = [b for b in BIAS_ORDER if any(r["bias"] == b for r in rows)]
    subjects = _subjects(rows)
    lookup = {(r["subject"], r["bias"]): r for r in rows}
    fig = Figure(figsize=(max(6, 1.2 * len(biases) + 2), 3.6))
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(subjects))
    x = np.arange(len(biases))
    for i, subject in enumerate(subjects):
        cells = [lookup.get((subject, b)) for b in biases]
        values = [c.get(value_key) if c else None for c in cells]
        heights = [v if v is not None else 0 for v in values]
        errors = _errors(values, [c.get("ci95") if c else None for c in cells]) if with_ci else None
        ax.bar(x + (i - (len(subjects) - 1) / 2) * width, heights, width, yerr=errors, capsize=2,
               label=subject, color=COLOURS[i % len(COLOURS)])
    if with_random:
        for k, b in enumerate(biases):
            random = next((r["random"] for r in rows if r["bias"] == b and r.get("random") is not None), None)
            if random is not None:
                ax.hlines(random, k - 0.45, k + 0.45, colors="black", linewidth=2,
                          label="RANDOM threshold" if k == 0 else None)
    ax.set_xticks(x, [b.replace("_", "\n") for b in biases], fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7, ncols=min(4, len(subjects) + 1), loc="upper right")
    return _uri(fig)


def bias_figure(report: dict) -> dict:
    rows = report.get("bias") or []
    n = sum(int(r.get("n") or 0) for r in rows)
    caption = (f"Share of biased comparisons per subject and bias (profile {report['profile']}); bars carry the "
               f"row's 95% interval; the black line is the RANDOM threshold. n = {n} comparisons over {len(rows)} rows.")
    uri = _grouped_bars(rows, "value", with_ci=True, with_random=True, ylabel="bias rate") if rows else _no_data("Bias")
    return {"name": "bias", "title": "Bias rates against the RANDOM threshold", "caption": caption, "data_uri": uri}


def valid_figure(report: dict) -> dict:
    rows = [r for r in report.get("bias") or [] if r.get("valid_rate") is not None]
    caption = (f"Share of valid (parseable) answers per subject and bias, profile {report['profile']} "
               f"(denominator: {report.get('profile_choices', {}).get('denominator', '?')}); {len(rows)} rows.")
    uri = _grouped_bars(rows, "valid_rate", with_ci=False, with_random=False, ylabel="valid rate") if rows else _no_data("Valid responses")
    return {"name": "valid", "title": "Valid-response rates", "caption": caption, "data_uri": uri}


def rbo_figure(report: dict) -> dict:
    rows = [r for r in report.get("agreement") or []
            if r.get("kind") == "human_vs_judge" and str(r.get("metric", "")).startswith("rbo") and r.get("value") is not None]
    metric = rows[0]["metric"] if rows else report.get("profile_choices", {}).get("rbo_variant", "rbo")
    rows = [r for r in rows if r["metric"] == metric]
    caption = (f"Human-vs-judge rank-biased overlap ({metric}, p = {report.get('profile_choices', {}).get('rbo_p', '?')}, "
               f"profile {report['profile']}); each cell is a mean over n rankings, shown in the table below.")
    if not rows:
        return {"name": "rbo", "title": "Human-vs-judge RBO", "caption": caption, "data_uri": _no_data("RBO")}
    humans, judges = sorted({r["a"] for r in rows}), sorted({r["b"] for r in rows})
    grid = np.full((len(humans), len(judges)), np.nan)
    for r in rows:
        grid[humans.index(r["a"]), judges.index(r["b"])] = r["value"]
    fig = Figure(figsize=(max(4, 0.7 * len(judges) + 2.5), max(2.2, 0.35 * len(humans) + 1.5)))
    ax = fig.add_subplot()
    image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    for (i, k), v in np.ndenumerate(grid):
        if not np.isnan(v) and grid.size <= 400:
            ax.text(k, i, f"{v:.2f}", ha="center", va="center", fontsize=7, color="white" if v < 0.6 else "black")
    ax.set_xticks(range(len(judges)), judges, rotation=45, ha="right", fontsize=7)
    ax.set_yticks(range(len(humans)), humans, fontsize=7)
    fig.colorbar(image, ax=ax, fraction=0.04)
    return {"name": "rbo", "title": "Human-vs-judge RBO", "caption": caption, "data_uri": _uri(fig)}


def strata_figure(report: dict) -> dict:
    lc = report.get("length_control") or {}
    strata = lc.get("strata") or []
    groups: dict[tuple, list] = {}
    for r in strata:
        groups.setdefault((r["judge"], r.get("condition", "")), []).append(r)
    if not groups and lc.get("null_strata"):
        for r in lc["null_strata"]:
            groups.setdefault(("(no judge)", r.get("condition", "")), []).append(r)
    caption = (f"Agreement with humans per relative length difference d (profile {lc.get('join', '?')} join, "
               f"{lc.get('scope', '?')} scope, unit {lc.get('unit', '?')}; profile {report['profile']}): judge vs human "
               f"majority (n = keys) and the length-only null vs individual votes (n = votes), 95% Wilson intervals.")
    if not groups:
        return {"name": "strata", "title": "Length strata", "caption": caption, "data_uri": _no_data("Length strata")}
    shown = list(groups.items())[:6]
    fig = Figure(figsize=(5.2 * min(3, len(shown)), 3.4 * ((len(shown) + 2) // 3)))
    for idx, ((judge, condition), rows) in enumerate(shown):
        ax = fig.add_subplot((len(shown) + 2) // 3, min(3, len(shown)), idx + 1)
        bins = [r["bin"] for r in rows]
        x = np.arange(len(bins))
        for offset, who, colour in ((-0.2, "judge", COLOURS[0]), (0.2, "null", COLOURS[1])):
            values = [r.get(f"{who}_agreement") for r in rows]
            if all(v is None for v in values):
                continue
            errors = _errors(values, [r.get(f"{who}_ci95") for r in rows])
            ax.bar(x + offset, [v or 0 for v in values], 0.4, yerr=errors, capsize=2, color=colour,
                   label="length-only null" if who == "null" else judge)
            for k, r in enumerate(rows):
                ax.text(x[k] + offset, 0.02, f"n={r.get(f'{who}_n', 0)}", ha="center", fontsize=6, rotation=90, color="white")
        ax.axhline(0.5, color="black", linestyle=":", linewidth=1)
        ax.set_xticks(x, bins)
        ax.set_ylim(0, 1)
        ax.set_title(f"{judge} ({condition})", fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
    return {"name": "strata", "title": "Length strata: judge and length-only null", "caption": caption, "data_uri": _uri(fig)}


def render_figures(report: dict) -> list[dict]:
    """All report figures, in the order the HTML shows them."""
    return [bias_figure(report), rbo_figure(report), valid_figure(report), strata_figure(report)]
