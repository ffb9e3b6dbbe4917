# SPDX-License-Identifier: GPL-2.0-only
"""What the topology tests share."""

import networkx as nx
import pytest


def _same_graph(a: nx.Graph, b: nx.Graph) -> None:
    """Equal nodes (in order, with attributes), edges (either orientation) and graph attributes."""
    assert list(a.nodes(data=True)) == list(b.nodes(data=True))
    edges = lambda g: {(min(u, v), max(u, v)): d for u, v, d in g.edges(data=True)}  # noqa: E731
    assert edges(a) == edges(b)
    assert a.graph == b.graph


@pytest.fixture
def same_graph():
    return _same_graph
