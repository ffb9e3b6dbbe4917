# SPDX-License-Identifier: GPL-2.0-only
"""The RDMA transport against closed forms: RC WRITE/READ/SEND, UD multicast, receiver overrun."""

import math
from dataclasses import dataclass

import numpy as np
import pytest

from mcsim import topology
from mcsim.config.rdma import (
    RNR_TIMER_PS,
    CompletionProcessorConfig,
    HostCpuConfig,
    RcConfig,
    RcOp,
    RdmaConfig,
    UdStream,
)
from mcsim.errors import McsimError
from mcsim.native import runtime
from mcsim.native.attributes import make_factory
from mcsim.result import Result
from mcsim.runs.scenario import Scenario
from mcsim.runs.stream import two_hosts
from mcsim.runs.verbs import run_verbs
from mcsim.topology.physics import Link
from mcsim.units import parse_rate

MTU = 4096
DELAY_PS = 100_000
FDR = Link(rate_bps=parse_rate("56.25Gbps"), encoding_data_bits=64, encoding_line_bits=66, delay_ps=DELAY_PS)
T16 = Link(rate_bps=parse_rate("1.6Tbps"), delay_ps=DELAY_PS)
# InfiniBand header bytes: LRH 8 + BTH 12 + ICRC 4 + VCRC 2, RETH 16, AETH 4, ImmDt 4, DETH 8
IB_BASE, RETH, AETH, IMM, DETH = 26, 16, 4, 4, 8


