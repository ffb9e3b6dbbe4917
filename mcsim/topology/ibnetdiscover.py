# SPDX-License-Identifier: GPL-2.0-only
"""Import a real fabric from ``ibnetdiscover`` output (infiniband-diags, rdma-core) as a topology graph.

What is read
------------
``Switch`` blocks become switches and ``Ca`` blocks hosts (channel adapters); every port line
(``[port] "peer"[peer port] # ... lid N 4xEDR``) is one end of a cable, whose width and speed
("4xEDR") give the link's signalling rate and line code (:func:`mcsim.topology.physics.infiniband_link`,
lane rates from the InfiniBand specification). A cable listed from both ends is one cable; if the two
ends report different widths or speeds, the slower one is kept (and counted). Cables between the same
two nodes are one edge with ``parallel`` = their count, at the slowest cable's rate (counted when
they differ). Header, comment, ``vendid=``/``devid=``/``*guid=`` and chassis lines are passed over.

What is left out (each counted in :attr:`Import.skipped`)
----------------------------------------------------------
- CAs whose description holds "Aggregation Node" (the SHARP aggregation nodes inside Quantum
  switches: "Mellanox Technologies Aggregation Node"), and routers (``Rtr``): they are not hosts;
- a CA's ports beyond its first connected one (an mcsim host has one NIC port), and CAs with no
  connected port;
- loopback cables (two ports of one node cabled together), and switches left with no cable.

The graph follows :mod:`mcsim.topology`: hosts first (leaf switch by leaf switch, in port order),
then switches by tier; each node keeps its ibnetdiscover id ("S-0002c9...") as ``guid`` and its
node description as ``name`` (with the id added when the description is empty or not unique).

Tiers
-----
When the fabric is tree-like (every switch-to-switch cable joins switches one hop apart in distance
from the hosts' switches) tiers are that distance + 1: hosts 0, their switches 1, the next 2, ...
Otherwise, or when roots are given, tiers are ranked from a root set as OpenSM's up*/down* (updn)
ranks switches: the roots are the top tier, each hop away one lower. Default root: the switch
nearest to all host switches (least largest hop count; the first in the file on ties). mcsim routes
unicast on all shortest paths regardless of tiers; the tiers serve the up*/down* reroutes after link faults
(:func:`mcsim.routing.routes.updown_tables`), which use no cable between switches of one tier.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx

from mcsim.errors import McsimError
from mcsim.topology.physics import DEFAULT_DELAY_PS, Link, edge_attrs, infiniband_link
from mcsim.topology.rules import HOST, SWITCH, validate
from mcsim.util import toml_text

SWITCH_BLOCK, CA_BLOCK, ROUTER_BLOCK = "Switch", "Ca", "Rtr"
AGGREGATION_MARK = "aggregation node"  # in a SHARP aggregation node's description, any case

_NODE = re.compile(r'(Switch|Ca|Rtr)\s+(\d+)\s+"([^"]+)"\s*(?:#\s*"(.*)".*)?')
_EXT = r"(?:\[ext \d+\])?"
_PORT = re.compile(rf'\[(\d+)\]{_EXT}(?:\([0-9A-Fa-f]+\))?\s*"([^"]+)"\[(\d+)\]{_EXT}\s*(?:\([0-9A-Fa-f]+\))?\s*#(.*)')
_SPEED = re.compile(r'.*"\s*lid\s+\d+\s+(\S+)')  # the width and speed after the peer's quoted name and lid
_PORTS_REPORT = re.compile(r"(CA|SW|RT)\s+\d+\s+\d+\s+0x")  # a line of `ibnetdiscover -p`
_PASSED = re.compile(
    r"(#.*|(?:vendid|devid|sysimgguid|switchguid|caguid|rtguid)=.*|Non-Chassis Nodes|Chassis \d+.*|Hostname: .*)?"
)


@dataclass(frozen=True, slots=True)
class Node:
    """One Switch, Ca or Rtr block's header line."""

    guid: str  # the quoted id: "S-0008f10400410015", "H-...", "R-..."
    kind: str  # SWITCH_BLOCK, CA_BLOCK or ROUTER_BLOCK
    description: str  # the node description ("" if none)
    line: int


