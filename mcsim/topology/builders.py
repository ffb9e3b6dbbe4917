# SPDX-License-Identifier: GPL-2.0-only
"""Topology builders: functions that return a fabric as a networkx graph (fat-tree, leaf-spine)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import networkx as nx

from mcsim.errors import McsimError, require_integer, require_positive
from mcsim.topology.nodes import nodes_of, nvlink_node, rail_optimised
from mcsim.topology.physics import Link, edge_attrs
from mcsim.topology.rules import HOST, SWITCH
from mcsim.util import machine


def fat_tree(
    k: int, *, rate_bps: int, delay_ps: int, encoding_data_bits: int = 1, encoding_line_bits: int = 1
) -> nx.Graph:
    """Return the classic 3-level k-ary fat-tree (Al-Fares et al. 2008).

    Parameters
    ----------
    k : int
        Switch radix, even and >= 2: k pods of k/2 edge and k/2 aggregation switches, (k/2)**2 core
        switches, k/2 hosts per edge switch.
    rate_bps : int
        Signalling rate of every link in bit/s.
    delay_ps : int
        Propagation delay of every link in ps (>= 0).
    encoding_data_bits, encoding_line_bits : int
        Line code of every link (64, 66 for 64b/66b; 1, 1 for none).

    Returns
    -------
    networkx.Graph
        Hosts ``0..k**3/4-1`` (pod by pod, edge by edge), then edge switches ("edge0".., tier 1),
        aggregation switches ("agg0".., tier 2) and core switches ("core0".., tier 3).

    Raises
    ------
    McsimError
        For an odd k or k < 2, a non-positive rate or encoding, or a negative delay.

    Notes
    -----
    k**3/4 hosts, 5*k**2/4 switches, 3*k**3/4 links, full bisection bandwidth. Edge switch j of a
    pod connects to every aggregation switch of its pod; aggregation switch j of every pod connects
    to core switches j*k/2 .. j*k/2+k/2-1.
    """
    require_integer("fat_tree", k=k)
    if k < 2 or k % 2:
        raise McsimError(f"fat_tree: k={k} must be even and >= 2; try k={max(2, k + k % 2)}")
    link = edge_attrs(
        "fat_tree",
        rate_bps=rate_bps,
        delay_ps=delay_ps,
        encoding_data_bits=encoding_data_bits,
        encoding_line_bits=encoding_line_bits,
    )
    half = k // 2
    hosts = k * half * half
    machine.require_fits(
        f"fat_tree: k={k} ({hosts} hosts, {5 * k * k // 4} switches; a route from every switch to every host)",
        machine.fabric_memory_b(hosts, 5 * k * k // 4, 3 * hosts),
    )
    first_edge = hosts
    first_agg = first_edge + k * half
    first_core = first_agg + k * half
    g: nx.Graph[int] = nx.Graph(name=f"fat-tree-k{k}", builder="fat_tree")
    g.graph["params"] = {
        "k": k,
        "rate_bps": rate_bps,
        "delay_ps": delay_ps,
        "encoding_data_bits": encoding_data_bits,
        "encoding_line_bits": encoding_line_bits,
    }
    _add_nodes(g, hosts, (("edge", k * half), ("agg", k * half), ("core", half * half)))
    for h in range(hosts):
        g.add_edge(h, first_edge + h // half, **link)
    for pod in range(k):
        for e in range(half):
            for a in range(half):
                g.add_edge(first_edge + pod * half + e, first_agg + pod * half + a, **link)
    for pod in range(k):
        for a in range(half):
            for c in range(half):
                g.add_edge(first_agg + pod * half + a, first_core + a * half + c, **link)
    return g


def leaf_spine(
    leaves: int,
    spines: int,
    hosts_per_leaf: int | Sequence[int],
    links_per_leaf_spine: int = 1,
    *,
    rate_bps: int,
    delay_ps: int,
    encoding_data_bits: int = 1,
    encoding_line_bits: int = 1,
    switch_ports: int | None = None,
) -> nx.Graph:
    """Return a two-tier leaf-spine (folded Clos) fabric.

    Parameters
    ----------
    leaves : int
        Number of leaf switches (>= 1).
    spines : int
        Number of spine switches (>= 1; 0 only with one leaf: a single-switch star).
    hosts_per_leaf : int or sequence of int
        Hosts on every leaf, or one count per leaf (each >= 1).
    links_per_leaf_spine : int
        Parallel links from every leaf to every spine (>= 1).
    rate_bps, delay_ps, encoding_data_bits, encoding_line_bits : int
        Link parameters as in :func:`fat_tree`.
    switch_ports : int or None
        Ports per switch; if given, a leaf or spine that needs more ports is rejected.

    Returns
    -------
    networkx.Graph
        Hosts numbered leaf by leaf, then leaves ("leaf0".., tier 1), then spines ("spine0"..,
        tier 2). Each leaf-spine edge has ``parallel = links_per_leaf_spine``.

    Raises
    ------
    McsimError
        For bad counts, a switch with more links than ``switch_ports``, or bad link parameters.

    Notes
    -----
    A leaf's oversubscription is hosts / (spines * links_per_leaf_spine) at equal link rates; it
    may exceed 1 (see :func:`summary`).
    """
    counts = _leaf_counts(leaves, spines, hosts_per_leaf, links_per_leaf_spine)
    link = edge_attrs(
        "leaf_spine",
        rate_bps=rate_bps,
        delay_ps=delay_ps,
        encoding_data_bits=encoding_data_bits,
        encoding_line_bits=encoding_line_bits,
    )
    if switch_ports is not None:
        _check_leaf_spine_ports(counts, spines, links_per_leaf_spine, switch_ports)
    hosts = sum(counts)
    _require_fits(hosts, leaves, spines)
    g: nx.Graph[int] = nx.Graph(name=f"leaf-spine-{leaves}x{spines}", builder="leaf_spine")
    g.graph["params"] = {
        "leaves": leaves,
        "spines": spines,
        "hosts_per_leaf": hosts_per_leaf if isinstance(hosts_per_leaf, int) else counts,
        "links_per_leaf_spine": links_per_leaf_spine,
        "rate_bps": rate_bps,
        "delay_ps": delay_ps,
        "encoding_data_bits": encoding_data_bits,
        "encoding_line_bits": encoding_line_bits,
        "switch_ports": switch_ports,
    }
    _add_nodes(g, hosts, (("leaf", leaves), ("spine", spines)))
    h = 0
    for i, n in enumerate(counts):
        for _ in range(n):
            g.add_edge(h, hosts + i, **link)
            h += 1
    for i in range(leaves):
        for j in range(spines):
            g.add_edge(hosts + i, hosts + leaves + j, **{**link, "parallel": links_per_leaf_spine})
    return g


def general_fat_tree(
    hosts_per_tor: int,
    tors_per_pod: int,
    pods: int,
    *,
    aggs_per_pod: int,
    cores_per_agg: int,
    tor_agg_links: int = 1,
    agg_core_links: int = 1,
    rate_bps: int,
    delay_ps: int,
    encoding_data_bits: int = 1,
    encoding_line_bits: int = 1,
    tor_uplink_rate_bps: int | None = None,
    agg_uplink_rate_bps: int | None = None,
) -> nx.Graph:
    """Return a 3-tier fat tree of any shape: pods of ToRs and aggregation switches, and a core tier.

    Parameters
    ----------
    hosts_per_tor, tors_per_pod, pods : int
        Hosts on every ToR, ToRs in every pod, pods (each >= 1).
    aggs_per_pod : int
        Aggregation switches in every pod (>= 1).
    cores_per_agg : int
        Core switches in each core group (>= 1; 0 only with one pod: no core tier).
    tor_agg_links, agg_core_links : int
        Parallel links from a ToR to each aggregation switch of its pod, and from an aggregation
        switch to each core switch of its group (>= 1).
    rate_bps, delay_ps, encoding_data_bits, encoding_line_bits : int
        Link parameters as in :func:`fat_tree` (every link).
    tor_uplink_rate_bps, agg_uplink_rate_bps : int or None
        Signalling rate of the ToR-aggregation and aggregation-core links (None: ``rate_bps``);
        a lower rate oversubscribes that tier.

    Returns
    -------
    networkx.Graph
        Hosts ``0..H-1`` (pod by pod, ToR by ToR), then ToRs ("tor0".., tier 1), aggregation
        switches ("agg0".., tier 2), core switches ("core0".., tier 3).

    Raises
    ------
    McsimError
        For a count that is not a positive integer, a core tier missing with several pods, or bad
        link parameters.

    Notes
    -----
    Wiring rule (Al-Fares et al.'s, generalised): ToR t of pod p holds hosts
    ``(p * tors_per_pod + t) * hosts_per_tor ..`` and has ``tor_agg_links`` links to every
    aggregation switch of its pod; the core tier is ``aggs_per_pod`` groups of ``cores_per_agg``
    switches, and aggregation switch j of every pod has ``agg_core_links`` links to every core
    switch of group j. So H = hosts_per_tor * tors_per_pod * pods hosts, pods * (tors_per_pod +
    aggs_per_pod) + aggs_per_pod * cores_per_agg switches, and H + pods * aggs_per_pod *
    (tors_per_pod * tor_agg_links + cores_per_agg * agg_core_links) links. A ToR is oversubscribed
    hosts_per_tor * rate / (aggs_per_pod * tor_agg_links * tor_uplink_rate), an aggregation switch
    tors_per_pod * tor_agg_links * tor_uplink_rate / (cores_per_agg * agg_core_links *
    agg_uplink_rate). Host to host: 2 hops within a ToR, 4 within a pod, 6 across pods.
    The authors' 1024-host, radix-32 tree (16 hosts per ToR, pods of 2 ToRs, every switch 32
    ports): ``general_fat_tree(16, 2, 32, aggs_per_pod=2, cores_per_agg=16, tor_agg_links=8, ...)``.
    """
    where = "general_fat_tree"
    counts = {
        "hosts_per_tor": hosts_per_tor,
        "tors_per_pod": tors_per_pod,
        "pods": pods,
        "aggs_per_pod": aggs_per_pod,
        "cores_per_agg": cores_per_agg,
        "tor_agg_links": tor_agg_links,
        "agg_core_links": agg_core_links,
    }
    _check_fat_tree_counts(counts, tor_uplink_rate_bps=tor_uplink_rate_bps, agg_uplink_rate_bps=agg_uplink_rate_bps)

    def tier_link(rate: int | None, parallel: int = 1) -> dict[str, int]:
        """The edge attributes of one tier's links (``rate`` None: the hosts' rate)."""
        return edge_attrs(
            where,
            rate_bps=rate_bps if rate is None else rate,
            delay_ps=delay_ps,
            encoding_data_bits=encoding_data_bits,
            encoding_line_bits=encoding_line_bits,
            parallel=parallel,
        )

    link, tor_up, agg_up = (
        tier_link(None),
        tier_link(tor_uplink_rate_bps, tor_agg_links),
        tier_link(agg_uplink_rate_bps, agg_core_links),
    )
    tors, aggs, cores = pods * tors_per_pod, pods * aggs_per_pod, aggs_per_pod * cores_per_agg
    hosts = tors * hosts_per_tor
    machine.require_fits(
        f"{where}: {hosts} hosts, {tors + aggs + cores} switches (a route from every switch to every host)",
        machine.fabric_memory_b(hosts, tors + aggs + cores, hosts + aggs * (tors_per_pod + cores_per_agg)),
    )
    g: nx.Graph[int] = nx.Graph(name=f"fat-tree-{hosts}-{hosts_per_tor}x{tors_per_pod}x{pods}", builder=where)
    g.graph["params"] = {
        **counts,
        "rate_bps": rate_bps,
        "delay_ps": delay_ps,
        "encoding_data_bits": encoding_data_bits,
        "encoding_line_bits": encoding_line_bits,
        "tor_uplink_rate_bps": tor_uplink_rate_bps,
        "agg_uplink_rate_bps": agg_uplink_rate_bps,
    }
    first_tor, first_agg, first_core = hosts, hosts + tors, hosts + tors + aggs
    _add_nodes(g, hosts, (("tor", tors), ("agg", aggs), ("core", cores)))
    for h in range(hosts):
        g.add_edge(h, first_tor + h // hosts_per_tor, **link)
    for pod, a in itertools.product(range(pods), range(aggs_per_pod)):
        agg = first_agg + pod * aggs_per_pod + a
        g.add_edges_from(((first_tor + pod * tors_per_pod + t, agg) for t in range(tors_per_pod)), **tor_up)
        g.add_edges_from(((agg, first_core + a * cores_per_agg + c) for c in range(cores_per_agg)), **agg_up)
    return g


def _add_nodes(g: nx.Graph[int], hosts: int, tiers: Sequence[tuple[str, int]]) -> None:
    """Hosts 0..hosts-1 ("h0".., tier 0), then each tier's switches (its name stem and count),
    numbered on from the hosts, tier 1 first."""
    for h in range(hosts):
        g.add_node(h, role=HOST, tier=0, name=f"h{h}")
    first = hosts
    for tier, (stem, n) in enumerate(tiers, start=1):
        for i in range(n):
            g.add_node(first + i, role=SWITCH, tier=tier, name=f"{stem}{i}")
        first += n


def _require_fits(hosts: int, leaves: int, spines: int) -> None:
    """The leaf-spine fabric's planning memory fits the machine (mcsim.util.machine), or one McsimError line."""
    machine.require_fits(
        f"leaf_spine: {hosts} hosts, {leaves + spines} switches (a route from every switch to every host)",
        machine.fabric_memory_b(hosts, leaves + spines, hosts + leaves * spines),
    )


