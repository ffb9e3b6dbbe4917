# SPDX-License-Identifier: GPL-2.0-only
"""Question: in FSDP an Allgather and a Reduce-Scatter run at once; what makes the pair fast?

For each size, runs on the chosen fabric the three pairs AG || RS: two rings; the multicast AG
with a ring RS; the multicast AG with an in-network RS (the switches sum: each rank injects its P
blocks once and receives only its own block's sum). Prints each pair's time (the later of the two
finishes) against the closed forms: two rings must move 2 (P-1) N through every rank's link
(2(P-1)N/BW); with both collectives offloaded to the network a rank receives (P-1) N + N = P N
(PN/BW) and sends N + P N. A multicast AG beside a ring RS still receives 2 (P-1) N, so only the
in-network RS can approach PN/BW: the "up to 2x AG+RS" of the SC'24 slides.

Run: mcsim run scenarios/fsdp_ag_rs.py [--topology fat-tree-k4] [--sizes 256KiB,1MiB] [--rate 56Gbps]
"""

import sys

from mcsim.result import incomplete_lines
from mcsim.runs.scenario import Scenario
from mcsim.util.options import Parser
from mcsim.util.output import Column, Table

# the pairs, in the order main() runs them: (algorithm of the AG, algorithm of the RS)
PAIRS = {"ring||ring": ("ring", "ring"), "mcast||ring": ("mcast", "ring"), "mcast||innet": ("mcast", "innet")}
TABLE = Table(
    [
        Column("size", width=8),
        Column("2(P-1)N/BW", ".1f", 11),
        Column("PN/BW", ".1f", 9),
        *(Column(name, ".1f", 13) for name in PAIRS),
        Column("innet/PN", ".3f", 9),
        Column("speedup", ".2f", 8),
    ]
)


def main() -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--topology", default="fat-tree-k4", help="topology (default fat-tree-k4)")
    parser.add_argument("--sizes", default="256KiB,1MiB", help="bytes per rank (default 256KiB,1MiB)")
    parser.add_argument("--rate", default="56Gbps", help="link rate (default 56Gbps: FDR)")
    parser.add_argument("--reduce-ps-per-byte", type=int, default=0, help="ring RS reduction cost (default 0 ps/B)")
    args = parser.parse_args()
    if args.reduce_ps_per_byte < 0:
        parser.error(f"--reduce-ps-per-byte={args.reduce_ps_per_byte} must be >= 0 (ps per byte summed)")

    print(
        f"FSDP AG || RS on {args.topology} at {args.rate}: each pair's time in us (the later finish); "
        "speedup = ring||ring / mcast||innet"
    )
    print(TABLE.header())
    incomplete = 0
    for size in args.sizes.split(","):
        common = {
            "topology": args.topology,
            "rate": args.rate,
            "bytes_per_rank": size,
            "overlap": "reduce_scatter",
            "reduce_ps_per_byte": args.reduce_ps_per_byte,
        }
        runs = {name: Scenario(algorithm=ag, overlap_algorithm=rs, **common).run() for name, (ag, rs) in PAIRS.items()}
        both = {
            f"{name} {part}": r for name, pair in runs.items() for part, r in (("AG", pair), ("RS", pair.concurrent))
        }
        if lines := incomplete_lines(f"{size:>8}", both):
            incomplete += len(lines)
            print("\n".join(lines), flush=True)
            continue
        first = runs["ring||ring"]
        p, n = first.ranks, first.bytes_per_rank_b
        pn_us = p * n * 8e6 / first.data_rate_bps
        times = {name: max(r.time_ps, r.concurrent.time_ps) / 1e6 for name, r in runs.items()}
        row = {"size": size, "2(P-1)N/BW": 2 * (p - 1) * n * 8e6 / first.data_rate_bps, "PN/BW": pn_us, **times}
        row |= {"innet/PN": times["mcast||innet"] / pn_us, "speedup": times["ring||ring"] / times["mcast||innet"]}
        print(TABLE.row(row), flush=True)
    if incomplete:
        print(f"{incomplete} run(s) left a rank incomplete")
    else:  # what was checked: completion, counted; an overlapped pair cannot run in verify mode
        print(
            "every run complete: every rank of both collectives had its whole output (completions counted; "
            "bytes not verified: verify mode does not check an overlapped pair)"
        )
    return 1 if incomplete else 0


if __name__ == "__main__":
    sys.exit(main())
