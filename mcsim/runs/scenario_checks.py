# SPDX-License-Identifier: GPL-2.0-only
"""The checks of a Scenario's fields (Scenario.__post_init__): their types, then their ranges, the sizes the run
gives its fabric and rdma configs, the modes and what they need; one McsimError line before any C++ object exists."""

from __future__ import annotations

import dataclasses
import math
from typing import Protocol

from mcsim.config.codec import GraphTopology
from mcsim.config.collectives import ALGORITHMS, HIERARCHICAL, NVLS_HIERARCHICAL, PROTOCOL_RANKS, check_algorithm
from mcsim.config.fabric import FabricConfig, Faults, check_pfc
from mcsim.config.protocols import DEFAULT_PROTOCOL, PROTOCOLS, ring_mtu_b
from mcsim.config.rdma import (
    ENDPOINTS_WHY,
    MAX_ENDPOINTS,
    MAX_MESSAGE_B,
    MAX_QP_WR,
    QP_WR_WHY,
    RING_MAX_CHUNKS,
    HostCpuConfig,
    RdmaConfig,
    check_congestion_control,
    fabric_config_for,
)
from mcsim.config.setup import Setup
from mcsim.errors import McsimError, pick, require_bool, require_int
from mcsim.runs import buffers
from mcsim.topology.nodes import nodes_of
from mcsim.units import CLOCK_LIMIT, MAX_SIMULATED_PS, PS_PER_S, format_rate, parse_rate, parse_size

# verify mode is a check for small runs: each rank's output is generated, copied out of C++ and
# compared byte by byte in numpy; Scenario.check_resources() bounds the memory of all ranks together
VERIFY_MAX_BYTES = 64 << 20

# mcast batching -> TeamSpec.stop_and_wait: a sliding window of `batch` posted datagrams, or the
# artifact's whole batches (the last one signalled, the next batch after its completion)
BATCHINGS = {"window": False, "stop_and_wait": True}
MAX_BARRIERS = 64  # RC barriers before a multicast collective's data phase (the artifact runs 2)
STRING_FIELDS = (
    "collective",
    "algorithm",
    "overlap_algorithm",
    "batching",
    "nccl_protocol",
)  # checked as strings first
FLAG_FIELDS = ("verify", "fin_wait")  # True or False


class Scenario(buffers.Scenario, Protocol):
    """What these read of a mcsim.runs.scenario.Scenario (named so, not imported: no import cycle)."""

    @property
    def topology(self) -> str | GraphTopology: ...
    @property
    def rate(self) -> str | None: ...
    @property
    def ranks(self) -> int | None: ...
    @property
    def roots(self) -> int: ...
    @property
    def batch(self) -> int: ...
    @property
    def batching(self) -> str: ...
    @property
    def barriers(self) -> int: ...
    @property
    def repair_reads(self) -> int: ...
    @property
    def timeout_scale(self) -> float: ...
    @property
    def timeout_rate(self) -> str | None: ...
    @property
    def root(self) -> int: ...
    @property
    def endpoints(self) -> int: ...
    @property
    def overlap(self) -> str | None: ...
    @property
    def overlap_algorithm(self) -> str: ...
    @property
    def reduce_ps_per_byte(self) -> int: ...
    @property
    def nccl_protocol(self) -> str: ...
    @property
    def faults(self) -> Faults | None: ...
    @property
    def fabric(self) -> FabricConfig: ...
    @property
    def rdma(self) -> RdmaConfig: ...

    @property
    def data_rate_bps(self) -> int: ...
    @property
    def setup(self) -> Setup: ...
    def unread(self) -> tuple[str, ...]: ...
    def data_timeout_ps(self) -> int: ...


