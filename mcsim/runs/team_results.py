# SPDX-License-Identifier: GPL-2.0-only
"""A Scenario's Result from its teams: one team's Result from its stats and the NIC and fabric counters,
a collective's Result from its teams' (TWO_PHASE, SPLIT)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from mcsim.bounds import allreduce_block_b
from mcsim.config.collectives import SPLIT, Part, TeamSpec
from mcsim.config.fabric import Faults
from mcsim.errors import McsimError
from mcsim.result import FabricResult, Placement, Result
from mcsim.units import NEVER


def of_team(
    spec: TeamSpec,
    stats: dict[str, np.ndarray],
    nic: dict[str, np.ndarray],
    fres: FabricResult,
    data_rate_bps: int,
    faults: Faults,
) -> Result:
    """One team's Result (the NIC counters are its hosts', rank r's of spec.hosts[r]: every team's on them)."""
    hosts = np.array(spec.hosts, dtype=np.intp)
    return Result(
        collective=spec.collective,
        algorithm=spec.algorithm,
        ranks=len(spec.hosts),
        bytes_per_rank_b=spec.bytes_per_rank_b,
        data_rate_bps=data_rate_bps,
        finish_ps=stats["finish_ps"].copy(),  # int64, NEVER where the rank never finished
        injected_b=nic["tx_payload"][hosts],
        received_b=nic["rx_payload"][hosts],
        rank=stats,
        nic={k: v[hosts] for k, v in nic.items()},
        fabric=fres,
        link_down_for_good_ps=faults.down_for_good_ps(spec.hosts),
    )


def combined(
    results: list[Result], collective: str, algorithm: str, bytes_per_rank_b: int, *, at_once: bool | None = None
) -> Result:
    """The collective's Result from its teams' (TWO_PHASE, SPLIT: two), the ranks' counters of both
    added. TWO_PHASE: the second team's times (a rank's finish is its second phase's), the first
    phase's Result in ``first_phase``; SPLIT: a rank finishes when both its halves are in. ``at_once``: SPLIT's
    (None: whether the collective is in SPLIT; False: a SPLIT collective's Result as a phase)."""
    if len(results) == 1:
        return results[0]
    first, second = results
    times = ("finish_ps", "data_phase_end_ps")
    rank = {k: v if k in times else v + first.rank[k] for k, v in second.rank.items()}
    kept: dict[str, Any] = {"first_phase": first}
    if ((collective, algorithm) in SPLIT) if at_once is None else at_once:
        never = (first.finish_ps == NEVER) | (second.finish_ps == NEVER)
        both = np.where(never, NEVER, np.maximum(first.finish_ps, second.finish_ps))
        rank["finish_ps"] = both
        kept = {"finish_ps": both}
    return dataclasses.replace(
        second, collective=collective, algorithm=algorithm, bytes_per_rank_b=bytes_per_rank_b, rank=rank, **kept
    )


def merged(specs: list[TeamSpec], results: list[Result], ranks: int) -> Result:
    """One phase of a hierarchical collective, several teams at once on disjoint hosts covering 0..P-1, as one
    Result over ranks 0..P-1 (rank h on host h): each rank's times and counters its team's; its bound a team's
    (team_ranks, the teams' data rate)."""
    order = np.concatenate([np.array(s.hosts, dtype=np.intp) for s in specs])
    if sorted(order.tolist()) != list(range(ranks)):
        raise McsimError(f"merged: the teams' hosts {sorted(order.tolist())} are not the ranks 0..{ranks - 1}")

    def by_host(arrays: list[np.ndarray]) -> np.ndarray:
        out = np.empty(ranks, dtype=arrays[0].dtype)
        out[order] = np.concatenate(arrays)
        return out

    first = results[0]
    return dataclasses.replace(
        first,
        ranks=ranks,
        team_ranks=len(specs[0].hosts),
        finish_ps=by_host([r.finish_ps for r in results]),
        injected_b=by_host([r.injected_b for r in results]),
        received_b=by_host([r.received_b for r in results]),
        rank={k: by_host([r.rank[k] for r in results]) for k in first.rank},
        nic={k: by_host([r.nic[k] for r in results]) for k in first.nic},
        link_down_for_good_ps=None
        if first.link_down_for_good_ps is None
        else by_host([r.link_down_for_good_ps for r in results if r.link_down_for_good_ps is not None]),
    )


def phased(
    specs: list[TeamSpec],
    results: list[Result],
    parts: tuple[Part, ...],
    what: tuple[str, str, int],
    placement: Placement | None,
    network_bps: int = 0,
) -> Result:
    """The collective's (``what``: collective, algorithm, bytes per rank) Result from its teams': :func:`combined`,
    or for a hierarchical collective (``placement``) its phases (:func:`_phase`), then combined as TWO_PHASE's (a
    rank's finish is its last phase's, the phase before in ``first_phase``; an Allreduce's four: its Reduce-Scatter's
    two, then its Allgather's, first_phase the Reduce-Scatter's; hier_tree's three: first_phase the rails' double
    trees, theirs the node Reduce-Scatter), with the placement and the NICs' data rate ``network_bps`` (each phase
    keeps its teams': NVLink's in a node)."""
    collective, algorithm, n = what
    if placement is None:
        return combined(results, collective, algorithm, n)
    ranks = placement.nodes * placement.gpus
    phases = [
        _phase(
            [s for s, q in zip(specs, parts, strict=True) if q.phase == k],
            [r for r, q in zip(results, parts, strict=True) if q.phase == k],
            ranks,
        )
        for k in sorted({q.phase for q in parts})
    ]

    def placed(r: Result) -> Result:  # the collective's (or a half's): its placement, bound, the NICs' rate
        return dataclasses.replace(r, placement=placement, team_ranks=None, data_rate_bps=network_bps)

    if len(phases) == 4:  # an Allreduce: its Reduce-Scatter's two phases, then its Allgather's, on blocks
        block = allreduce_block_b(n, ranks)
        phases = [
            placed(combined(phases[:2], "reduce_scatter", algorithm, block)),
            placed(combined(phases[2:], "allgather", algorithm, block)),
        ]
    if len(phases) == 3:  # the node Reduce-Scatter, then the rails' trees (their own bound), then the node Allgather
        trees = phases[1]
        first = combined(phases[:2], trees.collective, trees.algorithm, trees.bytes_per_rank_b, at_once=False)
        phases = [first, phases[2]]
    return placed(combined(phases, collective, algorithm, n))


def _phase(specs: list[TeamSpec], results: list[Result], ranks: int) -> Result:
    """One phase of a hierarchical collective, its teams :func:`merged`; the two teams of a SPLIT collective on the
    same hosts (a rail's double tree: hier_tree) first :func:`combined` into that collective's."""
    teams: dict[tuple[int, ...], list[int]] = {}
    for i, spec in enumerate(specs):
        teams.setdefault(spec.hosts, []).append(i)
    joined = []
    for team in teams.values():
        halves = [results[i] for i in team]
        spec = specs[team[0]]
        if len(halves) == 1:
            joined.append(halves[0])
            continue
        split = next(key for key, a in SPLIT.items() if key[0] == spec.collective and a == spec.algorithm)
        joined.append(combined(halves, *split, sum(r.bytes_per_rank_b for r in halves)))
    return merged([specs[team[0]] for team in teams.values()], joined, ranks)
