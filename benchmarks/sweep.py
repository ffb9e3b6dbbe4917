# SPDX-License-Identifier: GPL-2.0-only
"""Sweep speed: the cost a sweep adds to its runs, and what the local pool gains over one process.

1. Per-run overhead: a sweep of 12 small runs (fat-tree-k4, 4 KiB per rank, 12 seeds) on one
   worker; overhead per run = (the sweep's wall time - the sum of its runs' own wall times) / 12.
   It holds everything a sweep adds: planning and keys, the worker's start (import, runtime load),
   the pipe, the store's transactions, progress. Target (issue 13): <= 0.3 s. Printed beside the
   runs' own mean time.
2. Speed-up: the same 12 testbed-188 runs (16, 64, 256 KiB x ring, mcast x seeds 1, 2) once as a sweep
   on the local pool (one worker per core) and once in one process (a loop of Scenario.run(),
   import and runtime load included), each in a fresh process with a fresh store. Target: >= 1.8x
   on 2 cores. The ceiling is measured in the same run: `cores` identical testbed runs one after the
   other in one process against one each in `cores` processes at once (what the machine gives in
   parallel right now; ideally `cores`); the pool's speed-up is printed as a share of it.

Medians of --repeat interleaved measurements (wall clock: the machine's noise; nothing asserts).

Run: python benchmarks/sweep.py [--repeat 3] [--sizes 16KiB,64KiB,256KiB]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

SMALL = {"topology": "fat-tree-k4", "bytes_per_rank": "4KiB", "algorithm": "mcast"}
SMALL_AXES = {"seed": list(range(1, 13))}
TESTBED = {"topology": "testbed-188", "rate": "56Gbps"}
TESTBED_AXES = {"bytes_per_rank": ["16KiB", "64KiB", "256KiB"], "algorithm": ["ring", "mcast"], "seed": [1, 2]}

SWEEP_CHILD = """
import json, sys, time
t0 = time.perf_counter()
from mcsim.sweep import SweepSpec, run_sweep
base, axes, store, workers = json.loads(sys.argv[1])
report = run_sweep(SweepSpec(name="bench", base=base, axes=axes), store, workers=workers, progress=False)
wall = time.perf_counter() - t0
rows = report.rows()
assert report.ran == len(rows) and all(r["status"] == "ok" and r["complete"] for r in rows), report.line()
print(json.dumps({"wall_s": wall, "runs_s": sum(r["wall_s"] for r in rows), "runs": len(rows)}))
"""

LOOP_CHILD = """
import itertools, json, sys, time
t0 = time.perf_counter()
from mcsim.runs.scenario import Scenario
base, axes = json.loads(sys.argv[1])
for values in itertools.product(*axes.values()):
    r = Scenario(**base, **dict(zip(axes, values))).run()
    assert r.complete
print(json.dumps({"wall_s": time.perf_counter() - t0}))
"""


CEILING_CHILD = """
import json, sys, time
from mcsim.native import library, runtime
from mcsim.runs.scenario import Scenario
runtime.load()
Scenario(topology="testbed-188", bytes_per_rank="4KiB", algorithm="ring").run()  # one-time costs, not timed
(runs,) = json.loads(sys.argv[1])
t0 = time.perf_counter()
for seed in range(1, runs + 1):
    assert Scenario(topology="testbed-188", bytes_per_rank="256KiB", algorithm="ring", seed=seed).run().complete
print(json.dumps({"wall_s": time.perf_counter() - t0}))
"""


def ceiling(cores: int) -> float:
    """What this machine gives in parallel right now: `cores` identical runs one after the other in
    one process, against one each in `cores` processes at once (start-up excluded from both)."""
    one_after_other = child(CEILING_CHILD, cores)["wall_s"]
    argv = [sys.executable, "-c", CEILING_CHILD, json.dumps([1])]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) for _ in range(cores)]
    at_once = max(json.loads(p.communicate()[0])["wall_s"] for p in procs)
    return one_after_other / at_once


def child(code: str, *args: object) -> dict:
    out = subprocess.run([sys.executable, "-c", code, json.dumps(args)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout)


def sweep(base: dict, axes: dict, workers: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        return child(SWEEP_CHILD, base, axes, os.path.join(tmp, "bench.sqlite"), workers)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="interleaved measurements per figure (median)")
    parser.add_argument(
        "--sizes", default=",".join(TESTBED_AXES["bytes_per_rank"]), help="bytes per rank of the 12 testbed runs"
    )
    args = parser.parse_args()
    sizes = args.sizes.split(",")
    if len(sizes) != 3:
        raise SystemExit("--sizes: give 3 sizes (3 sizes x 2 algorithms x 2 seeds = 12 runs)")
    testbed_axes = {**TESTBED_AXES, "bytes_per_rank": sizes}
    from mcsim.native import library

    library.ensure_built()
    cores = os.cpu_count() or 1

    overhead, run_mean, pool, loop, ceilings = [], [], [], [], []
    for _ in range(args.repeat):
        ceilings.append(ceiling(cores))
        small = sweep(SMALL, SMALL_AXES, 1)
        overhead.append((small["wall_s"] - small["runs_s"]) / small["runs"])
        run_mean.append(small["runs_s"] / small["runs"])
        pool.append(sweep(TESTBED, testbed_axes, cores)["wall_s"])
        loop.append(child(LOOP_CHILD, TESTBED, testbed_axes)["wall_s"])

    med = statistics.median
    print(f"sweep benchmark: medians of {args.repeat} interleaved measurements, {cores} cores")
    print(
        f"per-run overhead     {med(overhead):.3f} s per run (12 runs of fat-tree-k4 4 KiB on 1 worker; "
        f"the runs themselves {med(run_mean):.3f} s each); target <= 0.300 s"
    )
    speedup = med(loop) / med(pool)
    print(
        f"testbed-188, 12 runs of {args.sizes}: one process {med(loop):.1f} s, local pool of {cores} workers "
        f"{med(pool):.1f} s: speed-up {speedup:.2f}x; target >= 1.8x on 2 cores"
    )
    print(
        f"ceiling              {med(ceilings):.2f}x ({cores} identical runs in {cores} processes at once against one "
        f"after the other, measured now); the pool's speed-up is {speedup / med(ceilings):.2f} of it"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
