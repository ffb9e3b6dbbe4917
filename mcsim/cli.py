# SPDX-License-Identifier: GPL-2.0-only
"""The ``mcsim`` command: thin commands over the API that scripts use.

Exit codes: 0 ok, 1 a run failed its own check, 2 bad input or environment (one line on stderr),
130 Ctrl-C, 141 (128 + SIGPIPE) when the reader of stdout has gone (``mcsim topo show X | head -1``).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.metadata
import inspect
import os
import platform
import runpy
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import mcsim
from mcsim import topology
from mcsim.config.collectives import ALGORITHMS, RC_PIPELINES, check_algorithm
from mcsim.config.fabric import DEFAULT_HEADER_BYTES, DEFAULT_MTU_BYTES, FORWARDINGS, FabricConfig
from mcsim.config.faults_file import load_faults
from mcsim.config.rdma import RdmaConfig
from mcsim.errors import Interrupted, McsimError, require_positive
from mcsim.native import library
from mcsim.reference import commands as compare_commands
from mcsim.report import commands as report_commands
from mcsim.result import Result
from mcsim.runs.scenario import Scenario, artifact_protocol
from mcsim.runs.scenario_keywords import scenario_of
from mcsim.runs.stream import expected_finish_ps, stream
from mcsim.sweep import commands as sweep_commands
from mcsim.topology.physics import DEFAULT_DELAY_PS, Link, parse_encoding
from mcsim.units import CLOCK_LIMIT, MAX_SIMULATED_PS, format_size, format_time, parse_rate, parse_size, parse_time
from mcsim.util import package_data
from mcsim.util.options import Given, GivenFlag, Parser, given, refuse_repeats, typed, typed_option
from mcsim.util.output import SUFFIXES, Column, Table, check_writable, rows_text, write_rows


class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """Each option's default in its help, except a default of None or False: the option was not
    given, and its help says what that means (e.g. "default: every host")."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def cmd_build(args: argparse.Namespace) -> int:
    info = library.ensure_built(force=args.force)
    state = f"built in {info.seconds:.1f} s" if info.built else "up to date"
    print(f"{state}: {info.library}")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    """Versions, paths and the build's state, one row each. What cannot be found is a row saying
    why ("not found: ..."; the build row "cannot build: ...") and the other rows are still shown.
    Exit 0 even then: info is a diagnosis; ``mcsim build`` and the runs fail (exit 2) instead."""

    def version(dist: str) -> str:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    rows: list[tuple[str, str]] = [
        ("mcsim", f"{mcsim.__version__} ({Path(mcsim.__file__).parent})"),
        ("python", f"{platform.python_version()} ({sys.executable})"),
        *((dist, version(dist)) for dist in ("ns3", "cppyy", "numpy", "networkx")),
    ]
    errors: dict[str, str] = {}  # row name -> why it failed, in row order

    def probe(name: str, find: Any, show: Any = str, failed: str = "not found") -> Any:
        try:
            found = find()
        except McsimError as exc:
            rows.append((name, f"{failed}: {exc}"))
            errors[name] = str(exc)
            return None
        rows.append((name, show(found)))
        return found

    wheel = probe("ns3 prefix", library.find_ns3, lambda w: str(w.prefix))
    probe("cmake", library.find_cmake)
    probe("c++ compiler", library.find_cxx)
    sources = probe("sources", package_data.source_dir)
    probe("cache", package_data.writable_cache, failed="not usable")
    probe("topologies", lambda: os.pathsep.join(map(str, topology.topology_dirs())), failed="not usable")
    needed = [why for name, why in errors.items() if name in ("ns3 prefix", "cmake", "c++ compiler", "sources")]
    done = None if needed else library.cached_build(sources=sources, cache=package_data.cache_dir())
    if needed:
        rows.append(("build", f"cannot build: {needed[0]}"))
    elif done is not None:  # a completed build loads even from a read-only cache
        rows.append(("build", f"{done.key} ready: {done.library}"))
    elif "cache" in errors:
        rows.append(("build", f"cannot build: {errors['cache']}"))
    else:
        key = library.build_key(sources, library.find_toolchain(), wheel)
        rows.append(("build", f"{key} not built yet (mcsim build; about a minute)"))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    script = Path(args.script)
    if not script.is_file():
        raise McsimError(f"run: script {str(script)!r} does not exist")
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [str(script), *args.script_args]
    sys.path.insert(0, str(script.resolve().parent))
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:  # as Python does: an int is the exit code, anything else goes to stderr, code 1
        if exc.code is None or isinstance(exc.code, int):
            return int(exc.code or 0)
        print(exc.code, file=sys.stderr)
        return 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return 0


