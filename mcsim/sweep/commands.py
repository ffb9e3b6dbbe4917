# SPDX-License-Identifier: GPL-2.0-only
"""The ``mcsim sweep`` command: run a spec (``mcsim sweep SPEC.toml``), list its runs
(``--dry-run``), or print a store (``mcsim sweep show STORE``)."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any

from mcsim.errors import McsimError
from mcsim.output import SUFFIXES, Column, Table, rows_text, write_rows
from mcsim.sweep import runner
from mcsim.sweep.spec import SweepSpec
from mcsim.sweep.store import Store, show_rows
from mcsim.units import parse_time

SHOW = "show"
# `mcsim sweep show` as a table: the columns a reader compares first (csv/json: every metric)
SHOW_TABLE = Table(
    [
        Column("status", width=6, left=True),
        Column("time_us", ".3f", 12),
        Column("time_over_bound", ".3f"),
        Column("busbw_GBps", ".3f", 11),
        Column("repair_reads", width=12),
        Column("wall_s", ".1f", 7),
        Column("label", left=True),
    ]
)


def _table_cells(row: dict[str, Any]) -> dict[str, Any]:
    """A stored row's values in SHOW_TABLE's units (None where the run has none)."""
    time_ps, busbw = row.get("time_ps"), row.get("busbw_Bps")
    return {
        "status": row["status"],
        "time_us": None if time_ps is None else time_ps / 1e6,
        "time_over_bound": row.get("time_over_bound"),
        "busbw_GBps": None if busbw is None else busbw / 1e9,
        "repair_reads": row.get("repair_reads"),
        "wall_s": row["wall_s"],
        "label": row["label"],
    }


def add_parser(sub: Any) -> None:
    """Add ``sweep`` to the mcsim command's subparsers."""
    p = sub.add_parser(
        "sweep",
        help="run a sweep spec (TOML) on local worker processes or a Dask cluster, each run stored as it "
        "finishes (rerun: only what is missing); `mcsim sweep show STORE` prints a store",
        description="mcsim sweep SPEC.toml [options]   |   mcsim sweep show STORE [--sweep NAME] [--format F]",
    )
    p.add_argument("spec", metavar="SPEC.toml | show", help="a sweep spec, or `show` to print a store")
    p.add_argument("store_path", nargs="?", metavar="STORE", help="with show: the store to print")
    p.add_argument("--store", help="the SQLite result store (default: <sweep name>.sqlite here)")
    p.add_argument("--dry-run", action="store_true", help="list the runs and which are stored; run nothing")
    p.add_argument("--workers", type=int, help="local worker processes (default: one per core)")
    p.add_argument("--time-limit", help="a run that takes longer is stopped and stored as failed, e.g. 600s")
    p.add_argument("--retry-failed", action="store_true", help="run again the runs stored as failed")
    p.add_argument("--scheduler", help="run on a Dask cluster: its scheduler's address, e.g. tcp://HOST:8786")
    p.add_argument("--tls-ca-file", help="Dask TLS: the CA certificate (with --tls-cert and --tls-key)")
    p.add_argument("--tls-cert", help="Dask TLS: this client's certificate")
    p.add_argument("--tls-key", help="Dask TLS: this client's private key")
    p.add_argument("--no-progress", action="store_true", help="no progress bar or lines on stderr")
    p.add_argument("--sweep", help="with show: only this sweep's runs")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="with show: output format")
    p.add_argument("--out", help="with show: also write the rows to this .csv/.json/.jsonl file")
    p.set_defaults(func=cmd_sweep, parser=p)


def _time_limit_s(text: str | None) -> float | None:
    return None if text is None else parse_time(text, what="--time-limit") / 1e12


