# SPDX-License-Identifier: GPL-2.0-only
"""What a claim's evaluator works with (mcsim.reference.compare.EVALUATORS): the Context it is given, the Measure it
returns, and its runs' rows (sweep_rows: through mcsim.sweep, stored ones reused)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcsim.config.dpa import DEFAULT_PROFILE
from mcsim.errors import McsimError
from mcsim.reference.claim import Claim
from mcsim.units import format_rate

if TYPE_CHECKING:
    from mcsim.config.dpa import DpaConfig


@dataclass(frozen=True, slots=True)
class Measure:
    """What an evaluator found: the value compared with the claim's, as text, and why."""

    simulated: str
    value: float | None  # in the claim's unit; None: none could be had (the reason says why)
    reason: str
    brief: str = ""  # the value in a few words, for a conditional claim's condition ("22 threads")


@dataclass(frozen=True, slots=True)
class Context:
    """What every evaluator may use: the mode, the store and workers of its runs, the DPA profile of
    the closed forms (a name in mcsim.config.dpa.PROFILES)."""

    quick: bool
    store: Path
    workers: int | None
    profile: str = DEFAULT_PROFILE

    def dpa(self) -> DpaConfig:
        from mcsim.config import dpa

        return dpa.profile(self.profile)


def sweep_rows(claim: Claim, ctx: Context) -> list[dict[str, Any]]:
    """The claim's runs (mcsim.sweep.run_sweep: stored ones are reused), in spec order, all ended complete."""
    from mcsim.sweep import run_sweep

    spec = claim.spec(ctx.quick)
    if spec is None:
        raise McsimError(f"claim {claim.id!r} has no runs in {'quick' if ctx.quick else 'full'} mode")
    rows, untimed = run_sweep(spec, ctx.store, workers=ctx.workers, progress=False).timed_rows()
    if untimed:
        raise McsimError(f"claim {claim.id!r}: run {untimed[0]}")
    return rows


def by_algorithm(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["algorithm"]: r for r in rows}


def where(rows: list[dict[str, Any]]) -> str:
    r = rows[0]
    return f"P={r['ranks']}, {r['bytes_per_rank_b'] // 1024} KiB/rank, {format_rate(r['data_rate_bps'])} data rate"
