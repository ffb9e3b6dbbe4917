# SPDX-License-Identifier: GPL-2.0-only
"""A single run's progress line shows the share of its bound simulated so far and how long it may still take
(issue 49): the bound is known before the run (Result.bound_ps), the run may exceed it, and the line says so."""

import re

import pytest

from mcsim.cli import main
from mcsim.native import run_control
from mcsim.runs.commands import bound_ps
from mcsim.runs.scenario import scenario_of

SHARES = [  # (simulated ps, bound ps, wall s so far) -> what follows the simulated time
    (12e6, 30e6, 4.0, " (40% of the bound 30.000 us, about 6 s left if it ends there)"),
    (30e6, 30e6, 4.0, " (100% of the bound 30.000 us: past it)"),
    (45e6, 30e6, 4.0, " (150% of the bound 30.000 us: past it)"),
    (0, 30e6, 0.2, ""),  # nothing simulated yet: no share, no ETA
    (12e6, None, 4.0, ""),  # no bound given: the line as before
]


@pytest.mark.parametrize(("now_ps", "bound", "elapsed_s", "text"), SHARES)
def test_the_share_of_the_bound_and_an_eta(now_ps, bound, elapsed_s, text):
    assert run_control.share_text(now_ps, bound, elapsed_s) == text


@pytest.mark.parametrize("bound", [0.0, -1.0, float("inf"), float("nan"), None])
def test_a_bound_that_means_nothing_shows_no_share(bound):
    with run_control.against_bound(bound):
        assert run_control._bound_ps is None


def test_against_bound_holds_within_its_block_only():
    with run_control.against_bound(5e6):
        assert run_control._bound_ps == 5e6
        with run_control.against_bound(None):
            assert run_control._bound_ps is None
        assert run_control._bound_ps == 5e6
    assert run_control._bound_ps is None


LINE = re.compile(
    r"^mcsim: simulated [0-9.]+ us \(\d+% of the bound [0-9.]+ us(, about \d+ s left if it ends there|: past it)\) in "
)


def test_a_collective_command_shows_the_share_of_its_bound(monkeypatch, capsys):
    monkeypatch.setattr(run_control, "SLICE_S", 0.0)
    monkeypatch.setattr(run_control, "QUIET_S", 0.0)
    monkeypatch.setattr(run_control, "LOG_EVERY_S", 0.0)
    monkeypatch.setenv("MCSIM_PROGRESS", "1")
    assert main(["allgather", "--topology", "fat-tree-k4", "--size", "1MiB"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("mcsim: simulated ")]
    assert len(lines) > 3 and all(LINE.match(line) for line in lines), lines
    shares = [int(line.split("(")[1].split("%")[0]) for line in lines]
    assert shares == sorted(shares) and shares[-1] >= 90  # a multicast Allgather ends near its bound


def test_the_bound_known_before_the_run_is_the_result_s():
    sc = scenario_of(topology="fat-tree-k4", collective="allreduce", algorithm="ring", bytes_per_rank="16KiB")
    assert bound_ps(sc) == sc.run().bound_ps


def test_a_run_in_a_process_without_stderr_shows_no_progress_and_runs(monkeypatch):
    """A script started with 2>&- (sys.stderr is None) ran into an AttributeError in the progress line."""
    monkeypatch.setattr(run_control, "SLICE_S", 0.0)
    monkeypatch.setattr(run_control, "QUIET_S", 0.0)
    monkeypatch.setattr("sys.stderr", None)
    r = scenario_of(topology="fat-tree-k4", bytes_per_rank="64KiB").run()
    assert r.complete
