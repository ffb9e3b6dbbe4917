# SPDX-License-Identifier: GPL-2.0-only
"""What every figure of ``mcsim report`` is made of: a Panel (the plot as SVG, the numbers, the sweeps
behind it) and the Runs that fill it through the store (the plotting helpers every figure shares: mcsim.util.plots)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcsim.config.dpa import DEFAULT_PROFILE
from mcsim.reference.claims import QUICK_TOPOLOGY, TESTBED
from mcsim.sweep.spec import SweepSpec

if TYPE_CHECKING:
    pass

COLORS = {"ring": "#1f77b4", "mcast": "#d62728", "dpa": "#2ca02c", "authors": "#7f7f7f", "staging": "#9467bd"}


@dataclass(frozen=True, slots=True)
class Panel:
    """One figure of the report: the plot as SVG text, what it shows, and how to make it again."""

    id: str
    title: str
    caption: str
    svg: str  # an <svg> element (no XML prolog), to be placed inline in the page
    columns: tuple[str, ...]  # the numbers plotted, a row per point, units in the names
    rows: list[tuple[Any, ...]]
    specs: tuple[SweepSpec, ...] = ()  # the sweeps behind it: `mcsim sweep <name>.toml` re-runs each
    code: str = ""  # the closed form behind it, as Python to run
    notes: tuple[str, ...] = field(default=())  # runs that did not finish, and why


class Runs:
    """Runs the figures' sweeps into one store (stored runs are reused); ``profile``: the DPA profile of
    the closed forms (mcsim.config.dpa.PROFILES; the simulated DPA runs keep the default sharing)."""

    def __init__(self, store: Path, workers: int | None, profile: str = DEFAULT_PROFILE) -> None:
        self.store, self.workers, self.profile = store, workers, profile

    def __call__(self, spec: SweepSpec) -> tuple[list[dict[str, Any]], list[str]]:
        """(the runs that finished, in spec order; a line per run that did not, naming it and why)."""
        from mcsim.sweep import run_sweep

        done, untimed = run_sweep(spec, self.store, workers=self.workers, progress=False).timed_rows()
        return done, [f"{spec.name}: {line}" for line in untimed]


def topology_for(quick: bool) -> str:
    return QUICK_TOPOLOGY if quick else TESTBED


def rows_by(rows: Sequence[dict[str, Any]], *names: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {tuple(r[n] for n in names): r for r in rows}
