# SPDX-License-Identifier: GPL-2.0-only
"""NCCL's tree across nodes as a hierarchical Allreduce (algorithm='hier_tree'): a ring Reduce-Scatter per node over
NVLink, an Allreduce per rail on NCCL's double binary tree across the nodes, a ring Allgather per node. Its teams'
buffers and scratch areas apart, byte-exact (padded blocks, loss), its rails' traffic on their rails (counted per
port), its bound the double tree's at the NIC rate plus the node phases' at NVLink's, its time against that bound
and against the flat double tree doing the same work, bad input one line."""

from types import SimpleNamespace

import pytest

from mcsim import topology
from mcsim.bounds import allreduce_block_b, double_tree_bound_b, hierarchical_b, in_order_degrees, tree_halves
from mcsim.cli import main
from mcsim.config.collectives import TREE_SCRATCH, hierarchical_parts, hierarchical_scratch_b
from mcsim.config.fabric import Faults
from mcsim.errors import McsimError
from mcsim.runs import buffers
from mcsim.runs.scenario import Scenario, scenario_of
from mcsim.topology.nodes import nodes_of
from mcsim.units import PS_PER_S

RAIL_4X4 = "rail-4x4"  # 4 nodes of 4 H100s, a 400G NIC per GPU, 4 rails, 2 spines
GPU_REDUCE_PS_PER_B = 1  # a GPU sums at HBM speed (H100: 3.35 TB/s over 3 bytes a summed byte: ~0.9 ps/B)


def _parts(g, part):
    return [x for x, d in g.nodes(data=True) if d.get("part", "leaf" if "rail" in d else "spine") == part]


def _spine_packets(r, g):
    spines = set(_parts(g, "spine"))
    return sum(
        int(t) for t, node in zip(r.fabric.ports["tx_packets"], r.fabric.port_node, strict=True) if node in spines
    )


def _nic_wires(r, g):
    """Per NIC: (its node, the port from it to its rail's leaf, the port back)."""
    f = r.fabric
    for nic in _parts(g, "nic"):
        for port, (node, peer) in enumerate(zip(f.port_node, f.port_peer, strict=True)):
            other = g.nodes[int(f.port_node[peer])]
            if int(node) == nic and "rail" in other and "part" not in other:
                yield g.nodes[nic]["node"], port, int(peer)


def _degrees(nodes):
    """Per node, its edges (children and parent) in the double tree's first and second tree (P even: the mirror)."""
    d = in_order_degrees(nodes)
    return d, [d[nodes - 1 - k] for k in range(nodes)]


def test_each_team_s_bytes_lie_apart_in_the_region():
    """Per rank, the intervals of its region each team writes: the node Reduce-Scatter's buffer and landing zone, its
    rail's two trees' halves (inside the rail's slice) and their scratch (past both), the node Allgather's buffer."""
    nodes, gpus, n = 4, 4, 1_000_000
    b = allreduce_block_b(n, 16)  # 62,500 B: 15,625 4-byte elements, the last blocks padded
    parts = hierarchical_parts("allreduce", "hier_tree", n, nodes, gpus)
    assert [q.phase for q in parts] == [0] * 4 + [1] * 8 + [2] * 4
    scratch = hierarchical_scratch_b(b, 16)
    assert scratch == 2 * 16 * b  # past the P blocks and the node Reduce-Scatter's landing zone of as much
    sc = Scenario(topology=RAIL_4X4, collective="allreduce", algorithm="hier_tree", bytes_per_rank=n, verify=True)
    for host in range(16):
        rail = host % gpus
        trees = [q for q in parts if q.algorithm == "tree" and host in q.hosts]
        assert [q.tree_shape for q in trees] == ["in_order", "second"]
        assert {q.hosts for q in trees} == {tuple(k * gpus + rail for k in range(nodes))}
        first, second = tree_halves(nodes * b)
        assert [(q.buffer_offset_b, q.bytes_per_rank_b) for q in trees] == [
            (rail * nodes * b, first),
            (rail * nodes * b + first, second),
        ]
        sums = [(q.scratch_offset_b, q.scratch_offset_b + TREE_SCRATCH * q.bytes_per_rank_b) for q in trees]
        assert sums == [(scratch, scratch + 3 * first), (scratch + 3 * first, scratch + 3 * nodes * b)]
        # the node teams' bytes end at 2 P b (the buffer, then the Reduce-Scatter's landing zone): below the scratch
        node = [q for q in parts if q.algorithm == "ring" and host in q.hosts]
        assert max(buffers.region_end_b(q, gpus, True) for q in node) == scratch
        assert sc.rdma.region_b >= scratch + 3 * nodes * b == buffers.verify_memory_b(sc)


