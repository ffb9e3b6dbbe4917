# SPDX-License-Identifier: GPL-2.0-only
"""Rail-optimised fabrics with spines per rail and with planes (mcsim.topology.rail_fabric): their parts and rates,
routes (a per-rail fabric's pairs across rails and nodes through a node's NVSwitch, a flow on one plane), what
`mcsim topo show` says of them, and their .toml files."""

import subprocess
import sys

import pytest

from mcsim import topology
from mcsim.routing.layout import layout_of
from mcsim.routing.routes import path, unicast_tables
from mcsim.topology.nodes import nodes_of, rail_optimised, spine_groups_of
from mcsim.topology.physics import Link
from mcsim.topology.rail_fabric import LEAF_TIER, SPINE_TIER

NDR = {"rate_bps": 425 * 10**9, "encoding_data_bits": 16, "encoding_line_bits": 17, "delay_ps": 100_000}
PER_RAIL = {"spines": 8, "nodes_per_leaf": 2, "spine_groups": "per_rail"}  # 2 leaves a rail, 2 spines a rail
TWO_PLANES = {"spines": 2, "planes": 2}  # a leaf a rail in each plane, a spine a plane


def rail(**kw):
    """4 nodes of 4 GPUs (4 rails)."""
    return rail_optimised(**({"nodes": 4, "gpus_per_node": 4, **NDR} | kw))


def _tier(g, tier):
    return [x for x, t in g.nodes(data="tier") if t == tier]


def test_the_defaults_are_shared_spines_and_one_plane():
    g = rail(spines=2)
    assert g.graph["params"]["spine_groups"] == "shared" and g.graph["params"]["planes"] == 1
    assert [g.nodes[x]["name"] for x in _tier(g, SPINE_TIER)] == ["spine0", "spine1"]
    assert all("plane" not in g.nodes[x] for x in _tier(g, LEAF_TIER) + _tier(g, SPINE_TIER))
    assert spine_groups_of(g) == "shared" and nodes_of(g).planes == 1
    assert spine_groups_of(rail()) is None  # no spines: one leaf a rail


def test_a_per_rail_spine_joins_only_its_rail_s_leaves():
    g = rail(**PER_RAIL)
    topology.validate(g)
    spines = _tier(g, SPINE_TIER)
    assert len(spines) == 8 and len(_tier(g, LEAF_TIER)) == 4 * 2
    for s in spines:
        leaves = list(g[s])
        assert len(leaves) == 2 and {g.nodes[x]["rail"] for x in leaves} == {g.nodes[s]["rail"]}
        assert g.nodes[s]["name"] == f"rail{g.nodes[s]['rail']}.spine{spines.index(s) % 2}"
    assert spine_groups_of(g) == "per_rail"
    assert nodes_of(g).network_bps == nodes_of(rail(spines=2)).network_bps  # a NIC's rate is the same


