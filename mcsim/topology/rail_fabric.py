# SPDX-License-Identifier: GPL-2.0-only
"""The network of a rail-optimised fabric (:func:`mcsim.topology.nodes.rail_optimised`): rail leaves, spines
shared by the rails or each rail's own, and planes.

- **Rails**: NIC r of every node is on rail r's leaves (a leaf serves ``nodes_per_leaf`` nodes).
- **Spines**, ``spine_groups``: "shared" (every spine joins every rail's leaves: a rail-optimised fat tree, as
  NVIDIA's DGX SuperPOD) or "per_rail" (rail r's leaves join only rail r's own spines: a rail-only network, as
  Wang et al., "Rail-only: A Low-Cost High-Performance Network for Training LLMs with Trillion Parameters", 2023,
  and DeepSeek's multi-plane fat tree, where each GPU-NIC pair is on its own plane: Zhao et al., "Insights into
  DeepSeek-V3: Scaling Challenges and Reflections on Hardware for AI Architectures", ISCA 2025). In a per-rail
  fabric (Rail-only has no spines at all: ``spines=0``, one leaf a rail, which "shared" builds too) traffic
  between GPUs of different rails on different nodes has no way through the spines: its shortest
  paths cross a node's NVSwitch (the source's, onto the destination's rail, or the destination's; NCCL's PXN).
- **Planes**, ``planes``: each NIC's one port becomes ``planes`` ports of rate/planes each, and plane p has its own
  leaves and spines (every network link of a plane at rate/planes), so the planes meet only in the NICs; a NIC's
  total rate is unchanged. As Alibaba HPN (Qian et al., "Alibaba HPN: A Data Center Network for Large Language
  Model Training", SIGCOMM 2024: each NIC's 2 x 200G ports on two ToRs of two isolated planes, rail-optimised) and
  NVIDIA's planarized fabrics (ConnectX-8 SuperNIC firmware release notes 40.44.0208: 800 Gb/s XDR reached over a
  "planarized topology network", or 2 x 400GbE; the Network Operator's Spectrum-X profiles: "multiplane" with
  --number-of-planes and resources per rail and plane, docs.nvidia.com/networking). A NIC is a switch of the
  graph, so it picks a plane per flow by ECMP (the switches' hash of source, destination and flow: every packet of
  a flow on one plane; no plane load balancing per packet).

The spines (``spines``, the total) are split evenly into ``planes`` x (1 shared, or rails per rail) groups. Names:
"rail5.leaf0", "spine0"; per rail "rail5.spine0"; with several planes "plane1." before them. Node attrs: ``rail``
on a leaf and on a per-rail spine, ``plane`` on a leaf and a spine when there are several planes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from mcsim.errors import McsimError, pick, require_integer

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

    def leaf_attrs(self, plane: int, rail: int, i: int) -> dict[str, int | str]:
        """Leaf i of a rail and plane: its tier, name, rail (and plane, with several)."""
        return self._attrs(LEAF_TIER, plane, f"rail{rail}.leaf{i}", rail)

    def spine_attrs(self, plane: int, group: int, s: int) -> dict[str, int | str]:
        """Spine s of a group and plane: its tier, name (and rail per rail, plane with several)."""
        if self.groups == 1:
            return self._attrs(SPINE_TIER, plane, f"spine{s}", None)
        return self._attrs(SPINE_TIER, plane, f"rail{group}.spine{s}", group)

    def _attrs(self, tier: int, plane: int, name: str, rail: int | None) -> dict[str, int | str]:
        attrs: dict[str, int | str] = {"tier": tier, "name": f"plane{plane}.{name}" if self.planes > 1 else name}
        if rail is not None:
            attrs["rail"] = rail
        if self.planes > 1:
            attrs["plane"] = plane
        return attrs


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
    if planes > ports:  # a NIC is a switch of the graph: its network ports fit in switch_ports as every switch's do
        raise McsimError(f"rail_optimised: planes={planes} network ports on each NIC, more than switch_ports={ports}")
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
