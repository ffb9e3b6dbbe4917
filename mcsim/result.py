# SPDX-License-Identifier: GPL-2.0-only
"""Result: what one collective run measured, as numpy arrays, with nccl-tests bandwidths."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mcsim.fabric import FabricResult

PS_PER_S = 10**12


@dataclass(frozen=True, slots=True)
class Result:
    """One collective run. Times in ps from the collective's start; bytes in bytes."""

    collective: str
    algorithm: str
    ranks: int
    bytes_per_rank: int
    data_rate_bps: int  # the hosts' link data rate (after encoding)
    finish_ps: np.ndarray  # per rank: every byte of its output is there (-1: never)
    injected_b: np.ndarray  # per rank: payload bytes its NIC sent (data, control, repair)
    received_b: np.ndarray  # per rank: payload bytes its NIC received
    rank: dict[str, np.ndarray]  # collectives.RANK_STATS per rank
    nic: dict[str, np.ndarray]  # rdma.NIC_COUNTERS per rank (the NIC's: every collective on it)
    fabric: FabricResult
    concurrent: Result | None = None  # the collective that ran at the same time (Scenario.overlap)
    verified: bool | None = None  # verify mode: every byte of every output right (None: not checked)
    wrong_bytes: np.ndarray | None = None  # verify mode: per rank, bytes of its output that differ

    @property
    def complete(self) -> bool:
        """Every rank ended with its whole output."""
        return bool((self.finish_ps >= 0).all())

    @property
    def time_ps(self) -> int:
        """When the last rank had its whole output."""
        return int(self.finish_ps.max())

    @property
    def output_b(self) -> int:
        """nccl-tests size: P shards (Allgather, Reduce-Scatter input) or the buffer (Broadcast)."""
        return self.bytes_per_rank * (1 if self.collective == "broadcast" else self.ranks)

    @property
    def algbw_Bps(self) -> float:
        """nccl-tests algorithm bandwidth: output bytes / time, in bytes/s."""
        return self.output_b * PS_PER_S / self.time_ps

    @property
    def busbw_Bps(self) -> float:
        """nccl-tests bus bandwidth: algbw * (P-1)/P (Allgather, Reduce-Scatter), algbw (Broadcast)."""
        factor = 1.0 if self.collective == "broadcast" else (self.ranks - 1) / self.ranks
        return self.algbw_Bps * factor

    @property
    def receive_bound_ps(self) -> float:
        """The lower bound: each rank must receive the output it lacks through one link."""
        lacking = self.bytes_per_rank * (1 if self.collective == "broadcast" else self.ranks - 1)
        return lacking * 8 * PS_PER_S / self.data_rate_bps

    def summary(self) -> dict[str, Any]:
        """Scalars for tables, CSV and JSON (units in the names)."""
        return {
            "collective": self.collective,
            "algorithm": self.algorithm,
            "ranks": self.ranks,
            "size_B": self.bytes_per_rank,
            "time_us": self.time_ps / 1e6,
            "algbw_GBps": self.algbw_Bps / 1e9,
            "busbw_GBps": self.busbw_Bps / 1e9,
            "bound_us": self.receive_bound_ps / 1e6,
            "injected_B_per_rank": float(self.injected_b.mean()),
            "link_traversals": self.fabric.link_traversals(),
            "retransmits": int(self.nic["retransmits"].sum()),
            "receive_drops": int(self.rank["receive_drops"].sum()),
            "repaired_chunks": int(self.rank["repaired_chunks"].sum()),
            "repair_reads": int(self.rank["repair_reads"].sum()),
            "complete": self.complete,
            "verified": self.verified,
        }
