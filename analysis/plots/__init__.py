"""The report's plots: built as matplotlib Figures (``build_plots``), stored as SVG data: URIs
(``render_figures``), in the order the page shows them."""

from __future__ import annotations

from analysis.plots.base import Plot, house_style
from analysis.plots.battery import battery_plot
from analysis.plots.bias import bias_plot, valid_plot
from analysis.plots.bt import bt_plot
from analysis.plots.rbo import rbo_plot
from analysis.plots.strata import strata_plot

BUILDERS = (bias_plot, battery_plot, rbo_plot, valid_plot, strata_plot, bt_plot)


def build_plots(report: dict) -> list[Plot]:
    """Every plot of ``report`` as an unencoded Figure (the layout test inspects these)."""
    with house_style():
        return [build(report) for build in BUILDERS]


def render_figures(report: dict) -> list[dict]:
    """All report figures as ``{"name", "title", "caption", "data_uri"}`` (SVG), in page order."""
    with house_style():
        return [plot.as_dict() for plot in build_plots(report)]


__all__ = ["Plot", "build_plots", "render_figures"]
