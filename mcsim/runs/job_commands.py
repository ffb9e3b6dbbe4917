# SPDX-License-Identifier: GPL-2.0-only
"""``mcsim workload FILE.toml``: run a workload file's jobs on its fabric; print one row per job and
write the timeline (every step of every rank: ready, start, end) where asked."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from mcsim.config.faults_file import load_faults
from mcsim.errors import McsimError
from mcsim.runs.job_planning import check_workload
from mcsim.runs.jobs import run_workload
from mcsim.util.output import SUFFIXES, Column, Table, check_distinct, check_writable, rows_text, write_rows
from mcsim.util.toml_text import shown_path
from mcsim.workloads.figure import write_timeline_svg
from mcsim.workloads.workload_file import FAULTS, Workload, read_workload

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
    check_distinct(
        "workload",
        (("--out", args.out), ("--timeline", args.timeline)),
        inputs=(("FILE", args.file), ("--faults", args.faults)),
    )
    _checked_out(args.out, "--out", tuple(SUFFIXES))
    _checked_out(args.timeline, "--timeline", (*SUFFIXES, FIGURE_SUFFIX))
    w = _with_faults(read_workload(args.file), args.faults)
    _check(w, args.faults)  # bad input is one line before the progress line
    for note in w.notes:
        print(f"mcsim: note: {note}", file=sys.stderr)
    steps = sum(len(j.steps) for j in w.jobs)
    print(f"mcsim: workload {args.file}: {len(w.jobs)} jobs, {steps} steps on {w.topology} ...", file=sys.stderr)
    result = run_workload(w)
    rows = [j.summary() for j in result.jobs]
    # the files first: a stdout that cannot take a row (a job's name it cannot encode) loses none of them
    if args.out is not None:
        write_rows(args.out, rows)
    if args.timeline is not None and Path(args.timeline).suffix == FIGURE_SUFFIX:
        write_timeline_svg(result, args.timeline)
    elif args.timeline is not None:
        write_rows(args.timeline, [row for j in result.jobs for row in j.rows()])
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
    return 0 if all(j.complete for j in result.jobs) else 1


def _with_faults(w: Workload, path: str | None) -> Workload:
    """The workload with --faults FILE.toml's faults as its run's (as a collective command's --faults); one line
    when its [options] give faults too."""
    if path is None:
        return w
    if FAULTS in w.options:
        raise McsimError(
            f"{w.where}: --faults={path!r} and the file's [options] {FAULTS} both give the run's faults; keep one "
            f"(leave out --faults, or [options] {FAULTS})"
        )
    return dataclasses.replace(w, options={**w.options, FAULTS: load_faults(path)})


def _check(w: Workload, faults: str | None) -> None:
    """check_workload; a --faults file's fault the topology does not have said under the file's name, as the
    file's own errors are (load_faults)."""
    try:
        check_workload(w)
    except McsimError as exc:
        text = str(exc)
        own = f"{w.where}: [options] {FAULTS}: "  # where the workload file says its faults' line
        if faults is None or not text.startswith(own):
            raise
        raise McsimError(f"faults file {shown_path(faults)}: {text.removeprefix(own)}") from None


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
    p.add_argument(
        "--faults",
        metavar="FILE.toml",
        help="per-link loss, chosen drops, links down, for the run (as the collective commands' --faults; not with "
        "the workload's own [options] faults)",
    )
    p.set_defaults(func=cmd_workload, parser=p, simulates=True)
