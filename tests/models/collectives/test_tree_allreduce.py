# SPDX-License-Identifier: GPL-2.0-only
"""The pipelined binary tree Allreduce (NCCL's tree, one tree) against closed forms."""

import pytest

from mcsim.bounds import binary_tree_buffers
from mcsim.config.collectives import HOST_REDUCE_PS_PER_BYTE
from mcsim.config.rdma import HostCpuConfig
from mcsim.runs.scenario import Scenario


@pytest.mark.parametrize("ranks", [2, 3, 4, 5, 7, 16])
@pytest.mark.parametrize("n", [8, 100_000])
def test_every_rank_ends_with_the_exact_sum(ranks, n):
    r = Scenario(
        topology="fat-tree-k4",
        collective="allreduce",
        algorithm="tree",
        ranks=ranks,
        bytes_per_rank=n,
        ring_chunk="16KiB",
        verify=True,
    ).run()
    assert r.complete and r.verified, r.wrong_bytes
    # every edge carries the buffer twice: a partial sum up, the sum down
    assert int(r.injected_b.sum()) == 2 * (ranks - 1) * n


@pytest.mark.parametrize("algorithm", ["tree", "double_tree"])
def test_188_ranks_of_the_testbed_sum_exactly(algorithm):
    r = Scenario(
        topology="testbed-188", collective="allreduce", algorithm=algorithm, bytes_per_rank="16KiB", verify=True
    ).run()
    assert r.complete and r.verified and r.ranks == 188


@pytest.mark.parametrize("algorithm", ["tree", "double_tree"])
def test_lost_packets_are_resent_and_the_sums_stay_exact(algorithm, lossy_verified):
    lost, resent = lossy_verified(
        range(4),
        topology="fat-tree-k4",
        collective="allreduce",
        algorithm=algorithm,
        bytes_per_rank="128KiB",
        ring_chunk="16KiB",
    )
    assert lost > 0 and resent > 0, "packets were really lost, and RC went back N for them"


@pytest.mark.parametrize("hosts", [3, 8])
def test_link_traversals_on_one_switch_are_2_p_minus_1_buffers(hosts, star_graph, chunked):
    n, chunk_b, mtu = 40_000, 8192, 4096
    r = Scenario(
        topology=star_graph(hosts), collective="allreduce", algorithm="tree", bytes_per_rank=n, ring_chunk=chunk_b
    ).run()
    packets, writes = chunked(n, chunk_b, mtu)
    assert r.complete
    assert r.fabric.link_traversals() == 2 * 2 * (hosts - 1) * (packets + writes)


@pytest.mark.parametrize(("hosts", "depth"), [(2, 1), (3, 1), (7, 2), (8, 3)])
def test_small_buffers_go_up_and_down_the_tree(hosts, depth, star_graph, star_step):
    # 4 bytes: depth steps up (a ring step and the sum of 4 bytes, the second child's completion
    # queued behind the first's at an inner rank) and depth steps down (a ring step each)
    sc = Scenario(topology=star_graph(hosts), collective="allreduce", algorithm="tree", bytes_per_rank=4)
    r, fabric = sc.run(), sc.fabric
    step = star_step(fabric, 4)
    up = depth * (step + 4 * HOST_REDUCE_PS_PER_BYTE)
    # a rank with two children adds the second's chunk after the first's: one completion and one sum
    # more at most per level
    slack = depth * (HostCpuConfig().completion_ps + 4 * HOST_REDUCE_PS_PER_BYTE + 80 * 64)
    assert up + depth * step <= r.time_ps <= up + depth * step + slack


@pytest.mark.parametrize("ranks", [2, 3, 4, 5, 16])
def test_the_bound_is_the_busiest_rank_s_buffers(ranks):
    assert binary_tree_buffers(ranks) == {2: 1, 3: 2, 4: 2}.get(ranks, 3)
    r = Scenario(
        topology="fat-tree-k4", collective="allreduce", algorithm="tree", ranks=ranks, bytes_per_rank="1MiB"
    ).run()
    assert r.bound_ps == pytest.approx(binary_tree_buffers(ranks) * (1 << 20) * 8 * 1e12 / r.data_rate_bps)
    assert r.time_ps >= r.bound_ps
