# SPDX-License-Identifier: GPL-2.0-only
"""The subnet manager: routes around links that are down, as an InfiniBand SM does.

When a link goes down or comes back, a real fabric's switches send a trap to the subnet manager,
which sweeps the fabric, recomputes unicast routes and multicast trees over the links that are up
and reprograms every switch. mcsim models that with one delay (``Faults.reroute_delay_ps``): the
reroute that follows a change at time t happens at t + delay, sees the links as they are then, and
reprograms all switches at that instant. Packets sent into a dead link before the reroute are lost;
the transports and collectives recover through their own repair.

The link-down times are known before the run, so the plan is computed in Python beforehand and
handed to C++ as scheduled table changes: no Python runs during the simulation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mcsim.routing.layout import Layout
from mcsim.routing.routes import MulticastTree, UnicastTables, multicast_tree, unicast_tables, updown_tables

Edge = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Routes:
    """The routes of one state of the fabric: the edges down, unicast tables, one tree per group."""

    down: frozenset[Edge]
    tables: UnicastTables | None  # None: a fabric without switches
    trees: tuple[MulticastTree | None, ...]  # None: no member of the group is reachable


@dataclass(frozen=True, slots=True)
class Reroute:
    """The subnet manager reprograms every switch with ``routes`` at ``at_ps``."""

    at_ps: int
    routes: Routes


def _down_at(intervals: dict[Edge, list[tuple[int, int | None]]], t: int) -> frozenset[Edge]:
    return frozenset(e for e, ivs in intervals.items() if any(d <= t and (u is None or t < u) for d, u in ivs))


def routes(layout: Layout, groups: list[list[int]], down: frozenset[Edge]) -> Routes:
    """Unicast tables and multicast trees over the links that are up (all of them if down is empty:
    unicast_tables, kept by the Layout)."""
    has_switches = layout.nodes > layout.hosts
    if not down:
        tables = unicast_tables(layout) if has_switches else None
        return Routes(down, tables, tuple(multicast_tree(layout, m) for m in groups))
    return Routes(
        down,
        updown_tables(layout, down) if has_switches else None,
        tuple(multicast_tree(layout, m, down=down) for m in groups),
    )


def plan_routes(
    layout: Layout,
    groups: list[list[int]],
    link_down: Sequence[tuple[int, int, int, int | None]],
    reroute_delay_ps: int | None,
) -> tuple[Routes, list[Reroute]]:
    """The routes the fabric starts with and the reroutes that change them.

    Links down at time 0 are routed around from the start (the subnet manager configured the fabric
    before the run). Every later change at t (a link going down or coming back) triggers a reroute at
    t + reroute_delay_ps; a reroute that finds the same links down as the routes in force changes
    nothing and is left out. With reroute_delay_ps None there is no subnet manager: the routes are
    those of the whole fabric for the whole run.
    """
    if reroute_delay_ps is None or not link_down:
        return routes(layout, groups, frozenset()), []
    intervals: dict[Edge, list[tuple[int, int | None]]] = {}
    for u, v, down_ps, up_ps in link_down:
        intervals.setdefault((min(u, v), max(u, v)), []).append((down_ps, up_ps))
    changes = {d for ivs in intervals.values() for d, _ in ivs} | {u for ivs in intervals.values() for _, u in ivs}
    current = routes(layout, groups, _down_at(intervals, 0))
    start = current
    reroutes = []
    for t in sorted(c + reroute_delay_ps for c in changes if c is not None and c > 0):
        down = _down_at(intervals, t)
        if down != current.down:
            current = routes(layout, groups, down)
            reroutes.append(Reroute(t, current))
    return start, reroutes
