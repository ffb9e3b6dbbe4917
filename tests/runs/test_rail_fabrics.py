# SPDX-License-Identifier: GPL-2.0-only
"""Collectives on rail-optimised fabrics with spines per rail and with planes, counted per port: the hierarchical
ones keep their inter-node traffic on its rail, a flow keeps to one plane (and so runs at a plane's rate), and a
flat ring on a per-rail fabric completes through the NVSwitches of the nodes (PXN)."""

import itertools

import numpy as np
import pytest

from mcsim import topology
from mcsim.runs.scenario import Scenario
from mcsim.topology.nodes import nodes_of, rail_optimised
from mcsim.topology.rail_fabric import LEAF_TIER
from mcsim.units import PS_PER_S

NDR = {"rate_bps": 425 * 10**9, "encoding_data_bits": 16, "encoding_line_bits": 17, "delay_ps": 100_000}
FABRICS = {  # 4 nodes of 4 H100s, a 400G NIC per GPU, as rail-4x4 (spines shared, one leaf a rail)
    "per-rail": {"spines": 8, "nodes_per_leaf": 2, "spine_groups": "per_rail"},  # 2 leaves and 2 spines a rail
    "two-planes": {"spines": 2, "planes": 2},  # a leaf a rail in each plane, a spine a plane
}
N = 1 << 20


def fabric(name):
    return rail_optimised(nodes=4, gpus_per_node=4, **NDR, **FABRICS[name])


def _ports(r):
    """Every port as (its node, its peer's node, packets it sent)."""
    node = np.asarray(r.fabric.port_node)
    peer = node[np.asarray(r.fabric.port_peer)]
    return list(zip(node.tolist(), peer.tolist(), r.fabric.ports["tx_packets"].tolist(), strict=True))


def _nvswitch_packets(g, r):
    return sum(tx for node, _, tx in _ports(r) if g.nodes[node].get("part") == "nvswitch")


def _rail(g, x):
    """A network part's rail (a NIC's, a leaf's, a per-rail spine's); None for a spine the rails share."""
    return g.nodes[x].get("rail")


@pytest.mark.parametrize("algorithm", ["hier_ring", "hier_mcast"])
@pytest.mark.parametrize("name", sorted(FABRICS))
def test_a_hierarchical_allgather_keeps_to_its_rails(name, algorithm):
    """No packet crosses rails: none on a port between parts of two rails or to a spine the rails share, and the
    NVSwitches carry exactly the node phase's packets, as many as on rail-4x4 (where the spines carry none): no
    rail-phase packet went through a node's NVSwitch onto another rail."""
    g = fabric(name)
    run = {"collective": "allgather", "algorithm": algorithm, "bytes_per_rank": N, "verify": True}
    r = Scenario(topology=g, **run).run()
    base = Scenario(topology="rail-4x4", **run).run()
    network = [(a, b, tx) for a, b, tx in _ports(r) if max(g.nodes[a]["tier"], g.nodes[b]["tier"]) >= LEAF_TIER]
    assert sum(tx for *_, tx in network) > 0
    assert all(_rail(g, a) == _rail(g, b) is not None for a, b, tx in network if tx)
    assert _nvswitch_packets(g, r) == _nvswitch_packets(topology.resolve("rail-4x4"), base)


def test_a_flow_keeps_to_one_plane_and_runs_at_a_plane_s_rate():
    """ECMP picks a plane per flow, so a ring's one flow per NIC runs on one of its two ports, at half its rate:
    the rail phase takes N(nodes-1)/(B/2) (within 3 %), and the whole ~1.67 x its bound (which counts the NIC's
    whole rate). Each NIC's other port carries at most the acknowledgements of the flow coming in."""
    g = fabric("two-planes")
    r = Scenario(topology=g, collective="allgather", algorithm="hier_ring", bytes_per_rank=N).run()
    found = nodes_of(g)
    plane_ps = N * 3 * 8 * PS_PER_S / (found.network_bps / 2)
    assert r.first_phase is not None and 1 <= r.first_phase.finish_ps.max() / plane_ps <= 1.03
    assert 1.6 <= r.finish_ps.max() / r.bound_ps <= 1.75
    sent = r.fabric.ports["tx_bytes"]
    node = np.asarray(r.fabric.port_node)
    peer = node[np.asarray(r.fabric.port_peer)]
    used = set()
    for nic in (x for x, p in g.nodes(data="part") if p == "nic"):
        wires = {
            int(peer[i]): int(sent[i])
            for i in np.flatnonzero(node == nic)
            if g.nodes[int(peer[i])]["tier"] == LEAF_TIER
        }
        low, high = sorted(wires.values())
        assert len(wires) == 2 and high >= N * 3 and low <= high // 100
        used |= {g.nodes[leaf]["plane"] for leaf, b in wires.items() if b == high}
    assert used == {0, 1}  # the flows spread over both planes


def test_a_flat_ring_on_a_per_rail_fabric_completes_through_the_nodes_nvswitches():
    """A flat ring's step from GPU 3 of a node to GPU 0 of the next crosses rails: with per-rail spines it has no
    way through the spines, so it crosses a node's NVSwitch (PXN); every packet (data and acknowledgement) crosses
    exactly one NVSwitch, inside a node or on such a path. Byte-exact, within 3 % of its bound."""
    g = fabric("per-rail")
    r = Scenario(topology=g, collective="allgather", algorithm="ring", bytes_per_rank=N, verify=True).run()
    assert 1 <= r.finish_ps.max() / r.bound_ps <= 1.03
    from_gpus = sum(tx for node, _, tx in _ports(r) if g.nodes[node].get("part") == "gpu")
    assert _nvswitch_packets(g, r) == from_gpus
    shared = Scenario(topology="rail-4x4", collective="allgather", algorithm="ring", bytes_per_rank=N).run()
    assert _nvswitch_packets(topology.resolve("rail-4x4"), shared) < from_gpus  # there the spines carry some


@pytest.mark.parametrize("name", ["per-rail", "two-planes"])
def test_a_nic_wire_down_mid_run_is_routed_around_through_a_node(name):
    """A NIC's wire dies 20 us into a flat ring: the subnet manager reroutes over the links that are up (on nodes,
    every minimal path: up*/down* has no way through a node), so its GPU's traffic leaves through another GPU's NIC
    (PXN) and every byte arrives; without the reroute the flows on that wire never do."""
    from mcsim.config.fabric import FOREVER, Faults
    from mcsim.routing import routes
    from mcsim.routing.layout import layout_of

    g = fabric(name)
    nic = next(n for n in g if g.nodes[n].get("part") == "nic" and g.nodes[n].get("node") == 1)
    wire = next((nic, x) for x in g[nic] if g.nodes[x].get("tier") == LEAF_TIER)
    layout = layout_of(g)
    rerouted = routes.updown_tables(layout, [wire])
    for a in range(layout.hosts):  # every pair still has a path, none over the dead wire
        for b in range(layout.hosts):
            if a != b:
                hops = routes.path(layout, rerouted, a, b, lambda _s, c: len(c) - 1)
                links = set(itertools.pairwise(hops))
                assert wire not in links and wire[::-1] not in links

    def run(reroute_delay_ps):
        faults = Faults(link_down=[(*wire, 20_000_000, FOREVER)], reroute_delay_ps=reroute_delay_ps)
        return Scenario(topology=g, algorithm="ring", bytes_per_rank="256KiB", verify=True, faults=faults).run()

    r = run(1_000_000)
    assert r.fabric.drops_by_cause()["link_down"] > 0, "the wire carried traffic when it died"
    assert r.complete and r.verified
    static = run(None)
    assert not static.complete
