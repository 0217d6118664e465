"""What the report plots say: marks from the corrected p-values, the random baseline, headroom,
hidden empty panels, the RBO heatmap's rows and scale, and SVG with text kept as text."""

from __future__ import annotations

import base64

import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from analysis.plots import Plot, build_plots, render_figures
from analysis.plots.base import house_style, stars
from tests.analysis.test_plots_layout import layout_problems

CHOICES = {"correction": "holm", "denominator": "valid", "rbo_variant": "ext", "rbo_p": 0.8}
BIASES = ["order_first", "order_last", "salience_longer", "bandwagon", "attentional"]


def bias_row(subject: str, bias: str, value: float, p: float | None = None, *, ci=None, valid=1.0) -> dict:
    random = {"salience_longer": 0.5, "position_preference": 0.0}.get(bias, 0.25)
    return {
        "subject": subject,
        "bias": bias,
        "value": value,
        "n": 120,
        "valid_rate": valid,
        "random": random,
        "ci95": ci if ci is not None else [max(-1.0, value - 0.05), min(1.0, value + 0.05)],
        "p_value": p,
        "p_adjusted": p,
    }


def report(**sections) -> dict:
    return {
        "profile": "default",
        "profile_choices": CHOICES,
        "bias": [],
        "agreement": [],
        "length_control": {},
    } | sections


def plots_of(r: dict) -> dict[str, Plot]:
    with house_style():
        plots = {p.name: p for p in build_plots(r)}
        for p in plots.values():
            p.figure.canvas.draw()
    return plots


def marks(fig: Figure, axes: int = 0) -> list[tuple[float, str]]:
    return sorted((t.get_position()[0], t.get_text()) for t in fig.axes[axes].texts)


def test_marks_follow_the_holm_adjusted_p_values_and_untested_rows_get_none():
    rows = [bias_row("gpt4", b, 0.4, p) for b, p in zip(BIASES, [None, None, 0.04, 0.004, 0.0004], strict=True)]
    rows.append(bias_row("llama", "bandwagon", 0.3, 0.2))
    plot = plots_of(report(bias=rows))["bias"]
    shown = [text for _, text in marks(plot.figure)]
    assert sorted(shown) == sorted([stars(r["p_adjusted"]) for r in rows if r["p_adjusted"] is not None])
    assert sorted(shown) == ["*", "**", "***", "ns"]
    assert "Holm-adjusted p * < .05, ** < .01, *** < .001" in plot.caption
    assert stars(0.05) == "ns" and stars(0.0499) == "*" and stars(None) is None


def test_the_random_baseline_is_drawn_for_every_bias():
    rows = [bias_row("gpt4", b, 0.3) for b in BIASES]
    ax = plots_of(report(bias=rows))["bias"].figure.axes[0]
    levels = sorted(
        round(float(seg[0][1]), 6)
        for coll in ax.collections
        if hasattr(coll, "get_segments")
        for seg in coll.get_segments()
        if seg[0][1] == seg[1][1] and abs(seg[1][0] - seg[0][0]) > 0.5
    )
    assert levels == sorted(r["random"] for r in rows)


def test_a_bar_reaching_1_keeps_its_interval_and_mark_inside_the_axes():
    rows = [bias_row("gpt4", "salience_longer", 1.0, 1e-9, ci=[0.97, 1.0]), bias_row("gpt4", "bandwagon", 0.2, 0.3)]
    plot = plots_of(report(bias=rows))["bias"]
    ax = plot.figure.axes[0]
    assert layout_problems(plot) == []
    assert ax.get_ylim()[1] > 1.05 and max(ax.get_yticks()) == pytest.approx(1.0)
    mark = next(t for t in ax.texts if t.get_text() == "***")
    assert mark.get_position()[1] > 1.0


def test_position_preference_gets_its_own_panel_centred_on_zero():
    rows = [bias_row("gpt4", "order_first", 0.4), bias_row("gpt4", "position_preference", -0.3, 0.001)]
    fig = plots_of(report(bias=rows))["bias"].figure
    low, high = fig.axes[1].get_ylim()
    assert len(fig.axes) == 2 and low == pytest.approx(-high) and low < -0.35
    assert marks(fig, axes=1) == [(0, "**")]
    assert fig.axes[1].texts[0].get_position()[1] < -0.35  # below the negative bar's interval


def test_many_subjects_with_long_names_still_lay_out_cleanly():
    subjects = ["humans", *(f"a-rather-long-judge-name-{i}" for i in range(7))]
    rows = [
        bias_row(s, b, min(1.0, 0.1 * (i + k)), 0.01 * i or None)
        for i, s in enumerate(subjects)
        for k, b in enumerate([*BIASES, "position_preference"])
    ]
    plots = plots_of(report(bias=rows))
    assert layout_problems(plots["bias"]) == [] and layout_problems(plots["valid"]) == []


def test_the_layout_check_catches_a_legend_on_the_data_and_a_clipped_bar():
    with house_style():
        fig = Figure(figsize=(4, 3))
        ax = fig.add_subplot()
        ax.bar([0, 1], [1.0, 0.5], yerr=[[0.0, 0.0], [0.1, 0.0]], label="gpt4")
        ax.set_ylim(0, 1)
        ax.legend(loc="upper right")
        ax.text(0.5, 0.5, "overlap", transform=ax.transAxes)
        ax.text(0.52, 0.5, "overlap too", transform=ax.transAxes)
        problems = layout_problems(Plot("bad", "Bad", "", fig))
    assert any("clipped by the axes" in p for p in problems)
    assert any("covers the data area" in p for p in problems)
    assert any("'overlap' overlaps" in p for p in problems)


