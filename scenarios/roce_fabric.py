# SPDX-License-Identifier: GPL-2.0-only
"""Question: on a RoCE fabric (Ethernet links, RoCEv2 packets, Priority Flow Control), do the multicast
Allgather and the in-network Reduce-Scatter keep their advantage at 400G, 800G and 1.6T, alone and beside a
neighbour job whose Alltoall makes incast and pauses?

A fat tree of 16 hosts (k = 4, non-blocking, every link at the rate's Ethernet preset: 400GbE, 800GbE,
1.6TbE), flow_control="pfc" with its defaults (each switch port's 256 KiB ingress buffer less its computed
headroom as XOFF), wire_format="rocev2", and --congestion-control (default dcqcn: the switches mark ECN,
the NICs' RC QPs react; hpcc: the switches add INT records, the RC QPs set window and rate from them;
datagrams are not rate-controlled). The job under study has 8 ranks on every other
host and runs one collective of --bytes-per-rank per rank: a ring or a multicast Allgather, or a ring or an in-network
Reduce-Scatter (the multicast and in-network ones receive their datagrams on the DPA). The neighbour (the
other 8 hosts) runs Alltoalls of --neighbour-bytes per peer back to back for as long as the study's
collective takes alone (times 3), every rank sending to every other at once: incast at each of its hosts.
With --neighbour-class lossy its hosts send in PFC's lossy class (FabricConfig.lossy_hosts; fabric.md,
"Traffic classes"): no pause holds its packets, the switches tail-drop them, its RC QPs retransmit. With
--datagram-class lossy the study's multicast datagrams go in it (RdmaConfig.ud_lossy), its READ repair and the
in-network contributions staying lossless.
Per rate and collective it prints the collective's time alone and beside the neighbour, each over the bound
N (P-1) / BW at the hosts' data rate (the same for both algorithms of a collective; the in-network
Reduce-Scatter's own bound is P N / BW, P/(P-1) of it), and the time all ports spent paused with the
neighbour (summed over the fabric's ports) and that of the study's own hosts, the CE marks the switches
made with the neighbour, and the packets they tail-dropped (the lossy class's). The ring Reduce-Scatter is
bound by its hosts' summing (reduce_ps_per_byte), the same at every rate.

Run: mcsim run scenarios/roce_fabric.py [--rates 400Gbps,800Gbps,1.6Tbps] [--bytes-per-rank 1MiB]
     [--neighbour-bytes 256KiB] [--congestion-control dcqcn|hpcc|none] [--neighbour-class lossless|lossy]
     [--datagram-class lossless|lossy]
"""

import sys

from mcsim.config.congestion import KINDS as CONGESTION_CONTROLS
from mcsim.config.fabric import FabricConfig
from mcsim.config.rdma import RdmaConfig
from mcsim.runs.jobs import DPA_RECEIVE, run_jobs
from mcsim.runs.scenario import scenario_of
from mcsim.units import parse_rate, parse_size
from mcsim.util.options import Parser
from mcsim.util.output import Column, Table
from mcsim.workloads.job import Collective, Job
from mcsim.workloads.training import background_job

TOPOLOGY = "fat-tree-k4"
STUDY = tuple(range(0, 16, 2))  # every other host: its rings and trees cross the neighbour's switches
NEIGHBOUR = tuple(range(1, 16, 2))
RUNS = (("allgather", "ring"), ("allgather", "mcast"), ("reduce_scatter", "ring"), ("reduce_scatter", "innet"))
FABRIC = {"wire_format": "rocev2", "flow_control": "pfc"}  # and the congestion control given
TABLE = Table(
    [
        Column("rate", width=8, left=True),
        Column("collective", width=15, left=True),
        Column("algorithm", width=9, left=True),
        Column("alone_us", ".1f", 9),
        Column("alone/bound", ".3f", 12),
        Column("beside_us", ".1f", 10),
        Column("beside/bound", ".3f", 13),
        Column("paused_us", ".1f", 10),
        Column("study_paused_us", ".1f", 16),
        Column("marks", "d", 8),
        Column("drops", "d", 7),
    ]
)