def write_wire_bytes(size_b: int) -> int:
    """Bytes on the wire of an RC WRITE: every packet has the base headers, the first a RETH."""
    packets = -(-size_b // MTU)
    return size_b + packets * IB_BASE + RETH


def test_cxx_test_suite_passes(capfd):
    """RC WRITE and READ against their exact closed forms, in C++ (rdma/test/rdma-test-suite.cc)."""
    assert runtime.run_cxx_test_suite("mcsim-rdma") == 0
    assert "PASS mcsim-rdma" in capfd.readouterr().out


@pytest.mark.parametrize("link", [FDR, T16], ids=["56Gbps", "1.6Tbps"])
def test_rc_write_reaches_line_rate_after_headers(link):
    size_b = 64 << 20
    r = run_verbs(two_hosts(link), rc_ops=[RcOp(verb="write", src=0, dst=1, size_b=size_b)])
    done_ps = int(r.rc_done_ps[0])
    wire_ps = write_wire_bytes(size_b) * 8 * 10**12 / link.data_rate_bps
    # the requester completes when the last ACK is back: one more delay and a 30-byte ACK
    ack_ps = link.tx_ps(IB_BASE + AETH) + 2 * DELAY_PS
    assert done_ps == pytest.approx(wire_ps + ack_ps, rel=0.01)
    goodput = size_b * 8 * 10**12 / done_ps
    assert goodput >= 0.98 * link.data_rate_bps * MTU / (MTU + IB_BASE)
    assert r.rc_responder["rx_payload"][0] == size_b
    assert r.rc_requester["retransmits"][0] == 0 and r.rc_requester["completed"][0] == 1


NIC_LATENCIES = [(300_000, 0), (0, 300_000), (300_000, 450_000)]  # (send, receive) ps


@pytest.mark.parametrize(("send_ps", "receive_ps"), NIC_LATENCIES)
def test_nic_latency_delays_the_first_byte_and_the_receive_completion(send_ps, receive_ps):
    def run(s, r):
        rdma = RdmaConfig(send_latency_ps=s, receive_latency_ps=r)
        return run_verbs(two_hosts(T16), rc_ops=[RcOp(verb="write_imm", src=0, dst=1, size_b=MTU)], rdma=rdma)

    base, slow = run(0, 0), run(send_ps, receive_ps)
    # the WRITE leaves send_ps later; its receive completion is processed receive_ps after that;
    # the ACK is the NIC's own (no doorbell) and a send completion has no receive latency
    assert slow.rc_responder_done_ps[0] - base.rc_responder_done_ps[0] == send_ps + receive_ps
    assert slow.rc_done_ps[0] - base.rc_done_ps[0] == send_ps


@pytest.mark.parametrize(("send_ps", "receive_ps"), NIC_LATENCIES)
def test_every_ring_step_and_a_broadcast_pay_both_nic_latencies_once(send_ps, receive_ps):
    def time_ps(s, r, **kwargs):
        rdma = RdmaConfig(send_latency_ps=s, receive_latency_ps=r)
        return Scenario(topology="fat-tree-k4", bytes_per_rank="4KiB", rdma=rdma, **kwargs).run().time_ps

    # a 4 KiB ring Allgather is P - 1 = 15 steps of one WRITE each: post, wire, completion, post
    ring = {"algorithm": "ring"}
    assert time_ps(send_ps, receive_ps, **ring) - time_ps(0, 0, **ring) == 15 * (send_ps + receive_ps)
    # a one-chunk multicast Broadcast: one post, one receive completion per rank
    bcast = {"algorithm": "mcast", "collective": "broadcast"}
    assert time_ps(send_ps, receive_ps, **bcast) - time_ps(0, 0, **bcast) == send_ps + receive_ps


def test_acks_are_coalesced_every_ack_interval_and_at_the_last_packet():
    size_b = 1000 * MTU
    r = run_verbs(
        two_hosts(T16),
        rc_ops=[RcOp(verb="write", src=0, dst=1, size_b=size_b)],
        rdma=RdmaConfig(rc=RcConfig(ack_interval=7)),
    )
    assert r.rc_responder["acks_sent"][0] == math.ceil(1000 / 7)
    assert r.rc_responder["naks_sent"][0] == 0


def test_rdma_read_takes_one_round_trip_plus_the_data():
    size_b = 4 << 20
    r = run_verbs(two_hosts(FDR), rc_ops=[RcOp(verb="read", src=0, dst=1, size_b=size_b)])
    packets = size_b // MTU
    # request (with RETH) out, responses back: first and last carry an AETH
    request_ps = FDR.tx_ps(IB_BASE + RETH) + DELAY_PS
    response_wire = size_b + packets * IB_BASE + 2 * AETH
    expected_ps = request_ps + response_wire * 8 * 10**12 / FDR.data_rate_bps + DELAY_PS
    assert int(r.rc_done_ps[0]) == pytest.approx(expected_ps, rel=0.001)
    assert r.rc_requester["rx_payload"][0] == size_b
    assert r.rc_responder["tx_payload"][0] == size_b


def test_send_needs_a_posted_receive_and_completes_at_both_ends():
    r = run_verbs(two_hosts(T16), rc_ops=[RcOp(verb="send", src=0, dst=1, size_b=10_000)])
    assert r.rc_responder["rx_payload"][0] == 10_000
    # after the last byte: the receiver's completion takes the NIC's receive latency and the CPU's
    # cost, the ACK (its own, at once) its serialization and the link delay back
    cfg = RdmaConfig()
    receiver_ps = cfg.receive_latency_ps + cfg.processor.completion_ps
    assert r.rc_responder_done_ps[0] - r.rc_done_ps[0] == receiver_ps - T16.tx_ps(IB_BASE + AETH) - DELAY_PS
    assert r.nic["completions"][1] == 1


def test_write_with_immediate_completes_at_the_responder():
    r = run_verbs(two_hosts(T16), rc_ops=[RcOp(verb="write_imm", src=0, dst=1, size_b=3 * MTU + 5)])
    assert r.rc_responder_done_ps[0] > 0
    assert r.rc_responder["rx_payload"][0] == 3 * MTU + 5


def test_rocev2_headers_cost_more_than_infiniband():
    size_b = 8 << 20
    ib = run_verbs(two_hosts(T16), rc_ops=[RcOp(verb="write", src=0, dst=1, size_b=size_b)])
    roce = run_verbs(
        two_hosts(T16), rc_ops=[RcOp(verb="write", src=0, dst=1, size_b=size_b)], rdma=RdmaConfig(wire_format="rocev2")
    )
    packets = size_b // MTU
    # RoCEv2: Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 = 62, plus preamble/SFD/IFG 20
    roce_wire = size_b + packets * (62 + 20) + RETH
    assert roce.fabric.ports["tx_wire_bytes"][roce.fabric.port_index(0, 0)] == roce_wire
    assert ib.fabric.ports["tx_wire_bytes"][ib.fabric.port_index(0, 0)] == write_wire_bytes(size_b)
    assert roce.rc_done_ps[0] > ib.rc_done_ps[0]


def test_ud_multicast_reaches_every_member_of_188_once():
    g = topology.resolve("testbed-188")
    members = list(range(188))
    count = 20
    r = run_verbs(g, ud_streams=[UdStream(src=7, group=0, size_b=MTU, count=count)], groups=[members])
    rx = dict(zip(r.ud["host"].tolist(), r.ud["rx_packets"].tolist(), strict=True))
    assert rx.pop(7) == 0
    assert set(rx.values()) == {count}
    assert r.ud["overruns"].sum() == 0
    # every datagram crosses each tree link once: 188 host links + 12 leaf-spine links
    assert r.fabric.link_traversals() == count * (188 + 12)
    wire = MTU + IB_BASE + DETH + IMM + 40  # UD with immediate and the multicast GRH
    assert r.fabric.ports["tx_wire_bytes"][r.fabric.port_index(7, 0)] == count * wire


@pytest.mark.parametrize(("depth", "cost_ps"), [(8, 1_000_000), (32, 777_777), (128, 450_001)])
def test_slow_receiver_overruns_its_queue_as_the_closed_form_says(depth, cost_ps):
    n = 2000
    link = Link(rate_bps=parse_rate("100Gbps"), delay_ps=DELAY_PS)
    cfg = RdmaConfig(rq_depth=depth, processor=HostCpuConfig(completion_ps=cost_ps), staging=False)
    r = run_verbs(two_hosts(link), ud_streams=[UdStream(src=0, dst=1, size_b=MTU, count=n)], rdma=cfg)
    arrival_ps = link.tx_ps(MTU + IB_BASE + DETH + IMM)  # datagrams arrive back to back
    assert arrival_ps < cost_ps, "the receiver is really slower than the link"
    # D buffers absorb the first burst; after that one datagram gets in per completion, the first
    # done one receive latency and one cost after the first arrival
    accepted = min(n, depth + ((n - 1) * arrival_ps - cfg.receive_latency_ps) // cost_ps)
    row = int(np.flatnonzero(r.ud["host"] == 1)[0])
    assert r.ud["rx_packets"][row] == accepted
    assert r.ud["overruns"][row] == n - accepted
    assert r.ud["min_posted"][row] == 0
    assert r.ud["processed"][row] == accepted


def test_fast_receiver_never_overruns():
    cfg = RdmaConfig(rq_depth=4, processor=HostCpuConfig(completion_ps=50_000), staging=False)
    r = run_verbs(two_hosts(FDR), ud_streams=[UdStream(src=0, dst=1, size_b=MTU, count=500)], rdma=cfg)
    row = int(np.flatnonzero(r.ud["host"] == 1)[0])
    assert (r.ud["rx_packets"][row], r.ud["overruns"][row]) == (500, 0)


def test_same_verbs_run_twice_is_identical():
    ops = [RcOp(verb=v, src=0, dst=1, size_b=50_000 + i) for i, v in enumerate(["write", "read", "send", "write_imm"])]
    a = run_verbs(two_hosts(FDR), rc_ops=ops)
    b = run_verbs(two_hosts(FDR), rc_ops=ops)
    np.testing.assert_array_equal(a.rc_done_ps, b.rc_done_ps)
    for k in a.rc_requester:
        np.testing.assert_array_equal(a.rc_requester[k], b.rc_requester[k])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rq_depth": 0}, r"RdmaConfig: rq_depth=0 must be >= 1"),
        ({"wire_format": "roce"}, r"unknown wire format 'roce'; choose one of infiniband, rocev2"),
        ({"mtu_b": 4000}, r"RdmaConfig: mtu_b=4000 is not an MTU"),
        ({"rc": {"retry_cnt": 3}}, r"RdmaConfig: rc=\{'retry_cnt': 3\} must be an RcConfig"),
        (
            {"processor": "dpa"},
            r"RdmaConfig: processor='dpa' is not a completion processor config; use HostCpuConfig\(\)",
        ),
        ({"send_latency_ps": -1}, r"RdmaConfig: send_latency_ps=-1 must be "),
        ({"receive_latency_ps": 0.5}, r"RdmaConfig: receive_latency_ps=0.5 must be an integer"),
    ],
)
def test_bad_rdma_config_is_one_line(kwargs, message):
    with pytest.raises(McsimError, match=message):
        RdmaConfig(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ack_interval": 0}, r"RcConfig: ack_interval=0 must be > 0"),
        ({"retry_cnt": -1}, r"RcConfig: retry_cnt=-1 must be 0..7 \(its InfiniBand encoding\)"),
        ({"retry_cnt": 8}, r"RcConfig: retry_cnt=8 must be 0..7 \(its InfiniBand encoding\)"),
        ({"rnr_retry": True}, r"RcConfig: rnr_retry=True must be an integer 0..7 \(its InfiniBand encoding\)"),
        ({"ack_timeout_exp": 32}, r"RcConfig: ack_timeout_exp=32 must be 0..31 \(its InfiniBand encoding\)"),
        ({"min_rnr_timer": 1.5}, r"RcConfig: min_rnr_timer=1.5 must be an integer 0..31 \(its InfiniBand encoding\)"),
    ],
)
def test_bad_rc_config_is_one_line(kwargs, message):
    with pytest.raises(McsimError, match=message):
        RcConfig(**kwargs)


