# SPDX-License-Identifier: GPL-2.0-only
"""A rank's buffers: what a Scenario's collective needs of the RDMA layer, algorithm by algorithm: the region each
rank registers and the bytes verify mode keeps (where the C++ rank puts its buffers, partial sums and landing zones
in its region), the buffers its RC transfers carry (for the cost estimate), and the checks that its chunk ids and
PSNs fit their integers and that its host sums see whole 32-bit integers. (A Layout is a topology's ports and
routes' tables: mcsim.routing.layout.)"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from mcsim.bounds import output_b
from mcsim.config.collectives import (
    ALGORITHMS,
    HALVING_STEP_MAX_CHUNKS,
    HIERARCHICAL,
    HOST_REDUCTIONS,
    MCAST,
    MCAST_ALGORITHMS,
    NVLS_HIERARCHICAL,
    POWER_OF_2_ONLY,
    RC_PIPELINES,
    REGION_OFFSET_RANKS,
    ROOTED_COLLECTIVES,
    TREE_AR,
    TREE_MAX_IDS,
    TREE_SCRATCH,
    Part,
    TeamSpec,
    ring_blocks,
)
from mcsim.config.rdma import MAX_PSNS, MCAST_MAX_CHUNKS, RING_MAX_CHUNKS
from mcsim.errors import McsimError
from mcsim.runs import cost
from mcsim.runs.scenario_plan import ScenarioPlan

TREE_ALLREDUCES = ("tree", "double_tree")  # on C++ TreeAllreduce: two children a rank, landing zones for both
# Scenario's tunables that only some collectives read (read_tunables says which), and those of them that only the
# multicast protocol (C++ McastAllgather) reads
TUNABLES = (
    "roots",
    "batch",
    "batching",
    "barriers",
    "repair_reads",
    "fin_wait",
    "endpoints",
    "timeout_scale",
    "timeout_rate",
    "ring_chunk",
    "root",
    "reduce_ps_per_byte",
    "overlap_algorithm",
)
MCAST_PROTOCOL = ("batching", "barriers", "repair_reads", "fin_wait", "endpoints", "timeout_scale", "timeout_rate")


def refuse_unread(unread: tuple[str, ...], root: int, collective: str, overlap_algorithm: str) -> None:
    """root and overlap_algorithm given where the run does not read them (``unread``: Scenario.unread()): refused,
    as the CLI refuses --root and --overlap-algorithm there. (The other unread tunables are run options a workload
    and a sweep give every collective of a run: accepted.)"""
    if "root" in unread:
        raise McsimError(
            f"Scenario: root={root} is for collective='broadcast' and 'reduce' (the rank that sends or gets the "
            f"buffer); collective={collective!r} has no root"
        )
    if "overlap_algorithm" in unread:
        raise McsimError(
            f"Scenario: overlap_algorithm={overlap_algorithm!r} is the algorithm of overlap='reduce_scatter'; give "
            "overlap='reduce_scatter' or leave overlap_algorithm out"
        )


def read_tunables(
    parts: Sequence[Part], collective: str, overlap: str | None, overlap_algorithm: str
) -> frozenset[str]:
    """The TUNABLES a run of these teams (``parts``, and the overlapped Reduce-Scatter) reads: roots, the multicast
    Allgather's; batch, a multicast's or an in-network reduction's; the multicast protocol's own; ring_chunk, the
    RDMA WRITE pipelines'; root, a Broadcast's or a Reduce's; reduce_ps_per_byte, the host reductions';
    overlap_algorithm, the overlap's. (The CLI's options for them are refused where they are not read.)"""
    teams = [(part.collective, part.algorithm) for part in parts]
    if overlap is not None:
        teams.append(("reduce_scatter", overlap_algorithm))
    ranks = {ALGORITHMS[team] for team in teams}
    reads = {"overlap_algorithm"} if overlap is not None else set()
    # (a node's NVLS multicast has its own roots, every GPU: Part.roots)
    reads |= (
        {"roots"} if any((q.collective, q.algorithm, q.roots) == ("allgather", "mcast", None) for q in parts) else set()
    )
    reads |= {"batch"} if any(a in ("mcast", "innet") for _, a in teams) else set()
    reads |= set(MCAST_PROTOCOL) if MCAST in ranks else set()
    reads |= {"ring_chunk"} if any(a in RC_PIPELINES for _, a in teams) else set()
    reads |= {"root"} if collective in ROOTED_COLLECTIVES else set()
    reads |= {"reduce_ps_per_byte"} if ranks & set(HOST_REDUCTIONS) else set()
    return frozenset(reads)


class Scenario(Protocol):
    """What these read of a mcsim.runs.scenario.Scenario: its fields and its plan (named so, not imported: no import
    cycle)."""

    @property
    def collective(self) -> str: ...
    @property
    def algorithm(self) -> str: ...
    @property
    def verify(self) -> bool: ...
    @property
    def bytes_per_rank(self) -> str | int: ...
    @property
    def ring_chunk(self) -> str | int: ...

    @property
    def n_ranks(self) -> int: ...
    @property
    def bytes_per_rank_b(self) -> int: ...
    @property
    def ring_chunk_b(self) -> int: ...
    @property
    def output_b(self) -> int: ...
    def plan(self) -> ScenarioPlan: ...


def check_host_reduction(sc: Scenario, n: int) -> None:
    """Verify mode: a ring reduction sums 32-bit integers, whole ones in every chunk."""
    host = sc.algorithm in ("ring", "halving_doubling", *TREE_ALLREDUCES, "ring_mcast", "hier_ring", "hier_tree")
    host = host or sc.algorithm in NVLS_HIERARCHICAL  # their rail phases sum on the GPUs
    host = host or sc.collective == "reduce"
    if not host or sc.collective not in ("reduce_scatter", "allreduce", "reduce"):
        return
    if n % 4 or sc.ring_chunk_b % 4:
        raise McsimError(
            f"Scenario: bytes_per_rank={sc.bytes_per_rank!r} and ring_chunk={sc.ring_chunk!r} must be "
            "whole numbers of 32-bit integers, which the hosts sum in verify mode"
        )


def check_tagged_ids(sc: Scenario, p: int, n: int, ring_chunk: int) -> None:
    """The immediates that carry a tag beside the chunk's number must leave room for it: a halving-doubling
    step's chunks below its step number (C++ HalvingDoublingAllreduce::CHUNK_BITS), a tree's slot x chunks +
    chunk below its way-down flag (C++ TreeReduce::DOWN)."""
    chunks = max(1, -(-n // ring_chunk))
    if sc.algorithm == "halving_doubling":
        # the largest step sends the first half of the blocks (BlockSplit: the first blocks are the longer)
        granule = 4 if n % 4 == 0 else 1
        q, longer = divmod(n // granule, p)
        half = ((p // 2) * q + min(p // 2, longer)) * granule
        if -(-half // ring_chunk) > HALVING_STEP_MAX_CHUNKS:
            raise McsimError(
                f"Scenario: bytes_per_rank={sc.bytes_per_rank!r} makes {-(-half // ring_chunk)} chunks of "
                f"{ring_chunk} B in one halving step; the immediate holds at most {HALVING_STEP_MAX_CHUNKS} "
                "beside the step: raise ring_chunk"
            )
    if sc.collective == "reduce" or sc.algorithm in TREE_ALLREDUCES:  # a double tree's halves: fewer chunks
        slots = {"chain": 1, "tree": 2, "double_tree": 2}.get(sc.algorithm, max(1, (p - 1).bit_length()))
        _check_tree_ids(sc, slots, chunks, ring_chunk)


def _check_tree_ids(sc: Scenario, slots: int, chunks: int, ring_chunk: int, team: str = "") -> None:
    """A tree's chunk ids (slot x chunks + chunk, ``slots`` children of ``chunks`` chunks) stay below its way-down
    flag; ``team`` as in _check_mcast_ids."""
    if slots * chunks > TREE_MAX_IDS:
        raise McsimError(
            f"Scenario: bytes_per_rank={sc.bytes_per_rank!r} makes {slots * chunks} chunk ids of {ring_chunk} B "
            f"({slots} children of {chunks} chunks{team}); the immediate holds at most {TREE_MAX_IDS} beside its "
            "way-down flag: raise ring_chunk"
        )


def _check_mcast_ids(sc: Scenario, sources: int, shard: int, mtu: int, team: str = "") -> None:
    """A multicast's chunk ids (``sources`` shards of ``shard`` bytes cut at the MTU) fit their 24 bits; ``team``:
    the words that name a team of a hierarchical collective ("" for the collective)."""
    chunks = sources * -(-shard // mtu)
    if chunks > MCAST_MAX_CHUNKS:
        raise McsimError(
            f"Scenario: bytes_per_rank={sc.bytes_per_rank!r} makes {chunks} multicast chunks of {mtu} B "
            f"({sources} shards{team}); the chunk id has 24 bits (at most {MCAST_MAX_CHUNKS}): use a smaller "
            "shard or fewer ranks"
        )


def _check_ring_ids(sc: Scenario, phases: int, p: int, block: int, mtu: int, ring_chunk: int, team: str = "") -> None:
    """A ring's chunk ids (its WRITEs' immediates) and its QPs' PSNs fit their 32 bits: ``phases`` of p-1 steps of
    ``block`` bytes on ``p`` ranks; ``team`` as in _check_mcast_ids."""
    chunks = phases * p * max(1, -(-block // ring_chunk))
    if chunks > RING_MAX_CHUNKS:
        raise McsimError(
            f"Scenario: bytes_per_rank={sc.bytes_per_rank!r} makes {chunks} ring chunks of {ring_chunk} B{team}; "
            f"the chunk id is the WRITE's 32-bit immediate (at most {RING_MAX_CHUNKS}): raise ring_chunk"
        )
    packets = phases * (p - 1) * max(1, cost.packets(block, ring_chunk, mtu))
    if packets > MAX_PSNS:
        raise McsimError(
            f"Scenario: bytes_per_rank={sc.bytes_per_rank!r} sends {packets} packets over each ring QP{team}; "
            f"RC PSNs are 32-bit and must not wrap in a run (at most {MAX_PSNS}): use a smaller shard"
        )


def check_team_ids(sc: Scenario, mtu: int, ring_chunk: int) -> None:
    """A hierarchical collective's teams, each a collective of its own: their chunk ids and PSNs fit their
    integers."""
    for algorithm, p, n in sorted({(q.algorithm, len(q.hosts or ()), q.bytes_per_rank_b) for q in sc.plan().parts}):
        if algorithm == "mcast":
            _check_mcast_ids(sc, p, n, mtu, f" in a team of {p}")
        elif algorithm == "innet":  # a node's NVLS Reduce-Scatter: checked with the in-network reductions
            continue
        elif algorithm == "tree":  # a tree of a rail's double tree (hier_tree): two children a rank
            _check_tree_ids(sc, 2, max(1, -(-n // ring_chunk)), ring_chunk, f" in a team of {p}")
        else:
            _check_ring_ids(sc, 1, p, n, mtu, ring_chunk, f" in a team of {p}")


def check_chunk_ids(sc: Scenario, p: int, n: int, mtu: int, ring_chunk: int) -> None:
    """The chunk ids and PSNs the C++ collectives use must fit their integers (a hierarchical collective's: its
    teams', check_team_ids)."""
    if (sc.collective, sc.algorithm) in HIERARCHICAL:
        check_team_ids(sc, mtu, ring_chunk)
        return
    plan = sc.plan()
    sources, shard = plan.sources, plan.parts[-1].bytes_per_rank_b  # a two-phase Allreduce multicasts its blocks
    if sc.algorithm in MCAST_ALGORITHMS:
        _check_mcast_ids(sc, sources, shard, mtu)
    if plan.rings:  # the ring algorithm's, or a Reduce-Scatter's (the overlap's, ring_mcast's first phase)
        ring = sc.algorithm == "ring"
        phases, block = ring_blocks(sc.collective, n, p) if ring else (1, plan.parts[0].bytes_per_rank_b)
        _check_ring_ids(sc, phases, p, block, mtu, ring_chunk)
    if sc.collective == "alltoall" and p * -(-n // ring_chunk) > RING_MAX_CHUNKS:
        raise McsimError(
            f"Scenario: bytes_per_rank={sc.bytes_per_rank!r} makes {p * -(-n // ring_chunk)} Alltoall chunks "
            f"of {ring_chunk} B; the chunk id is the WRITE's 32-bit immediate (at most {RING_MAX_CHUNKS}): "
            "raise ring_chunk"
        )
    if sc.algorithm in POWER_OF_2_ONLY and p & (p - 1):
        other = "'bruck'" if sc.collective == "allgather" else "'ring'"
        raise McsimError(f"Scenario: algorithm={sc.algorithm!r} needs a power of 2 ranks, not {p}; {other} takes any")
    # at most a buffer per QP, or (the logarithmic Allgathers) at most P shards
    if sc.algorithm in ("chain", "binomial", "recursive_doubling", "bruck") or sc.collective == "alltoall":
        packets = cost.packets(n * (p if sc.algorithm in ("recursive_doubling", "bruck") else 1), ring_chunk, mtu)
        if packets > MAX_PSNS:
            raise McsimError(
                f"Scenario: bytes_per_rank={sc.bytes_per_rank!r} sends {packets} packets over one RC QP; "
                f"RC PSNs are 32-bit and must not wrap in a run (at most {MAX_PSNS}): use a smaller buffer"
            )


def buffer_transfers(sc: Scenario) -> int:
    """Buffers of N sent over RC by the tree, pairwise and logarithmic algorithms: P-1 (a chain or
    binomial Broadcast), P(P-1) (an Alltoall, a recursive doubling or Bruck Allgather)."""
    p = sc.n_ranks
    each = p * (p - 1)  # an Alltoall's blocks, a logarithmic Allgather's shards
    transfers = {"chain": p - 1, "binomial": p - 1, "pairwise": each, "all_at_once": each}
    transfers |= {"tree": 2 * (p - 1), "double_tree": 2 * (p - 1)}  # up and down every edge (two halves)
    return (transfers | {"recursive_doubling": each, "bruck": each}).get(sc.algorithm, 0)


def region_end_b(team: Part | TeamSpec, ranks: int, verify: bool) -> int:
    """Where a team's buffer ends in each rank's region (its ``ranks``' regions), for a rank class that may place it
    at an offset (REGION_OFFSET_RANKS; a tree Allreduce's, tree_end_b; 0 for the others, whose buffers memory_b
    sizes from the collective): the team's region offset, then its output buffer (P shards, or one buffer: a
    Broadcast's, an Allreduce's), then, in verify mode, a ring reduction's landing zone of the same size (C++
    RingReduceScatter::LandingOffset)."""
    rank = ALGORITHMS[team.collective, team.algorithm]
    if rank == TREE_AR:
        return tree_end_b(team)
    if rank not in REGION_OFFSET_RANKS:
        return 0
    landing = verify and team.algorithm == "ring" and team.collective in ("reduce_scatter", "allreduce")
    return team.region_offset_b + output_b(team.collective, team.bytes_per_rank_b, ranks) * (2 if landing else 1)


def tree_end_b(team: Part | TeamSpec) -> int:
    """Where a tree Allreduce's bytes end in each rank's region, verify mode or not (its WRITEs land in its scratch
    either way): its buffer at buffer_offset_b, its scratch (TREE_SCRATCH buffers: the partial sum, a landing zone
    per child) at scratch_offset_b, or right after the buffer."""
    end = team.buffer_offset_b + team.bytes_per_rank_b
    scratch = end if team.scratch_offset_b is None else team.scratch_offset_b
    return max(end, scratch + TREE_SCRATCH * team.bytes_per_rank_b)


def parts_end_b(sc: Scenario, verify: bool) -> int:
    """The furthest region_end_b of the collective's teams (each on its ranks): the region holds every team."""
    return max(region_end_b(part, len(part.hosts) if part.hosts else sc.n_ranks, verify) for part in sc.plan().parts)


def memory_b(sc: Scenario) -> int:
    """The region each rank registers (rdma.region_b): P x N, or more for verify mode's bytes (an
    Alltoall's: its send and receive buffers always) and for teams placed at an offset of it (parts_end_b)."""
    # an Alltoall's receive buffer and the landing zones of a Reduce, a tree and a two-phase Allreduce's ring
    # (after its padded blocks) are written to even without verify
    landing = sc.collective in ("alltoall", "reduce") or sc.algorithm in (*TREE_ALLREDUCES, "ring_mcast", "innet_mcast")
    always = verify_memory_b(sc) if landing else 0
    return max(
        1, sc.n_ranks * sc.bytes_per_rank_b, verify_memory_b(sc) if sc.verify else 0, always, parts_end_b(sc, False)
    )


def verify_memory_b(sc: Scenario) -> int:
    """Verify mode's real bytes per rank: the most of the collective's (_collective_verify_b) and of its teams placed
    at an offset of the region (parts_end_b)."""
    return max(_collective_verify_b(sc), parts_end_b(sc, True))


def _collective_verify_b(sc: Scenario) -> int:
    """The collective's real bytes per rank: its output buffer, twice that for a ring reduction (the
    landing zone its partial sums arrive in: C++ RingReduceScatter) and an Alltoall (its send
    buffer, then its receive buffer)."""
    if sc.algorithm in ("ring_mcast", "innet_mcast"):  # P blocks, a ring's landing zone after them
        return sc.n_ranks * sc.plan().parts[0].bytes_per_rank_b * (2 if sc.algorithm == "ring_mcast" else 1)
    ring_reduction = sc.algorithm == "ring" and sc.collective in ("reduce_scatter", "allreduce")
    steps = max(1, (sc.n_ranks - 1).bit_length())  # ceil(log2 P)
    if sc.collective == "reduce":  # the buffer, the partial sum, a landing zone per child (C++ TreeReduce)
        return sc.output_b * (2 + steps)
    if sc.algorithm in TREE_ALLREDUCES:  # the same for the binary tree's two children (each half's, after N)
        return sc.output_b * 4
    if sc.algorithm == "halving_doubling":  # the buffer, a landing zone per halving step
        return sc.output_b * (1 + steps)
    return sc.output_b * (2 if ring_reduction or sc.collective == "alltoall" else 1)
