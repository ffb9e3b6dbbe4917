# SPDX-License-Identifier: GPL-2.0-only
"""The ``mcsim`` command: its top-level parser, its own commands (build, info, run) and the dispatch; every
other subcommand lives in its package's ``commands`` module (runs, topology, routing, sweep, reference,
report, workloads) and is thin over the API that scripts use.

Exit codes: 0 ok, 1 a run failed its own check, 2 bad input or environment (one line on stderr),
130 Ctrl-C, 141 (128 + SIGPIPE) when the reader of stdout has gone (``mcsim topo show X | head -1``).
"""

from __future__ import annotations

import sys

try:  # Ctrl-C while the commands load (numpy, networkx: the first half second) is one line, as later
    from mcsim.util.interrupts import interrupt_held, interrupts_noted

    with interrupt_held():  # and raised after them: inside a library's import it can be lost (mcsim.util.interrupts)
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
        from mcsim.errors import McsimError
        from mcsim.native import library
        from mcsim.reference import commands as compare_commands
        from mcsim.report import commands as report_commands
        from mcsim.routing import commands as routing_commands
        from mcsim.runs import commands as run_commands
        from mcsim.runs import job_commands as workload_command
        from mcsim.sweep import commands as sweep_commands
        from mcsim.topology import commands as topology_commands
        from mcsim.util import package_data
        from mcsim.util.options import Parser, refuse_repeats
        from mcsim.util.output import GuardedStdout, StdoutError
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

    run_commands.add_parsers(sub)
    topo = topology_commands.add_parser(sub)
    routing_commands.add_draw_parser(topo)
    sweep_commands.add_parser(sub)
    compare_commands.add_parser(sub)
    report_commands.add_parser(sub)
    workload_command.add_parser(sub)

    run_commands.add_stream_parser(sub)
    return parser


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
        with interrupts_noted() as came:
            status = _run(args)
        if came:  # a Ctrl-C whose KeyboardInterrupt code not mcsim's lost (mcsim.util.interrupts): one line, as any
            raise KeyboardInterrupt
        return status
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
