# SPDX-License-Identifier: GPL-2.0-only
"""The published record of nodes of several GPUs and of in-network reduction (../shared/PUBLISHED.md, "Nodes of
several GPUs" and "In-network reduction (SHARP)") as claims, and their evaluators.

Each figure is a maintainer's or a user's measurement in a public thread (NCCL, nccl-tests) or a paper; mcsim's
runs are on its ready topologies (dgx-h100, rail-4x4, two nodes of rail-16x8) with a GPU's own receive
(config.rdma.GPU_RECEIVE) and a GPU's sum (GPU_REDUCE_PS_PER_B). mcsim's NVLink data rate IS NCCL's model's
(18 x 20.6 GB/s on an H100): a ring over NVLink agrees with the ring figure by construction, the verdict "input".
A figure of a mechanism mcsim does not model yet is "not modelled", with what is missing.
"""

from __future__ import annotations

from typing import Any

from mcsim.reference.claim import Claim, spec_of
from mcsim.reference.evaluation import Context, Measure, by_algorithm, sweep_rows, where

NODE = "dgx-h100"
RAILS = "rail-4x4"  # 4 nodes of 4 H100s, a 400G NDR NIC per GPU
# a GPU sums at HBM speed: H100 SXM 3.35 TB/s (NVIDIA data sheet) over 3 bytes moved per summed byte: ~0.9 ps/B
GPU_REDUCE_PS_PER_B = 1
# a GPU's own receive (zero copy, no cost per completion: config.rdma.GPU_RECEIVE) as sweep keywords
OFFLOADED = {"processor": {"kind": "host_cpu", "completion_ps": 0}, "staging": False}
GPU = {
    "processor": {"kind": "host_cpu", "completion_ps": 0},
    "staging": False,
    "reduce_ps_per_byte": GPU_REDUCE_PS_PER_B,
}
NCCL = "github.com/NVIDIA/nccl issues"
NCCL_TESTS = "github.com/NVIDIA/nccl-tests issues"


# nccl-tests measures NCCL's kernels: a ring runs NCCL's Simple protocol, the one its large-message figures are of
# (mcsim.config.protocols; a ring beside a multicast in one sweep runs mcsim's own rings: the protocol is refused
# with mcast)
NCCL_RING = {"nccl_protocol": "simple"}


def _node(name: str, collective: str, size: str, algorithms: list[str], **extra: Any) -> Any:
    return spec_of(
        name,
        {"topology": NODE, "collective": collective, "bytes_per_rank": size, **GPU, **extra},
        {"algorithm": algorithms},
    )


def _two_nodes(name: str, size: str) -> Any:
    """An Allreduce of ``size`` on two DGX H100 nodes of rail-16x8 (its first 16 GPUs), NVLS_TREE beside the rings."""
    setup = {"topology": "rail-16x8", "ranks": 16, "collective": "allreduce", "bytes_per_rank": size, **GPU}
    return spec_of(name, setup, {"algorithm": ["nvls_tree", "hier_ring"]})


