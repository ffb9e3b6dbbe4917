# SPDX-License-Identifier: GPL-2.0-only
"""Question: on the paper's 188-node FDR testbed, how do ring and multicast Allgather compare?

Runs the ring Allgather (pipelined RC RDMA WRITEs) and the multicast Allgather (the SC'24 protocol:
K=2 roots, UD multicast chunks, bitmap, repair by RDMA READ) on testbed-188 at 56 Gbit/s over the
sizes the paper's OSU runs swept (by default 4 KiB to 1 MiB per rank in x4 steps, the answer in well under a
minute on two cores; --full adds the 4 and 8 MiB rows, about 8 minutes, most of it theirs), and prints time,
nccl-tests bus bandwidth, the receive bound N(P-1)/BW, and the bytes each rank injects (N for
multicast, N(P-1) for the ring). The testbed's wiring is an assumption (mcsim/topologies/).

The runs are a sweep: they run in parallel (one worker process per core), each is stored in
--store as it finishes, and running the script again reuses every stored run (a run killed half-way
resumes with what was finished). It ends with the `mcsim compare` rows of the published claims that
its runs check, each with its verdict (ring-bound and traffic-2x need the 1 MiB runs of all 188
ranks at 56 Gbit/s).

Run: mcsim run scenarios/testbed_188_allgather.py [--full | --sizes 4KiB,64KiB,1MiB] [--ranks 188] [--store F]
"""

import sys

from mcsim.reference.compare import claims_of, evaluate, exit_status, table_text
from mcsim.sweep import SweepSpec, has_time, run_sweep, why_no_time
from mcsim.units import format_size, parse_size
from mcsim.util.options import Parser
from mcsim.util.output import Column, Table

# the default rows end at 1 MiB, the size the published claims need (ring-bound, traffic-2x): a newcomer's
# `make run` shows its answer in well under a minute on two cores (22 s measured, the machine loaded); --full adds
# the paper's 4 and 8 MiB rows, which take most of the ~8 minutes the whole range does (runs grow with the bytes)
DEFAULT_SIZES = "4KiB,16KiB,64KiB,256KiB,1MiB"
FULL_SIZES = f"{DEFAULT_SIZES},4MiB,8MiB"
ALGORITHMS = ("ring", "mcast")
TABLE = Table(
    [
        Column("size", width=7),
        Column("ring_us", ".1f", 10),
        Column("mcast_us", ".1f", 10),
        Column("bound_us", ".1f", 10),
        Column("ring_busbw_GBps", ".3f", 16),
        Column("mcast_busbw_GBps", ".3f", 17),
        Column("ring_inj_MiB", ".2f", 13),
        Column("mcast_inj_MiB", ".3f", 14),
        Column("speedup", ".2f", 8),
    ]
)


def main() -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=None, help=f"bytes per rank (default {DEFAULT_SIZES})")
    parser.add_argument("--full", action="store_true", help=f"the paper's whole range, {FULL_SIZES} (~8 min)")
    parser.add_argument("--ranks", type=int, default=None, help="ranks (default: all 188)")
    parser.add_argument("--rate", default="56Gbps", help="link rate (default 56Gbps: FDR)")
    parser.add_argument("--store", default="testbed-188-allgather.sqlite", help="the sweep's result store")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: one per core)")
    args = parser.parse_args()
    if args.full and args.sizes is not None:
        parser.error("--full is the sizes " + FULL_SIZES + "; give --full or --sizes, not both")
    text = FULL_SIZES if args.full else DEFAULT_SIZES if args.sizes is None else args.sizes
    sizes = [format_size(parse_size(s, what="--sizes")) for s in text.split(",") if s]

    spec = SweepSpec(
        name="testbed-188-allgather",
        base={"topology": "testbed-188", "rate": args.rate, "ranks": args.ranks},
        axes={"bytes_per_rank": sizes, "algorithm": list(ALGORITHMS)},
    )
    report = run_sweep(spec, args.store, workers=args.workers)
    runs = {(r["bytes_per_rank"], r["algorithm"]): r for r in report.rows()}

    print(f"Allgather on testbed-188 ({args.rate}, {args.ranks or 188} ranks): ring vs multicast (K=2)")
    print(TABLE.header())
    for size in sizes:
        ring, mcast = (runs[size, algo] for algo in ALGORITHMS)
        unfinished = [
            f"{algo} {why_no_time(r)}" for algo, r in zip(ALGORITHMS, (ring, mcast), strict=True) if not has_time(r)
        ]
        if unfinished:
            print(TABLE.note(size, "; ".join(unfinished)), flush=True)
            continue
        print(
            TABLE.row(
                {
                    "size": size,
                    "ring_us": ring["time_ps"] / 1e6,
                    "mcast_us": mcast["time_ps"] / 1e6,
                    "bound_us": ring["receive_bound_ps"] / 1e6,
                    "ring_busbw_GBps": ring["busbw_Bps"] / 1e9,
                    "mcast_busbw_GBps": mcast["busbw_Bps"] / 1e9,
                    "ring_inj_MiB": ring["injected_b"] / ring["ranks"] / 2**20,
                    "mcast_inj_MiB": mcast["injected_b"] / mcast["ranks"] / 2**20,
                    "speedup": ring["time_ps"] / mcast["time_ps"],
                }
            )
        )
    print(report.line())
    ok = report.all_ok and all(has_time(r) for r in runs.values())

    # the published claims that these runs check (mcsim compare on them: nothing runs again)
    claims = claims_of(report.keys)
    if claims and ok:
        print(f"\nThe published claims these runs check (mcsim compare --only {','.join(c.id for c in claims)}):")
        compared = evaluate(claims, store=args.store, workers=args.workers)
        print(table_text(compared), end="")
        ok = exit_status(compared) == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
