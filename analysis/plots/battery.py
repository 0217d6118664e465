"""The bias battery: each cue bias by subject, the paired effect and the robustness rate with intervals."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from analysis.plots.base import COLOURS, MUTED, SMALL, Plot, correction_label, new_figure, no_data_figure, subject_order
from annotations.biases import REGISTRY

SPREAD = 0.6  # of a bias's unit of height, shared by its subjects' points


def _positions(biases: list[str], subjects: list[str]) -> dict[tuple[str, str], float]:
    """y of each (bias, subject): one unit per bias, subjects spread inside it, top to bottom."""
    step = SPREAD / max(1, len(subjects) - 1) if len(subjects) > 1 else 0.0
    return {
        (bias, subject): k + (i - (len(subjects) - 1) / 2) * step
        for k, bias in enumerate(biases)
        for i, subject in enumerate(subjects)
    }


def _panel(
    ax: Axes,
    rows: list[dict],
    where: dict[tuple[str, str], float],
    colours: dict[str, str],
    value: str,
) -> None:
    """One dot per row with its 95% interval; a filled dot is a claimed bias, a hollow one is not."""
    for row in rows:
        block = row["effect"] if value == "effect" else row["robustness"]
        x = block["estimate"] if value == "effect" else block["rate"]
        if x is None:
            continue
        y = where[(row["bias"], row["subject"])]
        ci = block.get("ci95")
        if ci:
            ax.hlines(y, ci[0], ci[1], color=colours[row["subject"]], linewidth=1.4)
        claimed = value == "effect" and row["effect"].get("claim") == "biased"
        ax.plot(
            [x],
            [y],
            marker="o",
            markersize=5,
            color=colours[row["subject"]],
            markerfacecolor=colours[row["subject"]] if claimed or value != "effect" else "white",
            linestyle="none",
            clip_on=False,
        )


def battery_plot(report: dict) -> Plot:
    rows = report.get("battery") or []
    title = "Bias battery: effect and robustness by subject"
    effect_n = sum(int(r.get("n") or 0) for r in rows)
    verdicts = sum(int(r["robustness"].get("n") or 0) for r in rows)
    caption = (
        f"Left: each cue bias's paired effect (hits − mirror) / n per subject with its 95% cluster-robust "
        f"interval (profile {report['profile']}); 0 is no bias; a filled dot is a bias claimed by the "
        f"{correction_label(report)} test and the interval together. Right: CALM's robustness rate, the share of "
        f"verdicts unchanged by the cue (1 is fully robust), with its clustered interval. n = {effect_n} pairs and "
        f"{verdicts} verdicts over {len(rows)} rows."
    )
    if not rows:
        reason = "no cue-bias rows: run a judge job or crowd batches on a cue condition (bandwagon, authority, ...)"
        return Plot("battery", title, caption, no_data_figure("Bias battery", reason))
    present = {r["bias"] for r in rows}
    biases = [b for b in REGISTRY if b in present]
    subjects = subject_order({r["subject"] for r in rows})
    colours = {s: COLOURS[i % len(COLOURS)] for i, s in enumerate(subjects)}
    where = _positions(biases, subjects)
    fig = new_figure(6.4, min(8.0, 1.5 + 0.3 * len(biases) * max(1.0, len(subjects) * 0.6)))
    effect_ax, robust_ax = fig.subplots(1, 2, sharey=True, width_ratios=[1.3, 1])
    _panel(effect_ax, rows, where, colours, "effect")
    _panel(robust_ax, rows, where, colours, "robustness")
    reach = max(
        [0.1] + [abs(x) for r in rows for x in [r["effect"].get("estimate") or 0.0, *(r["effect"].get("ci95") or [])]]
    )
    reach = min(1.0, reach) * 1.1
    effect_ax.axvline(0, color="black", linewidth=1.0, linestyle=(0, (4, 2)))
    effect_ax.set_xlim(-reach, reach)
    effect_ax.set_xlabel("effect (hits − mirror) / n")
    robust_ax.axvline(1.0, color=MUTED, linewidth=0.8, linestyle=":")
    robust_ax.set_xlim(-0.03, 1.05)
    robust_ax.set_xticks(np.linspace(0, 1, 5))
    robust_ax.set_xlabel("robustness rate")
    effect_ax.set_yticks(range(len(biases)), [REGISTRY[b].short for b in biases])
    effect_ax.set_ylim(len(biases) - 0.5, -0.5)
    for ax in (effect_ax, robust_ax):
        ax.grid(axis="x", color="#e5e7eb", linewidth=0.6)
    handles = [Line2D([], [], color=colours[s], marker="o", markersize=5, linewidth=1.4, label=s) for s in subjects]
    fig.legend(handles=handles, loc="outside upper center", ncols=min(len(handles), 4), frameon=False, fontsize=SMALL)
    return Plot("battery", title, caption, fig)
