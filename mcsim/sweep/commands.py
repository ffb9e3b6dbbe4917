# SPDX-License-Identifier: GPL-2.0-only
"""The ``mcsim sweep`` command: run a spec (``mcsim sweep SPEC.toml``), list its runs
(``--dry-run``), or print a store (``mcsim sweep show STORE``). An option that would do nothing in
the form given (``show --workers``, ``--tls-cert`` without ``--scheduler``, ``--dry-run --workers``)
is refused in one line, as is a bad value, before any work."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
import time
from pathlib import Path
from typing import Any

from mcsim.errors import McsimError
from mcsim.sweep import runner, workload_spec
from mcsim.sweep.outcome import CORRUPT, INCOMPLETE, OK, state, why_incomplete
from mcsim.sweep.spec import SweepSpec
from mcsim.sweep.store import Store, show_rows
from mcsim.units import parse_time
from mcsim.util.machine import check_workers
from mcsim.util.options import given
from mcsim.util.output import SUFFIXES, Column, Table, check_distinct, check_writable, rows_text, write_rows

SHOW = "show"
# `mcsim sweep show` as a table: the columns a reader compares first (csv/json: every metric)
SHOW_TABLE = Table(
    [
        Column("status", width=len(INCOMPLETE), left=True),
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
        description="mcsim sweep SPEC.toml [options]   |   mcsim sweep show STORE [--sweep NAME] [--format F] "
        "[--out FILE]. Exit 0 when every run of the spec is ok, 1 when one is incomplete or failed (or, for "
        "show, a row is corrupt), 2 on bad input.",
    )
    p.add_argument("spec", metavar="SPEC.toml | show", help="a sweep spec, or `show` to print a store")
    p.add_argument("store_path", nargs="?", metavar="STORE", help="with show: the store to print")
    p.add_argument("--store", help="the SQLite result store (default: <sweep name>.sqlite here)")
    p.add_argument("--dry-run", action="store_true", help="list the runs and which are stored; run nothing")
    p.add_argument("--workers", type=int, help="local worker processes (default: one per core)")
    p.add_argument("--time-limit", help="a run that takes longer is stopped and stored as failed, e.g. 600s")
    p.add_argument("--retry-failed", action="store_true", help="run again the runs stored as failed")
    p.add_argument("--scheduler", help="run on a Dask cluster: its scheduler's address, e.g. tcp://HOST:8786")
    p.add_argument("--tls-ca-file", help="Dask TLS: the CA certificate (with --scheduler, --tls-cert and --tls-key)")
    p.add_argument("--tls-cert", help="Dask TLS: this client's certificate")
    p.add_argument("--tls-key", help="Dask TLS: this client's private key")
    p.add_argument("--no-progress", action="store_true", help="no progress bar or lines on stderr")
    p.add_argument("--sweep", help="with show: only this sweep's runs")
    p.add_argument(
        "--format",
        choices=FORMATS,
        help="with show: output format (default: table; json: one object a line)",
    )
    p.add_argument("--out", help="with show: also write the rows to this .csv/.json/.jsonl file")
    p.set_defaults(func=cmd_sweep, parser=p)


FORMATS = ("table", "csv", "json")
TLS = ("tls_ca_file", "tls_cert", "tls_key")
# the options of each form that the other form ignores, and those a dry run ignores (it runs nothing)
RUN_OPTIONS = ("store", "dry_run", "workers", "time_limit", "retry_failed", "scheduler", *TLS, "no_progress")
SHOW_OPTIONS = ("sweep", "format", "out")
NOT_DRY = ("workers", "time_limit", "scheduler", *TLS, "no_progress")


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _given(args: argparse.Namespace, dests: tuple[str, ...]) -> list[str]:
    """The options among ``dests`` that were given, as typed (mcsim.util.options records them)."""
    return [uses[0][0] for d in dests if (uses := given(args).get(d))]


def _check_run_options(args: argparse.Namespace) -> float | None:
    """Refuse the options that would do nothing with the others given, and bad values: before any
    work. Returns the time limit in seconds (None: none)."""
    if args.store_path is not None:
        raise McsimError(f"sweep: unexpected {args.store_path!r}; the store is --store PATH")
    for flag in _given(args, SHOW_OPTIONS):
        raise McsimError(f"sweep: {flag} does nothing when running a spec; it is an option of mcsim sweep show STORE")
    if args.dry_run:
        for flag in _given(args, NOT_DRY):
            raise McsimError(f"sweep: {flag} does nothing with --dry-run (it runs nothing); drop one of them")
    if args.scheduler is not None and not args.scheduler.strip():
        raise McsimError(f"sweep: --scheduler={args.scheduler!r} is empty; give the address, e.g. tcp://HOST:8786")
    if args.scheduler is None:
        for flag in _given(args, TLS):
            raise McsimError(
                f"sweep: {flag} does nothing without --scheduler (it is Dask's TLS); "
                "give --scheduler tls://HOST:8786 or drop it"
            )
    elif args.workers is not None:
        raise McsimError(
            "sweep: --workers does nothing with --scheduler (the Dask cluster's workers run the runs); drop one of them"
        )
    if args.workers is not None:
        check_workers("sweep", "--workers", args.workers)
    if any(getattr(args, d) for d in TLS):
        missing = [_flag(d) for d in TLS if not getattr(args, d)]
        if missing:
            raise McsimError(
                f"sweep: Dask TLS needs all of --tls-ca-file, --tls-cert and --tls-key; {', '.join(missing)} missing"
            )
        for d in TLS:
            if not Path(getattr(args, d)).is_file():
                raise McsimError(f"sweep: {_flag(d)}={getattr(args, d)!r} is not a file")
    if args.time_limit is None:
        return None
    limit_s = parse_time(args.time_limit, what="--time-limit") / 1e12
    if limit_s <= 0:
        raise McsimError(f"sweep: --time-limit={args.time_limit!r} must be > 0; e.g. --time-limit 600s")
    return limit_s


def _check_show_options(args: argparse.Namespace) -> None:
    """``mcsim sweep show STORE``: refuse the run options (they would do nothing) and check --out first."""
    if args.store_path is None:
        raise McsimError("sweep show: give the store to print: mcsim sweep show STORE")
    if args.store is not None:
        raise McsimError(
            f"sweep show: --store does nothing; the store is the argument after show: mcsim sweep show {args.store}"
        )
    for flag in _given(args, RUN_OPTIONS):
        raise McsimError(
            f"sweep show: {flag} does nothing when printing a store; it is an option of mcsim sweep SPEC.toml"
        )
    check_distinct("sweep show", (("STORE", args.store_path), ("--out", args.out)), "--out would overwrite the store")
    if args.out is not None:
        if Path(args.out).suffix not in SUFFIXES:
            raise McsimError(f"sweep show: --out={args.out!r} must end in {', '.join(SUFFIXES)} (the file's format)")
        check_writable(args.out, "--out")


def _client(args: argparse.Namespace) -> Any:
    """A distributed.Client for --scheduler, with TLS from the options (checked by _check_run_options)
    or else from Dask's own config."""
    try:
        distributed = importlib.import_module("distributed")
    except ImportError:
        raise McsimError("--scheduler needs Dask: pip install 'mcsim[dask]'") from None
    security = None
    if args.tls_ca_file:
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


