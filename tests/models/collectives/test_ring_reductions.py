# SPDX-License-Identifier: GPL-2.0-only
"""Host reductions against closed forms: the ring Reduce-Scatter and the ring Allreduce (Reduce-Scatter
of P blocks, then Allgather), byte-exact in verify mode, lossless and lossy, their exact packet counts,
their bandwidth bound and their latency term."""

import numpy as np
import pytest

from mcsim.config.collectives import HOST_REDUCE_PS_PER_BYTE
from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario


def blocks(n: int, p: int) -> list[int]:
    """The test's own split of an Allreduce's N bytes into P blocks: 4-byte elements when N is a multiple
    of 4, the first (elements mod P) blocks one element longer."""
    granule = 4 if n % 4 == 0 else 1
    q, longer = divmod(n // granule, p)
    return [(q + (b < longer)) * granule for b in range(p)]


def chunks_of(block_b: int, largest_b: int, chunk_b: int) -> list[int]:
    """The chunks of one block: every block has as many as the largest (at least one), empty ones past
    its end (a 0-byte SEND each)."""
    count = max(1, -(-largest_b // chunk_b))
    return [max(0, min(chunk_b, block_b - i * chunk_b)) for i in range(count)]


@pytest.mark.parametrize("collective", ["reduce_scatter", "allreduce"])
@pytest.mark.parametrize("ranks", [2, 3, 16])
@pytest.mark.parametrize("n", [8, 12, 64 * 1024 + 12])
def test_every_rank_ends_with_the_exact_sums(collective, ranks, n):
    # 8 B on 3 or 16 ranks leaves an Allreduce's last blocks empty; 64 KiB + 12 B splits unevenly
    r = Scenario(
        topology="fat-tree-k4",
        collective=collective,
        algorithm="ring",
        ranks=ranks,
        bytes_per_rank=n,
        ring_chunk="16KiB",
        verify=True,
    ).run()
    assert r.complete and r.verified, r.wrong_bytes
    np.testing.assert_array_equal(r.wrong_bytes, np.zeros(ranks))


@pytest.mark.parametrize(("collective", "n"), [("reduce_scatter", "1KiB"), ("allreduce", "16KiB")])
def test_188_ranks_on_the_testbed_end_with_the_exact_sums(collective, n):
    r = Scenario(topology="testbed-188", collective=collective, algorithm="ring", bytes_per_rank=n, verify=True).run()
    assert r.complete and r.verified and r.ranks == 188


@pytest.mark.parametrize("collective", ["reduce_scatter", "allreduce"])
def test_lost_packets_are_resent_and_the_sums_stay_exact(collective, lossy_verified):
    lost, resent = lossy_verified(
        range(6),
        topology="fat-tree-k4",
        collective=collective,
        algorithm="ring",
        bytes_per_rank="64KiB",
        ring_chunk="8KiB",
    )
    # a lost ACK may need no resend (a later one covers it); lost data always does
    assert lost > 0 and resent > 0, "packets were really lost, and RC went back N for them"


@pytest.mark.parametrize(
    ("collective", "n"), [("allreduce", 100_003), ("allreduce", 4 * 1024), ("reduce_scatter", 40_000)]
)
@pytest.mark.parametrize("hosts", [3, 5])
def test_link_traversals_on_one_switch_are_the_schedule_s_packets(collective, n, hosts, star_graph):
    # on one switch every packet crosses 2 links: each chunk (a WRITE, or a 0-byte SEND for an empty
    # one) is ceil(bytes / MTU) packets (at least 1) plus its ACK, and goes P-1 steps per phase
    chunk_b, mtu = 8192, 4096
    r = Scenario(
        topology=star_graph(hosts), collective=collective, algorithm="ring", bytes_per_rank=n, ring_chunk=chunk_b
    ).run()
    sizes = blocks(n, hosts) if collective == "allreduce" else [n] * hosts
    per_phase = sum(max(1, -(-c // mtu)) + 1 for b in sizes for c in chunks_of(b, max(sizes), chunk_b)) * (hosts - 1)
    phases = 2 if collective == "allreduce" else 1
    assert r.complete
    assert r.fabric.link_traversals() == 2 * phases * per_phase
    # bytes: every rank sends (P-1) blocks' worth per phase; over all ranks, each block P-1 times
    assert int(r.injected_b.sum()) == phases * (hosts - 1) * sum(sizes)


def test_ring_allreduce_is_within_2_percent_of_its_bandwidth_bound():
    # FDR brings a byte every 147 ps, slower than the default reduction (68 ps per byte)
    r = Scenario(topology="fat-tree-k4", collective="allreduce", algorithm="ring", bytes_per_rank="16MiB").run()
    p, n = r.ranks, 16 << 20
    bound = 2 * n * (p - 1) / p * 8 * 1e12 / r.data_rate_bps
    assert r.bound_ps == pytest.approx(bound)
    assert bound <= r.time_ps <= 1.02 * bound
    np.testing.assert_array_equal(r.injected_b, np.full(p, 2 * (p - 1) * n // p))  # 2N(P-1)/P per rank


@pytest.mark.slow
def test_on_the_testbed_the_ring_allreduce_is_within_2_percent_where_bandwidth_dominates():
    # 188 ranks: 2(P-1) = 374 steps of ~1.6 us each; at 64 MiB they are below 2 % of the bandwidth term
    # (at 1 MiB they are twice it: 2.6 x the bound)
    r = Scenario(
        topology="testbed-188", rate="56Gbps", collective="allreduce", algorithm="ring", bytes_per_rank="64MiB"
    ).run()
    p, n = 188, 64 << 20
    assert r.bound_ps == pytest.approx(2 * n * (p - 1) / p * 8 * 1e12 / r.data_rate_bps)
    assert r.bound_ps <= r.time_ps <= 1.02 * r.bound_ps


@pytest.mark.parametrize("collective", ["reduce_scatter", "allreduce", "allgather"])
@pytest.mark.parametrize("hosts", [2, 3, 9])
def test_the_latency_term_is_steps_times_the_step_s_closed_form(collective, hosts, star_graph, star_step):
    # one 4-byte element per block: every chunk is 4 B and goes 2(P-1) steps (Allreduce) or P-1; a step
    # is the sender NIC's latency, the packet's serialization on the host link up to the switch's
    # routing header (cut-through) and then whole on the switch's egress, the switch latency, two
    # cable delays, the receiver NIC's latency, the host CPU's completion and (Reduce-Scatter steps)
    # the reduction of 4 bytes
    payload = 4
    n = payload * (hosts if collective == "allreduce" else 1)
    sc = Scenario(topology=star_graph(hosts), collective=collective, algorithm="ring", bytes_per_rank=n)
    r, fabric = sc.run(), sc.fabric  # the wire format's physical overhead in header_b
    step = star_step(fabric, payload)
    reduce_steps = 0 if collective == "allgather" else hosts - 1
    steps = (2 if collective == "allreduce" else 1) * (hosts - 1)
    assert r.time_ps == steps * step + reduce_steps * payload * HOST_REDUCE_PS_PER_BYTE


def test_a_slow_reduction_sets_the_allreduce_s_pace():
    per_byte_ps = 400  # slower than the FDR link, which brings a byte every 8e12 / 54.5e9 = 147 ps
    r = Scenario(
        topology="fat-tree-k4",
        collective="allreduce",
        algorithm="ring",
        bytes_per_rank="1MiB",
        reduce_ps_per_byte=per_byte_ps,
    ).run()
    fast = Scenario(topology="fat-tree-k4", collective="allreduce", algorithm="ring", bytes_per_rank="1MiB").run()
    # every rank's engine adds the (P-1) N/P bytes of the Reduce-Scatter, one chunk at a time
    assert r.time_ps >= 15 * (1 << 20) // 16 * per_byte_ps
    assert r.time_ps > fast.time_ps


def test_at_400g_the_default_reduction_is_slower_than_the_link():
    # 400 Gbit/s brings a byte every 20 ps; one core adds one every 68 ps: the Reduce-Scatter's
    # (P-1) N/P bytes per rank set the time, not the bandwidth bound
    r = Scenario(
        topology="fat-tree-k4", rate="400Gbps", collective="allreduce", algorithm="ring", bytes_per_rank="16MiB"
    ).run()
    reduce_ps = 15 * (16 << 20) // 16 * HOST_REDUCE_PS_PER_BYTE
    assert r.time_ps >= reduce_ps > 1.5 * r.bound_ps


def test_the_reduction_cost_default_is_not_free():
    assert Scenario().reduce_ps_per_byte == HOST_REDUCE_PS_PER_BYTE > 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"collective": "allreduce", "algorithm": "mcast"},
            r"^unknown algorithm for allreduce 'mcast'; choose one of double_tree, halving_doubling, hier_ring, "
            r"hier_tree, innet, innet_mcast, nvls_ring, nvls_tree, ring, ring_mcast, tree; "
            r"did you mean 'ring_mcast'\?$",
        ),
        (
            {"collective": "allreduce", "algorithm": "ring", "verify": True, "bytes_per_rank": "1001B"},
            r"^Scenario: bytes_per_rank='1001B' and ring_chunk='64KiB' must be whole numbers of 32-bit integers",
        ),
    ],
)
def test_bad_reduction_input_is_one_line(kwargs, message):
    with pytest.raises(McsimError, match=message):
        Scenario(**({"topology": "fat-tree-k4"} | kwargs))
