# SPDX-License-Identifier: GPL-2.0-only
"""The fabric's binding: Layout + FabricConfig + Faults -> a C++ ns3::mcsim::Fabric, and its counters.

This is the one place that turns a topology into ns-3 objects. Everything crosses into
C++ as flat numpy arrays in a handful of calls (``ns3::mcsim::Fabric``), and every counter comes
back the same way after the run: no Python on the per-packet path. The settings it builds from
(FabricConfig, Faults, Flow) are frozen data in mcsim.config.fabric; mcsim.runs.flows runs raw flows
on a fabric built here.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mcsim.config.fabric import (
    AGGREGATION_ROOT,
    DEFAULT_MTU_BYTES,
    FABRIC,
    FOREVER,
    PORT,
    SWITCH,
    FabricConfig,
    Faults,
    Flow,
)
from mcsim.config.queue_trace import QUEUE_SAMPLER, QueueTraceConfig
from mcsim.errors import McsimError
from mcsim.native import abi, runtime
from mcsim.native.arrays import i64, read_counters, u32, u64
from mcsim.native.attributes import factory_of, set_attributes_of
from mcsim.result import FabricResult, QueueTrace
from mcsim.routing import routes, subnet_manager
from mcsim.routing.layout import Layout

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Reduction:
    """An in-network reduction's trees in a built fabric: aggregation trees first_tree ..
    first_tree + len(trees) - 1, each also multicast group first_group + i (where an Allreduce's
    root sends the sum)."""

    first_tree: int
    first_group: int
    trees: tuple[routes.MulticastTree, ...]


def plan_reductions(
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

    A :class:`mcsim.native.simulation.Simulation` owns it for the run (``sim.own_fabric(build(layout))``):
    it runs the simulation and disposes the fabric afterwards.
    """

    def __init__(
        self, layout: Layout, cxx: abi.Handle, trees: list[routes.MulticastTree | None], reductions: list[Reduction]
    ) -> None:
        self.layout = layout
        self.lib = runtime.load()  # mcsim's library (its C ABI)
        self.cxx = cxx  # ns3::mcsim::Fabric
        self.trees = trees  # one routes.MulticastTree per group (as the run starts; None: unreachable)
        self.reductions = reductions  # per reduction given to build(): its aggregation trees
        self.n_hosts = layout.hosts
        self.n_flows = 0
        self.pfc = False  # the ports run Priority Flow Control (their PFC counters are read)
        self.ecn = False  # the switches' ports mark ECN (their ECN counters are read)
        self.telemetry = False  # NICs ask for INT (HPCC: the ports' INT counters are read)
        self.config = FabricConfig()  # the settings it was built with
        self.sampler: tuple[abi.Handle, QueueTraceConfig] | None = None  # sample_queues()'s, read by collect()

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

    def sample_queues(self, config: QueueTraceConfig) -> abi.Handle:
        """Sample the output queues of ``config``'s ports from time 0 (checked against the Layout first);
        :meth:`collect` reads the trace. Before the run; the run's Simulation owns the C++ QueueSampler
        returned (``sim.own_app``)."""
        config.check(self.layout)
        sampler = abi.Handle(self.lib, QUEUE_SAMPLER)
        with runtime.disposed_on_error(sampler):
            set_attributes_of(sampler, config)
            for node, port in config.ports:
                self.lib.mcsim_queue_sampler_attach(sampler, self.cxx, node, port)
            self.lib.mcsim_queue_sampler_start(sampler)
        self.sampler = (sampler, config)
        return sampler

    def _queue_trace(self) -> QueueTrace | None:
        """The queue trace (after the run): the samples up to its end, in bulk."""
        if self.sampler is None:
            return None
        sampler, config = self.sampler
        counts = np.zeros(2, dtype=np.uint64)
        self.lib.mcsim_queue_sampler_finish(sampler, counts, counts.size)
        kept, left_out = int(counts[0]), int(counts[1])
        queue = np.zeros(len(config.ports) * kept, dtype=np.uint64)
        self.lib.mcsim_queue_sampler_samples(sampler, queue, queue.size)
        ecn = np.zeros(2 * len(config.ports), dtype=np.uint64)
        self.lib.mcsim_queue_sampler_ecn_thresholds(sampler, ecn, ecn.size)
        if left_out:
            log.warning(
                "queue trace: %d samples per port past the first max_samples=%d were not kept; sample less often "
                "(interval_ps, --queue-interval) or keep more (max_samples)",
                left_out,
                config.max_samples,
            )
        return QueueTrace(
            ports=config.ports,
            interval_ps=config.interval_ps,
            time_ps=np.arange(kept, dtype=np.int64) * config.interval_ps,
            queue_b=queue.astype(np.int64).reshape(len(config.ports), kept),
            left_out=left_out,
            ecn_kmin_b=ecn[0::2].astype(np.int64),
            ecn_kmax_b=ecn[1::2].astype(np.int64),
        )

    def delivered_packets(self) -> int:
        """Packets the hosts have received so far (for the progress line)."""
        return int(self._host_counters()["rx_packets"].sum())

    def _host_counters(self) -> dict[str, np.ndarray]:
        """The "host" counters of every host, read in bulk (during or after the run)."""
        return read_counters("host", self.n_hosts, self.cxx)

    def _pfc_deadlock(self) -> tuple[tuple[int, int], ...]:
        """The ports of the PFC deadlock that stopped the run, as (node, port), each waiting on the next."""
        out = np.zeros(2 * self.lib.mcsim_fabric_pfc_deadlock_length(self.cxx), dtype=np.uint32)
        self.lib.mcsim_fabric_pfc_deadlock(self.cxx, out, out.size)
        return tuple((int(out[i]), int(out[i + 1])) for i in range(0, out.size, 2))

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
            ports=read_counters("port", n_ports, fabric),
            hosts=self._host_counters(),
            sources=read_counters("source", self.n_flows, fabric),
            unroutable_packets=lib.mcsim_fabric_unroutable_packets(fabric),
            pfc=read_counters("pfc", n_ports, fabric) if self.pfc else None,
            pfc_deadlock=self._pfc_deadlock() if self.pfc else None,
            ecn=read_counters("ecn", n_ports, fabric) if self.ecn else None,
            telemetry=(read_counters("int", n_ports, fabric) if self.telemetry else None),
            queue_trace=self._queue_trace(),
            end_ps=lib.mcsim_now_ps(),
            trees=self.trees,
            aggregation=(read_counters("aggregation", len(self.layout.switches), fabric) if self.reductions else {}),
        )