def _workload_table(rows: list[dict[str, Any]]) -> Table:
    """`mcsim sweep show` of a workload's runs: status, each job's TIMES (in ``<job>.<figure>`` columns), wall_s
    and label."""
    jobs = dict.fromkeys(name for r in rows for name in workload_spec.job_names(r))
    times = [Column(f"{job}.{figure}", ".2f") for job in jobs for figure in workload_spec.TIMES]
    return Table(
        [
            Column("status", width=len(INCOMPLETE), left=True),
            *times,
            Column("wall_s", ".1f", 7),
            Column("label", left=True),
        ]
    )


def _print_table(rows: list[dict[str, Any]]) -> None:
    """One fixed-column table per sweep (a workload's: per job its times); a failed run's error, an
    incomplete run's unfinished ranks (or jobs) and a corrupt row's column after its line."""
    for sweep in dict.fromkeys(r["sweep"] for r in rows):
        mine = [r for r in rows if r["sweep"] == sweep]
        workload = any(r.get(workload_spec.JOB_COUNT) is not None for r in mine)
        table = _workload_table(mine) if workload else SHOW_TABLE
        print(f"sweep {sweep}")
        print(table.header())
        for r in mine:
            line = table.row(r) if workload else table.row(_table_cells(r))
            if r["status"] == INCOMPLETE and workload:
                line += f"  INCOMPLETE: {why_incomplete(r) or workload_spec.unfinished(r)}"
            elif r["status"] == INCOMPLETE:
                line += f"  INCOMPLETE: {r.get('unfinished_ranks')} ranks did not finish"
            elif r["status"] != OK:
                line += f"  {r['error']}"
            print(line)


