# SPDX-License-Identifier: GPL-2.0-only
"""Ctrl-C later in ``mcsim sweep`` than its first half second (tests/test_cli_environment.py has that): while its
runs execute, in a fresh process started as a user's shell starts one. One line, exit 130; the runs that ended
before it stay stored and intact, the run it stopped is not stored, and no worker process is left (not even one
whose start it interrupted)."""

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcsim.sweep import process
from mcsim.sweep.executors import LocalPool
from mcsim.sweep.outcome import Task
from mcsim.sweep.store import show_rows

# a run no machine ends within the test: 1.5e8 packets (Scenario.estimate()), ~35 s here at 4 M packets/s
LONG = "1GiB"
QUICK = ("4KiB", "8KiB")  # ~0.1 s each
SPEC = 'name = "ctrl-c"\n[base]\ntopology = "fat-tree-k4"\n[axes]\nbytes_per_rank = [{}]\n'
SWEEP = [sys.executable, "-m", "mcsim", "sweep", "s.toml", "--store", "s.sqlite"]
ENV = os.environ | {"MCSIM_PROGRESS": "0"}
ENDS_S = 60  # an interrupted sweep ends at once (it kills its workers); the long run alone would take far longer


def _as_a_shell_starts_it() -> None:
    """In the child: SIGINT at its default and not blocked (the test process may have changed both)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


def _sweep(tmp: Path, sizes: tuple[str, ...], *options: str) -> subprocess.Popen[str]:
    (tmp / "s.toml").write_text(SPEC.format(", ".join(f'"{s}"' for s in sizes)))
    return subprocess.Popen(
        [*SWEEP, *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp,
        env=ENV,
        preexec_fn=_as_a_shell_starts_it,
    )


def _workers_in(folder: Path) -> list[int]:
    """Live (not zombie) sweep worker processes whose working folder is ``folder`` (a sweep's workers inherit its)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or Path(os.readlink(entry / "cwd")) != folder:
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if state != "Z" and (b"mcsim.sweep.worker" in cmdline or b"wrapped_worker" in cmdline):  # conftest's too
            pids.append(int(entry.name))
    return pids


def _stored_labels(store: Path) -> list[str]:
    """The labels of the runs ``store`` holds, read with sqlite3 itself: a Ctrl-C while the sweep made its store
    can leave it an empty SQLite file (which a rerun fills; ``sweep show`` refuses it as not a sweep store)."""
    if not store.exists():
        return []
    with contextlib.closing(sqlite3.connect(store)) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return [row[0] for row in db.execute("SELECT label FROM runs")] if "runs" in tables else []


def _interrupt(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """SIGINT to the sweep (only to it, as `kill -INT`: its workers run in their own session); its stdout and the
    rest of its stderr."""
    proc.send_signal(signal.SIGINT)
    try:
        return proc.communicate(timeout=ENDS_S)
    except subprocess.TimeoutExpired:  # the interrupt was lost: leave no long run behind
        proc.kill()
        raise


def _stopped(proc: subprocess.Popen[str], progress: list[str], err: str, tmp: Path) -> None:
    """Exit 130 (or killed by SIGINT before Python's handler was there), the progress lines and then one line,
    ``mcsim: interrupted``, no traceback; no worker left behind."""
    assert "Traceback" not in err, err[-3000:]
    assert proc.returncode in (130, -signal.SIGINT), (proc.returncode, err[-3000:])
    if proc.returncode == 130:
        lines = [*progress, *err.splitlines()]
        assert lines[-1].startswith("mcsim: interrupted"), lines
        assert all(line.startswith("[") for line in lines[:-1]), lines  # only "[n/N] ok ..." before it
    assert _workers_in(tmp) == []


def test_ctrl_c_while_a_run_executes_keeps_the_runs_that_ended(tmp_path):
    proc = _sweep(tmp_path, (*QUICK, LONG), "--workers", "2")  # the longest first: one worker has it throughout
    assert proc.stderr is not None
    progress = [proc.stderr.readline() for _ in QUICK]  # each line comes after its run is stored
    assert all(line.startswith(f"[{i}/3] ok bytes_per_rank=") for i, line in enumerate(progress, 1)), progress
    assert len(_workers_in(tmp_path)) == 2  # the long run's worker is busy, the other idle
    out, err = _interrupt(proc)
    _stopped(proc, [line.rstrip("\n") for line in progress], err, tmp_path)
    assert proc.returncode == 130  # Python's handler was installed long ago
    assert out == ""
    stored = {row["label"]: row["status"] for row in show_rows(tmp_path / "s.sqlite", None)}
    assert stored == {f"bytes_per_rank={size}": "ok" for size in QUICK}  # intact, and no row of the stopped run
    dry = subprocess.run([*SWEEP, "--dry-run"], capture_output=True, text=True, cwd=tmp_path, env=ENV, check=True)
    assert dry.stderr.splitlines()[-1].endswith(
        "3 runs: 2 stored ok, 0 stored incomplete, 0 stored failed, 0 stored corrupt, 1 to run (store 's.sqlite')"
    )


@pytest.mark.parametrize("after_s", [0.7, 1.5, 3.0])  # while it plans, starts its worker, runs (by the machine)
def test_ctrl_c_at_any_moment_of_a_sweep_that_cannot_end_first(after_s, tmp_path):
    """A lost interrupt here is not a sweep that ended first (exit 0 with its line): the run takes far longer."""
    proc = _sweep(tmp_path, (LONG,))
    time.sleep(after_s)
    out, err = _interrupt(proc)
    _stopped(proc, [], err, tmp_path)
    assert out == ""
    assert _stored_labels(tmp_path / "s.sqlite") == []
    rerun = subprocess.run([*SWEEP, "--dry-run"], capture_output=True, text=True, cwd=tmp_path, env=ENV)
    assert rerun.returncode == 0 or "(an empty SQLite file)" in rerun.stderr, rerun.stderr  # see _stored_labels


def test_ctrl_c_while_a_worker_starts_leaves_no_worker(worker_command, monkeypatch, tmp_path):
    """SIGINT right after subprocess forked the second worker, before the pool holds it: the KeyboardInterrupt
    comes once it does, and the pool ends both (an interrupted start had left them running, idle)."""
    command = worker_command(simulates=False)
    forked: list[int] = []

    class InterruptedAfterFork(subprocess.Popen[bytes]):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            forked.append(self.pid)
            if len(forked) == 2:
                signal.raise_signal(signal.SIGINT)  # as a Ctrl-C: the handler runs at Python's next check

    monkeypatch.setattr(process.subprocess, "Popen", InterruptedAfterFork)
    monkeypatch.chdir(tmp_path)  # the workers' folder: where _workers_in looks
    bad = [Task(key=label, label=label, scenario={"schema": "not-a-scenario"}) for label in "ab"]
    with pytest.raises(KeyboardInterrupt):
        list(LocalPool(2, command=command).run(bad))
    assert len(forked) == 2
    assert _workers_in(tmp_path) == []
