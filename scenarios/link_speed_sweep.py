# SPDX-License-Identifier: GPL-2.0-only
"""Question: how do ring and multicast Allgather scale from 56 Gbit/s to 1.6 Tbit/s?

Runs both on testbed-188's wiring with every link at 56, 100, 200, 400, 800 and 1600 Gbit/s and
prints time against the receive bound N(P-1)/BW, bus bandwidth, and what the multicast receivers
lost and repaired. The receive completions run on one host CPU thread (100 ns per completion plus
the copy out of the staging buffer at 100 Gbit/s): past about 80 Gbit/s of 4 KiB chunks it cannot
keep up, which is what the paper's DPA offload answers (scenarios/dpa_scaling.py).

The 12 runs are a sweep (the same as `mcsim sweep` of a spec with a rate axis and an algorithm
axis): one worker process per core, each run stored in --store as it finishes, and a second call
reuses what is stored.

Run: mcsim run scenarios/link_speed_sweep.py [--size 256KiB] [--ranks 188] [--store F]
"""

import sys

from mcsim.sweep import SweepSpec, has_time, run_sweep, why_no_time
from mcsim.util.options import Parser
from mcsim.util.output import Column, Table

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
ALGORITHMS = ("ring", "mcast")


def main() -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="256KiB", help="bytes per rank (default 256KiB)")
    parser.add_argument("--ranks", type=int, default=None, help="ranks (default: all 188)")
    parser.add_argument("--rates", default=",".join(RATES), help="link rates (default: 56Gbps..1.6Tbps)")
    parser.add_argument("--store", default="link-speed.sqlite", help="the sweep's result store")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: one per core)")
    args = parser.parse_args()
    rates = [r for r in args.rates.split(",") if r]

    spec = SweepSpec(
        name="link-speed",
        base={"topology": "testbed-188", "bytes_per_rank": args.size, "ranks": args.ranks},
        axes={"rate": rates, "algorithm": list(ALGORITHMS)},
    )
    report = run_sweep(spec, args.store, workers=args.workers)
    runs = {(r["rate"], r["algorithm"]): r for r in report.rows()}

    print(f"Allgather of {args.size} per rank on testbed-188 wiring, {args.ranks or 188} ranks, host-CPU receive")
    print(TABLE.header())
    incomplete = 0
    for rate in rates:
        ring, mcast = (runs[rate, algo] for algo in ALGORITHMS)
        bad = [f"{algo} {why_no_time(r)}" for algo, r in zip(ALGORITHMS, (ring, mcast), strict=True) if not has_time(r)]
        if bad:
            incomplete += len(bad)
            print(TABLE.note(rate, "; ".join(bad)), flush=True)
            continue
        bound = ring["receive_bound_ps"]
        row = {
            "rate": rate,
            "bound_us": bound / 1e6,
            "ring_us": ring["time_ps"] / 1e6,
            "mcast_us": mcast["time_ps"] / 1e6,
            "ring_of_bound": ring["time_ps"] / bound,
            "mcast_of_bound": mcast["time_ps"] / bound,
            "mcast_repaired": mcast["repaired_chunks"],
            "repair_reads": mcast["repair_reads"],
        }
        print(TABLE.row(row), flush=True)
    if incomplete:
        print(f"{incomplete} run(s) left a rank incomplete")
    else:  # what was checked: completion, counted (verify mode, which checks bytes, is off)
        print("every run complete: every rank had its whole output (completions counted; bytes not verified)")
    print(report.line())
    return 1 if incomplete else 0


if __name__ == "__main__":
    sys.exit(main())