def cmd_show(args: argparse.Namespace) -> int:
    """Print a store; exit 1 if a row is corrupt (each named on stderr), else 0."""
    _check_show_options(args)
    if args.sweep is not None:
        with Store(args.store_path, create=False) as store:
            sweeps = store.sweeps()
        if args.sweep not in sweeps:
            known = ", ".join(repr(s) for s in sweeps[:10]) or "none"
            raise McsimError(
                f"sweep show: --sweep={args.sweep!r} is not in store {args.store_path!r}; its sweeps: {known}"
            )
    # a stored OK run whose metrics say some rank or job never finished is shown as incomplete, in every format
    rows = [
        {**r, "status": state(OK, r) if r["status"] == OK else r["status"]}
        for r in show_rows(args.store_path, args.sweep)
    ]
    fmt = args.format or "table"
    if not rows:
        which = f"sweep {args.sweep!r}" if args.sweep else "any sweep"
        print(f"mcsim: {args.store_path}: no stored runs of {which}", file=sys.stderr)
    elif fmt != "table":
        print(rows_text(rows, "jsonl" if fmt == "json" else fmt), end="")
    else:
        _print_table(rows)
    if args.out is not None:
        write_rows(args.out, rows)
    corrupt = [r for r in rows if r["status"] == CORRUPT]
    for r in corrupt:
        print(f"mcsim: {r['error']}; running its sweep again replaces it", file=sys.stderr)
    return 1 if corrupt else 0


def _dry_run(spec: SweepSpec, store_path: Path, retry_failed: bool) -> int:
    """List the runs as they are expanded (CSV on stdout, streamed), then the counts on stderr. Reads
    the store if it exists; writes nothing."""
    with contextlib.ExitStack() as stack:
        store = stack.enter_context(Store(store_path, create=False)) if store_path.exists() else None
        dry = runner.DryRun(spec, store, retry_failed=retry_failed)
        for i, row in enumerate(dry.rows()):
            text = rows_text([row], "csv")
            print(text if i == 0 else text.partition("\n")[2], end="", flush=True)  # the header once
    sys.stdout.flush()
    for line in dry.corrupt:
        print(f"mcsim: {line}", file=sys.stderr)
    print(f"mcsim: {dry.line(store_path)}", file=sys.stderr)
    return 0


BUILDING_NOTE_S = 2.0  # building a spec's runs for longer says so on stderr, then every BUILDING_EVERY_S
BUILDING_EVERY_S = 30.0


def _built_runs(spec: SweepSpec) -> list[Any]:
    """Every run of the spec, built and checked before any starts (spec.runs()); when that takes a while (a
    workload's runs: each its jobs' steps), a line on stderr says so, then how far it got."""
    n, runs = spec.check_size(), []
    start = noted = time.monotonic()
    for run in spec.iter_runs():
        runs.append(run)
        now = time.monotonic()
        if now - noted >= (BUILDING_NOTE_S if noted == start else BUILDING_EVERY_S):
            print(f"mcsim: sweep {spec.name!r}: built and checked {len(runs)} of {n} runs ...", file=sys.stderr)
            noted = now
    return runs


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run a spec (or list it: --dry-run); exit 0 if every run is ok, 1 if one is incomplete or failed."""
    if args.spec == SHOW:
        return cmd_show(args)
    limit_s = _check_run_options(args)
    spec = SweepSpec.from_toml(args.spec)
    store_path = Path(args.store) if args.store else runner.default_store(spec)
    if args.dry_run:
        return _dry_run(spec, store_path, args.retry_failed)
    runs = _built_runs(spec)  # a bad spec (or one too large) fails here, before the store is touched
    with Store(store_path) as store:
        the_plan = runner.plan(spec, store, retry_failed=args.retry_failed, runs=runs)
        for task in the_plan.todo:
            if task.key in the_plan.corrupt:
                line = store.corrupt_line(task.key, task.label, the_plan.corrupt[task.key])
                print(f"mcsim: {line}; running it again", file=sys.stderr)
        client = _client(args) if args.scheduler else None
        try:
            executor = runner.executor(client=client, workers=args.workers, time_limit_s=limit_s)
            report = runner.execute(the_plan, store, executor, progress=not args.no_progress)
        finally:
            if client is not None:
                client.close()
    print(f"mcsim: {report.line()}", file=sys.stderr)
    return 0 if report.all_ok else 1
