# SPDX-License-Identifier: GPL-2.0-only
"""Routing, pure networkx + numpy: unicast ECMP tables and multicast trees over a Layout.

Ports
-----
Ports are numbered as :mod:`mcsim.routing.layout` says (the contract with the C++ fabric). Every function
here takes a topology's :class:`~mcsim.routing.layout.Layout` (:func:`~mcsim.routing.layout.layout_of`
validates a graph and lays it out once, where a run starts). Unicast tables are kept by the Layout:
computed once per topology.

Unicast
-------
Switch s forwards a packet for host d to d's port if d is one of its own hosts, else on one of
the candidates toward d's leaf switch (the tables are kept per destination switch, not per host):
every port (every parallel link included) on a minimal-hop path to d, ascending. On fat-trees and
leaf-spines the minimal paths are exactly the up*/down* paths. The C++ switch picks one candidate
by a hash of the flow; :func:`path` replays that choice in Python for tests. With links down
(:func:`updown_tables`) the routes are up*/down* on the links that are up (no valley, so no
credit loop in a lossless fabric), and an empty slice means no route: the switch drops.

Multicast
---------
One loop-free tree per group (InfiniBand style): a packet that arrives at a switch on port p is
copied to every tree port of that switch except p; a member host sends to its leaf. So every other
member receives exactly one copy and every tree link carries the packet exactly once.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from numbers import Integral

import networkx as nx
import numpy as np

from mcsim.errors import McsimError
from mcsim.routing.layout import Layout, PhysicalLink, PortMap
from mcsim.topology.rules import GPU

TreeLink = PhysicalLink  # (u, port_u, v, port_v) with u < v
_UNREACHABLE = -2  # a distance that never equals (distance of a switch) - 1


# ---------------------------------------------------------------------------------------------
# ports


def peer_port(g: nx.Graph, ports: PortMap, node: int, port: int) -> int:
    """Return the port number at the far end of ``node``'s ``port`` (same link_index on the neighbour)."""
    if node not in ports:
        raise McsimError(f"peer_port: node={node!r} is not in the graph (nodes are 0..{len(ports) - 1})")
    if not 0 <= port < len(ports[node]):
        raise McsimError(f"peer_port: port={port} is not a port of node {node} (ports 0..{len(ports[node]) - 1})")
    nbr, index = ports[node][port]
    return ports[nbr].index((node, index))


def links(layout: Layout) -> list[TreeLink]:
    """Return every physical link once as (u, port_u, v, port_v), u < v, sorted (parallel links one by one)."""
    return list(layout.links)


# ---------------------------------------------------------------------------------------------
# unicast


