# SPDX-License-Identifier: GPL-2.0-only
"""The report's page: one self-contained HTML page of the figures (mcsim.report.figures) and the
compare table (mcsim.reference.compare), with the numbers and the re-run recipe of every figure.

The page needs nothing from the network: the figures are inline SVG, the style is in the page, and
there is no script. Its runs go through the sweep store, so a second report reuses them.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mcsim
from mcsim.errors import McsimError
from mcsim.output import write_atomic
from mcsim.reference.compare import DEFAULT_STORE, VERDICTS, compare
from mcsim.report.figures import Panel, panels

TEMPLATE = "report.html.j2"
DEFAULT_OUT = Path("report.html")


def _environment() -> Any:
    try:
        import jinja2
    except ModuleNotFoundError:
        raise McsimError("mcsim report needs matplotlib and jinja2: pip install 'mcsim[report]'") from None
    return jinja2.Environment(
        loader=jinja2.PackageLoader("mcsim.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


def render(figures: Sequence[Panel], compare_rows: Sequence[Any], *, quick: bool, store: Path) -> str:
    """The page's HTML text."""
    return (
        _environment()
        .get_template(TEMPLATE)
        .render(
            figures=figures,
            claims=[dataclasses.asdict(r) for r in compare_rows],
            verdicts=VERDICTS,
            quick=quick,
            store=str(store),
            version=mcsim.__version__,
            made=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            mode="--quick (fat-tree-k4, 16 ranks)" if quick else "full (testbed-188, 188 ranks)",
        )
    )


def report(
    out: str | os.PathLike[str] = DEFAULT_OUT,
    *,
    store: str | os.PathLike[str] = DEFAULT_STORE,
    quick: bool = False,
    workers: int | None = None,
    figures: Sequence[str] | None = None,
) -> Path:
    """Make the figures and the compare table (running, or reusing from ``store``, what they need) and
    write the page to ``out`` atomically; returns ``out``."""
    out, store = Path(out), Path(store)
    if not out.parent.is_dir():
        raise McsimError(f"report: folder {str(out.parent)!r} of {str(out)!r} does not exist")
    _environment()  # fail on a missing extra before anything runs
    made = panels(quick, store, workers, figures)
    rows = compare(quick=quick, store=store, workers=workers)
    write_atomic(out, render(made, rows, quick=quick, store=store))
    return out
