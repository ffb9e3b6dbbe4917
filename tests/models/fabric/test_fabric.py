# SPDX-License-Identifier: GPL-2.0-only
"""The C++ fabric against closed forms: serialization, multicast replication, flow control."""

from dataclasses import replace

import networkx as nx
import numpy as np
import pytest

from mcsim import topology
from mcsim.config.fabric import DEFAULT_HEADER_BYTES, FABRIC_HEADER_BYTES, FabricConfig, Flow
from mcsim.errors import McsimError
from mcsim.runs.flows import simulate
from mcsim.runs.stream import star
from mcsim.topology.physics import Link
from mcsim.units import parse_rate, parse_size

HEADER_B = 10  # + 16-byte fabric header = 26 B, an InfiniBand RC packet's headers
MTU_B = 4096
WIRE_B = MTU_B + FABRIC_HEADER_BYTES + HEADER_B
DELAY_PS = 100_000
LATENCY_PS = 150_000
RATES = {
    "56Gbps": Link(rate_bps=parse_rate("56.25Gbps"), encoding_data_bits=64, encoding_line_bits=66, delay_ps=DELAY_PS),
    "100Gbps": Link(rate_bps=parse_rate("100Gbps"), delay_ps=DELAY_PS),
    "200Gbps": Link(rate_bps=parse_rate("200Gbps"), delay_ps=DELAY_PS),
    "400Gbps": Link(rate_bps=parse_rate("400Gbps"), delay_ps=DELAY_PS),
    "800Gbps": Link(rate_bps=parse_rate("800Gbps"), delay_ps=DELAY_PS),
    "1.6Tbps": Link(rate_bps=parse_rate("1.6Tbps"), delay_ps=DELAY_PS),
}
CONFIG = FabricConfig(header_b=HEADER_B, switch_latency_ps=LATENCY_PS)


def two_leaves(link: Link) -> nx.Graph:
    return topology.leaf_spine(
        2,
        1,
        2,
        rate_bps=link.rate_bps,
        delay_ps=link.delay_ps,
        encoding_data_bits=link.encoding_data_bits,
        encoding_line_bits=link.encoding_line_bits,
    )


@pytest.mark.parametrize("forwarding", ["cut_through", "store_and_forward"])
@pytest.mark.parametrize("rate", list(RATES))
def test_stream_across_the_fabric_is_bytes_over_rate_plus_path_latency(rate, forwarding):
    link = RATES[rate]
    g = two_leaves(link)  # host 0 -> leaf -> spine -> leaf -> host 2: 4 links, 3 switches
    size_b = parse_size("2MiB")
    config = replace(CONFIG, forwarding=forwarding)
    r = simulate(g, [Flow(src=0, dst=2, size_b=size_b, mtu_b=MTU_B)], fabric=config)
    packets = size_b // MTU_B
    tx_ps = link.tx_ps(WIRE_B)
    # the host sends back to back, and the last packet crosses 4 links and 3 switch latencies;
    # store-and-forward serializes it once more at each of the 3 switches, cut-through waits
    # there only for its routing header (the 8-byte LRH)
    per_switch_ps = link.tx_ps(WIRE_B) if forwarding == "store_and_forward" else link.tx_ps(8)
    path_ps = 4 * DELAY_PS + 3 * LATENCY_PS + 3 * per_switch_ps
    assert r.hosts["last_arrival_ps"][2] == packets * tx_ps + path_ps
    ideal_ps = packets * WIRE_B * 8 * 10**12 / link.data_rate_bps + path_ps
    assert r.finish_ps == pytest.approx(ideal_ps, rel=0.005)
    assert r.hosts["rx_packets"].tolist() == [0, 0, packets, 0]
    assert r.link_traversals() == 4 * packets  # 4 links, each packet once
    assert r.unroutable_packets == 0


@pytest.mark.parametrize("forwarding", ["cut_through", "store_and_forward"])
def test_one_packet_across_h_switches_is_one_serialization_plus_h_switch_times(forwarding):
    g = topology.resolve("fat-tree-k4")
    link = Link.from_edge(next(iter(g.edges.values())))
    assert all(Link.from_edge(a) == link for *_, a in g.edges(data=True)), "fat-tree-k4's links are alike"
    hosts = sorted(n for n, d in g.nodes(data=True) if d["role"] == "host")
    tx_ps = link.tx_ps(WIRE_B)
    # at each switch: store-and-forward waits for the whole packet, cut-through for its LRH
    wait_ps = link.tx_ps(8) if forwarding == "cut_through" else tx_ps
    config = replace(CONFIG, forwarding=forwarding)
    switches_seen = set()
    for dst in hosts[1:]:
        links = nx.shortest_path_length(g, hosts[0], dst)
        if links - 1 in switches_seen:
            continue
        switches_seen.add(links - 1)
        r = simulate(g, [Flow(src=hosts[0], dst=dst, size_b=MTU_B, mtu_b=MTU_B)], fabric=config)
        expected_ps = tx_ps + (links - 1) * (wait_ps + LATENCY_PS) + links * link.delay_ps
        assert r.hosts["last_arrival_ps"][dst] == expected_ps, f"{links - 1} switches"
    assert switches_seen == {1, 3, 5}


