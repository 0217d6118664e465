"""Every plot of the demo and CoBBLEr reports is laid out cleanly (issue 13, item 2).

The plots are built as matplotlib Figures (``analysis.plots.build_plots``, the objects the SVG
export encodes), rasterised with Agg, and measured: nothing spills out of the figure, no data
artist (bar, interval, mark, cell) is clipped by its axes, legends stay off the data area, no
two texts overlap (``Bbox.overlaps`` on their window extents), text is at least 7 pt, and cell
labels keep WCAG AA contrast on their cell. The rasterisations are kept in
test-artifacts/plots/ for a human look.
"""

from __future__ import annotations

import io
import itertools

import numpy as np
import pytest
from django.core.management import call_command
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import Collection
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from analysis.plots import Plot, build_plots
from analysis.plots.base import contrast_ratio, house_style
from analysis.report import build_report
from annotations.models import Study
from tests.conftest import ARTIFACTS, COBBLER_DIR

pytestmark = [pytest.mark.django_db, pytest.mark.slow]
PROFILES = ("default", "cobbler-paper")
TOLERANCE = 1.5  # px at the figure's dpi: antialiasing and rounding, not layout
MIN_POINTS = 7.0  # 7 pt = 9.3 CSS px at 1x
MAX_WIDTH_IN = 9.5  # wider figures get scaled down in the report column
MIN_CONTRAST = 4.5  # WCAG AA for normal text


def _inside(inner: Bbox, outer: Bbox) -> bool:
    return (
        inner.x0 >= outer.x0 - TOLERANCE
        and inner.y0 >= outer.y0 - TOLERANCE
        and inner.x1 <= outer.x1 + TOLERANCE
        and inner.y1 <= outer.y1 + TOLERANCE
    )


def _shrunk(box: Bbox) -> Bbox:
    # Touching boxes are fine (a two-line label's lines, adjacent cells): only real overlap counts.
    return Bbox.from_extents(box.x0 + 1, box.y0 + 1, box.x1 - 1, box.y1 - 1)


def _tick_labels(axis: Axis) -> list[Text]:
    """Labels of the ticks in view (matplotlib keeps labels for ticks it does not draw)."""
    low, high = sorted(axis.get_view_interval())
    span = (high - low) or 1.0
    return [
        label
        for loc, label in zip(axis.get_majorticklocs(), axis.get_majorticklabels(), strict=False)
        if low - 1e-9 * span <= loc <= high + 1e-9 * span
    ]


def visible_texts(fig: Figure) -> list[tuple[str, Text]]:
    """Every drawn, non-empty text of the figure, each with a name for the error message."""
    found: list[tuple[str, Text]] = []
    for a, ax in enumerate(fig.axes):
        candidates = []
        if ax.axison:  # axis("off") hides ticks and labels but leaves them "visible"
            candidates += [("xtick", t) for t in _tick_labels(ax.xaxis)] + [
                ("ytick", t) for t in _tick_labels(ax.yaxis)
            ]
            candidates += [("xlabel", ax.xaxis.label), ("ylabel", ax.yaxis.label)]
        candidates += [("title", t) for t in (ax.title, ax._left_title, ax._right_title)]
        candidates += [("text", t) for t in ax.texts]
        legend = ax.get_legend()
        if legend is not None:
            candidates += [("legend", t) for t in [*legend.get_texts(), legend.get_title()]]
        found += [(f"axes{a}.{kind}", t) for kind, t in candidates]
    for legend in fig.legends:
        found += [("figlegend", t) for t in [*legend.get_texts(), legend.get_title()]]
    found += [("figtext", t) for t in fig.texts]
    return [(f"{name} {t.get_text()!r}", t) for name, t in found if t.get_visible() and t.get_text().strip()]


def layout_problems(plot: Plot) -> list[str]:
    """Everything wrong with the plot's layout: clipped, overlapping, too small or too faint."""
    fig = plot.figure
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.canvas.draw()  # rasterise: runs constrained layout and fixes every extent
    renderer = fig.canvas.get_renderer()
    problems: list[str] = []
    tight = fig.get_tightbbox(renderer).transformed(fig.dpi_scale_trans)
    if not _inside(tight, fig.bbox):
        problems.append(f"{plot.name}: drawn area {tight.bounds} spills out of the figure {fig.bbox.bounds}")
    if fig.get_figwidth() > MAX_WIDTH_IN:
        problems.append(f"{plot.name}: {fig.get_figwidth():.1f} in wide (over {MAX_WIDTH_IN} in)")
    problems += _data_inside_axes(plot, renderer)
    problems += _legends_outside_data(plot, renderer)
    problems += _texts_apart_and_legible(plot, renderer)
    problems += _cell_text_contrast(plot)
    return problems


def _extent(artist: Artist, ax: Axes, renderer) -> Bbox:
    if isinstance(artist, Collection):
        # A collection's own window extent is null for data-space paths (error bars, baselines,
        # cells); its data limits, drawn through the axes' transform, are where it lands.
        return artist.get_datalim(ax.transData).transformed(ax.transData)
    return artist.get_window_extent(renderer)


