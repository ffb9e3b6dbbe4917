# SPDX-License-Identifier: GPL-2.0-only
"""Question: in one FSDP training iteration, how much of the communication does each choice of
Allgather and Reduce-Scatter leave exposed (the pipeline bubble the compute waits for)?

One FSDP iteration (mcsim.workloads.training.fsdp_job: per layer an Allgather of its parameters before
its forward and again before its backward, a Reduce-Scatter of its gradients after its backward, the
Allgathers prefetched one ahead) on every host of each fabric: testbed-188 at 56 Gbit/s and a fat tree at
400 Gbit/s (--quick: fat-tree-k4, 16 ranks, at both rates). For each pair (Allgather: ring or multicast;
Reduce-Scatter: ring or in-network) it prints the iteration, the compute on a rank, the exposed
communication (iteration less compute) and the bubble each pair removes against two rings. A pair with
the multicast Allgather runs as the paper's design does, its receive completions on the BlueField-3 DPA
(16 threads, one UD endpoint each, zero copy: mcsim.config.dpa); the others on the host CPU (a host CPU
cannot take multicast datagrams at 400 Gbit/s: its drops are repaired after the data timeout). The layer
sizes and compute times are the script's options; compute is the same for every pair, so the differences
are the network's.

Run: mcsim run scenarios/fsdp_iteration.py [--quick] [--layers 8] [--bytes-per-layer 16MiB]
     [--forward 200us] [--backward 400us] [--prefetch 1]
"""

import sys

from mcsim.runs.jobs import DPA_RECEIVE, run_jobs
from mcsim.units import parse_size, parse_time
from mcsim.util.options import Parser
from mcsim.util.output import Column, Table
from mcsim.workloads.training import fsdp_job

PAIRS = (("ring", "ring"), ("mcast", "ring"), ("ring", "innet"), ("mcast", "innet"))  # (Allgather, Reduce-Scatter)
FABRICS = (("testbed-188", "56Gbps"), ("fat-tree-k8", "400Gbps"))
QUICK_FABRICS = (("fat-tree-k4", "56Gbps"), ("fat-tree-k4", "400Gbps"))
TABLE = Table(
    [
        Column("fabric", width=24, left=True),
        Column("AG", width=6, left=True),
        Column("RS", width=6, left=True),
        Column("receive", width=8, left=True),
        Column("iteration_us", ".1f", 13),
        Column("compute_us", ".1f", 11),
        Column("exposed_us", ".1f", 11),
        Column("bubble_removed_us", ".1f", 18),
    ]
)


def main() -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fat-tree-k4 (16 ranks) at 56 and 400 Gbit/s")
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--bytes-per-layer", default="16MiB", help="parameters per layer, all ranks together")
    parser.add_argument("--forward", default="200us", help="forward compute per layer")
    parser.add_argument("--backward", default="400us", help="backward compute per layer")
    parser.add_argument("--prefetch", type=int, default=1, help="Allgathers that may run ahead")
    args = parser.parse_args()
    for option, value, least in (("--layers", args.layers, 1), ("--prefetch", args.prefetch, 0)):
        if value < least:
            parser.error(f"{option}={value} must be >= {least}")
    kw = {
        "layers": args.layers,
        "bytes_per_layer": parse_size(args.bytes_per_layer, what="--bytes-per-layer"),
        "forward_ps": parse_time(args.forward, what="--forward"),
        "backward_ps": parse_time(args.backward, what="--backward"),
        "prefetch": args.prefetch,
    }
    print(TABLE.header())
    for topology, rate in QUICK_FABRICS if args.quick else FABRICS:
        from mcsim import topology as topologies

        hosts = tuple(range(topologies.host_count(topologies.resolve(topology))))
        baseline = None
        for ag, rs in PAIRS:
            print(f"mcsim: {topology} {rate} AG {ag} RS {rs} ...", file=sys.stderr, flush=True)
            job = fsdp_job("fsdp", hosts, allgather=ag, reduce_scatter=rs, **kw)
            options = DPA_RECEIVE if ag == "mcast" else {}
            r = run_jobs([job], topology=topology, rate=rate, **options).jobs[0]
            if not r.complete:
                print(TABLE.note(f"{topology} {rate}", f"AG {ag} RS {rs}: INCOMPLETE (a step never ended)"))
                continue
            baseline = r.exposed_comm_ps if baseline is None else baseline
            row = {
                "fabric": f"{topology} {rate}",
                "AG": ag,
                "RS": rs,
                "receive": "dpa" if options else "host",
                "iteration_us": r.iteration_ps / 1e6,
                "compute_us": r.compute_ps / 1e6,
                "exposed_us": r.exposed_comm_ps / 1e6,
                "bubble_removed_us": (baseline - r.exposed_comm_ps) / 1e6,
            }
            print(TABLE.row(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
