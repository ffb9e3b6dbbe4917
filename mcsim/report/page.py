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
from mcsim.reference.claims import select
from mcsim.reference.compare import (
    DEFAULT_PROFILE,
    DEFAULT_STORE,
    VERDICTS,
    Progress,
    check_options,
    compare,
    counts,
    verdict_text,
)
from mcsim.report.figures import Panel, check_figures, panels
from mcsim.util.output import check_writable, write_atomic

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


def render(
    figures: Sequence[Panel], compare_rows: Sequence[Any], *, quick: bool, store: Path, profile: str = DEFAULT_PROFILE
) -> str:
    """The page's HTML text."""
    return (
        _environment()
        .get_template(TEMPLATE)
        .render(
            figures=figures,
            claims=[dataclasses.asdict(r) | {"shown": verdict_text(r)} for r in compare_rows],
            verdicts=VERDICTS,
            counts=counts(compare_rows),
            profile=profile,
            default_profile=DEFAULT_PROFILE,
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
    profile: str = DEFAULT_PROFILE,
    progress: Progress | None = None,
) -> Path:
    """Make the figures and the compare table (running, or reusing from ``store``, what they need; the
    DPA closed forms under ``profile``) and write the page to ``out`` atomically; returns ``out``.
    Every input and output is checked before anything runs; ``progress``: a line per figure and claim."""
    out = check_writable(out, "report: out")
    store = check_writable(store, "report: store")
    if out.resolve() == store.resolve():
        raise McsimError(f"report: out={str(out)!r} is the store; the page would overwrite the runs")
    check_figures(figures)
    check_options(select(None, quick=quick), store=store, workers=workers, profile=profile, where="report")
    _environment()  # fail on a missing extra before anything runs
    made = panels(quick, store, workers, figures, profile=profile, progress=progress)
    rows = compare(quick=quick, store=store, workers=workers, profile=profile, progress=progress)
    write_atomic(out, render(made, rows, quick=quick, store=store, profile=profile))
    return out
