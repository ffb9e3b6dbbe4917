# SPDX-License-Identifier: GPL-2.0-only
"""Question: on a rail-optimised cluster of 8-GPU nodes with a 400G NIC per GPU, how close do the flat ring, the
hierarchical ring and the hierarchical multicast Allgather, and the flat and hierarchical ring Reduce-Scatter,
come to their bounds, and what do they carry on each NIC's wire, each NVLink and the spines?

The cluster is the ready topology rail-16x8 (--topology; --quick: rail-4x4, 4 nodes of 4 GPUs, 2 spines): 16 DGX
H100 nodes, each GPU with its own 400G NDR ConnectX-7 on PCIe Gen5 x16, NIC r of every node on rail r's leaf (8
rails), 4 spines joining the rails (docs/topologies.md, "Nodes of several GPUs"); NVLink 370.8 GB/s a GPU each
way (NCCL's 18 x 20.6). Every GPU runs one collective of --bytes-per-rank N (docs/collectives.md):
- ring: the flat ring over all GPUs in host order (NVLink inside a node; from GPU G-1 of a node to GPU 0 of the
  next: another rail, so through the spines, where ECMP puts two of rail-16x8's 16 such flows on one link: 2.06 x
  its bound measured at 1 and 16 MiB; NCCL's rings cross between nodes on one rail);
- hier_ring: a ring per rail at once through the NICs (GPU l of every node), then a ring per node over NVLink
  (Reduce-Scatter: the other way round); no packet leaves its rail;
- hier_mcast (Allgather): the rail phase is the multicast Allgather (a group per rail), every node's GPU
  multicasting at once (roots = nodes: with fewer a round's roots receive only from each other, and the rail
  phase takes nodes/(nodes-1) of its bound: 1.37 x measured on rail-4x4 at 4 MiB with the default 2).
The ring Reduce-Scatters sum at 1 ps/B (reduce_ps_per_byte=1: an H100 sums at HBM speed, 3.35 TB/s over 3 bytes
moved per summed byte, ~0.9 ps/B; mcsim's default, 68, is a host CPU's).

The multicast's receive (--mcast-receive): gpu (default), the GPU's own receive (RdmaConfig(staging=False,
processor=GPU_RECEIVE): zero copy, no cost per completion), or dpa, the paper's DPA receive (16 threads, 16
endpoints, zero copy: mcsim.runs.jobs.DPA_RECEIVE). Both keep up with the rail's 400G multicast (no receive
drops; the rail phase alike, 1.03 x its bound on rail-4x4 at 4 MiB), but the processor is the whole run's: on
the DPA the node phase's ring over NVLink, a completion every 64 KiB chunk (177 ns at 370.8 GB/s), waits for a
lone thread's 320 ns per completion, so the whole takes 1.31 x its bound against the GPU's 1.02 (rail-4x4, 4
MiB; rail-16x8, 1 MiB: 1.43 against 1.02). The default is the GPU's: its kernels poll their own completions.

Per run it prints the time, its own bound (Result.bound_ps: the flat ring's N(P-1)/B_NIC, the hierarchical
phases one after the other, N(nodes-1)/B_NIC + nodes N(G-1)/B_NVLink), the time over it and over the flat ring's
N(P-1)/B_NIC, nccl-tests' bus bandwidth, and the wire bytes (headers included), each a mean: what a NIC sent to
its leaf and received from it, what a GPU sent into the NVSwitch, and what all spines sent together (0 for the
hierarchical ones: no packet crosses rails).

Time on this machine (2 cores, shared): --quick 3 s; rail-16x8 at 1 MiB 30 s; at 16 MiB 7 min.

Run: mcsim run scenarios/rail_cluster.py [--quick | --topology rail-16x8] [--bytes-per-rank 1MiB]
     [--mcast-receive gpu|dpa]
"""

import sys
from typing import Any

from mcsim import topology
from mcsim.config.rdma import GPU_RECEIVE, RdmaConfig
from mcsim.runs.jobs import DPA_RECEIVE
from mcsim.runs.scenario import Scenario
from mcsim.topology.nodes import nodes_of
from mcsim.units import PS_PER_S, parse_size
from mcsim.util.options import Parser
from mcsim.util.output import Column, Table

TOPOLOGY, QUICK = "rail-16x8", "rail-4x4"
GPU_REDUCE_PS_PER_B = 1  # an H100 sums at HBM speed: 3.35 TB/s over 3 bytes a summed byte, ~0.9 ps/B
RECEIVES: dict[str, dict[str, Any]] = {
    "gpu": {"rdma": RdmaConfig(staging=False, processor=GPU_RECEIVE)},  # zero copy, no cost per completion
    "dpa": {
        "rdma": RdmaConfig(staging=DPA_RECEIVE["staging"], processor=DPA_RECEIVE["processor"]),
        "endpoints": DPA_RECEIVE["endpoints"],
    },
}
RUNS = (
    ("allgather", "ring"),
    ("allgather", "hier_ring"),
    ("allgather", "hier_mcast"),
    ("reduce_scatter", "ring"),
    ("reduce_scatter", "hier_ring"),
)
MiB = 1 << 20
TABLE = Table(
    [
        Column("collective", width=14, left=True),
        Column("algorithm", width=10, left=True),
        Column("time_us", ".1f", 9),
        Column("bound_us", ".1f", 9),
        Column("time/bound", ".3f", 10),
        Column("time/ring_bound", ".3f", 15),
        Column("busbw_GBps", ".2f", 10),
        Column("nic_tx_MiB", ".2f", 10),
        Column("nic_rx_MiB", ".2f", 10),
        Column("nvlink_tx_MiB", ".2f", 13),
        Column("spine_MiB", ".2f", 9),
    ]
)