@pytest.mark.parametrize("forwarding", ["cut_through", "store_and_forward"])
def test_a_multicast_copy_cuts_through_every_switch_of_its_tree_path(forwarding):
    link = RATES["100Gbps"]
    g = two_leaves(link)  # hosts 0, 1 on one leaf, 2, 3 on the other, one spine: one path each
    r = simulate(
        g, [Flow(src=0, group=0, size_b=MTU_B)], groups=[[0, 1, 2, 3]], fabric=replace(CONFIG, forwarding=forwarding)
    )
    tx_ps = link.tx_ps(WIRE_B)
    wait_ps = link.tx_ps(8) if forwarding == "cut_through" else tx_ps
    for dst, switches in ((1, 1), (2, 3), (3, 3)):
        expected_ps = tx_ps + switches * (wait_ps + LATENCY_PS) + (switches + 1) * DELAY_PS
        assert r.hosts["last_arrival_ps"][dst] == expected_ps, dst
    assert r.hosts["rx_packets"].tolist() == [0, 1, 1, 1]


@pytest.mark.parametrize("forwarding", ["cut_through", "store_and_forward"])
def test_cut_through_onto_a_faster_link_waits_for_the_last_bit(forwarding):
    host_link = RATES["100Gbps"]
    g = two_leaves(host_link)
    fast = RATES["400Gbps"]
    for u, v, a in g.edges(data=True):
        if g.nodes[u]["role"] != "host" and g.nodes[v]["role"] != "host":
            a["rate_bps"] = fast.rate_bps  # leaf - spine - leaf at 4x the hosts' rate
    r = simulate(g, [Flow(src=0, dst=2, size_b=MTU_B, mtu_b=MTU_B)], fabric=replace(CONFIG, forwarding=forwarding))
    slow_ps, fast_ps = host_link.tx_ps(WIRE_B), fast.tx_ps(WIRE_B)
    if forwarding == "cut_through":
        # the first leaf cannot send the last bit on the fast link before it has arrived (plus its
        # latency): it starts fast_ps before that; spine and second leaf wait for the LRH only
        expected_ps = 2 * slow_ps - fast_ps + 2 * fast.tx_ps(8) + 3 * LATENCY_PS + 4 * DELAY_PS
    else:
        expected_ps = 2 * slow_ps + 2 * fast_ps + 3 * LATENCY_PS + 4 * DELAY_PS
    assert r.hosts["last_arrival_ps"][2] == expected_ps


@pytest.fixture(scope="module")
def testbed():
    return topology.resolve("testbed-188")


def _tree_ports_away_from(result, tree, sender):
    """Global indices of the ports a multicast from `sender` must use: the tree, oriented."""
    adj = {}
    for u, pu, v, pv in tree.tree_links:
        adj.setdefault(u, []).append((pu, v))
        adj.setdefault(v, []).append((pv, u))
    used, seen, todo = set(), {sender}, [sender]
    while todo:
        node = todo.pop()
        for port, nxt in adj.get(node, []):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
                used.add(result.port_index(node, port))
    return used


def test_multicast_to_188_hosts_reaches_each_once_and_uses_each_tree_link_once(testbed):
    members = list(range(188))
    sender, size_b = 37, 64 * MTU_B
    r = simulate(testbed, [Flow(src=sender, group=0, size_b=size_b)], groups=[members], fabric=CONFIG)
    packets = size_b // MTU_B
    expected = np.full(188, packets)
    expected[sender] = 0
    np.testing.assert_array_equal(r.hosts["rx_packets"], expected)
    tree = r.trees[0]
    assert len(tree.tree_links) == 188 + 12  # every host link + one link from each leaf to the root
    used = _tree_ports_away_from(r, tree, sender)
    busy = set(np.flatnonzero(r.ports["tx_packets"]).tolist())
    assert busy == used
    assert (r.ports["tx_packets"][sorted(used)] == packets).all()
    assert (r.ports["tx_wire_bytes"][sorted(used)] == packets * WIRE_B).all()
    assert r.link_traversals() == packets * len(tree.tree_links)


