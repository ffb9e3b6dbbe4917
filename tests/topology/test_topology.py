# SPDX-License-Identifier: GPL-2.0-only
"""mcsim.topology: builders against closed forms, validation and the summary (files: test_topology_files.py)."""

import subprocess
import sys
from fractions import Fraction

import networkx as nx
import pytest

from mcsim import topology
from mcsim.errors import McsimError
from mcsim.topology import fat_tree, leaf_spine, read_topology_file, resolve, summary, validate, write_topology_file
from mcsim.topology.physics import Link

FDR_BPS = 56_250_000_000
FDR_DATA_BPS = FDR_BPS * 64 // 66  # 54.55 Gbit/s
LINK = {"rate_bps": 10**9, "delay_ps": 100_000}


def ports_used(g: nx.Graph, node: int) -> int:
    return sum(g[node][nbr]["parallel"] for nbr in g[node])


# --- fat-tree ------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [2, 4, 8])
def test_fat_tree_closed_forms(k):
    g = fat_tree(k, rate_bps=FDR_BPS, delay_ps=100_000, encoding_data_bits=64, encoding_line_bits=66)
    s = summary(g)
    hosts = k**3 // 4
    assert (s["hosts"], s["switches"], s["links"]) == (hosts, 5 * k**2 // 4, 3 * k**3 // 4)
    assert s["switches_per_tier"] == {"tier1": k * k // 2, "tier2": k * k // 2, "tier3": k * k // 4}
    assert {label: t["links"] for label, t in s["tiers"].items()} == {
        "host-tier1": hosts,
        "tier1-tier2": hosts,
        "tier2-tier3": hosts,
    }
    assert s["diameter"] == 6  # host-edge-agg-core-agg-edge-host across pods (k=2 has 2 pods too)
    assert s["bisection_bps"] == hosts // 2 * FDR_DATA_BPS  # full bisection
    assert s["oversubscription"] == {"tier1": 1.0, "tier2": 1.0}
    assert all(ports_used(g, n) == k for n in range(hosts, g.number_of_nodes()))  # radix-k switches
    assert [g.nodes[h]["name"] for h in range(hosts)] == [f"h{h}" for h in range(hosts)]
    assert g.nodes[hosts]["name"] == "edge0" and g.nodes[g.number_of_nodes() - 1]["name"] == f"core{k * k // 4 - 1}"


def test_fat_tree_wiring_pods():
    k, half = 4, 2
    g = fat_tree(k, **LINK)
    hosts = 16
    for h in range(hosts):
        (edge,) = g[h]
        assert edge == hosts + h // half  # k/2 hosts per edge switch, in order
    first_agg, first_core = hosts + k * half, hosts + 2 * k * half
    for pod in range(k):
        edges = range(hosts + pod * half, hosts + (pod + 1) * half)
        aggs = range(first_agg + pod * half, first_agg + (pod + 1) * half)
        assert all(g.has_edge(e, a) for e in edges for a in aggs)
        for j, a in enumerate(aggs):
            assert {n for n in g[a] if n >= first_core} == set(
                range(first_core + j * half, first_core + (j + 1) * half)
            )


@pytest.mark.parametrize("k", [7, 0, -2, 1, 3])
def test_fat_tree_rejects_bad_k(k):
    with pytest.raises(McsimError, match=rf"fat_tree: k={k} must be even and >= 2"):
        fat_tree(k, **LINK)


def test_fat_tree_rejects_non_integer_k():
    with pytest.raises(McsimError, match=r"fat_tree: k=4.0 must be an integer"):
        fat_tree(4.0, **LINK)


@pytest.mark.parametrize("rate", [0, -5])
def test_builders_reject_non_positive_rate(rate):
    with pytest.raises(McsimError, match=rf"fat_tree: rate_bps={rate} must be > 0"):
        fat_tree(4, rate_bps=rate, delay_ps=0)
    with pytest.raises(McsimError, match=rf"leaf_spine: rate_bps={rate} must be > 0"):
        leaf_spine(2, 1, 2, rate_bps=rate, delay_ps=0)


def test_builders_reject_negative_delay_and_accept_zero():
    with pytest.raises(McsimError, match=r"fat_tree: delay_ps=-1 must be >= 0"):
        fat_tree(4, rate_bps=10**9, delay_ps=-1)
    with pytest.raises(McsimError, match=r"leaf_spine: delay_ps=-1 must be >= 0"):
        leaf_spine(2, 1, 2, rate_bps=10**9, delay_ps=-1)
    assert summary(fat_tree(2, rate_bps=10**9, delay_ps=0))["hosts"] == 2


def test_builders_reject_bad_encoding():
    with pytest.raises(McsimError, match=r"fat_tree: encoding_data_bits=66 must be <= encoding_line_bits=64"):
        fat_tree(4, **LINK, encoding_data_bits=66, encoding_line_bits=64)
    with pytest.raises(McsimError, match=r"fat_tree: encoding_line_bits=0 must be > 0"):
        fat_tree(4, **LINK, encoding_line_bits=0)


# --- leaf-spine ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("leaves", "spines", "per_leaf", "m"), [(4, 2, 8, 2), (4, 4, 4, 1), (6, 3, 9, 1), (2, 1, 3, 3)]
)
def test_leaf_spine_closed_forms(leaves, spines, per_leaf, m):
    g = leaf_spine(leaves, spines, per_leaf, m, **LINK)
    s = summary(g)
    hosts = leaves * per_leaf
    assert (s["hosts"], s["switches"]) == (hosts, leaves + spines)
    assert s["links"] == hosts + leaves * spines * m
    assert s["tiers"]["tier1-tier2"]["links"] == leaves * spines * m
    assert s["oversubscription"]["tier1"] == per_leaf / (spines * m)
    assert s["diameter"] == 4
    # hosts 0..H/2-1 sit on the first leaves/2 leaves: min(their NICs, those leaves' uplinks)
    assert s["bisection_bps"] == min(hosts // 2, leaves // 2 * spines * m) * 10**9
    assert all(g[i][j]["parallel"] == m for i in range(hosts, hosts + leaves) for j in g[i] if j >= hosts)


def test_leaf_spine_numbers_hosts_leaf_by_leaf():
    counts = [2, 3, 1]
    g = leaf_spine(3, 2, counts, **LINK)
    leaf_of = [next(iter(g[h])) for h in range(6)]
    assert leaf_of == [6, 6, 7, 7, 7, 8]
    assert [g.nodes[n]["name"] for n in range(6, 11)] == ["leaf0", "leaf1", "leaf2", "spine0", "spine1"]
    assert [g.nodes[n]["tier"] for n in range(11)] == [0] * 6 + [1] * 3 + [2] * 2


def test_single_switch_star():
    g = leaf_spine(1, 0, 5, **LINK)
    s = summary(g)
    assert (s["hosts"], s["switches"], s["links"], s["diameter"]) == (5, 1, 5, 2)
    assert s["oversubscription"] == {}  # no uplinks


def test_leaf_spine_rejects_a_leaf_with_more_hosts_than_ports():
    with pytest.raises(
        McsimError, match=r"leaf_spine: leaf 3 needs 40 ports \(30 hosts \+ 10 spine links\) but switch_ports=36"
    ):
        leaf_spine(4, 10, [20, 20, 20, 30], rate_bps=10**9, delay_ps=0, switch_ports=36)


def test_leaf_spine_rejects_a_spine_with_more_leaves_than_ports():
    with pytest.raises(
        McsimError, match=r"leaf_spine: spine 0 needs 39 ports \(13 leaves x 3 links\) but switch_ports=36"
    ):
        leaf_spine(13, 6, 15, 3, rate_bps=10**9, delay_ps=0, switch_ports=36)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((3, 2, [1, 2]), r"leaf_spine: hosts_per_leaf has 2 entries but leaves=3"),
        ((2, 2, [1, 0]), r"leaf_spine: hosts_per_leaf\[1\]=0 must be > 0"),
        ((0, 2, 1), r"leaf_spine: leaves=0 must be > 0"),
        ((2, 0, 1), r"leaf_spine: spines=0 leaves 2 leaves disconnected"),
        ((2, 1, 1, 0), r"leaf_spine: links_per_leaf_spine=0 must be > 0"),
        ((2, 1, "4"), r"leaf_spine: hosts_per_leaf='4' must be an integer or a list"),
    ],
)
def test_leaf_spine_rejects_bad_counts(args, message):
    with pytest.raises(McsimError, match=message):
        leaf_spine(*args, **LINK)


