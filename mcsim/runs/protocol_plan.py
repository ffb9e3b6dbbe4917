# SPDX-License-Identifier: GPL-2.0-only
"""A protocol's settings for one ring team (mcsim.config.protocols), planned from its hosts and the fabric.

A step of NCCL's latency model costs hwLat in all. mcsim's own step already takes the NICs' latencies (the
sender's post to the wire, the receiver's last byte to its completion: RdmaConfig.send_latency_ps and
receive_latency_ps) and the path's (the links' propagation and the switches' forwarding), so a rank waits hwLat
less those before each chunk: less the fastest such path of the team's steps of that kind (to a rank of the same
node, or of another node), never below 0. A step on a longer path (a spine more) then takes that much longer than
NCCL's constant, as on a machine; where mcsim's own step is longer than NCCL's (LL inside a node: 0.6 us against
mcsim's 0.6 us of NIC latencies alone, an assumption fitted to a ConnectX-3), it takes mcsim's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import networkx as nx

from mcsim.config.protocols import PROTOCOLS, Protocol
from mcsim.topology.nodes import Nodes
from mcsim.topology.rules import SWITCH


def _weight(g: nx.Graph[Any], switch_latency_ps: int) -> Callable[[Any, Any, dict[str, Any]], int]:
    """A hop's latency, serialisation aside: the link's delay_ps and the forwarding latency of the node it enters if
    that is a switch (its own ``latency_ps``, else the fabric's)."""

    def weight(_a: Any, b: Any, edge: dict[str, Any]) -> int:
        node = g.nodes[b]
        forwarding = node.get("latency_ps", switch_latency_ps) if node.get("role") == SWITCH else 0
        return int(edge["delay_ps"]) + int(forwarding)

    return weight


def path_latency_ps(g: nx.Graph[Any], src: int, dst: int, switch_latency_ps: int) -> int:
    """The fastest path's latency from host ``src`` to host ``dst``, serialisation aside: its links' delay_ps and
    the forwarding latency of every switch on it (a switch's own ``latency_ps``, else the fabric's)."""
    return int(nx.shortest_path_length(g, src, dst, weight=_weight(g, switch_latency_ps)))


def _fastest_ps(g: nx.Graph[Any], pairs: list[tuple[int, int]], switch_latency_ps: int) -> int:
    """The least :func:`path_latency_ps` among ``pairs``: one search from each source (a tree's pairs are every two
    of its ranks: k searches, not k^2 / 2)."""
    weight = _weight(g, switch_latency_ps)
    targets: dict[int, list[int]] = {}
    for a, b in pairs:
        targets.setdefault(a, []).append(b)
    best = None
    for a, bs in targets.items():
        reached = nx.single_source_dijkstra_path_length(g, a, weight=weight)
        fastest = min(int(reached[b]) for b in bs)
        best = fastest if best is None else min(best, fastest)
    assert best is not None  # pairs is not empty
    return best


def _step_ps(
    latency_ps: int, edges: list[tuple[int, int]], g: nx.Graph[Any], switch_latency_ps: int, nic_ps: int
) -> int:
    if not edges:
        return 0
    return max(0, latency_ps - nic_ps - _fastest_ps(g, edges, switch_latency_ps))


def protocol_fields(
    name: str,
    algorithm: str,
    hosts: Sequence[int],
    g: nx.Graph[Any],
    nodes: Nodes | None,
    switch_latency_ps: int,
    nic_latency_ps: int,
    first_phase: bool,
) -> dict[str, int]:
    """The TeamSpec fields of protocol ``name`` for a team of ``algorithm`` ("ring", or "tree") on ``hosts`` (a ring's
    in ring order): lines, the step delays, hosts per node, and (``first_phase``: the collective's first teams) the
    launch as start_ps. {} for "none". ``nic_latency_ps``: a step's NICs' latencies (send and receive). A ring's
    steps are its neighbours'; a tree's, any two of its ranks' (the fastest path of a kind among them: its edges are
    the C++ tree's)."""
    protocol: Protocol | None = PROTOCOLS[name]
    if protocol is None:
        return {}
    steps = protocol.tree if algorithm == "tree" else protocol.ring
    gpus = nodes.gpus if nodes is not None else 1
    count = len({h // gpus for h in hosts})
    per_node = len(hosts) // count
    if algorithm == "tree":
        pairs = [(a, b) for a in hosts for b in hosts if a < b]
    else:
        pairs = list(zip(hosts, (*hosts[1:], hosts[0]), strict=True)) if len(hosts) > 1 else []
    inside = [(a, b) for a, b in pairs if a // gpus == b // gpus]
    across = [(a, b) for a, b in pairs if a // gpus != b // gpus]
    node_ps = steps.nvlink_ps if count == 1 else max(steps.nvlink_ps, steps.net_overhead_ps)
    net_ps = steps.net_ps if per_node > 1 else steps.net_one_per_node_ps
    return {
        "line_b": protocol.line_b,
        "line_data_b": protocol.line_data_b,
        "step_node_ps": _step_ps(node_ps, inside, g, switch_latency_ps, nic_latency_ps),
        "step_net_ps": _step_ps(net_ps, across, g, switch_latency_ps, nic_latency_ps),
        "gpus_per_node": nodes.gpus if nodes is not None else 0,
        "start_ps": steps.launch_ps if first_phase else 0,
    }
