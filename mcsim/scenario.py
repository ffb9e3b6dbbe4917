# SPDX-License-Identifier: GPL-2.0-only
"""Scenario: a frozen, validated description of one collective run -> run() -> Result."""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from mcsim import collectives, fabric, machine, rdma, topology
from mcsim.errors import McsimError, is_integer, pick, require_int
from mcsim.physics import Link, preset
from mcsim.result import FabricResult, Result
from mcsim.simulation import Simulation
from mcsim.units import parse_rate, parse_size

MIN_DATA_TIMEOUT_PS = 50_000_000  # 50 us: the multicast data phase never times out sooner
# verify mode is a check for small runs: each rank's output is generated, copied out of C++ and
# compared byte by byte in numpy; Scenario.check_resources() bounds the memory of all ranks together
VERIFY_MAX_BYTES = 64 << 20

# upper bounds of Scenario fields; the reason goes into the error message
MAX_QP_WR = 32768  # work requests one queue holds (ibv_query_device max_qp_wr of ConnectX NICs)
QP_WR_WHY = f" (a ConnectX queue holds at most {MAX_QP_WR} work requests, max_qp_wr)"
MAX_ENDPOINTS = 16383  # multicast LIDs of an InfiniBand subnet (0xC000..0xFFFE)
ENDPOINTS_WHY = (
    ": each endpoint is one UD QP per rank in a multicast group of its own, and an InfiniBand subnet has "
    f"{MAX_ENDPOINTS} multicast LIDs (a NIC has 65535 QPs)"
)
MAX_MESSAGE_B = 2**31  # the largest InfiniBand message (one RDMA WRITE): 2 GiB
MCAST_MAX_CHUNKS = 2**24 - 1  # the multicast chunk id is 24 bits of the UD immediate
RING_MAX_CHUNKS = 2**32 - 1  # the ring chunk id is the WRITE's 32-bit immediate
MAX_PSNS = 2**32 - 1  # packets one RC QP may send: its 32-bit PSNs must not wrap within a run
MAX_TIME_PS = 2**63 - 1  # ns-3 Time in ps is a signed 64-bit integer (106 days)

# Scenario.estimate(): memory besides the run's own buffers, and what each buffer byte costs
PROCESS_B = 300 << 20  # Python, numpy, networkx, cppyy and the ns-3 libraries (measured ~210-300 MB)
PATTERN_TEMP_B_PER_BYTE = 24  # pattern(): int64 temporaries per byte of a shard (measured: 24)
RC_WQE_B = 64  # one posted RDMA WRITE in a QP's send queue (RcQp::Wqe in a std::deque)


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
def _topology(name: str, rate: str | None = None) -> nx.Graph:
    """The topology, every link at the nominal ``rate`` if given, shared by every Scenario that
    names them: frozen (read-only); Scenario.graph() hands out copies."""
    g = topology.resolve(name) if rate is None else topology.with_link(_topology(name), preset(parse_rate(rate)))
    return nx.freeze(g)


@functools.lru_cache(maxsize=16)
def _diameter_hops(name: str) -> int:
    return topology.diameter_hops(_topology(name))


