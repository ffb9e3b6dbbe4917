# SPDX-License-Identifier: GPL-2.0-only
"""Collective speed: the multicast and ring Allgather of 1 MiB per rank on testbed-188 at 56 Gbit/s
(--topology and --size for others).

Prints, per algorithm (medians of --repeat interleaved fresh processes): packet-hops (link
traversals, data and ACKs), events run inside Simulator::Run(), events per packet-hop, the wall
time of Run() and of Scenario.run() (planning, building, simulating, reading results), packet-hops
per second inside Run(), and peak RSS. Beside them, the ceiling measured in the same run: trivial
self-rescheduling events per second under mcsim's scheduler (benchmarks/event_rate.py), and the
collective's events per second as a share of it. Targets (issue 32): >= 0.4 of the trivial-event
rate in packet-hops/s inside Run() and <= 1.1 events per packet-hop, both algorithms; the multicast
Allgather in <= 15 s and <= 2 GiB (issue 5). It never asserts: wall time is machine noise in a unit
test. ``--pick-at-handover`` runs with RdmaConfig(pick_at_handover=True) (a NIC picks its next
packet when a cut-through switch has its current one's header: no event per packet sent).

Beside another build (``--against REV``): REV's tree and C++ build are made by benchmarks/builds.py
(not timed), and each repeat runs every algorithm on both builds, one after the other, the one that
goes first alternating; it prints REV's rows and per algorithm both medians of Run(), the speedup
(REV's median / this one's; issue 52's target: >= 1.5 against main 00fb2d2, both algorithms), the
range of the per-repeat ratios, and whether both moved the same packet-hops. Beside another fabric
(``--per-hop-against TOPOLOGY``, this build, interleaved the same way): packet-hops per second inside
Run() on --topology as a share of TOPOLOGY's (issues 15 and 52: fat-tree-k16 >= 85 % of testbed-188
per hop, run as --topology fat-tree-k16 --size 16KiB --per-hop-against testbed-188).

Run: python benchmarks/collectives_testbed.py [--size 1MiB] [--repeat 3] [--topology testbed-188]
     [--pick-at-handover] [--against REV] [--per-hop-against TOPOLOGY]
"""

import argparse
import json
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import builds  # benchmarks/builds.py, beside this script
import event_rate  # benchmarks/event_rate.py, beside this script

# runs on another commit's mcsim too (--against): only API that 00fb2d2 has
CHILD = """
import json, resource, sys, time
import mcsim
from mcsim.native import run_control, runtime
from mcsim.runs.scenario import Scenario
lib = runtime.load()
options = {}
if sys.argv[4] == "1":
    from mcsim.config.rdma import RdmaConfig
    options["rdma"] = RdmaConfig(pick_at_handover=True)
sc = Scenario(topology=sys.argv[3], rate="56Gbps", algorithm=sys.argv[1], bytes_per_rank=sys.argv[2], **options)
t0 = time.perf_counter()
r = sc.run()
wall = time.perf_counter() - t0
last = run_control.last_run()  # Simulator::Run() alone: its wall time and the events it ran
inner = {"run_s": last.wall_s, "events": last.events}
print(json.dumps({"wall_s": wall, "hops": r.fabric.link_traversals(), "sim_us": r.summary()["time_us"],
                  "bound_us": r.receive_bound_ps / 1e6, "complete": r.complete, **inner,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "mcsim": mcsim.__file__,
                  "library": lib._name}))
"""
ALGORITHMS = ("mcast", "ring")
PER_HOP_TARGET = 0.85  # issues 15 and 52: fat-tree-k16's packet-hops/s >= 85 % of testbed-188's
SPEEDUP_TARGET = 1.5  # issue 52: Run() >= 1.5x faster than main 00fb2d2, both algorithms


@dataclass(frozen=True, slots=True)
class Side:
    """One build on one fabric: a column of the comparison, run once per repeat and algorithm."""

    label: str  # "this" or a revision
    sha: str  # the revision's commit; "" for this checkout
    topology: str
    mcsim: Path  # the mcsim package the child must import (checked)
    env: dict[str, str] | None = None  # None: this process's environment
    cwd: Path | None = None


