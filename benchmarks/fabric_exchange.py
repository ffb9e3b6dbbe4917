# SPDX-License-Identifier: GPL-2.0-only
"""Fabric speed: a ring exchange and a multicast exchange of 1 MiB per host on testbed-188.

ring:      every host streams (P-1) x 1 MiB to its ring successor (the traffic of a ring Allgather)
multicast: every host multicasts 1 MiB to all P hosts at once (P roots)

Prints packet-hops (link traversals), events per hop, wall time of Simulator::Run(), packet-hops per
second, the simulated time against its closed-form bound, and peak RSS. Every hop costs one event
(its arrival); the ring's sources add one event per 8 packets, and credits cost no events of their
own. Raw sources send one shared read-only packet per size (their packets are alike), so the
figures are the fabric's own cost; RDMA traffic adds the NIC, its QPs and completion processing
(benchmarks/collectives_testbed.py). Each pattern runs in a fresh process so that its RSS is its
own. Target (issue 3): >= 3 M packet-hops/s on the 2-core reference machine; its speed varies from
one session to the next, so compare with benchmarks/event_rate.py run at the same time.

Run: python benchmarks/fabric_exchange.py [--size 1MiB] [--topology testbed-188] [--repeat 1]
"""

import argparse
import json
import subprocess
import sys

CHILD = """
import json, resource, sys, time
from mcsim import topology
from mcsim.native import library, runtime
from mcsim.config.fabric import FABRIC_HEADER_BYTES, FabricConfig, Flow
from mcsim.native.fabric import build
from mcsim.native.simulation import Simulation
from mcsim.routing.layout import layout_of
from mcsim.topology.physics import Link
pattern, name, size_b = sys.argv[1], sys.argv[2], int(sys.argv[3])
g = topology.resolve(name)
P = topology.host_count(g)
lib = runtime.load()
cfg = FabricConfig()
if pattern == "ring":
    flows, groups = [Flow(src=h, dst=(h + 1) % P, size_b=(P - 1) * size_b) for h in range(P)], []
else:
    flows, groups = [Flow(src=h, group=0, size_b=size_b) for h in range(P)], [list(range(P))]
with Simulation() as sim:
    fab = sim.own_fabric(build(layout_of(g), groups=groups, config=cfg))
    fab.add_flows(flows)
    t0 = time.perf_counter()
    sim.run()
    wall = time.perf_counter() - t0
    r = fab.collect()
    events = lib.mcsim_events_run()
data_bps = Link.from_edge(next(iter(g.edges(data=True)))[2]).data_rate_bps
packets = -(-size_b // 4096)
wire = (P - 1) * packets * (4096 + FABRIC_HEADER_BYTES + cfg.header_b)
print(json.dumps({
    "hops": r.link_traversals(), "events": events, "wall_s": wall, "sim_us": r.finish_ps / 1e6,
    "bound_us": wire * 8 * 1e6 / data_bps,  # every host receives (P-1) shares through one link
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "delivered_ok": bool((r.hosts["rx_packets"] == (P - 1) * packets).all()),
}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1MiB", help="bytes per host (default 1MiB)")
    parser.add_argument("--topology", default="testbed-188", help="topology name or file (default testbed-188)")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per pattern; prints the run with the median rate (default 1)"
    )
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat={args.repeat} must be >= 1")
    from mcsim.native import library
    from mcsim.units import parse_size

    library.ensure_built()
    size_b = parse_size(args.size, what="--size")
    print(f"{args.topology}, {args.size} per host, lossless, 4 KiB packets, median of {args.repeat} run(s)")
    print(
        f"{'pattern':<10} {'packet_hops':>12} {'events_per_hop':>14} {'run_s':>7} {'Mhops_per_s':>12} "
        f"{'sim_us':>10} {'bound_us':>10} {'rss_MB':>7} {'all_delivered':>13}"
    )
    for pattern in ("ring", "multicast"):
        runs = [
            json.loads(
                subprocess.run(
                    [sys.executable, "-c", CHILD, pattern, args.topology, str(size_b)],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
            for _ in range(args.repeat)
        ]
        runs.sort(key=lambda run: run["hops"] / run["wall_s"])
        r = runs[len(runs) // 2]
        if args.repeat > 1:
            rates = ", ".join(f"{run['hops'] / run['wall_s'] / 1e6:.2f}" for run in runs)
            print(f"{pattern:<10} all runs, M packet-hops/s: {rates}")
        print(
            f"{pattern:<10} {r['hops']:>12} {r['events'] / r['hops']:>14.3f} {r['wall_s']:>7.2f} "
            f"{r['hops'] / r['wall_s'] / 1e6:>12.2f} "
            f"{r['sim_us']:>10.1f} {r['bound_us']:>10.1f} {r['rss_mb']:>7.0f} {r['delivered_ok']!s:>13}"
        )
    print("target: >= 3 M packet-hops/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