@dataclass(frozen=True, slots=True)
class PortLine:
    """One port line of a block: one end of a cable as that node reports it."""

    node: str
    port: int
    peer: str
    peer_port: int
    speed: str  # as written: "4xEDR"
    link: Link
    line: int


@dataclass(frozen=True, slots=True)
class Import:
    """An imported fabric: the graph, what was left out, and how tiers were found."""

    graph: nx.Graph
    skipped: dict[str, int] = field(default_factory=dict)  # what was left out -> how many
    adjusted: dict[str, int] = field(default_factory=dict)  # what was read differently from the file -> how many
    tree_like: bool = True
    roots: tuple[str, ...] = ()  # names of the root switches tiers were ranked from (none if tree-like)
    same_tier_links: int = 0  # switch-to-switch edges within one tier (up*/down* uses none of them)

    def report(self) -> list[str]:
        """What the import did, as lines for the command line."""
        g = self.graph
        lines = [f"imported {g.graph['name']}: {g.graph['description']}"]
        lines += [f"  skipped {n} {what}" for what, n in self.skipped.items() if n]
        lines += [f"  {n} {what}" for what, n in self.adjusted.items() if n]
        if self.tree_like and not self.roots:
            lines.append("  tree-like: tiers are hops from the hosts' switches (hosts 0, their switches 1, ...)")
            return lines
        why = "roots given" if self.tree_like else "not tree-like"
        lines.append(
            f"  {why}: tiers ranked from {len(self.roots)} root switch(es) as OpenSM's up*/down* does: "
            + ", ".join(self.roots[:4])
            + (", ..." if len(self.roots) > 4 else "")
        )
        if self.same_tier_links:
            lines.append(
                f"  {self.same_tier_links} switch link(s) join one tier: shortest-path routes use them, "
                "up*/down* reroutes after link faults do not"
            )
        return lines


def _decode(data: bytes, where: str) -> str:
    """The text of a dump; one line for a binary or empty file."""
    if b"\0" in data:
        raise McsimError(f"{where}: not ibnetdiscover output (a binary file: byte 0x00 at {data.index(0)})")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise McsimError(
            f"{where}: not ibnetdiscover output (not UTF-8 text: byte {data[exc.start]:#04x} at {exc.start})"
        ) from None
    if not text.strip():
        raise McsimError(f"{where}: is empty; give the output of ibnetdiscover (Switch and Ca blocks)")
    return text


def _port_line(m: re.Match[str], node: str, number: int, where: str) -> PortLine:
    speed = _SPEED.match(m[4])
    if speed is None:
        raise McsimError(f"{where}: line {number}: no link width and speed (e.g. 4xEDR) after the peer's lid")
    try:
        link = infiniband_link(speed[1])
    except McsimError as exc:
        raise McsimError(f"{where}: line {number}: {exc}") from None
    return PortLine(node, int(m[1]), m[2], int(m[3]), speed[1], link, number)


def parse(text: str, where: str = "ibnetdiscover") -> tuple[dict[str, Node], list[PortLine]]:
    """The blocks and port lines of ibnetdiscover output, in file order; McsimError (one line naming
    ``where`` and the line number) for a line that is none of ibnetdiscover's, a port line outside a
    block, a node declared twice, a port listed twice, or a width and speed it does not know."""
    nodes: dict[str, Node] = {}
    ports: list[PortLine] = []
    seen: dict[tuple[str, int], int] = {}
    current: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if (m := _NODE.fullmatch(line)) is not None:
            if m[3] in nodes:
                raise McsimError(
                    f"{where}: line {number}: node {m[3]} is declared again (first on line {nodes[m[3]].line})"
                )
            nodes[m[3]] = Node(m[3], m[1], (m[4] or "").strip(), number)
            current = m[3]
        elif (m := _PORT.fullmatch(line)) is not None:
            if current is None:
                raise McsimError(f"{where}: line {number}: a port line before any Switch or Ca line")
            port = _port_line(m, current, number, where)
            if (current, port.port) in seen:
                raise McsimError(
                    f"{where}: line {number}: port [{port.port}] of {current} is listed again "
                    f"(first on line {seen[current, port.port]})"
                )
            seen[current, port.port] = number
            ports.append(port)
        elif _PASSED.fullmatch(line) is None:
            shown = line if len(line) <= 80 else line[:77] + "..."
            hint = "; a ports report (ibnetdiscover -p)? give the topology (no -p)" if _PORTS_REPORT.match(line) else ""
            raise McsimError(f"{where}: line {number}: not ibnetdiscover output: {shown!r}{hint}")
    if not nodes:
        raise McsimError(f"{where}: holds no Switch or Ca block; give the output of ibnetdiscover")
    return nodes, ports