@dataclass(frozen=True, slots=True, eq=False)
class UnicastTables:
    """Unicast candidate ports of every switch toward every host, as read-only numpy arrays.

    Every host under one leaf switch has the same routes at every switch but that leaf, which
    sends to the host's own port. So the candidates are kept per destination switch, not per
    host: S x S rows instead of S x H (a k=48 fat tree: 8.3 M rows and 64 M candidates instead of
    80 M rows and 1.5 G candidates). The C++ switches keep the same layout.

    Layout (H hosts, S switches = nodes H..H+S-1, switch index ``i = switch - H``):

    - ``offsets``: uint32, shape (S, S+1), C-contiguous. Row i is switch H+i's CSR offsets into its
      own candidate list: its ports toward the hosts of switch H+j are
      ``own[offsets[i, j]:offsets[i, j+1]]``, and ``offsets[i, 0] == 0``. A slice is empty where
      switch H+j has no hosts, at j == i (its hosts go to their ports), and in
      :func:`updown_tables` where no route is left.
    - ``base``: uint64, shape (S+1,): switch H+i's candidate list is
      ``candidates[base[i]:base[i+1]]`` (so ``offsets[i, S] == base[i+1] - base[i]``).
    - ``candidates``: uint32, shape (base[S],): all switches' candidate port numbers concatenated,
      ascending within each (switch, destination switch) slice.
    - ``leaf``: int64, shape (H,): the switch index of each host's leaf.
    - ``host_port``: uint32, shape (H,): the port of that leaf toward the host.

    :meth:`for_switch` returns one switch's (offsets, candidates) pair as zero-copy views;
    :meth:`candidate_ports` one (switch, host) pair's ports.
    """

    hosts: int
    offsets: np.ndarray
    base: np.ndarray
    candidates: np.ndarray
    leaf: np.ndarray
    host_port: np.ndarray

    @property
    def switches(self) -> int:
        """Number of switches S."""
        return int(self.offsets.shape[0])

    def for_switch(self, switch: int) -> tuple[np.ndarray, np.ndarray]:
        """Return switch's (offsets uint32[S+1], candidates uint32[...]), contiguous views."""
        if not self.hosts <= switch < self.hosts + self.switches:
            raise McsimError(
                f"UnicastTables: switch={switch} is not a switch (switches are {self.hosts}.."
                f"{self.hosts + self.switches - 1})"
            )
        i = switch - self.hosts
        return self.offsets[i], self.candidates[int(self.base[i]) : int(self.base[i + 1])]

    def candidate_ports(self, switch: int, host: int) -> np.ndarray:
        """Return the candidate output ports (uint32, ascending) of ``switch`` toward ``host``."""
        if not 0 <= host < self.hosts:
            raise McsimError(f"UnicastTables: host={host} is not a host (hosts are 0..{self.hosts - 1})")
        offsets, candidates = self.for_switch(switch)
        leaf = int(self.leaf[host])
        if leaf == switch - self.hosts:
            return self.host_port[host : host + 1]
        return candidates[offsets[leaf] : offsets[leaf + 1]]


def _switch_distances(g: nx.Graph, hosts: int, sources: Iterable[int]) -> np.ndarray:
    """Hop distances between switches, one row per source switch: int32, shape (len(sources), S).

    One breadth-first search for all sources at once, level by level over the switch-to-switch
    links (hosts never lie on a path between switches); column j is switch ``hosts + j``; -1 where
    a switch is not reached (a fabric cut by links that are down).
    """
    sources = np.fromiter(sources, dtype=np.int64) - hosts
    switches = g.number_of_nodes() - hosts
    dist = np.full((sources.size, switches), -1, dtype=np.int32)
    # every switch is its own neighbour too: no switch has an empty list, and it changes no distance
    pairs = [(u - hosts, v - hosts) for u, v in g.edges if u >= hosts and v >= hosts]
    pairs += [(s, s) for s in range(switches)]
    frontier = np.zeros(dist.shape, dtype=bool)
    frontier[np.arange(sources.size), sources] = True
    ends = np.asarray(pairs, dtype=np.int64)
    tail = np.concatenate((ends[:, 0], ends[:, 1]))
    head = np.concatenate((ends[:, 1], ends[:, 0]))
    order = np.argsort(head, kind="stable")
    tail, head = tail[order], head[order]
    starts = np.searchsorted(head, np.arange(switches))
    level = 0
    while frontier.any():
        dist[frontier] = level
        reached = np.logical_or.reduceat(frontier[:, tail], starts, axis=1)
        frontier = reached & (dist < 0)
        level += 1
    return dist


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def unicast_tables(layout: Layout) -> UnicastTables:
    """Return every switch's ECMP candidate ports toward every host (see :class:`UnicastTables`).

    A port of switch s is a candidate toward host d when its neighbour is one hop closer to d:
    all minimal paths, every parallel link. Hosts under the same leaf share one BFS (from the
    leaf), and each switch's table is built with a few numpy operations.

    Parameters
    ----------
    layout : Layout
        The topology's layout (:func:`mcsim.routing.layout.layout_of`). The tables are computed once
        per Layout and shared (they are read-only).
    """
    return layout.memo(("unicast",), lambda: _unicast_tables(layout))