def _leaf_counts(leaves: int, spines: int, hosts_per_leaf: int | Sequence[int], links: int) -> list[int]:
    """The hosts of each leaf, every count checked."""
    require_integer("leaf_spine", leaves=leaves, spines=spines, links_per_leaf_spine=links)
    require_positive("leaf_spine", leaves=leaves, links_per_leaf_spine=links)
    if spines < 0:
        raise McsimError(f"leaf_spine: spines={spines} must be >= 0")
    if spines == 0 and leaves > 1:
        raise McsimError(f"leaf_spine: spines=0 leaves {leaves} leaves disconnected; use spines >= 1 or leaves=1")
    if isinstance(hosts_per_leaf, int) and not isinstance(hosts_per_leaf, bool):
        require_positive("leaf_spine", hosts_per_leaf=hosts_per_leaf)
        _require_fits(leaves * hosts_per_leaf, leaves, spines)  # before a list of `leaves` counts is made
        counts = [hosts_per_leaf] * leaves
    elif isinstance(hosts_per_leaf, Sequence) and not isinstance(hosts_per_leaf, str):
        counts = list(hosts_per_leaf)
        if len(counts) != leaves:
            raise McsimError(
                f"leaf_spine: hosts_per_leaf has {len(counts)} entries but leaves={leaves}; give one count per leaf"
            )
    else:
        raise McsimError(f"leaf_spine: hosts_per_leaf={hosts_per_leaf!r} must be an integer or a list of integers")
    for i, n in enumerate(counts):
        require_integer("leaf_spine", **{f"hosts_per_leaf[{i}]": n})
        require_positive("leaf_spine", **{f"hosts_per_leaf[{i}]": n})
    return counts