STREAM_TABLE = Table(
    [
        Column("size_B", width=12),
        Column("packets", width=9),
        Column("time_us", ".3f", 12),
        Column("goodput_Gbps", ".3f", 13),
        Column("closed_form_us", ".3f", 15),
    ]
)


def cmd_stream(args: argparse.Namespace) -> int:
    data_bits, line_bits = parse_encoding(args.encoding)
    rate_option = typed_option(args, "signalling_rate")
    link = Link(
        rate_bps=parse_rate(args.signalling_rate, what=rate_option),
        encoding_data_bits=data_bits,
        encoding_line_bits=line_bits,
        delay_ps=parse_time(args.delay, what=typed_option(args, "delay")),
    )
    header_b = parse_size(args.header_bytes, what=typed_option(args, "header_bytes"))
    size_b = parse_size(args.size, what=typed_option(args, "size"))
    mtu_b = parse_size(args.mtu, what=typed_option(args, "mtu"))
    require_positive("stream", size_b=size_b, mtu_b=mtu_b)
    bound_ps = expected_finish_ps(link, size_b, mtu_b, header_b)
    if bound_ps > MAX_SIMULATED_PS:  # the simulated clock would wrap: refuse before the run
        raise McsimError(
            f"stream: {rate_option}={args.signalling_rate!r} takes {format_time(bound_ps)} for --size={args.size!r} "
            f"(--delay={args.delay!r}), past {CLOCK_LIMIT}; give a higher rate, a smaller size or a shorter delay"
        )
    result = stream(link, size_b, mtu_b=mtu_b, header_b=header_b)
    print(STREAM_TABLE.header())
    row = {
        "size_B": result.size_b,
        "packets": result.packets,
        "time_us": result.finish_ps / 1e6,
        "goodput_Gbps": result.goodput_bps() / 1e9,
        "closed_form_us": bound_ps / 1e6,
    }
    print(STREAM_TABLE.row(row))
    ok = result.received_b == size_b and result.finish_ps == bound_ps
    return 0 if ok else 1


RESULT_TABLE = Table(  # nccl-tests' columns first (its size and count: Result.summary), then mcsim's
    [
        Column("size_B", width=12),
        Column("count", width=12),
        Column("time_us", ".2f", 12),
        Column("algbw_GBps", ".3f", 12),
        Column("busbw_GBps", ".3f", 12),
        Column("bound_us", ".2f", 12),
        Column("bytes_per_rank_B", width=16),
        Column("injected_B_per_rank", ".0f", 20),
        Column("repair_reads", width=12),
    ]
)


def print_results(results: Sequence[Result], fmt: str) -> None:
    """Fixed columns (as OSU and nccl-tests), or CSV, or JSON lines, one row per result; an
    incomplete run has NaN time and bandwidths (CSV, JSON) or an INCOMPLETE line (table)."""
    rows = [r.summary() for r in results]
    if fmt != "table":
        print(rows_text(rows, "jsonl" if fmt == "json" else fmt), end="")
        return
    print(RESULT_TABLE.header())
    for r, row in zip(results, rows, strict=True):
        print(RESULT_TABLE.row(row) if r.complete else RESULT_TABLE.note(row["size_B"], r.incomplete_line()))


SCENARIO_DEFAULTS = {name: p.default for name, p in inspect.signature(Scenario).parameters.items()}
RDMA_DEFAULTS = RdmaConfig()
RC_DEFAULTS = RDMA_DEFAULTS.rc
RETRY_FOREVER = "forever"