def run(
    rate: str, collective: str, algorithm: str, n: int, neighbour_b: int, cc: str, lossy: bool, ud_lossy: bool
) -> dict[str, object]:
    # datagram receives (the multicast chunks, the switches' sums) on the DPA: a host CPU thread does not keep
    # up with them at these rates (the in-network Reduce-Scatter of 1 MiB at 1.6T loses sums to a full
    # receive queue on it)
    options = dict(FABRIC, congestion_control=cc, **(DPA_RECEIVE if algorithm in ("mcast", "innet") else {}))
    if lossy:
        options["fabric"] = FabricConfig(flow_control=FABRIC["flow_control"], lossy_hosts=NEIGHBOUR)
    if ud_lossy:
        options["rdma"] = RdmaConfig(ud_lossy=True)
    step = Collective(label="C", collective=collective, algorithm=algorithm, bytes_per_rank=n)
    study = Job(name="study", hosts=STUDY, steps=(step,))
    alone = run_jobs([study], topology=TOPOLOGY, rate=rate, **options).jobs[0].iteration_ps
    sc = scenario_of(topology=TOPOLOGY, rate=rate, ranks=8, bytes_per_rank=n, algorithm="ring", **FABRIC)
    rate_bps = sc.data_rate_bps
    bound_ps = n * 7 * 8 * 10**12 // rate_bps
    neighbour = background_job(
        "neighbour", NEIGHBOUR, load=1.0, data_rate_bps=rate_bps, bytes_per_peer=neighbour_b, duration_ps=3 * alone
    )
    both = run_jobs([study, neighbour], topology=TOPOLOGY, rate=rate, **options)
    beside = both.job("study").iteration_ps
    paused = both.fabric.pfc["paused_ps"] if both.fabric.pfc is not None else None
    hosts = [i for i in range(len(both.fabric.port_node)) if int(both.fabric.port_node[i]) in STUDY]
    return {
        "rate": rate,
        "collective": collective,
        "algorithm": algorithm,
        "alone_us": alone / 1e6,
        "alone/bound": alone / bound_ps,
        "beside_us": beside / 1e6,
        "beside/bound": beside / bound_ps,
        "paused_us": int(paused.sum()) / 1e6 if paused is not None else 0.0,
        "study_paused_us": int(paused[hosts].sum()) / 1e6 if paused is not None else 0.0,
        "marks": int(both.fabric.ecn["ce_marked"].sum()) if both.fabric.ecn is not None else 0,
        "drops": both.fabric.drops_by_cause()["tail"],
    }


def main() -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="400Gbps,800Gbps,1.6Tbps", help="link rates, comma-separated")
    parser.add_argument("--bytes-per-rank", default="1MiB", help="the study's collective, per rank")
    parser.add_argument("--neighbour-bytes", default="256KiB", help="the neighbour's Alltoall, per peer")
    parser.add_argument("--congestion-control", choices=tuple(CONGESTION_CONTROLS), default="dcqcn", help="the NICs'")
    parser.add_argument(
        "--neighbour-class", choices=("lossless", "lossy"), default="lossless", help="the neighbour's PFC class"
    )
    parser.add_argument(
        "--datagram-class",
        choices=("lossless", "lossy"),
        default="lossless",
        help="the PFC class of the study's multicast datagrams",
    )
    args = parser.parse_args()
    rates = [r.strip() for r in args.rates.split(",")]
    for r in rates:
        parse_rate(r, what="--rates")
    n = parse_size(args.bytes_per_rank, what="--bytes-per-rank")
    neighbour_b = parse_size(args.neighbour_bytes, what="--neighbour-bytes")
    print(TABLE.header())
    for rate in rates:
        for collective, algorithm in RUNS:
            print(f"mcsim: {rate} {collective} {algorithm} ...", file=sys.stderr, flush=True)
            lossy, ud_lossy = args.neighbour_class == "lossy", args.datagram_class == "lossy"
            row = run(rate, collective, algorithm, n, neighbour_b, args.congestion_control, lossy, ud_lossy)
            print(TABLE.row(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