def _tables(layout: Layout, offsets: np.ndarray, chunks: list[np.ndarray]) -> UnicastTables:
    """Assemble the tables from each switch's offsets row and candidate list."""
    hosts = layout.hosts
    base = np.zeros(offsets.shape[0] + 1, dtype=np.uint64)
    np.cumsum([c.size for c in chunks], out=base[1:])
    leaf = np.asarray(layout.leaf_of, dtype=np.int64) - hosts
    host_port = np.fromiter(
        (layout.first_port[n][h] if n >= hosts else 0 for h, n in enumerate(layout.leaf_of)),
        dtype=np.uint32,
        count=hosts,
    )
    return UnicastTables(
        hosts=hosts,
        offsets=_readonly(offsets),
        base=_readonly(base),
        candidates=_readonly(np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.uint32)),
        leaf=_readonly(leaf),
        host_port=_readonly(host_port),
    )


def _unicast_tables(layout: Layout, dead: frozenset[tuple[int, int]] = frozenset()) -> UnicastTables:
    """Every minimal path over the links that are up (``dead``: edges down; none by default, where every leaf must be
    reached); a leaf the links up do not reach gets no candidate (the switch drops as unroutable)."""
    ports, hosts, nodes = layout.ports, layout.hosts, layout.nodes
    g = nx.restricted_view(layout.graph, [], dead) if dead else layout.graph
    switches = nodes - hosts
    leaves = np.unique(np.asarray(layout.leaf_of, dtype=np.int64)) if switches else np.zeros(0, dtype=np.int64)
    # dist[r, n]: hops from leaves[r] to node n; hosts never lie on a path to another host.
    dist = np.full((leaves.size, nodes), _UNREACHABLE, dtype=np.int32)
    if switches:
        dist[:, hosts:] = _switch_distances(g, hosts, leaves.tolist())
    offsets = np.zeros((switches, switches + 1), dtype=np.uint32)
    chunks: list[np.ndarray] = []
    for i, s in enumerate(range(hosts, nodes)):
        nbr = np.fromiter((n for n, _ in ports[s]), dtype=np.int64, count=len(ports[s]))
        # match[r, p]: port p leads one hop closer to leaf r (never true for r = s's own row)
        match = dist[:, nbr] == (dist[:, s] - 1)[:, None]
        if dead:  # neither a port whose link is down, nor a leaf s does not reach (-1) or is (0)
            up = np.fromiter((_edge(s, int(n)) not in dead for n in nbr), dtype=bool, count=nbr.size)
            match &= up[None, :] & (dist[:, s] > 0)[:, None]
        rows, cols = np.nonzero(match)  # row-major: leaves ascending, ports ascending within a row
        count = np.zeros(switches, dtype=np.int64)
        count[leaves - hosts] = np.bincount(rows, minlength=leaves.size)
        others = leaves[leaves != s] - hosts
        if not dead and np.any(count[others] == 0):  # impossible in a connected graph that validate() accepted
            raise AssertionError(
                f"switch {s} has no route to the hosts of switch {hosts + int(others[count[others] == 0][0])}"
            )
        offsets[i, 1:] = np.cumsum(count)
        chunks.append(cols.astype(np.uint32))
    return _tables(layout, offsets, chunks)


def _edge(u: int, v: int) -> tuple[int, int]:
    return (u, v) if u < v else (v, u)


def updown_tables(layout: Layout, down: Iterable[tuple[int, int]] = ()) -> UnicastTables:
    """Up*/down* unicast routes over the links that are up (``down``: edges (u, v) down, all
    their parallel links), as a subnet manager recomputes them after a link fails or returns.

    "Up" is toward a higher tier. A switch that reaches the destination's leaf going only down takes
    the down links on the shortest such paths; any other switch takes the up links on the shortest
    up*/down* paths. A host's leaf always sends to the host's port (a dead host link drops there).
    Where no up*/down* path is left, the slice is empty: the switch drops the packet as
    unroutable. With no link down these are exactly :func:`unicast_tables` on fat-trees and
    leaf-spines (a test checks it). Computed once per Layout and set of edges down.

    On nodes of several GPUs (mcsim.topology.nodes) every path between rails goes down into a node and up again
    (NIC, hub, NVSwitch: NCCL's PXN), so no up*/down* route joins them; there the routes are every minimal path over
    the links that are up, as :func:`unicast_tables` gives them with every link up. NVLink is a network of its own
    on a machine, so no credit loop runs through it; in mcsim it shares the fabric's flow control, as it does with
    every link up.
    """
    dead = frozenset(_edge(u, v) for u, v in down)
    if layout.graph.nodes[0].get("part") == GPU:  # nodes of several GPUs: their NVSwitch sits between two downs
        return layout.memo(("updown", dead), lambda: _unicast_tables(layout, dead))
    return layout.memo(("updown", dead), lambda: _updown_tables(layout, dead))


