"""Bradley-Terry scores per system: the humans' and each judge's, with 95% intervals, side by side."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from analysis.metrics.bradley_terry import ELO_CENTRE as CENTRE
from analysis.plots.base import COLOURS, MUTED, Plot, new_figure, no_data_figure

HUMANS = "humans"
HUMAN_COLOUR = "#222222"  # people in black, judges in the palette
MAX_SUBJECTS = 6
PAD = 0.08  # share of the axis span beyond the data; scores held by the ridge sit in half of it


def _colour(row: dict, k: int) -> str:
    return HUMAN_COLOUR if row["subject"] == HUMANS else COLOURS[k % len(COLOURS)]


def _limits(rows: list[dict]) -> tuple[float, float]:
    """The span of every bounded score and interval (ridge-held scores would stretch it to thousands)."""
    values = [
        v
        for r in rows
        for s in r["systems"]
        if not s.get("held_by_ridge")
        for v in [s["score"], *(s.get("ci95") or [])]
        if v is not None
    ]
    if not values:
        values = [s["score"] for r in rows for s in r["systems"]]
    low, high = min(values), max(values)
    pad = max(10.0, (high - low) * PAD)
    return low - pad, high + pad


def _draw(ax: Axes, rows: list[dict], systems: list[str], limits: tuple[float, float]) -> int:
    """One marker and interval per (subject, system); returns how many scores fell beyond the axis."""
    low, high = limits
    inner = (high - low) * PAD / 2 / (1 + 2 * PAD)  # half the padding, in data units
    offsets = np.linspace(-0.3, 0.3, len(rows)) if len(rows) > 1 else np.zeros(1)
    beyond = 0
    for k, (row, offset) in enumerate(zip(rows, offsets, strict=True)):
        colour = _colour(row, k)
        by_system = {s["system"]: s for s in row["systems"]}
        for i, system in enumerate(systems):
            s = by_system.get(system)
            if s is None:
                continue
            y = i + offset
            score, ci = s["score"], s.get("ci95")
            if s.get("held_by_ridge") or not low < score < high:
                # Unbounded (held by the ridge): an arrow at the edge, pointing where it lies.
                beyond += 1
                ax.plot(
                    [high - inner if score > CENTRE else low + inner],
                    [y],
                    marker=">" if score > CENTRE else "<",
                    color=colour,
                    markersize=5,
                    linestyle="none",
                )
                continue
            if ci:
                ax.plot([max(ci[0], low), min(ci[1], high)], [y, y], color=colour, linewidth=1.2)
            ax.plot([score], [y], marker="o", color=colour, markersize=4, linestyle="none")
    return beyond


def bt_plot(report: dict) -> Plot:
    rows = [r for r in report.get("bt_rankings") or [] if r.get("systems")]
    title = "Bradley-Terry scores of the systems"
    if not rows:
        caption = (
            f"Bradley-Terry scores (profile {report['profile']}): no rows. They need human votes or judge "
            "verdicts on pairs of the study's systems in the plain or order condition."
        )
        reason = (
            "no pairwise outcomes: collect approved human pairwise work or run a judge on the plain or order condition"
        )
        return Plot("bt_rankings", title, caption, no_data_figure("Bradley-Terry scores", reason))
    shown = rows[:MAX_SUBJECTS]
    # Systems in the first subject's order (the humans' when there are any), the best on top.
    systems = [s["system"] for s in shown[0]["systems"]]
    systems += sorted({s["system"] for r in shown for s in r["systems"]} - set(systems))
    fig = new_figure(6.4, 1.3 + 0.22 * len(systems) * max(2, len(shown)))
    ax = fig.add_subplot()
    limits = _limits(shown)
    beyond = _draw(ax, shown, systems, limits)
    ax.set_xlim(*limits)
    ax.set_ylim(len(systems) - 0.5, -0.5)
    ax.set_yticks(range(len(systems)), systems)
    ax.axvline(CENTRE, color=MUTED, linestyle=":", linewidth=1)
    ax.set_xlabel("score (1000 = the subject's mean system; +400 = 10:1 odds)")
    handles = [
        Line2D([], [], color=_colour(r, k), marker="o", markersize=4, label=r["subject"]) for k, r in enumerate(shown)
    ]
    fig.legend(handles=handles, loc="outside upper center", ncols=min(3, len(handles)), frameon=False)
    caption = (
        f"Bradley-Terry scores with Davidson ties (profile {report['profile']}), each subject's from its own "
        "un-cued votes or verdicts: dots are the fitted scores, lines their 95% intervals from a bootstrap "
        "clustered by instruction (the method text in the table has the details). Scores of different subjects "
        "share the scale but each is centred on its own mean system: compare orderings and gaps, not levels."
    )
    if beyond:
        caption += (
            f" {beyond} score(s) unbounded (a system that never lost or never won, or a subject whose outcomes "
            "never upset its order): drawn as arrows at the edge, held finite only by the ridge, no interval."
        )
    if len(rows) > MAX_SUBJECTS:
        caption += f" The first {MAX_SUBJECTS} of {len(rows)} subjects are drawn; the table has all."
    return Plot("bt_rankings", title, caption, fig)
