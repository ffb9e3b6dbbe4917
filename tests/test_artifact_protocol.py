# SPDX-License-Identifier: GPL-2.0-only
"""The SC'24 artifact's protocol options against closed forms: each changes the result in the
direction and by the amount the closed form says."""

import math

import networkx as nx
import pytest

from mcsim.errors import McsimError
from mcsim.fabric import FabricConfig, Faults
from mcsim.link import star as link_star
from mcsim.physics import Link
from mcsim.rdma import HostCpuConfig, RdmaConfig
from mcsim.scenario import Scenario, artifact_protocol

MTU = 4096
MCAST_HEADER_B = 78  # UD SEND with immediate to a group: LRH 8 + GRH 40 + BTH 12 + DETH 8 + ImmDt 4 + ICRC 4 + VCRC 2


@pytest.mark.parametrize("send_latency_ps", [300_000, 2_000_000])
@pytest.mark.parametrize(
    ("kwargs", "chunks", "sources"),
    [
        ({"collective": "broadcast", "bytes_per_rank": "1MiB", "batch": 32}, 256, 1),
        # one sequence of 16 roots, each after its predecessor's whole shard: their delays add up
        ({"collective": "allgather", "roots": 1, "bytes_per_rank": "64KiB", "batch": 4}, 16, 16),
    ],
)
def test_stop_and_wait_batches_idle_the_link_for_a_doorbell_per_batch(kwargs, chunks, sources, send_latency_ps):
    """With the artifact's batches a root posts the next batch only when the last one's signalled
    completion is in (as its last datagram leaves); its first byte then leaves SendLatency later, so
    the link idles for SendLatency less one datagram's serialization after every batch but the
    last, where a sliding window keeps it busy. At FDR with 300 ns of SendLatency a 4 KiB datagram
    outlasts the doorbell: nothing changes."""
    rdma = RdmaConfig(send_latency_ps=send_latency_ps)

    def time_ps(batching: str) -> int:
        return Scenario(topology="fat-tree-k4", algorithm="mcast", batching=batching, rdma=rdma, **kwargs).run().time_ps

    link = Link.from_edge(Scenario(topology="fat-tree-k4").graph().edges[0, 16])
    bubble_ps = max(0, send_latency_ps - link.tx_ps(MTU + MCAST_HEADER_B))
    batches = -(-chunks // kwargs["batch"])
    assert time_ps("stop_and_wait") - time_ps("window") == sources * (batches - 1) * bubble_ps


def test_unknown_batching_is_one_line():
    with pytest.raises(McsimError, match=r"^unknown batching 'sync'; choose one of stop_and_wait, window$"):
        Scenario(topology="fat-tree-k4", batching="sync")


def test_the_timeout_rule_divides_by_the_link_bw_it_is_given():
    """The data phase ends timeout_scale x N(P-1)/LINK_BW after the start (the artifact's rule;
    LINK_BW = the hosts' data rate unless timeout_rate sets it). A Broadcast whose last chunk is
    lost waits for that timeout before it repairs: halving LINK_BW shifts the finish by exactly the
    timeout's growth."""
    n = 256 * 1024
    base = {"topology": "fat-tree-k4", "algorithm": "mcast", "collective": "broadcast", "bytes_per_rank": n}
    drop = Faults(drops=[(0, 0, n // MTU - 1)])  # the root's last datagram: every receiver misses it
    default = Scenario(**base, faults=drop)
    data_rate = default.data_rate_bps
    half = Scenario(**base, faults=drop, timeout_rate=f"{data_rate // 2}bps")
    assert default.data_timeout_ps() == int(5.0 * (n * 8 * 10**12 // data_rate))
    assert half.data_timeout_ps() == int(5.0 * (n * 8 * 10**12 // (data_rate // 2)))
    a, b = default.run(), half.run()
    assert (a.rank["data_timeouts"][1:] == 1).all() and (b.rank["data_timeouts"][1:] == 1).all()  # receivers
    assert b.time_ps - a.time_ps == half.data_timeout_ps() - default.data_timeout_ps()
    # the artifact's LINK_BW as a nominal figure: 56 Gbit/s for FDR's 54.5 of data, a shorter timeout
    nominal = Scenario(**base, timeout_rate="56Gbps")
    assert nominal.data_timeout_ps() == int(5.0 * (n * 8 * 10**12 // 56_000_000_000)) < default.data_timeout_ps()


@pytest.mark.parametrize("bad", ["fast", "0Gbps", 56])
def test_bad_timeout_rate_is_one_line(bad):
    with pytest.raises(McsimError, match=r"timeout_rate") as err:
        Scenario(topology="fat-tree-k4", timeout_rate=bad)
    assert "\n" not in str(err.value)


FDR = Link.from_edge(Scenario(topology="fat-tree-k4").graph().edges[0, 16])


def star(hosts: int) -> nx.Graph:
    """hosts FDR hosts on one switch: every pair of ranks is the same distance apart."""
    return link_star(hosts, FDR)


RC_SEND_IMM_B = 30  # LRH 8 + BTH 12 + ImmDt 4 + ICRC 4 + VCRC 2; an ACK (AETH 4 for ImmDt) is as large


@pytest.mark.parametrize("hosts", [16, 12])
@pytest.mark.parametrize("fast_completions", [False, True])
def test_each_barrier_costs_log2_p_rounds_of_a_0_byte_rc_exchange(hosts, fast_completions):
    """Every rank SENDs 0 bytes to rank r + 2^k in round k and moves on when its SEND's ACK is back
    and rank r - 2^k's SEND has been processed: a round is the send latency, one trip, and then the
    longer of the ACK's trip back and the receive latency plus the completion's CPU time. On one
    switch every trip is the same: tx + (switch latency + LRH time) + 2 link delays."""
    g = star(hosts)
    link = Link.from_edge(g.edges[0, hosts])
    fab, cpu = FabricConfig(), HostCpuConfig(completion_ps=0 if fast_completions else 100_000)
    rdma = RdmaConfig(processor=cpu, receive_latency_ps=0 if fast_completions else 300_000)
    trip = link.tx_ps(RC_SEND_IMM_B) + fab.switch_latency_ps + link.tx_ps(8) + 2 * link.delay_ps
    ack_ps, message_ps = trip, rdma.receive_latency_ps + cpu.completion_ps
    round_ps = rdma.send_latency_ps + trip + max(ack_ps, message_ps)
    assert (ack_ps > message_ps) == fast_completions  # both sides of the max are tested
    rounds = math.ceil(math.log2(hosts))

    def time_ps(barriers: int) -> int:
        kw = {"collective": "broadcast", "bytes_per_rank": "4KiB", "barriers": barriers, "rdma": rdma}
        return Scenario(topology=g, algorithm="mcast", **kw).run().time_ps

    base = time_ps(0)
    for barriers in (1, 2):
        assert time_ps(barriers) - base == barriers * rounds * round_ps


def test_the_barriers_delay_every_rank_of_an_allgather_on_a_fat_tree():
    """On fat-tree-k4 the trips differ (same edge switch, pod, or across the core), so a round lasts
    as long as its longest chain: at least the cheapest round, at most the dearest."""
    rdma, fab = RdmaConfig(), FabricConfig()
    link = Link.from_edge(Scenario(topology="fat-tree-k4").graph().edges[0, 16])
    hop = fab.switch_latency_ps + link.tx_ps(8)
    near = link.tx_ps(RC_SEND_IMM_B) + hop + 2 * link.delay_ps  # hosts on one edge switch
    far = link.tx_ps(RC_SEND_IMM_B) + 5 * hop + 6 * link.delay_ps  # across a core switch
    cpu = HostCpuConfig()

    def round_ps(trip: int) -> int:
        return rdma.send_latency_ps + trip + max(trip, rdma.receive_latency_ps + cpu.completion_ps)

    runs = {b: Scenario(topology="fat-tree-k4", bytes_per_rank="64KiB", barriers=b).run() for b in (0, 2)}
    delay = runs[2].finish_ps - runs[0].finish_ps
    assert (2 * 4 * round_ps(near) <= delay).all() and (delay <= 2 * 4 * round_ps(far)).all()
    assert runs[2].rank["data_phase_end_ps"].min() > runs[0].rank["data_phase_end_ps"].min()


def test_bad_barriers_is_one_line():
    with pytest.raises(McsimError, match=r"^Scenario: barriers=-1 must be 0..64$"):
        Scenario(topology="fat-tree-k4", barriers=-1)


RC_READ_REQUEST_B = 42  # LRH 8 + BTH 12 + RETH 16 + ICRC 4 + VCRC 2


@pytest.mark.parametrize("gaps", [[1, 3, 5], [2, 6, 9, 12], [0, 15]])
def test_one_outstanding_repair_read_waits_a_round_trip_per_gap(gaps):
    """A receiver that lost m separate chunks of the root's shard repairs them with m READs from
    its neighbour (the root, with 2 ranks). Posted at once, the responses come back to back; one at a
    time (the artifact's), each further READ is posted when the previous response is in: it adds its
    send latency, the request's trip, and the response's first bits' way back (switch latency, LRH
    time, link delays), exactly."""
    g = star(2)
    link = Link.from_edge(g.edges[0, 2])
    rdma, fab = RdmaConfig(), FabricConfig()
    drops = Faults(drops=[(0, 0, i) for i in gaps])  # the root's datagrams, 16 of them

    def run(repair_reads: int):
        kw = {"collective": "broadcast", "bytes_per_rank": "64KiB", "faults": drops, "repair_reads": repair_reads}
        kw["verify"] = True  # the repaired chunks are the root's bytes
        return Scenario(topology=g, algorithm="mcast", **kw).run()

    many, one = run(0), run(1)
    assert many.rank["repair_reads"][1] == one.rank["repair_reads"][1] == len(gaps)
    assert one.verified and many.verified
    hop = fab.switch_latency_ps + link.tx_ps(8) + 2 * link.delay_ps
    per_read = rdma.send_latency_ps + link.tx_ps(RC_READ_REQUEST_B) + 2 * hop
    assert one.time_ps - many.time_ps == (len(gaps) - 1) * per_read


@pytest.mark.parametrize("completion_ps", [100_000, 2_000_000])
def test_multicast_loopback_costs_each_rank_a_buffer_and_a_completion_per_own_chunk(completion_ps):
    """With loopback (InfiniBand's default, the artifact's) a rank's own multicast chunks come back
    to its own QP when their last bit has left: each takes a receive buffer and a completion (the
    CPU's time for it and the staged copy) and is dropped; nothing more crosses the wire."""
    cpu = HostCpuConfig(completion_ps=completion_ps)
    n = 64 * 1024
    runs = {
        lb: Scenario(
            topology="fat-tree-k4",
            bytes_per_rank=n,
            rdma=RdmaConfig(processor=cpu, multicast_loopback=lb),
        ).run()
        for lb in (False, True)
    }
    off, on = runs[False], runs[True]
    own = n // MTU
    assert ((on.nic["completions"] - off.nic["completions"])[:16] == own).all()
    copy_ps = -(-MTU * 8 * 10**12 // cpu.memcpy_bps)  # a staged 4 KiB payload copied out
    assert ((on.nic["cpu_busy_ps"] - off.nic["cpu_busy_ps"])[:16] == own * (completion_ps + copy_ps)).all()
    assert (on.received_b == off.received_b).all() and (on.rank["chunks_received"] == off.rank["chunks_received"]).all()
    assert on.complete and on.rank["receive_drops"].sum() == 0
    if completion_ps > 1_000_000:  # the CPU is the bottleneck: the extra completions cost time
        assert on.time_ps > off.time_ps


def test_the_artifact_preset_sets_every_option_and_costs_at_least_its_barriers():
    preset = artifact_protocol()
    assert preset["barriers"] == 2 and preset["batching"] == "stop_and_wait" and preset["repair_reads"] == 1
    assert preset["rdma"].multicast_loopback and artifact_protocol(RdmaConfig(mtu_b=2048))["rdma"].mtu_b == 2048
    base = {"topology": "fat-tree-k4", "bytes_per_rank": "64KiB"}
    plain, artifact = Scenario(**base).run(), Scenario(**base, **artifact_protocol()).run()
    assert artifact.complete and (artifact.nic["completions"] > plain.nic["completions"]).all()
    # at least 2 barriers of 4 rounds between hosts on one edge switch (the cheapest round)
    link = Link.from_edge(Scenario(topology="fat-tree-k4").graph().edges[0, 16])
    rdma, fab, cpu = RdmaConfig(), FabricConfig(), HostCpuConfig()
    trip = link.tx_ps(RC_SEND_IMM_B) + fab.switch_latency_ps + link.tx_ps(8) + 2 * link.delay_ps
    round_ps = rdma.send_latency_ps + trip + max(trip, rdma.receive_latency_ps + cpu.completion_ps)
    assert artifact.time_ps - plain.time_ps >= 2 * 4 * round_ps
