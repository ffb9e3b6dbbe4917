# SPDX-License-Identifier: GPL-2.0-only
"""The ``mcsim report`` command: the figures and the compare table as one HTML page, a progress line
per figure and claim on stderr."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from mcsim.errors import McsimError
from mcsim.reference.commands import add_profile, check_workers_option, id_list

PAGE_SUFFIXES = (".html", ".htm")  # what -o may end in: the page is HTML (an HTML file's suffixes)


def add_parser(sub: Any) -> None:
    """Add ``report`` to the mcsim command's subparsers."""
    p = sub.add_parser(
        "report",
        help="one self-contained HTML page: the figures (with their numbers and how to re-run them) and the "
        "compare table (needs the report extra: pip install 'mcsim[report]')",
        description="mcsim report [--store PATH] [-o report.html] [--quick] [--figures ID[,ID]] [--workers N] "
        "[--profile P]",
    )
    p.add_argument("--store", default="compare.sqlite", help="the sweep store of the runs (default compare.sqlite)")
    p.add_argument("-o", "--out", default="report.html", help="the page to write, .html (default report.html)")
    p.add_argument("--quick", action="store_true", help="smaller runs (16 ranks on fat-tree-k4 instead of 188)")
    p.add_argument("--figures", help="only these figures (comma-separated ids, e.g. busbw-vs-size,dpa-threads)")
    p.add_argument("--workers", type=int, help="local worker processes (default: one per core)")
    add_profile(p)
    p.set_defaults(func=cmd_report, parser=p)


def cmd_report(args: argparse.Namespace) -> int:
    from mcsim.reference.compare import Progress, check_profile
    from mcsim.report.figures import check_figures
    from mcsim.report.page import report
    from mcsim.util.output import check_writable, same_path

    ids = id_list(args.figures, "report", "--figures")
    check_figures(ids)
    check_workers_option(args.workers, "report")
    check_profile(args.profile, "report", "--profile")
    out = check_writable(args.out, "report: -o")
    store = check_writable(args.store, "report: --store")
    if same_path(out, store):
        raise McsimError(f"report: -o={args.out!r} is the --store; the page would overwrite the runs")
    if out.suffix.lower() not in PAGE_SUFFIXES:  # r.pdf would hold HTML: no PDF writer is a dependency
        raise McsimError(
            f"report: -o={args.out!r} must end in .html (the report is one HTML page; a browser prints it as a PDF)"
        )
    written = report(
        out,
        store=store,
        quick=args.quick,
        workers=args.workers,
        figures=ids,
        profile=args.profile,
        progress=Progress(sys.stderr, "report"),
    )
    print(f"wrote {written} (runs in {args.store})")
    return 0
