# SPDX-License-Identifier: GPL-2.0-only
"""Question: when another job's traffic crosses the same switches, how much does it slow an FSDP job,
and do placement and the multicast Allgather remove that bubble?

Two jobs of 8 ranks each on a 2:1 oversubscribed leaf-spine fabric (4 leaves of 4 hosts, 2 spines, every
link at --rate): the job under study, an FSDP iteration (mcsim.workloads.training.fsdp_job), and a
neighbour, either FSDP with ring Allgathers and Reduce-Scatters or background traffic offering half of each
link (training.background_job, for as many rounds as the study's layers x 4): Alltoalls of --bytes-per-layer
/ 8 per peer, or random permutations (every rank to one other) of 7 times that, the same bytes per round.
Placement: contiguous (each job on two leaves of its own: no link shared) or interleaved (each job on every
leaf: their rings and trees share the uplinks). For each placement and Allgather of the job under study
(ring, or multicast with its receive on the DPA: then every host's completions, the neighbour's too, are the
DPA's), it prints the job's iteration alone and beside the neighbour, the bubble the neighbour adds
(iteration beside it less alone) and the neighbour's iteration.

Run: mcsim run scenarios/interjob.py [--rate 100Gbps] [--layers 4] [--bytes-per-layer 4MiB]
     [--forward 100us] [--backward 200us]
"""

import itertools
import sys

from mcsim import topology
from mcsim.runs.jobs import DPA_RECEIVE, run_jobs
from mcsim.runs.scenario import Scenario
from mcsim.units import parse_rate, parse_size, parse_time
from mcsim.util.options import Parser
from mcsim.util.output import Column, Table
from mcsim.workloads.training import background_job, fsdp_job
from mcsim.workloads.workload_file import place

TABLE = Table(
    [
        Column("placement", width=12, left=True),
        Column("neighbour", width=12, left=True),
        Column("AG", width=6, left=True),
        Column("alone_us", ".1f", 10),
        Column("beside_us", ".1f", 10),
        Column("bubble_us", ".1f", 10),
        Column("neighbour_us", ".1f", 13),
    ]
)


def main() -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", default="100Gbps", help="every link's rate")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--bytes-per-layer", default="4MiB")
    parser.add_argument("--forward", default="100us")
    parser.add_argument("--backward", default="200us")
    args = parser.parse_args()
    if args.layers < 1:
        parser.error(f"--layers={args.layers} must be >= 1")
    g = topology.leaf_spine(4, 2, 4, rate_bps=parse_rate(args.rate, what="--rate"), delay_ps=100_000)
    g.graph.update(name="leaf-spine 4x4, 2 spines (2:1)")
    kw = {
        "layers": args.layers,
        "bytes_per_layer": parse_size(args.bytes_per_layer, what="--bytes-per-layer"),
        "forward_ps": parse_time(args.forward, what="--forward"),
        "backward_ps": parse_time(args.backward, what="--backward"),
    }
    print(TABLE.header())
    for placement in ("contiguous", "interleaved"):
        study = place(g, 8, placement, list(range(16)), 1, "study")
        neighbour = place(g, 8, placement, [h for h in range(16) if h not in study], 1, "neighbour")
        rate_bps = Scenario(topology=g, ranks=2, algorithm="ring", bytes_per_rank=4).data_rate_bps
        neighbours = {
            "fsdp": fsdp_job("neighbour", neighbour, allgather="ring", **kw),
            "alltoall": background_job(
                "neighbour",
                neighbour,
                bytes_per_peer=kw["bytes_per_layer"] // 8,
                load=0.5,
                rounds=4 * args.layers,
                data_rate_bps=rate_bps,
            ),
            "permutation": background_job(  # as many bytes per round as a rank's Alltoall sends
                "neighbour",
                neighbour,
                bytes_per_peer=7 * (kw["bytes_per_layer"] // 8),
                load=0.5,
                rounds=4 * args.layers,
                data_rate_bps=rate_bps,
                pattern="permutation",
            ),
        }
        for (kind, b), ag in itertools.product(neighbours.items(), ("ring", "mcast")):
            print(f"mcsim: {placement} {kind} AG {ag} ...", file=sys.stderr, flush=True)
            options = DPA_RECEIVE if ag == "mcast" else {}
            a = fsdp_job("study", study, allgather=ag, **kw)
            alone = run_jobs([a], topology=g, **options).jobs[0]
            both = run_jobs([a, b], topology=g, **options)
            beside = both.job("study")
            row = {
                "placement": placement,
                "neighbour": kind,
                "AG": ag,
                "alone_us": alone.iteration_ps / 1e6,
                "beside_us": beside.iteration_ps / 1e6,
                "bubble_us": (beside.iteration_ps - alone.iteration_ps) / 1e6,
                "neighbour_us": both.job("neighbour").iteration_ps / 1e6,
            }
            print(TABLE.row(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
