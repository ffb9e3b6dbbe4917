# SPDX-License-Identifier: GPL-2.0-only
"""Collectives as frozen data: which (collective, algorithm) pairs exist (ALGORITHMS: each names its
C++ rank application) and one team's settings (TeamSpec); no C++.

mcsim.native.collectives starts a team on an RdmaStack (start_team) and reads its stats.
"""

from __future__ import annotations

from dataclasses import dataclass

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
