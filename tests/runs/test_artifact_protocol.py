# SPDX-License-Identifier: GPL-2.0-only
"""The SC'24 artifact's protocol options against closed forms: each changes the result in the
direction and by the amount the closed form says."""

import math

import networkx as nx
import numpy as np
import pytest

from mcsim.config.fabric import FabricConfig, Faults
from mcsim.config.rdma import HostCpuConfig, RdmaConfig
from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario, artifact_protocol, scenario_of
from mcsim.runs.stream import star as link_star
from mcsim.topology.physics import Link

MTU = 4096
MCAST_HEADER_B = 78  # UD SEND with immediate to a group: LRH 8 + GRH 40 + BTH 12 + DETH 8 + ImmDt 4 + ICRC 4 + VCRC 2


@pytest.mark.parametrize("pick_at_handover", [False, True])
@pytest.mark.parametrize("send_completions", ["free", "separate"])
@pytest.mark.parametrize("send_latency_ps", [300_000, 2_000_000])
@pytest.mark.parametrize(
    ("kwargs", "chunks", "sources"),
    [
        ({"collective": "broadcast", "bytes_per_rank": "1MiB", "batch": 32}, 256, 1),
        # one sequence of 16 roots, each after its predecessor's whole shard: their delays add up
        ({"collective": "allgather", "roots": 1, "bytes_per_rank": "64KiB", "batch": 4}, 16, 16),
    ],
)
def test_stop_and_wait_batches_idle_the_link_for_a_doorbell_per_batch(
    kwargs, chunks, sources, send_latency_ps, send_completions, pick_at_handover
):
    """With the artifact's batches a root posts the next batch only when the last one's signalled
    completion is in (as its last datagram leaves); its first byte then leaves SendLatency later, so
    the link idles for SendLatency less one datagram's serialization after every batch but the
    last, where a sliding window keeps it busy. At FDR with 300 ns of SendLatency a 4 KiB datagram
    outlasts the doorbell: nothing changes. With a TX thread (send_completions="separate") the
    completion first reaches it (receive latency) and costs its CPU time: the link idles that much
    longer. A NIC that picks its next packet at the handover (pick_at_handover) takes a batch's last
    datagram, and so hears of its completion, when the switch has the header of the datagram before
    it: one serialization less the header's and the link delay earlier, and the link idles that much
    less."""
    rdma = RdmaConfig(
        send_latency_ps=send_latency_ps, send_completions=send_completions, pick_at_handover=pick_at_handover
    )

    def time_ps(batching: str) -> int:
        return Scenario(topology="fat-tree-k4", algorithm="mcast", batching=batching, rdma=rdma, **kwargs).run().time_ps

    link = Link.from_edge(Scenario(topology="fat-tree-k4").graph().edges[0, 16])
    loop_ps = send_latency_ps
    if send_completions == "separate":
        loop_ps += rdma.receive_latency_ps + HostCpuConfig().completion_ps
    tx_ps = link.tx_ps(MTU + MCAST_HEADER_B)
    ahead_ps = max(0, tx_ps - link.tx_ps(FabricConfig().routing_header_b) - link.delay_ps) if pick_at_handover else 0
    bubble_ps = max(0, loop_ps - tx_ps - ahead_ps)
    # the cases where the doorbell hides behind the datagram(s) in flight (the docstring)
    assert bubble_ps > 0 or (send_latency_ps, send_completions, pick_at_handover) in {
        (300_000, "free", False),
        (300_000, "free", True),
        (300_000, "separate", True),
    }
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


def one_switch_trip_ps(size_b: int = RC_SEND_IMM_B) -> int:
    """A packet's trip between two FDR hosts through one cut-through switch: its serialization,
    the switch latency and the LRH's time, two link delays (a 0-byte RC SEND, or its ACK)."""
    return FDR.tx_ps(size_b) + FabricConfig().switch_latency_ps + FDR.tx_ps(8) + 2 * FDR.delay_ps


@pytest.mark.parametrize("hosts", [16, 12])
@pytest.mark.parametrize("fast_completions", [False, True])
def test_each_barrier_costs_log2_p_rounds_of_a_0_byte_rc_exchange(hosts, fast_completions):
    """Every rank SENDs 0 bytes to rank r + 2^k in round k and moves on when its SEND's ACK is back
    and rank r - 2^k's SEND has been processed: a round is the send latency, one trip, and then the
    longer of the ACK's trip back and the receive latency plus the completion's CPU time. On one
    switch every trip is the same: tx + (switch latency + LRH time) + 2 link delays."""
    g = star(hosts)
    cpu = HostCpuConfig(completion_ps=0 if fast_completions else 100_000)
    rdma = RdmaConfig(processor=cpu, receive_latency_ps=0 if fast_completions else 300_000)
    trip = one_switch_trip_ps()
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