def _cables(nodes: dict[str, Node], ports: list[PortLine], where: str) -> tuple[list[PortLine], int]:
    """One port line per cable (the slower end's where the two disagree), and how many disagree."""
    ends = {(p.node, p.port): p for p in ports}
    kept: dict[tuple[tuple[str, int], tuple[str, int]], PortLine] = {}
    disagree = 0
    for p in ports:
        if p.peer not in nodes:
            raise McsimError(
                f"{where}: line {p.line}: port [{p.port}] of {p.node} leads to {p.peer}, which no Switch or Ca "
                "block declares"
            )
    for p in ports:
        other = ends.get((p.peer, p.peer_port))
        if other is not None and (other.peer, other.peer_port) != (p.node, p.port):
            raise McsimError(
                f"{where}: line {p.line}: port [{p.port}] of {p.node} leads to {p.peer}[{p.peer_port}], but line "
                f"{other.line} says that port leads to {other.peer}[{other.peer_port}]"
            )
        here, there = (p.node, p.port), (p.peer, p.peer_port)
        key = (here, there) if here < there else (there, here)
        seen = kept.get(key)
        if seen is None:
            kept[key] = p
        elif seen.link != p.link:
            disagree += 1
            if p.link.data_rate_bps < seen.link.data_rate_bps:
                kept[key] = p
    return list(kept.values()), disagree


def _is_aggregation(node: Node) -> bool:
    return node.kind == CA_BLOCK and AGGREGATION_MARK in node.description.lower()


def _select(nodes: dict[str, Node], cables: list[PortLine]) -> tuple[list[PortLine], dict[str, int]]:
    """The cables mcsim keeps (see the module doc) and the counts of what it left out."""
    skipped = {
        "SHARP aggregation node(s) (not hosts)": sum(_is_aggregation(n) for n in nodes.values()),
        "router(s)": sum(n.kind == ROUTER_BLOCK for n in nodes.values()),
        "loopback cable(s) (two ports of one node)": 0,
        "cable(s) to aggregation nodes or routers": 0,
        "CA port(s) beyond each CA's first connected one (a host has one NIC port)": 0,
    }
    left_out = {g for g, n in nodes.items() if _is_aggregation(n) or n.kind == ROUTER_BLOCK}
    kept: list[PortLine] = []
    for c in cables:
        if c.node == c.peer:
            skipped["loopback cable(s) (two ports of one node)"] += 1
        elif c.node in left_out or c.peer in left_out:
            skipped["cable(s) to aggregation nodes or routers"] += 1
        else:
            kept.append(c)
    first_port: dict[str, int] = {}
    for c in kept:
        for node, port in ((c.node, c.port), (c.peer, c.peer_port)):
            if nodes[node].kind == CA_BLOCK:
                first_port[node] = min(first_port.get(node, port), port)
    out = []
    for c in kept:
        ends = ((c.node, c.port), (c.peer, c.peer_port))
        if any(nodes[n].kind == CA_BLOCK and first_port[n] != p for n, p in ends):
            skipped["CA port(s) beyond each CA's first connected one (a host has one NIC port)"] += 1
        else:
            out.append(c)
    linked = {n for c in out for n in (c.node, c.peer)}
    skipped["CA(s) with no connected port"] = sum(
        n.kind == CA_BLOCK and g not in linked and g not in left_out for g, n in nodes.items()
    )
    skipped["switch(es) with no cable left"] = sum(n.kind == SWITCH_BLOCK and g not in linked for g, n in nodes.items())
    return out, skipped