def test_rc_timers_follow_the_infiniband_encodings():
    assert RcConfig(ack_timeout_exp=14).ack_timeout_ps == 67_108_864_000  # 4.096 us x 2^14
    assert RcConfig(ack_timeout_exp=0).ack_timeout_ps == 0  # no timer
    assert RNR_TIMER_PS[12] == 640_000_000 and RNR_TIMER_PS[0] == 655_360_000_000 and len(RNR_TIMER_PS) == 32


@pytest.mark.parametrize(
    ("work", "message"),
    [
        (
            lambda: {"rc_ops": [RcOp(verb="read", src=0, dst=1, size_b=2 << 30)]},
            r"rc op 0: a READ of 2147483648 B is larger than the registered region",
        ),
        (lambda: {"rc_ops": [RcOp(verb="wrote", src=0, dst=1, size_b=1)]}, r"unknown RC verb 'wrote'"),
        (lambda: {"rc_ops": [RcOp(verb="read", src=0, dst=1, size_b=4096.5)]}, r"^RcOp: size_b=4096.5 must be an"),
        (lambda: {"rc_ops": [RcOp(verb="read", src="0", dst=1, size_b=1)]}, r"^RcOp: src='0' must be an integer"),
        (lambda: {"rc_ops": [RcOp(verb="write", src=0, dst=0, size_b=1)]}, r"rc op 0: dst=0 is the requester itself"),
        (lambda: {"rc_ops": [RcOp(verb="write", src=0, dst=5, size_b=1)]}, r"rc op 0: dst=5 is not a host"),
        (
            lambda: {"ud_streams": [UdStream(src=0, group=2, size_b=1, count=1)]},
            r"ud stream 0: group=2 is not one of the 0 groups",
        ),
        (
            lambda: {"ud_streams": [UdStream(src=0, dst=1, size_b=5000, count=1)]},
            r"ud stream 0: size_b=5000 is larger than one datagram",
        ),
        (lambda: {"ud_streams": [UdStream(src=0, dst=1, size_b=100, count=0)]}, r"^UdStream: count=0 must be >= 1"),
        (lambda: {"ud_streams": [UdStream(src=0, dst=1, size_b=100.7, count=2)]}, r"^UdStream: size_b=100.7 must be"),
        (lambda: {"ud_streams": [UdStream(src=0, dst=True, size_b=1, count=2)]}, r"^UdStream: dst=True must be an"),
        (lambda: {}, r"run_verbs: no RC ops and no UD streams given"),
    ],
)
def test_bad_workload_is_one_line(work, message):
    with pytest.raises(McsimError, match=message):
        run_verbs(two_hosts(FDR), **work())


