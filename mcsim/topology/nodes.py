# SPDX-License-Identifier: GPL-2.0-only
"""Nodes of several GPUs: NVLink into an NVSwitch, a PCIe link to each NIC, rail-optimised fabrics.

A node is fabric parts like any other (so counters, traces, faults and routes work unchanged):

- each GPU is a host (a rank, tier 0); its one link goes to its hub (tier 1), where its two ways part: its
  NVLink bundle to the node's NVSwitch and its PCIe x16 link to its NIC;
- the node's NVSwitch chips are one switch (tier 2): every GPU has links to every chip, so the chips act as
  one non-blocking crossbar (NCCL's topology model treats them so too); its NVLink ports are the chips' sum;
- each NIC is a switch (tier 2) between its GPUs' PCIe links and its network port on its rail's leaf
  (tier 3); the spines (tier 4) join the rails, or each rail's own leaves (``spine_groups="per_rail"``); with
  ``planes`` a NIC has a port on each plane's leaf (:mod:`mcsim.topology.rail_fabric`).

The GPU's RDMA engine (its QPs, its completion processing) is the host's NIC model, so both of its ways carry
the same packets (the NIC's MTU and headers). Routes take the shortest paths: inside a node through the
NVSwitch; to GPU l of another node on rail l (GPU l's own NIC at both ends); to another GPU of another node
over any of the equally short ways (the own rail and a spine, the NVSwitch and the destination's rail, or the
own rail and the destination node's NVSwitch), spread by ECMP; with per-rail spines and several leaves a rail only
the ways through a node's NVSwitch are left (NCCL's PXN). The hub and the NIC forward in 0 (their
``latency_ps``: the hub is no device, the NIC's latency is the NIC model's), the NVSwitch with the fabric's switch
latency (an assumption: no NVSwitch figure is published). A simplification, stated: a GPU's NVLink and network
traffic share its one link into its hub (NVLink at 450 GB/s is 9x a 400G NIC).

Graph conventions beyond :mod:`mcsim.topology`'s: node attr ``part`` ("gpu", "hub", "nvswitch", "nic") and
``node`` (the node's index) on every part of a node; ``gpu`` (its index in the node) on a GPU and its hub;
``nvlinks`` (its NVLink count) on a GPU; ``latency_ps`` (0) on a hub and a NIC; ``nvlink_ports`` and
``aggregation_bps`` (NVLS: the rate it sums at, GPUs x Gpu.nvls_gbps, where calibrated) on an NVSwitch;
``rail`` on a NIC, on a rail's leaves and on a per-rail spine; ``plane`` on a leaf and a spine of several planes.
A link between two parts of one node is inside the node (NVLink, PCIe, a GPU's link to its hub): a topology-wide
``rate`` leaves it alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import networkx as nx

from mcsim.errors import McsimError, pick, require_integer
from mcsim.topology import rail_fabric
from mcsim.topology.physics import Link, edge_attrs
from mcsim.topology.rules import GPU, HOST, HUB, NIC, NVSWITCH, SWITCH
from mcsim.util import machine

GB = 8 * 10**9  # bit/s in one GB/s


@dataclass(frozen=True, slots=True)
class Gpu:
    """One GPU generation's NVLink: ``links`` per GPU, each ``raw_gbps`` GB/s per direction (the data sheet)
    and ``usable_gbps`` GB/s of it (NCCL's model, src/graph/topo.h); its node's NVSwitch ``chips`` and
    NVLink ``ports`` per chip."""

    links: int
    raw_gbps: float
    usable_gbps: float
    chips: int
    ports: int
    source: str
    nvls_gbps: float | None = None  # NVLS: what the NVSwitch sums per GPU, GB/s (None: at its ports' rate)

    def link(self, delay_ps: int) -> dict[str, int]:
        """The GPU's NVLink bundle as one edge: the raw rate, with NCCL's usable share as its line code (so its
        data rate is NCCL's usable bandwidth: the flit and packet overhead of NVLink as NCCL measures it)."""
        data, line = _ratio(self.usable_gbps, self.raw_gbps)
        return edge_attrs(
            "nvlink",
            rate_bps=round(self.links * self.raw_gbps * GB),
            delay_ps=delay_ps,
            encoding_data_bits=data,
            encoding_line_bits=line,
        )


# NVLink per GPU generation. links x raw: the NVIDIA data sheets (A100 12 x 25 = 300 GB/s, H100 18 x 25 = 450,
# B200 18 x 50 = 900 GB/s per direction); usable per link: NCCL's src/graph/topo.h (SM80 20, SM90 20.6, SM100
# 40.1 GB/s); NVSwitch chips per 8-GPU board and NVLink ports per chip: DGX A100 6 x 36 (NVSwitch gen 2),
# DGX H100 4 x 64 (gen 3), DGX B200 2 x 72 (gen 4); GB200 NVL72: 18 chips of 72 ports for 72 GPUs.
# NVLS on an H100 board (NVSwitch gen 3): the NVSwitch sums 275 GB/s of contributions per GPU, CALIBRATED on the
# published NVLS Allreduce of 8 H100s (~480 GB/s busbw, algbw ~275: nccl-tests #212, NCCL #1455; the claim
# h100-nvls-ar, an input). Per GPU, because the published algbw stays near 250-275 GB/s from 4 to 8 GPUs (NCCL
# #1455). Other generations: not calibrated (their NVSwitch sums at its ports' rate).
NVLS_H100_GBPS = 275.0
GPUS: dict[str, Gpu] = {
    "a100": Gpu(12, 25.0, 20.0, 6, 36, "DGX A100; NCCL topo.h SM80"),
    "h100": Gpu(18, 25.0, 20.6, 4, 64, "DGX H100; NCCL topo.h SM90", NVLS_H100_GBPS),
    "h200": Gpu(18, 25.0, 20.6, 4, 64, "DGX H200 (H100's NVLink); NCCL topo.h SM90", NVLS_H100_GBPS),
    "b200": Gpu(18, 50.0, 40.1, 2, 72, "DGX B200; NCCL topo.h SM100"),
    "gb200": Gpu(18, 50.0, 40.1, 18, 72, "GB200 NVL72 (72 GPUs); NCCL topo.h SM100"),
}
# PCIe x16 per generation: GT/s a lane and the line code (Gen4/5: 128b/130b; Gen6: FLIT mode, 236 of every
# 256 bytes carry TLPs: PCI-SIG base specifications 4.0, 5.0, 6.0). TLP headers are not modelled.
PCIE: dict[str, tuple[int, int, int]] = {  # name -> (bit/s a lane, data bits, line bits)
    "gen4": (16 * 10**9, 128, 130),
    "gen5": (32 * 10**9, 128, 130),
    "gen6": (64 * 10**9, 236, 256),
}
PCIE_LANES = 16  # a GPU's and a NIC's PCIe width (DGX H100: x16 Gen5 to each ConnectX-7)
NODE_DELAY_PS = 5_000  # NVLink and PCIe propagation: about 1 m of board and cable at 5 ns/m (an assumption)
# Tiers of a node's parts (a rail-optimised fabric's leaves and spines: rail_fabric.LEAF_TIER, SPINE_TIER above them).
GPU_TIER, HUB_TIER, NVSWITCH_TIER, NIC_TIER = 0, 1, 2, 2


def _ratio(num: float, den: float) -> tuple[int, int]:
    """num/den as two integers, exact to 1/1000 (20.6/25 -> 103/125)."""
    from math import gcd

    a, b = round(num * 1000), round(den * 1000)
    k = gcd(a, b)
    return a // k, b // k


def pcie_link(gen: str, delay_ps: int) -> dict[str, int]:
    """The x16 PCIe link of generation ``gen`` ("gen4", "gen5", "gen6") as edge attributes."""
    lane, data, line = pick("pcie generation", gen, PCIE)
    return edge_attrs(
        "pcie", rate_bps=lane * PCIE_LANES, delay_ps=delay_ps, encoding_data_bits=data, encoding_line_bits=line
    )


def _gpu(name: str, nvlink_rate_bps: int | None) -> tuple[Gpu, dict[str, int]]:
    gpu = pick("gpu", name, GPUS)
    link = gpu.link(NODE_DELAY_PS)
    if nvlink_rate_bps is not None:  # the user's NVLink rate per GPU and direction, no line code
        require_integer("nodes", nvlink_rate_bps=nvlink_rate_bps)
        if nvlink_rate_bps <= 0:
            raise McsimError(f"nodes: nvlink_rate={nvlink_rate_bps} bit/s must be > 0 (a GPU's NVLink per direction)")
        link = edge_attrs("nvlink", rate_bps=nvlink_rate_bps, delay_ps=NODE_DELAY_PS)
    return gpu, link


def _check_counts(
    nodes: int, gpus_per_node: int, gpus_per_nic: int, gpu: Gpu, nvswitches: int | None, gpus_key: str = "gpus_per_node"
) -> int:
    """The node's NVSwitch ports, after checking the counts (``gpus_key``: the caller's name of gpus_per_node)."""
    require_integer("nodes", nodes=nodes, gpus_per_nic=gpus_per_nic, **{gpus_key: gpus_per_node})
    for key, value in (("nodes", nodes), (gpus_key, gpus_per_node), ("gpus_per_nic", gpus_per_nic)):
        if value < 1:
            raise McsimError(f"nodes: {key}={value} must be >= 1")
    if gpus_per_node % gpus_per_nic:
        raise McsimError(
            f"nodes: gpus_per_nic={gpus_per_nic} must divide gpus_per_node={gpus_per_node} "
            "(a NIC's GPUs are in its node)"
        )
    chips = gpu.chips if nvswitches is None else nvswitches
    require_integer("nodes", nvswitches=chips)
    if chips < 1:
        raise McsimError(f"nodes: nvswitches={chips} must be >= 1 (a node's GPUs meet in its NVSwitch chips)")
    ports = chips * gpu.ports
    if gpus_per_node * gpu.links > ports:
        raise McsimError(
            f"nodes: {gpus_per_node} GPUs x {gpu.links} NVLinks = {gpus_per_node * gpu.links} NVLink ports, more than "
            f"{chips} NVSwitch chips x {gpu.ports} ports = {ports}; use at most {ports // gpu.links} GPUs a node or "
            "more chips"
        )
    return ports


def _require_fits(where: str, hosts: int, switches: int, links: int) -> None:
    """The fabric's planning memory fits the machine (mcsim.util.machine), or one McsimError line: checked from the
    counts, before a graph is built."""
    machine.require_fits(
        f"{where}: {hosts} GPUs, {switches} switches (a route from every switch to every host)",
        machine.fabric_memory_b(hosts, switches, links),
    )


def add_node(
    g: nx.Graph[int],
    n: int,
    first_gpu: int,
    first_switch: int,
    gpus: int,
    gpu: Gpu,
    nvlink: Mapping[str, int],
    ports: int,
) -> int:
    """Add node ``n``: GPUs first_gpu.. (hosts), their hubs (switches first_switch..) and the NVSwitch after them,
    joined by NVLink; return the next free switch id. A GPU's link to its hub is its NVLink without delay."""
    nvswitch = first_switch + gpus
    g.add_node(nvswitch, role=SWITCH, tier=NVSWITCH_TIER, name=f"n{n}.nvswitch", part=NVSWITCH, node=n)
    g.nodes[nvswitch]["nvlink_ports"] = ports
    if gpu.nvls_gbps is not None:  # its in-network reduction's rate (NVLS): per GPU
        g.nodes[nvswitch]["aggregation_bps"] = round(gpus * gpu.nvls_gbps * GB)
    for local in range(gpus):
        host, hub = first_gpu + local, first_switch + local
        g.add_node(host, role=HOST, tier=GPU_TIER, name=f"n{n}.gpu{local}", part=GPU, node=n, gpu=local)
        g.nodes[host]["nvlinks"] = gpu.links
        g.add_node(hub, role=SWITCH, tier=HUB_TIER, name=f"n{n}.hub{local}", part=HUB, node=n, gpu=local)
        g.nodes[hub]["latency_ps"] = 0  # no device: where the GPU's NVLink and PCIe part
        g.add_edge(host, hub, **{**nvlink, "delay_ps": 0})
        g.add_edge(hub, nvswitch, **nvlink)
    return nvswitch + 1


def nvlink_node(
    gpus: int = 8, *, gpu: str = "h100", nvlink_rate_bps: int | None = None, nvswitches: int | None = None
) -> nx.Graph:
    """Return one node of ``gpus`` GPUs joined by NVLink through its NVSwitch chips, no network.

    Parameters
    ----------
    gpus : int
        GPUs in the node (>= 1; hosts 0..gpus-1).
    gpu : str
        The GPU generation (:data:`GPUS`): its NVLink links and rates, its NVSwitch chips and ports.
    nvlink_rate_bps : int or None
        A GPU's NVLink signalling rate per direction (None: the generation's, with NCCL's usable share).
    nvswitches : int or None
        NVSwitch chips (None: the generation's board).

    Raises
    ------
    McsimError
        For no GPU, an NVLink rate of 0, or more GPU NVLinks than the chips have ports.
    """
    spec, nvlink = _gpu(gpu, nvlink_rate_bps)
    ports = _check_counts(1, gpus, 1, spec, nvswitches, "gpus")
    _require_fits("nvlink_node", gpus, gpus + 1, 2 * gpus)  # a hub each and the NVSwitch; two links a GPU
    g: nx.Graph[int] = nx.Graph(name=f"node-{gpus}x{gpu}", builder="nvlink_node")
    g.graph["params"] = {"gpus": gpus, "gpu": gpu, "nvlink_rate_bps": nvlink_rate_bps, "nvswitches": nvswitches}
    add_node(g, 0, 0, gpus, gpus, spec, nvlink, ports)
    return g


def rail_optimised(
    nodes: int,
    gpus_per_node: int = 8,
    *,
    rate_bps: int,
    delay_ps: int,
    encoding_data_bits: int = 1,
    encoding_line_bits: int = 1,
    gpu: str = "h100",
    nvlink_rate_bps: int | None = None,
    nvswitches: int | None = None,
    gpus_per_nic: int = 1,
    pcie: str = "gen5",
    nodes_per_leaf: int | None = None,
    spines: int = 0,
    links_per_leaf_spine: int = 1,
    switch_ports: int = 64,
    spine_groups: str = rail_fabric.SHARED,
    planes: int = 1,
) -> nx.Graph:
    """Return ``nodes`` nodes of GPUs on a rail-optimised fabric: NIC r of every node on rail r's leaves.

    Parameters
    ----------
    nodes, gpus_per_node : int
        Nodes, and GPUs in each (>= 1). GPU l of node n is host n x gpus_per_node + l.
    rate_bps, delay_ps, encoding_data_bits, encoding_line_bits : int
        The network's links (NIC to leaf, leaf to spine), as in :func:`mcsim.topology.fat_tree`.
    gpu, nvlink_rate_bps, nvswitches : str, int or None
        A node's NVLink, as in :func:`nvlink_node`.
    gpus_per_nic : int
        GPUs that share one NIC (1: a NIC per GPU; it must divide gpus_per_node): the node's rails are
        gpus_per_node / gpus_per_nic, NIC r serving GPUs r x gpus_per_nic ...
    pcie : str
        The PCIe generation of each NIC's x16 link (:data:`PCIE`).
    nodes_per_leaf : int or None
        Nodes a rail leaf serves (None: every node of the rail on one leaf).
    spines : int
        Spine switches in all (0: one leaf a rail, no spines; traffic across rails then crosses a node's
        NVSwitch), split evenly among the planes and, per rail, the rails.
    links_per_leaf_spine : int
        Parallel links from every leaf to every spine of its group.
    switch_ports : int
        Ports of a leaf or spine (64: a Quantum-2 NDR switch).
    spine_groups : str
        "shared" (every spine joins every rail's leaves) or "per_rail" (rail r's leaves join only rail r's own
        spines: a rail-only fabric, where traffic across rails and nodes crosses a node's NVSwitch, NCCL's PXN).
        See :mod:`mcsim.topology.rail_fabric`, with the sources.
    planes : int
        Planes (1: none): each NIC's port becomes ``planes`` ports of rate/planes each, plane p with its own
        leaves and spines, every link of a plane at rate/planes (a NIC's total rate unchanged; ECMP picks a
        plane per flow). As Alibaba HPN's dual plane and NVIDIA's ConnectX-8 planes: see
        :mod:`mcsim.topology.rail_fabric`.

    Returns
    -------
    networkx.Graph
        GPUs ``0..H-1`` node by node ("n3.gpu5", tier 0); then node by node its GPUs' hubs ("n3.hub5", tier 1),
        its NVSwitch ("n3.nvswitch", tier 2) and its NICs ("n3.nic5", tier 2); rail leaves ("rail5.leaf0",
        tier 3), spines ("spine0", per rail "rail5.spine0", tier 4); with several planes, the leaves and spines
        plane by plane ("plane1.rail5.leaf0").

    Raises
    ------
    McsimError
        For bad counts, a NIC shared across nodes, more GPU NVLinks than NVSwitch ports, several leaves a
        rail without spines, spines that do not split evenly into their groups, planes that do not divide the
        rate, a switch with more links than switch_ports, or bad link parameters.
    """
    spec, nvlink = _gpu(gpu, nvlink_rate_bps)
    ports = _check_counts(nodes, gpus_per_node, gpus_per_nic, spec, nvswitches)
    wire = edge_attrs(
        "rail_optimised",
        rate_bps=rate_bps,
        delay_ps=delay_ps,
        encoding_data_bits=encoding_data_bits,
        encoding_line_bits=encoding_line_bits,
    )
    pcie_edge = pcie_link(pcie, NODE_DELAY_PS)
    rails = gpus_per_node // gpus_per_nic
    fabric = rail_fabric.plan(
        nodes, rails, nodes_per_leaf, spines, links_per_leaf_spine, switch_ports, spine_groups, planes
    )
    wire = rail_fabric.plane_wire(wire, planes)
    hosts = nodes * gpus_per_node
    _require_fits(
        "rail_optimised",
        hosts,
        nodes * (gpus_per_node + 1 + rails) + fabric.leaf_count + fabric.spine_count,
        # GPU-hub, hub-NVSwitch, PCIe; NIC ports; leaf uplinks
        2 * hosts + hosts + nodes * rails * planes + fabric.leaf_count * fabric.spines,
    )
    g: nx.Graph[int] = nx.Graph(name=f"rail-{nodes}x{gpus_per_node}", builder="rail_optimised")
    g.graph["params"] = {
        "nodes": nodes,
        "gpus_per_node": gpus_per_node,
        "rate_bps": rate_bps,
        "delay_ps": delay_ps,
        "encoding_data_bits": encoding_data_bits,
        "encoding_line_bits": encoding_line_bits,
        "gpu": gpu,
        "nvlink_rate_bps": nvlink_rate_bps,
        "nvswitches": nvswitches,
        "gpus_per_nic": gpus_per_nic,
        "pcie": pcie,
        "nodes_per_leaf": nodes_per_leaf,
        "spines": spines,
        "links_per_leaf_spine": links_per_leaf_spine,
        "switch_ports": switch_ports,
        "spine_groups": spine_groups,
        "planes": planes,
    }
    per_node = gpus_per_node + 1 + rails  # hubs, the NVSwitch, NICs
    first_leaf = hosts + nodes * per_node
    _add_rail_switches(g, fabric, first_leaf)
    nics: dict[tuple[int, int], int] = {}
    for n in range(nodes):
        first_hub = hosts + n * per_node
        first_nic = add_node(g, n, n * gpus_per_node, first_hub, gpus_per_node, spec, nvlink, ports)
        for r in range(rails):
            nic = nics[n, r] = first_nic + r
            g.add_node(nic, role=SWITCH, tier=NIC_TIER, name=f"n{n}.nic{r}", part=NIC, node=n, rail=r)
            g.nodes[nic]["latency_ps"] = 0  # the NIC's own latency is the NIC model's (SendLatency, ReceiveLatency)
            for local in range(r * gpus_per_nic, (r + 1) * gpus_per_nic):
                g.add_edge(first_hub + local, nic, **pcie_edge)
    _add_rail_links(g, fabric, first_leaf, nics, wire)
    return g


def _add_rail_switches(g: nx.Graph[int], f: rail_fabric.RailFabric, first_leaf: int) -> None:
    """Add the rail network's leaves (from ``first_leaf``), plane by plane and rail by rail, then its spines."""
    for p in range(f.planes):
        for r in range(f.rails):
            for i in range(f.leaves):
                g.add_node(first_leaf + f.leaf(p, r, i), role=SWITCH, **f.leaf_attrs(p, r, i))
    first_spine = first_leaf + f.leaf_count
    for p in range(f.planes):
        for k in range(f.groups):
            for s in range(f.spines):
                g.add_node(first_spine + f.spine(p, k, s), role=SWITCH, **f.spine_attrs(p, k, s))


def _add_rail_links(
    g: nx.Graph[int],
    f: rail_fabric.RailFabric,
    first_leaf: int,
    nics: Mapping[tuple[int, int], int],
    wire: Mapping[str, int],
) -> None:
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


@dataclass(frozen=True, slots=True)
class Nodes:
    """The nodes of a topology: ``gpus`` per node (hosts n x gpus .. are node n's), ``count`` nodes, ``rails``
    (NICs a node; 0 without a network), and the data rates of a GPU's NVLink and of its way to the network
    (the narrower of its NIC's PCIe link and its wires, all its planes' together; 0 without a network);
    ``planes``: a NIC's network ports (0 without a network)."""

    count: int
    gpus: int
    rails: int
    nvlink_bps: int
    network_bps: int
    planes: int = 0

    def node_of(self, host: int) -> int:
        """The node of a GPU (host)."""
        return host // self.gpus

    def rate_bps(self, hosts: Iterable[int]) -> int:
        """The data rate ranks on ``hosts`` reach each other at: NVLink's if they share a node (or there is no
        network), else the network's (a collective across nodes is bound by its NICs)."""
        one_node = len({self.node_of(h) for h in hosts}) == 1
        return self.nvlink_bps if one_node or not self.network_bps else self.network_bps


def nodes_of(g: nx.Graph[Any]) -> Nodes | None:
    """The nodes of a validated topology, or None if it has none (every host its own NIC: the existing
    fabrics)."""
    if g.nodes[0].get("part") != GPU:
        return None
    hosts = sum(1 for _, role in g.nodes(data="role") if role == HOST)
    count = 1 + int(g.nodes[hosts - 1]["node"])  # the last GPU's node (nodes numbered node by node)
    (hub,) = g[0]
    parts = {g.nodes[x]["part"]: x for x in g[hub] if x != 0}
    nvlink = min(
        Link.from_edge(g.edges[0, hub]).data_rate_bps, Link.from_edge(g.edges[hub, parts[NVSWITCH]]).data_rate_bps
    )
    network, rails, planes = 0, 0, 0
    if NIC in parts:
        nic = parts[NIC]
        planes, wires_bps = _planes_of(g, nic)
        network = min(Link.from_edge(g.edges[hub, nic]).data_rate_bps, wires_bps)
        rails = sum(1 for _, d in g.nodes(data=True) if d.get("part") == NIC and d["node"] == 0)
    return Nodes(count=count, gpus=hosts // count, rails=rails, nvlink_bps=nvlink, network_bps=network, planes=planes)


def _planes_of(g: nx.Graph[Any], nic: int) -> tuple[int, int]:
    """A NIC's network ports (its planes) and their summed data rate in bit/s."""
    wires = [g.edges[nic, x] for x in g[nic] if g.nodes[x].get("node") is None]
    return sum(e["parallel"] for e in wires), sum(Link.from_edge(e).data_rate_bps * e["parallel"] for e in wires)


def spine_groups_of(g: nx.Graph[Any]) -> str | None:
    """Return "per_rail" if some spine of a rail-optimised fabric joins the leaves of fewer rails than there are,
    "shared" if every spine joins every rail's, None without spines (the spines: switches outside the nodes that no
    NIC links to; the rails: the leaves' ``rail``)."""
    nics = (x for x, part in g.nodes(data="part") if part == NIC)
    leaves = {y for x in nics for y in g[x] if g.nodes[y].get("node") is None}
    spines = [x for x, d in g.nodes(data=True) if d["role"] == SWITCH and d.get("node") is None and x not in leaves]
    if not spines:
        return None
    rails = {g.nodes[x].get("rail") for x in leaves}
    own = any({g.nodes[x].get("rail") for x in g[s] if x in leaves} != rails for s in spines)
    return rail_fabric.PER_RAIL if own else rail_fabric.SHARED
