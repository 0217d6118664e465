"""Bias rates against the random baseline (with significance marks), and valid-answer rates."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from analysis.plots.base import (
    COLOURS,
    MUTED,
    SMALL,
    Plot,
    correction_label,
    new_figure,
    no_data_figure,
    stars,
    subject_order,
    wrap_label,
)
from annotations.biases import CUE_CONDITIONS

BIAS_ORDER = [
    "order_first",
    "order_last",
    "compassion_first",
    "compassion_last",
    "egocentric",
    "egocentric_comp",
    "salience_longer",
    *CUE_CONDITIONS,
]
# A difference (first - last, in [-1, 1]) with 0 as its no-bias value: its own panel and scale.
DIFFERENCE = "position_preference"
# Not a share of biased comparisons (higher is steadier, not more biased), and its valid rate is
# the order rows': the table shows it, the plots do not.
NOT_PLOTTED = ("position_consistency",)
MARK_GAP = 0.025  # data units between a bar's interval top and its mark
MARK_HEIGHT = 0.08  # an 8 pt mark on a 3.6 in panel, in data units, rounded up


def _ordered_biases(rows: list[dict]) -> list[str]:
    present = {r["bias"] for r in rows}
    return [b for b in BIAS_ORDER if b in present] + sorted(present - set(BIAS_ORDER))


def _bar_top(value: float, ci: list | None) -> float:
    return max(value, ci[1]) if ci else value


def _draw_bars(ax: Axes, x: float, width: float, row: dict, colour: str, *, with_mark: bool) -> float:
    """One bar with its interval and mark; returns the highest y drawn (for the headroom)."""
    value, ci = row["value"], row.get("ci95")
    err = None
    if ci:
        err = [[max(0.0, value - ci[0])], [max(0.0, ci[1] - value)]]
    ax.bar([x], [value], width, yerr=err, capsize=2, color=colour, ecolor="#222222", error_kw={"linewidth": 0.8})
    top = _bar_top(value, ci)
    mark = stars(row.get("p_adjusted")) if with_mark else None
    if not mark:
        return top
    # A negative difference gets its mark below the bar, where its interval ends.
    if value < 0:
        ax.text(
            x,
            min(value, ci[0] if ci else value) - MARK_GAP,
            mark,
            ha="center",
            va="top",
            fontsize=SMALL,
            color=MUTED if mark == "ns" else "#222222",
        )
        return top
    ax.text(
        x, top + MARK_GAP, mark, ha="center", va="bottom", fontsize=SMALL, color=MUTED if mark == "ns" else "#222222"
    )
    return top + MARK_GAP + MARK_HEIGHT


def _rates_panel(ax: Axes, rows: list[dict], subjects: list[str], colours: dict[str, str]) -> None:
    biases = _ordered_biases(rows)
    lookup = {(r["subject"], r["bias"]): r for r in rows}
    width = 0.8 / len(subjects)
    highest = 1.0
    for k, bias in enumerate(biases):
        for i, subject in enumerate(subjects):
            row = lookup.get((subject, bias))
            if row is not None:
                x = k + (i - (len(subjects) - 1) / 2) * width
                highest = max(highest, _draw_bars(ax, x, width * 0.92, row, colours[subject], with_mark=True))
        random = next((r["random"] for r in rows if r["bias"] == bias and r.get("random") is not None), None)
        if random is not None:
            ax.hlines(random, k - 0.45, k + 0.45, colors="black", linewidth=1.4, linestyles=(0, (4, 2)))
    ax.set_xticks(np.arange(len(biases)), [wrap_label(b) for b in biases])
    ax.set_xlim(-0.55, len(biases) - 0.45)
    # Headroom above 1.0 for intervals and marks, but no tick above 1: a rate cannot exceed it.
    # A little below 0 too, so the caps of intervals that end at 0 are not cut in half.
    lowest = min([0.0, *((r.get("ci95") or [0.0])[0] for r in rows)])
    ax.set_ylim(lowest - 0.02, highest + 0.04)
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_ylabel("bias rate")


def _difference_panel(ax: Axes, rows: list[dict], subjects: list[str], colours: dict[str, str]) -> None:
    lookup = {r["subject"]: r for r in rows}
    shown = [s for s in subjects if s in lookup]
    reach = 0.1
    for i, subject in enumerate(shown):
        row = lookup[subject]
        _draw_bars(ax, i, 0.7, row, colours[subject], with_mark=True)
        ci = row.get("ci95") or [row["value"], row["value"]]
        reach = max(reach, abs(row["value"]), abs(ci[0]), abs(ci[1]))
    reach = min(1.0, reach) + MARK_GAP + MARK_HEIGHT
    ax.axhline(0, color="black", linewidth=1.4, linestyle=(0, (4, 2)))
    ax.set_ylim(-reach - 0.04, reach + 0.04)
    ax.set_xlim(-0.6, len(shown) - 0.4)
    ax.set_xticks([])
    ax.set_title("position\npreference", fontsize=SMALL)
    ax.set_ylabel("first − last")


def bias_plot(report: dict) -> Plot:
    rows = [r for r in report.get("bias") or [] if r.get("value") is not None and r["bias"] not in NOT_PLOTTED]
    rates = [r for r in rows if r["bias"] != DIFFERENCE]
    differences = [r for r in rows if r["bias"] == DIFFERENCE]
    title = "Bias rates against the random baseline"
    n = sum(int(r.get("n") or 0) for r in rates)
    caption = (
        f"Share of biased comparisons per subject and bias (profile {report['profile']}), with the row's 95% "
        f"interval; dashed lines are the random baseline (the rate a judge choosing at random would get). "
        f"Marks: {correction_label(report)} * < .05, ** < .01, *** < .001, ns not significant; unmarked rows "
        f"are descriptive (no test of their own). n = {n} comparisons over {len(rates)} rows."
    )
    if differences:
        caption += (
            " Right: position preference (order_first − order_last; 0 is no preference), tested with the "
            "exact sign test."
        )
    if not rows:
        reason = (
            "no bias rows: run a judge job on the order, bandwagon or attentional condition, "
            "or collect or import approved human work for those conditions"
        )
        return Plot("bias", title, caption, no_data_figure("Bias", reason))
    subjects = subject_order({r["subject"] for r in rows})
    colours = {s: COLOURS[i % len(COLOURS)] for i, s in enumerate(subjects)}
    n_biases = len(_ordered_biases(rates))
    bars = max(1, n_biases * len(subjects))
    # About 5.5 in (the report column's ~520 CSS px) for a typical study, so text shows at 1x;
    # wider only when there are many bars, and then at most ~9 in.
    width = min(8.0, max(4.2, 0.22 * bars + 1.4)) + (1.0 if differences else 0)
    fig = new_figure(width, 3.6)
    if rates and differences:
        ax, diff_ax = fig.subplots(1, 2, width_ratios=[max(3, n_biases * 1.2), 1.2])
        _rates_panel(ax, rates, subjects, colours)
        _difference_panel(diff_ax, differences, subjects, colours)
    elif rates:
        _rates_panel(fig.add_subplot(), rates, subjects, colours)
    else:
        _difference_panel(fig.add_subplot(), differences, subjects, colours)
    handles = [Line2D([], [], color=colours[s], linewidth=6, label=s) for s in subjects]
    handles.append(Line2D([], [], color="black", linewidth=1.4, linestyle=(0, (4, 2)), label="random baseline"))
    fig.legend(handles=handles, loc="outside upper center", ncols=min(len(handles), 4), frameon=False)
    return Plot("bias", title, caption, fig)


def valid_plot(report: dict) -> Plot:
    rows = [
        r
        for r in report.get("bias") or []
        if r.get("valid_rate") is not None and r["bias"] != DIFFERENCE and r["bias"] not in NOT_PLOTTED
    ]
    denominator = (report.get("profile_choices") or {}).get("denominator", "?")
    title = "Valid-response rates"
    caption = (
        f"Share of valid (parseable) answers per subject and bias, profile {report['profile']} "
        f"(rates use the {denominator!r} denominator); {len(rows)} rows."
    )
    if not rows:
        reason = "no bias rows, so no answers to count: the valid rate is measured on the bias conditions"
        return Plot("valid", title, caption, no_data_figure("Valid responses", reason))
    subjects = subject_order({r["subject"] for r in rows})
    biases = _ordered_biases(rows)
    values = [r["valid_rate"] for r in rows]
    low = min(values)
    # Zoomed to the data: rates near 1.0 differ in the second decimal, which a 0-1 axis hides.
    left = max(0.0, min(low - 0.02, 0.95) if low < 1 else 0.95)
    left = np.floor(left * 50) / 50
    fig = new_figure(5.6, 0.9 + 0.42 * len(subjects) + 0.06 * len(subjects) * len(biases))
    ax = fig.add_subplot()
    markers = "osD^vP*Xh"
    step = 0.7 / max(1, len(biases))
    for b, bias in enumerate(biases):
        mine = {r["subject"]: r["valid_rate"] for r in rows if r["bias"] == bias}
        ys = [i + (b - (len(biases) - 1) / 2) * step for i, s in enumerate(subjects) if s in mine]
        xs = [mine[s] for s in subjects if s in mine]
        ax.scatter(
            xs,
            ys,
            s=26,
            marker=markers[b % len(markers)],
            color=COLOURS[b % len(COLOURS)],
            label=bias,
            zorder=3,
            clip_on=False,
        )
    ax.set_yticks(range(len(subjects)), subjects)
    ax.set_ylim(len(subjects) - 0.5, -0.5)
    ax.set_xlim(left, 1.0 + (1.0 - left) * 0.04)
    ax.axvline(1.0, color=MUTED, linewidth=0.8, linestyle=":")
    ax.grid(axis="x", color="#e5e7eb", linewidth=0.6)
    ax.set_xlabel("valid rate" + (f" (axis from {left:.2f})" if left > 0 else ""))
    fig.legend(loc="outside right upper", frameon=False, title="bias", title_fontsize=SMALL)
    if low >= 1.0:
        caption += " Every row is 100% valid."
    else:
        caption += f" Lowest: {low:.1%}; the axis starts at {left:.2f}, not 0."
    return Plot("valid", title, caption, fig)
