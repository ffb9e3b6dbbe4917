# SPDX-License-Identifier: GPL-2.0-only
"""What passes between a sweep's planner, its executors and its store: a Task (one run to do) and its
Outcome (what the run gave, or why it failed). Plain data; JSON types except the per-rank arrays."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

OK = "ok"
FAILED = "failed"
STATUSES = (OK, FAILED)  # what the store's status column holds
# what a stored run is, as read back: OK (complete), INCOMPLETE (stored OK, but some rank never finished:
# its metrics say COMPLETE False), FAILED, or CORRUPT (a row whose data cannot be read: run it again)
INCOMPLETE = "incomplete"
CORRUPT = "corrupt"
COMPLETE = "complete"  # the metric (Result.record()) that says every rank finished
COMPLETE_METRICS = (COMPLETE, "concurrent_complete")  # ... and the overlapped collective's (Scenario.overlap)
# a workload run's metric per job, "<job>.why_incomplete": why the job did not finish (JobResult.summary)
WHY_INCOMPLETE = "why_incomplete"


@dataclass(frozen=True, slots=True)
class Task:
    """One run of a sweep, as the planner hands it to an executor."""

    key: str  # the run's store key: Scenario content + what changes results (versions, C++ build)
    label: str  # "rate=56Gbps bytes_per_rank=64KiB algorithm=ring": the axis values as written
    scenario: dict[str, Any] | None  # Scenario.to_dict(); None for a workload's run
    workload: dict[str, Any] | None = None  # a sweep over a workload: the run's workload (a workload file's data)


@dataclass(frozen=True, slots=True)
class Outcome:
    """One finished run: its metrics and per-rank arrays, or why it failed."""

    key: str
    label: str
    status: str  # OK or FAILED
    error: str | None  # FAILED: one line, then the tail of the worker's stderr
    metrics: dict[str, Any] | None  # OK: Result.record() (flat, units in the names)
    arrays: dict[str, np.ndarray] | None  # OK: Result.rank_arrays() (per rank, numeric)
    wall_s: float  # wall time of the run in its worker
    peak_rss_b: int | None  # peak resident memory of the worker process after the run
    host: str  # the worker's host name
    started: str  # ISO 8601 UTC: when the worker started the run
    ended: str  # ISO 8601 UTC: when it ended (or was found dead)


def state(status: str, metrics: dict[str, Any] | None) -> str:
    """OK, INCOMPLETE or FAILED: a run's state from its status and metrics. An OK run is INCOMPLETE
    when a metric of COMPLETE_METRICS is false (a metric it lacks does not count)."""
    if status != OK:
        return FAILED
    done = metrics is None or all(metrics.get(name, True) is not False for name in COMPLETE_METRICS)
    return OK if done else INCOMPLETE


def failed(
    task: Task, error: str, *, wall_s: float, started: str, ended: str, host: str, peak_rss_b: int | None = None
) -> Outcome:
    """A FAILED Outcome of ``task``: why, and no metrics or arrays."""
    return Outcome(
        key=task.key,
        label=task.label,
        status=FAILED,
        error=error,
        metrics=None,
        arrays=None,
        wall_s=wall_s,
        peak_rss_b=peak_rss_b,
        host=host,
        started=started,
        ended=ended,
    )


def why_incomplete(metrics: dict[str, Any]) -> str | None:
    """An incomplete workload run's jobs, each with why it did not finish (``job 'a': step 3 (AG F1): ...``),
    from its ``<job>.why_incomplete`` metrics; None for a Scenario's run (or a workload's stored without them)."""
    suffix = f".{WHY_INCOMPLETE}"
    whys = [f"job {k.removesuffix(suffix)!r}: {v}" for k, v in metrics.items() if k.endswith(suffix) and v]
    return "; ".join(whys) or None
