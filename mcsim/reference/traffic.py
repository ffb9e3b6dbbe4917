# SPDX-License-Identifier: GPL-2.0-only
"""The traffic of one Allgather: the SC'24 authors' model and mcsim's own count on a topology.

The authors' artifact (github.com/spcl/muliticast-based-allgather, commit b3a3121,
sim/estimate_allgather_cost.py) counts the link traversals of one Allgather on a fat tree of 1024
hosts and switch radix 32, in units of one shard crossing one link, for four schedules and P = 2,
4, ..., 1024, and calls baseline cost / multicast cost the traffic reduction (the paper's "2x").
:func:`authors_cost` and :func:`authors_table` follow their rule exactly, quirks included.
:func:`mcsim_cost` counts the same schedules on any mcsim topology with mcsim's own routing
(unicast up*/down* tables, one multicast tree per group), ranks on hosts 0..P-1; no simulation.

Schedules (the same in both counts; one shard per rank):

- ``ring``: rank r sends P-1 shards to r+1 (mod P).
- ``recursive_doubling``: at step d = 1, 2, 4, ..., P/2 rank r sends d shards to r XOR d
  (P a power of two).
- ``linear``: every rank sends its shard to every other rank.
- ``multicast``: every rank multicasts its shard to all P ranks once (P broadcasts).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mcsim.errors import McsimError, pick, require_int
from mcsim.routing import routes
from mcsim.routing.layout import Layout

SCHEDULES = ("ring", "recursive_doubling", "linear", "multicast")
POWERS = tuple(2**i for i in range(1, 11))  # the P of the authors' table: 2, 4, ..., 1024

# the authors' fat tree: 1024 hosts, radix 32; a ToR holds radix/2 hosts, a pod 2 ToRs
AUTHORS_HOSTS = 1024
AUTHORS_RADIX = 32
AUTHORS_TOR_HOSTS = AUTHORS_RADIX // 2
AUTHORS_POD_HOSTS = 2 * AUTHORS_TOR_HOSTS
# hops of a point-to-point send in their rule: within a ToR, within a pod, through the core
TOR_HOPS, POD_HOPS, CORE_HOPS = 2, 4, 6


def _check(where: str, schedule: str, p: int, hosts: int) -> None:
    pick("traffic schedule", schedule, {s: s for s in SCHEDULES})
    require_int(where, "p", p, lo=2, hi=hosts, why=f" (ranks on hosts 0..p-1 of {hosts})")
    if schedule == "recursive_doubling" and p & (p - 1):
        raise McsimError(f"{where}: p={p} must be a power of two for recursive_doubling")


def sends(schedule: str, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The point-to-point sends of a unicast schedule as arrays (src, dst, shards), one entry per
    (sender, receiver, step); ``shards`` is how many shards that entry moves.

    Raises
    ------
    McsimError
        For ``multicast`` (not point-to-point), an unknown schedule, p < 2, or recursive doubling
        with p not a power of two.
    """
    _check("sends", schedule, p, p)
    ranks = np.arange(p, dtype=np.int64)
    if schedule == "ring":
        return ranks, (ranks + 1) % p, np.full(p, p - 1, dtype=np.int64)
    if schedule == "linear":
        src, dst = np.divmod(np.arange(p * p, dtype=np.int64), p)
        keep = src != dst
        return src[keep], dst[keep], np.ones(int(keep.sum()), dtype=np.int64)
    if schedule == "recursive_doubling":
        steps = [1 << i for i in range(p.bit_length() - 1)]
        src = np.tile(ranks, len(steps))
        step = np.repeat(np.asarray(steps, dtype=np.int64), p)
        return src, src ^ step, step
    raise McsimError(f"sends: schedule {schedule!r} is not point-to-point; count it with a multicast tree")


