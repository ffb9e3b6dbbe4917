# SPDX-License-Identifier: GPL-2.0-only
"""Hierarchical collectives on nodes of several GPUs (config.collectives.HIERARCHICAL): a rail phase per GPU index
through the NICs and a node phase through NVLink, checked against their closed form (bounds.hierarchical_b),
byte-exact, lossy rails repaired over many seeds, and their traffic counted per link: no packet leaves its rail."""

import numpy as np
import pytest

from mcsim import topology
from mcsim.config.fabric import Faults
from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario, scenario_of
from mcsim.topology.nodes import nodes_of
from mcsim.units import PS_PER_S

RAIL_4X4 = "rail-4x4"  # 4 nodes of 4 H100s, a 400G NIC per GPU, 4 rails, 2 spines
GPU_REDUCE_PS_PER_B = 1  # a GPU sums at HBM speed (H100: 3.35 TB/s over 3 bytes a summed byte: ~0.9 ps/B)


def _parts(g, part):
    return [x for x, d in g.nodes(data=True) if d.get("part", "leaf" if "rail" in d else "spine") == part]


def _closed_form_ps(n, nodes, gpus, graph):
    found = nodes_of(graph)
    return (n * (nodes - 1) * 8 / found.network_bps + nodes * n * (gpus - 1) * 8 / found.nvlink_bps) * PS_PER_S


@pytest.mark.parametrize(("collective", "kw"), [("allgather", {}), ("reduce_scatter", {"reduce_ps_per_byte": 1})])
def test_hierarchical_ring_lands_within_3_percent_of_its_bound_and_stays_on_its_rails(collective, kw):
    n = 4 << 20
    r = Scenario(topology=RAIL_4X4, collective=collective, algorithm="hier_ring", bytes_per_rank="4MiB", **kw).run()
    g = topology.resolve(RAIL_4X4)
    assert r.placement is not None and (r.placement.nodes, r.placement.gpus) == (4, 4)
    assert r.bound_ps == pytest.approx(_closed_form_ps(n, 4, 4, g), rel=1e-12)
    assert 1 <= r.finish_ps.max() / r.bound_ps <= 1.03
    tx = r.fabric.ports["tx_packets"]
    spines = set(_parts(g, "spine"))
    assert sum(int(t) for t, node in zip(tx, r.fabric.port_node, strict=True) if int(node) in spines) == 0
    # every NIC's wire carried its rail's shards: N(nodes-1) of payload at least, each way
    wire_b = r.fabric.ports["tx_bytes"]
    for nic in _parts(g, "nic"):
        port = next(
            i
            for i, (node, peer) in enumerate(zip(r.fabric.port_node, r.fabric.port_peer, strict=True))
            if int(node) == nic
            and int(r.fabric.port_node[peer]) not in (g.nodes[nic]["node"],)
            and g.nodes[int(r.fabric.port_node[peer])].get("part") is None
        )
        assert int(wire_b[port]) >= n * 3


def test_the_phases_run_one_after_the_other_each_within_its_own_bound():
    n = 4 << 20
    r = Scenario(topology=RAIL_4X4, collective="allgather", algorithm="hier_ring", bytes_per_rank="4MiB").run()
    first, found = r.first_phase, nodes_of(topology.resolve(RAIL_4X4))
    assert first is not None and first.finish_ps.max() < r.finish_ps.min()  # every rail done before any node is
    # the rail phase's bound: N(nodes-1) through each NIC; the two phases' bounds add up to the whole's
    assert first.bound_ps == pytest.approx(n * 3 * 8 * PS_PER_S / found.network_bps, rel=1e-12)
    assert first.team_ranks == 4 and r.team_ranks is None and r.data_rate_bps == found.network_bps
    assert 1 <= first.finish_ps.max() / first.bound_ps <= 1.03


@pytest.mark.parametrize(
    ("collective", "algorithm", "size"),
    [
        ("allgather", "hier_ring", "256KiB"),
        ("allgather", "hier_mcast", "256KiB"),
        ("reduce_scatter", "hier_ring", "256KiB"),
        ("allreduce", "hier_ring", "256KiB"),
        ("allreduce", "hier_ring", "1000000B"),  # 62,500 B blocks of 4-byte elements: the last ones padded
    ],
)
def test_hierarchical_collectives_are_byte_exact(collective, algorithm, size):
    r = Scenario(topology=RAIL_4X4, collective=collective, algorithm=algorithm, bytes_per_rank=size, verify=True).run()
    assert r.verified and not r.wrong_bytes.any() and r.complete


