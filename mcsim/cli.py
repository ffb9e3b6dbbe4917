# SPDX-License-Identifier: GPL-2.0-only
"""The ``mcsim`` command: thin commands over the API that scripts use.

Exit codes: 0 ok, 1 a run failed its own check, 2 bad input or environment (one line on stderr),
130 Ctrl-C, 141 (128 + SIGPIPE) when the reader of stdout has gone (``mcsim topo show X | head -1``).
"""

from __future__ import annotations

import sys

try:  # Ctrl-C while the commands load (numpy, networkx: the first half second) is one line, as later
    import argparse
    import importlib.metadata
    import os
    import platform
    import runpy
    import signal
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any

    import mcsim
    from mcsim import topology
    from mcsim.config.fabric import DEFAULT_HEADER_BYTES, DEFAULT_MTU_BYTES
    from mcsim.errors import McsimError, require_positive
    from mcsim.native import library, run_control
    from mcsim.reference import commands as compare_commands
    from mcsim.report import commands as report_commands
    from mcsim.runs import commands as collective_commands
    from mcsim.runs.stream import MAX_HEADER_B, MAX_MTU_B, check_packet, expected_finish_ps, stream
    from mcsim.sweep import commands as sweep_commands
    from mcsim.topology import commands as topology_commands
    from mcsim.topology.physics import DEFAULT_DELAY_PS, Link, parse_encoding
    from mcsim.units import CLOCK_LIMIT, MAX_SIMULATED_PS, format_time, parse_rate, parse_size, parse_time
    from mcsim.util import package_data
    from mcsim.util.options import DefaultsHelp, Given, Parser, parse_hosts, refuse_repeats, typed_option
    from mcsim.util.output import Column, GuardedStdout, StdoutError, Table, check_writable
    from mcsim.workloads import command as workload_command
except KeyboardInterrupt:
    sys.stderr.write("mcsim: interrupted\n")
    raise SystemExit(130) from None


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
    if script.is_dir() and not (script / "__main__.py").is_file():  # runpy runs a folder by its __main__.py
        raise McsimError(
            f"run: {str(script)!r} is a folder; run takes a Python script (or a folder with a __main__.py), "
            "e.g. mcsim run scenarios/link_stream.py"
        )
    if not script.exists():
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
    header_option, mtu_option = typed_option(args, "header_bytes"), typed_option(args, "mtu")
    header_b = parse_size(args.header_bytes, what=header_option)
    size_b = parse_size(args.size, what=typed_option(args, "size"))
    mtu_b = parse_size(args.mtu, what=mtu_option)
    require_positive("stream", size_b=size_b, mtu_b=mtu_b)
    check_packet(mtu_b, header_b, mtu=f"{mtu_option}={args.mtu!r}", header=f"{header_option}={args.header_bytes!r}")
    bound_ps = expected_finish_ps(link, size_b, mtu_b, header_b)
    if bound_ps > MAX_SIMULATED_PS:  # the simulated clock would wrap: refuse before the run
        raise McsimError(
            f"stream: {rate_option}={args.signalling_rate!r} takes {format_time(bound_ps)} for --size={args.size!r} "
            f"(--delay={args.delay!r}), past {CLOCK_LIMIT}; give a higher rate, a smaller size or a shorter delay"
        )
    with run_control.against_bound(bound_ps):  # the progress line: the share of the closed form done, an ETA
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


def cmd_topo_show(args: argparse.Namespace) -> int:
    g = topology.resolve(args.file)
    print(topology.format_summary(g))
    if args.ports:
        from mcsim.routing.layout import port_map

        def name(n: int) -> str:
            return f"{n} ({g.nodes[n]['name']})" if "name" in g.nodes[n] else str(n)

        print("ports (node: port -> neighbour [parallel link]), as --pcap-ports and Faults name them")
        for node, ports in port_map(g).items():
            out = ", ".join(f"{p}->{nbr}" + (f"[{i}]" if i else "") for p, (nbr, i) in enumerate(ports))
            print(f"  {name(node)}: {out}")
    return 0


def cmd_topo_draw(args: argparse.Namespace) -> int:
    from mcsim.routing import draw

    draw.check_out(args.out)
    check_writable(args.out, "-o")
    g = topology.resolve(args.file)
    group = parse_hosts(args.group, topology.host_count(g)) if args.group is not None else ()
    d = draw.drawing_of(g, group, args.aggregation)
    draw.write_drawing(d, args.out)
    print(f"{args.out}: {draw.title(d)}")
    return 0


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

    collective_commands.add_parsers(sub)

    p = sub.add_parser("topo", help="inspect topologies")
    topo = p.add_subparsers(dest="topo_command", required=True, parser_class=Parser)
    p = topo.add_parser("show", help="hosts, switches, links, per-tier rates, bisection bandwidth, diameter")
    p.add_argument(
        "file", help=f"a .toml or .graphml file, or a name from topologies/ ({', '.join(topology.available())})"
    )
    p.add_argument("--ports", action="store_true", help="also every node's ports and where each leads")
    p.set_defaults(func=cmd_topo_show, parser=p)
    topology_commands.add_import_parser(topo)
    p = topo.add_parser(
        "draw", help="draw a fabric by tiers, link rates as line styles; optionally a group's multicast tree"
    )
    p.add_argument("file", help="a .toml or .graphml file, or a name from topologies/")
    p.add_argument("--group", metavar="HOSTS", help="hosts whose multicast tree to highlight: 0,3,5 or 0-15 or all")
    p.add_argument(
        "--aggregation", action="store_true", help="also the group's first aggregation tree (in-network reduction)"
    )
    p.add_argument("-o", "--out", default="fabric.svg", metavar="FILE", help="the picture: .svg or .png")
    p.set_defaults(func=cmd_topo_draw, parser=p)

    sweep_commands.add_parser(sub)
    compare_commands.add_parser(sub)
    report_commands.add_parser(sub)
    workload_command.add_parser(sub)

    _stream_parser(sub)
    return parser


