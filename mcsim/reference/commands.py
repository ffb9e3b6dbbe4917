# SPDX-License-Identifier: GPL-2.0-only
"""The ``mcsim compare`` command: one row per published claim (published, simulated, ratio, verdict,
reason, note), its runs stored in (and reused from) a sweep store, a progress line per claim on
stderr; exit 1 if a claim marked must-reproduce differs."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from mcsim.config.dpa import DEFAULT_PROFILE
from mcsim.errors import McsimError
from mcsim.util.machine import check_workers
from mcsim.util.output import rows_text


def add_parser(sub: Any) -> None:
    """Add ``compare`` to the mcsim command's subparsers."""
    p = sub.add_parser(
        "compare",
        help="compare mcsim with the published record: one row per claim with a verdict (reproduced, within "
        "tolerance, input, conditional, differs, not published; exit 1 if a must-reproduce claim differs)",
        description="mcsim compare [--only ID[,ID]] [--quick] [--store PATH] [--workers N] [--profile P] [--format F]",
    )
    p.add_argument("--only", help="only these claims (comma-separated ids, e.g. ring-bound,testbed)")
    p.add_argument("--quick", action="store_true", help="smaller runs (16 ranks on fat-tree-k4 instead of 188)")
    p.add_argument("--store", default="compare.sqlite", help="the sweep store of the runs (default compare.sqlite)")
    p.add_argument("--workers", type=int, help="local worker processes (default: one per core)")
    add_profile(p)
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output format")
    p.set_defaults(func=cmd_compare, parser=p)


def add_profile(p: argparse.ArgumentParser) -> None:
    """The ``--profile`` option of compare and report."""
    p.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help="the DPA profile of the closed forms (mcsim.config.dpa.PROFILES: sc24, the default, or sdr-rdma, "
        "fitted to SDR-RDMA's measured thread scaling); conditional claims show the other profile's verdict beside it",
    )


def id_list(text: str | None, where: str, option: str) -> list[str] | None:
    """The comma-separated ids of ``option`` (None if not given); an empty list, an empty id or an id
    given twice is one McsimError line."""
    if text is None:
        return None
    ids = [i.strip() for i in text.split(",")]
    if not any(ids):
        raise McsimError(f"{where}: {option}={text!r} names nothing; give ids, comma-separated, or leave it out")
    if "" in ids:
        raise McsimError(f"{where}: {option}={text!r} has an empty id (two commas in a row, or one at an end)")
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise McsimError(f"{where}: {option}={text!r} names {', '.join(map(repr, twice))} twice; name each once")
    return ids


def check_workers_option(workers: int | None, where: str) -> None:
    """--workers, when given, must be 1..MAX_WORKERS (mcsim.util.machine.check_workers)."""
    if workers is not None:
        check_workers(where, "--workers", workers)


def cmd_compare(args: argparse.Namespace) -> int:
    from mcsim.reference.claims import select
    from mcsim.reference.compare import Progress, check_profile, evaluate, exit_status, table_text
    from mcsim.util.output import check_writable

    ids = id_list(args.only, "compare", "--only")
    check_workers_option(args.workers, "compare")
    check_profile(args.profile, "compare", "--profile")
    claims = select(ids, quick=args.quick)
    simulated = [c.id for c in claims if c.runs is not None]
    if args.workers is not None and not simulated:
        raise McsimError(
            f"compare: --workers={args.workers} does nothing: {', '.join(c.id for c in claims)} "
            "simulate no runs (closed forms and the topology); leave it out"
        )
    if simulated:
        check_writable(args.store, "compare: --store")
    progress = Progress(sys.stderr, "compare")
    rows = evaluate(
        claims, quick=args.quick, store=args.store, workers=args.workers, profile=args.profile, progress=progress
    )
    if args.format != "table":
        print(rows_text([dataclasses.asdict(r) for r in rows], args.format), end="")
    else:
        print(table_text(rows), end="")
    return exit_status(rows)