def test_hierarchical_allreduce_is_its_reduce_scatter_then_its_allgather():
    """Four phases: node RS, rail RS, rail AG, node AG, on blocks b = N/P: twice the hierarchical bound of b."""
    n, block = 32 << 20, (32 << 20) // 16
    r = Scenario(
        topology=RAIL_4X4, collective="allreduce", algorithm="hier_ring", bytes_per_rank="32MiB", reduce_ps_per_byte=1
    ).run()
    found = nodes_of(topology.resolve(RAIL_4X4))
    half = (block * 3 * 8 / found.network_bps + 4 * block * 3 * 8 / found.nvlink_bps) * PS_PER_S
    assert r.bound_ps == pytest.approx(2 * half, rel=1e-12) and r.bytes_per_rank_b == n
    rs = r.first_phase
    assert (rs.collective, rs.bytes_per_rank_b) == ("reduce_scatter", block) and rs.bound_ps == pytest.approx(half)
    assert rs.finish_ps.max() < r.finish_ps.min()  # every block summed before any is gathered
    assert 1 <= r.finish_ps.max() / r.bound_ps <= 1.03


@pytest.mark.parametrize("seed", range(1, 7))
def test_multicast_per_rail_repairs_a_lossy_rail(seed):
    """Every NIC's wire loses 1e-3 of its packets (both ways): the rail's multicast repairs by RDMA READ."""
    g = topology.resolve(RAIL_4X4)
    wires = {
        (nic, leaf): 1e-3
        for nic in _parts(g, "nic")
        for leaf in g[nic]
        if "rail" in g.nodes[leaf] and "part" not in g.nodes[leaf]
    }
    r = scenario_of(
        topology=RAIL_4X4,
        collective="allgather",
        algorithm="hier_mcast",
        bytes_per_rank="1MiB",
        verify=True,
        faults=Faults(link_loss=wires),
        seed=seed,
    ).run()
    assert r.verified and r.complete
    lost = int(r.fabric.ports["loss_packets"].sum())
    assert lost > 0
    repaired = r.first_phase.rank["repaired_chunks"]
    assert int(repaired.sum()) > 0 or int(r.first_phase.nic["retransmits"].sum()) > 0


@pytest.mark.parametrize(
    ("topology", "kwargs", "message"),
    [
        ("fat-tree-k4", {}, r"^Scenario: algorithm='hier_ring' runs on nodes of several GPUs joined by a network "),
        ("dgx-h100", {}, r"topology='dgx-h100' has no network$"),
        (RAIL_4X4, {"ranks": 6}, r"needs whole nodes, at least 2 of at least 2 GPUs: ranks=6 on nodes of 4 GPUs; "),
        (RAIL_4X4, {"ranks": 4}, r"needs whole nodes, at least 2 of at least 2 GPUs: ranks=4 on nodes of 4 GPUs"),
        (RAIL_4X4, {"overlap": "reduce_scatter"}, r"runs alone: overlap='reduce_scatter' goes with the flat"),
    ],
)
def test_bad_hierarchical_runs_are_one_line(topology, kwargs, message):
    with pytest.raises(McsimError, match=message) as info:
        Scenario(topology=topology, collective="allgather", algorithm="hier_ring", **kwargs)
    assert "\n" not in str(info.value)


def test_the_output_is_rail_major():
    r = Scenario(topology=RAIL_4X4, collective="allgather", algorithm="hier_ring", bytes_per_rank="4KiB").run()
    p = r.placement
    assert [p.position(h) for h in range(16)] == [rail * 4 + n for n in range(4) for rail in range(4)]
    assert "rail-major" in p.text()
    assert np.array_equal(np.sort([p.position(h) for h in range(16)]), np.arange(16))


@pytest.mark.slow
def test_rail_16x8_hierarchical_allgather_at_16_mib_lands_within_3_percent_of_its_bound():
    """The issue's case: 16 DGX H100 nodes, a 400G NIC per GPU, 16 MiB per GPU."""
    r = Scenario(topology="rail-16x8", collective="allgather", algorithm="hier_ring", bytes_per_rank="16MiB").run()
    g = r.fabric  # the spines carry nothing: every inter-node packet stays on its rail
    graph = topology.resolve("rail-16x8")
    spines = set(_parts(graph, "spine"))
    assert sum(int(t) for t, node in zip(g.ports["tx_packets"], g.port_node, strict=True) if int(node) in spines) == 0
    assert r.bound_ps == pytest.approx(_closed_form_ps(16 << 20, 16, 8, graph), rel=1e-12)
    assert 1 <= r.finish_ps.max() / r.bound_ps <= 1.03


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"algorithm": "hier_mcast", "bytes_per_rank": "17GiB"},
            r"^Scenario: bytes_per_rank='17GiB' makes 17825792 multicast chunks of 4096 B \(4 shards in a team of 4\); "
            r"the chunk id has 24 bits \(at most 16777215\)",
        ),
        (
            {"algorithm": "hier_ring", "bytes_per_rank": "4GiB", "ring_chunk": "4B"},
            r"^Scenario: bytes_per_rank='4GiB' makes 4294967296 ring chunks of 4 B in a team of 4; the chunk id is the "
            r"WRITE's 32-bit immediate \(at most 4294967295\): raise ring_chunk$",
        ),
    ],
)
def test_a_team_s_ids_must_fit_their_integers(kwargs, message):
    """Each team of a hierarchical collective is checked as a collective of its own (its size, its shard)."""
    with pytest.raises(McsimError, match=message):
        Scenario(topology=RAIL_4X4, collective="allgather", **kwargs)
