# SPDX-License-Identifier: GPL-2.0-only
"""Question: inside one 8-GPU H100 node, how do the ring and NVLS (the NVSwitch's own multicast and reduction)
compare for Allgather, Reduce-Scatter and Allreduce, and where do they stand beside the published nccl-tests
figures?

The node is the ready topology dgx-h100 (one DGX H100: 8 GPUs, 18 NVLinks each into 4 NVSwitch chips that act as
one crossbar; no network). A GPU's NVLink data rate is NCCL's model, 18 x 20.6 = 370.8 GB/s each way
(src/graph/topo.h; docs/topologies.md, "Nodes of several GPUs"). Per collective, size and algorithm it runs:
- ring: pipelined RC RDMA WRITEs over NVLink with NCCL's Simple protocol (--nccl-protocol; its launch and step
  latencies, as nccl-tests measures NCCL: mcsim.config.protocols); its Reduce-Scatter and Allreduce sum at 1 ps/B
  (reduce_ps_per_byte=1: an H100 sums at HBM speed, 3.35 TB/s over 3 bytes moved per summed byte, ~0.9 ps/B;
  mcsim's default, 68, is a host CPU's);
- NVLS: the multicast Allgather (mcast) with all 8 GPUs multicasting at once (roots=8, as NCCL's NVLS kernels
  store to the multicast address together; with the default 2 roots at a time a round's roots receive only from
  each other, and it takes P/(P-1) of its bound: 1.17 x measured at 16 MiB), and the in-network Reduce-Scatter
  and Allreduce (innet), summed in the NVSwitch at 275 GB/s per GPU (topology.nodes.NVLS_H100_GBPS, calibrated on
  the published NVLS Allreduce: that row is an input). Both receive with the GPU's own receive,
  RdmaConfig(staging=False, processor=GPU_RECEIVE): zero copy, no cost per completion. NVLS runs mcsim's own
  protocol (NCCL's protocols are for its rings).

Sizes are nccl-tests' (--sizes, its -b ... -e): the Allgather's output and the Reduce-Scatter's input, 8 x N for N
per GPU, and the Allreduce's buffer; each a multiple of 32 B (8 GPUs x a 4-byte float). Per collective, size and
algorithm it prints the nccl-tests columns (size_B, count, time_us, algbw_GBps, busbw_GBps), the time over the
algorithm's bound (Result.bound_ps: N(G-1)/B_NVLink for a ring Allgather or Reduce-Scatter, 2N(G-1)/(G B_NVLink) for
a ring Allreduce, G N/B_NVLink for an in-network Reduce-Scatter, N/B_NVLink for an in-network Allreduce), and, where
the setup of a published row of ../shared/PUBLISHED.md "Nodes" applies (its algorithm, size at least its own), its
bus bandwidth, its id and a verdict: "input" for the ring rows (mcsim's NVLink rate IS NCCL's 370.8 GB/s, so they
agree by construction: they are not reproduced) and for the NVLS Allreduce (the NVSwitch's sum rate is fitted to
it), "agrees" within 10 % (the published figures are approximate), else mcsim "higher" or "lower" with the ratio.
The rows' sources are printed below the table. Measured at 1 GiB (Simple on the rings): ring Allgather and
Reduce-Scatter 366.4 GB/s busbw (1.012 x bound), Allreduce 367.3 (input); NVLS Allgather 363.8 (1.21 x the
published ~300: mcsim's NVSwitch multicasts at NVLink's rate, where the hardware does not), NVLS Reduce-Scatter 238.2
(every GPU sends its whole input, G N, into the switch), NVLS Allreduce 472.0 (the row's setup starts at 2 GiB).

Time on this machine (2 cores, shared): the default sizes 3 s; the six runs of 1GiB 9 s, of 4GiB 37 s (--sizes
1MiB,...,4GiB, the issue's range in x4 steps: about a minute).

Run: mcsim run scenarios/node_h100.py [--sizes 1MiB,16MiB,256MiB] [--nccl-protocol simple|ll|ll128|none]
     (up to 4GiB: --sizes 1MiB,...,4GiB)
"""

import sys
from dataclasses import dataclass
from typing import Any

