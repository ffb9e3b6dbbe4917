# SPDX-License-Identifier: GPL-2.0-only
"""HPCC (RdmaConfig(congestion=HpccConfig())): switches add an INT record per hop to each data packet of an
RC QP, the ACK brings them back, the sender sets its window and rate from them. Closed forms: one record per
switch on the path, 42 INT bytes per data packet, a lone flow at eta of the line, an incast's queue within its
senders' windows (so PFC never pauses), collectives byte-exact."""

import networkx as nx
import numpy as np
import pytest

from mcsim import topology
from mcsim.config.congestion import HpccConfig
from mcsim.config.fabric import FabricConfig
from mcsim.config.rdma import INT_HEADER_B, PcapConfig, RcOp, RdmaConfig, hpcc_base_rtt_ps
from mcsim.errors import McsimError
from mcsim.routing.layout import layout_of
from mcsim.runs.scenario import scenario_of
from mcsim.runs.verbs import run_verbs
from mcsim.topology.physics import Link
from mcsim.topology.rules import HOST, SWITCH

RATE_BPS = 100 * 10**9
MTU_B = 4096
ETA = HpccConfig().eta


def writes(g, pairs, cc="hpcc", size_b=4 << 20, **hpcc):
    """RC WRITEs of size_b for each (src, dst), RoCEv2 with PFC; cc "hpcc" (HpccConfig(**hpcc)) or "none"."""
    ops = [RcOp(verb="write", src=s, dst=d, size_b=size_b) for s, d in pairs]
    config = RdmaConfig(wire_format="rocev2", congestion=HpccConfig(**hpcc) if cc == "hpcc" else None)
    return run_verbs(g, rc_ops=ops, rdma=config, fabric=FabricConfig(flow_control="pfc"))


def star(n_hosts, delay_ps=100_000):
    return topology.leaf_spine(1, 0, n_hosts, rate_bps=RATE_BPS, delay_ps=delay_ps)


def chain(switches):
    """Host 0 - s1 - ... - s_n - host 1: a path through `switches` switches."""
    g = nx.Graph()
    g.add_node(0, role=HOST, tier=0, name="h0")
    g.add_node(1, role=HOST, tier=0, name="h1")
    for i in range(switches):
        g.add_node(2 + i, role=SWITCH, tier=1, name=f"s{i}")
    link = Link(rate_bps=RATE_BPS, delay_ps=100_000).edge_attrs()
    nx.add_path(g, [0, *range(2, 2 + switches), 1], **link)
    return g


def test_a_lone_flow_runs_at_eta_of_the_line_and_each_data_packet_carries_42_int_bytes():
    g = star(2)
    plain, hpcc = writes(g, [(1, 0)], cc="none"), writes(g, [(1, 0)])
    packets = (4 << 20) // MTU_B
    port = int(np.flatnonzero(hpcc.fabric.port_node == 1)[0])  # host 1's one port
    wire = {k: int(r.fabric.ports["tx_wire_bytes"][port]) for k, r in (("none", plain), ("hpcc", hpcc))}
    assert wire["hpcc"] - wire["none"] == packets * INT_HEADER_B
    # HPCC holds the bottleneck at eta: its wire bytes at eta x B, plus the NIC's latency and one round trip
    expected = wire["hpcc"] * 8 * 10**12 / (ETA * RATE_BPS)
    base_rtt = hpcc_base_rtt_ps(layout_of(g), FabricConfig(header_b=20), RdmaConfig(wire_format="rocev2"))
    done = int(hpcc.rc_done_ps[0])
    assert expected <= done <= expected * 1.005 + RdmaConfig().send_latency_ps + base_rtt
    assert int(plain.rc_done_ps[0]) < done  # the plain flow runs at the line rate


@pytest.mark.parametrize("switches", [1, 3, 5, 6])
def test_every_switch_on_the_path_adds_one_record_until_the_header_is_full(switches):
    r = writes(chain(switches), [(0, 1)], size_b=1 << 20)
    packets = (1 << 20) // MTU_B
    t = r.fabric.telemetry
    assert t is not None
    pushed, overflow = t["int_pushed"], t["int_overflow"]
    assert int(pushed.sum()) == packets * min(switches, 5)
    assert int(overflow.sum()) == packets * max(switches - 5, 0)
    # only the switches' ports toward host 1 add records: none at a host, none on the ACKs' way back
    hosts = r.fabric.port_node < 2
    assert int(pushed[hosts].sum()) == 0
    assert np.count_nonzero(pushed + overflow) == switches


