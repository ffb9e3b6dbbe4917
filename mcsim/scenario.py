# SPDX-License-Identifier: GPL-2.0-only
"""Scenario: a frozen, validated description of one collective run -> run() -> Result."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from mcsim import collectives, fabric, rdma, runtime, topology
from mcsim.errors import McsimError, pick
from mcsim.link import preset, with_link
from mcsim.result import Result
from mcsim.units import parse_rate, parse_size

MIN_DATA_TIMEOUT_PS = 50_000_000  # 50 us: the multicast data phase never times out sooner
VERIFY_MAX_BYTES = 64 << 20  # verify mode keeps each rank's output buffer in memory: small runs only


def pattern(source: int, n: int) -> np.ndarray:
    """The bytes source rank contributes in verify mode: they depend on the byte's offset, so a
    chunk delivered to the wrong place, twice or not at all shows."""
    j = np.arange(n, dtype=np.int64)
    return ((source * 251 + j * 7 + (j >> 9)) % 256).astype(np.uint8)


def expected_output(collective: str, ranks: int, n: int, root: int = 0) -> np.ndarray:
    """Every rank's output buffer when the collective is right: the shards in rank order
    (Allgather) or the root's buffer (Broadcast)."""
    if collective == "broadcast":
        return pattern(root, n)
    return np.concatenate([pattern(s, n) for s in range(ranks)])


def wrong_bytes(outputs: list[np.ndarray], expected: np.ndarray) -> np.ndarray:
    """Per rank: how many bytes of its output buffer differ from the expected one."""
    return np.array([int(np.count_nonzero(out != expected)) for out in outputs], dtype=np.int64)


