"""Human-vs-judge RBO as a heatmap: one row per judge, coloured relative to the human-human baseline."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize

from analysis.plots.base import SMALL, Plot, new_figure, no_data_figure, text_colour_on

CONSENSUS = "humans"
MAX_RATER_COLUMNS = 6  # more raters than this: the consensus column only (per-rater rows are in the table)
CELL_TEXT = 7.5
MAX_LABELLED_CELLS = 400  # beyond this the labels would be too small to read


def _metric(report: dict, rows: list[dict]) -> str:
    variant = (report.get("profile_choices") or {}).get("rbo_variant")
    wanted = f"rbo_{variant}" if variant else None
    metrics = sorted({r["metric"] for r in rows})
    return wanted if wanted is not None and wanted in metrics else metrics[0]


def _baseline(report: dict, metric: str) -> dict | None:
    """The mean pairwise RBO between human raters (the agreement section's all/all row)."""
    return next(
        (
            r
            for r in report.get("agreement") or []
            if r.get("kind") == "inter_annotator"
            and r.get("metric") == metric
            and r.get("a") == "all"
            and r.get("value") is not None
        ),
        None,
    )


def _columns(raters: list[str]) -> tuple[list[str], str]:
    """Which human columns to draw, and what the caption says about the others."""
    individual = [r for r in raters if r != CONSENSUS]
    if len(individual) <= 1:
        # One rater: the consensus *is* that rater, so a second column would only repeat it.
        who = f" ({individual[0]})" if individual else ""
        return [CONSENSUS] if CONSENSUS in raters else individual, f"One human rater{who}, shown once."
    if len(individual) > MAX_RATER_COLUMNS:
        return [CONSENSUS], f"The {len(individual)} individual raters are in the agreement table, not drawn."
    return [CONSENSUS, *individual] if CONSENSUS in raters else individual, ""


def _row_keys(rows: list[dict], columns: list[str]) -> list[tuple[str, str]]:
    """(judge, source) per heatmap row, the judge that agrees most with the first column on top."""
    first = {(r["b"], r.get("source", "")): r["value"] for r in rows if r["a"] == columns[0]}
    return sorted({(r["b"], r.get("source", "")) for r in rows}, key=lambda k: (-first.get(k, -1.0), k))


def _label(key: tuple[str, str], keys: list[tuple[str, str]]) -> str:
    judge, source = key
    # The same judge from two sources (imported and judged here) needs the source to tell them apart.
    return f"{judge} ({source})" if source and sum(k[0] == judge for k in keys) > 1 else judge


def _norm(values: np.ndarray, baseline: float | None) -> Normalize:
    finite = values[np.isfinite(values)]
    if baseline is not None:
        half = max(0.02, float(np.max(np.abs(finite - baseline))) * 1.1)
        return Normalize(baseline - half, baseline + half)
    low, high = float(finite.min()), float(finite.max())
    pad = max(0.02, (high - low) * 0.05)
    return Normalize(low - pad, high + pad)


def _draw_cells(ax: Axes, grid: np.ndarray, counts: np.ndarray, baseline: float | None) -> ScalarMappable:
    drawn = np.vstack([grid, np.full((1, grid.shape[1]), baseline)]) if baseline is not None else grid
    norm = _norm(grid, baseline)
    # pcolormesh, not imshow: cells stay vector quads in the SVG (imshow embeds a tiny raster the
    # browser blurs when it scales it up).
    mesh = ax.pcolormesh(
        np.arange(drawn.shape[1] + 1) - 0.5,
        np.arange(len(drawn) + 1) - 0.5,
        np.ma.masked_invalid(drawn),
        norm=norm,
        cmap="RdBu" if baseline is not None else "viridis",
        edgecolors="white",
        linewidth=0.5,
    )
    ax.set_xlim(-0.5, drawn.shape[1] - 0.5)
    ax.set_ylim(len(drawn) - 0.5, -0.5)
    if grid.size <= MAX_LABELLED_CELLS:
        for (i, k), v in np.ndenumerate(grid):
            if np.isfinite(v):
                # Cells sit inside the axes, so layout can skip measuring them (most of its cost).
                ax.text(
                    k,
                    i,
                    f"{v:.2f}\nn={counts[i, k]}",
                    ha="center",
                    va="center",
                    fontsize=CELL_TEXT,
                    linespacing=1.1,
                    color=text_colour_on(mesh.cmap(norm(v))),
                    in_layout=False,
                )
    return mesh


def _draw_baseline(ax: Axes, mesh: ScalarMappable, base: dict, row: int, columns: int) -> None:
    """The bottom row: the human-human mean RBO, one value across the row (it is not per judge)."""
    ci = base.get("ci95")
    interval = f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else ""
    ax.text(
        (columns - 1) / 2,
        row,
        f"{base['value']:.2f}{interval}\nn = {base.get('n')} rater pairs",
        ha="center",
        va="center",
        fontsize=CELL_TEXT,
        linespacing=1.1,
        color=text_colour_on(tuple(mesh.cmap(mesh.norm(base["value"])))),
    )
    ax.axhline(row - 0.5, color="black", linewidth=1.2)


def _grid(rows: list[dict], keys: list[tuple[str, str]], columns: list[str]) -> tuple[np.ndarray, np.ndarray]:
    grid = np.full((len(keys), len(columns)), np.nan)
    counts = np.zeros_like(grid, dtype=int)
    for r in rows:
        if r["a"] in columns:
            i, k = keys.index((r["b"], r.get("source", ""))), columns.index(r["a"])
            grid[i, k], counts[i, k] = r["value"], int(r.get("n") or 0)
    return grid, counts


def _caption(report: dict, metric: str, base: dict | None, cells: int) -> str:
    p = (report.get("profile_choices") or {}).get("rbo_p", "?")
    caption = (
        f"Human-vs-judge rank-biased overlap ({metric}, p = {p}, profile {report['profile']}); each cell is a "
        f"mean over n rankings (intervals in the agreement table). Judges sorted by agreement with the "
        f"first column. "
    )
    if base:
        caption += (
            "Colours diverge around the human-human baseline (mean RBO between pairs of human raters, "
            "bottom row): blue agrees with people more than people agree with each other, red less. "
        )
    else:
        caption += (
            "No human-human baseline (it needs two raters ranking the same instructions); colours span the data range. "
        )
    chances = [
        r["chance"]["value"]
        for r in report.get("agreement") or []
        if r.get("kind") == "human_vs_judge"
        and r.get("metric") == metric
        and (r.get("chance") or {}).get("value") is not None
    ]
    if chances:
        # Random orderings of a few answers already overlap a lot: the floor to read cells against.
        caption += (
            f"Chance level (answers in random order, permutation null): {min(chances):.2f}"
            + (f"-{max(chances):.2f}" if max(chances) - min(chances) >= 0.005 else "")
            + ". "
        )
    if cells > MAX_LABELLED_CELLS:
        caption += f"{cells} cells are too many to label; the values are in the agreement table. "
    return caption


def rbo_plot(report: dict) -> Plot:
    rows = [
        r
        for r in report.get("agreement") or []
        if r.get("kind") == "human_vs_judge"
        and str(r.get("metric", "")).startswith("rbo")
        and r.get("value") is not None
    ]
    title = "Human-vs-judge RBO"
    if not rows:
        caption = (
            f"Human-vs-judge rank-biased overlap (profile {report['profile']}): no rows. It needs human "
            "rankings and judge rankings of the same instructions."
        )
        reason = (
            "no human rankings to compare with: collect or import approved ranking-condition work, "
            "and run a judge on the order or plain condition"
        )
        return Plot("rbo", title, caption, no_data_figure("RBO", reason))
    metric = _metric(report, rows)
    rows = [r for r in rows if r["metric"] == metric]
    columns, note = _columns(sorted({r["a"] for r in rows}))
    keys = _row_keys(rows, columns)
    grid, counts = _grid(rows, keys, columns)
    base = _baseline(report, metric)
    height = len(keys) + (1 if base else 0)
    # At least 4.2 in: the colour bar under the cells carries a one-line label.
    fig = new_figure(max(4.2, 1.4 + max(0.62, 1.5 / len(columns)) * len(columns)), 1.9 + 0.36 * height)
    ax = fig.add_subplot()
    mesh = _draw_cells(ax, grid, counts, base["value"] if base else None)
    labels = [_label(key, keys) for key in keys]
    if base:
        _draw_baseline(ax, mesh, base, len(keys), len(columns))
        labels.append("human–human\nbaseline")
    heads = [f"{c}\n(consensus)" if c == CONSENSUS and len(columns) > 1 else c for c in columns]
    # Vertical heads: a rater's name is wider than its cell.
    ax.set_xticks(range(len(columns)), heads, rotation=90 if len(columns) > 1 else 0)
    ax.xaxis.tick_top()
    ax.set_yticks(range(height), labels)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    # Below the cells: a horizontal bar's label has the figure's width, whatever the row count.
    bar = fig.colorbar(mesh, ax=ax, location="bottom", fraction=0.5 / fig.get_figheight(), aspect=30)
    bar.ax.tick_params(labelsize=SMALL)
    bar.set_label(
        f"RBO (white = human–human baseline {base['value']:.2f})" if base else "RBO (scale: data range)", fontsize=SMALL
    )
    return Plot("rbo", title, _caption(report, metric, base, grid.size) + note, fig)
