# SPDX-License-Identifier: GPL-2.0-only
"""The subnet manager: up*/down* routes and multicast trees around links that are down, and
collectives that complete after a link fails for good mid-run."""

import itertools

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from mcsim.config.fabric import FOREVER, Faults
from mcsim.routing import routes, subnet_manager
from mcsim.routing.layout import layout_of, port_map
from mcsim.routing.routes import multicast_tree, path, simulate_multicast, unicast_tables, updown_tables
from mcsim.runs.scenario import Scenario
from mcsim.topology import fat_tree, host_count, leaf_spine, resolve

LINK = {"rate_bps": 100 * 10**9, "delay_ps": 100_000}
FT4 = fat_tree(4, **LINK)
HOSTS = host_count(FT4)


def tier(g, n):
    return g.nodes[n]["tier"]


def upper_links(g, lowest_tier):
    """Switch-switch edges whose lower end is at least lowest_tier, sorted."""
    return sorted(
        (min(u, v), max(u, v)) for u, v in g.edges if min(tier(g, u), tier(g, v)) >= lowest_tier and u >= HOSTS
    )


def all_paths(g, tables, src, dst, ports):
    """Every path the tables allow from src to dst (each switch may pick any candidate)."""
    out = []

    def walk(node, hops):
        if node == dst:
            out.append(hops)
            return
        if node < tables.hosts:
            nxt = [ports[node][0][0]] if node == src else []
        else:
            nxt = [ports[node][int(p)][0] for p in tables.candidate_ports(node, dst)]
        for n in nxt:
            assert n not in hops, f"loop {[*hops, n]}"
            walk(n, [*hops, n])

    walk(src, [src])
    return out


def no_valley(g, hops):
    """Up*/down*: once a path goes down a tier it never goes up again."""
    tiers = [tier(g, n) for n in hops]
    went_down = False
    for a, b in itertools.pairwise(tiers):
        if b < a:
            went_down = True
        elif b > a and went_down:
            return False
    return True


@pytest.mark.parametrize(
    "g",
    [
        FT4,
        fat_tree(8, **LINK),
        leaf_spine(4, 3, 5, 2, **LINK),
        resolve("testbed-188"),
    ],
    ids=["fat-tree-k4", "fat-tree-k8", "leaf-spine", "testbed-188"],
)
def test_updown_tables_with_no_link_down_are_the_minimal_hop_tables(g):
    a, b = unicast_tables(layout_of(g)), updown_tables(layout_of(g))
    for name in ("offsets", "base", "candidates"):
        assert_array_equal(getattr(a, name), getattr(b, name))


@pytest.mark.parametrize("dead", upper_links(FT4, 2)[:4] + upper_links(FT4, 1)[:4])
def test_routes_around_one_dead_link_are_up_down_loop_free_and_as_short_as_before(dead):
    ports = port_map(FT4)
    healthy, degraded = unicast_tables(layout_of(FT4)), updown_tables(layout_of(FT4), [dead])
    for src, dst in itertools.permutations(range(HOSTS), 2):
        before = all_paths(FT4, healthy, src, dst, ports)
        after = all_paths(FT4, degraded, src, dst, ports)
        assert after, (src, dst)
        for hops in after:
            assert all((min(a, b), max(a, b)) != dead for a, b in itertools.pairwise(hops)), hops
            assert no_valley(FT4, hops), hops
            # a k=4 fat tree keeps a path of the same length around any one switch-switch link
            assert len(hops) == len(before[0]), (hops, before[0])
        assert {tuple(h) for h in after} <= {tuple(h) for h in before}


def test_a_leaf_cut_off_from_every_spine_has_no_route_and_its_own_hosts_still_do():
    g = leaf_spine(3, 2, 2, 1, **LINK)
    hosts = host_count(g)
    leaf0 = next(iter(g[0]))
    cut = [(leaf0, s) for s in g[leaf0] if s >= hosts]
    t = updown_tables(layout_of(g), cut)
    ports = port_map(g)
    local = [h for h in range(hosts) if next(iter(g[h])) == leaf0]
    for s in range(hosts, g.number_of_nodes()):
        for d in range(hosts):
            cands = t.candidate_ports(s, d)
            if s == leaf0:
                expect_route = d in local
            else:
                expect_route = d not in local and next(iter(g[d])) != leaf0
                if not expect_route and d not in local:
                    continue
            assert (cands.size > 0) == expect_route, (s, d, cands)
            assert all((min(s, ports[s][p][0]), max(s, ports[s][p][0])) not in cut for p in cands)