def _sizes(args: argparse.Namespace) -> list[str]:
    text, option = args.bytes_per_rank, typed_option(args, "bytes_per_rank")
    sizes = [s.strip() for s in text.split(",")]
    if not all(sizes):
        raise McsimError(
            f"{option}={text!r} has an empty size; give sizes separated by commas, e.g. {option} 4KiB,1MiB"
        )
    return sizes


RETRY_CNTS: dict[str, int | None] = {str(n): n for n in range(8)} | {RETRY_FOREVER: None}


def _retry_cnt(text: str) -> int | None:
    """--retry-cnt: 0..7, or "forever" (RcConfig.retry_cnt=None)."""
    if text not in RETRY_CNTS:
        raise McsimError(f"--retry-cnt={text!r} must be 0..7 (the InfiniBand retry_cnt) or {RETRY_FOREVER!r}")
    return RETRY_CNTS[text]


# options that only the multicast protocol reads: refused with another algorithm, where they would do nothing
MCAST_ONLY = ("roots", "timeout_scale", "artifact_protocol")
# subcommand -> (the Scenario's collective, its default algorithm)
COLLECTIVE_COMMANDS = {
    "allgather": ("allgather", "mcast"),
    "broadcast": ("broadcast", "mcast"),
    "reduce-scatter": ("reduce_scatter", "ring"),
    "allreduce": ("allreduce", "ring"),
    "alltoall": ("alltoall", "pairwise"),
    "reduce": ("reduce", "binomial"),
}
ROOTED_COMMANDS = ("broadcast", "reduce")  # --root
REDUCING_COMMANDS = ("reduce-scatter", "allreduce", "reduce")  # --reduce-ps-per-byte, where the hosts sum


def _refuse_unread(args: argparse.Namespace) -> None:
    """Options that would do nothing in this combination are refused, one line each."""
    if args.command != "allgather" and args.roots is not None:
        raise McsimError(f"{args.command}: --roots is for allgather (mcast: K roots multicast at a time)")
    if args.command not in ROOTED_COMMANDS and args.root is not None:
        raise McsimError(f"{args.command}: --root is for broadcast and reduce (the rank that sends or gets the buffer)")
    if args.command not in REDUCING_COMMANDS and args.reduce_ps_per_byte is not None:
        raise McsimError(
            f"{args.command}: --reduce-ps-per-byte is for {', '.join(REDUCING_COMMANDS)} (the hosts' sums)"
        )
    check_algorithm(COLLECTIVE_COMMANDS[args.command][0], args.algorithm)  # an unknown algorithm first
    algorithm = typed_option(args, "algorithm")
    if args.algorithm == "innet" and args.reduce_ps_per_byte is not None:
        raise McsimError(f"--reduce-ps-per-byte is the hosts' reduction's; not for {algorithm} {args.algorithm}")
    if args.algorithm not in RC_PIPELINES and args.ring_chunk is not None:
        raise McsimError(
            f"{typed_option(args, 'ring_chunk')}={args.ring_chunk!r} is for the RDMA WRITE algorithms "
            f"({', '.join(RC_PIPELINES)}); not for {algorithm} {args.algorithm}"
        )
    if args.algorithm == "mcast":
        return
    for dest in MCAST_ONLY:
        for option, value in given(args).get(dest, ()):
            algorithm = typed_option(args, "algorithm")
            raise McsimError(
                f"{typed(option, value)} is the multicast protocol's; not for {algorithm} {args.algorithm}"
            )


