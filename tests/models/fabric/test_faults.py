# SPDX-License-Identifier: GPL-2.0-only
"""Fault injection in the fabric: random loss, chosen drops, link down; exact conservation."""

import math

import networkx as nx
import numpy as np
import pytest

from mcsim import topology
from mcsim.config.fabric import FABRIC_HEADER_BYTES, FabricConfig, Faults, Flow
from mcsim.errors import McsimError
from mcsim.native import fabric
from mcsim.runs.flows import simulate
from mcsim.runs.stream import expected_finish_ps, two_hosts
from mcsim.topology.physics import Link
from mcsim.units import parse_rate

HEADER_B = 10
MTU_B = 4096
WIRE_B = MTU_B + FABRIC_HEADER_BYTES + HEADER_B
DELAY_PS = 100_000
LINK = Link(rate_bps=parse_rate("100Gbps"), delay_ps=DELAY_PS)
TX_PS = LINK.tx_ps(WIRE_B)  # 329,760 ps


def config(**kwargs) -> FabricConfig:
    return FabricConfig(header_b=HEADER_B, switch_latency_ps=150_000, **kwargs)


def star(hosts: int) -> nx.Graph:
    """hosts hosts on one switch (node `hosts`, whose port i leads to host i)."""
    g = topology.leaf_spine(1, 0, hosts, rate_bps=LINK.rate_bps, delay_ps=LINK.delay_ps)
    g.graph["name"] = f"star-{hosts}"
    return g


def leaf_spine() -> nx.Graph:
    """Hosts 0-3 on leaf 8, 4-7 on leaf 9; spines 10 and 11; two parallel links leaf-spine."""
    return topology.leaf_spine(2, 2, 4, 2, rate_bps=LINK.rate_bps, delay_ps=DELAY_PS)


def assert_binomial(lost: int, trials: int, p: float) -> None:
    """lost ~ Binomial(trials, p): within 5 sigma (a false alarm about once in 3.5 million)."""
    assert abs(lost - trials * p) <= 5 * math.sqrt(trials * p * (1 - p)), (lost, trials, p)


def arrival_ps(i: int) -> int:
    """Back-to-back stream over one link from t=0: packet i's last bit arrives here."""
    return (i + 1) * TX_PS + DELAY_PS


# --- random loss -------------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "p"), [("lossy", 1e-2), ("lossless", 1e-2), ("lossless", 1e-3)])
def test_random_loss_conserves_packets_and_matches_p(mode, p):
    g = leaf_spine()
    # a cross-leaf permutation (ECMP over 4 uplinks), plus a 3-to-1 incast onto host 4
    flows = [Flow(src=h, dst=(h + 4) % 8, size_b=256 * MTU_B, flow_id=h) for h in range(8)]
    flows += [Flow(src=h, dst=4, size_b=64 * MTU_B, flow_id=10 + h) for h in (1, 2, 3)]
    cfg = config(flow_control=mode, switch_buffer_b=3 * WIRE_B, loss=p)
    r = simulate(g, flows, fabric=cfg)
    drops = r.drops_by_cause()
    sent = int(r.sources["sent_packets"].sum())
    assert sent == 8 * 256 + 3 * 64, "every source sent everything: no credit leaked"
    assert drops["loss"] > 0, "packets were really lost"
    assert drops["chosen"] == drops["link_down"] == 0
    if mode == "lossy":
        assert drops["tail"] > 0, "the small buffers really overflowed"
    else:
        assert drops["tail"] == 0
        assert r.ports["credit_stalls"].sum() > 0, "credits really pushed back"
    assert sent == int(r.hosts["rx_packets"].sum()) + drops["loss"] + drops["tail"]
    np.testing.assert_array_equal(r.dropped_packets(), r.ports["drop_packets"] + r.ports["loss_packets"])
    # every packet put on a wire is one Bernoulli(p) trial
    assert_binomial(drops["loss"], int(r.ports["tx_packets"].sum()), p)


def test_per_edge_loss_overrides_the_fabric_loss():
    g = star(4)  # switch 4
    flows = [Flow(src=h, dst=(h + 1) % 4, size_b=512 * MTU_B) for h in range(4)]
    faults = Faults(link_loss={(4, 1): 0.0, (2, 4): 0.1})  # either order names the edge
    r = simulate(g, flows, fabric=config(flow_control="lossy", loss=0.02), faults=faults)
    loss, tx = r.ports["loss_packets"], r.ports["tx_packets"]
    edge = {h: [r.port_index(h, 0), r.port_index(4, h)] for h in range(4)}  # both directions
    assert (tx[edge[1]] > 0).all()
    assert (loss[edge[1]] == 0).all(), "p=0 on edge (1, 4) overrides loss=0.02"
    assert_binomial(int(loss[edge[2]].sum()), int(tx[edge[2]].sum()), 0.1)
    rest = edge[0] + edge[3]
    assert loss[rest].sum() > 0
    assert_binomial(int(loss[rest].sum()), int(tx[rest].sum()), 0.02)
    assert int(r.sources["sent_packets"].sum()) == int(r.hosts["rx_packets"].sum()) + int(loss.sum())


