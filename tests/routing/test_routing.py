# SPDX-License-Identifier: GPL-2.0-only
"""mcsim.routing.routes: port numbering, minimal loop-free ECMP tables, and multicast trees that deliver once."""

from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
from numpy.testing import assert_array_equal

from mcsim.errors import McsimError
from mcsim.routing import routes
from mcsim.routing.layout import layout_of, port_map
from mcsim.routing.routes import (
    MulticastTree,
    multicast_tree,
    path,
    peer_port,
    simulate_multicast,
    unicast_tables,
)
from mcsim.topology import fat_tree, host_count, leaf_spine, resolve

LINK = {"rate_bps": 10**9, "delay_ps": 100_000}


def first(_switch, _cands):
    return 0


def last(_switch, cands):
    return len(cands) - 1


def flow_hash(src, dst):
    """A chooser that hashes (flow, switch), like the C++ switch (any integer mix will do)."""

    def choose(switch, cands):
        x = (src * 1_000_003 + dst * 7919 + switch * 104_729) * 2_654_435_761 % 2**32
        return (x >> 7) % len(cands)

    return choose


@pytest.fixture(scope="module")
def ft4():
    return fat_tree(4, **LINK)


@pytest.fixture(scope="module")
def ls():
    return leaf_spine(3, 2, [2, 3, 1], 2, **LINK)  # uneven leaves, 2 parallel links per leaf-spine pair


@pytest.fixture(scope="module")
def testbed():
    return resolve("testbed-188")


# --- ports ---------------------------------------------------------------------------------------


def test_port_map_is_exact():
    g = leaf_spine(2, 2, 1, 2, **LINK)  # hosts 0, 1; leaves 2, 3; spines 4, 5
    ports = port_map(g)
    assert ports[0] == [(2, 0)] and ports[1] == [(3, 0)]
    assert ports[2] == [(0, 0), (4, 0), (4, 1), (5, 0), (5, 1)]
    assert ports[4] == [(2, 0), (2, 1), (3, 0), (3, 1)]
    assert peer_port(g, ports, 2, 2) == 1  # leaf 2's second link to spine 4 is spine 4's port 1
    assert peer_port(g, ports, 4, 3) == 2  # spine 4's second link to leaf 3 is leaf 3's port 2
    assert peer_port(g, ports, 0, 0) == 0
    with pytest.raises(McsimError, match=r"peer_port: port=5 is not a port of node 2 \(ports 0..4\)"):
        peer_port(g, ports, 2, 5)


@pytest.mark.parametrize("name", ["ft4", "ls", "testbed"])
def test_peer_port_is_an_involution_and_ports_count_links(name, request):
    g = request.getfixturevalue(name)
    ports = port_map(g)
    for node, entries in ports.items():
        assert len(entries) == sum(g[node][n]["parallel"] for n in g[node])
        for port, (nbr, index) in enumerate(entries):
            back = peer_port(g, ports, node, port)
            assert ports[nbr][back] == (node, index)
            assert peer_port(g, ports, nbr, back) == port
    physical = routes.links(layout_of(g))
    assert len(physical) == sum(d["parallel"] for _, _, d in g.edges(data=True))
    ends = [(u, pu) for u, pu, _, _ in physical] + [(v, pv) for _, _, v, pv in physical]
    assert sorted(ends) == [(n, p) for n in sorted(ports) for p in range(len(ports[n]))]  # each port once


# --- unicast -------------------------------------------------------------------------------------


def check_tables_are_minimal(g):
    """Oracle: a port is a candidate iff its neighbour is one hop closer to the host (all parallels)."""
    lay = layout_of(g)
    hosts, ports = lay.hosts, lay.ports
    t = unicast_tables(lay)
    dist = {d: nx.single_source_shortest_path_length(g, d) for d in range(hosts)}
    switches = g.number_of_nodes() - hosts
    assert t.offsets.shape == (switches, switches + 1)  # per destination switch, not per host
    assert (t.offsets.dtype, t.candidates.dtype, t.base.dtype) == (np.uint32, np.uint32, np.uint64)
    assert t.leaf.tolist() == [lay.leaf_of[d] - hosts for d in range(hosts)]
    assert t.host_port.tolist() == [lay.first_port[lay.leaf_of[d]][d] for d in range(hosts)]
    for s in range(hosts, g.number_of_nodes()):
        offsets, cands = t.for_switch(s)
        assert offsets[0] == 0 and offsets[-1] == cands.size == t.base[s - hosts + 1] - t.base[s - hosts]
        for d in range(hosts):
            got = t.candidate_ports(s, d).tolist()
            want = [p for p, (n, _) in enumerate(ports[s]) if dist[d][n] == dist[d][s] - 1]
            assert got == want and len(got) >= 1