@pytest.mark.parametrize("hosts", [4, 8, 16])
def test_multicast_versus_ring_link_traversals_is_2_minus_2_over_p(hosts):
    g = star(hosts, RATES["400Gbps"])
    share_b = 8 * MTU_B
    mcast = simulate(
        g, [Flow(src=h, group=0, size_b=share_b) for h in range(hosts)], groups=[list(range(hosts))], fabric=CONFIG
    )
    # the ring: every host passes the other P-1 shares on to its successor
    ring = simulate(
        g, [Flow(src=h, dst=(h + 1) % hosts, size_b=(hosts - 1) * share_b) for h in range(hosts)], fabric=CONFIG
    )
    packets = share_b // MTU_B
    assert mcast.link_traversals() == hosts * hosts * packets  # 1 up + (P-1) down per packet
    assert ring.link_traversals() == 2 * hosts * (hosts - 1) * packets
    assert ring.link_traversals() / mcast.link_traversals() == pytest.approx(2 - 2 / hosts)
    # and every host got every other share exactly once
    np.testing.assert_array_equal(mcast.hosts["rx_packets"], np.full(hosts, (hosts - 1) * packets))


def _incast(mode, buffer_b, senders=16):
    g = star(senders + 1, RATES["100Gbps"])
    size_b = 32 * MTU_B
    flows = [Flow(src=h, dst=0, size_b=size_b) for h in range(1, senders + 1)]
    cfg = FabricConfig(header_b=HEADER_B, switch_latency_ps=LATENCY_PS, flow_control=mode, switch_buffer_b=buffer_b)
    return simulate(g, flows, fabric=cfg), size_b // MTU_B


def test_lossless_incast_drops_nothing_and_takes_16_stream_times():
    r, packets = _incast("lossless", 4 * WIRE_B)
    assert r.ports["drop_packets"].sum() == 0
    assert r.ports["credit_stalls"].sum() > 0, "the small buffer really pushed back"
    assert r.hosts["rx_packets"][0] == 16 * packets
    tx_ps = RATES["100Gbps"].tx_ps(WIRE_B)
    single_ps = packets * tx_ps  # one stream's serialization time on the receiver's link
    # the first packet's trip: its switch cuts through once the 8-byte LRH is in
    first_ps = tx_ps + RATES["100Gbps"].tx_ps(8) + 2 * DELAY_PS + LATENCY_PS
    assert r.finish_ps == pytest.approx(16 * single_ps + first_ps - tx_ps, rel=0.001)


def test_lossy_incast_drops_and_conserves_packets():
    r, packets = _incast("lossy", 4 * WIRE_B)
    dropped = int(r.ports["drop_packets"].sum())
    assert dropped > 0, "the small buffer really overflowed"
    sent = int(r.sources["sent_packets"].sum())
    assert sent == 16 * packets
    assert sent == int(r.hosts["rx_packets"].sum()) + dropped
    to_receiver = r.port_index(17, 0)
    assert r.ports["max_queue_bytes"][to_receiver] <= 4 * WIRE_B


def test_same_run_twice_gives_identical_counters(testbed):
    flows = [Flow(src=h, dst=(h + 17) % 188, size_b=8 * MTU_B, flow_id=h) for h in range(0, 188, 5)]
    flows.append(Flow(src=3, group=0, size_b=4 * MTU_B))
    a = simulate(testbed, flows, groups=[list(range(0, 188, 3))], fabric=CONFIG)
    b = simulate(testbed, flows, groups=[list(range(0, 188, 3))], fabric=CONFIG)
    for name in a.ports:
        np.testing.assert_array_equal(a.ports[name], b.ports[name])
    for name in a.hosts:
        np.testing.assert_array_equal(a.hosts[name], b.hosts[name])
    assert a.end_ps == b.end_ps


def test_ecmp_spreads_flows_over_parallel_links_and_keeps_a_flow_on_one(testbed):
    # host 0 (leaf 0) to host 20 (leaf 1): 6 spines x 3 parallel links = 18 equal-cost uplinks
    flows = [Flow(src=0, dst=20, size_b=2 * MTU_B, flow_id=f, start_ps=f * 10**7) for f in range(64)]
    r = simulate(testbed, flows, fabric=CONFIG)
    leaf0 = 188
    uplinks = [r.port_index(leaf0, p) for p in range(16, 16 + 18)]
    per_link = r.ports["tx_packets"][uplinks]
    assert per_link.sum() == 64 * 2
    assert (per_link % 2 == 0).all(), "both packets of a flow take the same link"
    assert (per_link > 0).sum() >= 12, "64 flows spread over most of the 18 links"


