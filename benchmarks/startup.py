# SPDX-License-Identifier: GPL-2.0-only
"""Start-up time: `import mcsim` + runtime.load() in a fresh process, after the first build.

Target (issue 2): <= 1.5 s on the 2-core reference machine. Prints the median of several runs,
plus the whole process (interpreter start included) and its peak RSS. It never asserts: wall time
is machine noise in a unit test.

Run: python benchmarks/startup.py [--runs 7]
"""

import argparse
import json
import statistics
import subprocess
import sys
import time

PROBE = """
import json, resource, time
t0 = time.perf_counter()
import mcsim
from mcsim import runtime
ns = runtime.load()
t1 = time.perf_counter()
print(json.dumps({"load_s": t1 - t0, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh processes to time (default 7)")
    runs = parser.parse_args().runs
    from mcsim import runtime

    info = runtime.build()  # the first build is not start-up: do it before timing
    print(f"library: {info.library} ({'built now' if info.built else 'cached'})")
    loads, walls, rss = [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
        walls.append(time.perf_counter() - t0)
        sample = json.loads(out)
        loads.append(sample["load_s"])
        rss.append(sample["rss_mb"])
    print(f"{'figure':<34} {'median':>8} {'min':>8} {'max':>8}")
    print(
        f"{'import mcsim + runtime.load() [s]':<34} "
        f"{statistics.median(loads):>8.3f} {min(loads):>8.3f} {max(loads):>8.3f}"
    )
    print(
        f"{'whole process, python start [s]':<34} "
        f"{statistics.median(walls):>8.3f} {min(walls):>8.3f} {max(walls):>8.3f}"
    )
    print(f"{'peak RSS [MB]':<34} {statistics.median(rss):>8.1f} {min(rss):>8.1f} {max(rss):>8.1f}")
    print(
        f"target: import + load <= 1.5 s over {runs} runs: median "
        f"{'meets' if statistics.median(loads) <= 1.5 else 'MISSES'} it"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