def _collective_scenarios(args: argparse.Namespace) -> list[Scenario]:
    """One Scenario per --bytes-per-rank size, every option (and --out, --faults) checked before anything runs."""
    _refuse_unread(args)
    if args.out is not None:
        if Path(args.out).suffix not in SUFFIXES:
            raise McsimError(f"--out={args.out!r} must end in {', '.join(SUFFIXES)} (the file's format)")
        check_writable(args.out, "--out")
    common: dict[str, Any] = {
        "topology": args.topology,
        "rate": args.rate,
        "collective": COLLECTIVE_COMMANDS[args.command][0],
        "algorithm": args.algorithm,
        "ranks": args.ranks,
        "seed": args.seed,
        "verify": args.verify,
        "loss": args.loss,
        "forwarding": args.forwarding,
        "mtu": args.mtu,
        "faults": load_faults(args.faults) if args.faults is not None else None,
        "rc": dataclasses.replace(
            RC_DEFAULTS, retry_cnt=_retry_cnt(args.retry_cnt), ack_timeout_exp=args.ack_timeout_exp
        ),
    }
    if args.artifact_protocol:  # its timeout rule is --timeout-scale's default, 5
        common |= {k: v for k, v in artifact_protocol().items() if k != "timeout_scale"}
    # the options given only (None: the Scenario's default)
    given = {
        "timeout_scale": args.timeout_scale,
        "roots": args.roots,
        "root": args.root,
        "reduce_ps_per_byte": args.reduce_ps_per_byte,
        "ring_chunk": args.ring_chunk,
    }
    common |= {k: v for k, v in given.items() if v is not None}
    scenarios = [scenario_of(bytes_per_rank=size, **common) for size in _sizes(args)]
    for sc in scenarios:
        sc.check_resources()
    return scenarios


def _report(args: argparse.Namespace, scenarios: Sequence[Scenario], results: Sequence[Result]) -> None:
    """The rows of the finished runs (stdout and --out), then on stderr: incomplete runs (when the
    table did not say so), verify mode's verdict per run, and a note where RC timeouts may have
    held a run up."""
    if not results:
        return
    print_results(results, args.format)
    if args.out is not None:
        write_rows(args.out, [r.summary() for r in results])
    for sc, r in zip(scenarios, results, strict=False):
        size = f"{r.bytes_per_rank_b} B per rank"
        if args.format != "table" and not r.complete:
            print(f"mcsim: {size}: {r.incomplete_line()}", file=sys.stderr)
        if args.verify:
            print(f"mcsim: verify: {size}: {r.verify_text()}", file=sys.stderr)
        note = r.timeout_note(sc.rdma.rc)
        if note is not None:
            print(f"mcsim: note: {size}: {note}", file=sys.stderr)


def cmd_collective(args: argparse.Namespace) -> int:
    scenarios = _collective_scenarios(args)
    results: list[Result] = []
    try:
        for sc in scenarios:
            cost = sc.estimate()["packets"]
            print(
                f"mcsim: {args.command} {args.algorithm} {sc.bytes_per_rank} on {args.topology} "
                f"(<= {cost:.3g} packet-hops) ...",
                file=sys.stderr,
            )
            results.append(sc.run())
    except KeyboardInterrupt as exc:  # keep the finished sizes: their rows, then the interrupted line
        _report(args, scenarios, results)
        written = f" and in {args.out}" if args.out is not None else ""
        kept = f"; {len(results)} of {len(scenarios)} sizes finished, their rows above{written}" if results else ""
        size = scenarios[len(results)].bytes_per_rank
        raise Interrupted(f"{str(exc) or 'interrupted'} (at {size} per rank{kept})") from None
    _report(args, scenarios, results)
    ok = all(r.complete and r.verified is not False for r in results)
    return 0 if ok else 1


def cmd_topo_show(args: argparse.Namespace) -> int:
    print(topology.format_summary(topology.resolve(args.file)))
    return 0


def _collective_options(p: argparse.ArgumentParser, name: str) -> None:
    """The options of ``mcsim allgather`` and ``mcsim broadcast``, named as the Scenario fields.
    Each is a :class:`Given` (a field given twice is refused); an option that some combination
    does not read defaults to None (not given), its help naming the Scenario's default."""

    def add(*names: str, flag: bool = False, **kwargs: Any) -> None:
        p.add_argument(*names, action=GivenFlag if flag else Given, **kwargs)

    _workload_options(add, name)
    _fabric_options(add)
    _protocol_options(add)
    _output_options(add)


Add = Callable[..., None]  # adds one option to a parser


