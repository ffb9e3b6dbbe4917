# SPDX-License-Identifier: GPL-2.0-only
"""Collectives against closed forms: ring and multicast Allgather, Broadcast, repair."""

import numpy as np
import pytest

from mcsim.config.fabric import Faults
from mcsim.config.rdma import HostCpuConfig
from mcsim.errors import McsimError
from mcsim.native import runtime
from mcsim.runs.scenario import Scenario, scenario_of

N = 256 * 1024  # bytes per rank: 64 chunks


def test_cxx_test_suite_passes(capfd):
    """A ring Allgather's per-rank bytes and time against closed forms, in C++
    (collectives/test/collectives-test-suite.cc)."""
    assert runtime.run_cxx_test_suite("mcsim-collectives") == 0
    assert "PASS mcsim-collectives" in capfd.readouterr().out


@pytest.mark.parametrize(
    ("collective", "algorithm"), [("allgather", "ring"), ("allgather", "mcast"), ("broadcast", "mcast")]
)
def test_every_rank_ends_with_every_byte(collective, algorithm):
    r = Scenario(topology="fat-tree-k4", collective=collective, algorithm=algorithm, bytes_per_rank="100000").run()
    assert r.complete
    assert (r.rank["repaired_chunks"] == 0).all(), "no loss, so nothing to repair"
    if algorithm == "mcast":
        chunks = -(-100_000 // 4096)
        lacking = chunks * (r.ranks - 1) if collective == "allgather" else chunks
        expected = np.full(r.ranks, lacking)
        if collective == "broadcast":
            expected[0] = 0  # the root
        np.testing.assert_array_equal(r.rank["chunks_received"], expected)


def test_ring_allgather_is_within_2_percent_of_the_bound():
    r = Scenario(topology="fat-tree-k4", rate="400Gbps", algorithm="ring", bytes_per_rank="1MiB").run()
    bound = r.receive_bound_ps  # N(P-1)/BW at the data rate
    assert bound <= r.time_ps <= bound * 1.02  # RC headers (26 B per 4 KiB) and one path latency


# a receiver that keeps up: the host CPU's 100 ns + 4 KiB at 100 Gbit/s (428 ns) does at FDR
# (a packet every 605 ns); at 200 Gbit/s (a packet every 165 ns) it takes a 61 ns one
KEEPS_UP = {"56Gbps": HostCpuConfig(), "200Gbps": HostCpuConfig(completion_ps=20_000, memcpy_bps=800 * 10**9)}


@pytest.mark.parametrize("rate", list(KEEPS_UP))
def test_multicast_allgather_is_never_below_the_bound_and_within_10_percent(rate):
    sc = scenario_of(
        topology="fat-tree-k4", rate=rate, algorithm="mcast", bytes_per_rank="1MiB", processor=KEEPS_UP[rate]
    )
    r = sc.run()
    bound = r.receive_bound_ps
    assert r.complete and (r.rank["data_timeouts"] == 0).all()
    assert bound <= r.time_ps <= bound * 1.10  # UD multicast headers (78 B per 4 KiB), token hand-offs


def test_multicast_injects_n_per_rank_and_ring_n_times_p_minus_1():
    ring = Scenario(topology="fat-tree-k4", algorithm="ring", bytes_per_rank=str(N)).run()
    mcast = Scenario(topology="fat-tree-k4", algorithm="mcast", bytes_per_rank=str(N)).run()
    np.testing.assert_array_equal(mcast.injected_b, np.full(16, N))  # control messages carry no payload
    np.testing.assert_array_equal(ring.injected_b, np.full(16, N * 15))


@pytest.mark.parametrize("hosts", [4, 8])
def test_link_traversals_on_one_switch_match_2_minus_2_over_p(hosts, star_graph):
    topo = star_graph(hosts)
    chunks = N // 4096
    ring = Scenario(topology=topo, algorithm="ring", bytes_per_rank=str(N), ring_chunk="64KiB").run()
    mcast = Scenario(topology=topo, algorithm="mcast", bytes_per_rank=str(N), roots=2).run()
    # ring: every data packet crosses 2 links, plus one ACK per 16-packet WRITE (also 2 links)
    ring_data = ring.fabric.link_traversals() - 2 * hosts * (hosts - 1) * chunks // 16
    # multicast: each datagram crosses 1 + (P-1) links; control: a token per non-head rank and a
    # FIN per rank, each a 0-byte SEND and its ACK over 2 links
    mcast_data = mcast.fabric.link_traversals() - 4 * (hosts - 2) - 4 * hosts
    assert ring_data == 2 * hosts * (hosts - 1) * chunks
    assert mcast_data == hosts * hosts * chunks
    assert ring_data / mcast_data == pytest.approx(2 - 2 / hosts)


def test_one_root_at_a_time_is_slower_than_two():
    k1 = Scenario(topology="fat-tree-k4", algorithm="mcast", bytes_per_rank="64KiB", roots=1).run()
    k2 = Scenario(topology="fat-tree-k4", algorithm="mcast", bytes_per_rank="64KiB", roots=2).run()
    assert k1.complete and k2.complete
    assert k1.time_ps > k2.time_ps  # 15 token hand-offs on the critical path instead of 7


def test_a_receiver_too_slow_for_the_link_loses_chunks_and_repair_delivers_them():
    # all 16 ranks multicast at once (no tokens to pace them); a 4 KiB staged completion costs the
    # host CPU 100 ns + 328 ns while a packet arrives every 84 ns: the receive queues overrun
    r = Scenario(topology="fat-tree-k4", rate="400Gbps", algorithm="mcast", bytes_per_rank=str(N), roots=16).run()
    assert r.complete
    assert r.rank["repaired_chunks"].sum() > 0 and r.rank["repair_reads"].sum() > 0
    assert (r.rank["data_timeouts"] == 1).all()
    assert r.time_ps > 5 * r.receive_bound_ps  # the data phase waited for its timeout
    # what was lost is exactly what was repaired: received + repaired = every chunk a rank lacks
    lacking = (N // 4096) * 15
    np.testing.assert_array_equal(r.rank["chunks_received"] + r.rank["repaired_chunks"], np.full(16, lacking))


def test_a_token_behind_a_busy_cpu_paces_the_roots():
    # with tokens (K=2) the next root starts only when its CPU has worked through the backlog, so
    # the receive queues never overrun, but the run takes the CPU's time, not the link's
    r = Scenario(topology="fat-tree-k4", rate="400Gbps", algorithm="mcast", bytes_per_rank=str(N), roots=2).run()
    assert r.complete and r.rank["repaired_chunks"].sum() == 0
    cpu_ps = 100_000 + 4096 * 8 * 10**12 // (100 * 10**9)  # per staged completion
    lacking = (N // 4096) * 15
    assert r.time_ps >= lacking * cpu_ps  # every rank's CPU handled every chunk, one at a time


def test_same_scenario_twice_is_identical():
    sc = Scenario(topology="fat-tree-k4", algorithm="mcast", bytes_per_rank="64KiB", rate="400Gbps")
    a, b = sc.run(), sc.run()
    np.testing.assert_array_equal(a.finish_ps, b.finish_ps)
    for k in a.rank:
        np.testing.assert_array_equal(a.rank[k], b.rank[k])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"roots": 17}, r"Scenario: roots=17 must be 1..16 \(the ranks\)"),
        ({"bytes_per_rank": "0"}, r"Scenario: bytes_per_rank='0' must be > 0"),
        (
            {"algorithm": "tree"},
            r"unknown algorithm for allgather 'tree'; choose one of bruck, hier_mcast, hier_ring, mcast, nvls_ring, "
            r"recursive_doubling, ring",
        ),
        (
            {"collective": "broadcast", "algorithm": "ring"},
            r"unknown algorithm for broadcast 'ring'; choose one of binomial, chain, mcast",
        ),
        (
            {"collective": "gather"},
            r"unknown collective 'gather'; choose one of allgather, allreduce, alltoall, broadcast, reduce, "
            r"reduce_scatter",
        ),
        ({"ranks": 17}, r"Scenario: ranks=17 must be 2..16 \(the hosts of fat-tree-k4\)"),
        ({"rate": "fast"}, r"rate='fast' is not a rate"),
        ({"mtu": "3000"}, r"Scenario: mtu='3000' is not an MTU"),
        ({"topology": "fat-tree-k5"}, r"unknown topology 'fat-tree-k5'"),
    ],
)
def test_bad_scenario_is_one_line(kwargs, message):
    with pytest.raises(McsimError, match=message):  # a Scenario's fields and the short names
        scenario_of(**({"topology": "fat-tree-k4"} | kwargs))