def test_same_seed_same_losses_another_seed_other_losses():
    g = leaf_spine()
    flows = [Flow(src=h, dst=(h + 4) % 8, size_b=128 * MTU_B, flow_id=h) for h in range(8)]
    a, b, c = (simulate(g, flows, fabric=config(loss=1e-2, seed=s)) for s in (5, 5, 6))
    for name in a.ports:
        np.testing.assert_array_equal(a.ports[name], b.ports[name])
    for name in a.hosts:
        np.testing.assert_array_equal(a.hosts[name], b.hosts[name])
    assert a.end_ps == b.end_ps
    assert a.ports["loss_packets"].sum() > 0
    assert not np.array_equal(a.ports["loss_packets"], c.ports["loss_packets"])


# --- chosen drops ------------------------------------------------------------------------------


def test_chosen_drops_lose_exactly_those_packets():
    n = 64
    faults = Faults(drops=[(0, 0, 63), (0, 0, 0), (0, 0, 5), (0, 0, 1000)])  # 1000: never sent
    r = simulate(two_hosts(LINK), [Flow(src=0, dst=1, size_b=n * MTU_B)], fabric=config(), faults=faults)
    assert r.hosts["rx_packets"][1] == n - 3
    assert r.ports["chosen_drops"][r.port_index(0, 0)] == 3
    assert r.ports["tx_packets"][r.port_index(0, 0)] == n, "a lost packet still used the wire"
    assert r.hosts["first_arrival_ps"][1] == arrival_ps(1)  # packet 0 lost
    assert r.hosts["last_arrival_ps"][1] == arrival_ps(62)  # packet 63 lost
    assert arrival_ps(n - 1) == expected_finish_ps(LINK, n * MTU_B, MTU_B, HEADER_B)


def test_chosen_drops_on_a_multicast_root_and_a_switch_port():
    g = star(4)
    n = 8
    # the root's first packet, and the 4th packet the switch sends toward host 2
    faults = Faults(drops=[(0, 0, 0), (4, 2, 3)])
    r = simulate(g, [Flow(src=0, group=0, size_b=n * MTU_B)], groups=[[0, 1, 2, 3]], fabric=config(), faults=faults)
    assert r.hosts["rx_packets"].tolist() == [0, n - 1, n - 2, n - 1]
    assert r.drops_by_cause() == {"tail": 0, "loss": 0, "chosen": 2, "link_down": 0}
    assert r.ports["chosen_drops"][[r.port_index(0, 0), r.port_index(4, 2)]].tolist() == [1, 1]


# --- link down ---------------------------------------------------------------------------------


def _down_count(n: int, intervals) -> int:
    return sum(1 for i in range(n) if any(d <= arrival_ps(i) < u for d, u in intervals))


def test_link_down_drops_exactly_the_packets_arriving_inside_both_directions():
    n = 100
    intervals = [
        (arrival_ps(10), arrival_ps(20)),  # [a10, a20): packets 10..19 (half-open)
        (arrival_ps(15), arrival_ps(25)),  # overlaps: 20..24 too
        (arrival_ps(50) - 1, arrival_ps(50) + 1),  # just packet 50
        (arrival_ps(70) + 1, arrival_ps(71)),  # between two arrivals: none
        (arrival_ps(98), 10**13),  # the last two
    ]
    expected = _down_count(n, intervals)
    assert expected == 15 + 1 + 0 + 2
    faults = Faults(link_down=[(0, 1, d, u) if i % 2 else (1, 0, d, u) for i, (d, u) in enumerate(intervals)])
    flows = [Flow(src=0, dst=1, size_b=n * MTU_B), Flow(src=1, dst=0, size_b=n * MTU_B)]
    r = simulate(two_hosts(LINK), flows, fabric=config(), faults=faults)  # lossless: credits return
    assert r.hosts["rx_packets"].tolist() == [n - expected] * 2
    assert r.ports["link_down_drops"].tolist() == [expected] * 2
    assert r.ports["tx_packets"].tolist() == [n] * 2
    assert r.hosts["first_arrival_ps"].tolist() == [arrival_ps(0)] * 2
    assert r.hosts["last_arrival_ps"].tolist() == [arrival_ps(97)] * 2


