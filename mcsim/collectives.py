# SPDX-License-Identifier: GPL-2.0-only
"""Which C++ rank application runs a collective, with which parameters.

A collective is (kind, algorithm): ("allgather", "ring") runs ns3::mcsim::RingAllgather on every
rank, ("allgather", "mcast") and ("broadcast", "mcast") run ns3::mcsim::McastAllgather (the
SC'24 multicast protocol with its repair phase), ("reduce_scatter", "ring") runs
ns3::mcsim::RingReduceScatter, ("reduce_scatter", "innet") and ("allreduce", "innet") run
ns3::mcsim::InnetReduction (the switches sum: in-network reduction over the fabric's aggregation
trees). ``start_team`` puts one team of ranks on an RdmaStack; several teams may share a stack
(they run at once on the same NICs).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from mcsim import native, runtime
from mcsim.arrays import read_counters, u32
from mcsim.attributes import make_factory
from mcsim.errors import pick

# (collective, algorithm) -> the C++ rank application
ALGORITHMS = {
    ("allgather", "ring"): "ns3::mcsim::RingAllgather",
    ("allgather", "mcast"): "ns3::mcsim::McastAllgather",
    ("broadcast", "mcast"): "ns3::mcsim::McastAllgather",
    ("reduce_scatter", "ring"): "ns3::mcsim::RingReduceScatter",
    ("reduce_scatter", "innet"): "ns3::mcsim::InnetReduction",
    ("allreduce", "innet"): "ns3::mcsim::InnetReduction",
}
COLLECTIVES = sorted({c for c, _ in ALGORITHMS})


@dataclass(frozen=True, slots=True, kw_only=True)
class TeamSpec:
    """One collective on a set of hosts; bytes in bytes, times in ps."""

    collective: str  # "allgather", "broadcast", "reduce_scatter" or "allreduce"
    algorithm: str  # "ring", "mcast" or "innet"
    hosts: tuple[int, ...]  # rank i runs on hosts[i]
    bytes_per_rank_b: int  # Allgather: each rank's shard; Broadcast: the root's buffer
    group: int = 0  # the team's first multicast group (index into the fabric's groups)
    first_tree: int = 0  # innet: the team's first aggregation tree (fabric.Reduction)
    trees: int = 1  # innet: aggregation trees its chunks spread over
    endpoints: int = 1  # mcast: UD QPs per rank, each in its own group (group .. group+endpoints-1)
    roots: int = 2  # mcast Allgather: ranks multicasting at once (K)
    batch: int = 128  # mcast, innet: datagrams posted before waiting for a completion
    stop_and_wait: bool = False  # mcast: whole batches, the next when the last completed (the artifact's)
    barriers: int = 0  # mcast: RC barriers before the data phase (the artifact's: 2)
    repair_reads: int = 0  # mcast: repair READs outstanding at most (0: all at once; the artifact's: 1)
    fin_wait: bool = False  # mcast: done only when its FIN is ACKed and r-1's FIN is in (the artifact's)
    chunk_b: int = 4096  # mcast, innet: bytes per datagram; ring: bytes per pipelined WRITE
    data_timeout_ps: int = 10**10  # mcast: the data phase ends after this
    root: int = 0  # Broadcast: the root rank
    reduce_ps_per_byte: int = 0  # Reduce-Scatter: time to add one received byte
    start_ps: int = 0

    def __post_init__(self) -> None:
        check_algorithm(self.collective, self.algorithm)


def check_algorithm(collective: str, algorithm: str) -> None:
    """Raise the one "unknown collective" or "unknown algorithm for <collective>" McsimError line."""
    pick("collective", collective, {c: c for c in COLLECTIVES})
    pick(f"algorithm for {collective}", algorithm, {a: a for c, a in ALGORITHMS if c == collective})


def start_team(stack: native.Handle, spec: TeamSpec) -> native.Handle:
    """Create, wire and schedule one team on an RdmaStack; return the C++ CollectiveTeam."""
    type_name = ALGORITHMS[(spec.collective, spec.algorithm)]
    if spec.algorithm == "mcast":
        factory = make_factory(
            type_name,
            "TeamSpec",
            ChunkBytes=spec.chunk_b,
            Roots=spec.roots,
            Batch=spec.batch,
            StopAndWait=spec.stop_and_wait,
            Barriers=spec.barriers,
            RepairReads=spec.repair_reads,
            FinWait=spec.fin_wait,
            DataTimeout=spec.data_timeout_ps,
            BroadcastRoot=spec.root if spec.collective == "broadcast" else -1,
            Endpoints=spec.endpoints,
        )
    elif spec.algorithm == "innet":
        factory = make_factory(
            type_name,
            "TeamSpec",
            ChunkBytes=spec.chunk_b,
            Batch=spec.batch,
            FirstTree=spec.first_tree,
            Trees=spec.trees,
            Allreduce=spec.collective == "allreduce",
        )
    elif spec.collective == "reduce_scatter":
        factory = make_factory(
            type_name,
            "TeamSpec",
            ChunkBytes=spec.chunk_b,
            ReducePerByte=spec.reduce_ps_per_byte,
        )
    else:
        factory = make_factory(type_name, "TeamSpec", ChunkBytes=spec.chunk_b)
    lib = runtime.load()
    team = native.Handle(lib, "ns3::mcsim::CollectiveTeam")
    try:
        lib.mcsim_team_setup(team, stack, factory, u32(spec.hosts), len(spec.hosts), spec.bytes_per_rank_b, spec.group)
        lib.mcsim_team_start(team, spec.start_ps)
    except BaseException:
        runtime.dispose(team)  # not handed to a Simulation yet
        raise
    return team


def team_stats(team: native.Handle) -> dict[str, np.ndarray]:
    """The "rank" stats of every rank of a team, as numpy arrays (after the run)."""
    lib = runtime.load()
    return read_counters("rank", lib.mcsim_team_n_ranks(team), partial(lib.mcsim_team_stats, team))
