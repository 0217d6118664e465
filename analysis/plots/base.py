"""What every report plot shares: the Plot record, the house style, SVG encoding, "no data" panels.

Plots are drawn on bare matplotlib Figures (Agg canvas, no pyplot state), so building them is
thread-safe in the worker and the layout test can inspect the same objects before encoding.
"""

from __future__ import annotations

import base64
import io
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

# Colour-blind-safe qualitative palette (Okabe-Ito, black dropped: black is the baseline's colour).
COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999"]
MUTED = "#555555"
_STYLE_LOCK = threading.RLock()
# The report column is about 500 CSS px wide; at 9 pt the smallest text still reads at 1x there.
FONT = 9
SMALL = 8
# Text stays text in the SVG: files stay small, labels are selectable, and the browser hints the
# glyphs at any zoom. The page's fonts stand in when DejaVu Sans is missing, so the list of
# fallbacks ends in a generic family whose metrics are close to DejaVu's.
# Keys are rcParams names; Any because matplotlib types them as a Literal of every rcParam.
STYLE: dict[Any, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "cobbler-report",  # stable element ids: the same report gives the same bytes
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Verdana", "Arial", "Helvetica", "sans-serif"],
    "font.size": FONT,
    "axes.titlesize": FONT,
    "axes.labelsize": FONT,
    "xtick.labelsize": SMALL,
    "ytick.labelsize": SMALL,
    "legend.fontsize": SMALL,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


@dataclass
class Plot:
    """A report plot before encoding: the Figure plus what the page prints beside it."""

    name: str
    title: str
    caption: str
    figure: Figure

    def as_dict(self) -> dict:
        """The stored shape (``ReportRun.figures`` rows): name, title, caption and an SVG data: URI."""
        return {"name": self.name, "title": self.title, "caption": self.caption, "data_uri": svg_uri(self.figure)}


def new_figure(width: float, height: float) -> Figure:
    """A Figure for drawing inside ``house_style()``; constrained layout keeps titles, labels and
    legends apart."""
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


@contextmanager
def house_style() -> Iterator[None]:
    """The style, for building and encoding plots.

    rcParams are process-global, so two threads of one worker drawing at once would restore
    each other's settings half-way through; the lock makes plots one at a time per process.
    """
    with _STYLE_LOCK, matplotlib.rc_context(STYLE):
        yield


def svg_uri(fig: Figure) -> str:
    buffer = io.BytesIO()
    with house_style():
        # No bbox_inches="tight": constrained layout already fits every label and legend inside
        # the figure (the layout test checks it), and the tight box would cost a second draw.
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode()


def no_data_figure(title: str, reason: str) -> Figure:
    """A small panel that says what is missing and what would fill it (never an empty axes)."""
    fig = new_figure(5.2, 1.1)
    ax = fig.add_subplot()
    ax.axis("off")
    ax.text(0.5, 0.62, f"{title}: no data", ha="center", va="center", fontsize=FONT + 1, color="#333333")
    ax.text(0.5, 0.22, reason, ha="center", va="center", fontsize=SMALL, color=MUTED, wrap=True)
    return fig


def stars(p: float | None) -> str | None:
    """The mark for a corrected p-value; None when the row was not tested."""
    if p is None:
        return None
    if p < 0.001:
        return "***"
    if p < 0.01:
        return "**"
    if p < 0.05:
        return "*"
    return "ns"


def correction_label(report: dict) -> str:
    correction = (report.get("profile_choices") or {}).get("correction") or "none"
    return "uncorrected p" if correction == "none" else f"{correction.capitalize()}-adjusted p"


def _luminance(rgb: tuple[float, ...]) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(fg: tuple[float, ...], bg: tuple[float, ...]) -> float:
    """WCAG 2 contrast ratio of two RGB(A) colours (alpha ignored), 1 to 21."""
    high, low = sorted((_luminance(fg[:3]), _luminance(bg[:3])), reverse=True)
    return (high + 0.05) / (low + 0.05)


def text_colour_on(bg: tuple[float, ...]) -> str:
    """Black or white, whichever reads better on ``bg``."""
    return "black" if contrast_ratio((0, 0, 0), bg) >= contrast_ratio((1, 1, 1), bg) else "white"


def subject_order(subjects: set[str]) -> list[str]:
    # Humans first, so they stand beside the judges they are compared with.
    return sorted(subjects, key=lambda s: (s != "humans", s))


def wrap_label(name: str) -> str:
    return name.replace("_", "\n")