def test_link_down_takes_every_parallel_link_and_lossless_still_finishes():
    g = leaf_spine()
    flows = [Flow(src=h, dst=(h + 4) % 8, size_b=8 * MTU_B, flow_id=f) for h in range(8) for f in range(4)]
    # leaf 8 cut off from both spines for the whole run: no packet crosses between the leaves;
    # static routes (no subnet manager), so the packets go into the dead links and are lost there
    faults = Faults(link_down=[(8, 10, 0, 10**15), (11, 8, 0, 10**15)], reroute_delay_ps=None)
    r = simulate(g, flows, fabric=config(switch_buffer_b=2 * WIRE_B), faults=faults)
    sent = int(r.sources["sent_packets"].sum())
    assert sent == len(flows) * 8
    assert r.hosts["rx_packets"].sum() == 0
    assert r.drops_by_cause() == {"tail": 0, "loss": 0, "chosen": 0, "link_down": sent}
    uplinks = [r.port_index(8, p) for p in range(4, 8)]  # leaf 8: hosts on 0-3, then 2 x 2 uplinks
    assert (r.ports["tx_packets"][uplinks] > 0).sum() >= 3, "ECMP used the parallel links"
    np.testing.assert_array_equal(r.ports["link_down_drops"][uplinks], r.ports["tx_packets"][uplinks])


def test_causes_count_once_link_down_then_chosen_then_random():
    n = 40
    faults = Faults(
        link_loss={(0, 1): 0.3},
        drops=[(0, 0, 3), (0, 0, 12)],  # 12 arrives while the link is down: counted there
        link_down=[(0, 1, arrival_ps(10), arrival_ps(20))],
    )
    r = simulate(two_hosts(LINK), [Flow(src=0, dst=1, size_b=n * MTU_B)], fabric=config(), faults=faults)
    port = r.port_index(0, 0)
    assert r.ports["link_down_drops"][port] == 10
    assert r.ports["chosen_drops"][port] == 1
    assert r.ports["loss_packets"][port] > 0
    assert r.hosts["rx_packets"][1] + r.dropped_packets()[port] == n


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"loss": 1.0}, r"FabricConfig: loss=1.0 must be a probability >= 0 and < 1; e.g. 1e-3"),
        ({"loss": -0.001}, r"FabricConfig: loss=-0.001 must be a probability >= 0 and < 1"),
        ({"loss": float("nan")}, r"FabricConfig: loss=nan must be a probability"),
        ({"loss": "1e-3"}, r"FabricConfig: loss='1e-3' must be a probability"),
        ({"seed": -1}, r"FabricConfig: seed=-1 must be an integer >= 0"),
        ({"seed": 2**64}, r"FabricConfig: seed=18446744073709551616 must be < 2\*\*64"),
    ],
)
def test_bad_loss_or_seed_is_one_line(kwargs, message):
    with pytest.raises(McsimError, match=message):
        FabricConfig(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"link_loss": {(0, 4): 1.0}}, r"Faults: link_loss\[\(0, 4\)\]: p=1.0 must be a probability >= 0 and < 1"),
        ({"link_loss": {(0, 4): -0.5}}, r"Faults: link_loss\[\(0, 4\)\]: p=-0.5 must be a probability"),
        ({"link_loss": {0: 0.1}}, r"Faults: link_loss\[0\] must be keyed by an edge \(u, v\)"),
        ({"drops": [(0, 0, -1)]}, r"Faults: drops\[0\]=\(0, 0, -1\): index=-1 must be >= 0"),
        ({"drops": [(0, 0)]}, r"Faults: drops\[0\]=\(0, 0\) must be 3 integers \(node, port, index\)"),
        ({"drops": [(0, 0, 1), (0, 0, 1)]}, r"Faults: drops\[1\]=\(0, 0, 1\) repeats drops\[0\]"),
        ({"link_down": [(0, 4, 500, 500)]}, r"Faults: link_down\[0\]=\(0, 4, 500, 500\): up_ps=500 must be > "),
        ({"link_down": [(0, 4, -1, 5)]}, r"Faults: link_down\[0\]=\(0, 4, -1, 5\): down_ps=-1 must be >= 0"),
        ({"link_down": [(0, 4, 0.5, 5)]}, r"Faults: link_down\[0\]=\(0, 4, 0.5, 5\) must be 4 integers"),
        (
            {"link_down": [(0, 4, 2**62 + 1, None)]},
            r"^Faults: link_down\[0\]=\(0, 4, 4611686018427387905, None\): down_ps=4611686018427387905 must be "
            r"<= 4611686018427387904 \(2\^62 ps = 53\.4 days, the simulated clock's limit\)$",
        ),
        (
            {"link_down": [(0, 4, 0, 10**40)]},
            r"^Faults: link_down\[0\]=\(0, 4, 0, 10{40}\): up_ps=10{40} must be <= 4611686018427387904 \(2\^62 ps",
        ),
        (
            {"drops": [(0, 0, 2**64)]},
            r"^Faults: drops\[0\]=\(0, 0, 18446744073709551616\): index=18446744073709551616 must be "
            r"<= 18446744073709551615 \(uint64 in C\+\+\)$",
        ),
        (
            {"drops": [(2**32, 0, 0)]},
            r"^Faults: drops\[0\]=\(4294967296, 0, 0\): node=4294967296 must be <= 4294967295",
        ),
        (
            {"drops": [(0, 2**40, 0)]},
            r"^Faults: drops\[0\]=\(0, 1099511627776, 0\): port=1099511627776 must be <= 4294967295",
        ),
        ({"link_loss": {(0, 4): float("inf")}}, r"^Faults: link_loss\[\(0, 4\)\]: p=inf must be a probability"),
        (
            {"reroute_delay_ps": 2**63},
            r"^Faults: reroute_delay_ps=9223372036854775808 must be <= 4611686018427387904 \(2\^62 ps",
        ),
    ],
)
def test_bad_fault_entry_is_one_line(kwargs, message):
    with pytest.raises(McsimError, match=message):
        Faults(**kwargs)


