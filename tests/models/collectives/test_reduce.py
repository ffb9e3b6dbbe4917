# SPDX-License-Identifier: GPL-2.0-only
"""Reduce baselines over RC RDMA WRITEs, the pipelined chain and MPICH's binomial tree, against closed
forms: byte-exact sums at the root, lossy, exact link traversals, the chain's latency."""

import numpy as np
import pytest

from mcsim.config.collectives import HOST_REDUCE_PS_PER_BYTE
from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario

ALGORITHMS = ["chain", "binomial"]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("ranks", [2, 3, 5, 16])
@pytest.mark.parametrize("n", [8, 100_000])
def test_the_root_ends_with_the_exact_sum(algorithm, ranks, n):
    for root in sorted({0, ranks - 1, ranks // 2}):
        r = Scenario(
            topology="fat-tree-k4",
            collective="reduce",
            algorithm=algorithm,
            ranks=ranks,
            root=root,
            bytes_per_rank=n,
            ring_chunk="16KiB",
            verify=True,
        ).run()
        # the root holds the sum, every other rank its own bytes unchanged
        assert r.complete and r.verified, (root, r.wrong_bytes)
        # every rank but the root sends its partial sum once
        expected = np.full(ranks, n)
        expected[root] = 0
        np.testing.assert_array_equal(r.injected_b, expected)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_188_ranks_on_the_testbed_sum_exactly(algorithm):
    r = Scenario(
        topology="testbed-188", collective="reduce", algorithm=algorithm, bytes_per_rank="16KiB", root=5, verify=True
    ).run()
    assert r.complete and r.verified and r.ranks == 188


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_lost_packets_are_resent_and_the_sum_stays_exact(algorithm, lossy_verified):
    lost, resent = lossy_verified(
        range(4),
        topology="fat-tree-k4",
        collective="reduce",
        algorithm=algorithm,
        bytes_per_rank="128KiB",
        ring_chunk="16KiB",
    )
    assert lost > 0 and resent > 0, "packets were really lost, and RC went back N for them"


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("hosts", [3, 8])
def test_link_traversals_on_one_switch_are_p_minus_1_buffers(algorithm, hosts, star_graph, chunked):
    # every rank but the root sends the buffer once, as WRITEs of 8 KiB in 4 KiB packets, each
    # acknowledged once; every packet crosses 2 links
    n, chunk_b, mtu = 40_000, 8192, 4096
    r = Scenario(
        topology=star_graph(hosts), collective="reduce", algorithm=algorithm, bytes_per_rank=n, ring_chunk=chunk_b
    ).run()
    packets, writes = chunked(n, chunk_b, mtu)
    assert r.complete
    assert r.fabric.link_traversals() == 2 * (hosts - 1) * (packets + writes)


@pytest.mark.parametrize("hosts", [2, 3, 9])
def test_the_chain_s_latency_is_p_minus_1_steps_and_sums(hosts, star_graph, star_step):
    # 4 bytes: P-1 steps, each a ring step (test_ring_reductions) and the reduction of 4 bytes
    sc = Scenario(topology=star_graph(hosts), collective="reduce", algorithm="chain", bytes_per_rank=4)
    r, fabric = sc.run(), sc.fabric
    assert r.time_ps == (hosts - 1) * (star_step(fabric, 4) + 4 * HOST_REDUCE_PS_PER_BYTE)


def test_the_binomial_root_receives_log2_p_buffers():
    r = Scenario(topology="fat-tree-k4", collective="reduce", algorithm="binomial", bytes_per_rank="1MiB").run()
    bound = 4 * (1 << 20) * 8 * 1e12 / r.data_rate_bps  # ceil(log2 16) = 4 children send to the root
    assert r.bound_ps == pytest.approx(bound)
    assert bound <= r.time_ps <= 1.15 * bound  # their sums' time, RC headers, path latencies


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"algorithm": "ring"}, r"^unknown algorithm for reduce 'ring'; choose one of binomial, chain$"),
        ({"algorithm": "chain", "root": 16}, r"^Scenario: root=16 must be 0\.\.15 \(a rank\)$"),
        (
            {"algorithm": "binomial", "verify": True, "bytes_per_rank": "1001B"},
            r"^Scenario: bytes_per_rank='1001B' and ring_chunk='64KiB' must be whole numbers of 32-bit integers",
        ),
    ],
)
def test_bad_reduce_input_is_one_line(kwargs, message):
    with pytest.raises(McsimError, match=message):
        Scenario(**({"topology": "fat-tree-k4", "collective": "reduce"} | kwargs))