@pytest.mark.parametrize(
    ("size", "chunk"),
    [
        ("256KiB", "64KiB"),
        ("1000000B", "16KiB"),  # 62,500 B blocks, several chunks per half
        ("1000004B", "64KiB"),  # 250,001 elements: blocks of 15,626, the last ones padded
        ("4B", "64KiB"),  # one element: one block, 15 empty ones; each rail's slice 16 B, halves of 8
    ],
)
def test_hier_tree_is_byte_exact(size, chunk):
    r = Scenario(
        topology=RAIL_4X4,
        collective="allreduce",
        algorithm="hier_tree",
        bytes_per_rank=size,
        ring_chunk=chunk,
        verify=True,
    ).run()
    assert r.complete and r.verified and not r.wrong_bytes.any()


@pytest.mark.parametrize("ranks", [24, 128])
def test_hier_tree_is_byte_exact_on_an_odd_number_of_nodes_and_on_16(ranks):
    """3 nodes of 8 (the second tree the first shifted by one, P odd) and rail-16x8 whole (trees 4 levels deep)."""
    r = Scenario(
        topology="rail-16x8",
        ranks=ranks,
        collective="allreduce",
        algorithm="hier_tree",
        bytes_per_rank="100004B",  # 25,001 elements: blocks padded
        ring_chunk="8KiB",
        verify=True,
    ).run()
    assert (r.placement.nodes, r.placement.gpus) == (ranks // 8, 8)
    assert r.complete and r.verified and not r.wrong_bytes.any()


@pytest.mark.parametrize("seed", [1, 2])
def test_hier_tree_recovers_a_lossy_rail(seed):
    """Every NIC's wire loses 1e-3 of its packets (both ways): RC retransmits within the rail, every sum still exact."""
    g = topology.resolve(RAIL_4X4)
    wires = {(nic, leaf): 1e-3 for nic in _parts(g, "nic") for leaf in g[nic] if "rail" in g.nodes[leaf]}
    wires = {k: v for k, v in wires.items() if "part" not in g.nodes[k[1]]}
    r = scenario_of(
        topology=RAIL_4X4,
        collective="allreduce",
        algorithm="hier_tree",
        bytes_per_rank="1MiB",
        ring_chunk="16KiB",
        verify=True,
        faults=Faults(link_loss=wires),
        seed=seed,
    ).run()
    assert r.complete and r.verified
    assert int(r.fabric.ports["loss_packets"].sum()) > 0 and int(r.nic["retransmits"].sum()) > 0
    assert _spine_packets(r, g) == 0


def test_the_rails_trees_stay_on_their_rails_and_each_link_moves_its_closed_form():
    """No packet reaches a spine; each NIC's wire carries, each way, its node's halves in the two trees (the closed
    form's degrees: nodes 1 and 2 inside one tree, 0 and 3 leaves of both) plus headers and ACKs (< 1 %: ~28 B per
    4 KiB packet)."""
    n = 4 << 20
    r = Scenario(topology=RAIL_4X4, collective="allreduce", algorithm="hier_tree", bytes_per_rank=n).run()
    g = topology.resolve(RAIL_4X4)
    assert _spine_packets(r, g) == 0
    first, second = tree_halves(4 * allreduce_block_b(n, 16))
    d, other = _degrees(4)
    assert d == [1, 1, 3, 1] and other == [1, 3, 1, 1]
    wire_b = r.fabric.ports["tx_bytes"]
    wires = list(_nic_wires(r, g))
    assert len(wires) == 16
    for node, out, back in wires:
        payload = d[node] * first + other[node] * second
        assert payload <= int(wire_b[out]) <= payload * 1.01 and payload <= int(wire_b[back]) <= payload * 1.01
    # each GPU's NVLink (its hub to the NVSwitch) carries the node phases only: 2 nodes b (G-1) = 2N(G-1)/G each way
    # (N a multiple of 4P), where NCCL's chain gives a GPU inside it 2N (docs/collectives.md)
    f, nvlink_b = r.fabric, 2 * 4 * allreduce_block_b(n, 16) * 3
    links = [
        (port, int(peer))
        for port, (node, peer) in enumerate(zip(f.port_node, f.port_peer, strict=True))
        if g.nodes[int(node)].get("part") == "hub" and g.nodes[int(f.port_node[peer])].get("part") == "nvswitch"
    ]
    assert len(links) == 16
    for out, back in links:
        assert nvlink_b <= int(wire_b[out]) <= nvlink_b * 1.01 and nvlink_b <= int(wire_b[back]) <= nvlink_b * 1.01


def _closed_form_ps(n, nodes, gpus, graph):
    """The tree across nodes: its double tree's busiest rank through the NIC, the node phases through NVLink."""
    found, b = nodes_of(graph), allreduce_block_b(n, nodes * gpus)
    nic = double_tree_bound_b(nodes * b, nodes) * 8 / found.network_bps
    return (nic + 2 * nodes * b * (gpus - 1) * 8 / found.nvlink_bps) * PS_PER_S


def _flat_double_tree_ps(size_b, ranks):
    """The same work alone: the flat double tree of ``size_b`` on ``ranks`` hosts of one 400G switch."""
    g = topology.leaf_spine(1, 0, ranks, rate_bps=400 * 10**9, delay_ps=100_000)
    g.graph.update(name=f"star-{ranks}")
    sc = Scenario(
        topology=g,
        collective="allreduce",
        algorithm="double_tree",
        bytes_per_rank=size_b,
        reduce_ps_per_byte=GPU_REDUCE_PS_PER_B,
    )
    return sc.run().time_ps


def test_hier_tree_lands_within_5_percent_of_its_bound_phase_by_phase():
    """32 MiB on 4 x 4: blocks b = 2 MiB, each rail's tree on 8 MiB. The node phases are rings over NVLink (within
    3 % of their N(G-1)/B each: RC headers, 0.7 %, and the ring's fill, a chunk step and the paths' latency, ~1 us);
    the tree phase pays RC headers (0.7 %) and what the double tree's schedule costs of itself on 4 ranks (its
    chunks wait on two children and a parent; with the pipeline's fill, 2 x depth 2 chunk steps: 3.5 % here, 3 to
    7 % from 8 to 128 MiB per GPU): the flat double tree on 4 ranks of one 400G switch doing the same 8 MiB takes
    the same time (within 2 %, its paths shorter)."""
    n = 32 << 20
    r = Scenario(
        topology=RAIL_4X4,
        collective="allreduce",
        algorithm="hier_tree",
        bytes_per_rank=n,
        reduce_ps_per_byte=GPU_REDUCE_PS_PER_B,
    ).run()
    g = topology.resolve(RAIL_4X4)
    found, b = nodes_of(g), allreduce_block_b(n, 16)
    assert r.bound_ps == pytest.approx(_closed_form_ps(n, 4, 4, g), rel=1e-12)
    assert double_tree_bound_b(4 * b, 4) == 2 * 4 * b  # 8 b through each NIC, against hier_ring's 2 b (4 - 1)
    trees, rs = r.first_phase, r.first_phase.first_phase
    assert (trees.collective, trees.algorithm, trees.bytes_per_rank_b, trees.team_ranks) == (
        "allreduce",
        "double_tree",
        4 * b,
        4,
    )
    assert (rs.collective, rs.algorithm, rs.team_ranks) == ("reduce_scatter", "ring", 4)
    assert trees.bound_ps == pytest.approx(2 * 4 * b * 8 * PS_PER_S / found.network_bps, rel=1e-12)
    assert rs.bound_ps == pytest.approx(4 * b * 3 * 8 * PS_PER_S / found.nvlink_bps, rel=1e-12)
    # one phase after the other; a phase's times are from the collective's start
    assert rs.finish_ps.max() < trees.finish_ps.min() and trees.finish_ps.max() < r.finish_ps.min()
    tree_ps = int(trees.finish_ps.max() - rs.finish_ps.max())
    assert 1 <= rs.finish_ps.max() / rs.bound_ps <= 1.03
    assert 1 <= tree_ps / trees.bound_ps <= 1.05
    assert tree_ps == pytest.approx(_flat_double_tree_ps(4 * b, 4), rel=0.02)
    assert 1 <= r.finish_ps.max() / r.bound_ps <= 1.05
    # a phase's rank counters add up the phases so far: the trees' own, per GPU its node's halves of 64 chunks each
    d, other = _degrees(4)
    tree_chunks = trees.rank["chunks_received"] - rs.rank["chunks_received"]
    assert tree_chunks.tolist() == [64 * (d[h // 4] + other[h // 4]) for h in range(16)]


@pytest.mark.slow
def test_rail_16x8_hier_tree_stays_on_its_rails_within_its_bound():
    """16 DGX H100 nodes, 64 MiB per GPU (6 s): each rail's double tree on 8 MiB over 16 nodes, 4 levels deep. The
    double tree itself does not reach its bound on 16 ranks (the flat one on one 400G switch doing the same 8 MiB
    takes ~1.14 x; its chunks wait on two children and a parent); the rail's tree is that schedule on longer paths:
    within 10 % of the flat one, and the whole within 1.2 x of its bound (the node phases' share near 1)."""
    n = 64 << 20
    r = Scenario(
        topology="rail-16x8",
        collective="allreduce",
        algorithm="hier_tree",
        bytes_per_rank="64MiB",
        reduce_ps_per_byte=GPU_REDUCE_PS_PER_B,
    ).run()
    graph = topology.resolve("rail-16x8")
    assert r.complete and _spine_packets(r, graph) == 0
    assert r.bound_ps == pytest.approx(_closed_form_ps(n, 16, 8, graph), rel=1e-12)
    trees, rs = r.first_phase, r.first_phase.first_phase
    tree_ps = int(trees.finish_ps.max() - rs.finish_ps.max())
    flat_ps = _flat_double_tree_ps(trees.bytes_per_rank_b, 16)
    assert trees.bound_ps <= flat_ps and 1 <= tree_ps / trees.bound_ps
    assert tree_ps == pytest.approx(flat_ps, rel=0.1)
    assert 1 <= r.finish_ps.max() / r.bound_ps <= 1.2


def test_hier_tree_from_the_command_line(capsys):
    assert main(["allreduce", "--topology", RAIL_4X4, "--algorithm", "hier_tree", "--bytes-per-rank", "1MiB"]) == 0
    header, row = capsys.readouterr().out.splitlines()[:2]
    assert header.split()[:2] == ["size_B", "count"] and row.split()[0] == "1048576" and row.split()[-1] == "hier_tree"


@pytest.mark.parametrize(
    ("topology_name", "kwargs", "message"),
    [
        ("fat-tree-k4", {}, r"^Scenario: algorithm='hier_tree' runs on nodes of several GPUs joined by a network "),
        ("dgx-h100", {}, r"^Scenario: algorithm='hier_tree' runs on .*topology='dgx-h100' has no network$"),
        (RAIL_4X4, {"ranks": 6}, r"needs whole nodes, at least 2 of at least 2 GPUs: ranks=6 on nodes of 4 GPUs; "),
        (RAIL_4X4, {"overlap": "reduce_scatter"}, r"runs alone: overlap='reduce_scatter' goes with the flat"),
        (
            RAIL_4X4,
            {"verify": True, "bytes_per_rank": "1001B"},
            r"^Scenario: bytes_per_rank='1001B' and ring_chunk='64KiB' must be whole numbers of 32-bit integers",
        ),
    ],
)
def test_bad_hier_tree_runs_are_one_line(topology_name, kwargs, message):
    with pytest.raises(McsimError, match=message) as info:
        Scenario(topology=topology_name, collective="allreduce", algorithm="hier_tree", **kwargs)
    assert "\n" not in str(info.value)


def test_a_rail_tree_s_chunk_ids_are_checked_as_a_tree_s():
    """A tree team's ids are its two children's chunks below the way-down flag (the node rings, G times as many
    chunks against a limit twice as high, refuse such a size first on real nodes: checked here on the tree alone)."""
    trees = tuple(q for q in hierarchical_parts("allreduce", "hier_tree", 32 << 30, 4, 4) if q.algorithm == "tree")
    sc = SimpleNamespace(bytes_per_rank="32GiB", plan=lambda: SimpleNamespace(parts=trees))
    with pytest.raises(
        McsimError,
        match=r"^Scenario: bytes_per_rank='32GiB' makes 2147483648 chunk ids of 4 B \(2 children of 1073741824 chunks "
        r"in a team of 4\); the immediate holds at most 2147483647 beside its way-down flag: raise ring_chunk$",
    ):
        buffers.check_team_ids(sc, 4096, 4)
    buffers.check_team_ids(sc, 4096, 8)  # half the chunks: they fit


def test_the_tree_s_nic_bytes_are_the_flat_double_tree_s_on_the_nodes():
    """The rail phase's NIC bytes: the flat double tree's closed form on the nodes (2 nodes x b from 4 nodes on, even;
    hier_ring's 2 b (nodes-1) beside it); the node phases' NVLink bytes as hier_ring's."""
    for nodes, gpus in ((2, 8), (3, 4), (4, 4), (16, 8)):
        b = allreduce_block_b(1 << 20, nodes * gpus)
        tree = hierarchical_b("allreduce", 1 << 20, nodes, gpus, algorithm="hier_tree")
        ring = hierarchical_b("allreduce", 1 << 20, nodes, gpus, algorithm="hier_ring")
        assert tree == (double_tree_bound_b(nodes * b, nodes), 2 * nodes * b * (gpus - 1))
        assert ring == (2 * b * (nodes - 1), tree[1]) == hierarchical_b("allreduce", 1 << 20, nodes, gpus)
    assert hierarchical_b("allreduce", 1 << 20, 16, 8, algorithm="hier_tree")[0] == 2 * 16 * (1 << 20) // 128