@pytest.mark.parametrize(("hosts", "fast_completions"), [(8, False), (5, True)])
def test_the_fin_wait_adds_the_fin_exchange_after_the_last_chunk(hosts, fast_completions):
    """With fin_wait a rank is done when its whole output is here, its FIN to r+1 is ACKed and
    r-1's FIN has been processed. The FINs are sent either way, so the data are unchanged: one
    sequence of roots on one switch brings every rank but the last source its last chunk at one
    time T. Rank 0 then waits for its FIN's ACK (send latency + 2 trips; rank P-1's FIN came
    earlier); ranks 1..P-2 also for r-1's FIN (send latency + trip + the longer of a trip and the
    receive latency plus the completion's CPU time); rank P-1, done with its data earlier, waits for
    rank P-2's FIN."""
    g = star(hosts)
    cpu = HostCpuConfig(completion_ps=0 if fast_completions else 100_000)
    rdma = RdmaConfig(processor=cpu, receive_latency_ps=0 if fast_completions else 300_000)
    trip = one_switch_trip_ps()
    ack_ps, fin_ps = (
        rdma.send_latency_ps + 2 * trip,
        rdma.send_latency_ps + trip + rdma.receive_latency_ps + cpu.completion_ps,
    )
    assert (ack_ps > fin_ps) == fast_completions  # both sides of the max are tested
    kw = {"topology": g, "bytes_per_rank": "64KiB", "roots": 1, "rdma": rdma}
    plain, fin = Scenario(**kw).run(), Scenario(**kw, fin_wait=True).run()
    t = plain.time_ps
    assert (plain.finish_ps[:-1] == t).all() and plain.finish_ps[-1] < t
    assert (fin.rank["data_phase_end_ps"] == plain.rank["data_phase_end_ps"]).all()
    assert fin.finish_ps[0] == t + ack_ps
    assert (fin.finish_ps[1:-1] == t + max(ack_ps, fin_ps)).all()
    assert fin.finish_ps[-1] == t + fin_ps
    assert fin.time_ps - plain.time_ps == max(ack_ps, fin_ps)


def test_with_the_fin_wait_a_broadcast_root_sends_its_fin_first_and_waits_for_the_last():
    """The artifact's root has nothing to receive: it sends its FIN at the start, ahead of its first
    datagram (which leaves one FIN's serialization later), and is done when rank P-1's FIN is in."""
    g = star(6)
    link = Link.from_edge(g.edges[0, 6])
    cpu, rdma = HostCpuConfig(), RdmaConfig()
    trip = one_switch_trip_ps()
    kw = {"topology": g, "collective": "broadcast", "bytes_per_rank": "64KiB"}
    plain, fin = Scenario(**kw).run(), Scenario(**kw, fin_wait=True).run()
    t = plain.time_ps + link.tx_ps(RC_SEND_IMM_B)  # the receivers' last chunk, behind the root's FIN
    assert fin.rank["data_timeouts"][0] == 0 and fin.rank["data_phase_end_ps"][0] == 0
    assert (fin.rank["data_phase_end_ps"][1:] == t).all()
    fin_ps = rdma.send_latency_ps + trip + rdma.receive_latency_ps + cpu.completion_ps
    assert fin.finish_ps[0] == fin.time_ps == t + fin_ps
    assert fin.finish_ps[1] == t + rdma.send_latency_ps + 2 * trip  # the root's FIN came long ago


def test_the_fin_wait_holds_under_loss_and_repair():
    """Ranks that repair send their FIN later; every rank still finishes, no earlier than without."""
    kw = {"topology": "fat-tree-k4", "bytes_per_rank": "64KiB", "loss": 2e-3, "verify": True}
    for seed in range(4):
        plain, fin = scenario_of(**kw, seed=seed).run(), scenario_of(**kw, seed=seed, fin_wait=True).run()
        assert fin.complete and fin.verified
        assert (fin.finish_ps > plain.finish_ps).all()


def test_bad_fin_wait_is_one_line():
    with pytest.raises(McsimError, match=r"^Scenario: fin_wait=1 must be True or False$"):
        Scenario(topology="fat-tree-k4", fin_wait=1)


