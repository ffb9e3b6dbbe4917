# SPDX-License-Identifier: GPL-2.0-only
"""The parent's side of one sweep worker process (``python -m mcsim.sweep.worker``, or a command
that wraps it): start it, hand it one Task at a time, read its Outcome, and turn its death or a
passed time limit into a FAILED Outcome with the tail of what it wrote to stderr during that run.

Both executors drive workers through this one class: the local pool many at once (through a
selector on :meth:`WorkerProcess.fileno`), a Dask task one at a time (:meth:`WorkerProcess.run`).
A worker runs in its own session (Ctrl-C reaches only the sweep, which then kills its workers) and
writes stderr to an unlinked temporary file, emptied when each task starts.
"""

from __future__ import annotations

import fcntl
import os
import select
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import IO, Any

from mcsim.errors import McsimError
from mcsim.sweep import wire
from mcsim.sweep.outcome import Outcome, Task, failed
from mcsim.sweep.worker import utc_now

STDERR_TAIL_LINES = 40  # a failed run's error keeps at most this many lines of the worker's stderr
STDERR_TAIL_B = 64 * 1024  # ... read from at most this many bytes at the end of it
READ_B = 1 << 20  # bytes per read of the worker's protocol pipe


def default_command() -> list[str]:
    """The worker command of this Python: ``[sys.executable, "-m", "mcsim.sweep.worker"]``."""
    return [sys.executable, "-m", "mcsim.sweep.worker"]