# --- ready topologies ----------------------------------------------------------------------------


def test_testbed_188_matches_the_paper_and_fits_36_port_switches():
    g = resolve("testbed-188")
    s = summary(g)
    assert (s["hosts"], s["switches"]) == (188, 18)
    leaves, spines = range(188, 200), range(200, 206)
    assert [sum(1 for n in g[leaf] if n < 188) for leaf in leaves] == [16] * 8 + [15] * 4
    assert s["tiers"]["tier1-tier2"]["links"] == 12 * 6 * 3 == 216
    assert s["links"] == 188 + 216
    assert all(ports_used(g, n) <= 36 for n in range(188, 206))
    assert all(ports_used(g, n) == 36 for n in spines)
    assert s["tiers"]["host-tier1"]["data_rates_bps"] == [FDR_DATA_BPS] and FDR_DATA_BPS == 54_545_454_545
    assert s["bisection_bps"] == 94 * FDR_DATA_BPS  # 16 or 15 hosts under 18 uplinks: not oversubscribed
    assert s["oversubscription"]["tier1"] == 16 / 18
    assert s["diameter"] == 4
    assert "assumption" in g.graph["description"]
    assert g.graph["name"] == "testbed-188"


@pytest.mark.parametrize(("name", "k"), [("fat-tree-k8", 8), ("fat-tree-k16", 16)])
def test_ready_fat_trees(name, k):
    g = resolve(name)
    s = summary(g)
    assert (s["hosts"], s["switches"], s["links"]) == (k**3 // 4, 5 * k**2 // 4, 3 * k**3 // 4)
    assert s["bisection_bps"] == k**3 // 8 * FDR_DATA_BPS
    assert g.edges[0, k**3 // 4]["delay_ps"] == 100_000


def test_resolve_lists_the_ready_topologies():
    assert set(topology.available()) >= {"testbed-188", "fat-tree-k8", "fat-tree-k16"}
    with pytest.raises(
        McsimError, match=r"unknown topology 'testbed-18'; choose one of .*testbed-188.*did you mean 'testbed-188'\?"
    ):
        resolve("testbed-18")


def test_format_summary_has_units():
    text = topology.format_summary(resolve("testbed-188"))
    for part in (
        "hosts             188",
        "12 leaf (tier1), 6 spine (tier2)",
        "56.25Gbps",
        "54.545Gbps",
        "5.127Tbps",
        "4 hops",
    ):
        assert part in text


# --- validation ----------------------------------------------------------------------------------


def test_validate_rejects_a_disconnected_graph():
    g = nx.disjoint_union(leaf_spine(1, 0, 2, **LINK), leaf_spine(1, 0, 2, **LINK))
    g = nx.relabel_nodes(g, {0: 0, 1: 1, 2: 4, 3: 2, 4: 3, 5: 5})  # hosts first: 0..3, switches 4, 5
    for n in g:
        g.nodes[n]["name"] = f"n{n}"
    with pytest.raises(McsimError, match=r"topology: graph is disconnected: 2 components; e.g. node 2 \(n2\)"):
        validate(g)


def two_stars() -> nx.Graph:
    return leaf_spine(2, 1, 2, **LINK)  # hosts 0..3, leaves 4, 5, spine 6


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda g: g.add_edge(0, 5, **g.edges[0, 4]), r"topology: host 0 has 2 links; each host needs exactly one"),
        (lambda g: g.edges[0, 4].update(parallel=2), r"topology: host 0 link parallel=2 must be 1"),
        (lambda g: g.edges[4, 6].update(rate_bps=0), r"topology: link 4-6: rate_bps=0 must be > 0"),
        (lambda g: g.edges[4, 6].update(delay_ps=-3), r"topology: link 4-6: delay_ps=-3 must be >= 0"),
        (lambda g: g.edges[4, 6].update(parallel=1.5), r"topology: link 4-6: parallel=1.5 must be an integer"),
        (lambda g: g.edges[4, 6].pop("delay_ps"), r"topology: link 4-6 has no 'delay_ps'"),
        (lambda g: g.nodes[5].update(role="router"), r"topology: node 5 role='router' must be 'host' or 'switch'"),
        (lambda g: g.nodes[5].update(name="h0"), r"topology: node 5 name='h0' is already node 0's"),
        (lambda g: g.nodes[3].update(tier=1), r"topology: node 3 tier=1 must be 0 for hosts"),
        (lambda g: g.add_node(9), r"topology: node id 9 must be an integer in 0..7"),
    ],
)
def test_validate_rejects(change, message):
    g = two_stars()
    validate(g)
    change(g)
    with pytest.raises(McsimError, match=message):
        validate(g)


