# SPDX-License-Identifier: GPL-2.0-only
"""The network of a rail-optimised fabric (:func:`mcsim.topology.nodes.rail_optimised`): rail leaves, spines
shared by the rails or each rail's own, and planes.

- **Rails**: NIC r of every node is on rail r's leaves (a leaf serves ``nodes_per_leaf`` nodes).
- **Spines**, ``spine_groups``: "shared" (every spine joins every rail's leaves: a rail-optimised fat tree, as
  NVIDIA's DGX SuperPOD) or "per_rail" (rail r's leaves join only rail r's own spines: a rail-only network, as
  Wang et al., "Rail-only: A Low-Cost High-Performance Network for Training LLMs with Trillion Parameters", 2023,
  and DeepSeek's multi-plane fat tree, where each GPU-NIC pair is on its own plane: Zhao et al., "Insights into
  DeepSeek-V3: Scaling Challenges and Reflections on Hardware for AI Architectures", ISCA 2025). In a per-rail
  fabric traffic between GPUs of different rails on different nodes has no way through the spines: its shortest
  paths cross a node's NVSwitch (the source's, onto the destination's rail, or the destination's; NCCL's PXN).
- **Planes**, ``planes``: each NIC's one port becomes ``planes`` ports of rate/planes each, and plane p has its own
  leaves and spines (every network link of a plane at rate/planes), so the planes meet only in the NICs; a NIC's
  total rate is unchanged. As Alibaba HPN (Qian et al., "Alibaba HPN: A Data Center Network for Large Language
  Model Training", SIGCOMM 2024: each NIC's 2 x 200G ports on two ToRs of two isolated planes, rail-optimised) and
  NVIDIA's planarized fabrics (ConnectX-8 SuperNIC: 800G as planes of 2 x 400G, firmware release notes 40.44;
  Spectrum-X "multiplane" with per-rail, per-plane resources, NVIDIA Network Operator). A NIC is a switch of the
  graph, so it picks a plane per flow by ECMP (the switches' hash of source, destination and flow: every packet of
  a flow on one plane; no plane load balancing per packet).

The spines (``spines``, the total) are split evenly into ``planes`` x (1 shared, or rails per rail) groups. Names:
"rail5.leaf0", "spine0"; per rail "rail5.spine0"; with several planes "plane1." before them. Node attrs: ``rail``
on a leaf and on a per-rail spine, ``plane`` on a leaf and a spine when there are several planes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import networkx as nx

from mcsim.errors import McsimError, pick, require_integer
from mcsim.topology.physics import Link
from mcsim.topology.rules import NIC, SWITCH

LEAF_TIER, SPINE_TIER = 3, 4  # a rail-optimised fabric's leaves and spines (a node's parts are below them)
SHARED, PER_RAIL = "shared", "per_rail"
SPINE_GROUPS = {SHARED: "the rails share every spine", PER_RAIL: "rail r's leaves join only rail r's own spines"}


@dataclass(frozen=True, slots=True)
class RailFabric:
    """The counts of a rail-optimised network: ``leaves`` per rail and plane (each serving ``per_leaf`` nodes),
    ``spines`` per group, ``groups`` spine groups per plane (1 shared, rails per rail) and ``links`` parallel links
    from a leaf to each spine of its group."""

    rails: int
    planes: int
    leaves: int
    per_leaf: int
    spines: int
    groups: int
    links: int

    @property
    def leaf_count(self) -> int:
        return self.planes * self.rails * self.leaves

    @property
    def spine_count(self) -> int:
        return self.planes * self.groups * self.spines

    def leaf(self, plane: int, rail: int, i: int) -> int:
        """The index of leaf i of a rail and plane among the leaves."""
        return (plane * self.rails + rail) * self.leaves + i

    def group_of(self, rail: int) -> int:
        """The spine group of a rail's leaves (in every plane)."""
        return rail if self.groups > 1 else 0

    def spine(self, plane: int, group: int, s: int) -> int:
        """The index of spine s of a group and plane among the spines."""
        return (plane * self.groups + group) * self.spines + s