from mcsim import topology
from mcsim.config.protocols import PROTOCOLS
from mcsim.config.rdma import GPU_RECEIVE, RdmaConfig
from mcsim.runs.scenario import Scenario
from mcsim.topology.nodes import nodes_of
from mcsim.units import format_size, parse_size
from mcsim.util.options import Parser
from mcsim.util.output import Column, Table

TOPOLOGY = "dgx-h100"
DEFAULT_SIZES = "1MiB,16MiB,256MiB"
FLOAT_B = 4  # nccl-tests' default type
GiB = 1 << 30
GPU_REDUCE_PS_PER_B = 1  # an H100 sums at HBM speed: 3.35 TB/s over 3 bytes a summed byte, ~0.9 ps/B
GPU = RdmaConfig(staging=False, processor=GPU_RECEIVE)  # the GPU's own receive: zero copy, no cost per completion
DEFAULT_NCCL = "simple"  # the rings run NCCL's Simple protocol, as nccl-tests' large-message figures do
RUNS = (
    ("allgather", "ring"),
    ("allgather", "mcast"),
    ("reduce_scatter", "ring"),
    ("reduce_scatter", "innet"),
    ("allreduce", "ring"),
    ("allreduce", "innet"),
)
NVLS = {"mcast": "NVLS", "innet": "NVLS"}  # NCCL's name of mcsim's switch multicast and reduction inside a node
AGREE = 0.10  # the published figures are "~": within 10 % agrees
TABLE = Table(
    [
        Column("size_B", "d", 10),
        Column("count", "d", 10),
        Column("collective", width=14, left=True),
        Column("algorithm", width=9, left=True),
        Column("NCCL_ALGO", width=9, left=True),
        Column("time_us", ".1f", 10),
        Column("algbw_GBps", ".1f", 10),
        Column("busbw_GBps", ".1f", 10),
        Column("time/bound", ".3f", 10),
        Column("published_busbw", width=15),
        Column("row", width=12, left=True),
        Column("verdict", width=12),
    ]
)


@dataclass(frozen=True, slots=True)
class Published:
    """One published figure of ../shared/PUBLISHED.md "Nodes" (bus bandwidth, GB/s) and the setup it holds for."""

    id: str
    collective: str
    algorithm: str
    busbw_GBps: float
    min_size_b: int  # nccl-tests' size from which the row's figure is stated
    input: bool  # mcsim is calibrated on it (its NVLink rate is NCCL's): agreement by construction
    text: str


PUBLISHED = (
    Published(
        "h100-ring-ar",
        "allreduce",
        "ring",
        370,
        GiB,
        True,
        "~370 GB/s busbw, ring Allreduce, 8 x H100, NCCL_ALGO=RING, >= 1 GiB (nccl-tests #212, maintainer; NCCL "
        "#1455: 365-370 for 2-8 GPUs); mcsim's NVLink rate is NCCL's 18 x 20.6 = 370.8 GB/s: an input",
    ),
    Published(
        "h100-nvls-ar",
        "allreduce",
        "innet",
        480,
        2 * GiB,
        True,
        "~480 GB/s busbw (algbw ~275), NVLS Allreduce, 8 x H100, >= 2-4 GiB (nccl-tests #212, NCCL #1455, #2140); "
        "mcsim's NVSwitch sums 275 GB/s per GPU, fitted to this figure: an input",
    ),
    Published(
        "h100-nvls-ag",
        "allgather",
        "mcast",
        300,
        GiB,
        False,
        "Allgather NVLS ~300 GB/s busbw at 1 GB, 8 x H100 (NCCL #1506, #1083: NVLS is not faster for AG/RS)",
    ),
    Published(
        "h100-nvls-ag",
        "allgather",
        "ring",
        350,
        GiB,
        True,
        "... and ring ~350 GB/s busbw at 1 GB: mcsim's ring runs at NCCL's NVLink rate, an input (5 % over it)",
    ),
)


def verdict(row: Published, busbw_GBps: float) -> str:
    """ "input", "agrees" (within AGREE), or mcsim "higher"/"lower" with its ratio to the published figure."""
    if row.input:
        return "input"
    ratio = busbw_GBps / row.busbw_GBps
    if abs(ratio - 1) <= AGREE:
        return "agrees"
    return f"{'higher' if ratio > 1 else 'lower'} {ratio:.2f}x"