def _find_switch(nodes: dict[str, Node], switches: Iterable[str], text: str, where: str) -> str:
    """The switch a root names: its id ("S-0002c9..."), its GUID in hex ("0x2c9..."), or its description
    if no other switch has it."""
    switches = list(switches)
    hex_text = text.lower().removeprefix("s-").removeprefix("0x")
    by_guid = [s for s in switches if s == text or s[2:].lower().lstrip("0") == hex_text.lstrip("0")]
    by_name = [s for s in switches if nodes[s].description == text]
    found = by_guid or by_name
    if len(found) != 1:
        why = f"is the description of {len(found)} switches" if found else "names no switch"
        raise McsimError(
            f"{where}: root {text!r} {why}; give a switch's id or GUID (e.g. {switches[0] if switches else 'S-...'})"
        )
    return found[0]


def _hops(g: nx.Graph, sources: Iterable[str]) -> dict[str, int]:
    return dict(nx.multi_source_dijkstra_path_length(g, set(sources), weight=lambda u, v, d: 1))


def _tiers(sw: nx.Graph, leaves: set[str], roots: Sequence[str]) -> tuple[dict[str, int], bool, tuple[str, ...], int]:
    """Each switch's tier, whether the fabric is tree-like, the roots ranked from (if any), and the
    switch-to-switch edges within one tier (see the module doc)."""
    from_leaves = _hops(sw, leaves) if leaves else {}
    far = max(from_leaves.values(), default=0) + 1
    tier = {s: from_leaves.get(s, far) + 1 for s in sw}  # a switch cut off from the hosts: validate() says so
    tree_like = all(abs(tier[u] - tier[v]) == 1 for u, v in sw.edges)
    if tree_like and not roots:
        return tier, True, (), 0
    if not roots:
        reach = {leaf: _hops(sw, [leaf]) for leaf in leaves}
        worst = {s: max((r.get(s, len(sw)) for r in reach.values()), default=0) for s in sw}
        roots = [min(sw, key=lambda s: worst[s])]  # the first in file order on ties, as one root
    rank = _hops(sw, roots)
    top = max(rank.values(), default=0)
    tier = {s: top - rank.get(s, top) + 1 for s in sw}
    same = sum(tier[u] == tier[v] for u, v in sw.edges)
    return tier, tree_like, tuple(roots), same


def _names(nodes: dict[str, Node], order: Sequence[str]) -> dict[str, str]:
    """Each node's name: its description, with its id added when empty or shared by another node."""
    count: dict[str, int] = {}
    for g in order:
        count[nodes[g].description] = count.get(nodes[g].description, 0) + 1
    return {
        g: nodes[g].description
        if nodes[g].description and count[nodes[g].description] == 1
        else f"{nodes[g].description} {g}".strip()
        for g in order
    }


def _bundles(cables: list[PortLine]) -> tuple[dict[tuple[str, str], list[PortLine]], int]:
    """Cables by the pair of nodes they join, and how many pairs mix rates (the slowest is used)."""
    pairs: dict[tuple[str, str], list[PortLine]] = {}
    for c in cables:
        pairs.setdefault((c.node, c.peer) if c.node < c.peer else (c.peer, c.node), []).append(c)
    mixed = sum(len({c.link for c in group}) > 1 for group in pairs.values())
    return pairs, mixed


def _edge(group: list[PortLine], delay_ps: int, where: str) -> dict[str, int]:
    """The edge attributes of parallel cables: their count, at the slowest one's rate and line code."""
    link = min((c.link for c in group), key=lambda link: (link.data_rate_bps, link.rate_bps))
    return edge_attrs(
        where,
        rate_bps=link.rate_bps,
        delay_ps=delay_ps,
        encoding_data_bits=link.encoding_data_bits,
        encoding_line_bits=link.encoding_line_bits,
        parallel=len(group),
    )


def _host_order(nodes: dict[str, Node], cables: list[PortLine], switch_index: dict[str, int]) -> list[str]:
    """The CAs that keep a cable, leaf switch by leaf switch in the switch's port order."""
    key: dict[str, tuple[int, int]] = {}
    for c in cables:
        for ca, other, other_port in ((c.node, c.peer, c.peer_port), (c.peer, c.node, c.port)):
            if nodes[ca].kind == CA_BLOCK:
                leaf = switch_index.get(other)
                key[ca] = (leaf, other_port) if leaf is not None else (len(switch_index), nodes[ca].line)
    return sorted(key, key=key.__getitem__)


