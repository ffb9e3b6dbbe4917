# SPDX-License-Identifier: GPL-2.0-only
"""Scenario: a frozen, validated description of one collective run -> run() -> Result."""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
import math
import os
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

from mcsim import topology
from mcsim.config import codec
from mcsim.config.codec import GraphTopology, canonical_json
from mcsim.config.collectives import TeamSpec, check_algorithm
from mcsim.config.fabric import FOREVER, MAX_SEED, FabricConfig, Faults
from mcsim.config.rdma import (
    IB_MTUS,
    CompletionProcessorConfig,
    RcConfig,
    RdmaConfig,
    fabric_config_for,
    is_processor_config,
)
from mcsim.errors import McsimError, is_integer, pick, require_int
from mcsim.native import collectives, fabric, rdma
from mcsim.native.simulation import Simulation
from mcsim.result import NEVER, FabricResult, Result, lacking_b, output_b
from mcsim.routing import routes
from mcsim.runs import cost
from mcsim.runs.verify import Expected
from mcsim.runs.verify import expected_output as expected_output  # re-exported
from mcsim.runs.verify import pattern as pattern  # re-exported
from mcsim.runs.verify import wrong_bytes as wrong_bytes  # re-exported
from mcsim.topology.physics import Link, preset
from mcsim.units import CLOCK_LIMIT, MAX_SIMULATED_PS, PS_PER_S, format_rate, parse_rate, parse_size

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

# mcast batching -> TeamSpec.stop_and_wait: a sliding window of `batch` posted datagrams, or the
# artifact's whole batches (the last one signalled, the next batch after its completion)
BATCHINGS = {"window": False, "stop_and_wait": True}
MAX_BARRIERS = 64  # RC barriers before a multicast collective's data phase (the artifact runs 2)


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
SCHEMA = "mcsim.Scenario/3"  # the "schema" of a canonical dict; a change of its keys gets a new one
# the keywords that set a field of Scenario.rdma or Scenario.fabric (mtu becomes mtu_b, seed sets ecmp_seed too)
RDMA_KEYWORDS = ("mtu_b", "rq_depth", "staging", "wire_format", "processor", "rc")
FABRIC_KEYWORDS = ("flow_control", "forwarding", "loss", "seed", "ecmp_seed")
KEYWORD_OF = {"mtu_b": "mtu", "ecmp_seed": "seed"}  # the keyword of a config field named otherwise
_DEFAULT_RDMA, _DEFAULT_FABRIC = RdmaConfig(), FabricConfig()  # a field at its default was not given
# the canonical dict's keys besides the configs; sizes and rates in units named in the key
CANONICAL_KEYS = (
    "algorithm",
    "barriers",
    "batch",
    "batching",
    "bytes_per_rank_b",
    "collective",
    "endpoints",
    "fabric",
    "faults",
    "fin_wait",
    "nominal_rate_bps",
    "overlap",
    "overlap_algorithm",
    "ranks",
    "rdma",
    "reduce_ps_per_byte",
    "repair_reads",
    "ring_chunk_b",
    "root",
    "roots",
    "schema",
    "timeout_rate_bps",
    "timeout_scale",
    "topology",
    "verify",
)


@functools.lru_cache(maxsize=16)
def _topology(topo: str | GraphTopology, rate: str | None = None) -> nx.Graph:
    """The topology, every link at the nominal ``rate`` if given, shared by every Scenario that
    names them: frozen (read-only); Scenario.graph() hands out copies."""
    if rate is not None:
        return nx.freeze(topology.with_link(_topology(topo), preset(parse_rate(rate))))
    return nx.freeze(topology.resolve(topo) if isinstance(topo, str) else topo.graph())


@functools.lru_cache(maxsize=16)
def _diameter_hops(topo: str | GraphTopology) -> int:
    return topology.diameter_hops(_topology(topo))


class Keep(enum.Enum):
    """The default of the keywords that set a field of Scenario.fabric or .rdma: keep the config's."""

    KEEP = "keep"


KEEP = Keep.KEEP


def _as_int(value: Any) -> Any:
    """numpy integers as Python ints: a Scenario is plain data."""
    return int(value) if is_integer(value) and type(value) is not int else value


