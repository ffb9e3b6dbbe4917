# SPDX-License-Identifier: GPL-2.0-only
"""A sweep's progress on stderr: runs done (those already in the store count from the start), how
many are ok, incomplete (some rank never finished) and failed, how many are running, and an ETA. A
tqdm bar on a terminal; otherwise one plain line per finished run, for logs and batch jobs::

    [12/72] ok rate=56Gbps algorithm=ring 2.1 s | ok 10, incomplete 1, failed 1, running 2, ETA 1m40s
    [13/72] INCOMPLETE loss=0.2 seed=1 0.1 s: 6 of 16 ranks did not finish | ok 10, incomplete 2, ...
    [14/72] INCOMPLETE rate=1Mbps 0.3 s: job 'train': step 0 (AG F0): ranks 0, 1, 2, 3 of 4 did not ... | ...
    [15/72] FAILED rate=1.6Tbps algorithm=ring 0.4 s: worker process died (signal 6, SIGABRT) ... | ...

The ETA is the runs still to do times the mean time between finished runs of this session (so it
counts every worker), unknown (``?``) until one has finished.
"""

from __future__ import annotations

import sys
from time import monotonic
from typing import Any, TextIO

from mcsim.errors import require_int
from mcsim.sweep.outcome import FAILED, INCOMPLETE, OK, Outcome, Task, state, why_incomplete


def eta_text(seconds: float | None) -> str:
    """``"45s"``, ``"1m40s"``, ``"2h05m"``; ``"?"`` when unknown."""
    if seconds is None:
        return "?"
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Progress:
    """Counts a sweep's runs as they start and finish and shows them on ``stream`` (None: stderr).

    A context manager: leaving it closes the bar. ``stored``: runs of the sweep already in the store,
    counted as done from the start (they are not run again); ``stored_incomplete`` and
    ``stored_failed`` of them are incomplete and failed, the others ok.
    """

    def __init__(
        self,
        total: int,
        stored: int = 0,
        stream: TextIO | None = None,
        *,
        stored_incomplete: int = 0,
        stored_failed: int = 0,
    ) -> None:
        self.total = require_int("Progress", "total", total, lo=0)
        self.stored = require_int("Progress", "stored", stored, lo=0, hi=self.total)
        self.incomplete = require_int("Progress", "stored_incomplete", stored_incomplete, lo=0, hi=self.stored)
        self.failed = require_int("Progress", "stored_failed", stored_failed, lo=0, hi=self.stored - self.incomplete)
        self.ok = self.stored - self.incomplete - self.failed
        self.stream: TextIO = sys.stderr if stream is None else stream
        self.done = self.stored
        self.running = 0
        self._start_s = monotonic()
        self._bar: Any = None
        if self.stream.isatty():
            from tqdm import tqdm  # type: ignore[import-untyped]

            self._bar = tqdm(total=self.total, initial=self.stored, file=self.stream, unit="run", dynamic_ncols=True)
            self._bar.set_postfix_str(self._counts(), refresh=True)

    def eta_s(self) -> float | None:
        """Seconds until every run is done, at this session's pace so far; None before the first."""
        finished_here = self.done - self.stored
        left = self.total - self.done
        if left == 0:
            return 0.0
        if finished_here == 0:
            return None
        return (monotonic() - self._start_s) / finished_here * left

    def started(self, task: Task) -> None:
        self.running += 1
        if self._bar is not None:
            self._bar.set_postfix_str(self._counts())

    def finished(self, outcome: Outcome) -> None:
        self.running = max(0, self.running - 1)
        self.done += 1
        what = state(outcome.status, outcome.metrics)
        self.ok += what == OK
        self.incomplete += what == INCOMPLETE
        self.failed += what == FAILED
        text = f"{outcome.label} {outcome.wall_s:.1f} s"
        if what == FAILED:
            text += f": {first_line(outcome.error)}"
        elif what == INCOMPLETE:
            m = outcome.metrics or {}
            ranks = f"{m.get('unfinished_ranks', '?')} of {m.get('ranks', '?')} ranks did not finish"
            text += f": {why_incomplete(m) or ranks}"  # a workload's: its jobs, each with why
        status = what if what == OK else what.upper()
        if self._bar is None:
            line = f"[{self.done}/{self.total}] {status} {text} | {self._counts()}, ETA {eta_text(self.eta_s())}"
            print(line, file=self.stream, flush=True)
            return
        if what != OK:
            self._bar.write(f"{status} {text}", file=self.stream)
        self._bar.set_postfix_str(self._counts(), refresh=False)
        self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _counts(self) -> str:
        return f"ok {self.ok}, incomplete {self.incomplete}, failed {self.failed}, running {self.running}"


def first_line(text: str | None) -> str:
    return (text or "").splitlines()[0] if text else "no error text"
