# SPDX-License-Identifier: GPL-2.0-only
"""The ``mcsim topo draw`` command: a fabric by tiers, link rates as line styles, and optionally a group's
multicast (and aggregation) tree, as :mod:`mcsim.routing.draw` draws it."""

from __future__ import annotations

import argparse
from typing import Any

from mcsim import topology
from mcsim.util.options import parse_hosts
from mcsim.util.output import check_writable


def cmd_topo_draw(args: argparse.Namespace) -> int:
    """Draw ``args.file`` (the group's trees highlighted) into ``args.out``, checked before any work."""
    from mcsim.routing import draw

    draw.check_out(args.out)
    check_writable(args.out, "-o")
    g = topology.resolve(args.file)
    group = parse_hosts(args.group, topology.host_count(g)) if args.group is not None else ()
    d = draw.drawing_of(g, group, args.aggregation)
    draw.write_drawing(d, args.out)
    print(f"{args.out}: {draw.title(d)}")
    return 0


def add_draw_parser(topo: Any) -> None:
    """Add ``draw`` to the ``mcsim topo`` subparsers."""
    p = topo.add_parser(
        "draw", help="draw a fabric by tiers, link rates as line styles; optionally a group's multicast tree"
    )
    p.add_argument("file", help="a .toml or .graphml file, or a name from topologies/")
    p.add_argument("--group", metavar="HOSTS", help="hosts whose multicast tree to highlight: 0,3,5 or 0-15 or all")
    p.add_argument(
        "--aggregation", action="store_true", help="also the group's first aggregation tree (in-network reduction)"
    )
    p.add_argument("-o", "--out", default="fabric.svg", metavar="FILE", help="the picture: .svg or .png")
    p.set_defaults(func=cmd_topo_draw, parser=p)