def build(
    nodes: dict[str, Node],
    ports: list[PortLine],
    *,
    name: str,
    roots: Sequence[str] = (),
    delay_ps: int = DEFAULT_DELAY_PS,
    where: str = "ibnetdiscover",
) -> Import:
    """The topology graph of parsed ibnetdiscover output (:func:`parse`), validated; see the module doc.

    ``roots`` names switches (id, GUID or unique description) to rank tiers from; ``delay_ps`` is every
    link's propagation delay (ibnetdiscover reports no cable length).
    """
    if isinstance(roots, str | bytes) or not isinstance(roots, Sequence) or not all(isinstance(r, str) for r in roots):
        hint = f"; for one root, roots=[{roots!r}]" if isinstance(roots, str) else ""
        raise McsimError(f"{where}: roots={roots!r} must be a list of switch names (ids, GUIDs or descriptions){hint}")
    cables, disagree = _cables(nodes, ports, where)
    kept, skipped = _select(nodes, cables)
    linked = {n for c in kept for n in (c.node, c.peer)}
    switches = [g for g, n in nodes.items() if n.kind == SWITCH_BLOCK and g in linked]
    chosen = [_find_switch(nodes, switches, text, where) for text in roots]
    sw: nx.Graph[str] = nx.Graph()
    sw.add_nodes_from(switches)
    sw.add_edges_from((c.node, c.peer) for c in kept if c.node in sw and c.peer in sw)
    leaves = {n for c in kept for n, o in ((c.node, c.peer), (c.peer, c.node)) if n in sw and nodes[o].kind == CA_BLOCK}
    tier, tree_like, used, same = _tiers(sw, leaves, chosen)
    switches.sort(key=lambda s: (tier[s], nodes[s].line))
    hosts = _host_order(nodes, kept, {s: i for i, s in enumerate(switches)})
    order = [*hosts, *switches]
    ids = {g: i for i, g in enumerate(order)}
    names = _names(nodes, order)
    pairs, mixed = _bundles(kept)
    g: nx.Graph[int] = nx.Graph(name=name)
    for guid in order:
        is_host = nodes[guid].kind == CA_BLOCK
        g.add_node(
            ids[guid], role=HOST if is_host else SWITCH, tier=0 if is_host else tier[guid], name=names[guid], guid=guid
        )
    for (a, b), group in sorted(pairs.items(), key=lambda item: sorted((ids[item[0][0]], ids[item[0][1]]))):
        g.add_edge(*sorted((ids[a], ids[b])), **_edge(group, delay_ps, where))
    adjusted = {
        "cable(s) whose two ends report different speeds: the slower kept": disagree,
        "node pair(s) whose parallel cables differ in speed: the slowest used for all": mixed,
    }
    speeds = sorted({c.speed for c in kept}, key=lambda s: infiniband_link(s).rate_bps)
    g.graph["description"] = (
        f"ibnetdiscover fabric: {len(hosts)} CAs, {len(switches)} switches, {len(kept)} cables ({', '.join(speeds)})"
    )
    validate(g, where=where)
    return Import(g, skipped, adjusted, tree_like, tuple(names[s] for s in used), same)


def read_ibnetdiscover(path: str | Path, *, roots: Sequence[str] = (), delay_ps: int = DEFAULT_DELAY_PS) -> Import:
    """Import the fabric of an ibnetdiscover output file (see the module doc); the graph is named after
    the file's stem.

    Raises
    ------
    McsimError
        One line naming the file (and the line, where one is at fault): a missing, empty or binary
        file, a line that is not ibnetdiscover's, a cable to a node no block declares, a width or speed
        it does not know, a root that names no switch, or a graph :func:`validate` rejects (e.g. a
        fabric in pieces).
    """
    path = Path(path)
    where = f"ibnetdiscover file {toml_text.shown_path(path)}"
    text = _decode(toml_text.read_bytes(path, where, toml_text.MAX_FABRIC_FILE_BYTES), where)
    nodes, ports = parse(text, where)
    return build(nodes, ports, name=path.stem, roots=roots, delay_ps=delay_ps, where=where)