def run_child(side: Side, algo: str, size: str, pick: bool) -> dict:
    """One fresh process: the collective on ``side``'s build and fabric; its figures."""
    argv = [sys.executable, "-c", CHILD, algo, size, side.topology, "1" if pick else "0"]
    done = subprocess.run(argv, capture_output=True, text=True, env=side.env, cwd=side.cwd)
    if done.returncode != 0:
        raise SystemExit(f"error: {algo} on {side.label} failed (exit {done.returncode}):\n{done.stderr.strip()}")
    sample = json.loads(done.stdout)
    if not Path(sample["mcsim"]).resolve().is_relative_to(side.mcsim):
        raise SystemExit(f"error: the {side.label} child imported {sample['mcsim']}, not {side.mcsim}")
    return sample


def measure(sides: list[Side], args: argparse.Namespace) -> tuple[list[dict[str, list[dict]]], float]:
    """Every side once per repeat and algorithm, in builds.rotated order: per side (in ``sides`` order) its
    samples per algorithm, repeat by repeat; and the median of the ceilings, one measured per repeat."""
    samples: list[dict[str, list[dict]]] = [{a: [] for a in ALGORITHMS} for _ in sides]
    ceilings = []
    for i in range(args.repeat):
        ceilings.append(event_rate.ceiling())
        for algo in ALGORITHMS:
            for at in builds.rotated(i, range(len(sides))):
                samples[at][algo].append(run_child(sides[at], algo, args.size, args.pick_at_handover))
    return samples, statistics.median(ceilings)


def describe(side: Side, samples: dict[str, list[dict]]) -> str:
    """The side's name and the build its children loaded (``<cache>/builds/<key>/lib/...``): one key, or
    several and a note if its C++ sources changed during the run (its figures then mix builds)."""
    keys = sorted({Path(s["library"]).parents[1].name for runs in samples.values() for s in runs})
    commit = f"{side.sha[:12]}, " if side.sha else ""
    mixed = f" (NOTE: {len(keys)} builds: its C++ sources changed during the run)" if len(keys) > 1 else ""
    return f"{side.label} ({commit}build {', '.join(keys)}){mixed}"


def print_rows(samples: dict[str, list[dict]], ceiling: float) -> None:
    """One row per algorithm: the figures of one side (medians of its repeats)."""
    for algo in ALGORITHMS:
        med = {k: statistics.median(s[k] for s in samples[algo]) for k in ("wall_s", "run_s", "rss_mb")}
        first = samples[algo][0]  # hops, events and times are the same in every run (deterministic)
        events_per_s, hops_per_s = first["events"] / med["run_s"], first["hops"] / med["run_s"]
        print(
            f"{algo:<9} {first['hops']:>11} {first['events']:>10} {first['events'] / first['hops']:>6.2f} "
            f"{med['run_s']:>6.2f} {med['wall_s']:>6.2f} {hops_per_s / 1e6:>7.2f} {hops_per_s / ceiling:>11.2f} "
            f"{events_per_s / 1e6:>6.2f} {events_per_s / ceiling:>9.2f} {first['sim_us'] / first['bound_us']:>9.3f} "
            f"{med['rss_mb']:>6.0f} {first['complete']!s:>5}"
        )


def print_against(this: dict[str, list[dict]], other: dict[str, list[dict]], rev: str) -> None:
    """Run() seconds of this build beside another's, per algorithm: the speedup (other / this) and the range
    of the per-repeat ratios; whether both builds moved the same packet-hops."""
    col = f"run_s_{rev}"
    print(f"{'algorithm':<9} {'run_s':>6} {col:>{len(col)}} {'speedup':>7} {'pairs':>11} {'same_hops':>9}")
    for algo in ALGORITHMS:
        p = builds.paired([s["run_s"] for s in other[algo]], [s["run_s"] for s in this[algo]])
        same = "yes" if {s["hops"] for s in this[algo]} == {s["hops"] for s in other[algo]} else "NO"
        pairs = f"{p.low:.2f}-{p.high:.2f}"
        print(f"{algo:<9} {p.bottom:>6.2f} {p.top:>{len(col)}.2f} {p.ratio:>7.2f} {pairs:>11} {same:>9}")
    print(f"target (issue 52): speedup = {rev}'s Run() / this one's >= {SPEEDUP_TARGET}, both algorithms")


