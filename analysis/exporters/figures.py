"""The report's figures; drawn by ``analysis.plots`` (one module per plot), kept here as the
exporters' entry point."""

from __future__ import annotations

from analysis.plots import build_plots, render_figures

__all__ = ["build_plots", "render_figures"]