@pytest.mark.parametrize("send_completions", ["separate", "shared"])
@pytest.mark.parametrize("send_latency_ps", [300_000, 1_000_000])
def test_a_processed_send_completion_slows_a_window_of_one_by_its_trip_through_the_cpu(
    send_latency_ps, send_completions
):
    """A root with a window of one posts each datagram when the previous one's completion is in.
    Free (as before), that is when the previous one leaves; processed, its CQE first reaches a
    thread (receive latency) and costs it completion_ps. Datagram k+1 leaves max(tx, loop) after
    datagram k, loop being the send latency, plus receive latency and CPU time when processed. The
    root receives nothing in a Broadcast, so a thread of its own or the shared one is the same."""
    g = star(4)
    link = Link.from_edge(g.edges[0, 4])
    cpu = HostCpuConfig()
    n = 16

    def run(mode: str):
        rdma = RdmaConfig(send_latency_ps=send_latency_ps, send_completions=mode)
        kw = {"collective": "broadcast", "bytes_per_rank": n * MTU, "batch": 1, "rdma": rdma}
        return Scenario(topology=g, algorithm="mcast", **kw).run()

    free, processed = run("free"), run(send_completions)
    tx = link.tx_ps(MTU + MCAST_HEADER_B)
    loop = send_latency_ps + RdmaConfig().receive_latency_ps + cpu.completion_ps
    assert processed.time_ps - free.time_ps == (n - 1) * (max(tx, loop) - max(tx, send_latency_ps)) > 0
    # the datagrams and the root's FIN (sent when its data phase times out, after the others finished)
    assert processed.nic["send_completions"][0] == n + 1 and free.nic["send_completions"].sum() == 0
    if send_completions == "separate":
        busy = processed.nic["tx_busy_ps"][0]
    else:  # on top of its receive completions (the FIN it gets)
        busy = processed.nic["cpu_busy_ps"][0] - free.nic["cpu_busy_ps"][0]
    assert busy == (n + 1) * cpu.completion_ps


def test_send_completions_cost_their_thread_the_cpu_time_of_each_and_nothing_else():
    """Conservation on fat-tree-k4: every rank makes a CQE per datagram (a window), per token it
    passes and for its FIN; a thread of its own spends completion_ps on each, and the shared
    thread spends that on top of its receive completions (counted among them)."""
    cpu = HostCpuConfig()
    runs = {
        m: Scenario(topology="fat-tree-k4", bytes_per_rank="64KiB", rdma=RdmaConfig(send_completions=m)).run()
        for m in ("free", "separate", "shared")
    }
    free, separate, shared = runs["free"], runs["separate"], runs["shared"]
    p, chunks = 16, 64 * 1024 // MTU
    heads = {j * p // 2 for j in range(2)}  # two sequences of roots: ranks 0 and 8 get no token
    tokens = np.array([1 if r + 1 < p and r + 1 not in heads else 0 for r in range(p)])
    expected = chunks + tokens + 1  # datagrams, the token passed on, the FIN
    for r in (separate, shared):
        assert (r.nic["send_completions"][:p] == expected).all()
    assert (separate.nic["tx_busy_ps"][:p] == expected * cpu.completion_ps).all()
    assert (separate.nic["cpu_busy_ps"] == free.nic["cpu_busy_ps"]).all()
    assert (shared.nic["completions"] - free.nic["completions"] == shared.nic["send_completions"]).all()
    assert (
        shared.nic["cpu_busy_ps"] - free.nic["cpu_busy_ps"] == shared.nic["send_completions"] * cpu.completion_ps
    ).all()
    assert shared.nic["tx_busy_ps"].sum() == free.nic["tx_busy_ps"].sum() == 0


def test_one_thread_for_both_queues_is_slower_when_the_cpu_is_the_bottleneck():
    """Two ranks multicast 64 chunks each at once, with 1 us per completion. Sharing one thread,
    a rank's last chunk is processed only after its 64 receive completions (CPU time + staged
    copy) and the 64 send completions that came before it: at least send latency + receive latency
    + 64 (2 x completion + copy). A TX thread of its own takes the send completions off that path:
    the run takes less than that work, as long as without send completions at all."""
    g, c = star(2), 1_000_000
    cpu, n = HostCpuConfig(completion_ps=c), 64
    copy_ps = -(-MTU * 8 * 10**12 // cpu.memcpy_bps)

    def time_ps(mode: str) -> int:
        rdma = RdmaConfig(processor=cpu, send_completions=mode)
        return Scenario(topology=g, bytes_per_rank=n * MTU, roots=2, rdma=rdma).run().time_ps

    rdma = RdmaConfig()
    shared_work = rdma.send_latency_ps + rdma.receive_latency_ps + n * (2 * c + copy_ps)
    assert time_ps("shared") >= shared_work
    assert time_ps("separate") == time_ps("free") < shared_work - n * c // 2


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
    assert preset["fin_wait"] is True and preset["rdma"].send_completions == "separate"
    assert preset["rdma"].multicast_loopback and artifact_protocol(RdmaConfig(mtu_b=2048))["rdma"].mtu_b == 2048
    base = {"topology": "fat-tree-k4", "bytes_per_rank": "64KiB"}
    plain, artifact = Scenario(**base).run(), Scenario(**base, **artifact_protocol()).run()
    assert artifact.complete and (artifact.nic["completions"] > plain.nic["completions"]).all()
    # at least 2 barriers of 4 rounds between hosts on one edge switch (the cheapest round)
    rdma, cpu = RdmaConfig(), HostCpuConfig()
    trip = one_switch_trip_ps()
    round_ps = rdma.send_latency_ps + trip + max(trip, rdma.receive_latency_ps + cpu.completion_ps)
    assert artifact.time_ps - plain.time_ps >= 2 * 4 * round_ps
