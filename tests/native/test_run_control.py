# SPDX-License-Identifier: GPL-2.0-only
"""Runs in slices of wall-clock time: the same results however sliced, a progress line, and Ctrl-C
that stops a long run within a second with exit code 130 and a line saying how far it got."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np

from mcsim.config.fabric import Faults
from mcsim.native import library, run_control
from mcsim.runs.scenario import Scenario, scenario_of

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _as_a_shell_starts_it() -> None:
    """In the child, before it runs mcsim: SIGINT at its default and not blocked, as a user's shell
    starts a process (the test process may have left it otherwise: its libraries install signal
    handling, and a child inherits an ignored signal and the signal mask)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


def scenario() -> Scenario:
    return scenario_of(topology="fat-tree-k4", algorithm="mcast", bytes_per_rank="256KiB", loss=1e-2, seed=3)


def fingerprint(r) -> list[np.ndarray]:
    arrays = [r.finish_ps, r.injected_b, r.received_b, *r.rank.values(), *r.nic.values()]
    return arrays + list(r.fabric.ports.values()) + list(r.fabric.hosts.values())


def test_a_run_sliced_every_few_thousand_events_gives_the_same_results_bit_for_bit(monkeypatch):
    whole = scenario().run()
    monkeypatch.setattr(run_control, "SLICE_S", 0.0)  # the scheduler stops at every look at the clock
    calls = []
    real_run = run_control.run_to_end

    class Counting:  # the library, counting the slices
        def __init__(self, lib):
            self.lib = lib

        def __getattr__(self, name):
            return getattr(self.lib, name)

        def mcsim_run_for(self, seconds):
            calls.append(seconds)
            return self.lib.mcsim_run_for(seconds)

    monkeypatch.setattr(run_control, "run_to_end", lambda lib, packets=None: real_run(Counting(lib), packets))
    sliced = scenario().run()
    assert len(calls) > 10, "the run really was cut into many slices"
    for a, b in zip(fingerprint(whole), fingerprint(sliced), strict=True):
        np.testing.assert_array_equal(a, b)
    assert whole.complete and whole.time_ps == sliced.time_ps


def test_a_long_run_shows_a_progress_line_on_stderr(monkeypatch, capsys):
    monkeypatch.setattr(run_control, "SLICE_S", 0.0)
    monkeypatch.setattr(run_control, "QUIET_S", 0.0)
    monkeypatch.setattr(run_control, "LOG_EVERY_S", 0.0)
    scenario().run()
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("mcsim: simulated ")]
    assert len(lines) > 3
    assert all(" us in " in line and " M events " in line and " M packets delivered" in line for line in lines)
    simulated = [float(line.split()[2]) for line in lines]
    assert simulated == sorted(simulated) and simulated[-1] > 0


def test_progress_can_be_turned_off(monkeypatch, capsys):
    monkeypatch.setattr(run_control, "SLICE_S", 0.0)
    monkeypatch.setattr(run_control, "QUIET_S", 0.0)
    monkeypatch.setenv("MCSIM_PROGRESS", "0")
    scenario().run()
    assert "mcsim: simulated" not in capsys.readouterr().err


def test_ctrl_c_stops_a_long_run_within_a_second_with_exit_130_and_how_far_it_got(tmp_path):
    library.ensure_built()  # the subprocess must not spend its time compiling
    script = tmp_path / "long.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            from mcsim.native import library, runtime
            from mcsim.runs.scenario import Scenario
            runtime.load()
            print("ready", flush=True)
            Scenario(topology="testbed-188", algorithm="ring", bytes_per_rank="8MiB").run()  # minutes
            print("finished", flush=True)
            """
        )
    )
    env = {**os.environ, "MCSIM_PROGRESS": "1"}
    mcsim = [sys.executable, "-c", "import sys; from mcsim.cli import main; sys.exit(main(sys.argv[1:]))"]
    p = subprocess.Popen(
        [*mcsim, "run", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
        preexec_fn=_as_a_shell_starts_it,
    )
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(2.0)  # well into the simulation
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        lines = []
        while not (lines and lines[-1].startswith("mcsim: interrupted")):
            line = p.stderr.readline()
            assert line, f"stderr ended without the interrupted line: {lines}"
            lines.append(line.strip())
        stopped = time.monotonic() - sent  # the simulation has stopped and said how far it got
        out = p.stdout.read()
        p.wait(timeout=20)
    finally:
        p.kill()
    assert p.returncode == 130, lines
    assert stopped < 1.0, f"took {stopped:.2f} s to stop"
    assert "finished" not in out
    last = lines[-1]
    assert last.startswith("mcsim: interrupted: simulated "), lines
    assert float(last.split()[3]) > 0  # simulated time reached, in us
    assert " M packets delivered" in last


def test_faults_and_sweeps_run_in_slices_too(monkeypatch):
    monkeypatch.setattr(run_control, "SLICE_S", 0.0)
    faults = Faults(link_down=[(24, 32, 20_000_000, None)], reroute_delay_ps=1_000_000)
    r = Scenario(topology="fat-tree-k4", algorithm="ring", bytes_per_rank="64KiB", faults=faults).run()
    assert r.complete


def test_after_an_interrupted_run_the_same_process_runs_again_with_the_same_results():
    import threading

    import pytest

    from mcsim.errors import Interrupted

    before = scenario().run()
    # Python's Ctrl-C handling, as a user's process has it (the test process's libraries may have
    # changed it: see _as_a_shell_starts_it)
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    blocked = signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(Interrupted, match=r"^interrupted: simulated [0-9.]+ us in "):
            Scenario(topology="testbed-188", algorithm="ring", bytes_per_rank="8MiB").run()  # minutes
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    after = scenario().run()
    for a, b in zip(fingerprint(before), fingerprint(after), strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_last_completed_run_is_recorded():
    t0 = time.monotonic()
    r = Scenario(topology="fat-tree-k4", algorithm="ring", bytes_per_rank="16KiB").run()
    last = run_control.last_run()
    assert r.complete and last is not None
    assert t0 <= last.started_s and last.started_s + last.wall_s <= time.monotonic()
    assert last.events >= r.fabric.link_traversals() > 0  # every packet-hop costs at least its arrival event
