# SPDX-License-Identifier: GPL-2.0-only
"""A picture of a fabric (``mcsim topo draw``): its nodes by tier (hosts at the bottom, the top tier at the
top, each tier's nodes in id order), its links in a line style per signalling rate, and optionally one
multicast group's tree (routes.multicast_tree: the tree the fabric builds for the group) and the first
aggregation tree of an in-network reduction over the group (routes.aggregation_trees) highlighted.

The drawing is data first (:func:`drawing_of`: positions, links, highlighted links), then a figure
(:func:`write_drawing`, matplotlib: ``pip install 'mcsim[report]'``), so that tests check what is drawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx

from mcsim import topology
from mcsim.errors import McsimError
from mcsim.routing.layout import layout_of
from mcsim.routing.routes import aggregation_trees, multicast_tree
from mcsim.units import format_rate

NAMED_SWITCHES = 24  # a tier of at most this many switches shows their names
LINE_STYLES = ("-", "--", ":", "-.")  # by signalling rate, fastest first; more rates cycle with thinner lines
TREE_COLOR, AGGREGATION_COLOR, LINK_COLOR = "#d62728", "#1f77b4", "#9a9a9a"
SUFFIXES = (".svg", ".png")


@dataclass(frozen=True, slots=True)
class FabricDrawing:
    """What a fabric's picture shows. ``links``: (u, v, signalling rate, parallel links), u < v;
    ``tree``/``aggregation``: the highlighted links (u < v); ``members``: the group's hosts."""

    name: str
    tiers: dict[int, tuple[int, ...]]  # tier -> its nodes, in id order
    positions: dict[int, tuple[float, float]]
    links: tuple[tuple[int, int, int, int], ...]
    rate_styles: dict[int, str]
    hosts: int
    names: dict[int, str]  # switch -> its name
    members: tuple[int, ...] = ()
    root: int | None = None
    tree: frozenset[tuple[int, int]] = frozenset()
    aggregation: frozenset[tuple[int, int]] = frozenset()


def _positions(g: nx.Graph) -> tuple[dict[int, tuple[int, ...]], dict[int, tuple[float, float]]]:
    """Each tier a row (tier t at height t), its nodes spread evenly over the width [0, 1]."""
    tiers: dict[int, list[int]] = {}
    for node, data in sorted(g.nodes(data=True)):
        tiers.setdefault(int(data["tier"]), []).append(node)
    positions = {n: ((i + 0.5) / len(row), float(t)) for t, row in tiers.items() for i, n in enumerate(row)}
    return {t: tuple(row) for t, row in sorted(tiers.items())}, positions


def _pairs(links: Any) -> frozenset[tuple[int, int]]:
    return frozenset((min(u, v), max(u, v)) for u, _, v, _ in links)


def drawing_of(g: nx.Graph, group: tuple[int, ...] = (), aggregation: bool = False) -> FabricDrawing:
    """The drawing of ``g`` (a valid topology), with ``group``'s multicast tree and, with ``aggregation``, the
    group's first aggregation tree highlighted."""
    tiers, positions = _positions(g)
    links = tuple(
        sorted((min(u, v), max(u, v), int(d["rate_bps"]), int(d["parallel"])) for u, v, d in g.edges(data=True))
    )
    rates = sorted({rate for _, _, rate, _ in links}, reverse=True)
    styles = {rate: LINE_STYLES[i % len(LINE_STYLES)] for i, rate in enumerate(rates)}
    hosts = topology.host_count(g)
    if aggregation and not group:
        raise McsimError("--aggregation: give the group whose aggregation tree to draw (--group)")
    kw: dict[str, Any] = {}
    if group:
        layout = layout_of(g)
        tree = multicast_tree(layout, group)
        assert tree is not None  # without links down a tree always exists
        kw = {"members": group, "root": tree.root, "tree": _pairs(tree.tree_links)}
        if aggregation:
            kw["aggregation"] = _pairs(aggregation_trees(layout, group, 1)[0].tree_links)
    name = str(g.graph.get("name", "fabric"))
    names = {n: str(data.get("name", n)) for n, data in g.nodes(data=True) if n >= hosts}
    return FabricDrawing(name, tiers, positions, links, styles, hosts, names, **kw)


