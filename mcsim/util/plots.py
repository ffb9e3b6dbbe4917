# SPDX-License-Identifier: GPL-2.0-only
"""The plotting helpers every figure shares (the report's panels, a workload's timeline): a new figure with
mcsim's grid, and a figure as an inline <svg> element that is the same for the same figure. matplotlib is
imported inside each (the ``report`` extra): importing this module needs nothing beyond the core install."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure


def svg_of(fig: MplFigure) -> str:
    """The figure as an inline <svg> element: text kept as text, ids salted for repeatable output."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "mcsim-report"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    return text[text.index("<svg") :]


def new_figure(width_in: float = 7.5, height_in: float = 4.2) -> tuple[MplFigure, Axes]:
    """A figure of ``width_in`` x ``height_in`` inches (constrained layout) and its one Axes, major grid on."""
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(width_in, height_in), layout="constrained")
    ax = fig.add_subplot()
    ax.grid(True, which="major", alpha=0.3)
    return fig, ax