def _check_leaf_spine_ports(counts: list[int], spines: int, links: int, switch_ports: int) -> None:
    """Every leaf and spine has the ports its links need."""
    require_integer("leaf_spine", switch_ports=switch_ports)
    require_positive("leaf_spine", switch_ports=switch_ports)
    uplinks = spines * links
    for i, n in enumerate(counts):
        if n + uplinks > switch_ports:
            raise McsimError(
                f"leaf_spine: leaf {i} needs {n + uplinks} ports ({n} hosts + {uplinks} spine links) but "
                f"switch_ports={switch_ports}; put fewer hosts on it or use fewer links_per_leaf_spine"
            )
    if len(counts) * links > switch_ports:
        raise McsimError(
            f"leaf_spine: spine 0 needs {len(counts) * links} ports ({len(counts)} leaves x "
            f"{links} links) but switch_ports={switch_ports}; use fewer leaves or fewer "
            "links_per_leaf_spine"
        )


def _check_fat_tree_counts(counts: dict[str, int], **uplinks: int | None) -> None:
    """general_fat_tree's counts and uplink rates."""
    where = "general_fat_tree"
    require_integer(where, **counts)
    require_positive(where, **{name: n for name, n in counts.items() if name != "cores_per_agg"})
    if counts["cores_per_agg"] < 0 or (counts["cores_per_agg"] == 0 and counts["pods"] > 1):
        raise McsimError(f"{where}: cores_per_agg={counts['cores_per_agg']} must be >= 1 (0 only with pods=1)")
    given = {name: rate for name, rate in uplinks.items() if rate is not None}
    require_integer(where, **given)
    require_positive(where, **given)


