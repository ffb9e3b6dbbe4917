# SPDX-License-Identifier: GPL-2.0-only
"""Executors: where a sweep's runs happen. One interface (:class:`Executor`), two places: a pool of
local worker processes (:class:`LocalPool`, the default) and a Dask cluster (:class:`DaskExecutor`).

Every run is isolated in a worker process (:class:`~mcsim.sweep.process.WorkerProcess`): a run that
crashes it (C++ abort, segfault, out of memory) or passes the time limit is a FAILED Outcome with
the tail of its stderr, a new worker takes its place and the sweep goes on.
"""

from __future__ import annotations

import atexit
import os
import selectors
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from mcsim.errors import McsimError, require_positive
from mcsim.sweep import wire
from mcsim.sweep.outcome import Outcome, Task, failed
from mcsim.sweep.process import WorkerProcess, default_command
from mcsim.sweep.worker import utc_now
from mcsim.util.interrupts import interrupt_held
from mcsim.util.machine import check_workers


class Executor(Protocol):
    def run(self, tasks: Sequence[Task], on_start: Callable[[Task], None] | None = None) -> Iterator[Outcome]:
        """Yield each task's Outcome as soon as its run ends (any order), exactly one per task.
        ``on_start(task)`` is called when the task is handed out. Closing the iterator early stops
        every run still going."""
        ...


def _check_limit(where: str, time_limit_s: float | None) -> None:
    if time_limit_s is not None:
        require_positive(where, time_limit_s=time_limit_s)


class LocalPool:
    """N long-lived worker processes on this machine, one run each at a time.

    ``workers``: how many (None: ``os.cpu_count()``). ``time_limit_s``: a run still going after this
    long is killed and FAILED. ``command``: the worker command, by default
    ``[sys.executable, "-m", "mcsim.sweep.worker"]``; a wrapper (``["nice", "-n", "10", ...]``,
    ``numactl``) must end up running that module with the same stdin and stdout.
    """

    def __init__(
        self,
        workers: int | None = None,
        time_limit_s: float | None = None,
        command: Sequence[str] | None = None,
    ) -> None:
        count = (os.cpu_count() or 1) if workers is None else workers
        self.workers = check_workers("LocalPool", "workers", count)
        _check_limit("LocalPool", time_limit_s)
        self.time_limit_s = time_limit_s
        self.command = default_command() if command is None else list(command)
        if not self.command:
            raise McsimError("LocalPool: command=[] is empty; give the worker command and its arguments")

    def run(self, tasks: Sequence[Task], on_start: Callable[[Task], None] | None = None) -> Iterator[Outcome]:
        queue = deque(tasks)
        if not queue:
            return
        procs: list[WorkerProcess] = []
        try:
            for _ in range(min(self.workers, len(queue))):
                with interrupt_held():  # a Ctrl-C while it starts: once it is in procs (the finally ends it)
                    procs.append(WorkerProcess(self.command))
            for proc in procs:
                proc.wait_ready()
            with selectors.DefaultSelector() as selector:
                for proc in procs:
                    selector.register(proc, selectors.EVENT_READ)
                while True:
                    for proc in procs:
                        if proc.task is None and queue:
                            task = queue.popleft()
                            if on_start is not None:
                                on_start(task)
                            proc.send(task, self.time_limit_s)
                    busy = [proc for proc in procs if proc.task is not None]
                    if not busy:
                        return
                    lefts = [left for proc in busy if (left := proc.seconds_left()) is not None]
                    events = selector.select(max(0.0, min(lefts)) if lefts else None)
                    outcomes = [o for key, _ in events if (o := key.fileobj.on_readable()) is not None]  # type: ignore[union-attr]
                    for proc in busy:
                        left = proc.seconds_left()
                        if left is not None and left <= 0:
                            outcomes.append(proc.time_out())
                    yield from outcomes
                    for i, proc in enumerate(procs):
                        if proc.dead:
                            selector.unregister(proc)
                            proc.close()
                            with interrupt_held():
                                procs[i] = WorkerProcess(self.command)
                            procs[i].wait_ready()
                            selector.register(procs[i], selectors.EVENT_READ)
        finally:
            for proc in procs:
                proc.close()