@functools.lru_cache(maxsize=16)
def _topology(name: str) -> nx.Graph:
    return topology.resolve(name)


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """One collective on one fabric; strings carry units ("56Gbps", "1MiB")."""

    topology: str = "testbed-188"  # a name from topologies/ or a file
    rate: str | None = None  # every link at this nominal rate (56Gbps = FDR 64b/66b); None: as the file
    collective: str = "allgather"  # or "broadcast", "reduce_scatter"
    algorithm: str = "mcast"  # or "ring"
    bytes_per_rank: str = "1MiB"
    ranks: int | None = None  # ranks on hosts 0..ranks-1; None: every host
    roots: int = 2  # mcast Allgather: K roots at a time
    batch: int = 128  # mcast: datagrams posted before waiting for a completion
    mtu: str = "4KiB"
    ring_chunk: str = "64KiB"  # ring: bytes per pipelined RDMA WRITE
    timeout_scale: float = 5.0  # mcast: data phase timeout = scale x the receive bound
    root: int = 0  # Broadcast root rank
    rq_depth: int = 128  # receive buffers posted per UD QP (endpoint)
    endpoints: int = 1  # mcast: UD QPs per rank, chunks spread round-robin (one DPA thread each)
    staging: bool = True  # UD payloads land in staging buffers (else zero copy)
    wire_format: str = "infiniband"
    flow_control: str = "lossless"
    seed: int = 1  # ECMP hash and random loss
    loss: float = 0.0  # probability that a packet is lost on a link (every link, both directions)
    faults: fabric.Faults | None = None  # chosen drops, per-link loss, links down
    processor: Any = field(default_factory=rdma.HostCpuConfig)
    rc: rdma.RcConfig = field(default_factory=rdma.RcConfig)  # RC QP timeouts and retries (IB encodings)
    overlap: str | None = None  # "reduce_scatter": a ring Reduce-Scatter runs at once (FSDP)
    verify: bool = False  # carry real bytes (a pattern per rank) and check every byte of every output
    reduce_ps_per_byte: int = 0  # Reduce-Scatter: time to add one received byte

    def __post_init__(self) -> None:
        g = _topology(self.topology)
        n_hosts = topology.host_count(g)
        if self.rate is not None:
            parse_rate(self.rate, what="rate")
        collectives.TeamSpec(collective=self.collective, algorithm=self.algorithm, hosts=(0, 1), bytes_per_rank=1)
        if parse_size(self.bytes_per_rank, what="bytes_per_rank") == 0:
            raise McsimError(f"Scenario: bytes_per_rank={self.bytes_per_rank!r} must be > 0")
        p = self.n_ranks
        if not 2 <= p <= n_hosts:
            raise McsimError(f"Scenario: ranks={p} must be 2..{n_hosts} (the hosts of {self.topology})")
        if not 1 <= self.roots <= p:
            raise McsimError(f"Scenario: roots={self.roots} must be 1..{p} (the ranks)")
        if self.batch < 1 or self.rq_depth < 1 or self.endpoints < 1:
            raise McsimError(
                f"Scenario: batch={self.batch}, rq_depth={self.rq_depth} and endpoints={self.endpoints} must be >= 1"
            )
        if not 0 <= self.root < p:
            raise McsimError(f"Scenario: root={self.root} is not a rank (0..{p - 1})")
        if not self.timeout_scale > 0:
            raise McsimError(f"Scenario: timeout_scale={self.timeout_scale} must be > 0")
        mtu = parse_size(self.mtu, what="mtu")
        if mtu not in rdma.IB_MTUS:
            raise McsimError(f"Scenario: mtu={self.mtu!r} is not an MTU; choose one of {rdma.IB_MTUS} bytes")
        if parse_size(self.ring_chunk, what="ring_chunk") == 0:
            raise McsimError(f"Scenario: ring_chunk={self.ring_chunk!r} must be > 0")
        pick("flow control", self.flow_control, fabric.FLOW_CONTROLS)
        if self.verify:
            if self.collective == "reduce_scatter" or self.overlap is not None:
                raise McsimError("Scenario: verify=True checks Allgather and Broadcast outputs; sums are not modelled")
            size = self.bytes_per_rank_b * (1 if self.collective == "broadcast" else p)
            if size > VERIFY_MAX_BYTES:
                raise McsimError(
                    f"Scenario: verify=True keeps every output buffer in memory ({size} B per rank); "
                    f"verify mode is for small runs (<= {VERIFY_MAX_BYTES} B per rank)"
                )
        fabric.FabricConfig(loss=self.loss, seed=self.seed)  # validates loss and seed
        if self.faults is not None:
            self.faults.check(self.graph())
        if self.overlap is not None:
            pick("overlap", self.overlap, {"reduce_scatter": None})
            if self.collective != "allgather":
                raise McsimError(f"Scenario: overlap={self.overlap!r} goes with collective='allgather'")
        if (
            isinstance(self.reduce_ps_per_byte, bool)
            or not isinstance(self.reduce_ps_per_byte, int)
            or self.reduce_ps_per_byte < 0
        ):
            raise McsimError(f"Scenario: reduce_ps_per_byte={self.reduce_ps_per_byte!r} must be an integer >= 0")
        pick("wire format", self.wire_format, rdma.WIRE_FORMATS)

    @property
    def n_ranks(self) -> int:
        return self.ranks if self.ranks is not None else topology.host_count(_topology(self.topology))

    @property
    def bytes_per_rank_b(self) -> int:
        return parse_size(self.bytes_per_rank)

    def graph(self) -> nx.Graph:
        """The topology with the scenario's link rate."""
        g = _topology(self.topology)
        return with_link(g, preset(parse_rate(self.rate))) if self.rate is not None else g

    @property
    def data_rate_bps(self) -> int:
        """Data rate of host 0's link (after encoding)."""
        g = self.graph()
        return topology.data_rate_bps(g.edges[0, next(iter(g.neighbors(0)))])

    def data_timeout_ps(self) -> int:
        lacking = self.bytes_per_rank_b * (1 if self.collective == "broadcast" else self.n_ranks - 1)
        bound = lacking * 8 * 10**12 // self.data_rate_bps
        return max(int(self.timeout_scale * bound), MIN_DATA_TIMEOUT_PS)

    def run(self) -> Result:
        """Simulate the collective; every rank's output is checked chunk by chunk (its bitmap)."""
        g = self.graph()
        p, n = self.n_ranks, self.bytes_per_rank_b
        hosts = tuple(range(p))
        mtu = parse_size(self.mtu)
        rcfg = rdma.RdmaConfig(
            wire_format=self.wire_format,
            mtu_b=mtu,
            rq_depth=self.rq_depth,
            staging=self.staging,
            region_b=max(1, p * n),
            processor=self.processor,
            rc=self.rc,
        )
        cfg = rdma.fabric_config_for(
            rcfg,
            fabric.FabricConfig(flow_control=self.flow_control, ecmp_seed=self.seed, seed=self.seed, loss=self.loss),
        )
        spec = collectives.TeamSpec(
            collective=self.collective,
            algorithm=self.algorithm,
            hosts=hosts,
            bytes_per_rank=n,
            roots=self.roots,
            batch=self.batch,
            chunk_b=mtu if self.algorithm == "mcast" else parse_size(self.ring_chunk),
            data_timeout_ps=self.data_timeout_ps(),
            root=self.root,
            reduce_ps_per_byte=self.reduce_ps_per_byte,
            endpoints=self.endpoints,
        )
        specs = [spec]
        if self.overlap == "reduce_scatter":
            specs.append(
                collectives.TeamSpec(
                    collective="reduce_scatter",
                    algorithm="ring",
                    hosts=hosts,
                    bytes_per_rank=n,
                    chunk_b=parse_size(self.ring_chunk),
                    reduce_ps_per_byte=self.reduce_ps_per_byte,
                )
            )
        groups = [list(hosts)] * self.endpoints if self.algorithm == "mcast" else []
        expected = expected_output(self.collective, p, n, self.root) if self.verify else None
        outputs: list[np.ndarray] = []
        with fabric.build(g, groups=groups, config=cfg, faults=self.faults) as fab:
            stack = rdma.build_stack(fab, rcfg)
            if expected is not None:
                self._fill(stack, hosts, n, expected.size)
            teams = [collectives.start_team(fab.ns, stack, s) for s in specs]
            try:
                fab.run()
                stats = [collectives.team_stats(t) for t in teams]
                nic = rdma.read_nic_counters(stack, fab.n_hosts)
                fres = fab.collect()
                for h in hosts if expected is not None else ():
                    out = np.zeros(expected.size, dtype=np.uint8)
                    stack.GetNic(h).ReadMemory(0, out, out.size)
                    outputs.append(out)
            finally:
                runtime.dispose(*teams, stack)
        results = [self._result(s, st, nic, fres) for s, st in zip(specs, stats, strict=True)]
        if expected is not None:
            wrong = wrong_bytes(outputs, expected)
            results[0] = dataclasses.replace(results[0], verified=bool((wrong == 0).all()), wrong_bytes=wrong)
        if len(results) == 2:
            return dataclasses.replace(results[0], concurrent=results[1])
        return results[0]

    def _fill(self, stack: Any, hosts: tuple[int, ...], n: int, size: int) -> None:
        """Verify mode: every rank gets a region of real bytes; contributors hold their pattern."""
        for rank, h in enumerate(hosts):
            nic = stack.GetNic(h)
            nic.EnableMemory(size)
            if self.collective == "broadcast":
                if rank == self.root:
                    data = pattern(rank, n)
                    nic.WriteMemory(0, data, data.size)
            else:
                data = pattern(rank, n)
                nic.WriteMemory(rank * n, data, data.size)

    def _result(self, spec: collectives.TeamSpec, stats: dict, nic: dict, fres: fabric.FabricResult) -> Result:
        p = len(spec.hosts)
        never = stats["finish_ps"] == np.iinfo(np.uint64).max
        return Result(
            collective=spec.collective,
            algorithm=spec.algorithm,
            ranks=p,
            bytes_per_rank=spec.bytes_per_rank,
            data_rate_bps=self.data_rate_bps,
            finish_ps=np.where(never, -1, stats["finish_ps"].astype(np.int64)),
            injected_b=nic["tx_payload"][:p],
            received_b=nic["rx_payload"][:p],
            rank=stats,
            nic={k: v[:p] for k, v in nic.items()},
            fabric=fres,
        )
