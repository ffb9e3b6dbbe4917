# SPDX-License-Identifier: GPL-2.0-only
"""The Broadcast baselines the multicast Broadcast is compared with: the pipelined chain and MPICH's
binomial tree over RC RDMA WRITEs, against closed forms."""

import numpy as np
import pytest

from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario

BASELINES = ["chain", "binomial"]


@pytest.mark.parametrize("algorithm", BASELINES)
@pytest.mark.parametrize("ranks", [2, 3, 5, 16])
@pytest.mark.parametrize("n", [8, 100_000])
def test_every_rank_ends_with_the_root_s_buffer(algorithm, ranks, n):
    for root in sorted({0, ranks - 1, ranks // 2}):
        r = Scenario(
            topology="fat-tree-k4",
            collective="broadcast",
            algorithm=algorithm,
            ranks=ranks,
            bytes_per_rank=n,
            root=root,
            ring_chunk="16KiB",
            verify=True,
        ).run()
        assert r.complete and r.verified, (root, r.wrong_bytes)
        # every rank but the root receives the buffer exactly once
        expected = np.full(ranks, n)
        expected[root] = 0
        np.testing.assert_array_equal(r.received_b, expected)


@pytest.mark.parametrize("algorithm", BASELINES)
def test_188_ranks_on_the_testbed_get_the_root_s_buffer(algorithm):
    r = Scenario(
        topology="testbed-188", collective="broadcast", algorithm=algorithm, bytes_per_rank="64KiB", root=7, verify=True
    ).run()
    assert r.complete and r.verified and r.ranks == 188


@pytest.mark.parametrize("algorithm", BASELINES)
def test_lost_packets_are_resent_and_every_byte_arrives(algorithm, lossy_verified):
    lost, resent = lossy_verified(
        range(6),
        topology="fat-tree-k4",
        collective="broadcast",
        algorithm=algorithm,
        bytes_per_rank="256KiB",
        ring_chunk="16KiB",
    )
    assert lost > 0 and resent > 0, "packets were really lost, and RC went back N for them"


@pytest.mark.parametrize("algorithm", BASELINES)
@pytest.mark.parametrize("hosts", [3, 8])
@pytest.mark.parametrize("n", [4, 40_000])
def test_link_traversals_on_one_switch_are_p_minus_1_buffers(algorithm, hosts, n, star_graph, chunked):
    # every rank but the root receives the buffer once, as WRITEs of 8 KiB cut into 4 KiB packets,
    # each WRITE acknowledged once; every packet crosses 2 links
    chunk_b, mtu = 8192, 4096
    r = Scenario(
        topology=star_graph(hosts), collective="broadcast", algorithm=algorithm, bytes_per_rank=n, ring_chunk=chunk_b
    ).run()
    packets, writes = chunked(n, chunk_b, mtu)
    assert r.complete
    assert r.fabric.link_traversals() == 2 * (hosts - 1) * (packets + writes)


@pytest.mark.parametrize("hosts", [2, 3, 9])
def test_the_chain_s_latency_is_p_minus_1_steps(hosts, star_graph, star_step):
    # 4 bytes: P-1 steps, each the sender NIC's latency, the packet's serialization up to the switch's
    # routing header and then whole, the switch latency, two cable delays, the receiver NIC's latency
    # and the host CPU's completion (the step of the ring Allgather: test_ring_reductions)
    sc = Scenario(topology=star_graph(hosts), collective="broadcast", algorithm="chain", bytes_per_rank=4)
    r, fabric = sc.run(), sc.fabric
    assert r.time_ps == (hosts - 1) * star_step(fabric, 4)


def test_the_binomial_tree_is_its_root_sending_log2_p_buffers():
    r = Scenario(topology="fat-tree-k4", collective="broadcast", algorithm="binomial", bytes_per_rank="1MiB").run()
    bound = 4 * (1 << 20) * 8 * 1e12 / r.data_rate_bps  # ceil(log2 16) = 4 children of the root
    assert r.bound_ps == pytest.approx(bound)
    # RC headers (46 B per 4 KiB), four ACK round trips between children, path latencies
    assert bound <= r.time_ps <= 1.03 * bound


def test_the_pipelined_chain_approaches_n_over_bw():
    r = Scenario(
        topology="fat-tree-k4", collective="broadcast", algorithm="chain", bytes_per_rank="16MiB", ring_chunk="16KiB"
    ).run()
    bound = (16 << 20) * 8 * 1e12 / r.data_rate_bps
    assert r.bound_ps == pytest.approx(bound)
    # RC headers (1.1 %) and the pipeline's fill: 15 hops of a 16 KiB chunk and its latency
    assert bound <= r.time_ps <= 1.04 * bound


def test_the_multicast_broadcast_is_faster_than_both_baselines_at_every_p():
    for ranks in (4, 16):
        times = {
            a: Scenario(
                topology="fat-tree-k4", collective="broadcast", algorithm=a, ranks=ranks, bytes_per_rank="256KiB"
            )
            .run()
            .time_ps
            for a in ("mcast", "chain", "binomial")
        }
        assert times["mcast"] < min(times["chain"], times["binomial"]), times


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"algorithm": "tree"}, r"^unknown algorithm for broadcast 'tree'; choose one of binomial, chain, mcast$"),
        ({"algorithm": "chain", "root": 16}, r"^Scenario: root=16 must be 0\.\.15 \(a rank\)$"),
    ],
)
def test_bad_broadcast_input_is_one_line(kwargs, message):
    with pytest.raises(McsimError, match=message):
        Scenario(**({"topology": "fat-tree-k4", "collective": "broadcast"} | kwargs))