def test_ring_reduce_scatter_is_within_2_percent_of_the_bound():
    r = Scenario(topology="fat-tree-k4", collective="reduce_scatter", algorithm="ring", bytes_per_rank="1MiB").run()
    assert r.complete
    assert r.receive_bound_ps <= r.time_ps <= 1.02 * r.receive_bound_ps
    np.testing.assert_array_equal(r.injected_b, np.full(16, 15 << 20))  # N(P-1) per rank


def test_reduction_cost_slows_the_reduce_scatter_by_the_closed_form():
    per_byte_ps = 400  # slower than the FDR link, which brings a byte every 8e12 / 54.5e9 = 147 ps
    slow = Scenario(
        topology="fat-tree-k4",
        collective="reduce_scatter",
        algorithm="ring",
        bytes_per_rank="1MiB",
        reduce_ps_per_byte=per_byte_ps,
    ).run()
    # every rank's engine adds up the (P-1) N bytes it receives, one chunk at a time
    assert slow.complete
    assert slow.time_ps >= 15 * (1 << 20) * per_byte_ps


@pytest.mark.parametrize("algorithm", ["ring", "mcast"])
def test_allgather_and_reduce_scatter_at_once_share_the_receive_link(algorithm):
    both = Scenario(
        topology="fat-tree-k4", algorithm=algorithm, bytes_per_rank="256KiB", overlap="reduce_scatter"
    ).run()
    assert both.complete and both.concurrent.complete
    assert both.concurrent.collective == "reduce_scatter"
    # every rank receives (P-1)N for each of the two through one link
    last = max(both.time_ps, both.concurrent.time_ps)
    assert last >= 2 * both.receive_bound_ps


