# SPDX-License-Identifier: GPL-2.0-only
"""Graph + routing -> the C++ fabric (hosts, switches, links), run raw traffic, read counters.

This is the one place that turns a networkx topology into ns-3 objects. Everything crosses into
C++ as flat numpy arrays in a handful of calls (``ns3::mcsim::Fabric``), and every counter comes
back the same way after the run: no Python on the per-packet path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from numbers import Real
from typing import Any

import networkx as nx
import numpy as np

from mcsim import native, runtime
from mcsim.arrays import i64, read_counters, u32, u64
from mcsim.attributes import set_attributes
from mcsim.errors import McsimError, is_integer, pick, require_positive
from mcsim.result import FabricResult
from mcsim.routing import routes, subnet_manager
from mcsim.routing.layout import Layout, layout_of
from mcsim.simulation import Simulation
from mcsim.units import CLOCK_LIMIT, MAX_SIMULATED_PS

FLOW_CONTROLS = {"lossless": "Lossless", "lossy": "Lossy"}  # -> ns3::mcsim::FlowControl, by its checker's names
FORWARDINGS = {"cut_through": "CutThrough", "store_and_forward": "StoreAndForward"}  # -> ns3::mcsim::Forwarding
# Port-to-port latency of Mellanox's FDR SwitchX-2 switches (SX6036 product brief): 170 ns.
DEFAULT_SWITCH_LATENCY_PS = 170_000
INFINIBAND_LRH_BYTES = 8  # what an InfiniBand switch routes by: the local route header (destination LID)
GROUP_FLAG = 0x80000000  # FabricHeader::GROUP_FLAG: the destination is a multicast group
FABRIC_HEADER_BYTES = 16  # FabricHeader::SERIALIZED_BYTES (checked against C++ at run time)
DEFAULT_BUFFER_BYTES = 256 * 1024
# ASSUMPTION: partial-sum buffer per switch (no published figure for the SHARP ASICs); 4 MiB holds
# 1024 slots of 4 KiB, far more than a lossless tree needs to stream at line rate.
DEFAULT_AGGREGATION_BUFFER_BYTES = 4 * 1024 * 1024
AGGREGATION_ROOT = 2**32 - 1  # AggregationUnit::ROOT: the parent port of a tree's root
DEFAULT_MTU_BYTES = 4096
# InfiniBand RC: LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26 bytes; the FabricHeader carries 16 of them.
DEFAULT_HEADER_BYTES = 26 - FABRIC_HEADER_BYTES

MAX_SEED = 2**64 - 1
MAX_NODE_ID = 2**32 - 1  # node ids and port numbers cross the C ABI as uint32
MAX_PACKET_INDEX = 2**64 - 1  # a chosen drop's packet index crosses as uint64 (mcsim_fabric_set_chosen_drops)
FOREVER = None  # the up_ps of a Faults.link_down entry whose link never comes back
DEFAULT_REROUTE_DELAY_PS = 100_000_000_000  # 100 ms: trap, sweep, route computation, switch programming


@dataclass(frozen=True, slots=True, kw_only=True)
class FabricConfig:
    """Fabric-wide settings; every size in bytes, every time in ps."""

    flow_control: str = "lossless"  # "lossless" (credits, never drops) or "lossy" (tail drop)
    switch_buffer_b: int = DEFAULT_BUFFER_BYTES  # per switch port
    host_buffer_b: int = DEFAULT_BUFFER_BYTES  # a host port's ingress buffer
    header_b: int = DEFAULT_HEADER_BYTES  # wire bytes per packet beyond the packet itself
    # "cut_through" (a switch may send a packet on once its routing header is in: InfiniBand) or
    # "store_and_forward" (once its last bit is in); either way it occupies every link for its
    # whole serialization
    forwarding: str = "cut_through"
    routing_header_b: int = INFINIBAND_LRH_BYTES  # bytes a cut-through switch waits for
    switch_latency_ps: int = DEFAULT_SWITCH_LATENCY_PS  # from having the packet to its earliest start
    ecmp_seed: int = 1
    # in-network reduction (switch aggregation, algorithm "innet"): each switch's ALU throughput in
    # contribution bytes (whole packets) per second as bit/s, 0: the sum of its ports' data rates
    # (it keeps up with every port at line rate); its buffer of partial sums, split among its trees
    aggregation_rate_bps: int = 0
    aggregation_buffer_b: int = DEFAULT_AGGREGATION_BUFFER_BYTES
    aggregation_trees: int = 0  # trees per reduction, one from each best root; 0: from every one
    loss: float = 0.0  # probability that a packet is lost on a link, every link and direction
    seed: int = 1  # seed of the random faults: the same seed loses the same packets

    def __post_init__(self) -> None:
        pick("flow control", self.flow_control, FLOW_CONTROLS)
        pick("forwarding", self.forwarding, FORWARDINGS)
        require_positive(
            "FabricConfig",
            switch_buffer_b=self.switch_buffer_b,
            host_buffer_b=self.host_buffer_b,
            routing_header_b=self.routing_header_b,
            aggregation_buffer_b=self.aggregation_buffer_b,
        )
        names = ("header_b", "routing_header_b", "switch_latency_ps", "ecmp_seed", "seed")
        for name in (*names, "aggregation_rate_bps", "aggregation_buffer_b", "aggregation_trees"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise McsimError(f"FabricConfig: {name}={value!r} must be an integer >= 0")
        for name in ("routing_header_b", "aggregation_trees"):
            if getattr(self, name) >= 2**32:
                raise McsimError(f"FabricConfig: {name}={getattr(self, name)} must be < 2**32")
        if self.aggregation_rate_bps >= 2**64:
            raise McsimError(f"FabricConfig: aggregation_rate_bps={self.aggregation_rate_bps} must be < 2**64")
        if self.seed > MAX_SEED:
            raise McsimError(f"FabricConfig: seed={self.seed} must be < 2**64")
        _check_probability("FabricConfig", "loss", self.loss)


def _check_probability(where: str, name: str, p: object) -> None:
    if isinstance(p, bool) or not isinstance(p, Real) or not 0 <= float(p) < 1:  # NaN fails 0 <= p too
        raise McsimError(
            f"{where}: {name}={p!r} must be a probability >= 0 and < 1; e.g. 1e-3 loses one packet in 1000"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Faults:
    """Faults injected into the links of one run (pass to build() or simulate() as ``faults=``).

    A lost packet occupies the wire (counted in ``tx_packets``) and is discarded when it arrives
    (its last bit; at a cut-through switch, its routing header), instead of being handed to the far
    end; in lossless mode the far end's ingress credit comes back when its last bit would have
    arrived, so credits are conserved. Each lost packet counts under one cause in the
    sending port's counters (see :data:`DROP_CAUSES`): link down first, then chosen, then random.

    Attributes
    ----------
    link_loss
        ``{(u, v): p}``: loss probability of the graph edge (u, v) (either order), 0 <= p < 1, for
        all its parallel links and both directions; overrides FabricConfig.loss there.
    drops
        ``[(node, port, index), ...]``: lose the index-th packet (0-based, in the order the packets
        are committed to the wire) sent by ``port`` of ``node``; e.g. ``(root, 0, 0)`` loses the
        first packet host ``root`` sends. An index past the last packet sent drops nothing.
    link_down
        ``[(u, v, down_ps, up_ps), ...]``: the edge (u, v) (all its parallel links, both
        directions) is down during [down_ps, up_ps); ``up_ps=FOREVER`` (None): down for good.
        Simplification: the link keeps serializing while down; a packet whose last bit arrives in
        the interval is lost. Intervals may overlap.
    reroute_delay_ps
        The subnet manager (mcsim.routing.subnet_manager): this long after a link of ``link_down`` goes
        down or comes back, it recomputes up*/down* unicast routes and the multicast trees over the
        links that are up and reprograms every switch (links down from time 0 are routed around
        from the start). Default 100 ms; None: no subnet manager, the routes stay as built.
    """

    link_loss: Mapping[tuple[int, int], float] = field(default_factory=dict)
    drops: Sequence[tuple[int, int, int]] = ()
    link_down: Sequence[tuple[int, int, int, int | None]] = ()
    reroute_delay_ps: int | None = DEFAULT_REROUTE_DELAY_PS

    def __post_init__(self) -> None:
        if not isinstance(self.link_loss, Mapping):
            raise McsimError(f"Faults: link_loss={self.link_loss!r} must be a dict {{(u, v): p}}")
        object.__setattr__(self, "link_loss", dict(self.link_loss))
        object.__setattr__(self, "drops", tuple(_row("drops", i, r, 3) for i, r in enumerate(self.drops)))
        object.__setattr__(self, "link_down", tuple(_row("link_down", i, r, 4) for i, r in enumerate(self.link_down)))
        for edge, p in self.link_loss.items():
            where = f"Faults: link_loss[{edge!r}]"
            if not isinstance(edge, tuple) or len(edge) != 2 or not all(map(is_integer, edge)):
                raise McsimError(f"{where} must be keyed by an edge (u, v) of two nodes; e.g. {{(0, 4): 1e-3}}")
            _check_probability(where, "p", p)
        seen: dict[tuple[int, int, int], int] = {}
        for i, (node, port, index) in enumerate(self.drops):
            where = f"Faults: drops[{i}]=({node}, {port}, {index})"
            for name, value, top in (("node", node, MAX_NODE_ID), ("port", port, MAX_NODE_ID)):
                if value < 0:
                    raise McsimError(f"{where}: {name}={value} must be >= 0")
                if value > top:
                    raise McsimError(f"{where}: {name}={value} must be <= {top} (uint32 in C++)")
            if index < 0:
                raise McsimError(f"{where}: index={index} must be >= 0")
            if index > MAX_PACKET_INDEX:
                raise McsimError(f"{where}: index={index} must be <= {MAX_PACKET_INDEX} (uint64 in C++)")
            if (node, port, index) in seen:
                raise McsimError(f"{where} repeats drops[{seen[node, port, index]}]; list each packet once")
            seen[node, port, index] = i
        for i, (u, v, down_ps, up_ps) in enumerate(self.link_down):
            where = f"Faults: link_down[{i}]=({u}, {v}, {down_ps}, {up_ps})"
            if down_ps < 0:
                raise McsimError(f"{where}: down_ps={down_ps} must be >= 0")
            times: tuple[tuple[str, int | None], ...] = (("down_ps", down_ps), ("up_ps", up_ps))
            for name, time_ps in times:
                if time_ps is not None and time_ps > MAX_SIMULATED_PS:
                    raise McsimError(f"{where}: {name}={time_ps} must be <= {MAX_SIMULATED_PS} ({CLOCK_LIMIT})")
            if up_ps is not None and up_ps <= down_ps:
                raise McsimError(
                    f"{where}: up_ps={up_ps} must be > down_ps={down_ps}; the link is down in [down_ps, up_ps) "
                    "(up_ps=FOREVER: for good)"
                )
        if self.reroute_delay_ps is not None and (not is_integer(self.reroute_delay_ps) or self.reroute_delay_ps < 0):
            raise McsimError(
                f"Faults: reroute_delay_ps={self.reroute_delay_ps!r} must be an integer >= 0 (ps), or None for "
                "static routes"
            )
        if self.reroute_delay_ps is not None and self.reroute_delay_ps > MAX_SIMULATED_PS:
            raise McsimError(
                f"Faults: reroute_delay_ps={self.reroute_delay_ps} must be <= {MAX_SIMULATED_PS} ({CLOCK_LIMIT})"
            )

    def check(self, g: nx.Graph | Layout) -> None:
        """Raise McsimError for an entry that names an edge or port ``g`` (a topology or its Layout)
        does not have."""
        layout = layout_of(g)
        g, ports = layout.graph, layout.ports
        name = g.graph.get("name", "the topology")
        normal: dict[tuple[int, int], tuple[int, int]] = {}
        for u, v in self.link_loss:
            where = f"Faults: link_loss[{(u, v)!r}]"
            if not g.has_edge(u, v):
                raise McsimError(f"{where}: ({u}, {v}) is not an edge of {name}; {_edge_hint(g, u)}")
            key = (min(u, v), max(u, v))
            if key in normal:
                raise McsimError(f"{where} repeats link_loss[{normal[key]!r}]; give each edge once")
            normal[key] = (u, v)
        for i, (node, port, index) in enumerate(self.drops):
            where = f"Faults: drops[{i}]=({node}, {port}, {index})"
            if node not in ports:
                raise McsimError(f"{where}: node={node} is not in {name} (nodes are 0..{len(ports) - 1})")
            if port >= len(ports[node]):
                raise McsimError(
                    f"{where}: port={port} is out of range; node {node} has ports 0..{len(ports[node]) - 1}"
                )
        for i, (u, v, down_ps, up_ps) in enumerate(self.link_down):
            if not g.has_edge(u, v):
                where = f"Faults: link_down[{i}]=({u}, {v}, {down_ps}, {up_ps})"
                raise McsimError(f"{where}: ({u}, {v}) is not an edge of {name}; {_edge_hint(g, u)}")


def _row(what: str, i: int, row: object, n: int) -> tuple[Any, ...]:
    """A fault entry as a tuple of n non-bool integers (a link_down's up_ps may be FOREVER), or
    McsimError naming it."""
    fields = "(node, port, index)" if what == "drops" else "(u, v, down_ps, up_ps or FOREVER)"
    bad = McsimError(f"Faults: {what}[{i}]={row!r} must be {n} integers {fields}")
    if not isinstance(row, Sequence) or len(row) != n:
        raise bad
    forever = what == "link_down" and row[-1] is FOREVER
    values = row[:-1] if forever else row
    if not all(map(is_integer, values)):
        raise bad
    return (*(int(x) for x in values), *((FOREVER,) if forever else ()))


def _edge_hint(g: nx.Graph, u: object) -> str:
    if u in g:
        return f"node {u} links to {', '.join(map(str, sorted(g[u])))}"
    return f"nodes are 0..{g.number_of_nodes() - 1}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Flow:
    """Raw traffic: host ``src`` sends ``size_b`` payload bytes to host ``dst`` or to ``group``."""

    src: int
    size_b: int
    dst: int | None = None  # a host, or
    group: int | None = None  # an index into the groups given to simulate()
    mtu_b: int = DEFAULT_MTU_BYTES  # payload bytes per packet
    start_ps: int = 0
    flow_id: int = 0  # ECMP hash input: flows with different ids may take different paths

    @property
    def destination(self) -> int:
        """The FabricHeader destination: the host, or the group with GROUP_FLAG set."""
        return destination(self.dst, self.group)

    def receivers(self, groups: Sequence[Sequence[int]]) -> int:
        """Hosts that receive each packet: 1, or every other member of the group."""
        return 1 if self.group is None else len(groups[self.group]) - 1


def destination(dst: int | None, group: int | None) -> int:
    """What a packet's FabricHeader names: host ``dst``, or ``group`` with GROUP_FLAG set (exactly
    one of the two is given; the workload's checks say so before a run)."""
    if group is not None:
        return group | GROUP_FLAG
    if dst is None:
        raise McsimError("give exactly one of dst (a host) and group")
    return dst


def _check_flows(layout: Layout, flows: Sequence[Flow], n_groups: int, config: FabricConfig) -> None:
    n_hosts = layout.hosts
    if not flows:
        raise McsimError("simulate: no flows given")
    for i, f in enumerate(flows):
        where = f"flow {i}"
        if not 0 <= f.src < n_hosts:
            raise McsimError(f"{where}: src={f.src} is not a host (hosts are 0..{n_hosts - 1})")
        if (f.dst is None) == (f.group is None):
            raise McsimError(f"{where}: give exactly one of dst (a host) and group")
        if f.dst is not None and not 0 <= f.dst < n_hosts:
            raise McsimError(f"{where}: dst={f.dst} is not a host (hosts are 0..{n_hosts - 1})")
        if f.dst == f.src:
            raise McsimError(f"{where}: dst={f.dst} is the sender itself")
        if f.group is not None and not 0 <= f.group < n_groups:
            raise McsimError(f"{where}: group={f.group} is not one of the {n_groups} groups given")
        require_positive(where, size_b=f.size_b, mtu_b=f.mtu_b)
        if f.start_ps < 0:
            raise McsimError(f"{where}: start_ps={f.start_ps} must be >= 0")
        check_lossless_buffers(where, config, f.mtu_b + FABRIC_HEADER_BYTES, "mtu_b")


def check_lossless_buffers(where: str, config: FabricConfig, packet_b: int, lower: str) -> None:
    """Raise McsimError (one line) unless every lossless buffer holds one largest packet: ``packet_b``
    plus ``config.header_b`` on the wire. A smaller one never gets the credits to send it, and the run
    ends without it. ``lower``: what the message suggests lowering instead ("mtu_b", "mtu")."""
    if config.flow_control != "lossless":
        return
    wire = packet_b + config.header_b
    for name in ("switch_buffer_b", "host_buffer_b"):
        size = getattr(config, name)
        if wire > size:
            raise McsimError(
                f"{where}: a {wire} B packet does not fit a lossless buffer of {size} B ({name}); a lossless "
                f"buffer holds at least one largest packet: raise {name} to >= {wire} or lower {lower}"
            )


@dataclass(frozen=True, slots=True)
class Reduction:
    """An in-network reduction's trees in a built fabric: aggregation trees first_tree ..
    first_tree + len(trees) - 1, each also multicast group first_group + i (where an Allreduce's
    root sends the sum)."""

    first_tree: int
    first_group: int
    trees: tuple[routes.MulticastTree, ...]


def _plan_reductions(
    layout: Layout, reductions: Sequence[Sequence[int]], n_groups: int, config: FabricConfig, slot_b: int
) -> tuple[list[Reduction], np.ndarray]:
    """The aggregation trees of each reduction and the rows of Fabric::SetAggregationTrees
    (tree, switch, parent port or ROOT, children); McsimError if a switch's buffer is too small."""
    planned: list[Reduction] = []
    rows: list[tuple[int, int, int, int]] = []
    per_switch: dict[int, int] = {}
    tree_id = 0
    for members in reductions:
        trees = tuple(routes.aggregation_trees(layout, members, config.aggregation_trees))
        planned.append(Reduction(tree_id, n_groups + tree_id, trees))
        for tree in trees:
            parents = routes.tree_parents(tree, layout)
            for sw, ports in tree.switch_ports.items():
                parent = parents[sw]
                rows.append(
                    (tree_id, sw, AGGREGATION_ROOT if parent is None else parent, len(ports) - (parent is not None))
                )
                per_switch[sw] = per_switch.get(sw, 0) + 1
            tree_id += 1
    for sw, n in sorted(per_switch.items()):
        slots = config.aggregation_buffer_b // n // slot_b
        if slots < 2:
            raise McsimError(
                f"FabricConfig: aggregation_buffer_b={config.aggregation_buffer_b} holds {slots} slots of {slot_b} B "
                f"for each of the {n} aggregation trees of switch {sw}; it needs >= 2 (raise it to "
                f">= {2 * n * slot_b})"
            )
    return planned, u32(rows).reshape(-1)


class BuiltFabric:
    """A fabric built in C++, for one run: attach traffic, read counters.

    A :class:`mcsim.simulation.Simulation` owns it for the run (``sim.own_fabric(build(g))``):
    it runs the simulation and disposes the fabric afterwards.
    """

    def __init__(self, layout: Layout, cxx: native.Handle, trees: list, reductions: list[Reduction]) -> None:
        self.layout = layout
        self.lib = runtime.load()  # mcsim's library (its C ABI)
        self.cxx = cxx  # ns3::mcsim::Fabric
        self.trees = trees  # one routes.MulticastTree per group (as the run starts; None: unreachable)
        self.reductions = reductions  # per reduction given to build(): its aggregation trees
        self.n_hosts = layout.hosts
        self.n_flows = 0

    def add_flows(self, flows: Sequence[Flow]) -> None:
        """Add raw traffic sources (checked by simulate())."""
        self.lib.mcsim_fabric_add_sources(
            self.cxx,
            u32([f.src for f in flows]),
            u32([f.destination for f in flows]),
            u64([f.size_b for f in flows]),
            u32([f.mtu_b for f in flows]),
            u32([f.flow_id for f in flows]),
            i64([f.start_ps for f in flows]),
            len(flows),
        )
        self.n_flows += len(flows)

    def delivered_packets(self) -> int:
        """Packets the hosts have received so far (for the progress line)."""
        return int(self._host_counters()["rx_packets"].sum())

    def _host_counters(self) -> dict[str, np.ndarray]:
        """The "host" counters of every host, read in bulk (during or after the run)."""
        return read_counters("host", self.n_hosts, partial(self.lib.mcsim_fabric_host_counters, self.cxx))

    def collect(self) -> FabricResult:
        """Read every fabric counter (after the run, before the Simulation disposes the fabric)."""
        lib, fabric = self.lib, self.cxx
        n_ports = lib.mcsim_fabric_n_ports(fabric)
        if n_ports != self.layout.n_ports:
            raise AssertionError(f"the C++ fabric has {n_ports} ports, the Layout {self.layout.n_ports}")
        port_node, port_num, port_peer = self.layout.port_arrays()
        return FabricResult(
            port_node=port_node.copy(),
            port_num=port_num.copy(),
            port_peer=port_peer.copy(),
            ports=read_counters("port", n_ports, partial(lib.mcsim_fabric_port_counters, fabric)),
            hosts=self._host_counters(),
            sources=read_counters("source", self.n_flows, partial(lib.mcsim_fabric_source_counters, fabric)),
            unroutable_packets=lib.mcsim_fabric_unroutable_packets(fabric),
            end_ps=lib.mcsim_now_ps(),
            trees=self.trees,
            aggregation=(
                read_counters(
                    "aggregation", len(self.layout.switches), partial(lib.mcsim_fabric_aggregation_counters, fabric)
                )
                if self.reductions
                else {}
            ),
        )


def build(
    g: nx.Graph | Layout,
    *,
    groups: Sequence[Sequence[int]] = (),
    config: FabricConfig | None = None,
    faults: Faults | None = None,
    reductions: Sequence[Sequence[int]] = (),
    slot_b: int = DEFAULT_MTU_BYTES,
) -> BuiltFabric:
    """Build the C++ fabric of ``g`` with unicast routes and one multicast tree per group.

    Parameters
    ----------
    g
        A topology from :mod:`mcsim.topology` (hosts 0..H-1, then switches), or its Layout; its
        unicast tables are computed once per Layout (mcsim.routing.layout).
    groups
        Multicast groups, each a list of member hosts; group i gets tree i (routes.multicast_tree).
    config
        Fabric-wide settings (flow control, buffers, headers, switch latency, ECMP seed).
    faults
        Link faults (random loss per edge, chosen packets, link-down intervals); with
        ``config.loss`` and ``config.seed``. Checked against ``g`` before any C++ object exists.
        The subnet manager's reroutes after link changes (mcsim.routing.subnet_manager) are scheduled here.
    reductions
        In-network reductions, each a list of member hosts: each gets its aggregation trees
        (routes.aggregation_trees; BuiltFabric.reductions says which), every one also a multicast
        group after ``groups``. Switches hold partial sums in slots of ``slot_b`` bytes (the
        contributions' payload, the MTU).

    Raises
    ------
    McsimError
        A fault entry that names an edge or port ``g`` does not have.
    """
    config = config or FabricConfig()
    faults = faults or Faults()
    layout = layout_of(g)
    faults.check(layout)
    start, reroutes = subnet_manager.plan(layout, [list(m) for m in groups], faults.link_down, faults.reroute_delay_ps)
    planned, rows = _plan_reductions(layout, reductions, len(groups), config, slot_b)

    lib = runtime.load()
    if lib.mcsim_fabric_header_bytes() != FABRIC_HEADER_BYTES:
        raise AssertionError("FABRIC_HEADER_BYTES differs from the C++ FabricHeader")
    fabric = native.Handle(lib, "ns3::mcsim::Fabric")
    try:
        _configure(lib, fabric, layout, config, faults, start, reroutes)
        if planned:
            lib.mcsim_fabric_set_aggregation_trees(fabric, rows, rows.size // 4, slot_b)
            trees = [t for r in planned for t in r.trees]
            for i, tree in enumerate(trees):
                for sw, own in tree.switch_ports.items():
                    lib.mcsim_fabric_set_multicast_ports(fabric, len(groups) + i, sw, u32(own), len(own))
    except BaseException:
        runtime.dispose(fabric)  # not handed to a Simulation yet
        raise
    return BuiltFabric(layout, fabric, [*start.trees, *(t for r in planned for t in r.trees)], planned)


def _configure(
    lib: Any,
    fabric: native.Handle,
    layout: Layout,
    config: FabricConfig,
    faults: Faults,
    start: subnet_manager.Routes,
    reroutes: list[subnet_manager.Reroute],
) -> None:
    """Set the attributes, wire the nodes and program routes and faults of a new C++ Fabric."""
    set_attributes(
        fabric,
        "FabricConfig",
        FlowControl=FLOW_CONTROLS[config.flow_control],
        SwitchBufferBytes=config.switch_buffer_b,
        HostBufferBytes=config.host_buffer_b,
        HeaderBytes=config.header_b,
        SwitchLatency=config.switch_latency_ps,
        Forwarding=FORWARDINGS[config.forwarding],
        RoutingHeaderBytes=config.routing_header_b,
        EcmpSeed=config.ecmp_seed,
        Seed=config.seed,
        AggregationRate=config.aggregation_rate_bps,
        AggregationBufferBytes=config.aggregation_buffer_b,
    )
    edges = [layout.graph.edges[u, v] for u, _, v, _ in layout.links]  # one per physical link
    lib.mcsim_fabric_build(
        fabric,
        layout.hosts,
        u32([len(layout.ports[n]) for n in layout.switches]),
        len(layout.switches),
        u32(layout.links),
        u64([e["rate_bps"] for e in edges]),
        u32([(e["encoding_data_bits"], e["encoding_line_bits"]) for e in edges]),
        i64([e["delay_ps"] for e in edges]),
        len(layout.links),
    )
    switches = list(layout.switches)
    _set_routes(lib, fabric, switches, start, None)
    for reroute in reroutes:
        _set_routes(lib, fabric, switches, reroute.routes, reroute.at_ps)
    _set_faults(lib, fabric, layout, config, faults)


def _set_routes(
    lib: Any, fabric: native.Handle, switches: list[int], routes: subnet_manager.Routes, at_ps: int | None
) -> None:
    """Program every switch with these routes now (at_ps None) or schedule it (a subnet manager
    reroute): the unicast table, and each group's tree ports (none where a switch left the tree)."""
    if routes.tables is not None:
        for sw in switches:
            offsets, candidates = routes.tables.for_switch(sw)
            args = (u32(offsets), offsets.size, u32(candidates), candidates.size)  # sizes: u32 is never empty
            if at_ps is None:
                lib.mcsim_fabric_set_unicast_table(fabric, sw, *args)
            else:
                lib.mcsim_fabric_schedule_unicast_table(fabric, at_ps, sw, *args)
    for gid, tree in enumerate(routes.trees):
        tree_ports = tree.switch_ports if tree is not None else {}
        for sw in switches if at_ps is not None else sorted(tree_ports):
            own = tree_ports.get(sw, ())
            if at_ps is None:
                lib.mcsim_fabric_set_multicast_ports(fabric, gid, sw, u32(own), len(own))
            else:
                lib.mcsim_fabric_schedule_multicast_ports(fabric, at_ps, gid, sw, u32(own), len(own))


def _set_faults(lib: Any, fabric: native.Handle, layout: Layout, config: FabricConfig, faults: Faults) -> None:
    """Hand the (checked) faults to C++: one call for the losses, one per port or link otherwise."""
    base, ports = layout.port_base, layout.ports
    edge_loss = {(min(u, v), max(u, v)): float(p) for (u, v), p in faults.link_loss.items()}
    loss = np.full(layout.n_ports, float(config.loss), dtype=np.float64)
    for a, pa, b, pb in layout.links:
        p = edge_loss.get((min(a, b), max(a, b)), config.loss)
        loss[base[a] + pa] = loss[base[b] + pb] = p
    if loss.any():
        lib.mcsim_fabric_set_loss_probabilities(fabric, loss, loss.size)
    chosen: dict[tuple[int, int], list[int]] = {}
    for node, port, index in faults.drops:
        chosen.setdefault((node, port), []).append(index)
    for (node, port), indexes in sorted(chosen.items()):
        arr = u64(sorted(indexes))
        lib.mcsim_fabric_set_chosen_drops(fabric, node, port, arr, arr.size)
    down: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for u, v, down_ps, up_ps in faults.link_down:
        up = np.iinfo(np.int64).max if up_ps is FOREVER else up_ps
        down.setdefault((min(u, v), max(u, v)), []).append((down_ps, up))
    for (u, v), intervals in sorted(down.items()):
        rows = i64(sorted(intervals)).reshape(-1)
        for port, (nbr, _) in enumerate(ports[u]):
            if nbr == v:  # every parallel link of the edge; SetLinkDown takes both directions
                lib.mcsim_fabric_set_link_down(fabric, u, port, rows, len(intervals))


def simulate(
    g: nx.Graph | Layout,
    flows: Sequence[Flow],
    *,
    groups: Sequence[Sequence[int]] = (),
    config: FabricConfig | None = None,
    faults: Faults | None = None,
) -> FabricResult:
    """Build the fabric of ``g``, run raw ``flows`` to completion, and return every counter.

    A flow with ``group=i`` multicasts to ``groups[i]`` (the sender must be a member; every other
    member receives one copy). See :func:`build` for the other parameters.

    Raises
    ------
    McsimError
        A bad flow, group, fault or setting, before any C++ object exists.
    """
    config = config or FabricConfig()
    layout = layout_of(g)
    _check_flows(layout, flows, len(groups), config)
    for i, f in enumerate(flows):
        if f.group is not None and f.src not in groups[f.group]:
            raise McsimError(f"flow {i}: src={f.src} is not a member of group {f.group}")
    expected = sum(-(-f.size_b // f.mtu_b) * f.receivers(groups) for f in flows)
    with Simulation() as sim:
        fab = sim.own_fabric(build(layout, groups=groups, config=config, faults=faults))
        fab.add_flows(flows)
        sim.run()
        return replace(fab.collect(), expected_rx_packets=expected)