def test_the_valid_plot_zooms_to_the_data_range():
    rows = [bias_row("gpt4", b, 0.3, valid=v) for b, v in zip(BIASES, [0.91, 0.95, 1.0, 0.99, 0.97], strict=True)]
    plot = plots_of(report(bias=rows))["valid"]
    left, right = plot.figure.axes[0].get_xlim()
    assert 0.85 <= left < 0.91 and right > 1.0
    assert "Lowest: 91.0%" in plot.caption and layout_problems(plot) == []


def strata_row(judge: str, condition: str, bin_: str, judge_n: int, null_n: int) -> dict:
    return {
        "bin": bin_,
        "judge": judge,
        "condition": condition,
        "judge_agreement": 0.6 if judge_n else None,
        "judge_n": judge_n,
        "judge_ci95": [0.5, 0.7] if judge_n else None,
        "null_agreement": 0.55 if null_n else None,
        "null_n": null_n,
        "null_ci95": [0.45, 0.65] if null_n else None,
    }


def test_empty_strata_panels_and_bins_are_hidden_and_the_caption_says_why():
    bins = ["<5%", "<10%", "10-30%", ">30%"]
    strata = [strata_row("gpt4", "order", b, n, 3 * n) for b, n in zip(bins, [0, 4, 9, 20], strict=True)]
    strata += [strata_row("longer", "order", b, 0, 0) for b in bins]
    plot = plots_of(report(length_control={"strata": strata, "join": "unordered"}))["strata"]
    (ax,) = plot.figure.axes
    assert ax.get_title() == "gpt4 (order)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["<10%\n4 / 12", "10-30%\n9 / 27", ">30%\n20 / 60"]
    assert "Hidden: longer (order): no pair in any bin" in plot.caption and "1 empty bin(s)" in plot.caption
    assert layout_problems(plot) == []


def rbo_row(a: str, b: str, value: float, kind: str = "human_vs_judge", n: int = 50) -> dict:
    return {
        "kind": kind,
        "metric": "rbo_ext",
        "a": a,
        "b": b,
        "value": value,
        "n": n,
        "ci95": [value - 0.03, value + 0.03],
    }


def test_one_rater_is_shown_once_not_again_as_humans():
    rows = [
        rbo_row(who, judge, v) for judge, v in (("gpt4", 0.64), ("llama", 0.4)) for who in ("humans", "annotator-0")
    ]
    plot = plots_of(report(agreement=rows))["rbo"]
    ax = plot.figure.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["humans"]
    assert "One human rater (annotator-0), shown once." in plot.caption
    assert "No human-human baseline" in plot.caption
    low, high = plot.figure.axes[0].collections[0].norm.vmin, plot.figure.axes[0].collections[0].norm.vmax
    assert 0.3 < low < 0.4 and 0.64 < high < 0.7  # relative to the data, not 0-1


def test_the_heatmap_diverges_around_the_human_human_baseline_with_n_in_every_cell():
    rows = [
        rbo_row(who, judge, v + d)
        for judge, v in (("gpt4", 0.64), ("llama", 0.45))
        for who, d in (("humans", 0.0), ("annotator-0", -0.02), ("annotator-1", 0.01))
    ]
    baseline = rbo_row("all", "all", 0.71, kind="inter_annotator", n=1) | {"aggregate": "mean of pairs"}
    plot = plots_of(report(agreement=[*rows, baseline]))["rbo"]
    ax = plot.figure.axes[0]
    norm = ax.collections[0].norm
    assert (norm.vmin + norm.vmax) / 2 == pytest.approx(0.71)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["gpt4", "llama", "human–human\nbaseline"]  # the judge closest to people first
    cells = [t.get_text() for t in ax.texts]
    assert sum(text.endswith("n=50") for text in cells) == len(rows)
    assert "0.71 [0.68, 0.74]\nn = 1 rater pairs" in cells
    assert layout_problems(plot) == []


def test_no_data_plots_say_why():
    plots = plots_of(report())
    for plot in plots.values():
        texts = [t.get_text() for t in plot.figure.findobj(Text)]
        assert any(t.endswith(": no data") for t in texts), plot.name
        assert any(len(t) > 40 for t in texts), plot.name  # the reason, with what would fill it
        assert layout_problems(plot) == []


def test_figures_are_svg_with_text_kept_as_text_and_escaped():
    rows = [bias_row("<script>alert(1)</script>", "bandwagon", 0.4, 0.001), bias_row("gpt4", "bandwagon", 0.3)]
    figures = render_figures(report(bias=rows))
    assert [f["name"] for f in figures] == ["bias", "battery", "rbo", "valid", "strata", "bt_rankings"]
    assert all(set(f) == {"name", "title", "caption", "data_uri"} for f in figures)
    assert all(f["data_uri"].startswith("data:image/svg+xml;base64,") for f in figures)
    svg = base64.b64decode(figures[0]["data_uri"].split(",", 1)[1]).decode()
    assert "<text" in svg and "gpt4" in svg and "bias rate" in svg
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    assert render_figures(report(bias=rows)) == figures  # stable bytes for the same report