@pytest.mark.parametrize("name", ["ft4", "ls", "testbed"])
def test_candidates_are_exactly_the_minimal_next_hops(name, request):
    check_tables_are_minimal(request.getfixturevalue(name))


@pytest.mark.parametrize("name", ["ft4", "ls"])
def test_every_path_is_minimal_and_loop_free(name, request):
    g = request.getfixturevalue(name)
    lay = layout_of(g)
    t = unicast_tables(lay)
    for src in range(lay.hosts):
        hops = nx.single_source_shortest_path_length(g, src)
        for dst in range(lay.hosts):
            if src == dst:
                continue
            for choose in (first, last, flow_hash(src, dst)):
                nodes = path(lay, t, src, dst, choose)
                assert nodes[0] == src and nodes[-1] == dst
                assert len(nodes) - 1 == hops[dst]
                assert len(set(nodes)) == len(nodes)


def test_testbed_paths_sample(testbed):
    g, lay = testbed, layout_of(testbed)
    t = unicast_tables(lay)
    pairs = [(s, (s * 37 + 11) % 188) for s in range(0, 188, 3)]
    for src, dst in pairs:
        want = nx.shortest_path_length(g, src, dst)
        for choose in (first, last, flow_hash(src, dst)):
            nodes = path(lay, t, src, dst, choose)
            assert len(nodes) - 1 == want and len(set(nodes)) == len(nodes)
        assert want == (2 if set(g[src]) == set(g[dst]) else 4)  # same leaf, or up to a spine and down


def test_ecmp_width_on_fat_tree_4(ft4):
    k, hosts = 4, 16
    t = unicast_tables(layout_of(ft4))
    edge0, agg0, core0 = hosts, hosts + 8, hosts + 16  # pod 0's first edge and agg, the first core
    assert len(t.candidate_ports(edge0, 0)) == 1  # its own host
    assert len(t.candidate_ports(edge0, 2)) == k // 2  # same pod, other edge: via either agg
    assert len(t.candidate_ports(edge0, 15)) == k // 2  # other pod: up to either agg
    assert len(t.candidate_ports(agg0, 15)) == k // 2  # other pod: up to either core
    assert len(t.candidate_ports(agg0, 2)) == 1  # down to its pod's edge
    assert all(len(t.candidate_ports(core0, d)) == 1 for d in range(hosts))  # one agg per pod


def test_ecmp_width_includes_parallel_links(ls):
    t = unicast_tables(layout_of(ls))  # hosts 0..5, leaves 6..8, spines 9, 10; 2 links per leaf-spine pair
    assert t.candidate_ports(6, 5).tolist() == [2, 3, 4, 5]  # 2 spines x 2 links, after 2 host ports
    assert t.candidate_ports(9, 5).tolist() == [4, 5]  # both links down to leaf 8


def test_fat_tree_16_tables():
    g = resolve("fat-tree-k16")
    hosts, lay = 1024, layout_of(g)
    t = unicast_tables(lay)
    widths = np.diff(t.offsets.astype(np.int64), axis=1)
    leaves = np.unique(t.leaf)
    own = np.arange(t.switches)[:, None] == leaves[None, :]
    assert np.all(widths[:, leaves][~own] >= 1)  # every switch has a route to every other leaf's hosts
    assert np.all(widths[:, leaves][own] == 0)  # its own hosts go to their ports
    assert widths.sum() == widths[:, leaves].sum()  # no candidates toward a switch without hosts
    edge0, core0 = hosts, hosts + 256
    assert len(t.candidate_ports(edge0, hosts - 1)) == 8 and len(t.candidate_ports(core0, hosts - 1)) == 1
    for src in range(0, hosts, 97):
        dst = (src * 389 + 500) % hosts
        if src != dst:
            assert len(path(lay, t, src, dst, flow_hash(src, dst))) - 1 == nx.shortest_path_length(g, src, dst)


