# SPDX-License-Identifier: GPL-2.0-only
"""NCCL's double binary tree Allreduce (algorithm='double_tree'): two pipelined binary trees at once, each
on half the buffer, the second the first's mirror (P even) or shifted by one (P odd). Byte-exact sums,
with loss; every rank receives exactly its trees' halves (the C++ trees against the closed form's
degrees); exact link traversals; the bound is the busiest rank's halves, 2N for even P >= 4. The
testbed's 188 ranks and the lossy runs: test_tree_allreduce.py, beside the single tree's."""

import numpy as np
import pytest

from mcsim.bounds import double_tree_bound_b, in_order_degrees, tree_halves
from mcsim.config.collectives import HOST_REDUCE_PS_PER_BYTE, TeamSpec
from mcsim.config.rdma import HostCpuConfig
from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario


def degrees(ranks: int) -> tuple[list[int], list[int]]:
    """Per rank, its edges (children and parent) in the first and in the second tree."""
    d = in_order_degrees(ranks)
    return d, [d[ranks - 1 - r] if ranks % 2 == 0 else d[(r - 1) % ranks] for r in range(ranks)]


@pytest.mark.parametrize("ranks", [2, 3, 4, 5, 6, 7, 8, 16, 17, 188])
def test_each_tree_is_a_tree_of_log_depth_and_even_p_splits_the_inner_ranks(ranks):
    first, second = degrees(ranks)
    assert sum(first) == sum(second) == 2 * (ranks - 1)  # P-1 edges each
    assert max(first) <= 3  # a binary tree: two children and a parent
    if ranks % 2 == 0:  # a rank with children in one tree is a leaf of the other
        assert all(min(a, b) == 1 for a, b in zip(first, second, strict=True))


@pytest.mark.parametrize("ranks", [2, 3, 5, 16])
@pytest.mark.parametrize("n", [4, 8, 40_004, 1 << 20])  # one element (one tree only), two, many
def test_every_rank_ends_with_the_exact_sum_and_receives_its_trees_halves(ranks, n):
    r = Scenario(
        topology="fat-tree-k4",
        ranks=ranks,
        collective="allreduce",
        algorithm="double_tree",
        bytes_per_rank=n,
        ring_chunk="16KiB",
        verify=True,
    ).run()
    assert r.complete and r.verified, r.wrong_bytes
    # per tree: its half from each child on the way up and from the parent on the way down
    first, second = degrees(ranks)
    half, rest = tree_halves(n)
    expected = np.array(first) * half + np.array(second) * rest
    np.testing.assert_array_equal(r.received_b, expected)
    np.testing.assert_array_equal(r.injected_b, expected)  # and as much sent: up to the parent, down to children
    assert r.bound_ps == pytest.approx(expected.max() * 8e12 / r.data_rate_bps)
    assert r.time_ps >= r.bound_ps


def test_bytes_not_whole_integers_split_by_bytes():
    r = Scenario(
        topology="fat-tree-k4", ranks=6, collective="allreduce", algorithm="double_tree", bytes_per_rank=100_001
    ).run()
    assert r.complete and tree_halves(100_001) == (50_001, 50_000)
    first, second = degrees(6)
    np.testing.assert_array_equal(r.received_b, np.array(first) * 50_001 + np.array(second) * 50_000)


@pytest.mark.parametrize("hosts", [3, 8])
def test_link_traversals_on_one_switch_are_each_half_up_and_down_every_edge(hosts, star_graph, chunked):
    # every packet crosses 2 links; each tree's half goes up and down its P-1 edges; each WRITE is
    # acknowledged, ACKs queued behind the responder's data going out as one cumulative ACK (so between
    # one per edge and direction and one per WRITE)
    n, chunk_b, mtu = 80_000, 8192, 4096
    r = Scenario(
        topology=star_graph(hosts),
        collective="allreduce",
        algorithm="double_tree",
        bytes_per_rank=n,
        ring_chunk=chunk_b,
    ).run()
    halves = [chunked(half, chunk_b, mtu) for half in tree_halves(n)]  # (packets, WRITEs) per half
    data = 2 * (hosts - 1) * sum(packets for packets, _ in halves)
    sent = int(r.nic["tx_packets"].sum())
    assert r.complete
    assert r.fabric.link_traversals() == 2 * sent
    assert 2 * 2 * (hosts - 1) <= sent - data <= 2 * (hosts - 1) * sum(writes for _, writes in halves)


@pytest.mark.parametrize(("hosts", "depth"), [(2, 1), (3, 2), (5, 3), (8, 3)])
def test_one_element_goes_up_and_down_the_first_tree(hosts, depth, star_graph, star_step):
    # 4 bytes: one element, all on the in-order tree (rank 0 its root, with one child): depth steps up
    # (a ring step and the sum of 4 bytes, a second child's completion queued behind the first's) and
    # depth steps down
    sc = Scenario(topology=star_graph(hosts), collective="allreduce", algorithm="double_tree", bytes_per_rank=4)
    r, fabric = sc.run(), sc.fabric
    assert r.first_phase is None and r.rank["chunks_received"].sum() == 2 * (hosts - 1)  # one tree's edges, twice
    step = star_step(fabric, 4)
    up = depth * (step + 4 * HOST_REDUCE_PS_PER_BYTE)
    slack = depth * (HostCpuConfig().completion_ps + 4 * HOST_REDUCE_PS_PER_BYTE + 80 * 64)
    assert up + depth * step <= r.time_ps <= up + depth * step + slack


def test_where_bandwidth_dominates_two_trees_beat_one_by_their_bounds_ratio(star_graph):
    # 16 ranks on one switch, 16 MiB: the single tree's inner ranks receive 3N, the double tree's busiest 2N
    kw = {"topology": star_graph(16), "collective": "allreduce", "bytes_per_rank": "16MiB"}
    one = Scenario(**kw, algorithm="tree").run()
    two = Scenario(**kw, algorithm="double_tree").run()
    assert two.bound_ps == pytest.approx(2 / 3 * one.bound_ps) == pytest.approx(2 * (16 << 20) * 80)
    assert two.bound_ps <= two.time_ps <= 2 / 3 * one.time_ps


def test_a_team_spec_is_one_tree():
    with pytest.raises(McsimError, match=r"^TeamSpec: allreduce double_tree is two teams \(TWO_PHASE, SPLIT\)$"):
        TeamSpec(collective="allreduce", algorithm="double_tree", hosts=(0, 1), bytes_per_rank_b=8)
    with pytest.raises(McsimError, match=r"^unknown tree_shape 'mirror'; choose one of heap, in_order, second"):
        TeamSpec(collective="allreduce", algorithm="tree", hosts=(0, 1), bytes_per_rank_b=8, tree_shape="mirror")


def test_bound_of_the_double_tree():
    assert double_tree_bound_b(1 << 20, 2) == 1 << 20  # each rank: its half up, the other half down
    assert double_tree_bound_b(1 << 20, 3) == 3 << 19
    assert all(double_tree_bound_b(1 << 20, p) == 2 << 20 for p in (4, 6, 8, 16, 188))