NODE_CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="h100-ring-ar",
        statement="ring Allreduce on one node of 8 H100s: ~370 GB/s bus bandwidth (>= 1 GiB, NCCL_ALGO=RING)",
        value=370.0,
        unit="GB/s busbw",
        source=f"{NCCL_TESTS} #212 (maintainer), {NCCL} #1455",
        kind="calibrated input",
        tolerance=0.05,
        must_reproduce=True,
        quick=True,
        runs=_node("h100-ring-ar", "allreduce", "1GiB", ["ring"], **NCCL_RING),
        quick_runs=_node("h100-ring-ar-quick", "allreduce", "512MiB", ["ring"], **NCCL_RING),
        note="mcsim's H100 NVLink data rate is NCCL's model's 18 x 20.6 = 370.8 GB/s (src/graph/topo.h), itself fitted "
        "to such measurements: agreeing proves nothing; an input that stops matching differs. The ring runs NCCL's "
        "Simple protocol: its launch and one step's latency, 11.0 us, cost 0.4 % at 512 MiB (3.4 % at 64 MiB; the "
        "other steps' latencies hide behind the pipelined chunks)",
    ),
    Claim(
        id="h100-nvls-ag",
        statement="Allgather on one node of 8 H100s: NVLS ~300 against ring ~350 GB/s busbw at 1 GB (NVLS is not "
        "faster for Allgather)",
        value=round(300 / 350, 3),
        unit="x ring busbw",
        source=f"{NCCL} #1506, #1083",
        kind="outcome",
        tolerance=0.10,
        must_reproduce=False,
        quick=True,
        runs=_node("h100-nvls-ag", "allgather", "128MiB", ["ring", "mcast"]),
        quick_runs=_node("h100-nvls-ag-quick", "allgather", "16MiB", ["ring", "mcast"]),
        note="NVLS in mcsim is the switch multicast inside the node (the mcast algorithm, the SC'24 protocol's K = 2 "
        "roots); its shortfall against the ring is the protocol's, which may not be NVLS's own reason. Both run "
        "without NCCL's protocol (the ring's Simple is refused beside a multicast in one sweep): at 128 MiB its "
        "latencies would cost the ring under 2 %",
    ),
    Claim(
        id="h100-nvls-ar",
        statement="NVLS Allreduce on one node of 8 H100s: ~480 GB/s busbw (algbw ~275) at >= 2-4 GiB",
        value=480.0,
        unit="GB/s busbw",
        source=f"{NCCL_TESTS} #212, {NCCL} #1455, #2140",
        kind="calibrated input",
        tolerance=0.05,
        must_reproduce=True,
        quick=True,
        runs=_node("h100-nvls-ar", "allreduce", "2GiB", ["innet"]),
        quick_runs=_node("h100-nvls-ar-quick", "allreduce", "64MiB", ["innet"]),
        note="NVLS in mcsim is the in-network reduction inside the node; the NVSwitch sums 275 GB/s per GPU "
        "(topology.nodes.NVLS_H100_GBPS), calibrated on this figure's algbw: agreeing proves nothing",
    ),
    Claim(
        id="ndr-nic",
        statement="46-48 GB/s per 400G NDR NIC (ConnectX-7: 48-49), ring, 2 nodes of H100s",
        value=48.0,
        unit="GB/s",
        source=f"{NCCL_TESTS} #290, #267 (maintainers)",
        kind="outcome",
        tolerance=0.05,
        must_reproduce=False,
        quick=True,
        runs=spec_of(
            "ndr-nic",
            {"topology": RAILS, "collective": "allgather", "bytes_per_rank": "16MiB", **GPU, **NCCL_RING},
            {"algorithm": ["ring"]},
        ),
        quick_runs=spec_of(
            "ndr-nic-quick",
            {"topology": RAILS, "collective": "allgather", "bytes_per_rank": "8MiB", **GPU, **NCCL_RING},
            {"algorithm": ["ring"]},
        ),
        note="mcsim: a flat ring Allgather across 4 nodes with NCCL's Simple protocol, whose bus bandwidth N(P-1)/T is "
        "the bottleneck NIC's payload rate (400 Gbit/s of data less the packets' headers) less the protocol's launch "
        "and step latencies",
    ),
    Claim(
        id="h200-ar",
        statement="Allreduce on one node of 8 H200s: 475 GB/s busbw (NCCL 2.20.3, 64 KiB-4 GiB)",
        value=475.0,
        unit="GB/s busbw",
        source=f"{NCCL_TESTS} #272",
        kind="outcome",
        tolerance=0.05,
        must_reproduce=False,
        quick=True,
        runs=_node("h200-ar", "allreduce", "1GiB", ["innet"]),
        quick_runs=_node("h200-ar-quick", "allreduce", "64MiB", ["innet"]),
        note="NCCL picks NVLS there; an H200's NVLink and NVSwitch are an H100's, so mcsim runs dgx-h100 and this "
        "follows from the h100-nvls-ar calibration: a consistency check of the two threads, no independent one",
    ),
    Claim(
        id="b300-nvls-ar",
        statement="Allreduce on one node of 8 B300s: busbw 695 -> 845 GB/s with NVLS",
        value=845.0,
        unit="GB/s busbw",
        source=f"{NCCL} #2140",
        kind="not modelled",
        tolerance=0.10,
        must_reproduce=False,
        quick=True,
        note="no B300 preset (its NVLink is B200's: 18 x 50 GB/s) and no NVSwitch reduction rate yet",
    ),
    Claim(
        id="multinode-nvls",
        statement="Allreduce on 1-2 nodes of 8 H100s with 8 x 400G RoCE each: 330 -> 430 GB/s with NVLS; ~320 either "
        "way on 4 nodes (4-8 GiB)",
        value=430.0,
        unit="GB/s busbw",
        source=f"{NCCL} #1221",
        kind="outcome",
        tolerance=0.10,
        must_reproduce=False,
        quick=True,
        runs=_two_nodes("multinode-nvls", "4GiB"),
        quick_runs=_two_nodes("multinode-nvls-quick", "512MiB"),
        note="mcsim: 2 of rail-16x8's DGX H100 nodes (ranks=16: a 400G NDR NIC per GPU on its rail), NCCL's NVLS_TREE "
        "as nvls_tree (an NVLS Reduce-Scatter in each node's NVSwitch at its calibrated 275 GB/s per GPU, a double "
        "binary tree per rail, an NVLS multicast Allgather), beside hier_ring (rings in the nodes and on the rails: "
        "the published 330 without NVLS). Not calibrated on this row. What differs: InfiniBand NDR for 400G RoCE; and "
        "NCCL pipelines its NVLS and network steps chunk by chunk, nearing the larger of their times, where mcsim runs "
        "its phases one after the other (their sum): so mcsim's NVLS comes out below its hier_ring, which moves fewer "
        "NVLink bytes at NVLink's own rate",
    ),
    Claim(
        id="256gpu-ag",
        statement="Allgather on 32 nodes of 8 H100s (8 HCAs, 16 channels): ~200 GB/s busbw at 2 GiB",
        value=200.0,
        unit="GB/s busbw",
        source=f"{NCCL} #1218",
        kind="not modelled",
        tolerance=0.10,
        must_reproduce=False,
        quick=True,
        note="NCCL's ring over 16 channels, pipelined across nodes, is not mcsim's hierarchical ring (its phases one "
        "after the other); a 32-node topology is one builder call (rail_optimised), the run ~4 min here",
    ),
    Claim(
        id="sharp-95",
        statement="streaming-aggregation Allreduce reaches ~95 % of the network bandwidth",
        value=0.95,
        unit="x N/BW",
        source="Graham et al., ISC 2020, SHARP Streaming-Aggregation Hardware Design and Evaluation",
        kind="outcome",
        tolerance=0.05,
        must_reproduce=False,
        quick=True,
        runs=spec_of(
            "sharp-95",
            {
                "topology": "fat-tree-k8",
                "rate": "200Gbps",
                "collective": "allreduce",
                "bytes_per_rank": "16MiB",
                **OFFLOADED,
            },
            {"algorithm": ["innet"]},
        ),
        quick_runs=spec_of(
            "sharp-95-quick",
            {
                "topology": "fat-tree-k4",
                "rate": "200Gbps",
                "collective": "allreduce",
                "bytes_per_rank": "4MiB",
                **OFFLOADED,
            },
            {"algorithm": ["innet"]},
        ),
        note="mcsim's in-network Allreduce on an HDR fat tree: its bound N/BW over its time; the aggregation unit's "
        "rate and window are assumptions (fabric.md); the hosts' receive costs nothing per completion (an offloaded "
        "receive, as SHARP's into host memory), so the network's aggregation is what is measured",
    ),
    Claim(
        id="sharp-fsdp",
        statement="SHARP Reduce-Scatter/Allgather: at most 2 streaming-aggregation flows per switch, one per HCA rail",
        value=2.0,
        unit="flows per switch",
        source="NVIDIA SHARP 3.5.2 LTS release notes",
        kind="not modelled",
        tolerance=0.0,
        must_reproduce=False,
        quick=True,
        note="mcsim's switches aggregate any number of trees at once (a limit per switch is not modelled)",
    ),
)


