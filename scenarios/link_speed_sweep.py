# SPDX-License-Identifier: GPL-2.0-only
"""Question: how do ring and multicast Allgather scale from 56 Gbit/s to 1.6 Tbit/s?

Runs both on testbed-188's wiring with every link at 56, 100, 200, 400, 800 and 1600 Gbit/s and
prints time against the receive bound N(P-1)/BW, bus bandwidth, and what the multicast receivers
lost and repaired. The receive completions run on one host CPU thread (100 ns per completion plus
the copy out of the staging buffer at 100 Gbit/s): past about 80 Gbit/s of 4 KiB chunks it cannot
keep up, which is what the paper's DPA offload answers (scenarios/dpa_scaling.py).

Run: mcsim run scenarios/link_speed_sweep.py [--size 256KiB] [--ranks 188]
"""

import argparse
import sys

from mcsim.output import Column, Table
from mcsim.result import incomplete_lines
from mcsim.scenario import Scenario

TABLE = Table(
    [
        Column("rate", width=8),
        Column("bound_us", ".1f", 10),
        Column("ring_us", ".1f", 10),
        Column("mcast_us", ".1f", 10),
        Column("ring_of_bound", ".3f", 14),
        Column("mcast_of_bound", ".3f", 15),
        Column("mcast_repaired", width=15),
        Column("repair_reads", width=13),
    ]
)
RATES = ("56Gbps", "100Gbps", "200Gbps", "400Gbps", "800Gbps", "1.6Tbps")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="256KiB", help="bytes per rank (default 256KiB)")
    parser.add_argument("--ranks", type=int, default=None, help="ranks (default: all 188)")
    parser.add_argument("--rates", default=",".join(RATES), help="link rates (default: 56Gbps..1.6Tbps)")
    args = parser.parse_args()

    print(f"Allgather of {args.size} per rank on testbed-188 wiring, {args.ranks or 188} ranks, host-CPU receive")
    print(TABLE.header())
    incomplete = 0
    for rate in args.rates.split(","):
        ring = Scenario(rate=rate, algorithm="ring", bytes_per_rank=args.size, ranks=args.ranks).run()
        mcast = Scenario(rate=rate, algorithm="mcast", bytes_per_rank=args.size, ranks=args.ranks).run()
        if lines := incomplete_lines(f"{rate:>8}", {"ring": ring, "mcast": mcast}):
            incomplete += len(lines)
            print("\n".join(lines), flush=True)
            continue
        bound = ring.receive_bound_ps
        row = {
            "rate": rate,
            "bound_us": bound / 1e6,
            "ring_us": ring.time_ps / 1e6,
            "mcast_us": mcast.time_ps / 1e6,
            "ring_of_bound": ring.time_ps / bound,
            "mcast_of_bound": mcast.time_ps / bound,
            "mcast_repaired": int(mcast.rank["repaired_chunks"].sum()),
            "repair_reads": int(mcast.rank["repair_reads"].sum()),
        }
        print(TABLE.row(row), flush=True)
    print("every rank received every byte" if not incomplete else f"{incomplete} run(s) left a rank incomplete")
    return 1 if incomplete else 0


if __name__ == "__main__":
    sys.exit(main())