def _updown_tables(layout: Layout, dead: frozenset[tuple[int, int]]) -> UnicastTables:
    g, ports, hosts, nodes = layout.graph, layout.ports, layout.hosts, layout.nodes
    tier = [g.nodes[n]["tier"] for n in range(nodes)]
    ups: dict[int, list[int]] = {s: [] for s in range(hosts, nodes)}
    downs: dict[int, list[int]] = {s: [] for s in range(hosts, nodes)}
    for u, v in g.edges:
        if u >= hosts and v >= hosts and _edge(u, v) not in dead and tier[u] != tier[v]:
            lo, hi = (u, v) if tier[u] < tier[v] else (v, u)
            ups[lo].append(hi)
            downs[hi].append(lo)
    by_tier = sorted(range(hosts, nodes), key=lambda s: -tier[s])
    leaf_of = layout.leaf_of
    leaves = sorted(set(leaf_of))
    unreached = nodes + 1
    # via[s][leaf]: the neighbours switch s forwards to toward that leaf
    via: dict[int, dict[int, list[int]]] = {s: {} for s in range(hosts, nodes)}
    for leaf in leaves:
        dd = dict.fromkeys(range(hosts, nodes), unreached)  # hops going only down to the leaf
        dd[leaf] = 0
        queue = deque([leaf])
        while queue:
            y = queue.popleft()
            for x in ups[y]:
                if dd[x] == unreached:
                    dd[x] = dd[y] + 1
                    queue.append(x)
        ud = dict(dd)  # hops on the shortest up*/down* path
        for s in by_tier:  # the switches above s are done before s
            if dd[s] == unreached:
                ud[s] = min((ud[y] + 1 for y in ups[s]), default=unreached)
        for s in range(hosts, nodes):
            if s == leaf:
                continue
            if dd[s] != unreached:
                via[s][leaf] = [y for y in downs[s] if dd[y] == dd[s] - 1]
            elif ud[s] < unreached:
                via[s][leaf] = [y for y in ups[s] if ud[y] == ud[s] - 1]
    switches = nodes - hosts
    offsets = np.zeros((switches, switches + 1), dtype=np.uint32)
    chunks: list[np.ndarray] = []
    for i, s in enumerate(range(hosts, nodes)):
        toward: dict[int, list[int]] = {}
        for port, (nbr, _) in enumerate(ports[s]):
            toward.setdefault(nbr, []).append(port)
        per_leaf = [sorted(p for y in via[s].get(hosts + j, ()) for p in toward[y]) for j in range(switches)]
        offsets[i, 1:] = np.cumsum([len(c) for c in per_leaf])
        chunks.append(np.fromiter((p for c in per_leaf for p in c), dtype=np.uint32, count=int(offsets[i, -1])))
    return _tables(layout, offsets, chunks)