def _client(args: argparse.Namespace) -> Any:
    """A distributed.Client for --scheduler, with TLS from the options or else from Dask's own config."""
    try:
        distributed = importlib.import_module("distributed")
    except ImportError:
        raise McsimError("--scheduler needs Dask: pip install 'mcsim[dask]'") from None
    tls = (args.tls_ca_file, args.tls_cert, args.tls_key)
    security = None
    if any(tls):
        if not all(tls):
            raise McsimError("Dask TLS needs all of --tls-ca-file, --tls-cert and --tls-key")
        for path in tls:
            if not Path(path).is_file():
                raise McsimError(f"Dask TLS: {path!r} is not a file")
        security = distributed.Security(
            tls_ca_file=args.tls_ca_file,
            tls_client_cert=args.tls_cert,
            tls_client_key=args.tls_key,
            require_encryption=True,
        )
    try:
        return distributed.Client(args.scheduler, security=security, timeout="30s")
    except TypeError as exc:  # Dask's word for a tls:// address without certificates
        raise McsimError(
            f"--scheduler {args.scheduler}: cannot connect ({exc}); give --tls-ca-file, --tls-cert and --tls-key, "
            "or Dask's distributed.comm.tls settings"
        ) from None
    except (OSError, TimeoutError, ValueError) as exc:
        raise McsimError(f"--scheduler {args.scheduler}: cannot connect ({exc})") from None


def cmd_show(args: argparse.Namespace) -> int:
    if args.store_path is None:
        raise McsimError("sweep show: give the store to print: mcsim sweep show STORE")
    if args.out is not None and Path(args.out).suffix not in SUFFIXES:
        raise McsimError(f"--out={args.out!r} must end in {', '.join(SUFFIXES)} (the file's format)")
    rows = show_rows(args.store_path, args.sweep)
    if not rows:
        which = f"sweep {args.sweep!r}" if args.sweep else "any sweep"
        print(f"mcsim: {args.store_path}: no stored runs of {which}", file=sys.stderr)
    elif args.format != "table":
        print(rows_text(rows, "jsonl" if args.format == "json" else args.format), end="")
    else:
        for sweep in dict.fromkeys(r["sweep"] for r in rows):
            print(f"sweep {sweep}")
            print(SHOW_TABLE.header())
            for r in (r for r in rows if r["sweep"] == sweep):
                line = SHOW_TABLE.row(_table_cells(r))
                if r["status"] != "ok":
                    line += f"  {r['error']}"
                elif not r.get("complete", True):
                    line += f"  INCOMPLETE: {r.get('unfinished_ranks')} ranks did not finish"
                print(line)
    if args.out is not None:
        write_rows(args.out, rows)
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    if args.spec == SHOW:
        return cmd_show(args)
    if args.store_path is not None:
        raise McsimError(f"sweep: unexpected {args.store_path!r}; the store is --store PATH")
    if args.workers is not None and args.workers < 1:
        raise McsimError(f"--workers={args.workers} must be >= 1")
    spec = SweepSpec.from_toml(args.spec)
    store_path = Path(args.store) if args.store else runner.default_store(spec)
    limit_s = _time_limit_s(args.time_limit)
    if limit_s is not None and limit_s <= 0:
        raise McsimError(f"--time-limit={args.time_limit!r} must be > 0")
    runs = spec.runs()  # a bad spec fails here, before the store is touched
    with Store(store_path) as store:
        the_plan = runner.plan(spec, store, retry_failed=args.retry_failed, runs=runs)
        if args.dry_run:
            print(rows_text(runner.dry_run_rows(the_plan), "csv"), end="")
            counts = [the_plan.status_of(t) for t in the_plan.tasks]
            print(
                f"mcsim: sweep {spec.name!r}: {len(counts)} runs: {counts.count('ok')} stored ok, "
                f"{counts.count('failed')} stored failed, {len(the_plan.todo)} to run (store {str(store_path)!r})",
                file=sys.stderr,
            )
            return 0
        client = _client(args) if args.scheduler else None
        try:
            executor = runner.executor(client=client, workers=args.workers, time_limit_s=limit_s)
            report = runner.execute(the_plan, store, executor, progress=not args.no_progress)
        finally:
            if client is not None:
                client.close()
    print(f"mcsim: {report.line()}", file=sys.stderr)
    return 0 if report.all_ok else 1
