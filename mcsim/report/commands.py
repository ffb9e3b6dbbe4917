# SPDX-License-Identifier: GPL-2.0-only
"""The ``mcsim report`` command: the figures and the compare table as one HTML page."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any) -> None:
    """Add ``report`` to the mcsim command's subparsers."""
    p = sub.add_parser(
        "report",
        help="one self-contained HTML page: the figures (with their numbers and how to re-run them) and the "
        "compare table (needs the report extra: pip install 'mcsim[report]')",
        description="mcsim report [--store PATH] [-o report.html] [--quick] [--figures ID[,ID]] [--workers N]",
    )
    p.add_argument("--store", default="compare.sqlite", help="the sweep store of the runs (default compare.sqlite)")
    p.add_argument("-o", "--out", default="report.html", help="the page to write (default report.html)")
    p.add_argument("--quick", action="store_true", help="smaller runs (16 ranks on fat-tree-k4 instead of 188)")
    p.add_argument("--figures", help="only these figures (comma-separated ids, e.g. busbw-vs-size,dpa-threads)")
    p.add_argument("--workers", type=int, help="local worker processes (default: one per core)")
    p.set_defaults(func=cmd_report, parser=p)


def cmd_report(args: argparse.Namespace) -> int:
    from mcsim.report.page import report

    ids = None if args.figures is None else [i.strip() for i in args.figures.split(",") if i.strip()]
    out = report(args.out, store=args.store, quick=args.quick, workers=args.workers, figures=ids)
    print(f"wrote {out} (runs in {args.store})")
    return 0
