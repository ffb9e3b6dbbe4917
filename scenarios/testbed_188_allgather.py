# SPDX-License-Identifier: GPL-2.0-only
"""Question: on the paper's 188-node FDR testbed, how do ring and multicast Allgather compare?

Runs the ring Allgather (pipelined RC RDMA WRITEs) and the multicast Allgather (the SC'24 protocol:
K=2 roots, UD multicast chunks, bitmap, repair by RDMA READ) on testbed-188 at 56 Gbit/s over the
sizes the paper's OSU runs swept (4 KiB to 8 MiB per rank, x4 steps by default), and prints time,
nccl-tests bus bandwidth, the receive bound N(P-1)/BW, and the bytes each rank injects (N for
multicast, N(P-1) for the ring). The testbed's wiring is an assumption (see topologies/).

Run: mcsim run scenarios/testbed_188_allgather.py [--sizes 4KiB,64KiB,1MiB] [--ranks 188]
"""

import argparse
import sys

from mcsim.result import incomplete_lines
from mcsim.scenario import Scenario
from mcsim.units import format_size, parse_size

DEFAULT_SIZES = "4KiB,16KiB,64KiB,256KiB,1MiB,4MiB,8MiB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help=f"bytes per rank (default {DEFAULT_SIZES})")
    parser.add_argument("--ranks", type=int, default=None, help="ranks (default: all 188)")
    parser.add_argument("--rate", default="56Gbps", help="link rate (default 56Gbps: FDR)")
    args = parser.parse_args()
    sizes = [parse_size(s, what="--sizes") for s in args.sizes.split(",") if s]

    print(f"Allgather on testbed-188 ({args.rate}, {args.ranks or 188} ranks): ring vs multicast (K=2)")
    print(
        f"{'size':>7} {'ring_us':>10} {'mcast_us':>10} {'bound_us':>10} {'ring_busbw_GBps':>16} "
        f"{'mcast_busbw_GBps':>17} {'ring_inj_MiB':>13} {'mcast_inj_MiB':>14} {'speedup':>8}"
    )
    incomplete = 0
    for size_b in sizes:
        runs = {
            algo: Scenario(
                topology="testbed-188", rate=args.rate, algorithm=algo, bytes_per_rank=str(size_b), ranks=args.ranks
            ).run()
            for algo in ("ring", "mcast")
        }
        ring, mcast = runs["ring"], runs["mcast"]
        if lines := incomplete_lines(f"{format_size(size_b):>7}", runs):
            incomplete += len(lines)
            print("\n".join(lines), flush=True)
            continue
        print(
            f"{format_size(size_b):>7} {ring.time_ps / 1e6:>10.1f} {mcast.time_ps / 1e6:>10.1f} "
            f"{ring.receive_bound_ps / 1e6:>10.1f} {ring.busbw_Bps / 1e9:>16.3f} {mcast.busbw_Bps / 1e9:>17.3f} "
            f"{ring.injected_b.mean() / 2**20:>13.2f} {mcast.injected_b.mean() / 2**20:>14.3f} "
            f"{ring.time_ps / mcast.time_ps:>8.2f}",
            flush=True,
        )
    print("every rank received every byte" if not incomplete else f"{incomplete} run(s) left a rank incomplete")
    return 1 if incomplete else 0


if __name__ == "__main__":
    sys.exit(main())