def path(
    layout: Layout, tables: UnicastTables, src: int, dst: int, choose: Callable[[int, np.ndarray], int]
) -> list[int]:
    """Follow the unicast tables from host ``src`` to host ``dst``; return the nodes visited.

    ``choose(switch, candidates)`` returns an index into ``candidates`` (as the C++ switch's
    ``hash(flow) % count``). Raises McsimError if the walk revisits a node (a loop), reaches a
    wrong host, or the chooser returns a bad index.
    """
    ports = layout.ports
    for name, host in (("src", src), ("dst", dst)):
        if not 0 <= host < tables.hosts:
            raise McsimError(f"path: {name}={host} is not a host (hosts are 0..{tables.hosts - 1})")
    node = src
    hops = [src]
    seen = {src}
    while node != dst:
        if node < tables.hosts:
            if node != src:
                raise McsimError(f"path: {src}->{dst} was delivered to host {node}: {hops}")
            node = ports[node][0][0]
        else:
            cands = tables.candidate_ports(node, dst)
            index = choose(node, cands)
            if not 0 <= index < len(cands):
                raise McsimError(f"path: choose returned {index} for {len(cands)} candidates at switch {node}")
            node = ports[node][int(cands[index])][0]
        if node in seen:
            raise McsimError(f"path: {src}->{dst} loops back to node {node}: {hops}")
        hops.append(node)
        seen.add(node)
    return hops


# ---------------------------------------------------------------------------------------------
# multicast


@dataclass(frozen=True, slots=True)
class MulticastTree:
    """One multicast group's loop-free tree.

    Attributes
    ----------
    members : tuple of int
        Member hosts, ascending.
    root : int
        The switch the tree was grown from.
    switch_ports : dict[int, tuple[int, ...]]
        Tree switch -> its tree ports, ascending (ports to member hosts included); keys ascending.
    tree_links : tuple of (u, port_u, v, port_v)
        One entry per tree link (exactly one of any parallel links), u < v, sorted.

    Raises
    ------
    McsimError
        If the links do not form one tree over the members and switches, or disagree with
        ``switch_ports``.
    """

    members: tuple[int, ...]
    root: int
    switch_ports: dict[int, tuple[int, ...]]
    tree_links: tuple[TreeLink, ...]

    def __post_init__(self) -> None:
        nodes = set(self.members) | set(self.switch_ports)
        on_switch: dict[int, list[int]] = {s: [] for s in self.switch_ports}
        parent = {n: n for n in nodes}

        def find(n: int) -> int:
            while parent[n] != n:
                parent[n] = parent[parent[n]]
                n = parent[n]
            return n

        for u, pu, v, pv in self.tree_links:
            for node, port in ((u, pu), (v, pv)):
                if node not in nodes:
                    raise McsimError(f"multicast tree: link {u}-{v} ends at node {node}, not a member or tree switch")
                if node in on_switch:
                    on_switch[node].append(port)
            ru, rv = find(u), find(v)
            if ru == rv:
                raise McsimError(f"multicast tree: link {u}-{v} closes a loop; a tree has len(nodes)-1 links")
            parent[ru] = rv
        if len(self.tree_links) != len(nodes) - 1:
            raise McsimError(
                f"multicast tree: {len(self.tree_links)} links for {len(nodes)} nodes is not connected; a tree has "
                f"{len(nodes) - 1}"
            )
        for s, tree_ports in self.switch_ports.items():
            if tuple(sorted(on_switch[s])) != tuple(tree_ports):
                raise McsimError(f"multicast tree: switch {s} ports={tree_ports} differ from its tree links")
        if self.root not in self.switch_ports:
            raise McsimError(f"multicast tree: root={self.root} is not a tree switch")

    @property
    def nodes(self) -> tuple[int, ...]:
        """Member hosts and tree switches, ascending."""
        return tuple(sorted(set(self.members) | set(self.switch_ports)))


def _check_members(members: Iterable[int], hosts: int) -> tuple[int, ...]:
    seen: set[int] = set()
    for m in members:
        if isinstance(m, bool) or not isinstance(m, Integral) or not 0 <= m < hosts:
            raise McsimError(f"multicast group: member {m!r} is not a host (hosts are 0..{hosts - 1})")
        if int(m) in seen:
            raise McsimError(f"multicast group: member {int(m)} appears twice; list each host once")
        seen.add(int(m))
    if len(seen) < 2:
        raise McsimError(f"multicast group: members={sorted(seen)} has {len(seen)}; a group needs >= 2 hosts")
    return tuple(sorted(seen))