@pytest.mark.parametrize("algorithm", ["ring", "mcast"])
def test_every_rank_ends_with_every_byte_under_random_loss(algorithm):
    r = scenario_of(topology="fat-tree-k4", algorithm=algorithm, bytes_per_rank=str(N), loss=1e-3, seed=3).run()
    assert r.complete
    assert r.fabric.drops_by_cause()["loss"] > 0, "packets were really lost"
    if algorithm == "ring":
        assert r.summary()["retransmits"] > 0  # RC went back N for what was lost
    if algorithm == "mcast":
        assert r.rank["repaired_chunks"].sum() > 0 and r.rank["repair_reads"].sum() > 0


def test_a_lost_first_chunk_of_the_first_root_is_repaired_by_every_other_rank():
    # host 0 heads the first sequence: the first packet its port sends is chunk 0 of its shard,
    # lost on its way to the switch, so no other rank has it
    r = Scenario(
        topology="fat-tree-k4", algorithm="mcast", bytes_per_rank=str(N), faults=Faults(drops=[(0, 0, 0)])
    ).run()
    assert r.complete
    expected = np.ones(16, dtype=np.uint64)
    expected[0] = 0
    np.testing.assert_array_equal(r.rank["repaired_chunks"], expected)
    np.testing.assert_array_equal(r.rank["repair_reads"], expected)
    np.testing.assert_array_equal(r.rank["need_fetches"], expected)
    # host 0's last chunk arrives after the lost one, so every rank asks for it at once (early
    # repair): no rank waits for the data timeout
    np.testing.assert_array_equal(r.rank["data_timeouts"], np.zeros(16, dtype=np.uint64))
    assert r.time_ps < Scenario(topology="fat-tree-k4", algorithm="mcast", bytes_per_rank=str(N)).data_timeout_ps()