def test_validate_rejects_hosts_after_switches():
    g = nx.relabel_nodes(leaf_spine(1, 0, 2, **LINK), {0: 0, 1: 2, 2: 1})
    with pytest.raises(McsimError, match=r"topology: host 2 comes after switch 1; hosts must be nodes 0..H-1"):
        validate(g)


def test_validate_accepts_two_hosts_on_one_link():
    g = nx.Graph()
    for h in (0, 1):
        g.add_node(h, role="host", tier=0, name=f"h{h}")
    g.add_edge(0, 1, rate_bps=10**9, encoding_data_bits=1, encoding_line_bits=1, delay_ps=0, parallel=1)
    validate(g)
    assert summary(g)["bisection_bps"] == 10**9


def test_validate_rejects_multigraphs():
    with pytest.raises(McsimError, match=r"topology: graph type MultiGraph must be an undirected networkx.Graph"):
        validate(nx.MultiGraph(two_stars()))


# --- layering and determinism --------------------------------------------------------------------


def test_importing_topology_and_routing_loads_no_cppyy():
    code = "import sys, mcsim.topology, mcsim.routing.routes; sys.exit('cppyy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_building_twice_gives_the_same_graph(same_graph):
    same_graph(resolve("testbed-188"), resolve("testbed-188"))
    a, b = fat_tree(8, **LINK), fat_tree(8, **LINK)
    assert list(a.edges(data=True)) == list(b.edges(data=True))