def check_types(sc: Scenario) -> None:
    """Fields whose type is wrong, before any of them is used in a comparison."""
    if not isinstance(sc.topology, str | GraphTopology):
        raise McsimError(f"Scenario: topology={sc.topology!r} must be a string")
    for name in STRING_FIELDS:
        if not isinstance(getattr(sc, name), str):
            raise McsimError(f"Scenario: {name}={getattr(sc, name)!r} must be a string")
    require_bool("Scenario", **{name: getattr(sc, name) for name in FLAG_FIELDS})
    scale = sc.timeout_scale
    if isinstance(scale, bool) or not isinstance(scale, int | float) or not 0 < scale < math.inf:
        raise McsimError(f"Scenario: timeout_scale={scale!r} must be a finite number > 0 (int or float)")
    for name, cls in (("faults", Faults), ("fabric", FabricConfig), ("rdma", RdmaConfig)):
        value = getattr(sc, name)
        if value is not None and not isinstance(value, cls):
            raise McsimError(f"Scenario: {name}={value!r} must be a {cls.__module__}.{cls.__name__} or None")
    if sc.overlap is not None and not isinstance(sc.overlap, str):
        raise McsimError(f"Scenario: overlap={sc.overlap!r} must be None or 'reduce_scatter'")


def check_fields(sc: Scenario) -> None:
    """Ranges of the workload fields, then the sizes the run gives its fabric and rdma configs."""
    n_hosts = sc.setup.hosts
    name = sc.topology if isinstance(sc.topology, str) else "the graph"
    if sc.rate is not None:
        parse_rate(sc.rate, what="Scenario: rate")
    if sc.timeout_rate is not None:
        if not isinstance(sc.timeout_rate, str) or parse_rate(sc.timeout_rate, what="Scenario: timeout_rate") <= 0:
            raise McsimError(f"Scenario: timeout_rate={sc.timeout_rate!r} must be a rate > 0, e.g. '56Gbps', or None")
    check_algorithm(sc.collective, sc.algorithm)
    n = parse_size(sc.bytes_per_rank, what="Scenario: bytes_per_rank")
    if n == 0:
        raise McsimError(f"Scenario: bytes_per_rank={sc.bytes_per_rank!r} must be > 0")
    if n_hosts < 2:
        raise McsimError(f"Scenario: topology={name!r} has {n_hosts} host; a collective needs 2")
    if sc.ranks is not None:
        require_int("Scenario", "ranks", sc.ranks, lo=2, hi=n_hosts, why=f" (the hosts of {name})")
    p = sc.n_ranks
    check_hierarchical(sc, name)
    require_int("Scenario", "roots", sc.roots, lo=1, hi=p, why=" (the ranks)")
    require_int("Scenario", "root", sc.root, lo=0, hi=p - 1, why=" (a rank)")
    require_int("Scenario", "batch", sc.batch, lo=1, hi=MAX_QP_WR, why=QP_WR_WHY)
    require_int("Scenario", "barriers", sc.barriers, lo=0, hi=MAX_BARRIERS)
    require_int("Scenario", "repair_reads", sc.repair_reads, lo=0, hi=MAX_QP_WR, why=QP_WR_WHY)
    require_int("Scenario", "rdma.rq_depth", sc.rdma.rq_depth, lo=1, hi=MAX_QP_WR, why=QP_WR_WHY)
    require_int("Scenario", "endpoints", sc.endpoints, lo=1, hi=MAX_ENDPOINTS, why=ENDPOINTS_WHY)
    require_int("Scenario", "reduce_ps_per_byte", sc.reduce_ps_per_byte, lo=0)
    ring_chunk = parse_size(sc.ring_chunk, what="Scenario: ring_chunk")
    if not 0 < ring_chunk <= MAX_MESSAGE_B:
        raise McsimError(
            f"Scenario: ring_chunk={sc.ring_chunk!r} must be 1..{MAX_MESSAGE_B} B (2 GiB: the largest "
            "InfiniBand message, one RDMA WRITE)"
        )
    rdma_cfg = dataclasses.replace(sc.rdma, region_b=buffers.memory_b(sc))
    object.__setattr__(sc, "rdma", rdma_cfg)
    object.__setattr__(sc, "fabric", fabric_config_for(rdma_cfg, sc.fabric, "Scenario"))
    check_protocol(sc)
    buffers.check_chunk_ids(sc, p, n, ring_mtu_b(sc.nccl_protocol, rdma_cfg.mtu_b), ring_chunk)
    buffers.check_tagged_ids(sc, p, n, ring_chunk)
    check_timeout(sc)
    check_modes(sc, n)
    if sc.fabric.flow_control == "pfc":  # (the layout only where a check needs it: a sweep plans many)
        check_pfc("Scenario", sc.fabric, sc.setup.layout(), "fabric.")
    if rdma_cfg.congestion is not None:
        check_congestion_control("Scenario", sc.setup.layout(), rdma_cfg, "rdma.")


