# SPDX-License-Identifier: GPL-2.0-only
"""What looking inside a run costs: one multicast Allgather (fat-tree-k4, 16 ranks, 4 MiB per rank, 2 roots)
run plain, with its protocol events recorded (Scenario.run(events=True)) and with a packet trace of two
hosts (Scenario.run(pcap=...)): CPU seconds inside Simulator::Run() and packet-hops per CPU second, each
over the plain run's (a trace off is a branch on an empty trace source per packet; on, a record written per
frame of the traced hosts). Medians of --repeat interleaved fresh processes. It never asserts.

Run: python benchmarks/packet_trace.py [--repeat 5]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = """
import json, sys
from mcsim.config.rdma import PcapConfig
from mcsim.native import run_control, runtime
from mcsim.runs.scenario import Scenario
runtime.load()
sc = Scenario(topology="fat-tree-k4", collective="allgather", algorithm="mcast", bytes_per_rank="4MiB", roots=2)
kind = sys.argv[1]
if kind == "plain":
    r = sc.run()
elif kind == "events":
    r = sc.run(events=True)
else:
    r = sc.run(pcap=PcapConfig(folder=sys.argv[2], hosts=(0, 1)))
last = run_control.last_run()
frames = sum(f[1] for f in r.pcap_files or ())
print(json.dumps({"hops": r.fabric.link_traversals(), "run_s": last.cpu_s, "frames": frames}))
"""
KINDS = ("plain", "events", "pcap")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="interleaved fresh processes per figure (default 5)")
    args = parser.parse_args()
    from mcsim.native import library

    library.ensure_built()
    env = os.environ | {"OPENBLAS_NUM_THREADS": "1"}
    samples: dict[str, list[dict]] = {k: [] for k in KINDS}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.repeat):
            for k in KINDS:
                argv = [sys.executable, "-c", CHILD, k, folder]
                out = subprocess.run(argv, capture_output=True, text=True, check=True, env=env)
                samples[k].append(json.loads(out.stdout))
    print(f"medians of {args.repeat} interleaved runs; run_s: CPU seconds in Simulator::Run()")
    print(f"{'run':<7} {'hops':>9} {'frames':>7} {'run_s':>7} {'Mhops/s':>8} {'x plain':>8}")
    plain = None
    for k in KINDS:
        run_s = statistics.median(s["run_s"] for s in samples[k])
        hops = samples[k][0]["hops"]
        rate = hops / run_s
        plain = plain or rate
        print(f"{k:<7} {hops:>9} {samples[k][0]['frames']:>7} {run_s:>7.3f} {rate / 1e6:>8.2f} {rate / plain:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
