# SPDX-License-Identifier: GPL-2.0-only
"""The ``mcsim topo import`` command: a real fabric's discovery output -> a topology file (``-o``) or
its summary, as ``mcsim topo show`` prints it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mcsim.errors import McsimError
from mcsim.topology.files import write_topology_file
from mcsim.topology.ibnetdiscover import read_ibnetdiscover
from mcsim.topology.summary import format_summary
from mcsim.util import toml_text
from mcsim.util.output import check_distinct, check_writable

IMPORT_FORMATS = ("ibnetdiscover",)


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


def add_import_parser(topo: Any) -> None:
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
