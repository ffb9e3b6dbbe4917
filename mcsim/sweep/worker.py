# SPDX-License-Identifier: GPL-2.0-only
"""A sweep worker: runs Tasks and gives their Outcomes, in this process (:func:`run_task`) or as a
long-lived process (``python -m mcsim.sweep.worker``) that an executor drives over a pipe.

The process loads the runtime once and runs many Tasks, so planning caches (routing tables per
topology, the loaded libraries) serve every run after the first. Its protocol, one JSON object per line
(:mod:`mcsim.sweep.wire`): it writes ``{"ready": {"pid", "host"}}`` once loaded, then reads
``{"task": ...}`` lines from stdin and answers each with one ``{"outcome": ...}`` line, flushed. The
protocol goes to a private copy of the original stdout; file descriptor 1 is pointed at stderr, so
nothing C++ or Python prints can corrupt it. End of stdin (or the parent gone) ends the process.
"""

from __future__ import annotations

import datetime
import faulthandler
import os
import resource
import signal
import socket
import sys
import threading
import time
import traceback
from typing import Any, BinaryIO

import numpy as np

from mcsim.errors import McsimError
from mcsim.sweep import wire
from mcsim.sweep.outcome import FAILED, OK, Outcome, Task, failed

TRACEBACK_LINES = 40  # an unexpected exception's error keeps at most this many traceback lines
PARENT_POLL_S = 1.0  # how often a worker process checks that its parent is still there


def utc_now() -> str:
    """The time now as ISO 8601 UTC, to the millisecond."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")


def peak_rss_b() -> int:
    """Peak resident memory of this process so far, in bytes (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run_task(task: Task) -> Outcome:
    """Run one Task in this process. Bad input (McsimError: a bad scenario, not enough memory) is a
    FAILED Outcome with its one line; an incomplete run is OK (``complete`` False in its metrics).
    Any other exception propagates (a bug keeps its traceback)."""
    started = utc_now()
    start_s = time.perf_counter()
    try:
        metrics, arrays = _run(task)
        status, error = OK, None
    except McsimError as exc:
        metrics, arrays, status, error = None, None, FAILED, str(exc).splitlines()[0] if str(exc) else repr(exc)
    wall_s = time.perf_counter() - start_s
    rss_b = peak_rss_b()
    if metrics is not None:
        metrics = {**metrics, "wall_s": wall_s, "peak_rss_b": rss_b}
    return Outcome(
        key=task.key,
        label=task.label,
        status=status,
        error=error,
        metrics=metrics,
        arrays=arrays,
        wall_s=wall_s,
        peak_rss_b=rss_b,
        host=socket.gethostname(),
        started=started,
        ended=utc_now(),
    )


def _run(task: Task) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The metrics and arrays of one run: its Scenario's (Result.record(), rank_arrays()), or its
    workload's (every job's figures and timeline, mcsim.sweep.workload_spec)."""
    if task.workload is None:
        from mcsim.runs.scenario import Scenario  # imported here: `import mcsim.sweep` loads no ns-3

        result = Scenario.from_dict(task.scenario).run()
        return result.record(), result.rank_arrays()
    from mcsim.runs.jobs import run_workload
    from mcsim.sweep import workload_spec  # a workload's run (its checks reach the runs)
    from mcsim.workloads.workload_file import workload_of

    jobs = run_workload(workload_of(task.workload, workload_spec.WHERE))
    return workload_spec.metrics_of(jobs), workload_spec.arrays_of(jobs)


def failed_by_exception(task: Task, exc: BaseException, started: str, wall_s: float) -> Outcome:
    """A run that raised something other than McsimError: FAILED, with the exception and the last
    TRACEBACK_LINES lines of its traceback (the worker process goes on with the next task)."""
    lines = "".join(traceback.format_exception(exc)).splitlines()
    error = "\n".join([f"the run raised {type(exc).__name__}: {exc}".splitlines()[0], *lines[-TRACEBACK_LINES:]])
    return failed(
        task, error, wall_s=wall_s, started=started, ended=utc_now(), host=socket.gethostname(), peak_rss_b=peak_rss_b()
    )


def _exit_when_orphaned(parent_pid: int) -> None:
    """Daemon thread: end the process when its parent is gone (e.g. a sweep killed with SIGKILL)."""
    while os.getppid() == parent_pid:
        time.sleep(PARENT_POLL_S)
    os._exit(1)


CRASH_SIGNALS = (signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL)


def _die_by_crash_signals() -> None:
    """A crash (C++ abort, segfault) ends the process by its signal, after Python's traceback on
    stderr: cppyy's handlers, where a test or a trace sink imported it, would run gdb for a stack trace
    and exit with 133."""
    for sig in CRASH_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
    faulthandler.enable()  # dumps the traceback, then re-raises with the default action


def _protocol_stream() -> BinaryIO:
    """A private copy of stdout for the protocol; fd 1 (and sys.stdout) then write to stderr."""
    sys.stdout.flush()
    protocol = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    return protocol


def serve(stdin: BinaryIO, protocol: BinaryIO) -> None:
    """Answer each task line of ``stdin`` with one outcome line on ``protocol`` until end of input."""
    protocol.write(wire.to_line({"ready": {"pid": os.getpid(), "host": socket.gethostname()}}))
    for line in stdin:
        if not line.strip():
            continue
        message = wire.from_line(line)
        if set(message) != {"task"}:
            raise McsimError(f"sweep worker: expected a {{task}} line, got keys {sorted(message)}")
        task = wire.task_from_dict(message["task"])
        started, start_s = utc_now(), time.perf_counter()
        try:
            outcome = run_task(task)
        except Exception as exc:  # a bug in one run: record it and go on with the next
            traceback.print_exc()
            outcome = failed_by_exception(task, exc, started, time.perf_counter() - start_s)
        protocol.write(wire.to_line({"outcome": wire.outcome_to_dict(outcome)}))


def main() -> int:
    """``python -m mcsim.sweep.worker``: load the runtime, then serve tasks from stdin."""
    protocol = _protocol_stream()
    threading.Thread(target=_exit_when_orphaned, args=(os.getppid(),), daemon=True).start()
    try:
        from mcsim.runs.assemble import load

        load()
        _die_by_crash_signals()
        serve(sys.stdin.buffer, protocol)
    except McsimError as exc:
        print(f"mcsim: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
