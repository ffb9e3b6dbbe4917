# SPDX-License-Identifier: GPL-2.0-only
"""Scenario: a frozen, validated description of one collective run -> run() -> Result."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from mcsim import topology
from mcsim.bounds import lacking_b, output_b
from mcsim.config import codec
from mcsim.config.codec import PLAIN, GraphTopology, Plain, canonical_json
from mcsim.config.collectives import (
    HIERARCHICAL,
    RING_CHUNK_B,
    Part,
    TeamSpec,
    hierarchical_parts,
    parts_of,
    ring_blocks,
)
from mcsim.config.fabric import FABRIC, FabricConfig, Faults
from mcsim.config.ns3_attributes import sets
from mcsim.config.protocols import DEFAULT_PROTOCOL, ring_mtu_b
from mcsim.config.queue_trace import QueueTraceConfig
from mcsim.config.rdma import PcapConfig, RdmaConfig
from mcsim.config.setup import Setup, shared_graph
from mcsim.errors import McsimError, as_int
from mcsim.result import Placement, Result
from mcsim.runs import assemble, buffers, cost, packet_trace, scenario_checks, team_results
from mcsim.runs.assemble import Reduction
from mcsim.runs.protocol_plan import protocol_fields
from mcsim.runs.scenario_checks import BATCHINGS
from mcsim.runs.scenario_keywords import folded
from mcsim.runs.scenario_plan import ScenarioPlan
from mcsim.runs.verify import Expected
from mcsim.topology.nodes import nodes_of
from mcsim.units import PS_PER_S, format_size, parse_rate, parse_size

MIN_DATA_TIMEOUT_PS = 50_000_000  # 50 us: the multicast data phase never times out sooner


def artifact_protocol(rdma: RdmaConfig | None = None) -> dict[str, Any]:
    """The SC'24 artifact's protocol options, as Scenario keywords: ``Scenario(**artifact_protocol(), ...)``.

    Two RC barriers before the data phase, stop-and-wait batches of 128 datagrams, one outstanding
    repair READ, the timeout rule 5 x N(P-1)/LINK_BW (LINK_BW: the hosts' data rate; set
    ``timeout_rate`` for another), the wait for the FINs, and in ``rdma`` (default RdmaConfig())
    multicast loopback and send completions on a thread of their own (the artifact's TX thread).
    """
    rdma = RdmaConfig() if rdma is None else rdma
    return {
        "barriers": 2,
        "batching": "stop_and_wait",
        "batch": 128,
        "repair_reads": 1,
        "fin_wait": True,
        "timeout_scale": 5.0,
        "rdma": dataclasses.replace(rdma, multicast_loopback=True, send_completions="separate"),
    }


# the default of each collective tunable (roots, batch, root, endpoints, reduce_ps_per_byte) is TeamSpec's
TEAM_DEFAULTS: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(TeamSpec)}
SCHEMA = "mcsim.Scenario/8"  # the "schema" of a canonical dict; a change of its keys gets a new one


@functools.lru_cache(maxsize=16)
def _diameter_hops(topo: str | GraphTopology) -> int:
    return topology.diameter_hops(shared_graph(topo))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Scenario:
    """One collective on one fabric: the workload, the topology, and the typed configs it runs with.

    Every field is given one way, by its keyword. Strings carry units ("56Gbps", "1MiB").
    ``fabric`` (FabricConfig) and ``rdma`` (RdmaConfig) hold every fabric and NIC setting: the MTU is
    ``rdma=RdmaConfig(mtu_b=2048)``, the seed ``fabric=FabricConfig(seed=3, ecmp_seed=3)`` (the CLI's
    flags and a sweep's short names fold into them: mcsim.runs.scenario_keywords). The Scenario sizes
    ``rdma.region_b`` (the output buffer) and ``fabric.header_b`` (the wire format's overhead); the
    collective tunables (roots, batch, ...) default to TeamSpec's.

    ``topology`` is a name from topologies/, a file (str or path), or a networkx graph (copied, kept
    as canonical data). Two Scenarios are equal when their canonical dicts are (:meth:`to_dict`:
    "1MiB" equals 1048576, ranks=None equals every host); :meth:`key` is the hash of that dict.
    """

    topology: str | GraphTopology = field(default="testbed-188", metadata={PLAIN: codec.TOPOLOGY_PLAIN})
    # every link at this nominal rate (56Gbps = FDR 64b/66b); None: as the file
    rate: str | None = field(default=None, metadata=codec.rate_plain("nominal_rate_bps"))
    collective: str = "allgather"  # "allgather", "broadcast", "reduce_scatter" or "allreduce"
    # "mcast", "ring", "innet" (in-network reduction), ...: ALGORITHMS and TWO_PHASE in mcsim.config.collectives
    algorithm: str = "mcast"
    bytes_per_rank: str | int = field(default="1MiB", metadata=codec.size_plain("bytes_per_rank_b"))
    # ranks on hosts 0..ranks-1; None: every host (the canonical dict holds the count)
    ranks: int | None = field(default=None, metadata={PLAIN: Plain(None, lambda sc, _: sc.n_ranks)})
    roots: int = TEAM_DEFAULTS["roots"]  # mcast Allgather: K roots at a time
    batch: int = TEAM_DEFAULTS["batch"]  # mcast: datagrams posted before waiting for a completion
    batching: str = "window"  # mcast: "window" (sliding, batch posted) or "stop_and_wait" (the artifact's)
    barriers: int = TEAM_DEFAULTS["barriers"]  # mcast: RC barriers before the data phase (the artifact runs 2)
    repair_reads: int = TEAM_DEFAULTS["repair_reads"]  # mcast: repair READs outstanding (0: all at once)
    fin_wait: bool = TEAM_DEFAULTS["fin_wait"]  # mcast: done when its FIN is ACKed and r-1's FIN is in
    # ring: bytes per pipelined WRITE
    ring_chunk: str | int = field(default=format_size(RING_CHUNK_B), metadata=codec.size_plain("ring_chunk_b"))
    # mcast: data phase timeout = scale x the receive bound
    timeout_scale: float = field(default=5.0, metadata={PLAIN: Plain(None, lambda _, v: float(v))})
    # the rate that bound divides by (the artifact's LINK_BW); None: the hosts' data rate
    timeout_rate: str | None = field(default=None, metadata=codec.rate_plain("timeout_rate_bps"))
    root: int = TEAM_DEFAULTS["root"]  # Broadcast root rank
    endpoints: int = TEAM_DEFAULTS["endpoints"]  # mcast: UD QPs per rank, chunks round-robin (a DPA thread each)
    overlap: str | None = None  # "reduce_scatter": a Reduce-Scatter runs at once (FSDP)
    overlap_algorithm: str = "ring"  # the overlap's algorithm: "ring" or "innet"
    verify: bool = field(default=False, metadata=sets(FABRIC, "SumPayloads"))  # real bytes, every output checked
    # host reductions (ring Reduce-Scatter, ring Allreduce): time to add one byte (0: free)
    reduce_ps_per_byte: int = TEAM_DEFAULTS["reduce_ps_per_byte"]
    # NCCL's protocol of its rings and trees: "none" (mcsim's own), "simple", "ll", "ll128" (mcsim.config.protocols)
    nccl_protocol: str = DEFAULT_PROTOCOL
    faults: Faults | None = field(default=None, metadata={PLAIN: codec.FAULTS_PLAIN})  # drops, loss, links down
    fabric: FabricConfig = field(default_factory=FabricConfig, metadata=codec.config_plain(FabricConfig))
    rdma: RdmaConfig = field(default_factory=RdmaConfig, metadata=codec.config_plain(RdmaConfig))

    def __post_init__(self) -> None:
        """Check every value (type, then range) before any C++ object exists: one McsimError line."""
        put = functools.partial(object.__setattr__, self)
        topo: Any = self.topology
        if isinstance(topo, os.PathLike):
            topo = os.fspath(topo)
        put("topology", GraphTopology.of(topo) if isinstance(topo, nx.Graph) else topo)
        for f in dataclasses.fields(self):
            put(f.name, as_int(getattr(self, f.name)))
        scenario_checks.check_types(self)
        put("fabric", FabricConfig() if self.fabric is None else self.fabric)
        put("rdma", RdmaConfig() if self.rdma is None else self.rdma)
        scenario_checks.check_fields(self)

    def unread(self) -> tuple[str, ...]:
        """The tunables given other values than their defaults that this run does not read (e.g. endpoints with
        the ring algorithm): buffers.read_tunables."""
        reads = buffers.read_tunables(self.plan().parts, self.collective, self.overlap, self.overlap_algorithm)
        defaults = {**FIELD_DEFAULTS, "ring_chunk": RING_CHUNK_B}
        given = {**{n: getattr(self, n) for n in buffers.TUNABLES}, "ring_chunk": self.ring_chunk_b}
        return tuple(n for n in buffers.TUNABLES if n not in reads and given[n] != defaults[n])

    @property
    def setup(self) -> Setup:
        """What the run shares with every run on its fabric: its topology, rate, fabric, rdma and faults."""
        return Setup(topology=self.topology, rate=self.rate, fabric=self.fabric, rdma=self.rdma, faults=self.faults)

    def plan(self) -> ScenarioPlan:
        """The teams its collective runs on ranks 0..P-1 and what they need of the fabric: what its checks, its
        buffers, its cost and a run of jobs read of it."""
        p, n = self.n_ranks, self.bytes_per_rank_b
        ring = self.algorithm in ("ring", "ring_mcast")
        where = self.placement()
        parts = (
            parts_of(self.collective, self.algorithm, n, p)
            if where is None
            else hierarchical_parts(self.collective, self.algorithm, n, where.nodes, where.gpus)
        )
        return ScenarioPlan(  # (a name may be several collectives': nvls_ring's Reduce-Scatter multicasts nothing)
            parts=tuple(parts),
            ranks=p,
            multicast=any(q.algorithm == "mcast" for q in parts),
            in_network=any(q.algorithm == "innet" for q in parts)
            or (self.overlap is not None and self.overlap_algorithm == "innet"),
            sources=1 if self.collective == "broadcast" else p,
            rings=ring + (self.overlap == "reduce_scatter" and self.overlap_algorithm == "ring"),
            lacking_b=lacking_b(self.collective, n, p),
        )

    def placement(self) -> Placement | None:
        """A hierarchical collective's nodes and rails (its ranks: the first P / G nodes' GPUs), else None."""
        if (self.collective, self.algorithm) not in HIERARCHICAL:
            return None
        nodes = nodes_of(self.setup.graph())
        if nodes is None:
            raise McsimError(f"Scenario: algorithm={self.algorithm!r} needs nodes of several GPUs")
        return Placement(nodes=self.n_ranks // nodes.gpus, gpus=nodes.gpus, nvlink_rate_bps=nodes.nvlink_bps)

    @property
    def n_ranks(self) -> int:
        return self.ranks if self.ranks is not None else self.setup.hosts

    @property
    def bytes_per_rank_b(self) -> int:
        return parse_size(self.bytes_per_rank)

    @property
    def ring_chunk_b(self) -> int:
        return parse_size(self.ring_chunk)

    def graph(self) -> nx.Graph[Any]:
        """The topology with the scenario's link rate: the caller's own copy (changing it changes no
        Scenario)."""
        return self.setup.graph().copy()

    @property
    def data_rate_bps(self) -> int:
        """The data rate the ranks reach each other at (after encoding): host 0's link; on nodes of several GPUs
        NVLink's within one node, the NICs' across nodes (:meth:`mcsim.topology.nodes.Nodes.rate_bps`)."""
        nodes = nodes_of(self.setup.graph())
        return self.setup.data_rate_bps if nodes is None else nodes.rate_bps(range(self.n_ranks))

    def data_timeout_ps(self) -> int:
        rate = self.data_rate_bps if self.timeout_rate is None else parse_rate(self.timeout_rate)
        bound = self.plan().lacking_b * 8 * PS_PER_S // rate
        return max(int(self.timeout_scale * bound), MIN_DATA_TIMEOUT_PS)

    @property
    def output_b(self) -> int:
        """Each rank's output buffer: P shards (Allgather, Reduce-Scatter: its input, its block summed in
        place) or one buffer (Broadcast, Allreduce)."""
        return output_b(self.collective, self.bytes_per_rank_b, self.n_ranks)

    def _shape(self) -> cost.RunShape:
        g, plan = self.setup.base_graph(), self.plan()
        ring = self.algorithm == "ring"
        # the ring algorithm's phases and block, or a Reduce-Scatter's (the overlap's, ring_mcast's first phase)
        own, block = ring_blocks(self.collective, self.bytes_per_rank_b, self.n_ranks) if ring else (0, 0)
        block = block if ring else plan.parts[0].bytes_per_rank_b
        hosts = topology.host_count(g)
        return cost.RunShape(
            hosts=hosts,
            switches=g.number_of_nodes() - hosts,
            links=g.number_of_edges(),
            ranks=self.n_ranks,
            shard_b=self.bytes_per_rank_b,
            output_b=self.output_b,
            sources=plan.sources,
            ring_phases=own + plan.rings - ring,
            ring_block_b=block,
            buffer_transfers=buffers.buffer_transfers(self),
            mcast_shard_b=plan.parts[-1].bytes_per_rank_b if plan.multicast else 0,
            mtu_b=ring_mtu_b(self.nccl_protocol, self.rdma.mtu_b),  # a protocol runs on rings alone
            ring_chunk_b=self.ring_chunk_b,
            verify=self.verify,
            innet_chunks=self._innet_chunks(),
            halving_b=self.bytes_per_rank_b if self.algorithm == "halving_doubling" else 0,
            **self._team_packets(plan),
        )

    def _team_packets(self, plan: ScenarioPlan) -> dict[str, int]:
        """A hierarchical collective's teams' packets, each team a ring, a tree or a multicast of its own
        (cost.RunShape)."""
        ring = mcast = 0
        for q in plan.parts:
            if q.hosts is None:  # only a hierarchical collective's teams sit on some of the ranks
                continue
            k, n = len(q.hosts), q.bytes_per_rank_b
            packets = cost.packets(n, self.ring_chunk_b, ring_mtu_b(self.nccl_protocol, self.rdma.mtu_b))
            if q.algorithm == "mcast":
                mcast += k * -(-n // self.rdma.mtu_b)
            elif q.algorithm == "tree":  # a tree's edges carry its buffer up and the sum down: 2(k-1) sends
                ring += 2 * (k - 1) * packets
            else:  # a ring: k ranks send k-1 blocks each
                ring += k * (k - 1) * packets
        return {"team_ring_packets": ring, "team_mcast_chunks": mcast}

    def _innet_chunks(self) -> int:
        """Chunks (of the MTU) each rank sends into the switches' sums: its in-network parts' (a Reduce-Scatter's
        blocks of N, one per rank of its team, each cut on its own; an Allreduce's buffer), and the overlapped
        in-network Reduce-Scatter's."""
        phases: dict[int, tuple[str, int, int]] = {}  # a rank is in one team of a phase: its phase's first team
        for q in self.plan().parts:
            if q.algorithm == "innet":
                phases.setdefault(q.phase, (q.collective, q.bytes_per_rank_b, len(q.hosts or range(self.n_ranks))))
        parts = list(phases.values())
        if self.overlap == "reduce_scatter" and self.overlap_algorithm == "innet":
            parts.append(("reduce_scatter", self.bytes_per_rank_b, self.n_ranks))
        return sum(-(-n // self.rdma.mtu_b) * (k if c == "reduce_scatter" else 1) for c, n, k in parts)

    def estimate(self) -> dict[str, int]:
        """What the run will cost, before it runs (no C++; one BFS per switch that has hosts, cached):
        packets on links, hop and tree bounds, memory by part (see :func:`mcsim.runs.cost.estimate`)."""
        return cost.estimate(self._shape(), _diameter_hops(self.topology))

    def check_resources(self, available_b: int | None = None) -> None:
        """Raise McsimError (one line) if the run needs more memory than the machine has available.

        ``available_b`` defaults to :func:`machine.available_memory_b` (the least of MemAvailable, what
        ``ulimit -v``/``-d`` and the cgroup's memory limit leave this process); nothing is checked
        if that is unknown. Only the memory parts of :meth:`estimate` are computed (no graph walk).
        """
        cost.check_memory(self._shape(), available_b)

    def teams(self, reduction: Reduction | None = None, *more: Reduction) -> list[TeamSpec]:
        """The collectives of the run on ranks 0..P-1: the scenario's (two for a TWO_PHASE collective, the
        second started when the first has ended everywhere; a HIERARCHICAL one's phase by phase), and the
        Reduce-Scatter of overlap.

        Multicast groups: a multicast team's endpoints come first; an in-network reduction's
        aggregation trees follow them, each also a group. The trees are the built fabric's
        (``reduction``, ``more``: BuiltFabric.reductions, planned once by fabric.build from
        :meth:`reduction_hosts`, one per in-network team in order), so a run with an in-network reduction has its
        teams only once its fabric exists."""
        plan = self.plan()
        reductions = [r for r in (reduction, *more) if r is not None]
        parts = self._parts()
        innet = [i for i, part in enumerate(parts) if part.algorithm == "innet"]
        if len(reductions) < len(innet):
            raise McsimError("Scenario.teams: an in-network reduction's teams need its built fabric's Reduction")
        trees = len(reductions[0].trees) if plan.in_network else 1
        mcast = [i for i, part in enumerate(parts) if part.algorithm == "mcast"]
        groups = [mcast.index(i) if i in mcast else len(mcast) for i in range(len(parts))]
        specs = [self._spec(part, trees, self.endpoints * g) for part, g in zip(parts, groups, strict=True)]
        for i, r in zip(innet, reductions, strict=False):  # each in-network team on its own trees
            specs[i] = dataclasses.replace(specs[i], group=r.first_group, first_tree=r.first_tree, trees=len(r.trees))
        return specs

    def reduction_hosts(self) -> list[list[int]]:
        """The hosts of each in-network team of the run, in :meth:`teams`' order (fabric.build's ``reductions``:
        an aggregation tree each): the collective's (a hierarchical NVLS one's: one per node), then the overlap's."""
        return [list(q.hosts or range(self.n_ranks)) for q in self._parts() if q.algorithm == "innet"]

    def _parts(self) -> list[Part]:
        """The run's teams as parts: the plan's, then the overlapped Reduce-Scatter."""
        parts = list(self.plan().parts)
        if self.overlap == "reduce_scatter":
            n = self.bytes_per_rank_b
            parts.append(Part(collective="reduce_scatter", algorithm=self.overlap_algorithm, bytes_per_rank_b=n))
        return parts

    def _spec(self, part: Part, trees: int, group: int) -> TeamSpec:
        """One team on its part's ranks (all P by default) with the scenario's tunables (each rank type reads its
        own); the multicast teams' groups first (``group``: its first), the others' after them."""
        algorithm = part.algorithm
        return TeamSpec(
            collective=part.collective,
            algorithm=algorithm,
            hosts=part.hosts or tuple(range(self.n_ranks)),
            bytes_per_rank_b=part.bytes_per_rank_b,
            tree_shape=part.tree_shape,
            buffer_offset_b=part.buffer_offset_b,
            scratch_offset_b=part.scratch_offset_b,
            region_offset_b=part.region_offset_b,
            group=group,
            trees=trees,
            roots=self.roots if part.roots is None else part.roots,
            batch=self.batch,
            stop_and_wait=BATCHINGS[self.batching],
            barriers=self.barriers,
            repair_reads=self.repair_reads,
            fin_wait=self.fin_wait,
            chunk_b=self.rdma.mtu_b if algorithm in ("mcast", "innet") else self.ring_chunk_b,
            data_timeout_ps=self.data_timeout_ps(),
            root=self.root,
            reduce_ps_per_byte=self.reduce_ps_per_byte,
            endpoints=self.endpoints,
            **self._protocol_fields(part),
        )

    def _protocol_fields(self, part: Part) -> dict[str, int]:
        """The protocol's settings of a ring or tree team (mcsim.runs.protocol_plan); {} without a protocol."""
        if self.nccl_protocol == DEFAULT_PROTOCOL:
            return {}
        g = self.graph()
        hosts = part.hosts or tuple(range(self.n_ranks))
        return protocol_fields(
            self.nccl_protocol,
            part.algorithm,
            hosts,
            g,
            nodes_of(g),
            self.fabric.switch_latency_ps,
            self.rdma.send_latency_ps + self.rdma.receive_latency_ps,
            first_phase=part.phase == 0,
        )

    def run(
        self, *, events: bool = False, pcap: PcapConfig | None = None, queue_trace: QueueTraceConfig | None = None
    ) -> Result:
        """Simulate the collective; every rank's output is checked chunk by chunk (its bitmap). With
        ``events``, every rank records its protocol events (:meth:`Result.events`); with ``pcap``, the
        frames of its hosts go to pcap files (``Result.pcap_files``); with ``queue_trace``, the output
        queues of its ports are sampled (``Result.fabric.queue_trace``).

        Raises
        ------
        McsimError
            Before the run, if it needs more memory than the process can take (:meth:`check_resources`);
            after it, one line instead of a traceback if a Python allocation still fails (the estimate
            does not count the C++ packets and events in flight).
        """
        self.check_resources()
        if pcap is not None:
            packet_trace.check_traceable(self.rdma.congestion)
        try:
            return self._run(events, pcap, queue_trace)
        except MemoryError:
            need = sum(cost.memory_parts_b(self._shape()).values()) / 2**30
            raise McsimError(
                f"Scenario.run: out of memory (a Python allocation failed) although the run was estimated at "
                f"~{need:.3g} GiB; use fewer ranks or a smaller bytes_per_rank"
                + (", or verify=False" if self.verify else "")
            ) from None

    def _run(self, events: bool, pcap: PcapConfig | None = None, queue_trace: QueueTraceConfig | None = None) -> Result:
        plan, n = self.plan(), self.bytes_per_rank_b
        hosts = tuple(range(plan.ranks))
        groups = [list(q.hosts or hosts) for q in plan.parts if q.algorithm == "mcast" for _ in range(self.endpoints)]
        reductions = self.reduction_hosts()
        expected = Expected(self.collective, len(hosts), n, self.root) if self.verify else None
        where = self.placement()
        ranks = [h if where is None else where.position(h) for h in hosts]  # the expected output each host holds
        outputs: list[np.ndarray] = []
        layout = self.setup.layout()
        with assemble.assembled(
            layout,
            fabric_config=self.fabric,
            rdma_config=self.rdma,
            attributes=self,
            groups=groups,
            faults=self.faults,
            reductions=reductions,
            slot_b=self.rdma.mtu_b,
        ) as run:
            specs = self.teams(*run.reductions)
            if expected is not None:
                run.fill(expected, buffers.verify_memory_b(self), ranks)
            teams: list[Any] = []
            for s, after in zip(specs, self._afters(len(specs)), strict=True):
                teams.append(run.start_team(s, after=[teams[j] for j in after], events=events))
            files = run.run(pcap=pcap, queue_trace=queue_trace, layout=layout)
            stats = [run.team_stats(t) for t in teams]
            log = np.concatenate([run.team_events(t, i) for i, t in enumerate(teams)]) if events else None
            nic = run.nic_counters()
            cc = run.cc_counters() if self.rdma.congestion is not None else None
            fres = run.collect()
            if expected is not None:
                outputs = [run.read_memory(h, expected.output_b) for h in hosts]
        faults = self.faults or Faults()
        rate = self.data_rate_bps
        nodes = nodes_of(self.setup.graph())
        rates = [rate if nodes is None or where is None else nodes.rate_bps(s.hosts) for s in specs]
        results = [
            team_results.of_team(s, st, nic, fres, r, faults) for s, st, r in zip(specs, stats, rates, strict=True)
        ]
        parts = len(plan.parts)
        result = team_results.phased(
            specs[:parts],
            results[:parts],
            plan.parts,
            (self.collective, self.algorithm, self.bytes_per_rank_b),
            where,
            rate,
        )
        if self.overlap is not None:
            result = dataclasses.replace(result, concurrent=results[parts])
        if log is not None:
            result = dataclasses.replace(result, protocol_events=log)
        if files is not None:
            result = dataclasses.replace(result, pcap_files=files)
        if cc is not None:
            result = dataclasses.replace(result, congestion={k: v[: len(hosts)] for k, v in cc.items()})
        if expected is not None:
            owned = where is not None
            wrong = np.array([expected.wrong_b(r, out, owned) for r, out in zip(ranks, outputs, strict=True)])
            result = dataclasses.replace(result, verified=bool((wrong == 0).all()), wrong_bytes=wrong)
        return result

    def _afters(self, teams: int) -> list[list[int]]:
        """Per team of the run: the teams it starts after (every team of the phase before its own), or none."""
        parts = self.plan().parts
        afters = [[j for j, q in enumerate(parts) if q.phase == part.phase - 1] for part in parts]
        return afters + [[] for _ in range(teams - len(afters))]

    # -----------------------------------------------------------------------------------------
    # as plain data

    def to_dict(self) -> dict[str, Any]:
        """The canonical dict: JSON types only, every field (defaults included) under the key its
        metadata names (sizes and rates in the units their keys name), ``ranks`` resolved; a graph
        topology as its node-link data."""
        return {"schema": SCHEMA, **codec.fields_to_dict(self)}

    @classmethod
    def from_dict(cls, data: object) -> Scenario:
        """The Scenario of a canonical dict (:meth:`to_dict`); anything else is one McsimError line."""
        where = "Scenario.from_dict"
        codec.require_shallow(where, data)
        d = codec.require_dict(where, data, CANONICAL_KEYS)
        if d["schema"] != SCHEMA:
            raise McsimError(f"{where}: schema={d['schema']!r} is not {SCHEMA!r} (not a mcsim Scenario dict)")
        return cls(**codec.fields_from_dict(cls, d, where))

    def to_json(self) -> str:
        """The canonical dict as JSON: sorted keys, no spaces; equal Scenarios give equal text."""
        return canonical_json(self.to_dict(), "Scenario")

    @classmethod
    def from_json(cls, text: str | bytes) -> Scenario:
        try:
            data = json.loads(text)
        except (TypeError, ValueError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise McsimError(f"Scenario.from_json: not JSON ({exc})") from None
        except RecursionError:
            raise McsimError("Scenario.from_json: not a mcsim Scenario (arrays or objects nested too deep)") from None
        return cls.from_dict(data)

    def key(self) -> str:
        """A stable content hash: the sha256 (hex) of :meth:`to_json`; equal iff the dicts are."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Scenario):
            return NotImplemented
        return self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash(self.to_json())


def scenario_of(**keywords: Any) -> Scenario:
    """The Scenario of Scenario's keywords and SHORT_NAMES (``mtu="2KiB"``, ``seed=3``, ...).

    Raises
    ------
    McsimError
        A short name's value of the wrong type or range, or a short name and the same field of a
        given config with different values (one field given two ways).
    """
    return Scenario(**folded(keywords))


FIELD_DEFAULTS: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(Scenario)}
# the canonical dict's keys: the schema and every field's (sizes and rates in the units their keys name)
CANONICAL_KEYS = tuple(sorted(("schema", *codec.plain_keys(Scenario))))
