# SPDX-License-Identifier: GPL-2.0-only
"""The graph conventions of a topology (see :mod:`mcsim.topology`): roles, host count, validation."""

from __future__ import annotations

import networkx as nx

from mcsim.errors import McsimError, require_integer
from mcsim.topology.physics import EDGE_ATTRS, MAX_DELAY_PS, MAX_RATE_BPS, check_link

HOST = "host"
SWITCH = "switch"
NODE_ATTRS = ("role", "tier", "name")
GPU, HUB, NVSWITCH, NIC = "gpu", "hub", "nvswitch", "nic"  # the parts of a node of several GPUs (mcsim.topology.nodes)


def host_count(g: nx.Graph) -> int:
    """Return H, the number of hosts (= ranks): nodes 0..H-1 of a validated graph."""
    return sum(1 for _, role in g.nodes(data="role") if role == HOST)


def validate(g: nx.Graph, *, where: str = "topology") -> None:
    """Raise McsimError unless ``g`` follows the graph conventions of this module.

    Checks: an undirected simple graph; node ids 0..N-1 with the hosts first (at least one host);
    node attrs role, tier (0 for hosts, >= 1 for switches) and a unique name (a switch may have latency_ps, its own
    forwarding latency: 0..1 s, and aggregation_bps, its in-network reduction's rate); edge attrs all
    positive integers (delay_ps >= 0, encoding_data_bits <= encoding_line_bits); no self-loops;
    every host has exactly one link, with parallel=1 (one NIC port); connected. So the only graph
    without switches is two hosts joined by one link. Every message starts with ``where`` (a file's
    loader names the file).
    """
    if not isinstance(g, nx.Graph) or g.is_directed() or g.is_multigraph():
        raise McsimError(
            f"{where}: graph type {type(g).__name__} must be an undirected networkx.Graph; "
            "give parallel links as the edge attribute 'parallel'"
        )
    n = g.number_of_nodes()
    for node in g.nodes:
        if isinstance(node, bool) or not isinstance(node, int) or not 0 <= node < n:
            raise McsimError(f"{where}: node id {node!r} must be an integer in 0..{n - 1}; number nodes densely")
    names: dict[str, int] = {}
    last_host, first_switch = -1, n
    for node in sorted(g.nodes):
        attrs = g.nodes[node]
        for key in NODE_ATTRS:
            if key not in attrs:
                raise McsimError(f"{where}: node {node} has no {key!r}; every node needs {', '.join(NODE_ATTRS)}")
        role, tier, name = attrs["role"], attrs["tier"], attrs["name"]
        if role not in (HOST, SWITCH):
            raise McsimError(f"{where}: node {node} role={role!r} must be 'host' or 'switch'")
        require_integer(f"{where}: node {node}", tier=tier)
        if (role == HOST) != (tier == 0) or tier < 0:
            raise McsimError(f"{where}: node {node} tier={tier} must be 0 for hosts and >= 1 for switches")
        if not isinstance(name, str) or not name:
            raise McsimError(f"{where}: node {node} name={name!r} must be a non-empty string")
        if name in names:
            raise McsimError(f"{where}: node {node} name={name!r} is already node {names[name]}'s; names are unique")
        names[name] = node
        if "latency_ps" in attrs or "aggregation_bps" in attrs:  # a switch's own (a node's parts)
            check_switch_attrs(f"{where}: node {node}", role, attrs)
        if role == HOST:
            last_host = node
        else:
            first_switch = min(first_switch, node)
    if last_host < 0:
        raise McsimError(f"{where}: graph has no host; hosts are nodes 0..H-1 with role='host'")
    if first_switch < last_host:
        raise McsimError(
            f"{where}: host {last_host} comes after switch {first_switch}; hosts must be nodes 0..H-1, then switches"
        )
    for u, v, attrs in g.edges(data=True):
        link = f"{where}: link {min(u, v)}-{max(u, v)}"
        if u == v:
            raise McsimError(f"{link} is a self-loop; remove it")
        for key in EDGE_ATTRS:
            if key not in attrs:
                raise McsimError(f"{link} has no {key!r}; every link needs {', '.join(EDGE_ATTRS)}")
        check_link(link, {key: attrs[key] for key in EDGE_ATTRS})
    for h in range(last_host + 1):
        if g.degree(h) != 1:
            raise McsimError(f"{where}: host {h} has {g.degree(h)} links; each host needs exactly one NIC link")
        (leaf,) = g[h]
        if g[h][leaf]["parallel"] != 1:
            raise McsimError(f"{where}: host {h} link parallel={g[h][leaf]['parallel']} must be 1 (one NIC port)")
    if any(p is not None for _, p in g.nodes(data="part")):
        check_nodes(g, where, last_host + 1)
    if not nx.is_connected(g):
        parts = sorted((sorted(c) for c in nx.connected_components(g)), key=lambda c: c[0])
        far = parts[1][0]
        raise McsimError(
            f"{where}: graph is disconnected: {len(parts)} components; e.g. node {far} "
            f"({g.nodes[far]['name']}) cannot reach node 0 ({g.nodes[0]['name']})"
        )


