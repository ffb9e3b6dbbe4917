# SPDX-License-Identifier: GPL-2.0-only
"""Run a simulation in slices of wall-clock time: progress on stderr, and Ctrl-C within a second.

C++ runs the events (ns3::mcsim::RunControl::RunFor): the scheduler looks at the wall clock every
few thousand events and stops the slice when its time is up, so Python regains control a few
times a second without any per-event callback, and the events run in the same order as in one
Simulator::Run() (the results do not depend on the slicing). Between slices Python notices Ctrl-C
(raising :class:`mcsim.errors.Interrupted` with how far the run got) and, for runs longer than a
few seconds, shows a progress line: simulated time, events, and packets delivered; when the caller
told what the run is measured against (:func:`against_bound`: a collective's bound, known before it
runs), the share of that bound simulated so far and the wall time left if the run ends at it (an
estimate: runs take longer than their bound, lossy ones much longer).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from mcsim.errors import Interrupted

SLICE_S = 0.2  # wall-clock seconds per slice: Ctrl-C is noticed within about this long
QUIET_S = 3.0  # no progress line for runs shorter than this
LOG_EVERY_S = 30.0  # when stderr is not a terminal: one progress line this often


@dataclass(frozen=True, slots=True)
class RunRecord:
    """What one completed :func:`run_to_end` cost: when it started (``time.monotonic()``, seconds), the
    wall seconds it took (Simulator::Run() alone, no planning or reading results), the events it ran
    and the process's CPU seconds meanwhile (``time.process_time()``: on a shared machine, steadier
    than the wall clock)."""

    started_s: float
    wall_s: float
    events: int
    cpu_s: float = 0.0


_last: RunRecord | None = None
_bound_ps: float | None = None  # what the runs under against_bound() are measured against (None: nothing)


@contextmanager
def against_bound(bound_ps: float | None) -> Iterator[None]:
    """Within the block, the progress line of a run also shows the share of ``bound_ps`` (simulated ps: a
    collective's bound, Result.bound_ps, known before the run) simulated so far and an ETA if the run ends
    at its bound. None, or not positive and finite: no share."""
    global _bound_ps
    saved, _bound_ps = _bound_ps, bound_ps if bound_ps is not None and 0 < bound_ps < float("inf") else None
    try:
        yield
    finally:
        _bound_ps = saved


def last_run() -> RunRecord | None:
    """The process's last completed run (None before one completes): how benchmarks time the
    simulation inside a Scenario.run()."""
    return _last


def _progress_enabled() -> bool:
    """Progress lines unless MCSIM_PROGRESS=0, or the process has no stderr (closed: ``2>&-``)."""
    return os.environ.get("MCSIM_PROGRESS", "1") != "0" and sys.stderr is not None


def run_to_end(lib: Any, packets: Callable[[], int] | None = None) -> None:
    """Run the current simulation until no event is left.

    ``packets()``, if given, counts the packets delivered so far (a bulk read of C++ counters) for
    the progress line. Ctrl-C raises Interrupted (a KeyboardInterrupt) after the slice ends. A run
    that completes is recorded (:func:`last_run`).
    """
    global _last
    start, cpu0 = time.monotonic(), time.process_time()
    events0 = lib.mcsim_events_run()
    tty = sys.stderr is not None and sys.stderr.isatty()
    shown = 0.0  # when the last progress line was shown
    try:
        while not lib.mcsim_run_for(SLICE_S):
            elapsed = time.monotonic() - start
            if _progress_enabled() and elapsed >= QUIET_S and (tty or elapsed - shown >= LOG_EVERY_S):
                line = _state(lib, events0, elapsed, packets)
                sys.stderr.write(f"\rmcsim: {line}\033[K" if tty else f"mcsim: {line}\n")
                sys.stderr.flush()
                shown = elapsed
    except KeyboardInterrupt:
        line = _state(lib, events0, time.monotonic() - start, packets)
        raise Interrupted(f"interrupted: {line}") from None
    else:
        _last = RunRecord(start, time.monotonic() - start, lib.mcsim_events_run() - events0, time.process_time() - cpu0)
    finally:
        if tty and shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def share_text(now_ps: float, bound_ps: float | None, elapsed_s: float) -> str:
    """`` (41 % of the bound 30.000 us, about 6 s left if it ends there)`` after the simulated time; past
    the bound, ``(150 % of the bound 30.000 us: past it)``; nothing without a bound or before any time passed."""
    if bound_ps is None or now_ps <= 0:
        return ""
    share = now_ps / bound_ps
    head = f" ({share:.0%} of the bound {bound_ps / 1e6:.3f} us"
    if share >= 1:
        return f"{head}: past it)"
    return f"{head}, about {elapsed_s * (1 / share - 1):.0f} s left if it ends there)"


def _state(lib: Any, events0: int, elapsed: float, packets: Callable[[], int] | None) -> str:
    events = lib.mcsim_events_run() - events0
    now_ps = lib.mcsim_now_ps()
    text = (
        f"simulated {now_ps / 1e6:.3f} us{share_text(now_ps, _bound_ps, elapsed)} in {elapsed:.1f} s, "
        f"{events / 1e6:.2f} M events ({events / max(elapsed, 1e-9) / 1e6:.2f} M/s)"
    )
    if packets is not None:
        text += f", {packets() / 1e6:.2f} M packets delivered"
    return text