@dataclass(frozen=True)
class FixedCostCpu:
    """A processor model written outside mcsim: it only has to meet CompletionProcessorConfig."""

    cost_ps: int

    def factory(self):
        return make_factory("ns3::mcsim::HostCpu", "FixedCostCpu", PerCompletionCost=self.cost_ps)


def test_any_completion_processor_config_plugs_into_rdma():
    processor: CompletionProcessorConfig = FixedCostCpu(cost_ps=1_000_000)
    cfg = RdmaConfig(rq_depth=64, processor=processor, staging=False)
    r = run_verbs(two_hosts(FDR), ud_streams=[UdStream(src=0, dst=1, size_b=MTU, count=40)], rdma=cfg)
    assert r.nic["completions"][1] == 40
    assert r.nic["cpu_busy_ps"][1] == 40 * 1_000_000  # the model's own cost, not HostCpuConfig's default


def _packets_made(scenario: Scenario) -> tuple[Result, int]:
    """Run the scenario; return its Result and how many ns-3 packets the run created."""
    ns = runtime.cppyy_ns()
    before = int(ns.Packet().GetUid())  # every Packet made takes the next uid
    r = scenario.run()
    return r, int(ns.Packet().GetUid()) - before - 1


def test_rdma_packets_are_shared_per_size_and_made_per_packet_only_in_verify_mode():
    ranks, size_b = 16, 256 << 10
    payload_packets = ranks * (ranks - 1) * (size_b // MTU)  # every WRITE packet of the ring Allgather
    plain, made = _packets_made(Scenario(topology="fat-tree-k4", algorithm="ring", bytes_per_rank=size_b))
    assert plain.complete and int(plain.nic["tx_packets"].sum()) > payload_packets
    # one read-only packet per size: WRITE first (RETH), middle, last with immediate, ACK
    assert made <= 4
    checked, made = _packets_made(
        Scenario(topology="fat-tree-k4", algorithm="ring", bytes_per_rank=size_b, verify=True)
    )
    assert checked.verified and made >= payload_packets  # each carries its payload's bytes
