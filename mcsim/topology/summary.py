# SPDX-License-Identifier: GPL-2.0-only
"""A topology's size, link rates, bisection bandwidth, diameter and oversubscription."""

from __future__ import annotations

from typing import Any

import networkx as nx

from mcsim.topology.nodes import nodes_of, spine_groups_of
from mcsim.topology.physics import Link
from mcsim.topology.rail_fabric import PER_RAIL, SHARED
from mcsim.topology.rules import host_count, validate
from mcsim.units import format_rate


def _tier_label(tier: int) -> str:
    return "host" if tier == 0 else f"tier{tier}"


def _bisection_bps(g: nx.Graph, hosts: int) -> int:
    if hosts < 2:
        return 0
    flow: nx.DiGraph[int | str] = nx.DiGraph()  # the hosts and switches, and "source", "sink"
    for u, v, attrs in g.edges(data=True):
        cap = Link.from_edge(attrs).data_rate_bps * attrs["parallel"]
        flow.add_edge(u, v, capacity=cap)
        flow.add_edge(v, u, capacity=cap)
    source, sink = "source", "sink"  # no capacity attribute: unbounded
    for h in range(hosts // 2):
        flow.add_edge(source, h)
    for h in range(hosts // 2, hosts):
        flow.add_edge(h, sink)
    return int(nx.maximum_flow_value(flow, source, sink))


def diameter_hops(g: nx.Graph) -> int:
    """Return the largest host-to-host hop count of a validated graph (0 with one host).

    A host's one link goes to its attachment node x (a switch, or the other host when two hosts
    share one link), so its distance to any other host b is 1 + dist(x, b): one BFS per attachment
    node.
    """
    hosts = host_count(g)
    attached: dict[int, list[int]] = {}
    for h in range(hosts):
        (x,) = g[h]
        attached.setdefault(x, []).append(h)
    best = 0
    for x, mine in attached.items():
        dist = nx.single_source_shortest_path_length(g, x)
        others = (b for b in range(hosts) if len(mine) > 1 or b != mine[0])
        best = max(best, max((dist[b] + 1 for b in others), default=0))
    return best


def summary(g: nx.Graph) -> dict[str, Any]:
    """Return the size, link rates, bisection bandwidth, diameter and oversubscription of ``g``.

    Returns
    -------
    dict
        ``nodes`` (:class:`mcsim.topology.nodes.Nodes`, only on a topology of nodes of several GPUs); ``name``;
        ``hosts``; ``switches``; ``switches_per_tier`` ({"tier1": 12, "tier2": 6});
        ``links`` (parallel links counted one by one); ``tiers``: one entry per pair of tiers that
        links join, keyed "host-tier1", "tier1-tier2", ..., each ``{"links": n, "rates_bps": [...],
        "data_rates_bps": [...]}`` (the distinct signalling and data rates, ascending);
        ``max_switch_ports`` (largest number of links on one switch); ``bisection_bps`` (max-flow
        from hosts 0..H/2-1 to hosts H/2..H-1, link capacity = data rate * parallel); ``diameter``
        (largest host-to-host hop count); ``oversubscription``: per switch tier that has links both
        down and up, the largest (data rate down) / (data rate up) over its switches, as a float.
    """
    validate(g)
    hosts = host_count(g)
    tier = dict(g.nodes(data="tier"))
    per_tier: dict[str, int] = {}
    for node in range(hosts, g.number_of_nodes()):
        per_tier[_tier_label(tier[node])] = per_tier.get(_tier_label(tier[node]), 0) + 1
    groups: dict[tuple[int, int], dict[str, Any]] = {}
    down: dict[int, int] = {}
    up: dict[int, int] = {}
    ports: dict[int, int] = {}
    for u, v, attrs in g.edges(data=True):
        lo, hi = sorted((u, v), key=lambda n: (tier[n], n))
        group = groups.setdefault((tier[lo], tier[hi]), {"links": 0, "rates_bps": set(), "data_rates_bps": set()})
        group["links"] += attrs["parallel"]
        group["rates_bps"].add(attrs["rate_bps"])
        data_rate_bps = Link.from_edge(attrs).data_rate_bps
        group["data_rates_bps"].add(data_rate_bps)
        cap = data_rate_bps * attrs["parallel"]
        if tier[lo] < tier[hi]:
            down[hi] = down.get(hi, 0) + cap
            up[lo] = up.get(lo, 0) + cap
        for node in (u, v):
            ports[node] = ports.get(node, 0) + attrs["parallel"]
    oversub: dict[str, float] = {}
    for node in range(hosts, g.number_of_nodes()):
        if down.get(node) and up.get(node) and "part" not in g.nodes[node]:  # a node's NVSwitch, NIC: not a tier
            label = _tier_label(tier[node])
            oversub[label] = max(oversub.get(label, 0.0), down[node] / up[node])
    tiers = {
        f"{_tier_label(a)}-{_tier_label(b)}": {
            "links": grp["links"],
            "rates_bps": sorted(grp["rates_bps"]),
            "data_rates_bps": sorted(grp["data_rates_bps"]),
        }
        for (a, b), grp in sorted(groups.items())
    }
    nodes = nodes_of(g)
    return {
        **({"nodes": nodes} if nodes is not None else {}),
        "name": g.graph.get("name", ""),
        "hosts": hosts,
        "switches": g.number_of_nodes() - hosts,
        "switches_per_tier": dict(sorted(per_tier.items())),
        "links": sum(grp["links"] for grp in tiers.values()),
        "tiers": tiers,
        "max_switch_ports": max((ports[n] for n in range(hosts, g.number_of_nodes())), default=0),
        "bisection_bps": _bisection_bps(g, hosts),
        "diameter": diameter_hops(g),
        "oversubscription": dict(sorted(oversub.items())),
    }


def _tier_kinds(g: nx.Graph, hosts: int) -> dict[str, str]:
    """Tier label -> the switches' name stems ("tier1" -> "leaf (tier1)"; a tier of several parts of nodes:
    "tier2 (16 nvswitch, 128 nic)"; other tiers of several stems: none)."""
    stems: dict[str, dict[str, int]] = {}
    parts: dict[str, bool] = {}  # tier label -> every switch of it is a part of a node
    for node in range(hosts, g.number_of_nodes()):
        label = _tier_label(g.nodes[node]["tier"])
        parts[label] = parts.get(label, True) and "part" in g.nodes[node]
        stem = g.nodes[node]["name"].rsplit(".", 1)[-1].rstrip("0123456789")  # "n3.nic5" -> "nic"
        counts = stems.setdefault(_tier_label(g.nodes[node]["tier"]), {})
        counts[stem] = counts.get(stem, 0) + 1
    return {
        label: f"{next(iter(names))} ({label})"
        if len(names) == 1
        else f"{label} ({', '.join(f'{n} {stem}' for stem, n in names.items())})"
        for label, names in stems.items()
        if len(names) == 1 or parts[label]
    }


def format_summary(g: nx.Graph) -> str:
    """Return :func:`summary` as readable lines with units (for ``mcsim topo show``)."""
    s = summary(g)
    title = s["name"] + (f" ({g.graph['builder']})" if "builder" in g.graph else "")
    lines = [f"topology {title}"]
    if "description" in g.graph:
        lines.append(f"  {g.graph['description']}")
    kinds = _tier_kinds(g, s["hosts"])
    per_tier = ", ".join(f"{n} {kinds.get(label, label)}" for label, n in s["switches_per_tier"].items())
    if "nodes" in s:
        lines += _node_lines(s["nodes"], g)
    lines += [
        f"  hosts             {s['hosts']}",
        f"  switches          {s['switches']} ({per_tier}), up to {s['max_switch_ports']} ports each",
        f"  links             {s['links']}",
    ]
    for label, grp in s["tiers"].items():
        rates = ", ".join(format_rate(r) for r in grp["rates_bps"])
        data = ", ".join(format_rate(r) for r in grp["data_rates_bps"])
        lines.append(f"    {label:<14}  {grp['links']} links at {rates} ({data} data)")
    half = s["hosts"] // 2
    lines.append(
        f"  bisection         {format_rate(s['bisection_bps'])} (hosts 0..{half - 1} to {half}..{s['hosts'] - 1})"
        if half
        else "  bisection         0bps (one host)"
    )
    lines.append(f"  diameter          {s['diameter']} hops host to host")
    if s["oversubscription"]:
        over = ", ".join(f"{label} {ratio:.3g}:1" for label, ratio in s["oversubscription"].items())
        lines.append(f"  oversubscription  {over} (max down/up data rate per switch)")
    return "\n".join(lines)


def _node_lines(nodes: Any, g: nx.Graph) -> list[str]:
    """The nodes of several GPUs: their count and size, the GPU's NVLink, the rails and a NIC's way out."""
    gpu = g.graph.get("params", {}).get("gpu")
    lines = [
        f"  nodes             {nodes.count} x {nodes.gpus} GPUs{f' ({gpu})' if gpu else ''} = "
        f"{nodes.count * nodes.gpus} GPUs (hosts), NVLink {format_rate(nodes.nvlink_bps)} data a GPU and direction",
    ]
    if nodes.rails:
        lines.append(
            f"  rails             {nodes.rails} (NIC r of every node on rail r), {format_rate(nodes.network_bps)} "
            f"data a NIC (the narrower of its PCIe link and its wire{'s' if nodes.planes > 1 else ''})"
        )
        lines.append(
            f"  planes            {nodes.planes}"
            + (
                f" (each NIC's port split into {nodes.planes}, a plane's own leaves and spines at 1/{nodes.planes} "
                "of the rate)"
                if nodes.planes > 1
                else " (a port a NIC)"
            )
        )
        groups = spine_groups_of(g)
        each = " (in each plane)" if nodes.planes > 1 and groups is not None else ""
        lines.append(f"  spines            {_SPINES[groups]}{each}")
    return lines


_SPINES = {
    None: "none (one leaf a rail: across rails through a node's NVSwitch)",
    SHARED: "shared by the rails",
    PER_RAIL: "per rail (rail-only: across rails and nodes through a node's NVSwitch, PXN)",
}