def plan(
    nodes: int,
    rails: int,
    nodes_per_leaf: int | None,
    spines: int,
    links: int,
    ports: int,
    spine_groups: str,
    planes: int,
) -> RailFabric:
    """The rail network's counts, checked against the switches' ports (each message one line)."""
    require_integer("rail_optimised", spines=spines, links_per_leaf_spine=links, switch_ports=ports, planes=planes)
    if spines < 0 or links < 1 or ports < 1:
        raise McsimError(
            f"rail_optimised: spines={spines} must be >= 0, links_per_leaf_spine={links} and switch_ports={ports} >= 1"
        )
    if planes < 1:
        raise McsimError(f"rail_optimised: planes={planes} must be >= 1 (a NIC's ports, each on its own plane)")
    pick("spine_groups", spine_groups, SPINE_GROUPS)
    per_leaf = nodes if nodes_per_leaf is None else nodes_per_leaf
    require_integer("rail_optimised", nodes_per_leaf=per_leaf)
    if per_leaf < 1:
        raise McsimError(f"rail_optimised: nodes_per_leaf={per_leaf} must be >= 1")
    leaves = -(-nodes // per_leaf)
    if leaves > 1 and spines == 0:
        raise McsimError(
            f"rail_optimised: {leaves} leaves a rail need spines to join them; "
            f"give spines >= 1 or nodes_per_leaf={nodes}"
        )
    groups = rails if spine_groups == PER_RAIL else 1
    if spines % (planes * groups):
        each = f"each of the {planes} planes" if groups == 1 else f"each of the {rails} rails"
        if groups > 1 and planes > 1:
            each += f" in each of the {planes} planes"
        raise McsimError(
            f"rail_optimised: spines={spines} must be a multiple of {planes * groups}: {each} has its own spines, "
            f"as many each (spine_groups={spine_groups!r}, planes={planes})"
        )
    fabric = RailFabric(rails, planes, leaves, -(-nodes // leaves), spines // (planes * groups), groups, links)
    _check_ports(fabric, min(per_leaf, nodes), ports)
    return fabric


def _check_ports(f: RailFabric, per_leaf: int, ports: int) -> None:
    """A leaf's NIC ports (``per_leaf``: the nodes it may serve) and uplinks, and a spine's leaves, fit in
    ``ports``."""
    if per_leaf + f.spines * f.links > ports:
        raise McsimError(
            f"rail_optimised: a leaf needs {per_leaf} NIC ports + {f.spines} spines x {f.links} links = "
            f"{per_leaf + f.spines * f.links} ports, more than switch_ports={ports}"
        )
    joined = f.leaves * (f.rails if f.groups == 1 else 1)  # the leaves of one plane a spine joins
    if joined * f.links > ports and f.spines:
        raise McsimError(
            f"rail_optimised: a spine needs {joined} leaves x {f.links} links = {joined * f.links} ports, "
            f"more than switch_ports={ports}"
        )


def plane_wire(wire: Mapping[str, int], planes: int) -> dict[str, int]:
    """A plane's network link: the fabric's ``wire`` at rate/planes (which must divide it exactly)."""
    if wire["rate_bps"] % planes:
        raise McsimError(
            f"rail_optimised: planes={planes} must divide rate={wire['rate_bps']} bit/s exactly "
            "(a NIC's port splits into planes ports of rate/planes each)"
        )
    return {**wire, "rate_bps": wire["rate_bps"] // planes}


def _name(f: RailFabric, plane: int, rest: str) -> str:
    return f"plane{plane}.{rest}" if f.planes > 1 else rest


def add_switches(g: nx.Graph, f: RailFabric, first_leaf: int) -> None:
    """Add the leaves (from ``first_leaf``) and after them the spines."""
    for p in range(f.planes):
        for r in range(f.rails):
            for i in range(f.leaves):
                leaf = first_leaf + f.leaf(p, r, i)
                g.add_node(leaf, role=SWITCH, tier=LEAF_TIER, name=_name(f, p, f"rail{r}.leaf{i}"), rail=r)
                if f.planes > 1:
                    g.nodes[leaf]["plane"] = p
    first_spine = first_leaf + f.leaf_count
    for p in range(f.planes):
        for k in range(f.groups):
            for s in range(f.spines):
                spine = first_spine + f.spine(p, k, s)
                name = f"rail{k}.spine{s}" if f.groups > 1 else f"spine{s}"
                g.add_node(spine, role=SWITCH, tier=SPINE_TIER, name=_name(f, p, name))
                if f.groups > 1:
                    g.nodes[spine]["rail"] = k
                if f.planes > 1:
                    g.nodes[spine]["plane"] = p


def add_links(g: nx.Graph, f: RailFabric, first_leaf: int, nics: Mapping[tuple[int, int], int], wire: dict) -> None:
    """Link NIC ``nics[node, rail]`` to its rail's leaf in every plane, and every leaf to its group's spines."""
    for (n, r), nic in nics.items():
        for p in range(f.planes):
            g.add_edge(nic, first_leaf + f.leaf(p, r, n // f.per_leaf), **wire)
    first_spine = first_leaf + f.leaf_count
    for p in range(f.planes):
        for r in range(f.rails):
            for i in range(f.leaves):
                for s in range(f.spines):
                    spine = first_spine + f.spine(p, f.group_of(r), s)
                    g.add_edge(first_leaf + f.leaf(p, r, i), spine, **{**wire, "parallel": f.links})


def planes_of(g: nx.Graph[Any], nic: int) -> tuple[int, int]:
    """A NIC's network ports (its planes) and their summed data rate in bit/s."""
    wires = [g.edges[nic, x] for x in g[nic] if g.nodes[x].get("node") is None]
    return sum(e["parallel"] for e in wires), sum(Link.from_edge(e).data_rate_bps * e["parallel"] for e in wires)


def spine_groups_of(g: nx.Graph[Any]) -> str | None:
    """Return "per_rail" if some spine joins the leaves of fewer rails than there are, "shared" if every spine joins
    every rail's, None without spines (the spines: switches outside the nodes that no NIC links to; the rails: the
    leaves' ``rail``)."""
    nics = (x for x, part in g.nodes(data="part") if part == NIC)
    leaves = {y for x in nics for y in g[x] if g.nodes[y].get("node") is None}
    spines = [x for x, d in g.nodes(data=True) if d["role"] == SWITCH and d.get("node") is None and x not in leaves]
    if not spines:
        return None
    rails = {g.nodes[x].get("rail") for x in leaves}
    own = any({g.nodes[x].get("rail") for x in g[s] if x in leaves} != rails for s in spines)
    return PER_RAIL if own else SHARED
