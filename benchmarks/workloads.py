# SPDX-License-Identifier: GPL-2.0-only
"""Workload speed: a workload runs its collectives no slower per packet-hop than the same collectives
run alone (issue 34's target: within +-10 %).

Two workloads, as the scenario scripts run them: "fsdp" (one FSDP iteration, 16 ranks on fat-tree-k4 at
56 Gbit/s, 4 layers of 16 MiB, multicast Allgather, ring Reduce-Scatter) and "interjob" (two FSDP jobs of
8 ranks interleaved on a 2:1 leaf-spine at 100 Gbit/s, ring collectives). For each, three kinds of run:
"workload" (the workload itself), "alone" (every collective step run alone, a job of that one step on its
job's hosts, the fabric idle, summed) and "serial" (each job's collectives one after the other in one run:
every team set up at once, as in the workload, but no two running together: what the workload's extra
state costs, apart from its overlap). Per kind: packet-hops (link traversals), the time of Simulator::Run()
(the process's CPU seconds: steadier than the wall clock on a shared machine), packet-hops
per CPU second inside Run() and that rate over alone's ("x alone"); and, to tell
the simulator's speed from the work a run asks of it, events per hop, events per second inside Run() and
credit stalls per thousand hops (a packet that waited at a port for its next hop's buffer: contention,
which the collectives alone do not have). Then the engine's own cost of concurrency: k independent copies of
one collective in one run, sharing nothing, per hop against one. Medians of --repeat interleaved fresh
processes (numpy's BLAS on one thread, so that its idle threads take no core). It never asserts.

Run: python benchmarks/workloads.py [--repeat 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = """
import dataclasses, json, sys, time
from mcsim import topology
from mcsim.native import run_control, runtime
from mcsim.runs.jobs import run_jobs
from mcsim.workloads import Collective, Job
from mcsim.workloads.training import fsdp_job
from mcsim.workloads.workload_file import place
runtime.load()
kw = {"layers": 4, "bytes_per_layer": 16 << 20, "forward_ps": 100_000_000, "backward_ps": 200_000_000}
if sys.argv[1] == "fsdp":
    topo, rate = "fat-tree-k4", "56Gbps"
    jobs = [fsdp_job("fsdp", tuple(range(16)), allgather="mcast", **kw)]
else:
    topo = topology.leaf_spine(4, 2, 4, rate_bps=100 * 10**9, delay_ps=100_000)
    topo.graph.update(name="leaf-spine 4x4, 2 spines")
    rate = None
    a = place(topo, 8, "interleaved", list(range(16)), 1, "a")
    b = place(topo, 8, "interleaved", [h for h in range(16) if h not in a], 1, "b")
    jobs = [fsdp_job("a", a, allgather="ring", **kw), fsdp_job("b", b, allgather="ring", **kw)]
if sys.argv[2] == "workload":
    t0 = time.perf_counter()
    r = run_jobs(jobs, topology=topo, rate=rate)
    wall = time.perf_counter() - t0
    last = run_control.last_run()
    stalls = int(r.fabric.ports["credit_stalls"].sum())
    out = {"hops": r.fabric.link_traversals(), "run_s": last.cpu_s, "wall_s": wall, "stalls": stalls,
           "events": last.events}
elif sys.argv[2] == "serial":
    hops = run_s = wall = stalls = events = 0.0
    for job in jobs:  # every collective of the job, one after the other, all teams set up in one run
        colls = [s for s in job.steps if isinstance(s, Collective)]
        chain = tuple(dataclasses.replace(s, after=(i - 1,) if i else ()) for i, s in enumerate(colls))
        t0 = time.perf_counter()
        res = run_jobs([Job(name="serial", hosts=job.hosts, steps=chain)], topology=topo, rate=rate)
        wall += time.perf_counter() - t0
        hops += res.fabric.link_traversals()
        stalls += int(res.fabric.ports["credit_stalls"].sum())
        run_s += run_control.last_run().cpu_s
        events += run_control.last_run().events
    out = {"hops": hops, "run_s": run_s, "wall_s": wall, "stalls": stalls, "events": events}