def test_oversubscription_is_down_over_up_data_rate():
    g = leaf_spine(2, 2, 6, **LINK)
    assert Fraction(summary(g)["oversubscription"]["tier1"]).limit_denominator() == Fraction(6, 2)


def test_with_link_changes_rate_and_encoding_and_keeps_delays_and_parallel():
    g = leaf_spine(2, 2, 2, 3, rate_bps=10**9, delay_ps=7)
    fdr = Link(rate_bps=56_250_000_000, encoding_data_bits=64, encoding_line_bits=66, delay_ps=999)
    out = topology.with_link(g, fdr)
    assert out.edges[4, 6] == {**fdr.edge_attrs(parallel=3), "delay_ps": 7}  # a leaf-spine edge
    assert out.edges[0, 4] == {**fdr.edge_attrs(), "delay_ps": 7}  # a host edge
    assert g.edges[4, 6]["rate_bps"] == 10**9, "g itself is unchanged"


# --- general fat tree ------------------------------------------------------------------------------

SHAPES = [  # hosts_per_tor, tors_per_pod, pods, aggs_per_pod, cores_per_agg, tor_agg_links, agg_core_links
    (2, 2, 4, 2, 2, 1, 1),  # the k=4 fat tree
    (16, 2, 32, 2, 16, 8, 1),  # the authors' 1024 hosts, radix 32
    (3, 4, 2, 3, 2, 2, 3),
    (5, 1, 1, 1, 0, 1, 1),  # one pod, no core tier
]