def _workload_options(add: Add, name: str) -> None:
    """What runs: the topology, the algorithm, the sizes, the ranks and roots."""
    d = SCENARIO_DEFAULTS
    add("--topology", default=d["topology"], help="a name from topologies/ or a file")
    collective, default = COLLECTIVE_COMMANDS[name]
    algorithms = " or ".join(sorted(a for c, a in ALGORITHMS if c == collective))
    add("--algorithm", "--algo", default=default, help=f"{algorithms} (--algo: the same)")
    add(
        "--bytes-per-rank",
        "--size",
        default=d["bytes_per_rank"],
        metavar="SIZE",
        help="bytes per rank; several: 4KiB,64KiB,1MiB (--size: the same)",
    )
    add("--rate", default=None, help="every link at this rate (56Gbps = FDR); default: the file's")
    add(
        "--ring-chunk",
        default=None,
        metavar="SIZE",
        help=f"{', '.join(RC_PIPELINES)}: bytes per RDMA WRITE, the pipelining unit (default: {d['ring_chunk']})",
    )
    add("--ranks", type=int, default=None, help="ranks on hosts 0..ranks-1; default: every host")
    hidden = argparse.SUPPRESS  # an option of another subcommand: refused with a hint
    roots = f"mcast: roots multicasting at once (default: {d['roots']})"
    add("--roots", type=int, default=None, metavar="K", help=roots if name == "allgather" else hidden)
    root = f"the root rank (default: {d['root']})"
    add("--root", type=int, default=None, metavar="R", help=root if name in ROOTED_COMMANDS else hidden)
    reduce = f"time the host takes to add one received byte (default: {d['reduce_ps_per_byte']}; 0: free)"
    reduces = name in REDUCING_COMMANDS
    add("--reduce-ps-per-byte", type=int, default=None, metavar="PS", help=reduce if reduces else hidden)


def _fabric_options(add: Add) -> None:
    """The packets and the fabric: MTU, loss, faults, forwarding."""
    add(
        "--mtu",
        default=format_size(RDMA_DEFAULTS.mtu_b),
        metavar="SIZE",
        help="payload bytes per packet (an InfiniBand MTU: 256B..4KiB)",
    )
    add(
        "--loss",
        type=float,
        default=FabricConfig().loss,
        metavar="P",
        help="probability that a packet is lost, on every link",
    )
    add("--faults", default=None, metavar="FILE.toml", help="per-link loss, chosen drops, links down")
    add(
        "--forwarding",
        choices=tuple(FORWARDINGS),
        default=FabricConfig().forwarding,
        help="switches send a packet on once its routing header (cut_through) or all of it is in",
    )


def _protocol_options(add: Add) -> None:
    """The protocols' timeouts and retries, and the artifact's preset."""
    d = SCENARIO_DEFAULTS
    add(
        "--timeout-scale",
        type=float,
        default=None,
        metavar="X",
        help=f"mcast: data phase timeout, x receive bound (default: {d['timeout_scale']:g})",
    )
    add(
        "--retry-cnt",
        default=str(RC_DEFAULTS.retry_cnt),
        metavar="N",
        help=f"RC retries (timeouts, NAKs) before a QP fails: 0..7, or {RETRY_FOREVER}",
    )
    add(
        "--ack-timeout-exp",
        type=int,
        default=RC_DEFAULTS.ack_timeout_exp,
        metavar="N",
        help="RC local ACK timeout 4.096us x 2^N (14: 67.1ms); 0: none",
    )
    add(
        "--artifact-protocol",
        flag=True,
        help="mcast: the SC'24 artifact's protocol options (2 barriers, stop-and-wait batches of 128, one "
        "repair READ, FIN wait, multicast loopback, a TX thread)",
    )