def test_a_tree_around_dead_links_reaches_each_reachable_member_exactly_once():
    members = list(range(HOSTS))
    for dead in upper_links(FT4, 1):
        tree = multicast_tree(layout_of(FT4), members, down=[dead])
        assert tree is not None and tree.members == tuple(members)
        for u, _, v, _ in tree.tree_links:
            assert (min(u, v), max(u, v)) != dead
        for sender in members:
            copies, traversals = simulate_multicast(layout_of(FT4), tree, sender)
            assert copies == {h: int(h != sender) for h in range(HOSTS)}
            assert set(traversals.values()) == {1}


def test_a_member_whose_link_is_down_is_left_out_of_the_tree():
    leaf = next(iter(FT4[5]))
    tree = multicast_tree(layout_of(FT4), range(HOSTS), down=[(5, leaf)])
    assert tree.members == tuple(h for h in range(HOSTS) if h != 5)
    copies, _ = simulate_multicast(layout_of(FT4), tree, 0)
    assert copies[5] == 0 and sum(copies.values()) == HOSTS - 2
    assert multicast_tree(layout_of(FT4), [5, 6], down=[(5, leaf), (6, next(iter(FT4[6])))]) is None


def test_the_plan_reroutes_after_each_change_and_skips_reroutes_that_change_nothing():
    a, b = upper_links(FT4, 2)[:2]
    ms = 1_000_000_000
    downs = ((*a, 1 * ms, 5 * ms), (*b, 2 * ms, FOREVER), (*a, 0, 1 * ms))
    start, reroutes = subnet_manager.plan_routes(layout_of(FT4), [list(range(HOSTS))], downs, 3 * ms)
    assert start.down == {a}  # down from time 0: routed around from the start
    # changes at 1, 2 (b down) and 5 (a up) ms; each reroute, 3 ms later, sees the links as they are
    # then: at 4 ms a and b are down, at 5 ms only b, and at 8 ms still only b (no change: left out)
    assert [(s.at_ps, s.routes.down) for s in reroutes] == [(4 * ms, {a, b}), (5 * ms, {b})]
    none_start, none_reroutes = subnet_manager.plan_routes(layout_of(FT4), [], downs, None)
    assert none_start.down == frozenset() and none_reroutes == []


SPINE = upper_links(FT4, 2)[0]  # an aggregation-core link that ring flows cross (see below)


@pytest.mark.parametrize("algorithm", ["ring", "mcast"])
def test_a_spine_link_down_for_good_mid_run_is_routed_around_and_the_allgather_completes(algorithm):
    down_ps = 20_000_000  # 20 us into a ~600 us Allgather
    faults = Faults(link_down=[(*SPINE, down_ps, FOREVER)], reroute_delay_ps=1_000_000)  # 1 us
    r = Scenario(topology="fat-tree-k4", algorithm=algorithm, bytes_per_rank="256KiB", verify=True, faults=faults).run()
    assert r.fabric.drops_by_cause()["link_down"] > 0, "the link carried traffic when it died"
    assert r.complete and r.verified
    assert int(r.nic["rc_errors"].sum()) == 0
    # the same failure without a subnet manager: the flows hashed onto the dead link never arrive
    static = Scenario(
        topology="fat-tree-k4",
        algorithm=algorithm,
        bytes_per_rank="256KiB",
        verify=True,
        faults=Faults(link_down=[(*SPINE, down_ps, FOREVER)], reroute_delay_ps=None),
    ).run()
    assert not static.complete and static.fabric.drops_by_cause()["link_down"] > r.fabric.drops_by_cause()["link_down"]