def check_hierarchical(sc: Scenario, name: str) -> None:
    """A hierarchical collective runs on whole nodes of several GPUs with a network between them: at least 2
    nodes of at least 2 GPUs (its rail and node teams), alone (no overlap)."""
    if (sc.collective, sc.algorithm) not in HIERARCHICAL:
        return
    where = f"Scenario: algorithm={sc.algorithm!r}"
    nodes = nodes_of(sc.setup.graph())
    if nodes is None or not nodes.rails:
        raise McsimError(
            f"{where} runs on nodes of several GPUs joined by a network (e.g. topology='rail-16x8'); "
            f"topology={name!r} has {'no network' if nodes else 'no nodes'}"
        )
    p, g = sc.n_ranks, nodes.gpus
    if g < 2 or p % g or p // g < 2:
        raise McsimError(
            f"{where} needs whole nodes, at least 2 of at least 2 GPUs: ranks={p} on nodes of {g} GPUs"
            + (f"; give ranks a multiple of {g} from {2 * g} on" if g >= 2 else "")
        )
    if sc.overlap is not None:
        raise McsimError(f"{where} runs alone: overlap={sc.overlap!r} goes with the flat algorithms")
    if sc.algorithm in NVLS_HIERARCHICAL:
        check_nvls_receive(sc, where, nodes.nvlink_bps)