@pytest.mark.parametrize(("hpt", "tpp", "pods", "app", "cpa", "tal", "acl"), SHAPES)
def test_general_fat_tree_closed_forms(hpt, tpp, pods, app, cpa, tal, acl):
    g = topology.general_fat_tree(
        hpt, tpp, pods, aggs_per_pod=app, cores_per_agg=cpa, tor_agg_links=tal, agg_core_links=acl, **LINK
    )
    validate(g)
    hosts = hpt * tpp * pods
    s = summary(g)
    assert s["hosts"] == hosts
    assert s["switches"] == pods * (tpp + app) + app * cpa
    assert s["links"] == hosts + pods * app * (tpp * tal + cpa * acl)
    assert s["switches_per_tier"] == {"tier1": pods * tpp, "tier2": pods * app, **({"tier3": app * cpa} if cpa else {})}
    tor_up, agg_down, agg_up = app * tal, tpp * tal, cpa * acl
    expected = {"tier1": Fraction(hpt, tor_up)} | ({"tier2": Fraction(agg_down, agg_up)} if cpa else {})
    assert s["oversubscription"] == {tier: float(r) for tier, r in expected.items()}
    assert s["diameter"] == (6 if pods > 1 else 4 if tpp > 1 else 2)
    for h in range(hosts):  # ToR t of pod p holds hosts (p * tpp + t) * hpt ..
        (tor,) = g[h]
        assert tor == hosts + h // hpt and g.nodes[tor]["name"] == f"tor{h // hpt}"
    for pod in range(pods):
        for a in range(app):
            agg = hosts + pods * tpp + pod * app + a
            tors = [n for n in g[agg] if g.nodes[n]["tier"] == 1]
            cores = [n for n in g[agg] if g.nodes[n]["tier"] == 3]
            assert tors == [hosts + pod * tpp + t for t in range(tpp)]
            assert all(g[agg][t]["parallel"] == tal for t in tors)
            first_core = hosts + pods * (tpp + app) + a * cpa  # aggregation switch a -> core group a
            assert sorted(cores) == list(range(first_core, first_core + cpa))
            assert all(g[agg][c]["parallel"] == acl for c in cores)


def test_general_fat_tree_of_k4_is_fat_tree_k4():
    a = topology.general_fat_tree(2, 2, 4, aggs_per_pod=2, cores_per_agg=2, **LINK)
    b = fat_tree(4, **LINK)
    same = lambda g: {(min(u, v), max(u, v)): d for u, v, d in g.edges(data=True)}  # noqa: E731
    assert same(a) == same(b)
    assert [a.nodes[n]["tier"] for n in a] == [b.nodes[n]["tier"] for n in b]


def test_general_fat_tree_oversubscribed_by_fewer_uplinks():
    # 8 hosts under 2 uplinks (4:1), 2 ToR links under 1 core link per aggregation switch (2:1)
    g = topology.general_fat_tree(8, 2, 2, aggs_per_pod=2, cores_per_agg=1, **LINK)
    s = summary(g)
    assert s["oversubscription"] == {"tier1": 4.0, "tier2": 2.0}
    assert s["bisection_bps"] == 2 * 10**9  # pod 0 (hosts 0..15) reaches pod 1 over 2 core links


def test_general_fat_tree_oversubscribed_by_slower_uplinks():
    g = topology.general_fat_tree(
        4, 2, 2, aggs_per_pod=2, cores_per_agg=2, tor_uplink_rate_bps=5 * 10**8, agg_uplink_rate_bps=10**9, **LINK
    )
    s = summary(g)
    assert s["tiers"]["tier1-tier2"]["rates_bps"] == [5 * 10**8]
    assert s["tiers"]["tier2-tier3"]["rates_bps"] == [10**9]
    assert s["oversubscription"] == {"tier1": 4.0, "tier2": 0.5}  # 4 x 1G over 2 x 0.5G; 2 x 0.5G over 2 x 1G
    assert s["bisection_bps"] == 2 * 10**9  # pod 0's two ToRs leave at 2 x 2 x 0.5 Gbit/s


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"hosts_per_tor": 0}, r"general_fat_tree: hosts_per_tor=0 must be > 0$"),
        ({"tors_per_pod": 2.0}, r"general_fat_tree: tors_per_pod=2.0 must be an integer$"),
        ({"pods": -1}, r"general_fat_tree: pods=-1 must be > 0$"),
        ({"aggs_per_pod": 0}, r"general_fat_tree: aggs_per_pod=0 must be > 0$"),
        ({"cores_per_agg": 0}, r"general_fat_tree: cores_per_agg=0 must be >= 1 \(0 only with pods=1\)$"),
        ({"cores_per_agg": -1, "pods": 1}, r"general_fat_tree: cores_per_agg=-1 must be >= 1"),
        ({"tor_agg_links": 0}, r"general_fat_tree: tor_agg_links=0 must be > 0$"),
        ({"agg_core_links": True}, r"general_fat_tree: agg_core_links=True must be an integer$"),
        ({"rate_bps": 0}, r"general_fat_tree: rate_bps=0 must be > 0$"),
        ({"delay_ps": -1}, r"general_fat_tree: delay_ps=-1 must be >= 0"),
        ({"tor_uplink_rate_bps": 0}, r"general_fat_tree: tor_uplink_rate_bps=0 must be > 0$"),
        ({"agg_uplink_rate_bps": 1.5e9}, r"general_fat_tree: agg_uplink_rate_bps=1500000000.0 must be an integer$"),
    ],
)
def test_general_fat_tree_rejects_bad_values(kwargs, message):
    args = {"hosts_per_tor": 2, "tors_per_pod": 2, "pods": 2, "aggs_per_pod": 2, "cores_per_agg": 2, **LINK, **kwargs}
    with pytest.raises(McsimError, match=message):
        topology.general_fat_tree(**args)


