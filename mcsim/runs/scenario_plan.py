# SPDX-License-Identifier: GPL-2.0-only
"""A Scenario's plan (Scenario.plan()): the teams its collective runs on ranks 0..P-1 and what they need of the
fabric, as what reads a Scenario (its checks, its buffers, its cost, a run of jobs) sees it."""

from __future__ import annotations

from dataclasses import dataclass

from mcsim.config.collectives import Part


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioPlan:
    """What a Scenario runs: ``parts``, its collective's teams (two for a TWO_PHASE or SPLIT collective; the
    Reduce-Scatter of ``overlap`` is not among them: Scenario.teams adds it); sizes in bytes."""

    parts: tuple[Part, ...]
    ranks: int  # P, on hosts 0..P-1
    multicast: bool  # its algorithm multicasts: the protocol's options apply, its endpoints are multicast groups
    in_network: bool  # it, or its overlapped Reduce-Scatter, sums in the switches (an aggregation tree each)
    sources: int  # ranks that contribute a shard: every rank, or a Broadcast's root
    rings: int  # ring collectives in the run: the ring algorithm's, and the overlapped ring Reduce-Scatter
    lacking_b: int  # what each rank must receive (a Broadcast's or an Allreduce's N, else N(P-1))
