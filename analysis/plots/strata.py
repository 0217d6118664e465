"""Length strata: judge and length-only null agreement with humans per relative length difference."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Patch

from analysis.plots.base import COLOURS, Plot, new_figure, no_data_figure

MAX_PANELS = 6
SERIES = (("judge", "judge vs human majority", COLOURS[0]), ("null", "length-only null vs votes", COLOURS[1]))


def _groups(lc: dict) -> dict[tuple[str, str], list[dict]]:
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in lc.get("strata") or []:
        groups.setdefault((r["judge"], r.get("condition", "")), []).append(r)
    if not groups:
        # No judge joined to human votes: the null alone still shows what length predicts.
        for r in lc.get("null_strata") or []:
            groups.setdefault(("length-only null", r.get("condition", "")), []).append(r)
    return groups


def _has(row: dict, who: str) -> bool:
    return int(row.get(f"{who}_n") or 0) > 0 and row.get(f"{who}_agreement") is not None


def _has_data(row: dict) -> bool:
    return any(_has(row, who) for who, _, _ in SERIES)


def _panel(ax: Axes, judge: str, condition: str, rows: list[dict], series: list[tuple]) -> None:
    x = np.arange(len(rows))
    offsets = (-0.2, 0.2) if len(series) == 2 else (0.0,)
    for offset, (who, _, colour) in zip(offsets, series, strict=True):
        values = [r.get(f"{who}_agreement") for r in rows]
        for k, (value, r) in enumerate(zip(values, rows, strict=True)):
            if value is None:
                continue
            ci = r.get(f"{who}_ci95")
            err = [[max(0.0, value - ci[0])], [max(0.0, ci[1] - value)]] if ci else None
            ax.bar(
                [x[k] + offset],
                [value],
                0.38 if len(series) == 2 else 0.6,
                yerr=err,
                capsize=2,
                color=colour,
                ecolor="#222222",
                error_kw={"linewidth": 0.8},
            )
    ax.axhline(0.5, color="black", linestyle=":", linewidth=1)
    # n under each bin, as text on white: readable at any size, never on a bar.
    labels = [f"{r['bin']}\n" + " / ".join(str(int(r.get(f"{who}_n") or 0)) for who, _, _ in series) for r in rows]
    ax.set_xticks(x, labels)
    ax.set_xlim(-0.6, len(rows) - 0.4)
    ax.set_ylim(-0.02, 1.08)  # below 0: caps of intervals ending at 0 stay whole
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_title(f"{judge} ({condition})" if condition else judge)


def strata_plot(report: dict) -> Plot:
    lc = report.get("length_control") or {}
    title = "Length strata: judge and length-only null"
    caption = (
        f"Agreement with humans per relative length difference d ({lc.get('join', '?')} join, "
        f"{lc.get('scope', '?')} scope, unit {lc.get('unit', '?')}; profile {report['profile']}): judge vs "
        f"human majority and the length-only null vs individual votes, 95% Wilson intervals; the dotted "
        f"line is chance (0.5)."
    )
    groups = _groups(lc)
    shown = {key: [r for r in rows if _has_data(r)] for key, rows in groups.items()}
    empty = [key for key, rows in shown.items() if not rows]
    shown = {key: rows for key, rows in shown.items() if rows}
    dropped_bins = sum(len(groups[key]) - len(rows) for key, rows in shown.items())
    if empty:
        names = ", ".join(f"{j} ({c})" if c else j for j, c in empty)
        caption += (
            f" Hidden: {names}: no pair in any bin has both this judge's verdict and human votes "
            f"(collect human pairwise votes on the same pairs)."
        )
    if dropped_bins:
        caption += f" {dropped_bins} empty bin(s) left out of the panels shown."
    if not shown:
        reason = (
            "no pair has both a judge verdict and human votes: collect approved human pairwise work on "
            "the pairs a judge answered"
        )
        return Plot("strata", title, caption, no_data_figure("Length strata", reason))
    series = [s for s in SERIES if any(_has(r, s[0]) for rows in shown.values() for r in rows)]
    caption += (
        " Under each bin: "
        + " / ".join("n judge keys" if who == "judge" else "n null votes" for who, _, _ in series)
        + "."
    )
    panels = list(shown.items())[:MAX_PANELS]
    if len(shown) > MAX_PANELS:
        caption += f" The first {MAX_PANELS} of {len(shown)} panels are drawn; the table has all."
    cols = min(2, len(panels))
    nrows = (len(panels) + cols - 1) // cols
    fig = new_figure(2.8 * cols + 0.2, 2.6 * nrows + 0.4)
    axes = np.atleast_1d(fig.subplots(nrows, cols, squeeze=False).ravel())
    for ax, ((judge, condition), rows) in zip(axes, panels, strict=False):
        _panel(ax, judge, condition, rows, series)
    for ax in axes[len(panels) :]:
        ax.remove()
    for ax in axes[::cols][:nrows]:
        ax.set_ylabel("agreement with humans")
    handles = [Patch(color=colour, label=label) for _, label, colour in series]
    # Side by side only over two panels: one panel is narrower than the two labels.
    fig.legend(handles=handles, loc="outside upper center", ncols=len(handles) if cols > 1 else 1, frameon=False)
    return Plot("strata", title, caption, fig)