@pytest.fixture
def no_cxx(monkeypatch):
    """Fail the test if anything reaches the C++ side."""

    def refuse():
        raise AssertionError("a bad fault reached C++")

    monkeypatch.setattr(fabric.runtime, "load", refuse)


@pytest.mark.parametrize(
    ("faults", "message"),
    [
        (
            Faults(link_loss={(0, 1): 0.1}),
            r"Faults: link_loss\[\(0, 1\)\]: \(0, 1\) is not an edge of star-4; node 0 links to 4",
        ),
        (
            Faults(link_loss={(0, 4): 0.1, (4, 0): 0.2}),
            r"Faults: link_loss\[\(4, 0\)\] repeats link_loss\[\(0, 4\)\]; give each edge once",
        ),
        (
            Faults(drops=[(0, 1, 0)]),
            r"Faults: drops\[0\]=\(0, 1, 0\): port=1 is out of range; node 0 has ports 0..0",
        ),
        (Faults(drops=[(9, 0, 0)]), r"Faults: drops\[0\]=\(9, 0, 0\): node=9 is not in star-4 \(nodes are 0..4\)"),
        (
            Faults(link_down=[(1, 2, 0, 10)]),
            r"Faults: link_down\[0\]=\(1, 2, 0, 10\): \(1, 2\) is not an edge of star-4; node 1 links to 4",
        ),
    ],
)
def test_fault_naming_a_missing_edge_or_port_fails_before_cxx(no_cxx, faults, message):
    with pytest.raises(McsimError, match=message):
        simulate(star(4), [Flow(src=0, dst=1, size_b=MTU_B)], fabric=config(), faults=faults)


def test_raw_flows_that_lost_packets_have_no_finish_time():
    from mcsim.errors import IncompleteRun

    flows = [Flow(src=0, dst=1, size_b=10 * MTU_B)]
    clean = simulate(two_hosts(LINK), flows, fabric=config())
    assert clean.expected_rx_packets == 10 and clean.finish_ps > 0
    # every packet lost: there is no last arrival, so no finish (it used to report 0)
    everything = simulate(two_hosts(LINK), flows, fabric=config(), faults=Faults(link_down=[(0, 1, 0, None)]))
    with pytest.raises(IncompleteRun, match=r"10 of 10 packets never arrived \(drops: 10 link_down; 0 unroutable\)"):
        _ = everything.finish_ps
    # the last packet lost: the previous arrival is not the finish either
    last = simulate(two_hosts(LINK), flows, fabric=config(), faults=Faults(drops=[(0, 0, 9)]))
    with pytest.raises(IncompleteRun, match=r"1 of 10 packets never arrived \(drops: 1 chosen; 0 unroutable\)"):
        _ = last.finish_ps
    # a multicast flow counts one copy per other member
    g = star(4)
    mc = simulate(g, [Flow(src=0, group=0, size_b=3 * MTU_B)], groups=[[0, 1, 2, 3]], fabric=config())
    assert mc.expected_rx_packets == 9 and mc.finish_ps > 0
