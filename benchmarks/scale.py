# SPDX-License-Identifier: GPL-2.0-only
"""Scale: a multicast Allgather of 4 KiB per rank on k-ary fat trees, up to k=48 (27,648 hosts).

For each k (a fresh process each): the fabric's hosts, switches and ports; the wall time of
planning and building (topology, routes, C++ objects) and of Simulator::Run(); events and
packet-hops; packet-hops per second inside Run() beside the trivial-event ceiling measured in the
same run; and memory: the process's RSS once the topology graph exists, when Run() starts
(everything built) and at its peak, with the built state (RSS at Run() less RSS with the graph)
per host and per switch port. Issue 15's target: k=48 in <= 10 min and <= 8 GB. It never asserts:
wall time is machine noise in a unit test. A k=48 run delivers 27,648 x 27,647 datagrams: expect
a long run (15.6 min inside Run() and 1.76 GB at peak on the 2-core reference machine, issue 32's
note), with mcsim's progress line every 30 s; use --k to choose.

``--against REV`` runs each k on that commit's build too (benchmarks/builds.py makes it, not timed), one
after the other, the one that goes first alternating with k: its rows (marked with the build) and, per k,
both Run() times and the speedup (REV's / this one's); whether both moved the same packet-hops.

Run: python benchmarks/scale.py [--k 8,16,24] [--size 4KiB] [--algorithm mcast] [--against REV]
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import builds  # benchmarks/builds.py, beside this script
import event_rate  # benchmarks/event_rate.py, beside this script

CHILD = """
import json, resource, sys, time
from mcsim import topology
from mcsim.native import library, run_control, runtime
from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario
def rss_mb():  # current resident set, from /proc (ru_maxrss is the peak)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20
runtime.load()
path, algorithm, size = sys.argv[1], sys.argv[2], sys.argv[3]
t0 = time.monotonic()
g = topology.resolve(path)
graph_mb = rss_mb()
at = {}
plain_run = run_control.run_to_end
def run_once_built(lib, packets=None):  # the RSS when everything is built, just before Run()
    at["built_mb"] = rss_mb()
    plain_run(lib, packets)
run_control.run_to_end = run_once_built
try:
    r = Scenario(topology=path, rate="56Gbps", algorithm=algorithm, bytes_per_rank=size).run()
except McsimError as e:
    sys.exit(f"error: {e}")
last = run_control.last_run()
at.update(plan_s=last.started_s - t0, run_s=last.wall_s, events=last.events)
hosts = sum(1 for _, d in g.nodes(data=True) if d["role"] == "host")
switches = g.number_of_nodes() - hosts
ports = sum(g.degree(n) for n, d in g.nodes(data=True) if d["role"] != "host")
print(json.dumps({"hosts": hosts, "switches": switches, "switch_ports": ports, "graph_mb": graph_mb,
                  "wall_s": time.monotonic() - t0, "hops": r.fabric.link_traversals(),
                  "complete": r.complete, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  **at}))
"""
TOPOLOGY = """name = "fat-tree-k{k}"
description = "k={k} fat-tree for benchmarks/scale.py"

[builder]
name = "fat_tree"
k = {k}
rate = "56.25Gbps"
encoding = "64b/66b"
delay = "100ns"
"""

Side = tuple[str, dict[str, str] | None, Path | None]  # a build: its name, its child's environment and folder

# (key, width, format): the table's columns, in order
COLUMNS = (
    ("k", 3, "d"),
    ("hosts", 6, "d"),
    ("switches", 8, "d"),
    ("switch_ports", 12, "d"),
    ("plan_s", 7, ".1f"),
    ("run_s", 8, ".1f"),
    ("events", 11, "d"),
    ("ev/hop", 6, ".2f"),
    ("Mhops/s", 7, ".2f"),
    ("x_ceil", 6, ".2f"),
    ("graph_mb", 8, ".0f"),
    ("built_mb", 8, ".0f"),
    ("peak_mb", 8, ".0f"),
    ("kB/host", 7, ".1f"),
    ("B/port", 6, ".0f"),
    ("complete", 8, "s"),
)


def row_text(s: dict, k: int, ceiling: float) -> str:
    """One row of the table: a child's figures for radix ``k``."""
    built_b = (s["built_mb"] - s["graph_mb"]) * 2**20
    row = {
        **s,
        "k": k,
        "ev/hop": s["events"] / s["hops"],
        "Mhops/s": s["hops"] / s["run_s"] / 1e6,
        "x_ceil": s["events"] / s["run_s"] / ceiling,
        "kB/host": built_b / s["hosts"] / 1e3,
        "B/port": built_b / s["switch_ports"],
    }
    return " ".join(
        f"{row[key]!s:>{width}}" if fmt == "s" else f"{row[key]:>{width}{fmt}}" for key, width, fmt in COLUMNS
    )


