# SPDX-License-Identifier: GPL-2.0-only
"""mcsim.routing.layout: the facts about a topology's fabric, computed once per graph (no C++)."""

import networkx as nx
import numpy as np
import pytest

from mcsim.errors import McsimError
from mcsim.routing import layout as layout_module
from mcsim.routing import routes
from mcsim.routing.layout import Layout, layout_of, port_map
from mcsim.topology import fat_tree, leaf_spine

LINK = {"rate_bps": 100 * 10**9, "delay_ps": 100_000}


def test_layout_facts_match_the_graph():
    g = leaf_spine(2, 2, 1, 2, **LINK)  # hosts 0, 1; leaves 2, 3; spines 4, 5; 2 links leaf-spine
    lay = layout_of(g)
    assert lay.hosts == 2 and lay.nodes == 6 and list(lay.switches) == [2, 3, 4, 5]
    assert {n: list(p) for n, p in lay.ports.items()} == port_map(g)
    assert lay.port_base.tolist() == [0, 1, 2, 7, 12, 16, 20]  # 1 + 1 + 5 + 5 + 4 + 4 ports
    assert lay.n_ports == 20 and lay.port_index(3, 2) == 9
    assert lay.first_port[2] == {0: 0, 4: 1, 5: 3}
    assert lay.leaf_of == (2, 3)
    assert len(lay.links) == sum(d["parallel"] for _, _, d in g.edges(data=True)) == 10
    node, num, peer = lay.port_arrays()
    for u, pu, v, pv in lay.links:  # the peer of either end of a link is the other end
        a, b = lay.port_index(u, pu), lay.port_index(v, pv)
        assert (peer[a], peer[b]) == (b, a) and (node[a], num[a]) == (u, pu)
    assert not peer.flags.writeable and not lay.port_base.flags.writeable


def test_a_frozen_graph_is_validated_and_laid_out_once(monkeypatch):
    g = nx.freeze(fat_tree(4, **LINK))
    calls = []
    real = layout_module.validate
    monkeypatch.setattr(layout_module, "validate", lambda graph: calls.append(graph) or real(graph))
    first = layout_of(g)
    assert layout_of(g) is first and layout_of(first) is first
    routes.unicast_tables(layout_of(g))
    routes.multicast_tree(layout_of(g), [0, 5, 9])
    assert calls == [g]
    assert routes.unicast_tables(layout_of(g)) is routes.unicast_tables(first)  # the tables are kept per Layout
    assert first.graph is g


def test_a_graph_that_is_not_frozen_is_copied_so_later_changes_reach_no_layout():
    g = fat_tree(4, **LINK)
    lay = layout_of(g)
    assert lay.graph is not g and nx.is_frozen(lay.graph)
    g.edges[0, 16]["rate_bps"] = 1  # the caller's graph changes ...
    assert lay.graph.edges[0, 16]["rate_bps"] == LINK["rate_bps"]  # ... its Layout does not
    assert layout_of(g) is not lay  # and the next call sees the change
    assert not nx.is_frozen(g)


def test_an_invalid_graph_is_refused_before_any_layout():
    g = nx.Graph()
    g.add_node(0, role="switch", tier=1, name="s0")
    with pytest.raises(McsimError, match="topology: graph has no host"):
        layout_of(g)


def test_the_frozen_copy_of_a_graph_does_not_inherit_its_layout():
    g = nx.freeze(leaf_spine(1, 0, 3, **LINK))
    lay = layout_of(g)
    copy = g.copy()
    copy.remove_edge(0, 3)
    copy.add_edge(0, 3, parallel=1, encoding_data_bits=1, encoding_line_bits=1, rate_bps=7, delay_ps=0)
    assert layout_of(copy) is not lay
    assert layout_of(copy).graph.edges[0, 3]["rate_bps"] == 7


def test_updown_tables_are_kept_per_set_of_dead_links():
    lay = layout_of(fat_tree(4, **LINK))
    dead = [(24, 32)]
    assert routes.updown_tables(lay, dead) is routes.updown_tables(lay, [(32, 24)])
    assert routes.updown_tables(lay, dead) is not routes.updown_tables(lay, [])
    np.testing.assert_array_equal(routes.updown_tables(lay).candidates, routes.unicast_tables(lay).candidates)


def test_a_layout_is_plain_data():
    lay = layout_of(leaf_spine(1, 0, 2, **LINK))
    assert isinstance(lay, Layout)
    with pytest.raises(AttributeError):
        lay.hosts = 3
