# SPDX-License-Identifier: GPL-2.0-only
"""Question: in FSDP, an Allgather and a Reduce-Scatter run at once; does a multicast AG help?

For each size, runs on the chosen fabric: the ring Allgather alone, the ring Reduce-Scatter alone,
then AG || RS with a ring AG and with the multicast AG (the RS is always a ring). Prints when each
finished against the receive bound N(P-1)/BW. The multicast AG injects each shard once instead of
P-1 times, which frees send bandwidth; every rank still has to receive (P-1)N for each collective,
so where the receive side is the bottleneck the overlap cannot beat 2 N(P-1)/BW.

Run: mcsim run scenarios/fsdp_ag_rs.py [--topology fat-tree-k4] [--sizes 256KiB,1MiB] [--rate 56Gbps]
"""

import argparse
import sys

from mcsim.output import Column, Table
from mcsim.result import incomplete_lines
from mcsim.scenario import Scenario

# the finish times of each run, in the order main() runs them: AG||RS is the Allgather that ran
# together with a Reduce-Scatter, RS||AG that Reduce-Scatter
RUNS = ("AG_ring", "RS_ring", "AG_ring||RS", "RS||AG_ring", "AG_mcast||RS", "RS||AG_mcast")
TABLE = Table([Column("size", width=8), Column("bound", ".1f", 9), *(Column(name, ".1f", 9) for name in RUNS)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topology", default="fat-tree-k4", help="topology (default fat-tree-k4)")
    parser.add_argument("--sizes", default="256KiB,1MiB", help="bytes per rank (default 256KiB,1MiB)")
    parser.add_argument("--rate", default="56Gbps", help="link rate (default 56Gbps: FDR)")
    parser.add_argument("--reduce-ps-per-byte", type=int, default=0, help="reduction cost (default 0 ps/B)")
    args = parser.parse_args()

    print(f"FSDP overlap on {args.topology} at {args.rate}: finish times in us (bound = N(P-1)/BW)")
    print(TABLE.header())
    incomplete = 0
    for size in args.sizes.split(","):
        common = {
            "topology": args.topology,
            "rate": args.rate,
            "bytes_per_rank": size,
            "reduce_ps_per_byte": args.reduce_ps_per_byte,
        }
        ag = Scenario(algorithm="ring", **common).run()
        rs = Scenario(collective="reduce_scatter", algorithm="ring", **common).run()
        ring_both = Scenario(algorithm="ring", overlap="reduce_scatter", **common).run()
        mcast_both = Scenario(algorithm="mcast", overlap="reduce_scatter", **common).run()
        runs = (ag, rs, ring_both, ring_both.concurrent, mcast_both, mcast_both.concurrent)
        if lines := incomplete_lines(f"{size:>8}", dict(zip(RUNS, runs, strict=True))):
            incomplete += len(lines)
            print("\n".join(lines), flush=True)
            continue
        times = {name: r.time_ps / 1e6 for name, r in zip(RUNS, runs, strict=True)}
        print(TABLE.row({"size": size, "bound": ag.receive_bound_ps / 1e6, **times}), flush=True)
    print("every rank received every byte" if not incomplete else f"{incomplete} run(s) left a rank incomplete")
    return 1 if incomplete else 0


if __name__ == "__main__":
    sys.exit(main())
