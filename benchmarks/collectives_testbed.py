# SPDX-License-Identifier: GPL-2.0-only
"""Collective speed: the multicast and ring Allgather of 1 MiB per rank on testbed-188 at 56 Gbit/s.

Prints, per algorithm, the wall time of Scenario.run() (planning, building, simulating, reading
results), packet-hops per second and peak RSS; each in a fresh process so that its RSS is its
own. Target (issue 5): the multicast Allgather in <= 15 s and <= 2 GiB on the 2-core reference
machine. It never asserts: wall time is machine noise in a unit test.

Run: python benchmarks/collectives_testbed.py [--size 1MiB]
"""

import argparse
import json
import subprocess
import sys

CHILD = """
import json, resource, sys, time
from mcsim import runtime
from mcsim.scenario import Scenario
runtime.load()
sc = Scenario(topology="testbed-188", rate="56Gbps", algorithm=sys.argv[1], bytes_per_rank=sys.argv[2])
t0 = time.perf_counter()
r = sc.run()
wall = time.perf_counter() - t0
print(json.dumps({"wall_s": wall, "hops": r.fabric.link_traversals(), "sim_us": r.summary()["time_us"],
                  "bound_us": r.receive_bound_ps / 1e6, "complete": r.complete,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1MiB", help="bytes per rank (default 1MiB)")
    args = parser.parse_args()
    from mcsim import runtime

    runtime.build()
    print(f"Allgather of {args.size} per rank on testbed-188 at 56 Gbit/s")
    print(
        f"{'algorithm':<10} {'wall_s':>7} {'packet_hops':>12} {'Mhops_per_s':>12} "
        f"{'sim_us':>10} {'bound_us':>10} {'rss_MB':>7} {'complete':>9}"
    )
    for algo in ("mcast", "ring"):
        out = subprocess.run([sys.executable, "-c", CHILD, algo, args.size], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout)
        print(
            f"{algo:<10} {r['wall_s']:>7.2f} {r['hops']:>12} {r['hops'] / r['wall_s'] / 1e6:>12.2f} "
            f"{r['sim_us']:>10.1f} {r['bound_us']:>10.1f} {r['rss_mb']:>7.0f} {r['complete']!s:>9}"
        )
    print("target: multicast <= 15 s and <= 2048 MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
