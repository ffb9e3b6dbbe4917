# SPDX-License-Identifier: GPL-2.0-only
"""Start-up time of a fresh process, after the first build exists.

Measures, as medians over interleaved fresh processes:
  floor     `python -c "import numpy"`: what any process that runs mcsim pays before it does
            anything (the ceiling here is a floor: nothing mcsim does is faster)
  cppyy     `python -c "import cppyy"`: what a run paid before it called C++ through ctypes
            (mcsim.native.abi), for comparison; a run no longer imports it
  load      `import mcsim` + runtime.load(), inside the process
  first     the first Scenario run after load: a 64 KiB multicast Allgather on testbed-188,
            inside the process (importing Scenario and networkx, building the topology)
  second    the same run again in the same process (the first less its one-time costs)
  process   the whole process of that run, python start to exit
and prints each beside the floor, as a ratio, and against issue 15's targets (load + first build
<= 0.5 s; the 64 KiB testbed Allgather process <= 1.2 s). It never asserts: wall time is machine
noise in a unit test.

Run: python benchmarks/startup.py [--runs 7]
"""

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

PROBE = """
import json, resource, time
t0 = time.perf_counter()
import mcsim
from mcsim.native import library, runtime
runtime.load()
t1 = time.perf_counter()
from mcsim import Scenario
Scenario(topology="testbed-188", bytes_per_rank="64KiB", algorithm="mcast").run()
t2 = time.perf_counter()
Scenario(topology="testbed-188", bytes_per_rank="64KiB", algorithm="mcast").run()
t3 = time.perf_counter()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
import sys
cppyy = "cppyy" in sys.modules
print(json.dumps({"load": t1 - t0, "first": t2 - t1, "second": t3 - t2, "rss_mb": rss, "cppyy": cppyy}))
"""
RUN_ONLY = """
import mcsim
from mcsim import Scenario
Scenario(topology="testbed-188", bytes_per_rank="64KiB", algorithm="mcast").run()
"""


def _wall(argv: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return time.perf_counter() - t0, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh processes of each kind (default 7)")
    runs = parser.parse_args().runs
    from mcsim.native import library, runtime

    info = library.ensure_built()  # the first build is not start-up: make it before timing
    runtime.load()
    print(f"library: {info.library}")
    keys = ("floor", "cppyy", "load", "first", "second", "process", "rss_mb")
    figures: dict[str, list[float]] = {k: [] for k in keys}
    imported_cppyy = False
    for _ in range(runs):  # interleaved, so that a slow minute of the machine hits every figure
        figures["floor"].append(_wall([sys.executable, "-c", "import numpy"])[0])
        figures["cppyy"].append(_wall([sys.executable, "-c", "import cppyy"])[0])
        sample = json.loads(_wall([sys.executable, "-c", PROBE])[1])
        imported_cppyy |= sample["cppyy"]
        for key in ("load", "first", "second", "rss_mb"):
            figures[key].append(sample[key])
        figures["process"].append(_wall([sys.executable, "-c", RUN_ONLY])[0])
    med = {k: statistics.median(v) for k, v in figures.items()}
    floor = med["floor"]
    print(f"{'figure (median of ' + str(runs) + ')':<44} {'seconds':>8} {'x floor':>8}")
    rows = (
        ("floor: python -c 'import numpy'", "floor"),
        ("python -c 'import cppyy' (not paid by a run)", "cppyy"),
        ("import mcsim + runtime.load()", "load"),
        ("first run after load (64 KiB testbed mcast)", "first"),
        ("the same run again", "second"),
        ("whole process of that run", "process"),
    )
    for label, key in rows:
        print(f"{label:<44} {med[key]:>8.3f} {med[key] / floor:>8.2f}")
    print(f"{'peak RSS of the probe [MB]':<44} {med['rss_mb']:>8.1f}")
    print(f"the probe imported cppyy: {imported_cppyy}")
    first_build = med["load"] + med["first"] - med["second"]
    print(f"load + first build (first run less its simulation): {first_build:.3f} s; target <= 0.5 s")
    print(f"64 KiB testbed Allgather process: {med['process']:.3f} s; target <= 1.2 s")
    print(f"(the floor alone is {floor:.3f} s of it; peak RSS of this process {_rss():.1f} MB)")
    return 0


def _rss() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    sys.exit(main())
