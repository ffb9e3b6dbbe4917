# SPDX-License-Identifier: GPL-2.0-only
"""The collective commands' start line: the packet-hop estimate where Scenario.estimate() has one, nothing where
it counts no packet of the algorithm (it printed "(<= 0 packet-hops)" for the in-network and halving-doubling
runs: issue 49)."""

import argparse
import re

import pytest

from mcsim.runs.commands import start_line
from mcsim.runs.scenario_keywords import scenario_of

RUNS = [  # (command, collective, algorithm)
    ("allgather", "allgather", "mcast"),
    ("allgather", "allgather", "ring"),
    ("allreduce", "allreduce", "ring"),
    ("allreduce", "allreduce", "innet"),
    ("reduce-scatter", "reduce_scatter", "innet"),
    ("allreduce", "allreduce", "halving_doubling"),
]


@pytest.mark.parametrize(("command", "collective", "algorithm"), RUNS)
def test_the_start_line_never_bounds_a_run_by_0_packet_hops(command, collective, algorithm):
    sc = scenario_of(topology="fat-tree-k4", collective=collective, algorithm=algorithm, bytes_per_rank="64KiB")
    args = argparse.Namespace(command=command, algorithm=algorithm, topology="fat-tree-k4")
    line = start_line(args, sc)
    hops = sc.estimate()["packets"]
    head = f"{command} {algorithm} 64KiB on fat-tree-k4"
    if hops > 0:
        assert re.fullmatch(rf"{head} \(<= [0-9.e+]+ packet-hops\) \.\.\.", line), line
    else:
        assert line == f"{head} ...", line


@pytest.mark.parametrize("algorithm", ["innet", "halving_doubling"])
def test_the_command_prints_no_estimate_of_0(algorithm, capsys):
    from mcsim.cli import main

    assert main(["allreduce", "--topology", "fat-tree-k4", "--size", "4KiB", "--algorithm", algorithm]) == 0
    err = capsys.readouterr().err
    assert f"mcsim: allreduce {algorithm} 4KiB on fat-tree-k4 ...\n" in err and "packet-hops" not in err, err