def run_child(path: Path, args: argparse.Namespace, env: dict[str, str] | None, cwd: Path | None) -> dict | int:
    """One fresh process on the fabric file ``path`` (``env``, ``cwd``: another build's): its figures, or its
    exit status if it failed."""
    argv = [sys.executable, "-c", CHILD, str(path), args.algorithm, args.size]
    # the child's stderr passes through: mcsim's progress line every 30 s of a long run
    done = subprocess.run(argv, stdout=subprocess.PIPE, text=True, env=env, cwd=cwd)
    if done.returncode != 0:
        return done.returncode
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_radixes(radixes: list[int], sides: list[Side], args: argparse.Namespace, ceiling: float) -> list[tuple]:
    """Each k on every side (in builds.rotated order), a row each as it ends; with two sides, the (k, this
    side's figures, the other's) of the radixes where both ran."""
    pairs = []
    with tempfile.TemporaryDirectory() as tmp:
        for at, k in enumerate(radixes):
            path = Path(tmp) / f"fat-tree-k{k}.toml"
            path.write_text(TOPOLOGY.format(k=k))
            got: dict[int, dict] = {}
            for index in builds.rotated(at, range(len(sides))):
                name, env, cwd = sides[index]
                s = run_child(path, args, env, cwd)
                suffix = f"  {name}" if len(sides) > 1 else ""
                if isinstance(s, int):
                    print(f"{k:>3} failed (exit {s}); its error is above{suffix}", flush=True)
                    continue
                got[index] = s
                print(row_text(s, k, ceiling) + suffix, flush=True)
            if len(got) == 2:
                pairs.append((k, got[0], got[1]))
    return pairs


def print_against(runs: list[tuple], rev: str) -> None:
    """Run() seconds of this build beside another's, per radix (one run each): the speedup (other / this)."""
    col = f"run_s_{rev}"
    width = max(len(col), 8)
    print(f"Run() against {rev}'s build, one run each (which goes first alternates with k):")
    print(f"{'k':>3} {'run_s':>8} {col:>{width}} {'speedup':>7} {'same_hops':>9}")
    for k, this, other in runs:
        same = "yes" if this["hops"] == other["hops"] else "NO"
        speedup = other["run_s"] / this["run_s"]
        print(f"{k:>3} {this['run_s']:>8.1f} {other['run_s']:>{width}.1f} {speedup:>7.2f} {same:>9}")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--k", default="8,16,24", help="fat-tree radixes, comma-separated (default 8,16,24; 48 = 27,648 hosts)"
    )
    parser.add_argument("--size", default="4KiB", help="bytes per rank (default 4KiB)")
    parser.add_argument("--algorithm", default="mcast", choices=("mcast", "ring"), help="default mcast")
    parser.add_argument(
        "--against", metavar="REV", help="also run a commit's build (benchmarks/builds.py), each k: its speedup"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    try:
        radixes = [int(k) for k in args.k.split(",")]
    except ValueError:
        radixes = []
    if not radixes or any(k < 2 or k % 2 for k in radixes):
        print(f"error: --k wants even integers >= 2 separated by commas, not {args.k!r}", file=sys.stderr)
        return 2
    from mcsim.errors import McsimError
    from mcsim.native import library, runtime
    from mcsim.units import parse_size

    try:
        if parse_size(args.size, what="--size") == 0:
            raise McsimError(f"--size={args.size!r} must be at least 1 byte")
        sides: list[Side] = [("this", None, None)]
        if args.against:
            ready = builds.prepare(args.against)  # its build is not timed either
            sides.append((args.against, builds.child_env(ready.path), ready.path))
    except (McsimError, builds.BuildError) as e:
        print(f"error: {'--against: ' if isinstance(e, builds.BuildError) else ''}{e}", file=sys.stderr)
        return 2
    library.ensure_built()
    runtime.load()  # the build is not timed
    ceiling = event_rate.ceiling()
    print(f"{args.algorithm} Allgather of {args.size} per rank on k-ary fat trees at 56 Gbit/s, one run each")
    print(f"ceiling: {ceiling / 1e6:.2f} M trivial events/s (mcsim's scheduler, 600 pending, same run)")
    label = "  build" if args.against else ""
    print(" ".join(f"{name:>{width}}" for name, width, _ in COLUMNS) + label, flush=True)
    pairs = run_radixes(radixes, sides, args, ceiling)
    print("kB/host, B/port: one figure, the built state (RSS when Run() starts less RSS with the graph)")
    print("                 over the hosts, and over the switch ports")
    print("target (issue 15): k=48 (27,648 hosts) in <= 10 min and <= 8 GB")
    if args.against:
        print_against(pairs, args.against)
    return 0


if __name__ == "__main__":
    sys.exit(main())
