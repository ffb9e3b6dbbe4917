# SPDX-License-Identifier: GPL-2.0-only
"""The ``mcsim compare`` command: one row per published claim (published, simulated, ratio,
verdict, reason), its runs stored in (and reused from) a sweep store; exit 1 if a claim marked
must-reproduce differs."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from mcsim.output import rows_text


def add_parser(sub: Any) -> None:
    """Add ``compare`` to the mcsim command's subparsers."""
    p = sub.add_parser(
        "compare",
        help="compare mcsim with the published record: one row per claim with a verdict (exit 1 if a "
        "must-reproduce claim differs)",
        description="mcsim compare [--only ID[,ID]] [--quick] [--store PATH] [--workers N] [--format F]",
    )
    p.add_argument("--only", help="only these claims (comma-separated ids, e.g. ring-bound,testbed)")
    p.add_argument("--quick", action="store_true", help="smaller runs (16 ranks on fat-tree-k4 instead of 188)")
    p.add_argument("--store", default="compare.sqlite", help="the sweep store of the runs (default compare.sqlite)")
    p.add_argument("--workers", type=int, help="local worker processes (default: one per core)")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output format")
    p.set_defaults(func=cmd_compare, parser=p)


def cmd_compare(args: argparse.Namespace) -> int:
    from mcsim.reference.compare import compare, exit_status, table_text

    ids = None if args.only is None else [i.strip() for i in args.only.split(",") if i.strip()]
    rows = compare(ids, quick=args.quick, store=args.store, workers=args.workers)
    if args.format != "table":
        print(rows_text([dataclasses.asdict(r) for r in rows], args.format), end="")
    else:
        print(table_text(rows), end="")
    return exit_status(rows)