def run(collective: str, algorithm: str, size_b: int, gpus: int, protocol: str = DEFAULT_NCCL) -> dict[str, object]:
    n = size_b if collective == "allreduce" else size_b // gpus  # nccl-tests' size: the output, or the buffer
    options: dict[str, Any] = (
        {"rdma": GPU} if algorithm in NVLS else {"reduce_ps_per_byte": GPU_REDUCE_PS_PER_B, "nccl_protocol": protocol}
    )
    if algorithm == "mcast":
        options["roots"] = gpus  # every GPU multicasts at once, as NVLS does
    r = Scenario(topology=TOPOLOGY, collective=collective, algorithm=algorithm, bytes_per_rank=n, **options).run()
    if not r.complete:
        return {"incomplete": r.incomplete_line()}
    s = r.summary()
    row = next((p for p in PUBLISHED if (p.collective, p.algorithm) == (collective, algorithm)), None)
    beside = row is not None and size_b >= row.min_size_b
    return {
        "size_B": s["size_B"],
        "count": s["count"],
        "collective": collective,
        "algorithm": algorithm,
        "NCCL_ALGO": NVLS.get(algorithm, "RING"),
        "time_us": s["time_us"],
        "algbw_GBps": s["algbw_GBps"],
        "busbw_GBps": s["busbw_GBps"],
        "time/bound": r.time_ps / r.bound_ps,
        "published_busbw": f"~{row.busbw_GBps:.0f}" if beside and row else "-",
        "row": row.id if beside and row else "-",
        "verdict": verdict(row, s["busbw_GBps"]) if beside and row else "-",
    }


def main() -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help=f"nccl-tests sizes (default {DEFAULT_SIZES}; to 4GiB)")
    parser.add_argument(
        "--nccl-protocol",
        choices=tuple(PROTOCOLS),
        default=DEFAULT_NCCL,
        help=f"the rings' protocol (default {DEFAULT_NCCL}; none: mcsim's own rings, no NCCL latencies)",
    )
    args = parser.parse_args()
    node = nodes_of(topology.resolve(TOPOLOGY))
    assert node is not None  # dgx-h100 is one node
    gpus = node.gpus
    sizes = [parse_size(s.strip(), what="--sizes") for s in args.sizes.split(",") if s.strip()]
    for text, size_b in zip(args.sizes.split(","), sizes, strict=False):
        if size_b <= 0 or size_b % (gpus * FLOAT_B):
            parser.error(
                f"--sizes={args.sizes}: {text.strip()} is not a positive multiple of {gpus * FLOAT_B} B "
                f"({gpus} GPUs x a {FLOAT_B}-byte float), e.g. 1MiB"
            )
    if not sizes:
        parser.error(f"--sizes={args.sizes!r} gives no size; e.g. --sizes {DEFAULT_SIZES}")
    print(
        f"{TOPOLOGY}: {gpus} H100 GPUs, NVLink 370.8 GB/s each way (NCCL's 18 x 20.6); rings sum at 1 ps/B and run "
        f"NCCL protocol {args.nccl_protocol!r}"
    )
    print(TABLE.header())
    incomplete = 0
    for collective, algorithm in RUNS:
        for size_b in sizes:
            print(f"mcsim: {collective} {algorithm} {size_b} B ...", file=sys.stderr, flush=True)
            row = run(collective, algorithm, size_b, gpus, args.nccl_protocol)
            if "incomplete" in row:
                incomplete += 1
                print(TABLE.note(size_b, f"{collective} {algorithm}: {row['incomplete']}"), flush=True)
                continue
            print(TABLE.row(row), flush=True)
    print("\nPublished (../shared/PUBLISHED.md, Nodes):")
    for p in PUBLISHED:
        print(f"  {p.id} ({p.collective} {p.algorithm}): {p.text}")
    if max(sizes) < min(p.min_size_b for p in PUBLISHED):
        print(f"No published row's setup applies below {format_size(GiB)}: add e.g. --sizes {args.sizes},1GiB,2GiB")
    return 1 if incomplete else 0


if __name__ == "__main__":
    sys.exit(main())