def check_switch_attrs(where: str, role: str, attrs: dict[str, object]) -> None:
    """A switch's own ``latency_ps`` (an integer 0..MAX_DELAY_PS, 1 s, as a link's delay) and ``aggregation_bps``
    (its in-network reduction's rate: 1..MAX_RATE_BPS); a host has neither."""
    if role != SWITCH:
        raise McsimError(f"{where}: latency_ps and aggregation_bps are a switch's; a host's are its NIC's")
    for key, lo, hi, unit in (("latency_ps", 0, MAX_DELAY_PS, "1 s"), ("aggregation_bps", 1, MAX_RATE_BPS, "1 Pbit/s")):
        if key in attrs:
            require_integer(where, **{key: attrs[key]})
            if not lo <= int(attrs[key]) <= hi:  # type: ignore[call-overload]
                raise McsimError(f"{where}: {key}={attrs[key]} must be {lo}..{hi} ({unit})")


def _node_index(g: nx.Graph, x: int, where: str) -> int:
    node = g.nodes[x].get("node")
    if isinstance(node, bool) or not isinstance(node, int) or node < 0:
        raise McsimError(f"{where}: {g.nodes[x]['name']} node={node!r} must be the index of its node (an integer >= 0)")
    return node


def _part_of(g: nx.Graph, x: int, part: str, n: int, where: str) -> bool:
    return g.nodes[x].get("part") == part and _node_index(g, x, where) == n


def check_nodes(g: nx.Graph, where: str, hosts: int) -> None:
    """Raise McsimError unless the nodes of several GPUs in ``g`` follow :mod:`mcsim.topology.nodes`: every host a
    GPU whose one link goes to its hub, every hub linked to its node's NVSwitch, nodes of equal size numbered node
    by node, no more GPU NVLinks than the NVSwitch's ports, and with several nodes a NIC on every GPU's hub."""
    gpus: dict[int, list[int]] = {}
    for h in range(hosts):
        if g.nodes[h].get("part") != GPU:
            raise McsimError(
                f"{where}: host {h} part={g.nodes[h].get('part')!r}: in a topology of nodes every host is a GPU"
            )
        gpus.setdefault(_node_index(g, h, where), []).append(h)
    if sorted(gpus) != list(range(len(gpus))) or len({len(v) for v in gpus.values()}) != 1:
        sizes = dict(sorted((n, len(v)) for n, v in gpus.items()))
        raise McsimError(f"{where}: nodes must be numbered 0.. and hold the same number of GPUs; got {sizes}")
    size = len(gpus[0])
    for n, members in gpus.items():
        if members != list(range(n * size, (n + 1) * size)):
            raise McsimError(f"{where}: node {n}'s GPUs must be hosts {n * size}..{(n + 1) * size - 1}, node by node")
        nvswitches, links = set(), 0
        for h in members:
            (hub,) = g[h]
            if not _part_of(g, hub, HUB, n, where):
                raise McsimError(f"{where}: GPU {h}'s link goes to {g.nodes[hub]['name']}, not a hub of its node")
            nvswitches |= {x for x in g[hub] if _part_of(g, x, NVSWITCH, n, where)}
            if len(gpus) > 1 and not any(_part_of(g, x, NIC, n, where) for x in g[hub]):
                raise McsimError(
                    f"{where}: GPU {h} has no path to a NIC: its hub {g.nodes[hub]['name']} has no PCIe link to a NIC "
                    "of its node (the way to the other nodes)"
                )
            nvlinks = g.nodes[h].get("nvlinks", 1)
            require_integer(f"{where}: GPU {h}", nvlinks=nvlinks)
            links += nvlinks
        if len(nvswitches) != 1:
            raise McsimError(f"{where}: node {n}'s GPUs' hubs must all link to one NVSwitch of node {n}")
        attrs = g.nodes[nvswitches.pop()]
        ports = attrs.get("nvlink_ports", links)
        require_integer(f"{where}: {attrs['name']}", nvlink_ports=ports)
        if links > ports:
            raise McsimError(
                f"{where}: node {n}'s {size} GPUs have {links} NVLinks, "
                f"more than {attrs['name']}'s {ports} NVLink ports"
            )