@pytest.mark.parametrize("k", [4, 8, 16])
def test_fat_tree_tables_hold_one_row_per_destination_switch(k):
    """The candidates of a k-ary fat tree, counted per destination leaf: an edge switch goes up to
    all k/2 aggregation switches toward each of the other k^2/2 - 1 leaves; an aggregation switch
    goes down one port to each leaf of its pod and up k/2 ports toward the others; a core switch
    goes down one port toward each leaf. (Per host it would be k/2 times as many, k^3/4 hosts.)"""
    t = unicast_tables(layout_of(fat_tree(k, **LINK)))
    leaves, half = k * k // 2, k // 2
    edge = leaves * (leaves - 1) * half
    agg = leaves * (half + (leaves - half) * half)
    core = k * k // 4 * leaves
    assert t.candidates.size == edge + agg + core
    assert t.offsets.shape == (5 * k * k // 4, 5 * k * k // 4 + 1)


def test_tables_are_read_only(ft4):
    t = unicast_tables(layout_of(ft4))
    with pytest.raises(ValueError, match="read-only"):
        t.candidates[0] = 3


def test_path_rejects_a_bad_chooser(ft4):
    t = unicast_tables(layout_of(ft4))
    with pytest.raises(McsimError, match=r"path: choose returned 2 for 2 candidates at switch 16"):
        path(layout_of(ft4), t, 0, 15, lambda s, c: len(c))


def test_two_hosts_have_no_switch_tables():
    g = nx.Graph()
    for h in (0, 1):
        g.add_node(h, role="host", tier=0, name=f"h{h}")
    g.add_edge(0, 1, rate_bps=10**9, encoding_data_bits=1, encoding_line_bits=1, delay_ps=0, parallel=1)
    t = unicast_tables(layout_of(g))
    assert (t.hosts, t.switches, t.candidates.size) == (2, 0, 0)
    assert path(layout_of(g), t, 0, 1, first) == [0, 1]
    with pytest.raises(McsimError, match=r"multicast group: the topology has no switch"):
        multicast_tree(layout_of(g), [0, 1])


# --- multicast -----------------------------------------------------------------------------------


def check_delivers_once(g, tree, senders):
    hosts = host_count(g)
    nodes = set(tree.members) | set(tree.switch_ports)
    assert len(tree.tree_links) == len(nodes) - 1
    tree_graph = nx.Graph((u, v) for u, _, v, _ in tree.tree_links)
    assert nx.is_tree(tree_graph) and set(tree_graph) == nodes
    for sender in senders:
        copies, traversals = simulate_multicast(layout_of(g), tree, sender)
        want = {h: int(h in tree.members and h != sender) for h in range(hosts)}
        assert copies == want
        assert set(traversals.values()) == {1}
        assert sum(traversals.values()) == len(tree.tree_links)


def test_multicast_to_all_188_testbed_hosts(testbed):
    tree = multicast_tree(layout_of(testbed), range(188))
    assert tree.root == 200  # spines reach every leaf in 1 hop; ties go to the lowest id
    assert len(tree.switch_ports) == 18 - 5  # a BFS tree from one spine: that spine and the 12 leaves
    check_delivers_once(testbed, tree, [0, 17, 100, 127, 128, 187])
    assert all(len(ps) <= 36 for ps in tree.switch_ports.values())


@pytest.mark.parametrize(
    ("members", "root"),
    [
        ([0, 1], 16),  # one edge switch
        ([0, 2], 24),  # one pod: the pod's first agg
        ([0, 5, 10, 15], 32),  # all pods: the first core
        ([3, 7, 8], 32),
        (list(range(16)), 32),
    ],
)
def test_multicast_on_fat_tree_4(ft4, members, root):
    tree = multicast_tree(layout_of(ft4), members)
    assert tree.root == root and tree.members == tuple(sorted(members))
    check_delivers_once(ft4, tree, members)


def test_multicast_uses_one_of_the_parallel_links_and_groups_spread(testbed):
    lay = layout_of(testbed)
    ports = lay.ports
    used = set()
    for i in range(24):
        members = sorted({(i * 7 + j * 13) % 188 for j in range(10)})
        tree = multicast_tree(lay, members)
        check_delivers_once(testbed, tree, members[:2])
        pairs = [(u, v) for u, _, v, _ in tree.tree_links]
        assert len(pairs) == len(set(pairs))  # never two parallel links between the same switches
        for u, pu, v, pv in tree.tree_links:
            assert ports[u][pu] == (v, ports[v][pv][1]) and ports[v][pv][0] == u
            if u >= 188:
                used.add(ports[u][pu][1])
    assert used == {0, 1, 2}  # different groups take different parallel links


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ([0, 999], r"multicast group: member 999 is not a host \(hosts are 0..187\)"),
        ([0, -1], r"multicast group: member -1 is not a host"),
        ([0, 190], r"multicast group: member 190 is not a host"),  # a switch
        ([5, 3, 5], r"multicast group: member 5 appears twice"),
        ([4], r"multicast group: members=\[4\] has 1; a group needs >= 2 hosts"),
        ([0, True], r"multicast group: member True is not a host"),
    ],
)
def test_multicast_rejects_bad_groups(testbed, members, message):
    with pytest.raises(McsimError, match=message):
        multicast_tree(layout_of(testbed), members)