def authors_hops(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Hops of point-to-point sends by the authors' rule (their ``calculate_p2p_cost``).

    Their "distance" is the signed rank difference dst - src: a send counts 2 hops if the distance
    is smaller than the room left in the sender's ToR (16 - src mod 16), else 4 if smaller than
    the room left in its pod (32 - src mod 32), else 6. Faithfully kept quirk: a negative distance
    (dst < src) is always "within the ToR", 2 hops, however far apart the ranks are. So the ring's
    wrap-around P-1 -> 0, and every backward send of the linear and recursive-doubling schedules
    (half of them), count 2 hops; the two baselines' costs are understated on more than 16 ranks.
    """
    distance = dst - src
    in_tor = distance < AUTHORS_TOR_HOSTS - src % AUTHORS_TOR_HOSTS
    in_pod = distance < AUTHORS_POD_HOSTS - src % AUTHORS_POD_HOSTS
    return np.where(in_tor, TOR_HOPS, np.where(in_pod, POD_HOPS, CORE_HOPS))


def authors_multicast_links(p: int) -> int:
    """Links one multicast to p ranks crosses by the authors' rule (``calculate_mcast_cost``).

    The same for every sender, whatever its position. Up to 16 ranks (one ToR): the sender's
    link plus p-1 host links down, p. Up to 32 (one pod): the sender's link, one ToR up-link, one
    link down to the other ToR and p-1 host links, p + 2. Beyond: 1 + D + T + p with T = p // 16
    ToRs (truncated) and D = ceil(T / 2) pods: the sender's link, one ToR and one aggregation
    up-link, D core down-links (the sender's own pod included), T-1 aggregation down-links and
    p-1 host links. A tree rooted at the core crosses D + T + p links: theirs counts one more.
    """
    if p <= AUTHORS_TOR_HOSTS:
        return p
    if p <= AUTHORS_POD_HOSTS:
        return p + 2
    tors = p // AUTHORS_TOR_HOSTS
    pods = -(-tors // 2)
    return 1 + pods + tors + p


def authors_cost(schedule: str, p: int) -> int:
    """Shard-link traversals of one Allgather of ``p`` ranks by the authors' rule (their script).

    Ranks are hosts 0..p-1 of their 1024-host, radix-32 fat tree. A point-to-point shard costs
    :func:`authors_hops`, a multicast :func:`authors_multicast_links`; the schedule's cost is the
    sum over its shards (multicast: p multicasts).

    Raises
    ------
    McsimError
        For an unknown schedule, p outside 2..1024, or recursive doubling with p not a power of two.
    """
    _check("authors_cost", schedule, p, AUTHORS_HOSTS)
    if schedule == "multicast":
        return p * authors_multicast_links(p)
    src, dst, shards = sends(schedule, p)
    return int((authors_hops(src, dst) * shards).sum())


def authors_table(ps: Sequence[int] = POWERS) -> list[dict[str, Any]]:
    """The authors' table: per P, each schedule's :func:`authors_cost` and ``reduction_<schedule>``
    = that cost / the multicast cost (``reduction_multicast`` is 1.0).

    Returns
    -------
    list of dict
        One row per P: ``p``, then ``ring``, ``recursive_doubling``, ``linear``, ``multicast``
        (shard-link traversals), then the four ``reduction_<schedule>`` (float).
    """
    rows = []
    for p in ps:
        costs = {s: authors_cost(s, p) for s in SCHEDULES}
        rows.append({"p": p, **costs, **{f"reduction_{s}": costs[s] / costs["multicast"] for s in SCHEDULES}})
    return rows


def unicast_hops(layout: Layout, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Links each send src[i] -> dst[i] crosses when mcsim routes it (its unicast tables).

    The route is walked with :func:`mcsim.routing.routes.path` once per pair of attachment switches
    (every other pair of hosts on the same two switches has the same hop count); the tables
    hold only minimal-hop ports, so the ECMP choice (here the first candidate) never changes a
    hop count.
    """
    tables = routes.unicast_tables(layout)
    leaf = np.asarray(layout.leaf_of, dtype=np.int64)
    pairs, first, which = np.unique(leaf[src] * layout.nodes + leaf[dst], return_index=True, return_inverse=True)
    hops = np.empty(len(pairs), dtype=np.int64)
    for k, i in enumerate(first):
        hops[k] = len(routes.path(layout, tables, int(src[i]), int(dst[i]), lambda _switch, _cands: 0)) - 1
    return hops[which.reshape(-1)]


def mcsim_cost(schedule: str, p: int, layout: Layout) -> int:
    """Shard-link traversals of the same schedule on the topology of ``layout``
    (:func:`mcsim.routing.layout.layout_of`), ranks on hosts 0..p-1, counted
    with mcsim's routing; no simulation.

    A point-to-point shard crosses the links of its unicast route (:func:`unicast_hops`). A
    multicast crosses every link of the group's tree exactly once (mcsim's switches copy a packet
    to every tree port but the one it came in on), so ``multicast`` costs p x the links of
    :func:`mcsim.routing.routes.multicast_tree` of hosts 0..p-1, the group mcsim's multicast Allgather
    uses; one of any parallel links is in the tree and counts once.

    Raises
    ------
    McsimError
        For an unknown schedule, p outside 2..hosts, or recursive doubling with p not a power of two.
    """
    _check("mcsim_cost", schedule, p, layout.hosts)
    if schedule == "multicast":
        tree = routes.multicast_tree(layout, range(p))
        assert tree is not None  # no links down: never None
        return p * len(tree.tree_links)
    src, dst, shards = sends(schedule, p)
    return int((unicast_hops(layout, src, dst) * shards).sum())


def traffic_reduction(p: int, layout: Layout, baseline: str = "ring") -> float:
    """mcsim_cost(baseline) / mcsim_cost("multicast") for p ranks on the topology of ``layout``: the
    traffic the multicast Allgather saves over the baseline schedule on that fabric."""
    return mcsim_cost(baseline, p, layout) / mcsim_cost("multicast", p, layout)