def _packets(size_b: int, message_b: int, mtu_b: int) -> int:
    """Packets that carry size_b bytes sent as messages of message_b bytes, each cut at mtu_b."""
    full, rest = divmod(size_b, message_b)
    return full * -(-message_b // mtu_b) + -(-rest // mtu_b)


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
        """Check every field (type, then range) before any C++ object exists: one McsimError line.
        Integers of other types (numpy's) are stored as Python ints: a Scenario is plain data."""
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if is_integer(value) and type(value) is not int:
                object.__setattr__(self, f.name, int(value))
        self._check_types()
        n_hosts = topology.host_count(_topology(self.topology))
        if self.rate is not None:
            parse_rate(self.rate, what="Scenario: rate")
        collectives.TeamSpec(collective=self.collective, algorithm=self.algorithm, hosts=(0, 1), bytes_per_rank=1)
        n = parse_size(self.bytes_per_rank, what="Scenario: bytes_per_rank")
        if n == 0:
            raise McsimError(f"Scenario: bytes_per_rank={self.bytes_per_rank!r} must be > 0")
        if n_hosts < 2:
            raise McsimError(f"Scenario: topology={self.topology!r} has {n_hosts} host; a collective needs 2")
        if self.ranks is not None:
            require_int("Scenario", "ranks", self.ranks, lo=2, hi=n_hosts, why=f" (the hosts of {self.topology})")
        p = self.n_ranks
        require_int("Scenario", "roots", self.roots, lo=1, hi=p, why=" (the ranks)")
        require_int("Scenario", "root", self.root, lo=0, hi=p - 1, why=" (a rank)")
        require_int("Scenario", "batch", self.batch, lo=1, hi=MAX_QP_WR, why=QP_WR_WHY)
        require_int("Scenario", "rq_depth", self.rq_depth, lo=1, hi=MAX_QP_WR, why=QP_WR_WHY)
        require_int("Scenario", "endpoints", self.endpoints, lo=1, hi=MAX_ENDPOINTS, why=ENDPOINTS_WHY)
        require_int("Scenario", "seed", self.seed, lo=0, hi=fabric.MAX_SEED)
        require_int("Scenario", "reduce_ps_per_byte", self.reduce_ps_per_byte, lo=0)
        mtu = parse_size(self.mtu, what="Scenario: mtu")
        if mtu not in rdma.IB_MTUS:
            raise McsimError(f"Scenario: mtu={self.mtu!r} is not an MTU; choose one of {rdma.IB_MTUS} bytes")
        ring_chunk = parse_size(self.ring_chunk, what="Scenario: ring_chunk")
        if not 0 < ring_chunk <= MAX_MESSAGE_B:
            raise McsimError(
                f"Scenario: ring_chunk={self.ring_chunk!r} must be 1..{MAX_MESSAGE_B} B (2 GiB: the largest "
                "InfiniBand message, one RDMA WRITE)"
            )
        self._check_chunk_ids(p, n, mtu, ring_chunk)
        self._check_timeout()
        pick("flow control", self.flow_control, fabric.FLOW_CONTROLS)
        pick("wire format", self.wire_format, rdma.WIRE_FORMATS)
        if self.verify:
            if self.collective == "reduce_scatter" or self.overlap is not None:
                raise McsimError("Scenario: verify=True checks Allgather and Broadcast outputs; sums are not modelled")
            size = self.output_b
            if size > VERIFY_MAX_BYTES:
                raise McsimError(
                    f"Scenario: verify=True keeps every output buffer in memory ({size} B per rank); "
                    f"verify mode is for small runs (<= {VERIFY_MAX_BYTES} B per rank)"
                )
        fabric.FabricConfig(loss=self.loss, seed=self.seed)  # validates loss
        if self.faults is not None:
            self.faults.check(self._graph())
        if self.overlap is not None:
            pick("overlap", self.overlap, {"reduce_scatter": None})
            if self.collective != "allgather":
                raise McsimError(f"Scenario: overlap={self.overlap!r} goes with collective='allgather'")

    def _check_types(self) -> None:
        """Fields whose type is wrong, before any of them is used in a comparison."""
        for name in ("topology", "collective", "algorithm", "wire_format", "flow_control"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise McsimError(f"Scenario: {name}={value!r} must be a string")
        for name in ("staging", "verify"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise McsimError(f"Scenario: {name}={value!r} must be True or False")
        scale = self.timeout_scale
        if isinstance(scale, bool) or not isinstance(scale, int | float) or not 0 < scale < math.inf:
            raise McsimError(f"Scenario: timeout_scale={scale!r} must be a finite number > 0 (int or float)")
        if self.faults is not None and not isinstance(self.faults, fabric.Faults):
            raise McsimError(f"Scenario: faults={self.faults!r} must be a mcsim.fabric.Faults or None")
        if not isinstance(self.rc, rdma.RcConfig):
            raise McsimError(f"Scenario: rc={self.rc!r} must be a mcsim.rdma.RcConfig")
        if not callable(getattr(self.processor, "factory", None)):
            raise McsimError(
                f"Scenario: processor={self.processor!r} has no factory(ns); use HostCpuConfig() or DpaConfig()"
            )
        if self.overlap is not None and not isinstance(self.overlap, str):
            raise McsimError(f"Scenario: overlap={self.overlap!r} must be None or 'reduce_scatter'")

    def _check_chunk_ids(self, p: int, n: int, mtu: int, ring_chunk: int) -> None:
        """The chunk ids and PSNs the C++ collectives use must fit their integers."""
        sources = self._sources
        if self.algorithm == "mcast":
            chunks = sources * -(-n // mtu)
            if chunks > MCAST_MAX_CHUNKS:
                raise McsimError(
                    f"Scenario: bytes_per_rank={self.bytes_per_rank!r} makes {chunks} multicast chunks of {mtu} B "
                    f"({sources} shards); the chunk id has 24 bits (at most {MCAST_MAX_CHUNKS}): use a smaller "
                    "shard or fewer ranks"
                )
        if self._rings:
            chunks = p * -(-n // ring_chunk)
            if chunks > RING_MAX_CHUNKS:
                raise McsimError(
                    f"Scenario: bytes_per_rank={self.bytes_per_rank!r} makes {chunks} ring chunks of {ring_chunk} B; "
                    f"the chunk id is the WRITE's 32-bit immediate (at most {RING_MAX_CHUNKS}): raise ring_chunk"
                )
            packets = (p - 1) * _packets(n, ring_chunk, mtu)
            if packets > MAX_PSNS:
                raise McsimError(
                    f"Scenario: bytes_per_rank={self.bytes_per_rank!r} sends {packets} packets over each ring QP; "
                    f"RC PSNs are 32-bit and must not wrap in a run (at most {MAX_PSNS}): use a smaller shard"
                )

    def _check_timeout(self) -> None:
        if self.algorithm != "mcast":
            return
        try:
            timeout_ps: float = self.data_timeout_ps()
        except OverflowError:  # timeout_scale x the bound is past the largest float
            timeout_ps = math.inf
        if timeout_ps > MAX_TIME_PS:
            raise McsimError(
                f"Scenario: timeout_scale={self.timeout_scale!r} makes a data timeout of {timeout_ps:.3g} ps, "
                f"past the simulator's clock (at most {MAX_TIME_PS} ps = 106 days)"
            )

    @property
    def n_ranks(self) -> int:
        return self.ranks if self.ranks is not None else topology.host_count(_topology(self.topology))

    @property
    def bytes_per_rank_b(self) -> int:
        return parse_size(self.bytes_per_rank)

    def graph(self) -> nx.Graph:
        """The topology with the scenario's link rate: the caller's own copy (changing it changes no
        Scenario)."""
        return self._graph().copy()

    def _graph(self) -> nx.Graph:
        """The topology with the scenario's link rate, for reading only (shared)."""
        return _topology(self.topology, self.rate)

    @property
    def data_rate_bps(self) -> int:
        """Data rate of host 0's link (after encoding)."""
        g = self._graph()
        return Link.from_edge(g.edges[0, next(iter(g.neighbors(0)))]).data_rate_bps

    def data_timeout_ps(self) -> int:
        lacking = self.bytes_per_rank_b * (1 if self.collective == "broadcast" else self.n_ranks - 1)
        bound = lacking * 8 * 10**12 // self.data_rate_bps
        return max(int(self.timeout_scale * bound), MIN_DATA_TIMEOUT_PS)

    @property
    def _sources(self) -> int:
        """Ranks that contribute a shard: every rank, or the root of a Broadcast."""
        return 1 if self.collective == "broadcast" else self.n_ranks

    @property
    def _rings(self) -> int:
        """Ring collectives in the run: the ring algorithm, and the Reduce-Scatter of overlap."""
        return (self.algorithm == "ring") + (self.overlap == "reduce_scatter")

    @property
    def output_b(self) -> int:
        """Each rank's output buffer: P shards (Allgather, Reduce-Scatter) or the root's buffer (Broadcast)."""
        return self.bytes_per_rank_b * (1 if self.collective == "broadcast" else self.n_ranks)

    def _memory_b(self) -> dict[str, int]:
        """The parts of Scenario.estimate()'s memory_b, in bytes (cheap: no graph walk)."""
        p, n = self.n_ranks, self.bytes_per_rank_b
        g = _topology(self.topology)
        hosts = topology.host_count(g)
        switches = g.number_of_nodes() - hosts
        parts = {
            "process_b": PROCESS_B,
            "fabric_b": machine.fabric_memory_b(hosts, switches, g.number_of_edges()),
            "verify_b": 0,
            "bitmap_b": 0,
            "send_queue_b": 0,
        }
        if self.verify:
            # the NIC regions and the copies read back (2 per rank), the expected buffer and the
            # comparison's temporary (1 each), pattern()'s int64 temporaries for one shard
            parts["verify_b"] = 2 * p * self.output_b + 2 * self.output_b + PATTERN_TEMP_B_PER_BYTE * n
        if self.algorithm == "mcast":  # one byte per chunk of the output on every rank
            parts["bitmap_b"] = p * self._sources * -(-n // parse_size(self.mtu))
        # every rank of a ring posts the WRITEs of its first block at once
        parts["send_queue_b"] = self._rings * p * -(-n // parse_size(self.ring_chunk)) * RC_WQE_B
        return parts

    def estimate(self) -> dict[str, int]:
        """What the run will cost, before it runs (no C++; one BFS per switch that has hosts, cached).

        Returns
        -------
        dict
            ``packets``: payload packets the collective puts on links, counted once per link they
            cross (a bound: the ring's packets cross at most ``hops_bound`` links, the multicast
            tree has at most ``tree_links_bound`` links); control, ACKs and repair not counted.
            ``hops_bound``: the topology's largest host-to-host hop count. ``tree_links_bound``:
            the P host links plus the switch links of the tree, at most (switches - 1) and at most
            (P-1) x (hops_bound - 2) (the tree is a BFS tree from its centre). ``memory_b``: a
            conservative bound of the process's RAM, the sum of ``process_b`` (Python and the
            libraries), ``fabric_b`` (the graph and the routing tables: machine.fabric_memory_b),
            ``verify_b`` (verify mode: 2 x ranks x output_b for the NIC regions and the copies read
            back, the expected output, pattern temporaries), ``bitmap_b`` (multicast: one byte per
            chunk of the output on every rank, P x P x chunks) and ``send_queue_b``
            (ring: every rank posts its first block's WRITEs at once).
        """
        g = _topology(self.topology)
        p, n, mtu = self.n_ranks, self.bytes_per_rank_b, parse_size(self.mtu)
        hops = _diameter_hops(self.topology)
        switches = g.number_of_nodes() - topology.host_count(g)
        tree_links = p + max(0, min(switches - 1, (p - 1) * (hops - 2)))
        packets = self._rings * p * (p - 1) * _packets(n, parse_size(self.ring_chunk), mtu) * hops
        if self.algorithm == "mcast":
            packets += self._sources * -(-n // mtu) * tree_links
        memory = self._memory_b()
        return {
            "packets": packets,
            "hops_bound": hops,
            "tree_links_bound": tree_links,
            "memory_b": sum(memory.values()),
            **memory,
        }

    def check_resources(self, available_b: int | None = None) -> None:
        """Raise McsimError (one line) if the run needs more memory than the machine has available.

        ``available_b`` defaults to :func:`machine.available_memory_b` (MemAvailable); nothing is checked
        if that is unknown. Only the memory parts of :meth:`estimate` are computed (no graph walk).
        """
        available = machine.available_memory_b() if available_b is None else available_b
        if available is None:
            return
        parts = self._memory_b()
        need = sum(parts.values())
        if need <= available:
            return
        gib = 2**30
        detail = ", ".join(f"{name[:-2].replace('_', ' ')} {b / gib:.3g}" for name, b in parts.items() if b)
        raise McsimError(
            f"Scenario: needs ~{need / gib:.3g} GiB ({detail} GiB), this machine has {available / gib:.3g} GiB "
            "available; use fewer ranks or a smaller bytes_per_rank"
            + (", or verify=False" if parts["verify_b"] else "")
        )

    def run(self) -> Result:
        """Simulate the collective; every rank's output is checked chunk by chunk (its bitmap)."""
        self.check_resources()
        g = self._graph()
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
        with Simulation() as sim:
            fab = sim.own_fabric(fabric.build(g, groups=groups, config=cfg, faults=self.faults))
            stack = sim.own_stack(rdma.build_stack(fab, rcfg))
            if expected is not None:
                self._fill(stack, hosts, n, expected.size)
            teams = [sim.own_app(collectives.start_team(sim.ns, stack, s)) for s in specs]
            sim.run()
            stats = [collectives.team_stats(t) for t in teams]
            nic = rdma.read_nic_counters(stack, fab.n_hosts)
            fres = fab.collect()
            for h in hosts if expected is not None else ():
                out = np.zeros(self.output_b, dtype=np.uint8)
                stack.GetNic(h).ReadMemory(0, out, out.size)
                outputs.append(out)
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

    def _result(self, spec: collectives.TeamSpec, stats: dict, nic: dict, fres: FabricResult) -> Result:
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
            link_down_for_good_ps=self._link_down_for_good_ps(spec.hosts),
        )

    def _link_down_for_good_ps(self, hosts: tuple[int, ...]) -> np.ndarray:
        """Per rank: when its host's only link went down for good (-1: never)."""
        out = np.full(len(hosts), -1, dtype=np.int64)
        rank_of = {h: i for i, h in enumerate(hosts)}
        for u, v, down_ps, up_ps in self.faults.link_down if self.faults is not None else ():
            for h in (u, v):
                if up_ps is fabric.FOREVER and h in rank_of:
                    i = rank_of[h]
                    out[i] = down_ps if out[i] < 0 else min(out[i], down_ps)
        return out