def test_simulate_multicast_rejects_a_non_member_sender(ft4):
    with pytest.raises(McsimError, match=r"simulate_multicast: sender=3 is not a member of the group \[0, 1\]"):
        simulate_multicast(layout_of(ft4), multicast_tree(layout_of(ft4), [0, 1]), 3)


def test_tree_rejects_loops_and_gaps(ft4):
    ok = multicast_tree(layout_of(ft4), [0, 2])
    with pytest.raises(McsimError, match=r"multicast tree: 2 links for 4 nodes is not connected"):
        MulticastTree(
            members=ok.members,
            root=ok.root,
            switch_ports={16: ok.switch_ports[16], 17: ok.switch_ports[17]},
            tree_links=tuple(link for link in ok.tree_links if link[0] < 16),
        )
    u, pu, v, pv = next(link for link in ok.tree_links if link[0] >= 16)
    extra = (u, pu + 1, v, pv + 1)  # a second, parallel-like link between the same two switches
    with pytest.raises(McsimError, match=r"closes a loop"):
        MulticastTree(
            members=ok.members, root=ok.root, switch_ports=ok.switch_ports, tree_links=(*ok.tree_links, extra)
        )


@pytest.mark.parametrize("p", [2, 3, 4, 8, 16])
def test_star_multicast_allgather_crosses_fewer_links_than_ring(p):
    g = leaf_spine(1, 0, p, **LINK)
    lay = layout_of(g)
    tree = multicast_tree(lay, range(p))
    mc = sum(sum(simulate_multicast(lay, tree, r)[1].values()) for r in range(p))
    assert mc == p * p  # each multicast: 1 link up, p-1 links down
    t = unicast_tables(lay)
    ring = sum(len(path(lay, t, r, (r + 1) % p, first)) - 1 for _ in range(p - 1) for r in range(p))
    assert ring == 2 * p * (p - 1)  # p-1 steps, every rank sends to its neighbour over 2 links
    assert Fraction(ring, mc) == 2 - Fraction(2, p)


# --- determinism ---------------------------------------------------------------------------------


@pytest.mark.parametrize("build", [lambda: fat_tree(4, **LINK), lambda: resolve("testbed-188")])
def test_building_and_routing_twice_is_identical(build):
    a, b = build(), build()
    assert port_map(a) == port_map(b)
    ta, tb = unicast_tables(layout_of(a)), unicast_tables(layout_of(b))
    for field in ("offsets", "base", "candidates", "leaf", "host_port"):
        assert_array_equal(getattr(ta, field), getattr(tb, field))
    members = list(range(0, host_count(a), 3))
    assert multicast_tree(layout_of(a), members) == multicast_tree(layout_of(b), members)