def _data_inside_axes(plot: Plot, renderer) -> list[str]:
    problems = []
    for a, ax in enumerate(plot.figure.axes):
        if not ax.axison:
            continue  # the "no data" panel: its texts are checked against the figure
        artists = [*ax.patches, *ax.lines, *ax.collections, *ax.images, *ax.texts]
        for artist in artists:
            if not artist.get_visible():
                continue
            box = _extent(artist, ax, renderer)
            if not np.isfinite(box.bounds).all() or (box.width == 0 and box.height == 0):
                continue  # an empty artist (a zero-length error bar) has no extent to clip
            if not _inside(box, ax.bbox):
                label = artist.get_text() if isinstance(artist, Text) else type(artist).__name__
                problems.append(
                    f"{plot.name}: axes{a} {label!r} at {box.bounds} is clipped by the axes {ax.bbox.bounds}"
                )
    return problems


def _legends_outside_data(plot: Plot, renderer) -> list[str]:
    fig = plot.figure
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
    problems = []
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for a, ax in enumerate(fig.axes):
            if ax.axison and _shrunk(box).overlaps(ax.bbox):
                problems.append(f"{plot.name}: a legend {box.bounds} covers the data area of axes{a} {ax.bbox.bounds}")
    return problems


def _texts_apart_and_legible(plot: Plot, renderer) -> list[str]:
    problems = []
    texts = visible_texts(plot.figure)
    boxes = [(name, t.get_window_extent(renderer)) for name, t in texts]
    for name, t in texts:
        if t.get_fontsize() < MIN_POINTS:
            problems.append(f"{plot.name}: {name} is {t.get_fontsize()} pt (under {MIN_POINTS})")
    for (name_a, a), (name_b, b) in itertools.combinations(boxes, 2):
        if _shrunk(a).overlaps(_shrunk(b)):
            problems.append(f"{plot.name}: {name_a} overlaps {name_b}")
    return problems


def _cell_text_contrast(plot: Plot) -> list[str]:
    """Text drawn on a coloured cell (the heatmap) reads against that cell's colour."""
    problems = []
    for ax in plot.figure.axes:
        meshes = [
            c
            for c in ax.collections
            if hasattr(c, "get_array") and c.get_array() is not None and getattr(c.get_array(), "ndim", 1) == 2
        ]
        for mesh in meshes:
            values = mesh.get_array()
            for text in ax.texts:
                x, y = text.get_position()
                value = values[int(round(y)), int(round(x))]
                background = mesh.cmap(mesh.norm(value))
                ratio = contrast_ratio(to_rgba(text.get_color()), background)
                if ratio < MIN_CONTRAST:
                    problems.append(f"{plot.name}: {text.get_text()!r} has contrast {ratio:.1f} on its cell")
    return problems


def check_every_plot(report: dict, label: str) -> list[Plot]:
    """All plots of ``report`` pass the layout checks; PNGs of them go to test-artifacts."""
    out = ARTIFACTS / "plots"
    out.mkdir(parents=True, exist_ok=True)
    with house_style():
        plots = build_plots(report)
        problems = [p for plot in plots for p in layout_problems(plot)]
        for plot in plots:
            plot.figure.savefig(out / f"{label}-{report['profile']}-{plot.name}.png", dpi=96)
    assert problems == [], "\n".join(problems)
    assert [p.name for p in plots] == ["bias", "battery", "rbo", "valid", "strata", "bt_rankings"]
    return plots


def test_every_demo_plot_is_laid_out_cleanly(demo_study):
    for profile in PROFILES:
        report = build_report(study=demo_study, profile=profile)
        plots = check_every_plot(report, "demo")
        # The demo has bias rows for both judges: the bias plot draws a bar per row, not a "no data" panel.
        assert plots[0].figure.axes[0].axison and len(plots[0].figure.axes[0].patches) >= len(
            [
                r
                for r in report["bias"]
                # position_consistency is a table row only (analysis.plots.bias.NOT_PLOTTED).
                if r["bias"] not in ("position_preference", "position_consistency") and r.get("value") is not None
            ]
        )


def test_every_cobbler_plot_is_laid_out_cleanly():
    if not COBBLER_DIR.exists():
        pytest.skip("the CoBBLEr data (../shared/datasets/cobbler) is not available")
    call_command("import_cobbler", str(COBBLER_DIR), "--study", "cobbler-plots", stdout=io.StringIO())
    study = Study.objects.get(slug="cobbler-plots")
    for profile in PROFILES:
        report = build_report(study=study, profile=profile)
        plots = check_every_plot(report, "cobbler")
        rbo = plots[2].figure.axes[0]
        judges = {r["b"] for r in report["agreement"] if r["kind"] == "human_vs_judge"}
        # One heatmap row per judge plus the human-human baseline row, each cell labelled with its n.
        assert len(rbo.get_yticklabels()) == len(judges) + 1
        assert sum("n=" in t.get_text() for t in rbo.texts) == sum(
            1 for r in report["agreement"] if r["kind"] == "human_vs_judge" and r["metric"].startswith("rbo")
        )