else:
    hops = run_s = wall = stalls = events = 0.0
    steps = [(s, job.hosts) for job in jobs for s in job.steps if isinstance(s, Collective)]
    for s, hosts in steps:  # the step alone on its job's hosts
        t0 = time.perf_counter()
        res = run_jobs([Job(name="alone", hosts=hosts, steps=(dataclasses.replace(s, after=()),))], topology=topo,
                       rate=rate)
        wall += time.perf_counter() - t0
        hops += res.fabric.link_traversals()
        stalls += int(res.fabric.ports["credit_stalls"].sum())
        run_s += run_control.last_run().cpu_s
        events += run_control.last_run().events
    out = {"hops": hops, "run_s": run_s, "wall_s": wall, "stalls": stalls, "events": events,
           "collectives": len(steps)}
print(json.dumps(out))
"""
WORKLOADS = ("fsdp", "interjob")
# the engine's own cost of concurrency: k copies of one ring Allgather (4 ranks, 64 MiB each), each on a leaf of
# its own of the interjob fabric, in one run: no link, host or queue shared, the same events per hop
CONCURRENT = """
import json, sys
from mcsim import topology
from mcsim.native import run_control, runtime
from mcsim import Collective, Job, run_jobs
runtime.load()
g = topology.leaf_spine(4, 2, 4, rate_bps=100 * 10**9, delay_ps=100_000)
g.graph.update(name="leaf-spine 4x4, 2 spines")
step = Collective(label="ag", collective="allgather", algorithm="ring", bytes_per_rank="64MiB")
k = int(sys.argv[1])
r = run_jobs([Job(name=f"j{i}", hosts=tuple(range(4 * i, 4 * i + 4)), steps=(step,)) for i in range(k)], topology=g)
last = run_control.last_run()
print(json.dumps({"hops": r.fabric.link_traversals(), "run_s": last.cpu_s, "events": last.events}))
"""
COPIES = (1, 2, 4)
KINDS = ("workload", "alone", "serial")  # the workload; each collective alone; each job's collectives in series


def child(workload: str, what: str, code: str = CHILD) -> dict:
    argv = [sys.executable, "-c", code, workload, what]
    env = os.environ | {"OPENBLAS_NUM_THREADS": "1"}
    return json.loads(subprocess.run(argv, capture_output=True, text=True, check=True, env=env).stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="interleaved fresh processes per figure (default 3)")
    args = parser.parse_args()
    from mcsim.native import library, runtime

    library.ensure_built()
    runtime.load()  # the build is not timed
    samples: dict[tuple[str, str], list[dict]] = {(w, k): [] for w in WORKLOADS for k in KINDS}
    for _ in range(args.repeat):
        for w in WORKLOADS:
            for k in KINDS:
                samples[w, k].append(child(w, k))
    print(f"medians of {args.repeat} interleaved runs; hops = link traversals; run_s: CPU seconds in Simulator::Run()")
    print(f"{'workload':<9} {'run':<8} {'hops':>9} {'run_s':>7} {'Mhops/s':>8} {'ev/hop':>6} {'Mev/s':>6} "
          f"{'stalls/kh':>9} {'x alone':>8}")  # fmt: skip
    for w in WORKLOADS:
        rates = {}
        for k in ("alone", *(k for k in KINDS if k != "alone")):
            runs = samples[w, k]
            run_s = statistics.median(s["run_s"] for s in runs)
            hops, events, stalls = runs[0]["hops"], runs[0]["events"], runs[0]["stalls"]
            rates[k] = hops / run_s
            print(
                f"{w:<9} {k:<8} {hops:>9.0f} {run_s:>7.3f} {rates[k] / 1e6:>8.2f} {events / hops:>6.2f} "
                f"{events / run_s / 1e6:>6.2f} {1000 * stalls / hops:>9.1f} {rates[k] / rates['alone']:>8.2f}"
            )
    print("target (issue 34): ratio >= 0.90 (a workload no slower per packet-hop than its collectives alone)")
    concurrent = {k: [] for k in COPIES}
    for _ in range(args.repeat):
        for k in COPIES:
            concurrent[k].append(child(str(k), "", CONCURRENT))
    print("the engine alone: k independent ring Allgathers (4 ranks, 64 MiB) on leaves of their own, one run")
    one = None
    for k in COPIES:
        run_s = statistics.median(s["run_s"] for s in concurrent[k])
        rate = concurrent[k][0]["hops"] / run_s
        one = one or rate
        hops = concurrent[k][0]["hops"]
        print(f"  k={k}: {hops:>9} hops {run_s:>7.3f} s {rate / 1e6:>6.2f} Mhops/s x k=1 {rate / one:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