def _link_index(members: tuple[int, ...], u: int, v: int, parallel: int) -> int:
    """Which of ``parallel`` links between u and v a group uses: a stable hash of (members, u, v)."""
    if parallel == 1:
        return 0
    key = np.asarray((*members, -1, min(u, v), max(u, v)), dtype="<i8").tobytes()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little") % parallel


def _bfs_parents(g: nx.Graph, root: int, hosts: int) -> dict[int, int]:
    """BFS tree over switches from root, neighbours in ascending id: parent of every reached switch."""
    parent = {root: root}
    queue = deque([root])
    while queue:
        node = queue.popleft()
        for nbr in sorted(g[node]):
            if nbr >= hosts and nbr not in parent:
                parent[nbr] = node
                queue.append(nbr)
    return parent


def multicast_tree(
    layout: Layout,
    members: Iterable[int],
    *,
    down: Iterable[tuple[int, int]] = (),
    root: int | None = None,
) -> MulticastTree | None:
    """Return one loop-free multicast tree for the group of member hosts.

    The root is the switch that minimises the largest hop distance to the members' leaves (ties:
    lowest node id), or ``root`` if given (one of :func:`best_roots`). The tree is the union of the
    paths from the root to each member's leaf in one BFS tree from the root (neighbours visited in
    ascending id), plus the member hosts' links: pruned by construction. Between two switches the
    tree uses exactly one of the parallel links, chosen by a stable hash of (sorted members, the two
    switches) modulo ``parallel``, so that different groups spread over parallel links.

    With edges ``down`` (a subnet manager's view after link failures) the tree is grown over the
    links that are up and spans the members it can still reach: those whose host link is up, in the
    part of the fabric that holds most of them (ties: the lowest leaf). None if no member's link is
    up. Without ``down`` it is never None.

    Raises
    ------
    McsimError
        For a member that is not a host, a repeated member, fewer than 2 members, or a topology
        without switches.
    """
    g, hosts, first, leaf_of = layout.graph, layout.hosts, layout.first_port, layout.leaf_of
    group = _check_members(members, hosts)
    if layout.nodes == hosts:
        raise McsimError("multicast group: the topology has no switch; a multicast tree needs one")
    dead = {_edge(u, v) for u, v in down}
    reached = group
    if dead:
        g = g.copy()
        g.remove_edges_from(dead)
        linked = [m for m in group if _edge(m, leaf_of[m]) not in dead]
        if not linked:
            return None
        parts = [p for p in nx.connected_components(g) if any(leaf_of[m] in p for m in linked)]
        part = max(parts, key=lambda p: (sum(leaf_of[m] in p for m in linked), -min(p)))
        reached = tuple(m for m in linked if leaf_of[m] in part)
    member_leaves = sorted({leaf_of[m] for m in reached})
    dist = _switch_distances(g, hosts, member_leaves)
    dist[dist < 0] = np.iinfo(np.int32).max  # a switch cut off from a member's leaf is never the root
    if root is None:
        root = hosts + int(np.argmin(dist.max(axis=0)))  # argmin: the first, i.e. the lowest id, on ties
    elif not hosts <= root < layout.nodes or dist[:, root - hosts].max() == np.iinfo(np.int32).max:
        raise McsimError(f"multicast tree: root={root} is not a switch that reaches every member's leaf")
    parent = _bfs_parents(g, root, hosts)
    edges: set[tuple[int, int]] = set()
    for leaf in member_leaves:
        node = leaf
        while node != root:
            up = parent[node]
            if (min(node, up), max(node, up)) in edges:
                break  # the rest of the way up is already in the tree
            edges.add((min(node, up), max(node, up)))
            node = up
    tree_links: list[TreeLink] = []
    for u, v in sorted(edges):
        index = _link_index(group, u, v, g[u][v]["parallel"])
        tree_links.append((u, first[u][v] + index, v, first[v][u] + index))
    for m in reached:
        tree_links.append((m, 0, leaf_of[m], first[leaf_of[m]][m]))
    switch_ports: dict[int, list[int]] = {}
    for u, pu, v, pv in tree_links:
        for node, port in ((u, pu), (v, pv)):
            if node >= hosts:
                switch_ports.setdefault(node, []).append(port)
    return MulticastTree(
        members=reached,
        root=root,
        switch_ports={s: tuple(sorted(switch_ports[s])) for s in sorted(switch_ports)},
        tree_links=tuple(sorted(tree_links)),
    )