@dataclass(frozen=True, slots=True, init=False, eq=False)
class Scenario:
    """One collective on one fabric: the workload, the topology, and the typed configs it runs with.

    Strings carry units ("56Gbps", "1MiB"). ``fabric`` (FabricConfig) and ``rdma`` (RdmaConfig) hold
    every fabric and NIC setting; ``mtu``, ``rq_depth``, ``staging``, ``wire_format``, ``processor``,
    ``rc`` (of rdma) and ``flow_control``, ``forwarding``, ``loss``, ``seed`` (of fabric; seed is
    both its ECMP and its fault seed) are keywords that set those fields (KEEP, their default: as the config has it).
    The Scenario sizes ``rdma.region_b`` (the output buffer) and ``fabric.header_b`` (the wire
    format's overhead); the collective tunables (roots, batch, ...) default to TeamSpec's.

    ``topology`` is a name from topologies/, a file, or a networkx graph (copied, kept as canonical
    data). Two Scenarios are equal when their canonical dicts are (:meth:`to_dict`: "1MiB" equals
    1048576, ranks=None equals every host); :meth:`key` is the hash of that dict.
    """

    topology: str | GraphTopology
    rate: str | None  # every link at this nominal rate (56Gbps = FDR 64b/66b); None: as the file
    collective: str  # "allgather", "broadcast", "reduce_scatter" or "allreduce"
    algorithm: str  # "mcast", "ring" or "innet" (in-network reduction: Reduce-Scatter, Allreduce)
    bytes_per_rank: str | int
    ranks: int | None  # ranks on hosts 0..ranks-1; None: every host
    roots: int  # mcast Allgather: K roots at a time
    batch: int  # mcast: datagrams posted before waiting for a completion
    batching: str  # mcast: "window" (sliding, batch posted) or "stop_and_wait" (whole batches: the artifact's)
    barriers: int  # mcast: RC barriers before the data phase (the artifact runs 2)
    repair_reads: int  # mcast: repair READs a rank keeps outstanding (0: all at once; the artifact: 1)
    fin_wait: bool  # mcast: a rank is done only when its FIN is ACKed and r-1's FIN is in (the artifact's)
    ring_chunk: str | int  # ring: bytes per pipelined RDMA WRITE
    timeout_scale: float  # mcast: data phase timeout = scale x the receive bound
    timeout_rate: str | None  # the rate that bound divides by (the artifact's LINK_BW); None: the hosts' data rate
    root: int  # Broadcast root rank
    endpoints: int  # mcast: UD QPs per rank, chunks spread round-robin (one DPA thread each)
    overlap: str | None  # "reduce_scatter": a Reduce-Scatter runs at once (FSDP)
    overlap_algorithm: str  # the overlap's algorithm: "ring" or "innet"
    verify: bool  # carry real bytes (a pattern per rank) and check every byte of every output
    reduce_ps_per_byte: int  # Reduce-Scatter: time to add one received byte
    faults: Faults | None  # chosen drops, per-link loss, links down
    fabric: FabricConfig
    rdma: RdmaConfig

    def __init__(
        self,
        *,
        topology: str | os.PathLike[str] | nx.Graph = "testbed-188",
        rate: str | None = None,
        collective: str = "allgather",
        algorithm: str = "mcast",
        bytes_per_rank: str | int = "1MiB",
        ranks: int | None = None,
        roots: int = TEAM_DEFAULTS["roots"],
        batch: int = TEAM_DEFAULTS["batch"],
        batching: str = "window",
        barriers: int = TEAM_DEFAULTS["barriers"],
        repair_reads: int = TEAM_DEFAULTS["repair_reads"],
        fin_wait: bool = TEAM_DEFAULTS["fin_wait"],
        ring_chunk: str | int = "64KiB",
        timeout_scale: float = 5.0,
        timeout_rate: str | None = None,
        root: int = TEAM_DEFAULTS["root"],
        endpoints: int = TEAM_DEFAULTS["endpoints"],
        overlap: str | None = None,
        overlap_algorithm: str = "ring",
        verify: bool = False,
        reduce_ps_per_byte: int = TEAM_DEFAULTS["reduce_ps_per_byte"],
        faults: Faults | None = None,
        fabric: FabricConfig | None = None,
        rdma: RdmaConfig | None = None,
        mtu: str | int | Keep = KEEP,
        rq_depth: int | Keep = KEEP,
        staging: bool | Keep = KEEP,
        wire_format: str | Keep = KEEP,
        processor: CompletionProcessorConfig | Keep = KEEP,
        rc: RcConfig | Keep = KEEP,
        flow_control: str | Keep = KEEP,
        forwarding: str | Keep = KEEP,
        loss: float | Keep = KEEP,
        seed: int | Keep = KEEP,
    ) -> None:
        """Check every value (type, then range) before any C++ object exists: one McsimError line."""
        if isinstance(topology, os.PathLike):
            topology = os.fspath(topology)
        put = functools.partial(object.__setattr__, self)
        put("topology", GraphTopology.of(topology) if isinstance(topology, nx.Graph) else topology)
        own = {
            "rate": rate,
            "collective": collective,
            "algorithm": algorithm,
            "bytes_per_rank": bytes_per_rank,
            "ranks": ranks,
            "roots": roots,
            "batch": batch,
            "batching": batching,
            "barriers": barriers,
            "repair_reads": repair_reads,
            "fin_wait": fin_wait,
            "ring_chunk": ring_chunk,
            "timeout_scale": timeout_scale,
            "timeout_rate": timeout_rate,
            "root": root,
            "endpoints": endpoints,
            "overlap": overlap,
            "overlap_algorithm": overlap_algorithm,
            "verify": verify,
            "reduce_ps_per_byte": reduce_ps_per_byte,
            "faults": faults,
        }
        for name, value in own.items():
            put(name, _as_int(value))
        net: dict[str, Any] = {"mtu": mtu, "rq_depth": rq_depth, "staging": staging, "wire_format": wire_format}
        net |= {"processor": processor, "rc": rc, "flow_control": flow_control, "forwarding": forwarding}
        net |= {"loss": loss, "seed": seed}
        net = {name: _as_int(value) for name, value in net.items() if value is not KEEP}
        self._check_types(net, fabric, rdma)
        put("fabric", FabricConfig() if fabric is None else fabric)
        put("rdma", RdmaConfig() if rdma is None else rdma)
        self._check_fields(net)

    def _check_types(self, net: dict[str, Any], fabric: object, rdma: object) -> None:
        """Fields whose type is wrong, before any of them is used in a comparison."""
        if not isinstance(self.topology, str | GraphTopology):
            raise McsimError(f"Scenario: topology={self.topology!r} must be a string")
        own = ("collective", "algorithm", "overlap_algorithm", "batching")
        for name in (*own, "wire_format", "flow_control", "forwarding"):
            value = net.get(name, "") if name in ("wire_format", "flow_control", "forwarding") else getattr(self, name)
            if not isinstance(value, str):
                raise McsimError(f"Scenario: {name}={value!r} must be a string")
        for name, value in (
            ("staging", net.get("staging", True)),
            ("verify", self.verify),
            ("fin_wait", self.fin_wait),
        ):
            if not isinstance(value, bool):
                raise McsimError(f"Scenario: {name}={value!r} must be True or False")
        scale = self.timeout_scale
        if isinstance(scale, bool) or not isinstance(scale, int | float) or not 0 < scale < math.inf:
            raise McsimError(f"Scenario: timeout_scale={scale!r} must be a finite number > 0 (int or float)")
        for name, value, cls in (("faults", self.faults, Faults), ("fabric", fabric, FabricConfig)):
            if value is not None and not isinstance(value, cls):
                raise McsimError(f"Scenario: {name}={value!r} must be a {cls.__module__}.{cls.__name__} or None")
        if rdma is not None and not isinstance(rdma, RdmaConfig):
            raise McsimError(f"Scenario: rdma={rdma!r} must be a mcsim.config.rdma.RdmaConfig or None")
        if "rc" in net and not isinstance(net["rc"], RcConfig):
            raise McsimError(f"Scenario: rc={net['rc']!r} must be a mcsim.config.rdma.RcConfig")
        if "processor" in net and not is_processor_config(net["processor"]):
            raise McsimError(
                f"Scenario: processor={net['processor']!r} is not a completion processor config; "
                "use HostCpuConfig() or DpaConfig()"
            )
        if self.overlap is not None and not isinstance(self.overlap, str):
            raise McsimError(f"Scenario: overlap={self.overlap!r} must be None or 'reduce_scatter'")

    def _check_fields(self, net: dict[str, Any]) -> None:
        """Ranges of the workload fields, then the keywords for fabric and rdma, composed into them."""
        n_hosts = topology.host_count(self._base_graph())
        name = self.topology if isinstance(self.topology, str) else "the graph"
        if self.rate is not None:
            parse_rate(self.rate, what="Scenario: rate")
        if self.timeout_rate is not None:
            if (
                not isinstance(self.timeout_rate, str)
                or parse_rate(self.timeout_rate, what="Scenario: timeout_rate") <= 0
            ):
                raise McsimError(
                    f"Scenario: timeout_rate={self.timeout_rate!r} must be a rate > 0, e.g. '56Gbps', or None"
                )
        check_algorithm(self.collective, self.algorithm)
        n = parse_size(self.bytes_per_rank, what="Scenario: bytes_per_rank")
        if n == 0:
            raise McsimError(f"Scenario: bytes_per_rank={self.bytes_per_rank!r} must be > 0")
        if n_hosts < 2:
            raise McsimError(f"Scenario: topology={name!r} has {n_hosts} host; a collective needs 2")
        if self.ranks is not None:
            require_int("Scenario", "ranks", self.ranks, lo=2, hi=n_hosts, why=f" (the hosts of {name})")
        p = self.n_ranks
        require_int("Scenario", "roots", self.roots, lo=1, hi=p, why=" (the ranks)")
        require_int("Scenario", "root", self.root, lo=0, hi=p - 1, why=" (a rank)")
        require_int("Scenario", "batch", self.batch, lo=1, hi=MAX_QP_WR, why=QP_WR_WHY)
        require_int("Scenario", "barriers", self.barriers, lo=0, hi=MAX_BARRIERS)
        require_int("Scenario", "repair_reads", self.repair_reads, lo=0, hi=MAX_QP_WR, why=QP_WR_WHY)
        require_int("Scenario", "rq_depth", net.get("rq_depth", self.rdma.rq_depth), lo=1, hi=MAX_QP_WR, why=QP_WR_WHY)
        require_int("Scenario", "endpoints", self.endpoints, lo=1, hi=MAX_ENDPOINTS, why=ENDPOINTS_WHY)
        if "seed" in net:
            require_int("Scenario", "seed", net["seed"], lo=0, hi=MAX_SEED)
            net["ecmp_seed"] = net["seed"]
        require_int("Scenario", "reduce_ps_per_byte", self.reduce_ps_per_byte, lo=0)
        raw = dict(net)  # the keywords as given, for messages
        if "mtu" in net:
            mtu = net.pop("mtu")
            net["mtu_b"] = parse_size(mtu, what="Scenario: mtu")
            if net["mtu_b"] not in IB_MTUS:
                raise McsimError(f"Scenario: mtu={mtu!r} is not an MTU; choose one of {IB_MTUS} bytes")
        ring_chunk = parse_size(self.ring_chunk, what="Scenario: ring_chunk")
        if not 0 < ring_chunk <= MAX_MESSAGE_B:
            raise McsimError(
                f"Scenario: ring_chunk={self.ring_chunk!r} must be 1..{MAX_MESSAGE_B} B (2 GiB: the largest "
                "InfiniBand message, one RDMA WRITE)"
            )
        self._check_two_ways(net, raw)
        rdma_cfg = dataclasses.replace(self.rdma, **{k: v for k, v in net.items() if k in RDMA_KEYWORDS})
        rdma_cfg = dataclasses.replace(rdma_cfg, region_b=max(1, p * n))
        fabric_cfg = dataclasses.replace(self.fabric, **{k: v for k, v in net.items() if k in FABRIC_KEYWORDS})
        object.__setattr__(self, "rdma", rdma_cfg)
        object.__setattr__(self, "fabric", fabric_config_for(rdma_cfg, fabric_cfg, "Scenario"))
        self._check_chunk_ids(p, n, rdma_cfg.mtu_b, ring_chunk)
        self._check_timeout()
        pick("overlap_algorithm", self.overlap_algorithm, {"ring": None, "innet": None})
        pick("batching", self.batching, BATCHINGS)
        if self.overlap is not None:
            pick("overlap", self.overlap, {"reduce_scatter": None})
            if self.collective != "allgather":
                raise McsimError(f"Scenario: overlap={self.overlap!r} goes with collective='allgather'")
        self._check_innet(n)
        if self.verify:
            if self.overlap is not None or (self.collective == "reduce_scatter" and self.algorithm == "ring"):
                raise McsimError(
                    "Scenario: verify=True checks Allgather, Broadcast and in-network (innet) outputs; the ring "
                    "Reduce-Scatter's sums and an overlapped pair are not checked"
                )
            size = self.output_b
            if size > VERIFY_MAX_BYTES:
                raise McsimError(
                    f"Scenario: verify=True keeps every output buffer in memory ({size} B per rank); "
                    f"verify mode is for small runs (<= {VERIFY_MAX_BYTES} B per rank)"
                )
        if self.faults is not None:
            self.faults.check(self._graph())

    def _check_two_ways(self, net: dict[str, Any], raw: dict[str, Any]) -> None:
        """A keyword and the same field of a given config, with different values, is one field given two
        ways: refused. A config's field still at its default was not given (the keyword sets it); the
        same value twice is no conflict (``net``: the keywords given, mtu as mtu_b, seed also as ecmp_seed;
        ``raw``: as the caller wrote them)."""
        for field, value in net.items():
            name, cfg, default = (
                ("rdma", self.rdma, _DEFAULT_RDMA)
                if field in RDMA_KEYWORDS
                else ("fabric", self.fabric, _DEFAULT_FABRIC)
            )
            given = getattr(cfg, field)
            if given != getattr(default, field) and given != value:
                keyword = KEYWORD_OF.get(field, field)
                raise McsimError(
                    f"Scenario: {keyword}={raw[keyword]!r} and {name}.{field}={given!r} give one field two ways; "
                    f"give it once (the keyword, or the {name} config's field)"
                )

    @property
    def _innet(self) -> bool:
        """The run has an in-network reduction (the scenario's, or the overlapped Reduce-Scatter)."""
        return self.algorithm == "innet" or (self.overlap is not None and self.overlap_algorithm == "innet")

    def _check_innet(self, n: int) -> None:
        """An in-network reduction needs a fabric that loses nothing, and its ids must fit."""
        if not self._innet:
            return
        if self.fabric.flow_control != "lossless" or self.fabric.loss > 0 or self.faults is not None:
            raise McsimError(
                "Scenario: in-network reduction (innet) needs flow_control='lossless', loss=0 and no faults: "
                "the switches' aggregation has no retransmission"
            )
        chunks = -(-n // self.rdma.mtu_b) * (1 if self.collective == "allreduce" else self.n_ranks)
        if chunks > RING_MAX_CHUNKS:
            raise McsimError(
                f"Scenario: bytes_per_rank={self.bytes_per_rank!r} makes {chunks} in-network chunks of "
                f"{self.rdma.mtu_b} B; the chunk id is the datagram's 32-bit immediate (at most {RING_MAX_CHUNKS})"
            )
        if self.verify and n % 4:
            raise McsimError(
                f"Scenario: bytes_per_rank={self.bytes_per_rank!r} is not a whole number of 32-bit integers, "
                "which the switches sum in verify mode"
            )

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
            packets = (p - 1) * cost.packets(n, ring_chunk, mtu)
            if packets > MAX_PSNS:
                raise McsimError(
                    f"Scenario: bytes_per_rank={self.bytes_per_rank!r} sends {packets} packets over each ring QP; "
                    f"RC PSNs are 32-bit and must not wrap in a run (at most {MAX_PSNS}): use a smaller shard"
                )

    def _check_timeout(self) -> None:
        """A run whose data alone (the receive bound, a lower bound of its time) or whose multicast
        data timeout is past the simulated clock's limit is refused before it runs."""
        rate_bps = self.data_rate_bps
        bound_ps = self._lacking_b() * 8 * PS_PER_S // rate_bps
        if bound_ps > MAX_SIMULATED_PS:
            raise McsimError(
                f"Scenario: each rank must move {self._lacking_b()} B at {format_rate(rate_bps)} (rate={self.rate!r}"
                f", bytes_per_rank={self.bytes_per_rank!r}): at least {bound_ps / PS_PER_S:.4g} s, past "
                f"{CLOCK_LIMIT}; raise the rate or lower bytes_per_rank"
            )
        if self.algorithm != "mcast":
            return
        try:
            timeout_ps: float = self.data_timeout_ps()
        except OverflowError:  # timeout_scale x the bound is past the largest float
            timeout_ps = math.inf
        if timeout_ps > MAX_SIMULATED_PS:
            raise McsimError(
                f"Scenario: timeout_scale={self.timeout_scale!r} makes a data timeout of {timeout_ps:.3g} ps, "
                f"past {CLOCK_LIMIT}"
            )

    @property
    def n_ranks(self) -> int:
        return self.ranks if self.ranks is not None else topology.host_count(self._base_graph())

    @property
    def bytes_per_rank_b(self) -> int:
        return parse_size(self.bytes_per_rank)

    @property
    def ring_chunk_b(self) -> int:
        return parse_size(self.ring_chunk)

    def graph(self) -> nx.Graph:
        """The topology with the scenario's link rate: the caller's own copy (changing it changes no
        Scenario)."""
        return self._graph().copy()

    def _graph(self) -> nx.Graph:
        """The topology with the scenario's link rate, for reading only (shared)."""
        return _topology(self.topology, self.rate)

    def _base_graph(self) -> nx.Graph:
        """The topology as given (file rates), for reading only (shared)."""
        return _topology(self.topology)

    @property
    def data_rate_bps(self) -> int:
        """Data rate of host 0's link (after encoding)."""
        g = self._graph()
        return Link.from_edge(g.edges[0, next(iter(g.neighbors(0)))]).data_rate_bps

    def _lacking_b(self) -> int:
        """Bytes each rank must receive (a Broadcast's or an Allreduce's N, else N(P-1)): with those
        it sends, at least this many cross each rank's link."""
        return lacking_b(self.collective, self.bytes_per_rank_b, self.n_ranks)

    def data_timeout_ps(self) -> int:
        rate = self.data_rate_bps if self.timeout_rate is None else parse_rate(self.timeout_rate)
        bound = self._lacking_b() * 8 * PS_PER_S // rate
        return max(int(self.timeout_scale * bound), MIN_DATA_TIMEOUT_PS)

    @property
    def _sources(self) -> int:
        """Ranks that contribute a shard: every rank, or the root of a Broadcast."""
        return 1 if self.collective == "broadcast" else self.n_ranks

    @property
    def _rings(self) -> int:
        """Ring collectives in the run: the ring algorithm, and the Reduce-Scatter of overlap."""
        return (self.algorithm == "ring") + (self.overlap == "reduce_scatter" and self.overlap_algorithm == "ring")

    @property
    def output_b(self) -> int:
        """Each rank's output buffer: P shards (Allgather, Reduce-Scatter: its input, its block summed in
        place) or one buffer (Broadcast, Allreduce)."""
        return output_b(self.collective, self.bytes_per_rank_b, self.n_ranks)

    def _shape(self) -> cost.RunShape:
        g = self._base_graph()
        hosts = topology.host_count(g)
        return cost.RunShape(
            hosts=hosts,
            switches=g.number_of_nodes() - hosts,
            links=g.number_of_edges(),
            ranks=self.n_ranks,
            shard_b=self.bytes_per_rank_b,
            output_b=self.output_b,
            sources=self._sources,
            rings=self._rings,
            mcast=self.algorithm == "mcast",
            mtu_b=self.rdma.mtu_b,
            ring_chunk_b=self.ring_chunk_b,
            verify=self.verify,
        )

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

    def _aggregation_trees(self) -> int:
        """Aggregation trees of the run's in-network reduction (fabric.build makes the same)."""
        roots = routes.best_roots(self._graph(), range(self.n_ranks))
        cap = self.fabric.aggregation_trees
        return len(roots) if cap == 0 else min(cap, len(roots))

    def teams(self) -> list[TeamSpec]:
        """The collectives of the run on ranks 0..P-1: the scenario's, and the Reduce-Scatter of overlap.

        Multicast groups: a multicast team's endpoints come first; an in-network reduction's
        aggregation trees follow them (fabric.build's ``reductions``), each also a group."""
        hosts, n = tuple(range(self.n_ranks)), self.bytes_per_rank_b
        groups = self.endpoints if self.algorithm == "mcast" else 0
        trees = self._aggregation_trees() if self._innet else 1
        spec = TeamSpec(
            collective=self.collective,
            algorithm=self.algorithm,
            hosts=hosts,
            bytes_per_rank_b=n,
            group=groups if self.algorithm == "innet" else 0,
            trees=trees,
            roots=self.roots,
            batch=self.batch,
            stop_and_wait=BATCHINGS[self.batching],
            barriers=self.barriers,
            repair_reads=self.repair_reads,
            fin_wait=self.fin_wait,
            chunk_b=self.rdma.mtu_b if self.algorithm in ("mcast", "innet") else self.ring_chunk_b,
            data_timeout_ps=self.data_timeout_ps(),
            root=self.root,
            reduce_ps_per_byte=self.reduce_ps_per_byte,
            endpoints=self.endpoints,
        )
        if self.overlap != "reduce_scatter":
            return [spec]
        innet = self.overlap_algorithm == "innet"
        overlap = TeamSpec(
            collective="reduce_scatter",
            algorithm=self.overlap_algorithm,
            hosts=hosts,
            bytes_per_rank_b=n,
            group=groups,
            trees=trees,
            batch=self.batch,
            chunk_b=self.rdma.mtu_b if innet else self.ring_chunk_b,
            reduce_ps_per_byte=self.reduce_ps_per_byte,
        )
        return [spec, overlap]

    def run(self) -> Result:
        """Simulate the collective; every rank's output is checked chunk by chunk (its bitmap).

        Raises
        ------
        McsimError
            Before the run, if it needs more memory than the process can take (:meth:`check_resources`);
            after it, one line instead of a traceback if a Python allocation still fails (the estimate
            does not count the C++ packets and events in flight).
        """
        self.check_resources()
        try:
            return self._run()
        except MemoryError:
            need = sum(cost.memory_parts_b(self._shape()).values()) / 2**30
            raise McsimError(
                f"Scenario.run: out of memory (a Python allocation failed) although the run was estimated at "
                f"~{need:.3g} GiB; use fewer ranks or a smaller bytes_per_rank"
                + (", or verify=False" if self.verify else "")
            ) from None

    def _run(self) -> Result:
        specs = self.teams()
        hosts, n = specs[0].hosts, self.bytes_per_rank_b
        groups = [list(hosts)] * self.endpoints if self.algorithm == "mcast" else []
        reductions = [list(hosts)] if self._innet else []
        expected = Expected(self.collective, len(hosts), n, self.root) if self.verify else None
        outputs: list[np.ndarray] = []
        with Simulation() as sim:
            fab = sim.own_fabric(
                fabric.build(
                    self._graph(),
                    groups=groups,
                    config=self.fabric,
                    faults=self.faults,
                    reductions=reductions,
                    slot_b=self.rdma.mtu_b,
                )
            )
            if any(len(r.trees) != s.trees or r.first_group != s.group for r in fab.reductions for s in specs[-1:]):
                raise AssertionError("the fabric's aggregation trees differ from the teams'")
            stack = sim.own_stack(rdma.build_stack(fab, self.rdma))
            if expected is not None:
                fab.sum_payloads(self._innet)
                self._fill(stack, hosts, expected, self.output_b)
            teams = [sim.own_app(collectives.start_team(stack, s)) for s in specs]
            sim.run()
            stats = [collectives.team_stats(t) for t in teams]
            nic = rdma.read_nic_counters(stack, fab.n_hosts)
            fres = fab.collect()
            for h in hosts if expected is not None else ():
                outputs.append(rdma.read_memory(stack, h, self.output_b))
        results = [self._result(s, st, nic, fres) for s, st in zip(specs, stats, strict=True)]
        if expected is not None:
            wrong = np.array([int(np.count_nonzero(out != expected.output(r))) for r, out in enumerate(outputs)])
            results[0] = dataclasses.replace(results[0], verified=bool((wrong == 0).all()), wrong_bytes=wrong)
        if len(results) == 2:
            return dataclasses.replace(results[0], concurrent=results[1])
        return results[0]

    @staticmethod
    def _fill(stack: Any, hosts: tuple[int, ...], expected: Expected, size: int) -> None:
        """Verify mode: every rank gets a region of real bytes; contributors hold their input."""
        for rank, h in enumerate(hosts):
            rdma.enable_memory(stack, h, size)
            held = expected.input(rank)
            if held is not None:
                offset, data = held
                rdma.write_memory(stack, h, offset, data)

    def _result(self, spec: TeamSpec, stats: dict, nic: dict, fres: FabricResult) -> Result:
        p = len(spec.hosts)
        return Result(
            collective=spec.collective,
            algorithm=spec.algorithm,
            ranks=p,
            bytes_per_rank_b=spec.bytes_per_rank_b,
            data_rate_bps=self.data_rate_bps,
            finish_ps=stats["finish_ps"].copy(),  # int64, NEVER where the rank never finished
            injected_b=nic["tx_payload"][:p],
            received_b=nic["rx_payload"][:p],
            rank=stats,
            nic={k: v[:p] for k, v in nic.items()},
            fabric=fres,
            link_down_for_good_ps=self._link_down_for_good_ps(spec.hosts),
        )

    def _link_down_for_good_ps(self, hosts: tuple[int, ...]) -> np.ndarray:
        """Per rank: when its host's only link went down for good (NEVER: it never did)."""
        out = np.full(len(hosts), NEVER, dtype=np.int64)
        rank_of = {h: i for i, h in enumerate(hosts)}
        for u, v, down_ps, up_ps in self.faults.link_down if self.faults is not None else ():
            for h in (u, v):
                if up_ps is FOREVER and h in rank_of:
                    i = rank_of[h]
                    out[i] = down_ps if out[i] == NEVER else min(out[i], down_ps)
        return out

    # -----------------------------------------------------------------------------------------
    # as plain data

    def to_dict(self) -> dict[str, Any]:
        """The canonical dict: JSON types only, every field (defaults included), sizes and rates in
        the units their keys name, ``ranks`` resolved; a graph topology as its node-link data."""
        rate = None if self.rate is None else parse_rate(self.rate)
        return {
            "schema": SCHEMA,
            "topology": self.topology if isinstance(self.topology, str) else self.topology.to_dict(),
            "nominal_rate_bps": rate,
            "collective": self.collective,
            "algorithm": self.algorithm,
            "bytes_per_rank_b": self.bytes_per_rank_b,
            "ranks": self.n_ranks,
            "roots": self.roots,
            "batch": self.batch,
            "batching": self.batching,
            "barriers": self.barriers,
            "repair_reads": self.repair_reads,
            "fin_wait": self.fin_wait,
            "ring_chunk_b": self.ring_chunk_b,
            "timeout_scale": float(self.timeout_scale),
            "timeout_rate_bps": None if self.timeout_rate is None else parse_rate(self.timeout_rate),
            "root": self.root,
            "endpoints": self.endpoints,
            "overlap": self.overlap,
            "overlap_algorithm": self.overlap_algorithm,
            "verify": self.verify,
            "reduce_ps_per_byte": self.reduce_ps_per_byte,
            "faults": None if self.faults is None else codec.faults_to_dict(self.faults),
            "fabric": codec.config_to_dict(self.fabric),
            "rdma": codec.config_to_dict(self.rdma),
        }

    @classmethod
    def from_dict(cls, data: object) -> Scenario:
        """The Scenario of a canonical dict (:meth:`to_dict`); anything else is one McsimError line."""
        where = "Scenario.from_dict"
        codec.require_shallow(where, data)
        d = codec.require_dict(where, data, CANONICAL_KEYS)
        if d["schema"] != SCHEMA:
            raise McsimError(f"{where}: schema={d['schema']!r} is not {SCHEMA!r} (not a mcsim Scenario dict)")
        topo, rate = d["topology"], d["nominal_rate_bps"]
        for key in ("nominal_rate_bps", "timeout_rate_bps"):
            if d[key] is not None and not is_integer(d[key]):
                raise McsimError(f"{where}: {key}={d[key]!r} must be an integer (bit/s) or null")
        for key in ("bytes_per_rank_b", "ring_chunk_b"):
            if not is_integer(d[key]):
                raise McsimError(f"{where}: {key}={d[key]!r} must be an integer (bytes)")
        return cls(
            topology=topo if isinstance(topo, str) else codec.graph_from_dict(topo, f"{where}: topology"),
            rate=None if rate is None else f"{rate}bps",
            collective=d["collective"],
            algorithm=d["algorithm"],
            bytes_per_rank=d["bytes_per_rank_b"],
            ranks=d["ranks"],
            roots=d["roots"],
            batch=d["batch"],
            batching=d["batching"],
            barriers=d["barriers"],
            repair_reads=d["repair_reads"],
            fin_wait=d["fin_wait"],
            ring_chunk=d["ring_chunk_b"],
            timeout_scale=d["timeout_scale"],
            timeout_rate=None if d["timeout_rate_bps"] is None else f"{d['timeout_rate_bps']}bps",
            root=d["root"],
            endpoints=d["endpoints"],
            overlap=d["overlap"],
            overlap_algorithm=d["overlap_algorithm"],
            verify=d["verify"],
            reduce_ps_per_byte=d["reduce_ps_per_byte"],
            faults=None if d["faults"] is None else codec.faults_from_dict(d["faults"], f"{where}: faults"),
            fabric=codec.config_from_dict(FabricConfig, d["fabric"], f"{where}: fabric"),
            rdma=codec.config_from_dict(RdmaConfig, d["rdma"], f"{where}: rdma"),
        )

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