def check_nvls_receive(sc: Scenario, where: str, nvlink_bps: int) -> None:
    """An NVLS node phase (the NVSwitch's multicast or sum) delivers a datagram of the MTU per NVLink serialization:
    the completion processor must take them at NVLink's rate, as the GPU's own receive does (config.rdma.GPU_RECEIVE:
    no cost per completion, zero copy); a host CPU thread that takes completion_ps a datagram, or copies staged
    payloads at memcpy_bps, would make the run the CPU's, not the NVSwitch's."""
    rdma, gpu = (
        sc.rdma,
        (
            "give rdma=RdmaConfig(staging=False, processor=GPU_RECEIVE), the GPU's own (mcsim.config.rdma; the "
            "commands' --processor gpu)"
        ),
    )
    if not isinstance(rdma.processor, HostCpuConfig):
        raise McsimError(
            f"{where} runs its node phases in the NVSwitch (NVLS), received by the GPU itself; "
            f"processor={type(rdma.processor).__name__} is a NIC's: {gpu}"
        )
    cpu = rdma.processor
    takes = {f"completion_ps={cpu.completion_ps} per {rdma.mtu_b} B datagram": rdma.mtu_b * 8 * PS_PER_S}
    takes = {why: bits // cpu.completion_ps for why, bits in takes.items() if cpu.completion_ps}
    takes |= {f"staging=True, copies at {cpu.memcpy_bps / 8e9:.1f} GB/s": cpu.memcpy_bps} if rdma.staging else {}
    if takes and min(takes.values()) < nvlink_bps:
        raise McsimError(
            f"{where} runs its node phases in the NVSwitch (NVLS) at NVLink's {nvlink_bps / 8e9:.1f} GB/s; the receive "
            f"takes {min(takes.values()) / 8e9:.1f} GB/s ({'; '.join(takes)}): {gpu}"
        )


def check_protocol(sc: Scenario) -> None:
    """An NCCL protocol runs on NCCL's algorithms: every team of the run (the overlap's too) a ring or a tree
    (PROTOCOL_RANKS)."""
    pick("nccl_protocol", sc.nccl_protocol, PROTOCOLS)
    if sc.nccl_protocol == DEFAULT_PROTOCOL:
        return
    teams = {(q.collective, q.algorithm) for q in sc.plan().parts}
    if sc.overlap is not None:
        teams.add(("reduce_scatter", sc.overlap_algorithm))
    other = sorted(f"{c} {a}" for c, a in teams if ALGORITHMS[c, a] not in PROTOCOL_RANKS)
    if other:
        raise McsimError(
            f"Scenario: nccl_protocol={sc.nccl_protocol!r} is NCCL's: it runs on NCCL's ring and tree algorithms "
            f"(ring, hier_ring, tree, double_tree, hier_tree); this run has {', '.join(other)} (mcsim's own "
            "protocol: give nccl_protocol='none')"
        )


def check_modes(sc: Scenario, n: int) -> None:
    """The choices (batching, overlap, verify) and what they need."""
    pick("overlap_algorithm", sc.overlap_algorithm, {"ring": None, "innet": None})
    pick("batching", sc.batching, BATCHINGS)
    buffers.refuse_unread(sc.unread(), sc.root, sc.collective, sc.overlap_algorithm)
    if sc.overlap is not None:
        pick("overlap", sc.overlap, {"reduce_scatter": None})
        if sc.collective != "allgather":
            raise McsimError(f"Scenario: overlap={sc.overlap!r} goes with collective='allgather'")
    check_innet(sc, n)
    if sc.verify:
        if sc.overlap is not None:
            raise McsimError("Scenario: verify=True checks one collective's outputs; an overlapped pair is not checked")
        buffers.check_host_reduction(sc, n)
        size = sc.output_b
        if size > VERIFY_MAX_BYTES:
            raise McsimError(
                f"Scenario: verify=True keeps every output buffer in memory ({size} B per rank); "
                f"verify mode is for small runs (<= {VERIFY_MAX_BYTES} B per rank)"
            )
    if sc.faults is not None:
        sc.faults.check(sc.setup.layout())


def check_innet(sc: Scenario, n: int) -> None:
    """An in-network reduction needs a fabric that loses nothing, and its ids must fit."""
    if not sc.plan().in_network:
        return
    lossless = sc.fabric.flow_control == "lossless" or (
        sc.fabric.flow_control == "pfc" and sc.fabric.pfc_headroom_b == 0
    )
    if not lossless or sc.fabric.loss > 0 or sc.faults is not None:
        raise McsimError(
            "Scenario: in-network reduction (innet) needs flow_control='lossless' (or 'pfc' with its computed "
            "headroom), loss=0 and no faults: the switches' aggregation has no retransmission"
        )
    # the in-network teams (a hierarchical NVLS collective's: one per node, on its GPUs), or else the overlap's
    # Reduce-Scatter of n: (collective, bytes per rank, ranks)
    teams = [(q.collective, q.bytes_per_rank_b, len(q.hosts or ())) for q in sc.plan().parts if q.algorithm == "innet"]
    teams = teams or [("", n, 0)]
    for collective, size, ranks in teams:
        chunks = -(-size // sc.rdma.mtu_b) * (1 if collective == "allreduce" else ranks or sc.n_ranks)
        if chunks > RING_MAX_CHUNKS:
            raise McsimError(
                f"Scenario: bytes_per_rank={sc.bytes_per_rank!r} makes {chunks} in-network chunks of "
                f"{sc.rdma.mtu_b} B{f' in a team of {ranks}' if ranks else ''}; the chunk id is the datagram's 32-bit "
                f"immediate (at most {RING_MAX_CHUNKS})"
            )
    n = teams[0][1]
    if sc.verify and n % 4:
        raise McsimError(
            f"Scenario: bytes_per_rank={sc.bytes_per_rank!r} is not a whole number of 32-bit integers, "
            "which the switches sum in verify mode"
        )


def check_timeout(sc: Scenario) -> None:
    """A run whose data alone (the receive bound, a lower bound of its time) or whose multicast
    data timeout is past the simulated clock's limit is refused before it runs."""
    rate_bps = sc.data_rate_bps
    bound_ps = sc.plan().lacking_b * 8 * PS_PER_S // rate_bps
    if bound_ps > MAX_SIMULATED_PS:
        raise McsimError(
            f"Scenario: each rank must move {sc.plan().lacking_b} B at {format_rate(rate_bps)} (rate={sc.rate!r}"
            f", bytes_per_rank={sc.bytes_per_rank!r}): at least {bound_ps / PS_PER_S:.4g} s, past "
            f"{CLOCK_LIMIT}; raise the rate or lower bytes_per_rank"
        )
    if not sc.plan().multicast:
        return
    try:
        timeout_ps: float = sc.data_timeout_ps()
    except OverflowError:  # timeout_scale x the bound is past the largest float
        timeout_ps = math.inf
    if timeout_ps > MAX_SIMULATED_PS:
        raise McsimError(
            f"Scenario: timeout_scale={sc.timeout_scale!r} makes a data timeout of {timeout_ps:.3g} ps, "
            f"past {CLOCK_LIMIT}"
        )