def test_general_fat_tree_toml_uplink_rates_round_trip(tmp_path, same_graph):
    path = tmp_path / "over.toml"
    path.write_text(
        '[builder]\nname = "general_fat_tree"\nhosts_per_tor = 4\ntors_per_pod = 2\npods = 2\naggs_per_pod = 2\n'
        'cores_per_agg = 1\nrate = "1Gbps"\ntor_uplink_rate = "500Mbps"\ndelay = "100ns"\n'
    )
    g = read_topology_file(path)
    assert g.graph["params"]["tor_uplink_rate_bps"] == 5 * 10**8 and g.graph["params"]["agg_uplink_rate_bps"] is None
    assert summary(g)["tiers"]["tier1-tier2"]["rates_bps"] == [5 * 10**8]
    write_topology_file(g, tmp_path / "again.toml")
    assert 'tor_uplink_rate = "500Mbps"' in (tmp_path / "again.toml").read_text()
    same_graph(read_topology_file(tmp_path / "again.toml"), g)


def test_fat_tree_1024_r32_is_the_authors_tree():
    g = resolve("fat-tree-1024-r32")
    one_liner = topology.general_fat_tree(
        16, 2, 32, aggs_per_pod=2, cores_per_agg=16, tor_agg_links=8, rate_bps=FDR_BPS, delay_ps=100_000,
        encoding_data_bits=64, encoding_line_bits=66,
    )  # fmt: skip
    assert {(u, v): d for u, v, d in g.edges(data=True)} == {(u, v): d for u, v, d in one_liner.edges(data=True)}
    s = summary(g)
    assert (s["hosts"], s["switches"], s["links"]) == (1024, 160, 3 * 1024)
    assert s["switches_per_tier"] == {"tier1": 64, "tier2": 64, "tier3": 32}
    assert all(ports_used(g, n) == 32 for n in range(1024, 1184))  # radix 32 everywhere
    assert s["bisection_bps"] == 512 * FDR_DATA_BPS and s["oversubscription"] == {"tier1": 1.0, "tier2": 1.0}
    hops = nx.single_source_shortest_path_length(g, 0)
    assert (hops[15], hops[16], hops[31], hops[32], hops[1023]) == (2, 4, 4, 6, 6)  # the authors' 2/4/6


def test_topo_show_fat_tree_1024_r32(capsys):
    from mcsim.cli import main

    assert main(["topo", "show", "fat-tree-1024-r32"]) == 0
    out = capsys.readouterr().out
    assert "hosts             1024" in out
    assert "160 (64 tor (tier1), 64 agg (tier2), 32 core (tier3)), up to 32 ports each" in out
    assert "diameter          6 hops" in out and "tier1 1:1, tier2 1:1" in out


def test_a_leaf_spine_too_large_is_refused_before_its_leaves_are_listed():
    # issue 49: 2**70 leaves made a list of 2**70 counts first (OverflowError), 10**9 leaves 8 GB of them
    from mcsim.errors import McsimError
    from mcsim.topology import leaf_spine

    for leaves in (2**70, 10**9):
        with pytest.raises(McsimError, match=rf"^leaf_spine: {leaves * 4} hosts, {leaves + 2} switches \(a route"):
            leaf_spine(leaves, 2, 4, rate_bps=10**9, delay_ps=1000)