# -------------------------------------------------------------------------------------------------
# Dask


class DaskExecutor:
    """Runs on a Dask cluster through ``client`` (a ``distributed.Client``).

    Each task is one ``client.submit(..., pure=False)``; on the Dask worker it drives a worker
    subprocess kept per Dask worker process (one per concurrently running task), so a run that
    crashes kills only that subprocess, not the Dask worker. Outcomes cross as JSON-able dicts
    (:mod:`mcsim.sweep.wire`). ``on_start`` is called when a task is submitted, not when a Dask
    worker begins it: every submitted task counts as running. ``command`` (None: the Dask worker's
    own ``python -m mcsim.sweep.worker``) as for :class:`LocalPool`. Closing the iterator early
    cancels the tasks not yet finished (a run already going ends on its own, its Outcome unread).
    """

    def __init__(self, client: Any, time_limit_s: float | None = None, command: Sequence[str] | None = None) -> None:
        _check_limit("DaskExecutor", time_limit_s)
        self.client = client
        self.time_limit_s = time_limit_s
        self.command = None if command is None else list(command)

    def run(self, tasks: Sequence[Task], on_start: Callable[[Task], None] | None = None) -> Iterator[Outcome]:
        from distributed import as_completed

        futures: dict[Any, Task] = {}
        try:
            for task in tasks:
                if on_start is not None:
                    on_start(task)
                future = self.client.submit(
                    run_in_worker_process, wire.task_to_dict(task), self.time_limit_s, self.command, pure=False
                )
                futures[future] = task
            for future in as_completed(list(futures)):
                task = futures.pop(future)
                try:
                    outcome = wire.outcome_from_dict(future.result())
                except McsimError as exc:
                    outcome = dask_failed(task, f"on Dask: {exc}")
                except Exception as exc:  # a lost Dask worker, or the task's own error on it
                    outcome = dask_failed(task, f"on Dask: {type(exc).__name__}: {exc}")
                yield outcome
        finally:
            if futures:
                self.client.cancel(list(futures))


def dask_failed(task: Task, why: str) -> Outcome:
    """A task whose Dask future failed (the run's own worker process could not give an Outcome)."""
    now = utc_now()
    error = why.splitlines()[0] if why else why
    return failed(task, error, wall_s=0.0, started=now, ended=now, host="")  # host: the Dask worker did not answer


# On a Dask worker: the idle worker subprocesses of this process, by command.
_IDLE: dict[tuple[str, ...], list[WorkerProcess]] = {}
_IDLE_LOCK = threading.Lock()


def run_in_worker_process(
    task: dict[str, Any], time_limit_s: float | None, command: list[str] | None
) -> dict[str, Any]:
    """Runs on a Dask worker: one task on an idle worker subprocess of this process (a new one if none
    is idle); the Outcome as a JSON-able dict. A subprocess that died or was killed is not kept."""
    argv = tuple(default_command() if command is None else command)
    proc = None
    with _IDLE_LOCK:
        idle = _IDLE.setdefault(argv, [])
        while idle and proc is None:
            proc = idle.pop()
            if not proc.alive():
                proc.close()
                proc = None
    if proc is None:
        proc = WorkerProcess(argv)
        try:
            proc.wait_ready()
        except BaseException:
            proc.close()
            raise
    try:
        outcome = proc.run(wire.task_from_dict(task), time_limit_s)
    except BaseException:
        proc.close()
        raise
    if proc.dead:
        proc.close()
    else:
        with _IDLE_LOCK:
            _IDLE[argv].append(proc)
    return wire.outcome_to_dict(outcome)


@atexit.register
def _close_idle() -> None:
    with _IDLE_LOCK:
        for procs in _IDLE.values():
            for proc in procs:
                proc.close()
        _IDLE.clear()