def exit_text(returncode: int) -> str:
    """``"signal 6, SIGABRT"`` for a process killed by a signal, else ``"exit code N"``."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
        return f"signal {-returncode}, {name}"
    return f"exit code {returncode}"


def seconds_text(seconds: float) -> str:
    return f"{seconds:g} s"


class WorkerProcess:
    """One worker subprocess and the Task it is running (None when idle).

    Raises McsimError (one line) if the command cannot start, or ends before it is ready.
    """

    def __init__(self, command: Sequence[str]) -> None:
        self.command = list(command)
        self.task: Task | None = None
        self.dead = False  # it ended or was killed: close it and start another
        self._buffer = bytearray()
        self._started = ""
        self._start_s = 0.0
        self._deadline_s: float | None = None
        self._time_limit_s: float | None = None
        self._stderr = tempfile.TemporaryFile(prefix="mcsim-worker-")  # unlinked: nothing left behind
        fd = self._stderr.fileno()  # append mode, so emptying it at each task start works while it writes
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)
        try:
            self._proc = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                start_new_session=True,
            )
        except OSError as exc:
            self._stderr.close()
            raise McsimError(f"sweep: cannot start the worker command {shlex.join(self.command)}: {exc}") from None
        self._stdin: IO[bytes] = self._proc.stdin  # type: ignore[assignment]
        self._stdout: IO[bytes] = self._proc.stdout  # type: ignore[assignment]
        self.pid = self._proc.pid
        self._ready = False

    # -----------------------------------------------------------------------------------------
    # starting

    def wait_ready(self) -> None:
        """Block until the worker has loaded the runtime and said so; McsimError if it ends first."""
        while not self._ready:
            try:
                message = self._next_message()
            except McsimError as exc:  # a wrapper that printed to stdout before the worker took it over
                self.close()
                raise McsimError(
                    f"sweep: the worker command {shlex.join(self.command)} wrote to stdout before its ready "
                    f"line; a wrapper must print nothing there ({exc})"
                ) from None
            if message is None:
                tail = self._stderr_tail()
                self.close()
                last = tail[-1] if tail else "nothing on stderr"
                raise McsimError(
                    f"sweep: the worker command {shlex.join(self.command)} ended before it was ready "
                    f"({exit_text(self._proc.returncode)}): {last}"
                )
            if set(message) != {"ready"}:
                self.close()
                raise McsimError(
                    f"sweep: the worker command {shlex.join(self.command)} began with {sorted(message)}, "
                    "not a ready line"
                )
            self._ready = True

    # -----------------------------------------------------------------------------------------
    # one task

    def alive(self) -> bool:
        """The process still runs (an idle worker may have been killed since, e.g. by the OOM killer)."""
        return not self.dead and self._proc.poll() is None

    def fileno(self) -> int:
        """The protocol pipe, for a selector: readable when an Outcome (or the worker's end) is there."""
        return self._stdout.fileno()

    def send(self, task: Task, time_limit_s: float | None = None) -> None:
        """Hand the idle, ready worker one Task; its Outcome comes from :meth:`on_readable`."""
        if self.task is not None or not self._ready:
            raise RuntimeError(f"worker {self.pid} is not idle and ready")
        self._stderr.truncate(0)
        self.task, self._started, self._start_s = task, utc_now(), time.perf_counter()
        self._time_limit_s = time_limit_s
        self._deadline_s = None if time_limit_s is None else self._start_s + time_limit_s
        try:
            self._stdin.write(wire.to_line({"task": wire.task_to_dict(task)}))
            self._stdin.flush()
        except BrokenPipeError:
            pass  # it died: reading its pipe finds the end and reports it

    def seconds_left(self) -> float | None:
        """Until the running task passes its time limit (<= 0: it has); None without a limit or task."""
        if self.task is None or self._deadline_s is None:
            return None
        return self._deadline_s - time.perf_counter()

    def on_readable(self) -> Outcome | None:
        """Read what the pipe has: the task's Outcome once its line is complete; a FAILED Outcome if
        the worker died while running it. None: nothing complete yet, or an idle worker ended (dead)."""
        try:
            message = self._next_message(block=False)
        except McsimError as exc:
            return self._fail(f"worker process sent a line that is not an outcome ({exc})")
        if message is None:
            if not self.dead or self.task is None:
                return None
            return self._failed(f"worker process died ({exit_text(self._proc.returncode)}) while running it")
        if set(message) != {"outcome"}:
            return self._fail(f"worker process sent {sorted(message)}, not an outcome")
        try:
            outcome = wire.outcome_from_dict(message["outcome"])
        except McsimError as exc:
            return self._fail(f"worker process sent a bad outcome ({exc})")
        if self.task is None or outcome.key != self.task.key:
            return self._fail(f"worker process sent an outcome for key {outcome.key!r}, not its task's")
        self.task = None
        return outcome

    def time_out(self) -> Outcome:
        """Kill the worker whose task passed its time limit; the task's FAILED Outcome."""
        self.kill()
        return self._failed(f"passed its time limit of {seconds_text(self._time_limit_s or 0.0)}")

    def run(self, task: Task, time_limit_s: float | None = None) -> Outcome:
        """Run one Task and wait for its Outcome (FAILED if the worker dies or the limit passes)."""
        self.send(task, time_limit_s)
        while True:
            left = self.seconds_left()
            if left is not None and left <= 0:
                return self.time_out()
            readable, _, _ = select.select([self], [], [], left)
            if readable and (outcome := self.on_readable()) is not None:
                return outcome

    # -----------------------------------------------------------------------------------------
    # ending

    def kill(self) -> None:
        """SIGKILL the worker's whole process group (a wrapper, the Python it started, anything left
        of them) unless already reaped, and reap it."""
        if self._proc.returncode is None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._proc.wait()
        self.dead = True

    def close(self) -> None:
        """Kill the worker if it still runs and release its pipes and stderr file."""
        self.kill()
        for stream in (self._stdin, self._stdout, self._stderr):
            try:
                stream.close()
            except OSError:  # a pipe whose reader died cannot flush: nothing to keep
                pass

    def __enter__(self) -> WorkerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -----------------------------------------------------------------------------------------
    # inside

    def _next_message(self, block: bool = True) -> dict[str, Any] | None:
        """The next protocol message; None when the pipe ended (then the worker is reaped and dead)
        or, with ``block`` False, when no whole line is there yet."""
        while b"\n" not in self._buffer:
            if not block and not select.select([self._stdout], [], [], 0)[0]:
                return None
            chunk = os.read(self._stdout.fileno(), READ_B)
            if not chunk:
                self.kill()  # it ended: reap it, and end anything it left in its group
                return None
            self._buffer += chunk
        line, _, rest = bytes(self._buffer).partition(b"\n")
        self._buffer = bytearray(rest)
        return wire.from_line(line)

    def _fail(self, why: str) -> Outcome | None:
        """The worker broke the protocol: kill it; its task (if any) failed."""
        self.kill()
        return self._failed(why) if self.task is not None else None

    def _failed(self, why: str) -> Outcome:
        assert self.task is not None
        task, self.task = self.task, None
        return failed(
            task,
            "\n".join([why, *self._stderr_tail()]),
            wall_s=time.perf_counter() - self._start_s,
            started=self._started,
            ended=utc_now(),
            host=socket.gethostname(),
        )

    def _stderr_tail(self) -> list[str]:
        """The last STDERR_TAIL_LINES non-blank lines the worker wrote to stderr during this task."""
        fd = self._stderr.fileno()
        size = os.fstat(fd).st_size
        text = os.pread(fd, STDERR_TAIL_B, max(0, size - STDERR_TAIL_B)).decode(errors="replace")
        lines = [line.rstrip() for line in text.splitlines() if line.strip()]
        return lines[-STDERR_TAIL_LINES:]
