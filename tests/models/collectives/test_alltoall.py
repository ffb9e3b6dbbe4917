# SPDX-License-Identifier: GPL-2.0-only
"""Alltoall over RC RDMA WRITEs, pairwise exchange (P-1 steps) and all at once (incast), against
closed forms."""

import numpy as np
import pytest

from mcsim.config.rdma import DEFAULT_NIC_LATENCY_PS, HostCpuConfig
from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario

ALGORITHMS = ["pairwise", "all_at_once"]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("ranks", [2, 3, 5, 16])
@pytest.mark.parametrize("n", [8, 100_000])
def test_every_rank_ends_with_its_block_of_every_rank(algorithm, ranks, n):
    r = Scenario(
        topology="fat-tree-k4",
        collective="alltoall",
        algorithm=algorithm,
        ranks=ranks,
        bytes_per_rank=n,
        ring_chunk="16KiB",
        verify=True,
    ).run()
    assert r.complete and r.verified, r.wrong_bytes
    # every rank sends and receives N(P-1): its own block is copied, not sent
    np.testing.assert_array_equal(r.injected_b, np.full(ranks, n * (ranks - 1)))
    np.testing.assert_array_equal(r.received_b, np.full(ranks, n * (ranks - 1)))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_188_ranks_on_the_testbed_exchange_every_block(algorithm):
    r = Scenario(
        topology="testbed-188", collective="alltoall", algorithm=algorithm, bytes_per_rank="2KiB", verify=True
    ).run()
    assert r.complete and r.verified and r.ranks == 188


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_lost_packets_are_resent_and_every_block_arrives(algorithm, lossy_verified):
    lost, resent = lossy_verified(
        range(4),
        topology="fat-tree-k4",
        collective="alltoall",
        algorithm=algorithm,
        bytes_per_rank="32KiB",
        ring_chunk="8KiB",
    )
    assert lost > 0 and resent > 0, "packets were really lost, and RC went back N for them"


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("hosts", [3, 6])
def test_link_traversals_on_one_switch_are_p_times_p_minus_1_blocks(algorithm, hosts, star_graph, chunked):
    # each ordered pair moves one block: WRITEs of 8 KiB in 4 KiB packets, each WRITE acknowledged
    # once, every packet over 2 links
    n, chunk_b, mtu = 20_000, 8192, 4096
    r = Scenario(
        topology=star_graph(hosts), collective="alltoall", algorithm=algorithm, bytes_per_rank=n, ring_chunk=chunk_b
    ).run()
    packets, writes = chunked(n, chunk_b, mtu)
    assert r.complete
    assert r.fabric.link_traversals() == 2 * hosts * (hosts - 1) * (packets + writes)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_on_one_switch_both_are_within_2_percent_of_the_bound(algorithm, star_graph):
    # FDR: a 1 MiB block takes 154 us; a pairwise step adds an ACK's round trip and a path latency
    r = Scenario(
        topology=star_graph(8), rate="56Gbps", collective="alltoall", algorithm=algorithm, bytes_per_rank="1MiB"
    ).run()
    bound = 7 * (1 << 20) * 8 * 1e12 / r.data_rate_bps  # N(P-1)/BW
    assert r.bound_ps == pytest.approx(bound)
    assert bound <= r.time_ps <= 1.02 * bound


@pytest.mark.parametrize("hosts", [2, 3, 6])
def test_the_pairwise_latency_is_p_minus_1_steps(hosts, star_graph, star_step):
    # 4 bytes a block: step s ends when r-s's WRITE is in (a ring step: test_ring_reductions) and r's
    # WRITE to r+s is acknowledged; the ACK leaves the receiver's NIC at the WRITE's last bit and
    # is back before the receive completes (after the NIC's receive latency and the host CPU), so
    # the receive ends each step: P-1 ring steps
    sc = Scenario(topology=star_graph(hosts), collective="alltoall", algorithm="pairwise", bytes_per_rank=4)
    r, fabric = sc.run(), sc.fabric
    ack_header_b = 8 + 12 + 4 + 4 + 2  # LRH + BTH + AETH + ICRC + VCRC
    path = fabric.switch_latency_ps + 2 * 100_000  # star_graph: 100 ns cables, 80 ps a byte
    ack = path + 80 * (fabric.routing_header_b + ack_header_b + fabric.header_b)
    assert ack < DEFAULT_NIC_LATENCY_PS + HostCpuConfig().completion_ps
    assert r.time_ps == (hosts - 1) * star_step(fabric, 4)


def test_all_at_once_takes_one_step_where_pairwise_takes_p_minus_1(star_graph):
    # small blocks: every WRITE is posted at the start, so the exchange costs about one step plus
    # the P-1 WRITEs' serialization, against P-1 steps pairwise
    kw = {"topology": star_graph(8), "collective": "alltoall", "bytes_per_rank": 64}
    together = Scenario(algorithm="all_at_once", **kw).run()
    pairwise = Scenario(algorithm="pairwise", **kw).run()
    assert together.time_ps < pairwise.time_ps / 4


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"algorithm": "ring"},
            r"^unknown algorithm for alltoall 'ring'; choose one of all_at_once, pairwise$",
        ),
    ],
)
def test_bad_alltoall_input_is_one_line(kwargs, message):
    with pytest.raises(McsimError, match=message):
        Scenario(**({"topology": "fat-tree-k4", "collective": "alltoall"} | kwargs))