def test_hpcc_keeps_an_incast_queue_within_its_windows_and_pfc_never_pauses():
    n = 15
    g = star(n + 1)
    pairs = [(s, 0) for s in range(1, n + 1)]
    plain, hpcc = writes(g, pairs, cc="none"), writes(g, pairs)
    assert (hpcc.rc_done_ps >= 0).all()
    assert int(plain.fabric.pfc["pause_tx"].sum()) > 1000
    assert int(hpcc.fabric.pfc["pause_tx"].sum()) == 0
    # no sender has more than its window (at most W_init = B x T) and one packet in flight
    t_ps = hpcc_base_rtt_ps(layout_of(g), FabricConfig(header_b=20), RdmaConfig(wire_format="rocev2"))
    w_init = RATE_BPS * t_ps // (8 * 10**12)
    frame = MTU_B + 86 + INT_HEADER_B + 20
    bottleneck = int(np.flatnonzero((hpcc.fabric.port_node == n + 1) & (hpcc.fabric.port_num == 0))[0])
    assert int(hpcc.fabric.ports["max_queue_bytes"][bottleneck]) <= n * (w_init + 2 * frame)
    assert not np.array_equal(plain.rc_done_ps, hpcc.rc_done_ps)  # turning it on changes the results


def test_the_base_rtt_bounds_a_lone_packets_round_trip_on_the_longest_path():
    g = topology.fat_tree(4, rate_bps=RATE_BPS, delay_ps=100_000)
    far = max(range(1, 16), key=lambda h: nx.shortest_path_length(g, 0, h))
    cfg = RdmaConfig(wire_format="rocev2", congestion=HpccConfig())
    r = writes(g, [(0, far)], size_b=MTU_B)
    rtt = int(r.rc_done_ps[0]) - cfg.send_latency_ps
    t_ps = hpcc_base_rtt_ps(layout_of(g), FabricConfig(header_b=20), cfg)
    assert t_ps / 2 <= rtt <= t_ps


@pytest.mark.parametrize(
    ("collective", "algorithm"),
    [("allgather", "ring"), ("allgather", "mcast"), ("reduce_scatter", "ring"), ("allreduce", "ring")],
)
def test_collectives_verify_byte_exact_with_hpcc_on_pfc(collective, algorithm):
    sc = scenario_of(
        topology="fat-tree-k4", collective=collective, algorithm=algorithm, bytes_per_rank=256 << 10, ranks=8,
        wire_format="rocev2", flow_control="pfc", congestion_control="hpcc", verify=True,
    )  # fmt: skip
    r = sc.run()
    assert r.complete and r.verified


def test_a_pcap_of_an_hpcc_run_is_one_line(tmp_path):
    sc = scenario_of(topology="fat-tree-k4", collective="allgather", algorithm="ring", bytes_per_rank=1 << 16,
                     ranks=4, wire_format="rocev2", congestion_control="hpcc")  # fmt: skip
    with pytest.raises(McsimError, match=r"^pcap: HPCC's INT header .* has no wire layout") as err:
        sc.run(pcap=PcapConfig(folder=str(tmp_path), hosts=(0,)))
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"eta": 0}, r"^HpccConfig: eta=0 must be a number in \(0, 1\]"),
        ({"eta": 1.5}, r"^HpccConfig: eta=1\.5 must be a number in \(0, 1\]"),
        ({"eta": True}, r"^HpccConfig: eta=True must be a number"),
        ({"max_stage": -1}, r"^HpccConfig: max_stage=-1 must be 0\.\.4294967295"),
        ({"max_stage": 2**32}, r"^HpccConfig: max_stage=4294967296 must be"),
        ({"rai_bps": 0.5}, r"^HpccConfig: rai_bps=0\.5 must be an integer"),
        ({"base_rtt_ps": 2**63}, r"^HpccConfig: base_rtt_ps=9223372036854775808 must be"),
    ],
)
def test_bad_hpcc_settings_are_one_line(kw, message):
    with pytest.raises(McsimError, match=message) as err:
        HpccConfig(**kw)
    assert "\n" not in str(err.value)


def test_a_given_base_rtt_is_used():
    # T sets W_init = B x T: an eighth of the computed one is less than a packet, so a lone flow has one
    # packet in flight (a window lets a packet start while less than W is in flight): one per round trip,
    # and a round trip (<= T) is more than twice a packet's serialization here
    g = star(2)
    t_ps = hpcc_base_rtt_ps(layout_of(g), FabricConfig(header_b=20), RdmaConfig(wire_format="rocev2"))
    assert RATE_BPS * t_ps // 8 // (8 * 10**12) < MTU_B
    fast, slow = writes(g, [(1, 0)]), writes(g, [(1, 0)], base_rtt_ps=t_ps // 8)
    assert int(slow.rc_done_ps[0]) > 2 * int(fast.rc_done_ps[0])
