# SPDX-License-Identifier: GPL-2.0-only
"""What a RoCE fabric's flow control costs the simulator: a ring and a multicast Allgather (fat-tree-k4, 16 ranks,
4 MiB per rank, RoCEv2 framing) on the credit fabric (flow_control="lossless", the reference), with Priority
Flow Control (flow_control="pfc"), with PFC and ECN marking (pfc+ecn), and with PFC and the NICs' congestion
control, DCQCN (pfc+dcqcn: it marks ECN too) or HPCC (pfc+hpcc: INT records, an ACK per packet); and a 15:1
incast of 1 MiB each on one switch (raw flows: no NIC, no congestion control), where PFC pauses. CPU seconds
inside Simulator::Run(), packet-hops per CPU second, events per hop, and the rate over the credit fabric's in
the same run. Medians of --repeat interleaved fresh processes. It never asserts.

Run: python benchmarks/flow_control.py [--repeat 5]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = """
import json, sys
from mcsim import topology
from mcsim.config.fabric import FabricConfig, Flow
from mcsim.native import run_control, runtime
from mcsim.runs.flows import simulate
from mcsim.runs.scenario import scenario_of
runtime.load()
work, control = sys.argv[1], sys.argv[2]
fc, ecn = control.split("+")[0], control.endswith("+ecn")
cc = control.split("+")[1] if control.count("+") and not ecn else "none"
if work == "incast":
    g = topology.leaf_spine(1, 0, 16, rate_bps=100 * 10**9, delay_ps=100_000)
    flows = [Flow(src=s, dst=0, size_b=1 << 20, flow_id=s) for s in range(1, 16)]
    fab = simulate(g, flows, fabric=FabricConfig(flow_control=fc, header_b=20, ecn=ecn))
else:
    sc = scenario_of(topology="fat-tree-k4", collective="allgather", algorithm=work, bytes_per_rank="4MiB",
                     wire_format="rocev2", fabric=FabricConfig(flow_control=fc, ecn=ecn), congestion_control=cc)
    fab = sc.run().fabric
last = run_control.last_run()
pauses = int(fab.pfc["pause_tx"].sum()) if fab.pfc is not None else 0
marks = int(fab.ecn["ce_marked"].sum()) if fab.ecn is not None else 0
print(json.dumps({"hops": fab.link_traversals(), "run_s": last.cpu_s, "events": last.events, "pauses": pauses,
                  "marks": marks}))
"""
WORKS = ("ring", "mcast", "incast")
CONTROLS = ("lossless", "pfc", "pfc+ecn", "pfc+dcqcn", "pfc+hpcc")
NIC_CONTROLS = ("pfc+dcqcn", "pfc+hpcc")  # not for raw flows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="interleaved fresh processes per figure (default 5)")
    args = parser.parse_args()
    from mcsim.native import library

    library.ensure_built()
    env = os.environ | {"OPENBLAS_NUM_THREADS": "1"}
    pairs = [(w, c) for w in WORKS for c in CONTROLS if not (w == "incast" and c in NIC_CONTROLS)]
    samples: dict[tuple[str, str], list[dict]] = {pair: [] for pair in pairs}
    for _ in range(args.repeat):
        for w, c in pairs:
            argv = [sys.executable, "-c", CHILD, w, c]
            out = subprocess.run(argv, capture_output=True, text=True, check=True, env=env)
            samples[(w, c)].append(json.loads(out.stdout))
    print(f"medians of {args.repeat} interleaved runs; run_s: CPU seconds in Simulator::Run(); hops: link traversals")
    head = ("work", "flow ctl", "hops", "pauses", "marks", "run_s", "Mhops/s", "ev/hop", "x credits")
    print("{:<7} {:<9} {:>9} {:>7} {:>7} {:>7} {:>8} {:>7} {:>10}".format(*head))
    for w in WORKS:
        ref = None
        for c in (c for c in CONTROLS if (w, c) in samples):
            s = samples[(w, c)]
            run_s = statistics.median(x["run_s"] for x in s)
            hops, events = s[0]["hops"], statistics.median(x["events"] for x in s)
            rate = hops / run_s / 1e6
            ref = ref or rate
            print(
                f"{w:<7} {c:<9} {hops:>9} {s[0]['pauses']:>7} {s[0]['marks']:>7} {run_s:>7.3f} {rate:>8.2f} "
                f"{events / hops:>7.2f} "
                f"{rate / ref:>10.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