def build(
    layout: Layout,
    *,
    groups: Sequence[Sequence[int]] = (),
    config: FabricConfig | None = None,
    faults: Faults | None = None,
    reductions: Sequence[Sequence[int]] = (),
    slot_b: int = DEFAULT_MTU_BYTES,
) -> BuiltFabric:
    """Build the C++ fabric of a topology with unicast routes and one multicast tree per group.

    Parameters
    ----------
    layout
        The topology's Layout (:func:`mcsim.routing.layout.layout_of` of a graph from
        :mod:`mcsim.topology`: hosts 0..H-1, then switches); its unicast tables are computed once
        per Layout.
    groups
        Multicast groups, each a list of member hosts; group i gets tree i (routes.multicast_tree).
    config
        Fabric-wide settings (flow control, buffers, headers, switch latency, ECMP seed).
    faults
        Link faults (random loss per edge, chosen packets, link-down intervals); with
        ``config.loss`` and ``config.seed``. Checked against the topology before any C++ object exists.
        The subnet manager's reroutes after link changes (mcsim.routing.subnet_manager) are scheduled here.
    reductions
        In-network reductions, each a list of member hosts: each gets its aggregation trees
        (routes.aggregation_trees; BuiltFabric.reductions says which), every one also a multicast
        group after ``groups``. Switches hold partial sums in slots of ``slot_b`` bytes (the
        contributions' payload, the MTU).

    Raises
    ------
    McsimError
        A fault entry that names an edge or port the topology does not have.
    """
    config = config or FabricConfig()
    faults = faults or Faults()
    faults.check(layout)
    start, reroutes = subnet_manager.plan_routes(
        layout, [list(m) for m in groups], faults.link_down, faults.reroute_delay_ps
    )
    planned, rows = plan_reductions(layout, reductions, len(groups), config, slot_b)

    lib = runtime.load()
    fabric = abi.Handle(lib, FABRIC)
    reduction_trees = [t for r in planned for t in r.trees]  # each also a multicast group after `groups`
    with runtime.disposed_on_error(fabric):  # not handed to a Simulation yet
        _configure(lib, fabric, layout, config, faults, start, reroutes)
        if planned:
            lib.mcsim_fabric_set_aggregation_trees(fabric, rows, rows.size // 4, slot_b)
            for i, tree in enumerate(reduction_trees):
                for sw, own in tree.switch_ports.items():
                    lib.mcsim_fabric_set_multicast_ports(fabric, len(groups) + i, sw, u32(own), len(own))
    built = BuiltFabric(layout, fabric, [*start.trees, *reduction_trees], planned)
    built.pfc = config.flow_control == "pfc"
    built.ecn = config.ecn
    built.config = config
    return built


def _configure(
    lib: Any,
    fabric: abi.Handle,
    layout: Layout,
    config: FabricConfig,
    faults: Faults,
    start: subnet_manager.Routes,
    reroutes: list[subnet_manager.Reroute],
) -> None:
    """Set the attributes, wire the nodes and program routes and faults of a new C++ Fabric."""
    set_attributes_of(fabric, config)
    lib.mcsim_fabric_set_factories(
        fabric,
        factory_of(config, SWITCH),
        factory_of(config, PORT),
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
    nodes = [layout.graph.nodes[n] for n in layout.switches]
    if any("latency_ps" in d or "aggregation_bps" in d for d in nodes):  # switches of their own (a node's parts)
        latency = u64([d.get("latency_ps", config.switch_latency_ps) for d in nodes])
        aggregation = u64([d.get("aggregation_bps", config.aggregation_rate_bps) for d in nodes])
        lib.mcsim_fabric_set_switch_attributes(fabric, latency, aggregation, len(nodes))
    switches = list(layout.switches)
    _set_routes(lib, fabric, switches, start, None)
    for reroute in reroutes:
        _set_routes(lib, fabric, switches, reroute.routes, reroute.at_ps)
    _set_faults(lib, fabric, layout, config, faults)
    if config.lossy_hosts:
        bad = next((h for h in config.lossy_hosts if h >= layout.hosts), None)
        if bad is not None:
            raise McsimError(f"FabricConfig: lossy_hosts: {bad} is not a host (hosts are 0..{layout.hosts - 1})")
        lib.mcsim_fabric_set_lossy_hosts(fabric, u32(config.lossy_hosts), len(config.lossy_hosts))


def _set_routes(
    lib: Any, fabric: abi.Handle, switches: list[int], routes: subnet_manager.Routes, at_ps: int | None
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


def _set_faults(lib: Any, fabric: abi.Handle, layout: Layout, config: FabricConfig, faults: Faults) -> None:
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