def _output_options(add: Add) -> None:
    """The seed, verify mode and what is written where."""
    add("--seed", type=int, default=FabricConfig().seed, help="random seed (ECMP hash, loss)")
    add("--verify", flag=True, help="carry real bytes and check every output byte")
    add("--format", choices=("table", "csv", "json"), default="table", help="stdout format (json: one object a line)")
    add(
        "--out",
        default=None,
        metavar="FILE",
        help="also write the result rows to FILE: .csv, .json (an array) or .jsonl (one object a line)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="mcsim", description="Packet-level simulator of collective communication over ns-3.")
    parser.add_argument("--version", action="version", version=f"mcsim {mcsim.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    p = sub.add_parser("build", help="build the C++ models if their sources changed; print the library path")
    p.add_argument("--force", action="store_true", help="rebuild even if the cache is up to date")
    p.set_defaults(func=cmd_build, parser=p)

    p = sub.add_parser("info", help="versions, paths and build cache state")
    p.set_defaults(func=cmd_info, parser=p)

    p = sub.add_parser("run", help="run a scenario script (extra arguments go to the script)")
    p.add_argument("script", help="path of a Python scenario script, e.g. scenarios/link_stream.py")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    p.set_defaults(func=cmd_run, parser=p)

    for name in COLLECTIVE_COMMANDS:
        p = sub.add_parser(
            name,
            help=f"simulate one {name} per size; print size, time, bandwidths (exit 1 if a rank missed data "
            "or, with --verify, got a wrong byte)",
            formatter_class=_Help,
        )
        _collective_options(p, name)
        p.set_defaults(func=cmd_collective, parser=p, simulates=True)

    p = sub.add_parser("topo", help="inspect topologies")
    topo = p.add_subparsers(dest="topo_command", required=True, parser_class=Parser)
    p = topo.add_parser("show", help="hosts, switches, links, per-tier rates, bisection bandwidth, diameter")
    p.add_argument(
        "file", help=f"a .toml or .graphml file, or a name from topologies/ ({', '.join(topology.available())})"
    )
    p.set_defaults(func=cmd_topo_show, parser=p)

    sweep_commands.add_parser(sub)
    compare_commands.add_parser(sub)
    report_commands.add_parser(sub)

    _stream_parser(sub)
    return parser


def _stream_parser(sub: Any) -> None:
    """``mcsim stream``: one link, its closed form checked."""
    p = sub.add_parser(
        "stream",
        help="stream bytes over one link; exit 1 if the time differs from the closed form",
        formatter_class=_Help,
    )
    p.add_argument(
        "--signalling-rate",
        "--rate",
        action=Given,
        default="56.25Gbps",
        metavar="RATE",
        help="the link's signalling rate, before the line code (Link.rate_bps; --rate: the same)",
    )
    p.add_argument("--encoding", action=Given, default="64b/66b", help="line encoding, data bits/line bits")
    p.add_argument(
        "--header-bytes",
        action=Given,
        default=str(DEFAULT_HEADER_BYTES),
        help="wire bytes per packet beyond the payload and the 16-byte fabric header (IB RC: 10)",
    )
    p.add_argument("--delay", action=Given, default=format_time(DEFAULT_DELAY_PS), help="propagation delay")
    p.add_argument("--size", action=Given, default="64MiB", help="payload bytes to send")
    p.add_argument("--mtu", action=Given, default=f"{DEFAULT_MTU_BYTES}", help="payload bytes per packet")
    p.set_defaults(func=cmd_stream, parser=p, simulates=True)


SIGPIPE_EXIT = 128 + signal.SIGPIPE  # 141: the status of a process that SIGPIPE ended


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Exit codes: 0 ok; 1 a run failed its own check; 2 bad input or environment
    (one line on stderr); 130 Ctrl-C (one line saying how far it got); 141 (128 + SIGPIPE, as a
    tool killed by it) when stdout's reader has gone, e.g. ``mcsim topo show X | head -1``."""
    args, extra = build_parser().parse_known_args(argv)
    if extra:  # the subcommand's parser names itself in the hint ("see mcsim allgather --help")
        args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        refuse_repeats(args)
        if getattr(args, "simulates", False):  # a bad cache folder or toolchain: one line before any work
            library.check_environment()
        status = int(args.func(args))
        sys.stdout.flush()  # a reader that has gone shows here, not in the interpreter's exit
        return status
    except McsimError as exc:  # bad input or environment: one line; real bugs keep their traceback
        print(f"mcsim: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:  # a Python allocation failed (Scenario.run says more): one line, not a traceback
        print(
            f"mcsim: error: {args.command}: out of memory (a Python allocation failed); see Scenario.estimate()",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt as exc:  # Ctrl-C: mcsim.errors.Interrupted says how far the run got
        print(f"mcsim: {str(exc) or 'interrupted'}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of stdout has gone: stop quietly, as command-line tools do
        # the rest of stdout would fail again when Python flushes it at exit: send it nowhere
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return SIGPIPE_EXIT


if __name__ == "__main__":
    sys.exit(main())
