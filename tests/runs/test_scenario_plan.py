# SPDX-License-Identifier: GPL-2.0-only
"""A Scenario composes what every run on its fabric shares (Scenario.setup, a Setup) and says what it runs in public
(Scenario.plan()): what its checks, its buffers, its cost and a run of jobs read."""

import dataclasses

import pytest

from mcsim.config.fabric import FabricConfig
from mcsim.config.rdma import RdmaConfig
from mcsim.config.setup import Setup
from mcsim.runs.scenario import Scenario
from mcsim.topology.physics import preset
from mcsim.units import parse_rate


def test_a_scenarios_setup_is_its_fabric_fields_and_shares_one_layout():
    sc = Scenario(topology="fat-tree-k4", rate="400Gbps", fabric=FabricConfig(seed=3, ecmp_seed=3), ranks=4)
    setup = sc.setup
    assert (setup.topology, setup.rate, setup.fabric, setup.rdma, setup.faults) == (
        sc.topology,
        sc.rate,
        sc.fabric,
        sc.rdma,
        sc.faults,
    )
    assert setup.seed == 3
    assert setup.hosts == 16  # k^3/4
    assert setup.layout() is Setup(topology="fat-tree-k4", rate="400Gbps").layout()  # laid out once, shared
    assert setup.data_rate_bps == preset(parse_rate("400Gbps")).data_rate_bps == sc.data_rate_bps


def test_a_rocev2_setup_runs_its_links_on_ethernet():
    ib, roce = (
        Setup(topology="fat-tree-k4", rate="100Gbps"),
        Setup(topology="fat-tree-k4", rate="100Gbps", rdma=RdmaConfig(wire_format="rocev2")),
    )
    assert roce.data_rate_bps == preset(parse_rate("100Gbps"), ethernet=True).data_rate_bps
    assert roce.graph() is not ib.graph()


N = 4096


@pytest.mark.parametrize(
    ("keywords", "parts", "multicast", "in_network", "rings", "sources", "lacking_b"),
    [
        ({"collective": "allgather", "algorithm": "mcast"}, 1, True, False, 0, 8, 7 * N),
        ({"collective": "allgather", "algorithm": "ring"}, 1, False, False, 1, 8, 7 * N),
        ({"collective": "broadcast", "algorithm": "binomial"}, 1, False, False, 0, 1, N),
        ({"collective": "allreduce", "algorithm": "ring_mcast"}, 2, True, False, 1, 8, N),  # TWO_PHASE
        ({"collective": "allreduce", "algorithm": "innet_mcast"}, 2, True, True, 0, 8, N),
        ({"collective": "allreduce", "algorithm": "double_tree"}, 2, False, False, 0, 8, N),  # SPLIT: two trees
        ({"collective": "allreduce", "algorithm": "innet"}, 1, False, True, 0, 8, N),
        # the overlapped Reduce-Scatter is no part of the collective, but the fabric sums it or rings it
        ({"algorithm": "mcast", "overlap": "reduce_scatter", "overlap_algorithm": "innet"}, 1, True, True, 0, 8, 7 * N),
        ({"algorithm": "mcast", "overlap": "reduce_scatter", "overlap_algorithm": "ring"}, 1, True, False, 1, 8, 7 * N),
    ],
)
def test_the_plan_says_the_teams_and_what_they_need_of_the_fabric(
    keywords, parts, multicast, in_network, rings, sources, lacking_b
):
    fabric = FabricConfig(flow_control="lossless")
    sc = Scenario(topology="fat-tree-k4", bytes_per_rank=N, ranks=8, fabric=fabric, **keywords)
    plan = sc.plan()
    got = (len(plan.parts), plan.multicast, plan.in_network, plan.rings, plan.sources, plan.lacking_b)
    assert got == (parts, multicast, in_network, rings, sources, lacking_b)
    assert plan.ranks == 8
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.ranks = 2  # type: ignore[misc]