def links(g: Any) -> tuple[dict[str, list[tuple[int, int]]], list[int]]:
    """The (from, to) node pairs of each kind of link direction counted: NIC -> leaf, leaf -> NIC, GPU's hub ->
    NVSwitch; and the spines."""
    part = {
        x: d.get("part", "leaf" if "rail" in d else "spine" if d["tier"] > 0 else None) for x, d in g.nodes(data=True)
    }
    up = [(a, b) for a, b in g.edges if {part[a], part[b]} == {"nic", "leaf"}]
    up = [(a, b) if part[a] == "nic" else (b, a) for a, b in up]
    nvlink = [(a, b) if part[a] == "hub" else (b, a) for a, b in g.edges if {part[a], part[b]} == {"hub", "nvswitch"}]
    return {"nic_tx": up, "nic_rx": [(b, a) for a, b in up], "nvlink_tx": nvlink}, [x for x in g if part[x] == "spine"]


def traffic(r: Any, g: Any) -> dict[str, float]:
    """Mean wire MiB per link direction of each kind, and the spines' sum."""
    kinds, spines = links(g)
    f = r.fabric
    tx = f.ports["tx_bytes"]
    by_pair: dict[tuple[int, int], int] = {}
    for i, peer in enumerate(f.port_peer):
        pair = (int(f.port_node[i]), int(f.port_node[peer]))
        by_pair[pair] = by_pair.get(pair, 0) + int(tx[i])
    out = {f"{kind}_MiB": sum(by_pair.get(p, 0) for p in pairs) / len(pairs) / MiB for kind, pairs in kinds.items()}
    spine = set(spines)
    out["spine_MiB"] = sum(int(t) for t, node in zip(tx, f.port_node, strict=True) if int(node) in spine) / MiB
    return out


def run(name: str, collective: str, algorithm: str, n: int, receive: str) -> dict[str, object]:
    g = topology.resolve(name)
    nodes = nodes_of(g)
    assert nodes is not None  # main() checked it
    options: dict[str, Any] = {"reduce_ps_per_byte": GPU_REDUCE_PS_PER_B} if collective == "reduce_scatter" else {}
    if algorithm == "hier_mcast":
        options.update(RECEIVES[receive], roots=nodes.count)  # every node's GPU of a rail multicasts at once
    r = Scenario(topology=name, collective=collective, algorithm=algorithm, bytes_per_rank=n, **options).run()
    if not r.complete:
        return {"incomplete": r.incomplete_line()}
    ring_bound_ps = n * (nodes.count * nodes.gpus - 1) * 8 * PS_PER_S / nodes.network_bps  # N(P-1)/B_NIC
    return {
        "collective": collective,
        "algorithm": algorithm,
        "time_us": r.time_ps / 1e6,
        "bound_us": r.bound_ps / 1e6,
        "time/bound": r.time_ps / r.bound_ps,
        "time/ring_bound": r.time_ps / ring_bound_ps,
        "busbw_GBps": r.busbw_Bps / 1e9,
        **traffic(r, g),
    }


def main() -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--topology", default=None, help=f"a rail-optimised cluster (default {TOPOLOGY})")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK}: 4 nodes of 4 GPUs (~3 s)")
    parser.add_argument(
        "--bytes-per-rank", default="1MiB", help="each GPU's shard (Allgather) or block (Reduce-Scatter)"
    )
    parser.add_argument("--mcast-receive", choices=tuple(RECEIVES), default="gpu", help="hier_mcast's receive")
    args = parser.parse_args()
    if args.quick and args.topology is not None:
        parser.error(f"--quick is --topology {QUICK}; give --quick or --topology, not both")
    name = QUICK if args.quick else args.topology or TOPOLOGY
    n = parse_size(args.bytes_per_rank, what="--bytes-per-rank")
    if n <= 0:
        parser.error(f"--bytes-per-rank={args.bytes_per_rank} must be > 0")
    nodes = nodes_of(topology.resolve(name))
    if nodes is None or nodes.count < 2 or nodes.network_bps == 0:
        parser.error(f"--topology={name} is not nodes of several GPUs joined by a network; e.g. {TOPOLOGY}")
    print(
        f"{name}: {nodes.count} nodes x {nodes.gpus} GPUs, {nodes.rails} rails, NIC {nodes.network_bps / 1e9:g} "
        f"Gbit/s, NVLink {nodes.nvlink_bps / 8e9:g} GB/s; {args.bytes_per_rank} per GPU; hier_mcast on the "
        f"{args.mcast_receive} receive"
    )
    print(TABLE.header())
    incomplete = 0
    for collective, algorithm in RUNS:
        print(f"mcsim: {name} {collective} {algorithm} ...", file=sys.stderr, flush=True)
        row = run(name, collective, algorithm, n, args.mcast_receive)
        if "incomplete" in row:
            incomplete += 1
            print(TABLE.note(collective, f"{algorithm}: {row['incomplete']}"), flush=True)
            continue
        print(TABLE.row(row), flush=True)
    return 1 if incomplete else 0


if __name__ == "__main__":
    sys.exit(main())
