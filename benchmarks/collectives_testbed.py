# SPDX-License-Identifier: GPL-2.0-only
"""Collective speed: the multicast and ring Allgather of 1 MiB per rank on testbed-188 at 56 Gbit/s
(--topology and --size for others: fat-tree-k16 at 16 KiB against testbed-188 at 16 KiB compares
the per-hop rate at 1,024 hosts with that at 188, issue 15's scale target of >= 85 %).

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

Run: python benchmarks/collectives_testbed.py [--size 1MiB] [--repeat 3] [--topology testbed-188]
     [--pick-at-handover]
"""

import argparse
import json
import statistics
import subprocess
import sys

import event_rate  # benchmarks/event_rate.py, beside this script

CHILD = """
import json, resource, sys, time
from mcsim.native import library, run_control, runtime
from mcsim.config.rdma import RdmaConfig
from mcsim.runs.scenario import Scenario
runtime.load()
sc = Scenario(topology=sys.argv[3], rate="56Gbps", algorithm=sys.argv[1], bytes_per_rank=sys.argv[2],
              rdma=RdmaConfig(pick_at_handover=sys.argv[4] == "1"))
t0 = time.perf_counter()
r = sc.run()
wall = time.perf_counter() - t0
last = run_control.last_run()  # Simulator::Run() alone: its wall time and the events it ran
inner = {"run_s": last.wall_s, "events": last.events}
print(json.dumps({"wall_s": wall, "hops": r.fabric.link_traversals(), "sim_us": r.summary()["time_us"],
                  "bound_us": r.receive_bound_ps / 1e6, "complete": r.complete, **inner,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""
ALGORITHMS = ("mcast", "ring")


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
    args = parser.parse_args()
    from mcsim.native import library, runtime

    library.ensure_built()
    runtime.load()  # the build is not timed
    samples: dict[str, list[dict]] = {a: [] for a in ALGORITHMS}
    ceilings = []
    for _ in range(args.repeat):
        ceilings.append(event_rate.ceiling())
        for algo in ALGORITHMS:
            argv = [sys.executable, "-c", CHILD, algo, args.size, args.topology, "1" if args.pick_at_handover else "0"]
            samples[algo].append(json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout))
    ceiling = statistics.median(ceilings)
    pick = ", NICs pick at the handover" if args.pick_at_handover else ""
    print(f"Allgather of {args.size} per rank on {args.topology} at 56 Gbit/s{pick}, medians of {args.repeat} runs")
    print(f"ceiling: {ceiling / 1e6:.2f} M trivial events/s (mcsim's scheduler, 600 pending, same run)")
    print(
        f"{'algorithm':<9} {'packet_hops':>11} {'events':>10} {'ev/hop':>6} {'run_s':>6} {'wall_s':>6} "
        f"{'Mhops/s':>7} {'hops_x_ceil':>11} {'Mev/s':>6} {'ev_x_ceil':>9} {'sim/bound':>9} {'rss_MB':>6} {'done':>5}"
    )
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
    print("targets (issue 32): hops_x_ceil >= 0.40 and <= 1.1 events per packet-hop, both algorithms;")
    print("         multicast wall <= 15 s and <= 2048 MB (issue 5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