def test_a_nic_has_a_port_on_each_plane_at_rate_over_planes():
    g, one = rail(**TWO_PLANES), rail(spines=2)
    topology.validate(g)
    nodes = nodes_of(g)
    assert nodes.planes == 2 and nodes.network_bps == nodes_of(one).network_bps == 400 * 10**9  # the NIC's total
    for nic in (x for x, p in g.nodes(data="part") if p == "nic"):
        leaves = [x for x in g[nic] if g.nodes[x]["tier"] == LEAF_TIER]
        assert sorted(g.nodes[x]["plane"] for x in leaves) == [0, 1]
        assert {g.nodes[x]["rail"] for x in leaves} == {g.nodes[nic]["rail"]}
        assert {g.edges[nic, x]["rate_bps"] for x in leaves} == {NDR["rate_bps"] // 2}
        assert sum(Link.from_edge(g.edges[nic, x]).data_rate_bps for x in leaves) == 400 * 10**9
    for s in _tier(g, SPINE_TIER):  # a plane's spine joins its plane's leaves of every rail, at rate/planes
        assert {g.nodes[x]["plane"] for x in g[s]} == {g.nodes[s]["plane"]}
        assert {g.nodes[x]["rail"] for x in g[s]} == {0, 1, 2, 3}
        assert {g.edges[s, x]["rate_bps"] for x in g[s]} == {NDR["rate_bps"] // 2}
    assert [g.nodes[x]["name"] for x in _tier(g, SPINE_TIER)] == ["plane0.spine0", "plane1.spine0"]
    assert g.nodes[_tier(g, LEAF_TIER)[-1]]["name"] == "plane1.rail3.leaf0"


def _choosers(src, dst):
    return (lambda s, c: 0, lambda s, c: len(c) - 1, lambda s, c: (src * 31 + dst * 7 + s) % len(c))


@pytest.mark.parametrize("kw", [PER_RAIL, PER_RAIL | {"planes": 2, "spines": 16}], ids=["one-plane", "two-planes"])
def test_a_per_rail_fabric_s_pairs_across_rails_and_nodes_cross_a_node_s_nvswitch(kw):
    """Every pair has a path; one on two rails and two nodes crosses exactly one NVSwitch (the source's or the
    destination's: PXN), every leaf and spine on it is one rail's, and the path is as short as through a spine
    of a shared fabric of the same shape plus the NVSwitch's two hops."""
    g = rail(**kw)
    lay = layout_of(g)
    tables = unicast_tables(lay)
    n = g.nodes
    for src in range(16):
        for dst in range(16):
            if src == dst:
                continue
            for choose in _choosers(src, dst):
                hops = path(lay, tables, src, dst, choose)
                network = [x for x in hops if n[x]["tier"] >= LEAF_TIER]
                nvswitches = [x for x in hops if n[x].get("part") == "nvswitch"]
                if n[src]["node"] == n[dst]["node"]:
                    assert not network and len(hops) == 5
                elif n[src]["gpu"] == n[dst]["gpu"]:  # one rail: its own leaves (and spine), no NVSwitch
                    assert not nvswitches and {n[x]["rail"] for x in network} == {n[src]["gpu"]}
                else:
                    assert len(nvswitches) == 1 and n[nvswitches[0]]["node"] in (n[src]["node"], n[dst]["node"])
                    assert len({n[x]["rail"] for x in network}) == 1  # one rail's network, either end's
                    assert len(hops) == (11 if n[src]["node"] // 2 != n[dst]["node"] // 2 else 9)


@pytest.mark.parametrize(
    "kw",
    [
        {"spine_groups": "per_rail"},  # no spines: one leaf a rail (Rail-only)
        {"spine_groups": "per_rail", "gpus_per_node": 8, "gpus_per_nic": 2, "spines": 4, "nodes_per_leaf": 3},
        {
            "spine_groups": "per_rail",
            "nodes": 5,
            "spines": 12,
            "nodes_per_leaf": 2,
            "planes": 3,
            "rate_bps": 3 * 10**11,
        },
    ],
    ids=["no-spines", "shared-nics", "three-planes"],
)
def test_every_pair_of_a_per_rail_fabric_has_a_path(kw):
    g = rail(**kw)
    lay = layout_of(g)
    tables = unicast_tables(lay)
    hosts = topology.host_count(g)
    for src in range(hosts):
        for dst in range(hosts):
            if src != dst:
                assert path(lay, tables, src, dst, lambda s, c: len(c) - 1)[-1] == dst


def test_a_flow_stays_on_one_plane():
    """The NIC picks a plane by its ECMP hash of the flow (every packet of a flow the same port): every path's
    leaves and spines are one plane's, and the NIC's choice decides which."""
    g = rail(**TWO_PLANES)
    lay = layout_of(g)
    tables = unicast_tables(lay)
    planes_seen = set()
    for src in range(16):
        for dst in range(16):
            if g.nodes[src]["node"] == g.nodes[dst]["node"]:
                continue
            for choose in _choosers(src, dst):
                hops = path(lay, tables, src, dst, choose)
                planes = {g.nodes[x]["plane"] for x in hops if g.nodes[x]["tier"] >= LEAF_TIER}
                assert len(planes) == 1
                planes_seen |= planes
    assert planes_seen == {0, 1}


def test_topo_show_says_planes_and_spines():
    text = topology.format_summary(rail(**PER_RAIL | {"planes": 2, "spines": 16}))
    assert (
        "  planes            2 (each NIC's port split into 2, a plane's own leaves and spines at 1/2 of the rate)"
        in text
    )
    assert "  spines            per rail (rail-only: across rails and nodes through a node's NVSwitch, PXN)" in text
    assert "400Gbps data a NIC (the narrower of its PCIe link and its wires)" in text
    shared = topology.format_summary(rail(spines=2))
    assert "  planes            1 (a port a NIC)\n  spines            shared by the rails\n" in shared
    assert "  spines            none (one leaf a rail: across rails through a node's NVSwitch)" in (
        topology.format_summary(rail())
    )


def test_a_toml_file_takes_spine_groups_and_planes(tmp_path):
    f = tmp_path / "rails.toml"
    f.write_text(
        '[builder]\nname = "rail_optimised"\nnodes = 4\ngpus_per_node = 4\nspines = 16\nnodes_per_leaf = 2\n'
        'spine_groups = "per_rail"\nplanes = 2\nrate = "425Gbps"\nencoding = "16b/17b"\ndelay = "100ns"\n'
    )
    g = topology.read_topology_file(f)
    want = rail(**PER_RAIL | {"planes": 2, "spines": 16})
    assert dict(g.nodes(data=True)) == dict(want.nodes(data=True))
    assert sorted(g.edges(data=True)) == sorted(want.edges(data=True))
    out = tmp_path / "again.toml"  # and back: the saved file names them
    topology.write_topology_file(g, out)
    assert 'spine_groups = "per_rail"\nplanes = 2\n' in out.read_text()
    res = subprocess.run([sys.executable, "-m", "mcsim", "topo", "show", str(f)], capture_output=True, text=True)
    assert res.returncode == 0 and "  planes            2 (each NIC's port" in res.stdout


def test_a_bad_plane_count_in_a_file_is_one_line_from_the_command(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text('[builder]\nname = "rail_optimised"\nnodes = 2\nplanes = 0\nrate = "400Gbps"\ndelay = "100ns"\n')
    res = subprocess.run([sys.executable, "-m", "mcsim", "topo", "show", str(f)], capture_output=True, text=True)
    assert res.returncode != 0 and res.stderr.strip().count("\n") == 0
    assert "p.toml: rail_optimised: planes=0 must be >= 1 (a NIC's ports, each on its own plane)" in res.stderr


def test_the_ready_two_plane_cluster_is_rail_16x8_with_each_nic_split_in_two():
    g, one = topology.resolve("rail-16x8-2plane"), topology.resolve("rail-16x8")
    nodes = nodes_of(g)
    assert (nodes.count, nodes.gpus, nodes.rails, nodes.planes) == (16, 8, 8, 2)
    assert nodes.network_bps == nodes_of(one).network_bps == 400 * 10**9
    s = topology.summary(g)
    assert s["oversubscription"] == {"tier3": 1.0} and s["bisection_bps"] == topology.summary(one)["bisection_bps"]
    assert len(_tier(g, LEAF_TIER)) == 16 and len(_tier(g, SPINE_TIER)) == 8
    assert "  spines            shared by the rails (in each plane)" in topology.format_summary(g)


def test_a_rate_given_to_a_fabric_of_planes_is_a_nics_and_each_plane_gets_its_share():
    """Scenario(rate=...) sets every network link; on planes each plane's link gets rate/planes, so a NIC's total is
    the rate given, as on one plane; a rate the planes do not divide is one line."""
    from mcsim.errors import McsimError
    from mcsim.runs.scenario import Scenario

    for rate in ("200Gbps", "800Gbps"):
        one = Scenario(topology="rail-16x8", algorithm="ring", rate=rate, bytes_per_rank="64KiB")
        two = Scenario(topology="rail-16x8-2plane", algorithm="ring", rate=rate, bytes_per_rank="64KiB")
        g, g1 = two.graph(), one.graph()
        wires = {e["rate_bps"] for u, v, e in g.edges(data=True) if "plane" in g.nodes[u] or "plane" in g.nodes[v]}
        (wire,) = {e["rate_bps"] for u, v, e in g1.edges(data=True) if "node" not in g1.nodes[u]}
        assert wires == {wire // 2}
        assert nodes_of(g).network_bps == nodes_of(one.graph()).network_bps
    with pytest.raises(McsimError, match=r"^rate=3 bit/s: the fabric has 2 planes, each at rate/2; give a rate"):
        Scenario(topology="rail-16x8-2plane", algorithm="ring", rate="3bps", bytes_per_rank="64KiB")