def _busbw(claim: Claim, ctx: Context) -> Measure:
    rows = sweep_rows(claim, ctx)
    busbw = rows[0]["busbw_Bps"] / 1e9
    return Measure(f"{busbw:.1f} GB/s busbw", busbw, f"{rows[0]['algorithm']} {rows[0]['collective']} ({where(rows)})")


def _nvls_over_ring(claim: Claim, ctx: Context) -> Measure:
    rows = sweep_rows(claim, ctx)
    by = by_algorithm(rows)
    ring, nvls = by["ring"]["busbw_Bps"] / 1e9, by["mcast"]["busbw_Bps"] / 1e9
    return Measure(
        f"NVLS {nvls:.1f}, ring {ring:.1f} GB/s busbw", nvls / ring, f"NVLS busbw / ring busbw ({where(rows)})"
    )


def _fraction_of_bound(claim: Claim, ctx: Context) -> Measure:
    rows = sweep_rows(claim, ctx)
    share = 1 / rows[0]["time_over_bound"]
    return Measure(f"{share:.3f} x N/BW", share, f"the bound over the simulated time ({where(rows)})")


def _nvls_beside_rings(claim: Claim, ctx: Context) -> Measure:
    by = by_algorithm(sweep_rows(claim, ctx))
    nvls, rings = by["nvls_tree"]["busbw_Bps"] / 1e9, by["hier_ring"]["busbw_Bps"] / 1e9
    return Measure(
        f"{nvls:.1f} GB/s busbw (hier_ring {rings:.1f})", nvls, f"nvls_tree allreduce ({where([by['nvls_tree']])})"
    )


def _not_modelled(claim: Claim, ctx: Context) -> Measure:
    return Measure("-", None, "a mechanism mcsim does not model yet: see the note")


NODE_EVALUATORS = {
    "h100-ring-ar": _busbw,
    "h100-nvls-ag": _nvls_over_ring,
    "h100-nvls-ar": _busbw,
    "ndr-nic": _busbw,
    "h200-ar": _busbw,
    "b300-nvls-ar": _not_modelled,
    "multinode-nvls": _nvls_beside_rings,
    "256gpu-ag": _not_modelled,
    "sharp-95": _fraction_of_bound,
    "sharp-fsdp": _not_modelled,
}
