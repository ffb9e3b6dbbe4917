# SPDX-License-Identifier: GPL-2.0-only
"""The report's figures that set an offloaded collective beside the host baselines: the multicast
Broadcast against the pipelined chain and the binomial tree as P grows, and the in-network Allreduce
against the ring Allreduce as N grows."""

from __future__ import annotations

from mcsim.reference.claims import FDR
from mcsim.report.panel import COLORS, Panel, Runs, topology_for
from mcsim.sweep.spec import SweepSpec
from mcsim.units import format_size
from mcsim.util.plots import new_figure, svg_of

BCAST_SIZE = "256KiB"  # the Broadcast figure's buffer
BCAST_CHUNK = "16KiB"  # the baselines' RDMA WRITEs: a pipelined chain needs pieces well below N
BCAST_RANKS = (2, 4, 8, 16, 32, 64, 128, 188)
QUICK_BCAST_RANKS = (2, 4, 8, 16)
ALLREDUCE_SIZES = ("4KiB", "16KiB", "64KiB", "256KiB", "1MiB")
ALLREDUCE_LINES = (  # algorithm, label, colour, line style
    ("ring", "ring (the hosts sum)", COLORS["ring"], "o-"),
    ("innet", "in-network (the switches sum)", COLORS["dpa"], "o-"),
    ("ring_mcast", "ring Reduce-Scatter, then multicast Allgather", COLORS["mcast"], "s--"),
    ("innet_mcast", "in-network Reduce-Scatter, then multicast Allgather", COLORS["staging"], "s--"),
)
BCAST_LINES = (
    ("mcast", "multicast (UD, one injection)", COLORS["mcast"]),
    ("chain", f"pipelined chain ({BCAST_CHUNK} WRITEs)", COLORS["ring"]),
    ("binomial", "binomial tree (MPICH)", COLORS["dpa"]),
)


def broadcast_vs_p_spec(quick: bool) -> SweepSpec:
    return SweepSpec(
        name="report-bcast-vs-p" + ("-quick" if quick else ""),
        base={
            "topology": topology_for(quick),
            "rate": FDR,
            "collective": "broadcast",
            "bytes_per_rank": BCAST_SIZE,
            "ring_chunk": BCAST_CHUNK,
        },
        axes={"ranks": list(QUICK_BCAST_RANKS if quick else BCAST_RANKS), "algorithm": [a for a, _, _ in BCAST_LINES]},
    )


def broadcast_vs_p(quick: bool, runs: Runs) -> Panel:
    spec = broadcast_vs_p_spec(quick)
    rows, notes = runs(spec)
    fig, ax = new_figure()
    table = []
    for algo, label, color in BCAST_LINES:
        pts = sorted((r["ranks"], r["time_ps"] / r["receive_bound_ps"]) for r in rows if r["algorithm"] == algo)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=color, label=label)
        table += [(algo, p, round(t, 3)) for p, t in pts]
    ax.axhline(1.0, color="black", ls="--", lw=1, label="N/BW: every rank receives N through one link")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("ranks P (log scale)")
    ax.set_ylabel("time / (N/BW) (log scale)")
    ax.legend(loc="upper left", fontsize="small")
    return Panel(
        id="bcast-vs-p",
        title=f"Broadcast of {BCAST_SIZE} vs P on {topology_for(quick)}: multicast against the host baselines",
        caption=f"Time of one Broadcast of {BCAST_SIZE} from rank 0 at {FDR} FDR links, over N/BW. The multicast root "
        "injects the buffer once and the switches copy it, so its time stays near N/BW as P grows (the paper's "
        "practically constant-time Broadcast). The pipelined chain adds a chunk's step per rank, (P-1) steps; the "
        "binomial tree's root sends the whole buffer ceil(log2 P) times, one child after the other.",
        svg=svg_of(fig),
        columns=("algorithm", "ranks", "time_over_n_over_bw"),
        rows=table,
        specs=(spec,),
        notes=tuple(notes),
    )


def allreduce_spec(quick: bool) -> SweepSpec:
    return SweepSpec(
        name="report-allreduce" + ("-quick" if quick else ""),
        base={"topology": topology_for(quick), "rate": FDR, "collective": "allreduce"},
        axes={"bytes_per_rank": list(ALLREDUCE_SIZES), "algorithm": [a for a, *_ in ALLREDUCE_LINES]},
    )


def allreduce(quick: bool, runs: Runs) -> Panel:
    spec = allreduce_spec(quick)
    rows, notes = runs(spec)
    fig, ax = new_figure()
    table = []
    for algo, label, color, style in ALLREDUCE_LINES:
        pts = sorted(
            (r["bytes_per_rank_b"], r["time_ps"] / r["receive_bound_ps"]) for r in rows if r["algorithm"] == algo
        )
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color, label=label)
        table += [(algo, format_size(b), round(t, 3)) for b, t in pts]
    if rows:
        p = rows[0]["ranks"]
        ax.axhline(2 * (p - 1) / p, color=COLORS["ring"], ls="--", lw=1, label="2(P-1)/P: any host-based Allreduce")
    ax.axhline(1.0, color="black", ls=":", lw=1.5, label="1: N/BW, the in-network bound")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("bytes per rank N (log scale)")
    ax.set_ylabel("time / (N/BW) (log scale)")
    ax.legend(loc="upper right", fontsize="small")
    ranks = rows[0]["ranks"] if rows else "-"
    return Panel(
        id="allreduce",
        title=f"Allreduce on {topology_for(quick)}: ring (host sums) vs in-network reduction, and with a multicast "
        "Allgather",
        caption=f"Time of one Allreduce of N bytes on {ranks} ranks at {FDR} FDR links, over N/BW. A ring sends and "
        "receives 2N(P-1)/P per rank (its Reduce-Scatter, then its Allgather) and pays 2(P-1) steps of latency; "
        "the switches' sum lets every rank send N and receive N. The two-phase variants run a Reduce-Scatter (ring "
        "or in-network), then a multicast Allgather of the sums once every rank has its block: the ring one halves "
        "the ring's steps for the same 2N(P-1)/P; the in-network one sends N, then receives N(P-1)/P, one after the "
        "other (about 2N/BW). The host's reduction costs 68 ps per byte (reduce_ps_per_byte), faster than an FDR "
        "link.",
        svg=svg_of(fig),
        columns=("algorithm", "bytes_per_rank", "time_over_n_over_bw"),
        rows=table,
        specs=(spec,),
        notes=tuple(notes),
    )
