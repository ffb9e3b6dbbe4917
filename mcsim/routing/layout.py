# SPDX-License-Identifier: GPL-2.0-only
"""A topology's layout: the facts about its fabric that routing, the C++ fabric, faults and the
subnet manager all use, computed once per graph (pure networkx + numpy, no C++).

Port numbering (the contract with the C++ fabric)
-------------------------------------------------
Every node numbers its ports from 0: neighbours in ascending node id, and for each neighbour
``parallel`` consecutive ports, one per parallel link (``link_index`` 0..parallel-1). Link
``link_index`` between u and v joins u's port for (v, link_index) to v's port for (u, link_index).
A host has exactly port 0. Across the fabric, port p of node n is global port
``port_base[n] + p`` (nodes ascending), as ``Fabric::Build`` numbers them and FabricResult reports
them.

Caching
-------
:func:`layout_of` validates a graph and builds its Layout. A frozen graph (``nx.freeze``, as
Scenario's topologies are) keeps its Layout, so it is validated and laid out once; any other graph
is copied and frozen first, so changing it later changes no Layout. A Layout also keeps what is
derived from it alone (routing tables: :meth:`Layout.memo`).

A run makes its Layout once, where it starts (Scenario.run, mcsim.runs.flows.simulate,
mcsim.runs.verbs.run_verbs, which also take a graph), and hands it on: routing, the subnet manager,
Faults.check, the reference counts and mcsim.native.fabric.build take a Layout, never a graph.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import networkx as nx
import numpy as np

from mcsim.errors import McsimError
from mcsim.topology.rules import host_count, validate

PortMap = Mapping[int, Sequence[tuple[int, int]]]  # node -> [(neighbour, link_index) per port]
PhysicalLink = tuple[int, int, int, int]  # (u, port_u, v, port_v) with u < v
T = TypeVar("T")
_CACHE_ATTR = "_mcsim_layout"  # where a frozen graph keeps its Layout (as nx.freeze keeps "frozen")


def port_map(g: nx.Graph) -> dict[int, list[tuple[int, int]]]:
    """Return every node's ports in order: ``ports[node][port] = (neighbour, link_index)``.

    Neighbours are taken in ascending node id, each with ``parallel`` consecutive ports
    (link_index 0..parallel-1). Deterministic: it depends only on the graph's edges.
    """
    return {
        node: [(nbr, i) for nbr in sorted(g[node]) for i in range(g[node][nbr]["parallel"])] for node in sorted(g.nodes)
    }


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, slots=True, eq=False)
class Layout:
    """The fabric of one validated topology graph, read-only.

    Attributes
    ----------
    graph
        The topology, frozen (hosts 0..H-1, then switches).
    hosts
        H, the number of hosts (= ranks).
    ports
        ``ports[node][port] = (neighbour, link_index)`` (see the module doc).
    first_port
        ``first_port[node][nbr]``: the first of node's ports toward nbr (link_index 0).
    links
        Every physical link once as (u, port_u, v, port_v), u < v, sorted; parallel links one by
        one. The order in which the C++ fabric is wired.
    port_base
        int64, shape (N+1,): node n's port p is global port ``port_base[n] + p``;
        ``port_base[N]`` is the number of ports.
    leaf_of
        The node each host's one link goes to (its leaf switch, or the other host of a pair).
    """

    graph: nx.Graph
    hosts: int
    ports: Mapping[int, tuple[tuple[int, int], ...]]
    first_port: Mapping[int, Mapping[int, int]]
    links: tuple[PhysicalLink, ...]
    port_base: np.ndarray
    leaf_of: tuple[int, ...]
    _memo: dict[Hashable, Any] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def of_frozen(cls, g: nx.Graph) -> Layout:
        """Lay out a frozen graph that :func:`mcsim.topology.validate` accepts (use :func:`layout_of`)."""
        ports = {node: tuple(entries) for node, entries in port_map(g).items()}
        first = {
            node: {nbr: port for port, (nbr, index) in enumerate(entries) if index == 0}
            for node, entries in ports.items()
        }
        links = tuple(
            (u, p, v, first[v][u] + index) for u in sorted(ports) for p, (v, index) in enumerate(ports[u]) if u < v
        )
        counts = [len(ports[n]) for n in sorted(ports)]
        hosts = host_count(g)
        return cls(
            graph=g,
            hosts=hosts,
            ports=ports,
            first_port=first,
            links=links,
            port_base=_readonly(np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)),
            leaf_of=tuple(next(iter(g[h])) for h in range(hosts)),
        )

    @property
    def nodes(self) -> int:
        """N, the number of nodes (hosts, then switches)."""
        return len(self.ports)

    @property
    def switches(self) -> range:
        """The switches' node ids, H..N-1."""
        return range(self.hosts, self.nodes)

    @property
    def n_ports(self) -> int:
        """Ports in the whole fabric (two per physical link)."""
        return int(self.port_base[-1])

    def port_index(self, node: int, port: int) -> int:
        """The global index of ``node``'s ``port``."""
        return int(self.port_base[node]) + port

    def check_port(self, what: str, node: int, port: int) -> None:
        """Raise McsimError (one line: ``"<what>: port <node>:<port>: ..."``) unless ``node`` exists and has
        ``port``."""
        if node not in self.ports:
            raise McsimError(
                f"{what}: port {node}:{port}: node {node} is not a node of the topology (0..{len(self.ports) - 1})"
            )
        if port >= len(self.ports[node]):
            raise McsimError(f"{what}: port {node}:{port}: node {node} has ports 0..{len(self.ports[node]) - 1}")

    def port_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per global port: its node, its number on the node, and the global port at the far end
        (uint32 each, read-only; FabricResult's port_node, port_num, port_peer)."""
        return self.memo(("port_arrays",), self._port_arrays)

    def _port_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        counts = np.diff(self.port_base)
        node = np.repeat(np.arange(self.nodes, dtype=np.uint32), counts)
        num = (np.arange(self.n_ports, dtype=np.int64) - np.repeat(self.port_base[:-1], counts)).astype(np.uint32)
        peer = np.zeros(self.n_ports, dtype=np.uint32)
        if self.links:
            ends = np.asarray(self.links, dtype=np.int64)
            a = self.port_base[ends[:, 0]] + ends[:, 1]
            b = self.port_base[ends[:, 2]] + ends[:, 3]
            peer[a], peer[b] = b, a
        return _readonly(node), _readonly(num), _readonly(peer)

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` once per key for this Layout (routing tables); later calls return it."""
        if key not in self._memo:
            self._memo[key] = compute()
        value: T = self._memo[key]
        return value


def layout_of(g: nx.Graph | Layout) -> Layout:
    """The Layout of topology ``g`` (a Layout is returned as is).

    Raises
    ------
    McsimError
        If ``g`` breaks the graph conventions (:func:`mcsim.topology.validate`).
    """
    if isinstance(g, Layout):
        return g
    if isinstance(g, nx.Graph) and nx.is_frozen(g):
        cached = getattr(g, _CACHE_ATTR, None)
        if isinstance(cached, Layout):
            return cached
        validate(g)
        layout = Layout.of_frozen(g)
        setattr(g, _CACHE_ATTR, layout)
        return layout
    validate(g)
    return Layout.of_frozen(nx.freeze(g.copy()))