def _stream_parser(sub: Any) -> None:
    """``mcsim stream``: one link, its closed form checked."""
    p = sub.add_parser(
        "stream",
        help="stream bytes over one link; exit 1 if the time differs from the closed form",
        formatter_class=DefaultsHelp,
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
        help=f"wire bytes per packet beyond the payload and the 16-byte fabric header (IB RC: 10; at most "
        f"{MAX_HEADER_B}, an RDMA packet's most in either wire format)",
    )
    p.add_argument("--delay", action=Given, default=format_time(DEFAULT_DELAY_PS), help="propagation delay")
    p.add_argument("--size", action=Given, default="64MiB", help="payload bytes to send")
    p.add_argument(
        "--mtu",
        action=Given,
        default=f"{DEFAULT_MTU_BYTES}",
        help=f"payload bytes per packet, at most {MAX_MTU_B} (InfiniBand's largest MTU)",
    )
    p.set_defaults(func=cmd_stream, parser=p, simulates=True)


SIGPIPE_EXIT = 128 + signal.SIGPIPE  # 141: the status of a process that SIGPIPE ended
INTERRUPTED_EXIT = 128 + signal.SIGINT  # 130: Ctrl-C
STDOUT_CLOSED = "stdout is closed (>&-); give the command somewhere to write, e.g. >/dev/null"


STDERR_CLOSED = "stderr is closed (2>&-); give the command somewhere to write its errors and progress, e.g. 2>/dev/null"


def _closed(stream: Any) -> bool:
    """A standard stream the process started without (``>&-``): Python's is None, or its fd is not open."""
    if stream is None:
        return True
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):  # a stream without a file descriptor (a test's capture)
        return False
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def _discard_stdout() -> None:
    """Send the rest of stdout nowhere: what is still buffered would fail again when Python flushes it at exit."""
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        return
    os.dup2(os.open(os.devnull, os.O_WRONLY), fd)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Exit codes: 0 ok; 1 a run failed its own check; 2 bad input or environment
    (one line on stderr: also a stdout that is closed, full or cannot encode a name); 130 Ctrl-C (one line
    saying how far it got); 141 (128 + SIGPIPE, as a tool killed by it) when stdout's reader has gone, e.g.
    ``mcsim topo show X | head -1``."""
    # before any work: a file opened later would take fd 1 or 2 (and whatever C++ prints there)
    if _closed(sys.stdout):
        print(f"mcsim: error: {STDOUT_CLOSED}", file=sys.stderr)  # nowhere if stderr is closed too: exit 2 says it
        return 2
    if _closed(sys.stderr):  # the one line goes where the output would have
        print(f"mcsim: error: {STDERR_CLOSED}", file=sys.stdout)
        return 2
    stdout, sys.stdout = sys.stdout, GuardedStdout(sys.stdout)
    args: argparse.Namespace | None = None
    try:
        args = _parse(argv)
        return _run(args)
    except StdoutError as exc:  # stdout full, or a name its encoding lacks: one line
        if exc.refused:
            _discard_stdout()
        print(f"mcsim: error: {exc}", file=sys.stderr)
        return 2
    except McsimError as exc:  # bad input or environment: one line; real bugs keep their traceback
        print(f"mcsim: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:  # a Python allocation failed (Scenario.run says more): one line, not a traceback
        command = getattr(args, "command", "mcsim")
        print(
            f"mcsim: error: {command}: out of memory (a Python allocation failed); see Scenario.estimate()",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt as exc:  # Ctrl-C: mcsim.errors.Interrupted says how far the run got
        print(f"mcsim: {str(exc) or 'interrupted'}", file=sys.stderr)
        return INTERRUPTED_EXIT
    except BrokenPipeError:  # the reader of stdout has gone: stop quietly, as command-line tools do
        _discard_stdout()
        return SIGPIPE_EXIT
    finally:
        sys.stdout = stdout


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command and its options (a bad one: argparse's one line, exit 2)."""
    args, extra = build_parser().parse_known_args(argv)
    if extra:  # the subcommand's parser names itself in the hint ("see mcsim allgather --help")
        args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def _run(args: argparse.Namespace) -> int:
    """Run the command (main's handlers turn what it raises into one line)."""
    refuse_repeats(args)
    if getattr(args, "simulates", False):  # a bad cache folder or toolchain: one line before any work
        library.check_environment()
    status = int(args.func(args))
    sys.stdout.flush()  # a reader that has gone, or a full device, shows here, not in the interpreter's exit
    return status


if __name__ == "__main__":
    sys.exit(main())