def test_with_the_default_100_ms_reroute_rc_rides_out_the_outage_on_its_timeouts():
    r = Scenario(
        topology="fat-tree-k4",
        algorithm="ring",
        bytes_per_rank="256KiB",
        verify=True,
        faults=Faults(link_down=[(*SPINE, 20_000_000, FOREVER)]),
    ).run()
    assert r.complete and r.verified
    timeout = 4_096_000 << 14
    # the first retransmission (one timeout after the loss) still meets the dead route; the second,
    # after the reroute at 100.02 ms, gets through
    assert 20_000_000 + 2 * timeout < r.time_ps < 20_000_000 + 3 * timeout
    assert int(r.nic["rc_timeouts"].max()) == 2


def test_a_link_that_comes_back_is_used_again():
    g = leaf_spine(2, 2, 2, 1, **LINK)
    hosts = host_count(g)
    spine_links = sorted((min(u, v), max(u, v)) for u, v in g.edges if u >= hosts and v >= hosts)
    downs = ((*spine_links[0], 10, 20),)
    start, reroutes = subnet_manager.plan_routes(layout_of(g), [], downs, 5)
    assert start.down == frozenset()
    assert [s.at_ps for s in reroutes] == [15, 25]
    healthy = routes.unicast_tables(layout_of(g))
    assert_array_equal(reroutes[-1].routes.tables.candidates, healthy.candidates)
    assert not np.array_equal(reroutes[0].routes.tables.candidates, healthy.candidates)


def test_paths_around_a_dead_link_replay_with_the_switch_hash():
    t = updown_tables(layout_of(FT4), [SPINE])
    for src, dst in [(0, HOSTS - 1), (3, 9), (HOSTS - 1, 0)]:
        hops = path(layout_of(FT4), t, src, dst, lambda s, c, d=dst: (s * 7 + d) % len(c))
        assert hops[0] == src and hops[-1] == dst


def test_a_leaf_cut_off_from_time_0_drops_at_the_leaf_as_unroutable_not_on_the_dead_links():
    from mcsim.config.fabric import Flow
    from mcsim.runs.flows import simulate

    g = leaf_spine(2, 2, 4, 2, **LINK)  # hosts 0-3 on leaf 8, 4-7 on leaf 9; spines 10, 11
    flows = [Flow(src=h, dst=(h + 4) % 8, size_b=8 * 4096, flow_id=f) for h in range(8) for f in range(4)]
    faults = Faults(link_down=[(8, 10, 0, FOREVER), (11, 8, 0, FOREVER)])  # the subnet manager knows
    r = simulate(g, flows, faults=faults)
    sent = int(r.sources["sent_packets"].sum())
    assert sent == len(flows) * 8
    assert r.hosts["rx_packets"].sum() == 0
    assert r.unroutable_packets == sent  # every packet dies at its own leaf, which has no route left
    assert r.drops_by_cause()["link_down"] == 0
    assert r.ports["tx_packets"][[r.port_index(8, p) for p in range(4, 8)]].sum() == 0


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["ring", "mcast"])
def test_testbed_188_a_spine_link_down_for_good_mid_run_is_routed_around(algorithm):
    g = resolve("testbed-188")
    hosts = host_count(g)
    kwargs = dict(topology="testbed-188", algorithm=algorithm, bytes_per_rank="64KiB", verify=True)
    healthy = Scenario(**kwargs).run().fabric
    # a leaf-spine edge (all its parallel links) that the collective really uses
    busy = [
        (u, v)
        for u, v in sorted((min(a, b), max(a, b)) for a, b in g.edges if a >= hosts and b >= hosts)
        if sum(
            int(healthy.ports["tx_packets"][healthy.port_index(u, p)])
            for p, (n, _) in enumerate(port_map(g)[u])
            if n == v
        )
    ]
    faults = Faults(link_down=[(*busy[0], 50_000_000, FOREVER)], reroute_delay_ps=10_000_000)  # 10 us
    r = Scenario(**kwargs, faults=faults).run()
    assert r.fabric.drops_by_cause()["link_down"] > 0
    assert r.complete and r.verified
    assert int(r.nic["rc_errors"].sum()) == 0