@pytest.mark.parametrize(
    ("flow", "message"),
    [
        (Flow(src=200, dst=1, size_b=1), r"flow 0: src=200 is not a host \(hosts are 0..187\)"),
        (Flow(src=0, dst=188, size_b=1), r"flow 0: dst=188 is not a host"),
        (Flow(src=0, dst=0, size_b=1), r"flow 0: dst=0 is the sender itself"),
        (Flow(src=0, size_b=1), r"flow 0: give exactly one of dst \(a host\) and group"),
        (Flow(src=0, group=3, size_b=1), r"flow 0: group=3 is not one of the 0 groups given"),
        (Flow(src=0, dst=1, size_b=0), r"flow 0: size_b=0 must be > 0"),
    ],
)
def test_bad_flow_is_one_line(testbed, flow, message):
    with pytest.raises(McsimError, match=message):
        simulate(testbed, [flow], fabric=CONFIG)


def test_sender_outside_its_group_is_rejected(testbed):
    with pytest.raises(McsimError, match=r"flow 0: src=5 is not a member of group 0"):
        simulate(testbed, [Flow(src=5, group=0, size_b=MTU_B)], groups=[[0, 1, 2]], fabric=CONFIG)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"flow_control": "lossles"},
            r"unknown flow control 'lossles'; choose one of lossless, lossy, pfc; did you mean",
        ),
        ({"switch_buffer_b": 0}, r"FabricConfig: switch_buffer_b=0 must be > 0"),
        ({"switch_latency_ps": -1}, r"FabricConfig: switch_latency_ps=-1 must be an integer >= 0"),
        ({"forwarding": "cut-through"}, r"unknown forwarding 'cut-through'; choose one of cut_through, store_and"),
        ({"routing_header_b": 0}, r"FabricConfig: routing_header_b=0 must be > 0"),
        ({"routing_header_b": 8.0}, r"FabricConfig: routing_header_b=8.0 must be an integer >= 0"),
    ],
)
def test_bad_config_is_one_line(kwargs, message):
    with pytest.raises(McsimError, match=message):
        FabricConfig(**kwargs)


def test_lossless_buffer_smaller_than_a_packet_is_rejected(testbed):
    with pytest.raises(McsimError, match=r"flow 0: a 4122 B packet does not fit a lossless buffer of 4000 B"):
        simulate(testbed, [Flow(src=0, dst=1, size_b=1)], fabric=FabricConfig(header_b=10, switch_buffer_b=4000))


def test_port_serialization_time_follows_its_attributes_when_they_change():
    """GetTxTime caches the last size's time; setting a line attribute must drop that cache."""
    from mcsim.native import runtime

    ns = runtime.cppyy_ns()
    port = ns.CreateObject[ns.mcsim.Port]()

    def expect_ps(header_b: int, rate_bps: int, data_bits: int = 1, line_bits: int = 1) -> int:
        bits = (MTU_B + header_b) * 8 * 10**12 * line_bits
        return -(-bits // (data_bits * rate_bps))  # ceil: exact integer ps, rounded up

    header_b = 3 * DEFAULT_HEADER_BYTES  # not the default: setting it must change the time
    assert port.GetTxTime(MTU_B).GetPicoSeconds() == expect_ps(DEFAULT_HEADER_BYTES, 56 * 10**9)  # the defaults
    port.SetAttribute("HeaderBytes", ns.UintegerValue(header_b))
    assert port.GetTxTime(MTU_B).GetPicoSeconds() == expect_ps(header_b, 56 * 10**9)
    port.SetAttribute("DataRate", ns.DataRateValue(ns.DataRate(parse_rate("1.6Tbps"))))
    assert port.GetTxTime(MTU_B).GetPicoSeconds() == expect_ps(header_b, parse_rate("1.6Tbps"))
    port.SetAttribute("EncodingDataBits", ns.UintegerValue(64))
    port.SetAttribute("EncodingLineBits", ns.UintegerValue(66))
    assert port.GetTxTime(MTU_B).GetPicoSeconds() == expect_ps(header_b, parse_rate("1.6Tbps"), 64, 66)
    value = ns.UintegerValue()
    port.GetAttribute("EncodingLineBits", value)
    assert value.Get() == 66