def print_per_hop(here: dict[str, list[dict]], there: dict[str, list[dict]], topology: str, other: str) -> None:
    """Packet-hops per second inside Run() on ``topology`` beside ``other`` (this build, same repeats)."""
    col = f"Mhops/s_{other}"
    print(f"{'algorithm':<9} {'Mhops/s':>7} {col:>{len(col)}} {'ratio':>6} {'pairs':>11}")
    for algo in ALGORITHMS:
        p = builds.paired(*([s["hops"] / s["run_s"] for s in side[algo]] for side in (here, there)))
        pairs = f"{p.low:.2f}-{p.high:.2f}"
        print(f"{algo:<9} {p.top / 1e6:>7.2f} {p.bottom / 1e6:>{len(col)}.2f} {p.ratio:>6.2f} {pairs:>11}")
    print(f"target (issues 15, 52): {topology} >= {PER_HOP_TARGET} of {other}'s packet-hops/s")
    print("                        (fat-tree-k16 --size 16KiB --per-hop-against testbed-188)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1MiB", help="bytes per rank (default 1MiB)")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved fresh processes per figure (default 3)")
    parser.add_argument(
        "--topology",
        default="testbed-188",
        help="the fabric (default testbed-188); fat-tree-k16 --size 16KiB gives issue 15's per-hop rate at 1,024 hosts",
    )
    parser.add_argument("--pick-at-handover", action="store_true", help="RdmaConfig(pick_at_handover=True)")
    parser.add_argument(
        "--against", metavar="REV", help="also run a commit's build (benchmarks/builds.py), interleaved: its speedup"
    )
    parser.add_argument(
        "--per-hop-against",
        metavar="TOPOLOGY",
        help="also run this build on TOPOLOGY, interleaved: --topology's packet-hops/s as a share of its",
    )
    args = parser.parse_args()
    import mcsim
    from mcsim.native import library, runtime

    sides = [Side("this", "", args.topology, Path(mcsim.__file__).resolve().parent)]
    if args.against:
        try:
            ready = builds.prepare(args.against)  # its build is not timed either
        except builds.BuildError as exc:
            print(f"error: --against: {exc}", file=sys.stderr)
            return 2
        env = builds.child_env(ready.path)
        sides.append(Side(args.against, ready.sha, args.topology, ready.path / "mcsim", env, ready.path))
    if args.per_hop_against:
        sides.append(Side("this", "", args.per_hop_against, sides[0].mcsim))
    library.ensure_built()
    runtime.load()  # the build is not timed
    samples, ceiling = measure(sides, args)
    pick = ", NICs pick at the handover" if args.pick_at_handover else ""
    print(f"Allgather of {args.size} per rank on {args.topology} at 56 Gbit/s{pick}, medians of {args.repeat} runs")
    print(f"ceiling: {ceiling / 1e6:.2f} M trivial events/s (mcsim's scheduler, 600 pending, same run)")
    if len(sides) > 1:
        print(describe(sides[0], samples[0]))
    print(
        f"{'algorithm':<9} {'packet_hops':>11} {'events':>10} {'ev/hop':>6} {'run_s':>6} {'wall_s':>6} "
        f"{'Mhops/s':>7} {'hops_x_ceil':>11} {'Mev/s':>6} {'ev_x_ceil':>9} {'sim/bound':>9} {'rss_MB':>6} {'done':>5}"
    )
    print_rows(samples[0], ceiling)
    for side, figures in zip(sides[1:], samples[1:], strict=True):
        print(f"{describe(side, figures)} on {side.topology}, the same repeats (x_ceil: this build's ceiling):")
        print_rows(figures, ceiling)
    print("targets (issue 32): hops_x_ceil >= 0.40 and <= 1.1 events per packet-hop, both algorithms;")
    print("         multicast wall <= 15 s and <= 2048 MB (issue 5)")
    if args.against:
        print(f"Run() against {args.against}'s build, {args.repeat} interleaved pairs (which goes first alternates):")
        print_against(samples[0], samples[1], args.against)
    if args.per_hop_against:
        against = f"{args.per_hop_against}, {args.repeat} interleaved pairs"
        print(f"packet-hops/s inside Run() on {args.topology} against {against}:")
        print_per_hop(samples[0], samples[-1], args.topology, args.per_hop_against)
    return 0


if __name__ == "__main__":
    sys.exit(main())