def title(d: FabricDrawing) -> str:
    """What the picture shows, in one line (its title)."""
    switches = sum(len(row) for t, row in d.tiers.items() if t > 0)
    cables = sum(p for _, _, _, p in d.links)
    text = f"{d.name}: {d.hosts} hosts, {switches} switches, {cables} links"
    if d.members:
        root = d.names.get(d.root, d.root) if d.root is not None else None
        text += f"; group of {len(d.members)} hosts: multicast tree of {len(d.tree)} links from {root}"
    if d.aggregation:
        text += f", aggregation tree of {len(d.aggregation)} links"
    return text


def check_out(path: str | Path) -> None:
    """The picture's file: .svg or .png (one line if not)."""
    if Path(path).suffix not in SUFFIXES:
        raise McsimError(f"-o {str(path)!r}: give a file ending in {' or '.join(SUFFIXES)}")


def write_drawing(d: FabricDrawing, path: str | Path) -> None:
    """Draw ``d`` into ``path`` (.svg or .png). Each kind of mark carries an id in an SVG (hosts, switches,
    links, tree, aggregation, members, root)."""
    check_out(path)
    try:
        from matplotlib.collections import LineCollection
        from matplotlib.figure import Figure
    except ModuleNotFoundError:
        raise McsimError("drawing a fabric needs matplotlib: pip install 'mcsim[report]'") from None
    widest = max(len(row) for row in d.tiers.values())
    fig = Figure(figsize=(min(40.0, max(8.0, widest * 0.12)), 1.6 + 1.4 * len(d.tiers)), layout="constrained")
    ax = fig.add_subplot()
    ax.set_axis_off()
    for rate, style in d.rate_styles.items():
        lines = [(d.positions[u], d.positions[v]) for u, v, r, _ in d.links if r == rate]
        width = 0.6 if list(d.rate_styles).index(rate) < len(LINE_STYLES) else 0.3
        coll = LineCollection(lines, colors=LINK_COLOR, linestyles=style, linewidths=width, label=format_rate(rate))
        coll.set_gid("links")
        ax.add_collection(coll)
    for pairs, color, gid in ((d.tree, TREE_COLOR, "tree"), (d.aggregation, AGGREGATION_COLOR, "aggregation")):
        if pairs:
            coll = LineCollection([(d.positions[u], d.positions[v]) for u, v in sorted(pairs)], colors=color,
                                  linewidths=2.0, label=f"{gid} ({len(pairs)} links)")  # fmt: skip
            coll.set_gid(gid)
            ax.add_collection(coll)
    _nodes(ax, d)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    ax.set_title(title(d), fontsize=9, wrap=True)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.5, max(d.tiers) + 0.5)
    try:
        fig.savefig(path, metadata={"Date": None} if Path(path).suffix == ".svg" else None)
    except OSError as exc:
        raise McsimError(f"-o {str(path)!r}: cannot be written ({exc.strerror or exc})") from None


def _nodes(ax: Any, d: FabricDrawing) -> None:
    """Hosts as dots, switches as squares (named when a tier has few), the group's hosts and root marked."""
    for tier, row in d.tiers.items():
        xs, ys = zip(*(d.positions[n] for n in row), strict=True)
        marker, size, gid = ("o", 6, "hosts") if tier == 0 else ("s", 30, "switches")
        ax.scatter(xs, ys, s=size, marker=marker, color="#333333", zorder=3, gid=gid)
        for n in row if 0 < tier and len(row) <= NAMED_SWITCHES else ():
            x, y = d.positions[n]
            ax.annotate(d.names[n], (x, y), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=6)
    if d.members:
        xs, ys = zip(*(d.positions[m] for m in d.members), strict=True)
        ax.scatter(xs, ys, s=14, marker="o", color=TREE_COLOR, zorder=4, gid="members")
    if d.root is not None:
        x, y = d.positions[d.root]
        ax.scatter([x], [y], s=120, marker="*", color=TREE_COLOR, zorder=5, gid="root", label="tree root")