def best_roots(layout: Layout, members: Iterable[int]) -> tuple[int, ...]:
    """The switches that minimise the largest hop distance to the members' leaves, ascending: the
    roots :func:`multicast_tree` may grow a tree from (it takes the first by default)."""
    group = _check_members(members, layout.hosts)
    if layout.nodes == layout.hosts:
        raise McsimError("multicast group: the topology has no switch; a multicast tree needs one")
    dist = _switch_distances(layout.graph, layout.hosts, sorted({layout.leaf_of[m] for m in group}))
    dist[dist < 0] = np.iinfo(np.int32).max
    worst = dist.max(axis=0)
    return tuple(layout.hosts + int(i) for i in np.flatnonzero(worst == worst.min()))


def aggregation_trees(layout: Layout, members: Iterable[int], count: int = 0) -> list[MulticastTree]:
    """The aggregation trees of an in-network reduction over the member hosts: one
    :func:`multicast_tree` from each of the first ``count`` :func:`best_roots` (0: from every one),
    so that the reduction's traffic spreads over the switches at the top."""
    roots = best_roots(layout, members)
    chosen = roots if count == 0 else roots[:count]
    return [t for r in chosen if (t := multicast_tree(layout, members, root=r)) is not None]


def tree_parents(tree: MulticastTree, layout: Layout) -> dict[int, int | None]:
    """Per tree switch: its port toward the tree's root (None at the root)."""
    adjacent: dict[int, list[tuple[int, int, int]]] = {}
    for u, pu, v, pv in tree.tree_links:
        adjacent.setdefault(u, []).append((pu, v, pv))
        adjacent.setdefault(v, []).append((pv, u, pu))
    parent: dict[int, int | None] = {tree.root: None}
    queue = deque([tree.root])
    while queue:
        node = queue.popleft()
        for _, nbr, nbr_port in adjacent.get(node, ()):
            if nbr >= layout.hosts and nbr not in parent:
                parent[nbr] = nbr_port
                queue.append(nbr)
    return parent


def simulate_multicast(layout: Layout, tree: MulticastTree, sender: int) -> tuple[dict[int, int], dict[TreeLink, int]]:
    """Replay one multicast packet from ``sender`` over ``tree`` with the switch semantics above.

    Returns
    -------
    copies : dict[int, int]
        Every host -> number of copies it received (the sender's own included, expected 0).
    traversals : dict[(u, port_u, v, port_v), int]
        Every tree link -> number of times the packet crossed it (either direction).
    """
    hosts = layout.hosts
    if sender not in tree.members:
        raise McsimError(f"simulate_multicast: sender={sender} is not a member of the group {list(tree.members)}")
    far: dict[tuple[int, int], tuple[int, int, TreeLink]] = {}
    for link in tree.tree_links:
        u, pu, v, pv = link
        far[(u, pu)] = (v, pv, link)
        far[(v, pv)] = (u, pu, link)
    copies = dict.fromkeys(range(hosts), 0)
    traversals = dict.fromkeys(tree.tree_links, 0)
    limit = 2 * len(tree.tree_links)  # a correct tree needs len(tree_links) sends
    queue = deque([(sender, 0)])  # (node, port it sends on)
    sends = 0
    while queue:
        node, port = queue.popleft()
        nbr, nbr_port, link = far[(node, port)]
        traversals[link] += 1
        sends += 1
        if sends > limit:
            raise McsimError(f"simulate_multicast: more than {limit} sends; the tree has a loop")
        if nbr < hosts:
            copies[nbr] += 1
            continue
        queue.extend((nbr, p) for p in tree.switch_ports[nbr] if p != nbr_port)
    return copies, traversals
