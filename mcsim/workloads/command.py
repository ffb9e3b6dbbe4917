# SPDX-License-Identifier: GPL-2.0-only
"""``mcsim workload FILE.toml``: run a workload file's jobs on its fabric; print one row per job and
write the timeline (every step of every rank: ready, start, end) where asked."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from mcsim.errors import McsimError
from mcsim.util.output import SUFFIXES, Column, Table, check_writable, rows_text, write_rows
from mcsim.workloads.figure import write_timeline_svg
from mcsim.workloads.workload_file import read_workload

FIGURE_SUFFIX = ".svg"  # --timeline draws the figure
JOB_TABLE = Table(
    [
        Column("name", width=12, left=True),
        Column("ranks", width=6),
        Column("steps", width=6),
        Column("iteration_us", ".2f", 14),
        Column("compute_us", ".2f", 12),
        Column("exposed_comm_us", ".2f", 16),
        Column("injected_B", width=14),
    ]
)


def _checked_out(path: str | None, option: str, suffixes: tuple[str, ...]) -> None:
    if path is not None:
        if Path(path).suffix not in suffixes:
            raise McsimError(f"{option}={path!r} must end in {', '.join(suffixes)} (the file's format)")
        check_writable(path, option)


def cmd_workload(args: argparse.Namespace) -> int:
    _checked_out(args.out, "--out", tuple(SUFFIXES))
    _checked_out(args.timeline, "--timeline", (*SUFFIXES, FIGURE_SUFFIX))
    w = read_workload(args.file)
    w.check()  # bad input is one line before the progress line
    for note in w.notes:
        print(f"mcsim: note: {note}", file=sys.stderr)
    steps = sum(len(j.steps) for j in w.jobs)
    print(f"mcsim: workload {args.file}: {len(w.jobs)} jobs, {steps} steps on {w.topology} ...", file=sys.stderr)
    result = w.run()
    rows = [j.summary() for j in result.jobs]
    if args.format == "table":
        print(JOB_TABLE.header().rstrip())
        for j, row in zip(result.jobs, rows, strict=True):
            text = JOB_TABLE.row(row) if j.complete else JOB_TABLE.note(row["name"], j.incomplete_line())
            print(text.rstrip())
    else:
        print(rows_text(rows, "jsonl" if args.format == "json" else args.format), end="")
        for j in result.jobs:  # the table says it in the job's row
            if not j.complete:
                print(f"mcsim: job {j.job.name!r}: {j.incomplete_line()}", file=sys.stderr)
    if args.out is not None:
        write_rows(args.out, rows)
    if args.timeline is not None and Path(args.timeline).suffix == FIGURE_SUFFIX:
        write_timeline_svg(result, args.timeline)
    elif args.timeline is not None:
        write_rows(args.timeline, [row for j in result.jobs for row in j.rows()])
    return 0 if all(j.complete for j in result.jobs) else 1


def add_parser(sub: Any) -> None:
    """Add ``workload`` to the mcsim command's subparsers."""
    p = sub.add_parser(
        "workload",
        help="run a workload file's jobs (FSDP iterations, ...) on one fabric; print one row per job (exit 1 if "
        "a step never ended: its row says which, on which ranks, and what they wait for)",
    )
    p.add_argument("file", metavar="FILE.toml", help="the workload: topology, rate, seed and [[jobs]]")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="stdout format")
    p.add_argument("--out", metavar="FILE", help="also write the job rows to FILE: .csv, .json or .jsonl")
    p.add_argument(
        "--timeline",
        metavar="FILE",
        help="write every step of every rank (ready, start, end in ps): .csv, .json, .jsonl; or draw it: .svg "
        "(needs the report extra)",
    )
    p.set_defaults(func=cmd_workload, parser=p, simulates=True)
