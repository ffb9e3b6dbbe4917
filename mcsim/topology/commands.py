# SPDX-License-Identifier: GPL-2.0-only
"""The ``mcsim topo`` commands: ``show`` (a topology's summary and, with ``--ports``, every node's ports) and
``import`` (a real fabric's discovery output -> a topology file (``-o``) or its summary, as ``show`` prints it).
``topo draw`` draws with the routes: :mod:`mcsim.routing.commands`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mcsim.errors import McsimError
from mcsim.topology.files import available, resolve, write_topology_file
from mcsim.topology.ibnetdiscover import read_ibnetdiscover
from mcsim.topology.summary import format_summary
from mcsim.util import toml_text
from mcsim.util.options import Parser
from mcsim.util.output import check_distinct, check_writable

IMPORT_FORMATS = ("ibnetdiscover",)


def cmd_topo_show(args: argparse.Namespace) -> int:
    """Print the summary of ``args.file``; with ``args.ports``, every node's ports and where each leads."""
    g = resolve(args.file)
    print(format_summary(g))
    if args.ports:
        from mcsim.routing.layout import port_map

        def name(n: int) -> str:
            return f"{n} ({g.nodes[n]['name']})" if "name" in g.nodes[n] else str(n)

        print("ports (node: port -> neighbour [parallel link]), as --pcap-ports and Faults name them")
        for node, ports in port_map(g).items():
            out = ", ".join(f"{p}->{nbr}" + (f"[{i}]" if i else "") for p, (nbr, i) in enumerate(ports))
            print(f"  {name(node)}: {out}")
    return 0


def cmd_topo_import(args: argparse.Namespace) -> int:
    """Import ``args.file`` (``args.format``); write ``args.out`` (checked before any work) or print the
    summary; then print what was read and left out."""
    if args.out is not None:
        if Path(args.out).suffix != ".graphml":
            raise McsimError(
                f"topo import: -o {toml_text.shown_path(args.out)} must end in .graphml (a .toml topology names "
                "a builder, and an imported fabric has none)"
            )
        check_distinct("topo import", (("FILE", args.file), ("-o", args.out)), "-o would overwrite the file read")
        check_writable(args.out, "topo import: -o")
    imported = read_ibnetdiscover(args.file, roots=args.root)
    if args.out is not None:
        write_topology_file(imported.graph, args.out)
    print("\n".join(imported.report()))
    print(f"wrote {args.out}" if args.out is not None else format_summary(imported.graph))
    return 0


def add_parser(sub: Any) -> Any:
    """Add ``mcsim topo`` with ``show`` and ``import`` to the mcsim command's subparsers; return the
    ``topo`` subparsers (``draw`` joins them from :mod:`mcsim.routing.commands`)."""
    p = sub.add_parser("topo", help="inspect topologies")
    topo = p.add_subparsers(dest="topo_command", required=True, parser_class=Parser)
    p = topo.add_parser("show", help="hosts, switches, links, per-tier rates, bisection bandwidth, diameter")
    p.add_argument("file", help=f"a .toml or .graphml file, or a name from topologies/ ({', '.join(available())})")
    p.add_argument("--ports", action="store_true", help="also every node's ports and where each leads")
    p.set_defaults(func=cmd_topo_show, parser=p)
    _add_import_parser(topo)
    return topo


def _add_import_parser(topo: Any) -> None:
    """Add ``import`` to the ``mcsim topo`` subparsers."""
    p = topo.add_parser(
        "import",
        help="import a real fabric (ibnetdiscover output) as a topology; -o writes it, else its summary",
    )
    p.add_argument("format", choices=IMPORT_FORMATS, help="the input's format: ibnetdiscover (infiniband-diags)")
    p.add_argument("file", help="the tool's output, e.g. saved by `ibnetdiscover > fabric.txt`")
    p.add_argument("-o", "--out", help="write the topology to this .graphml file (default: print its summary)")
    p.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="GUID_OR_NAME",
        help="a root switch (its id S-..., GUID or unique node description) to rank tiers from, as OpenSM's "
        "up*/down* does; repeat for a root set (default: tiers from the hosts if the fabric is tree-like, "
        "else from the switch nearest to all host switches)",
    )
    p.set_defaults(func=cmd_topo_import, parser=p)
