# SPDX-License-Identifier: GPL-2.0-only
"""Collectives as frozen data: which (collective, algorithm) pairs exist (ALGORITHMS: each names its
C++ rank application) and one team's settings (TeamSpec); no C++.

mcsim.native.collectives starts a team on an RdmaStack (start_team) and reads its stats.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from mcsim.bounds import allreduce_block_b, tree_halves
from mcsim.config.fabric import DEFAULT_MTU_BYTES
from mcsim.config.ns3_attributes import sets
from mcsim.errors import McsimError, pick, require_int

RING_CHUNK_B = 64 << 10  # a ring's default pipelined RDMA WRITE (Scenario.ring_chunk's default)
# the C++ rank applications, every one (RANKS) and each by name
RANKS = tuple(
    f"ns3::mcsim::{name}"
    for name in (
        "RingAllgather",
        "McastAllgather",
        "RingReduceScatter",
        "RingAllreduce",
        "InnetReduction",
        "BroadcastChain",
        "BroadcastBinomial",
        "Alltoall",
        "RecursiveDoublingAllgather",
        "BruckAllgather",
        "ReduceChain",
        "ReduceBinomial",
        "HalvingDoublingAllreduce",
        "TreeAllreduce",
    )
)
(
    RING_AG,
    MCAST,
    RING_RS,
    RING_AR,
    INNET,
    CHAIN,
    BINOMIAL,
    ALLTOALL,
    DOUBLING_AG,
    BRUCK_AG,
    REDUCE_CHAIN,
    REDUCE_BINOMIAL,
    HALVING_DOUBLING_AR,
    TREE_AR,
) = RANKS
# algorithms that move RDMA WRITEs of ring_chunk bytes
RC_PIPELINES = (
    "ring",
    "chain",
    "binomial",
    "pairwise",
    "all_at_once",
    "recursive_doubling",
    "bruck",
    "halving_doubling",
    "tree",
    "ring_mcast",
    "double_tree",
    "hier_ring",
    "hier_mcast",
    "hier_tree",
    "nvls_ring",
    "nvls_tree",
)
HALVING_STEP_MAX_CHUNKS = 2**24 - 1  # a halving-doubling step's chunks (C++ HalvingDoublingAllreduce::CHUNK_BITS)
TREE_MAX_IDS = 2**31 - 1  # a tree's slot x chunks + chunk, below its way-down flag (C++ TreeReduce::DOWN)
POWER_OF_2_ONLY = ("recursive_doubling", "halving_doubling")  # algorithms that need P a power of 2
HOST_REDUCTIONS = (
    RING_RS,
    RING_AR,
    REDUCE_CHAIN,
    REDUCE_BINOMIAL,
    HALVING_DOUBLING_AR,
    TREE_AR,
)  # ranks that add bytes on the host (ReducePsPerByte)
ROOTED = (MCAST, CHAIN, BINOMIAL, REDUCE_CHAIN, REDUCE_BINOMIAL)  # ranks with a Root
ROOTED_COLLECTIVES = ("broadcast", "reduce")  # collectives with a root rank (the others' Root is -1)
# A host's reduction: one core adding received 32-bit integers to its own, out of cache. Measured on
# the development machine (AMD EPYC, numpy int32 add of two 64 MiB arrays into one, median of 5):
# 14.7 GB/s of reduced bytes = 68 ps per byte (in cache, 64 KiB - 4 MiB: 40-45 GB/s = 22-25 ps/B).
HOST_REDUCE_PS_PER_BYTE = 68
TEAM = "ns3::mcsim::CollectiveTeam"  # the team of ranks (its size and first group)
TREES = (REDUCE_CHAIN, REDUCE_BINOMIAL, TREE_AR)  # the ranks on TreeReduce (a buffer and a scratch area)
TREE_SCRATCH = 3  # a tree Allreduce rank's scratch in buffers: its partial sum, a landing zone per child (TreeReduce)
AFTER_BUFFER = 2**64 - 1  # a tree's scratch area right after its buffer (C++ TreeReduce::AFTER_BUFFER)
TREE_SHAPES = {"heap": "Heap", "in_order": "InOrder", "second": "Second"}  # C++ TreeAllreduce::Shape
# the ranks whose whole buffer may sit at an offset of their region, the same on every rank of a team (teams
# composed into a hierarchical collective; C++: the classes with RegionOffsetBytes, CollectiveRank::AddRegionOffset)
REGION_OFFSET_RANKS = (RING_AG, RING_RS, RING_AR, CHAIN, MCAST, INNET)
# the ranks that run NCCL's protocols (mcsim.config.protocols: lines on the wire, a delay per step; C++
# CollectiveRank::AddProtocol on RingRank and TreeReduce): NCCL's ring and tree
PROTOCOL_RANKS = (RING_AG, RING_RS, RING_AR, TREE_AR)
MAX_REGION_OFFSET_B = 2**63 - 1  # C++ CollectiveRank::MAX_REGION_OFFSET (a UD QP's local offset is an int64_t)
# (collective, algorithm) -> the C++ rank application
ALGORITHMS = {
    ("allgather", "ring"): RING_AG,
    ("allgather", "mcast"): MCAST,
    ("allgather", "recursive_doubling"): DOUBLING_AG,
    ("allgather", "bruck"): BRUCK_AG,
    ("broadcast", "mcast"): MCAST,
    ("broadcast", "chain"): CHAIN,
    ("broadcast", "binomial"): BINOMIAL,
    ("reduce", "binomial"): REDUCE_BINOMIAL,
    ("reduce", "chain"): REDUCE_CHAIN,
    ("reduce_scatter", "ring"): RING_RS,
    ("reduce_scatter", "innet"): INNET,
    ("allreduce", "ring"): RING_AR,
    ("allreduce", "halving_doubling"): HALVING_DOUBLING_AR,
    ("allreduce", "tree"): TREE_AR,
    ("allreduce", "innet"): INNET,
    ("alltoall", "pairwise"): ALLTOALL,
    ("alltoall", "all_at_once"): ALLTOALL,
}
# Two-phase collectives: (collective, algorithm) -> the algorithms of its two teams, the second started once
# every rank of the first has finished (C++ CollectiveTeam::StartAfter). An Allreduce of N bytes: a
# Reduce-Scatter of P blocks of ring_blocks' block b (the last blocks padded), which leaves the sum of block
# r at r x b on rank r, then the multicast Allgather of those sums, which takes shard r from there.
TWO_PHASE = {
    ("allreduce", "ring_mcast"): ("ring", "mcast"),
    ("allreduce", "innet_mcast"): ("innet", "mcast"),
}
# Split collectives: (collective, algorithm) -> the algorithm of its two teams, which run at once, each on its
# half of the buffer (NCCL's double binary tree: two trees, each rank inside one and a leaf of the other)
SPLIT = {("allreduce", "double_tree"): "tree"}
# Hierarchical collectives on nodes of several GPUs (mcsim.topology.nodes): (collective, algorithm) -> its phases,
# one after the other, each (where, collective, algorithm): "rail", a team per rail at once (GPU l of every node: its
# shards, nodes x n, at l x nodes x n of the region), or "node", a team per node at once (its GPUs: blocks of
# nodes x n, at the region's start); n is N, or an Allreduce's block (ring_blocks). The output is rail-major: GPU l
# of node n owns position l x nodes + n (Result.placement). An Allreduce is the Reduce-Scatter, then the Allgather;
# or (hier_tree, NCCL's tree across nodes) the node Reduce-Scatter, an Allreduce per rail of its nodes x n on
# NCCL's double binary tree (SPLIT's two trees: two teams per rail), then the node Allgather (NCCL's own Tree chains
# a node's GPUs and pipelines chain and tree at once: what that changes, docs/collectives.md).
#
# NVLS (the NVSwitch's own multicast and reduction, NCCL's NVLS algorithms) runs a node phase in the switch: a node
# Reduce-Scatter as the in-network reduction (innet: each node's team its own aggregation tree, rooted at its
# NVSwitch), a node Allgather as the multicast (mcast: each node's team its own groups, every GPU a root at once,
# Part.roots, as NCCL's NVLS kernels store to the multicast address together); they need the GPU's own receive
# (config.rdma.GPU_RECEIVE). nvls_ring's Allreduce: the node NVLS Reduce-Scatter, a ring Allreduce per rail of its
# nodes x n slice, the node NVLS Allgather (NCCL's NVLS shape; across nodes NCCL's own runs SHARP, CollNet, where
# mcsim runs a ring); nvls_tree (NCCL's NVLS_TREE): the same with the rail's double binary tree (as hier_tree's).
_HIER_RS = (("node", "reduce_scatter", "ring"), ("rail", "reduce_scatter", "ring"))
_NVLS_RS = ("node", "reduce_scatter", "innet")
_NVLS_AG = ("node", "allgather", "mcast")
HIERARCHICAL = {
    ("allgather", "hier_ring"): (("rail", "allgather", "ring"), ("node", "allgather", "ring")),
    ("allgather", "hier_mcast"): (("rail", "allgather", "mcast"), ("node", "allgather", "ring")),
    ("reduce_scatter", "hier_ring"): _HIER_RS,
    ("allreduce", "hier_ring"): (*_HIER_RS, ("rail", "allgather", "ring"), ("node", "allgather", "ring")),
    ("allreduce", "hier_tree"): (
        ("node", "reduce_scatter", "ring"),
        ("rail", "allreduce", "double_tree"),
        ("node", "allgather", "ring"),
    ),
    ("allgather", "nvls_ring"): (("rail", "allgather", "ring"), _NVLS_AG),
    ("reduce_scatter", "nvls_ring"): (_NVLS_RS, ("rail", "reduce_scatter", "ring")),
    ("allreduce", "nvls_ring"): (_NVLS_RS, ("rail", "allreduce", "ring"), _NVLS_AG),
    ("allreduce", "nvls_tree"): (_NVLS_RS, ("rail", "allreduce", "double_tree"), _NVLS_AG),
}
# the hierarchical algorithms with a node phase in the NVSwitch (NVLS): they need a receive at NVLink's rate
NVLS_HIERARCHICAL = tuple(
    sorted({a for (_, a), phases in HIERARCHICAL.items() if any(p in (_NVLS_RS, _NVLS_AG) for p in phases)})
)
EVERY_ALGORITHM = (*ALGORITHMS, *TWO_PHASE, *SPLIT, *HIERARCHICAL)  # every (collective, algorithm) a Scenario runs
# algorithms that multicast (the protocol's options)
MCAST_ALGORITHMS = tuple(
    dict.fromkeys(
        (
            "mcast",
            *(a for _, a in TWO_PHASE),
            *(a for (_, a), phases in HIERARCHICAL.items() if any(alg == "mcast" for *_, alg in phases)),
        )
    )
)
# the switches sum every byte (a hierarchical NVLS collective sums in its node phase only: not among them)
INNET_ALGORITHMS = ("innet", *(a for (_, a), phases in TWO_PHASE.items() if "innet" in phases))
COLLECTIVES = sorted({c for c, _ in ALGORITHMS})


@dataclass(frozen=True, slots=True, kw_only=True)
class TeamSpec:
    """One collective on a set of hosts; bytes in bytes, times in ps."""

    # "allgather", "broadcast", "reduce_scatter" or "allreduce" (an in-network one: Allreduce or not)
    collective: str = field(metadata=sets(INNET, "Allreduce", lambda c, _: c == "allreduce"))
    # "ring", "mcast", "innet", "chain", "binomial", "pairwise", "all_at_once", "recursive_doubling", "bruck"
    algorithm: str = field(metadata=sets(ALLTOALL, "Pairwise", lambda a, _: a == "pairwise"))
    hosts: tuple[int, ...]  # rank i runs on hosts[i]
    # Allgather: each rank's shard; Broadcast: the root's buffer
    bytes_per_rank_b: int = field(metadata=sets(TEAM, "BytesPerRank"))
    # the team's first multicast group (index into the fabric's groups)
    group: int = field(default=0, metadata=sets(TEAM, "FirstGroup"))
    first_tree: int = field(default=0, metadata=sets(INNET, "FirstTree"))  # innet: the team's first aggregation tree
    trees: int = field(default=1, metadata=sets(INNET, "Trees"))  # innet: aggregation trees its chunks spread over
    # mcast: UD QPs per rank, each in its own group (group .. group+endpoints-1)
    endpoints: int = field(default=1, metadata=sets(MCAST, "Endpoints"))
    roots: int = field(default=2, metadata=sets(MCAST, "Roots"))  # mcast Allgather: ranks multicasting at once (K)
    # mcast, innet: datagrams posted before waiting for a completion
    batch: int = field(default=128, metadata=sets((MCAST, INNET), "Batch"))
    # mcast: whole batches, the next when the last completed (the artifact's)
    stop_and_wait: bool = field(default=False, metadata=sets(MCAST, "StopAndWait"))
    barriers: int = field(default=0, metadata=sets(MCAST, "Barriers"))  # mcast: RC barriers first (the artifact's: 2)
    # mcast: repair READs outstanding at most (0: all at once; the artifact's: 1)
    repair_reads: int = field(default=0, metadata=sets(MCAST, "RepairReads"))
    # mcast: done only when its FIN is ACKed and r-1's FIN is in (the artifact's)
    fin_wait: bool = field(default=False, metadata=sets(MCAST, "FinWait"))
    # mcast, innet: bytes per datagram (default: the MTU); ring, chain, binomial: bytes per RDMA WRITE
    # (default: RING_CHUNK_B)
    chunk_b: int | None = field(default=None, metadata=sets(RANKS, "ChunkBytes"))
    data_timeout_ps: int = field(default=10**10, metadata=sets(MCAST, "DataTimeout"))  # mcast: the data phase ends
    # Broadcast: the root rank (C++: -1 for an Allgather)
    root: int = field(
        default=0,
        metadata=sets(ROOTED, "Root", lambda r, t: r if t.collective in ROOTED_COLLECTIVES else -1),
    )
    # host reductions (ring Reduce-Scatter, ring Allreduce): time to add one received byte
    reduce_ps_per_byte: int = field(default=HOST_REDUCE_PS_PER_BYTE, metadata=sets(HOST_REDUCTIONS, "ReducePsPerByte"))
    # tree Allreduce: "heap" (v's children 2v+1, 2v+2) or a tree of NCCL's double binary tree
    tree_shape: str = field(default="heap", metadata=sets(TREE_AR, "Shape", TREE_SHAPES))
    # trees: where the buffer and the scratch area (partial sum, landing zones) begin in the rank's region
    buffer_offset_b: int = field(default=0, metadata=sets(TREES, "BufferOffset"))
    scratch_offset_b: int | None = field(  # None: right after the buffer
        default=None, metadata=sets(TREES, "ScratchOffset", lambda v, _: AFTER_BUFFER if v is None else v)
    )
    # where the team's whole buffer (inputs, outputs, landing zones, every WRITE, READ and datagram) begins in each
    # rank's region, the same on every rank (REGION_OFFSET_RANKS only; 0: at its start)
    region_offset_b: int = field(default=0, metadata=sets(REGION_OFFSET_RANKS, "RegionOffsetBytes"))
    # a protocol (mcsim.config.protocols; PROTOCOL_RANKS): its lines on the wire (0: none), the delay before each
    # chunk sent to a rank of the same node and of another node, and hosts per node (0: a node per host)
    line_b: int = field(default=0, metadata=sets(PROTOCOL_RANKS, "LineBytes"))
    line_data_b: int = field(default=0, metadata=sets(PROTOCOL_RANKS, "LineDataBytes"))
    step_node_ps: int = field(default=0, metadata=sets(PROTOCOL_RANKS, "StepDelayNode"))
    step_net_ps: int = field(default=0, metadata=sets(PROTOCOL_RANKS, "StepDelayNet"))
    gpus_per_node: int = field(default=0, metadata=sets(PROTOCOL_RANKS, "GpusPerNode"))
    start_ps: int = 0

    def __post_init__(self) -> None:
        check_algorithm(self.collective, self.algorithm)
        if (self.collective, self.algorithm) in (*TWO_PHASE, *SPLIT):
            raise McsimError(f"TeamSpec: {self.collective} {self.algorithm} is two teams (TWO_PHASE, SPLIT)")
        pick("tree_shape", self.tree_shape, TREE_SHAPES)
        check_region_offset("TeamSpec", self.collective, self.algorithm, self.region_offset_b)
        if self.chunk_b is None:  # the algorithm's default
            object.__setattr__(self, "chunk_b", RING_CHUNK_B if self.algorithm in RC_PIPELINES else DEFAULT_MTU_BYTES)


def ring_blocks(collective: str, bytes_per_rank_b: int, ranks: int) -> tuple[int, int]:
    """(phases, bytes of the largest block) of a ring collective. An Allgather or a Reduce-Scatter
    moves blocks of N bytes in one phase of P-1 steps; an Allreduce splits its N bytes into P blocks
    (4-byte elements when N is a multiple of 4, else bytes; the first N mod P elements one longer:
    C++ RingRank::BlockBytes) and moves them in two phases (Reduce-Scatter, then Allgather)."""
    if collective != "allreduce":
        return 1, bytes_per_rank_b
    return 2, allreduce_block_b(bytes_per_rank_b, ranks)


def check_region_offset(where: str, collective: str, algorithm: str, region_offset_b: object) -> None:
    """A team's region offset is an integer 0..MAX_REGION_OFFSET_B, and 0 unless its rank class honours one
    (REGION_OFFSET_RANKS): else one McsimError line."""
    offset = require_int(where, "region_offset_b", region_offset_b, lo=0, hi=MAX_REGION_OFFSET_B)
    rank = ALGORITHMS[collective, algorithm]
    if offset and rank not in REGION_OFFSET_RANKS:
        honour = ", ".join(f"{c} {a}" for (c, a), r in ALGORITHMS.items() if r in REGION_OFFSET_RANKS)
        raise McsimError(
            f"{where}: region_offset_b={offset} is not honoured by {collective} {algorithm} ({rank}), which keeps "
            f"its buffer at the region's start; these place it at an offset: {honour}"
        )


def check_algorithm(collective: str, algorithm: str) -> None:
    """Raise the one "unknown collective" or "unknown algorithm for <collective>" McsimError line."""
    pick("collective", collective, {c: c for c in COLLECTIVES})
    pick(f"algorithm for {collective}", algorithm, {a: a for c, a in EVERY_ALGORITHM if c == collective})


@dataclass(frozen=True, slots=True, kw_only=True)
class Part:
    """One team of a collective (TeamSpec's fields that differ between the teams of one collective)."""

    collective: str
    algorithm: str
    bytes_per_rank_b: int
    # its phase: 0, or 1 and on, when every team of the phase before has finished everywhere (TWO_PHASE, HIERARCHICAL)
    phase: int = 0
    hosts: tuple[int, ...] | None = None  # its team's ranks (None: every rank, 0..P-1)
    tree_shape: str = "heap"
    buffer_offset_b: int = 0
    scratch_offset_b: int | None = None
    region_offset_b: int = 0  # where the team's whole buffer begins in each rank's region (TeamSpec's)
    roots: int | None = None  # a multicast Allgather's roots at once (None: the Scenario's; a node's NVLS: its GPUs)


def parts_of(collective: str, algorithm: str, bytes_per_rank_b: int, ranks: int) -> list[Part]:
    """The teams a collective runs: one, or TWO_PHASE's (a Reduce-Scatter, then an Allgather, of ring_blocks'
    block), or SPLIT's (two trees at once: :func:`double_tree_parts` on the buffer, their scratch after it)."""
    n = bytes_per_rank_b
    if (collective, algorithm) in TWO_PHASE:
        reduce, gather = TWO_PHASE[collective, algorithm]
        block = ring_blocks(collective, n, ranks)[1]
        return [
            Part(collective="reduce_scatter", algorithm=reduce, bytes_per_rank_b=block),
            Part(collective="allgather", algorithm=gather, bytes_per_rank_b=block, phase=1),
        ]
    if (collective, algorithm) in SPLIT:
        return double_tree_parts(collective, algorithm, n, 0, n)
    return [Part(collective=collective, algorithm=algorithm, bytes_per_rank_b=n)]


def double_tree_parts(collective: str, algorithm: str, size_b: int, buffer_b: int, scratch_b: int) -> list[Part]:
    """SPLIT's two trees on the ``size_b`` bytes at ``buffer_b`` of each rank's region: the first half of the 4-byte
    elements, at least one, on the in-order tree, the rest on the second; each half's scratch (its partial sum and
    a landing zone per child: TREE_SCRATCH halves) from ``scratch_b`` on, the first half's first."""
    first = tree_halves(size_b)[0]
    halves = [(first, 0, "in_order", 0), (size_b - first, first, "second", TREE_SCRATCH * first)]
    return [
        Part(
            collective=collective,
            algorithm=SPLIT[collective, algorithm],
            bytes_per_rank_b=size,
            tree_shape=shape,
            buffer_offset_b=buffer_b + offset,
            scratch_offset_b=scratch_b + scratch,
        )
        for size, offset, shape, scratch in halves
        if size
    ]


def hierarchical_parts(collective: str, algorithm: str, bytes_per_rank_b: int, nodes: int, gpus: int) -> list[Part]:
    """The teams of a HIERARCHICAL collective on ``nodes`` nodes of ``gpus`` GPUs (GPU l of node n on host
    n x gpus + l), phase by phase: a rail phase's team l holds GPU l of every node, its buffer of nodes x N at
    l x nodes x N of each region; a node phase's team n holds node n's GPUs, blocks of nodes x N from the region's
    start. So an Allgather's output and a Reduce-Scatter's blocks are rail-major (Result.placement). A rail Allreduce
    (hier_tree's, nvls_ring's, nvls_tree's) sums its whole slice of nodes x n; a SPLIT one (a double tree per rail) is
    two teams per rail, their scratch at :func:`hierarchical_scratch_b`."""
    n = ring_blocks(collective, bytes_per_rank_b, nodes * gpus)[1]  # N, or an Allreduce's block
    parts: list[Part] = []
    for phase, (where, team_collective, team_algorithm) in enumerate(HIERARCHICAL[collective, algorithm]):
        if where == "rail":
            size = nodes * n if team_collective == "allreduce" else n  # its slice, or its shards of n
            teams = [(tuple(k * gpus + rail for k in range(nodes)), rail * nodes * n, size) for rail in range(gpus)]
        else:
            teams = [(tuple(range(k * gpus, (k + 1) * gpus)), 0, nodes * n) for k in range(nodes)]
        for hosts, offset, size in teams:
            if (team_collective, team_algorithm) in SPLIT:  # the rail's slice on two trees
                halves = double_tree_parts(
                    team_collective, team_algorithm, size, offset, hierarchical_scratch_b(n, nodes * gpus)
                )
                parts += [replace(q, hosts=hosts, phase=phase) for q in halves]
                continue
            nvls = where == "node" and team_algorithm == "mcast"  # NVLS: every GPU multicasts at once
            parts.append(
                Part(
                    collective=team_collective,
                    algorithm=team_algorithm,
                    bytes_per_rank_b=size,
                    region_offset_b=offset,
                    hosts=hosts,
                    phase=phase,
                    roots=len(hosts) if nvls else None,
                )
            )
    return parts


def hierarchical_scratch_b(block_b: int, ranks: int) -> int:
    """Where a rail's trees keep their scratch (hier_tree) in each rank's region: past the hierarchical buffer
    (``ranks`` blocks of ``block_b``) and past the node Reduce-Scatter's landing zone of the same size after it
    (verify mode's: C++ RingReduceScatter::LandingOffset), so it overlaps no other team's bytes. Every rail's at the
    same offset: a rank is on one rail."""
    return 2 * ranks * block_b
