# SPDX-License-Identifier: GPL-2.0-only
"""The collective commands' start line: the packet-hop estimate of Scenario.estimate(), an upper bound of every
algorithm's data packets on links (it printed "(<= 0 packet-hops)" for the in-network and halving-doubling runs,
then nothing: issue 49)."""

import argparse
import re

import pytest

from mcsim.runs.commands import start_line
from mcsim.runs.scenario import scenario_of

RUNS = [  # (command, collective, algorithm)
    ("allgather", "allgather", "mcast"),
    ("allgather", "allgather", "ring"),
    ("allreduce", "allreduce", "ring"),
    ("allreduce", "allreduce", "innet"),
    ("reduce-scatter", "reduce_scatter", "innet"),
    ("allreduce", "allreduce", "halving_doubling"),
    ("allreduce", "allreduce", "innet_mcast"),
]


@pytest.mark.parametrize(("command", "collective", "algorithm"), RUNS)
def test_the_start_line_bounds_every_run_by_its_packet_hops(command, collective, algorithm):
    sc = scenario_of(topology="fat-tree-k4", collective=collective, algorithm=algorithm, bytes_per_rank="64KiB")
    args = argparse.Namespace(command=command, algorithm=algorithm, topology="fat-tree-k4")
    line = start_line(args, sc)
    hops = sc.estimate()["packets"]
    assert hops > 0
    assert line == f"{command} {algorithm} 64KiB on fat-tree-k4 (<= {hops:.3g} packet-hops) ...", line


@pytest.mark.parametrize("algorithm", ["innet", "halving_doubling"])
def test_the_command_prints_the_estimate_of_in_network_and_halving_doubling_runs(algorithm, capsys):
    from mcsim.cli import main

    assert main(["allreduce", "--topology", "fat-tree-k4", "--size", "4KiB", "--algorithm", algorithm]) == 0
    err = capsys.readouterr().err
    assert re.search(
        rf"^mcsim: allreduce {algorithm} 4KiB on fat-tree-k4 \(<= [1-9][0-9.e+]* packet-hops\) \.\.\.$", err, re.M
    ), err