BUILDERS: dict[str, Callable[..., nx.Graph]] = {
    "fat_tree": fat_tree,
    "general_fat_tree": general_fat_tree,
    "leaf_spine": leaf_spine,
    "nvlink_node": nvlink_node,
    "rail_optimised": rail_optimised,
}


def with_link(g: nx.Graph, link: Link) -> nx.Graph:
    """A copy of topology g whose every network link has this rate and encoding (delays, parallel kept); the
    links inside a node of several GPUs (NVLink, PCIe: both ends in one node) keep theirs. On a fabric of planes
    (a NIC's network ports: Nodes.planes, mcsim.topology.rail_fabric) the rate is a NIC's: each plane's links get
    rate/planes."""
    nodes = nodes_of(g)
    planes = max(1, nodes.planes) if nodes is not None else 1
    if link.rate_bps % planes:
        raise McsimError(
            f"rate={link.rate_bps} bit/s: the fabric has {planes} planes, each at rate/{planes}; give a rate they "
            "divide exactly"
        )
    out = g.copy()
    for u, v, e in out.edges(data=True):
        if "node" in out.nodes[u] and "node" in out.nodes[v]:
            continue
        e.update(
            rate_bps=link.rate_bps // planes,
            encoding_data_bits=link.encoding_data_bits,
            encoding_line_bits=link.encoding_line_bits,
        )
    return out
