# SPDX-License-Identifier: GPL-2.0-only
"""NCCL's protocols (Simple, LL, LL128) as frozen data: what a ring or a tree rank of mcsim does differently under each.

A protocol is how NCCL's GPU kernels move a step's data and tell the peer it is there. mcsim models the two
things NCCL's own tuning model (src/graph/tuning.cc) charges for it:

- **Lines on the wire** (the payload efficiency): LL stores 16-byte lines of 8 data bytes and two 4-byte flags
  (``union ncclLLFifoLine``, src/include/device.h); LL128 stores 128-byte lines of 120 data bytes and one 8-byte
  flag (``NCCL_LL128_LINESIZE``, ``NCCL_LL128_DATAELEMS``); Simple moves the data alone and signals after it.
  mcsim carries the lines in the packets (C++ ``RcQp::SetLines``): LL's packets hold half the data, LL128's
  15/16. NCCL's tuning model writes these as 0.5 and 0.92 ("120.0/128.0").
- **Time**: NCCL's latency of a ring collective is baseLat + the steps' hwLat (nsteps of them, those that
  cross nodes at the network's), of a tree Allreduce baseLat + 2 x its depth's hwLat (up, then down). mcsim adds
  ``launch_ps`` once (the collective's first teams start that late) and a step delay before every chunk a rank
  sends: hwLat less the latency mcsim's own step already has (its NICs' and its path's propagation and
  forwarding: mcsim.runs.protocol_plan), so a step costs NCCL's hwLat in all (or mcsim's own, if longer). Its
  ring's constants for the rings, its tree's for the trees (mcsim's double binary tree is NCCL's).

Not modelled: NCCL's caps on LL's and LL128's GPU-side rate (``llMaxBws``, ``perChMaxRingLL128Bws``: the
threads that write the flags; they bound LL below the wire at large sizes) and its tree's bandwidth factors (LL
1/3.8, LL128 7/9 inside a node, x0.92 for a tree Allreduce: GPU-side costs, not the wire's), its channels, and the
choice of a protocol per size (NCCL's tuner picks the fastest; mcsim runs the one asked for).

Source of every number: NVIDIA/nccl master (5067397c), src/graph/tuning.cc ``ncclTunerConstantsDefaults``
(baseLatencies, hwLatencies: the Ring and Tree rows; Tree's network row where a ring has one GPU per node, as
tuning.cc's ``ppn == 1``) and ``getNetOverhead`` (1 us, x3 for Simple, on the steps inside a node of a ring across
nodes).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Steps:
    """NCCL's latencies of one of its algorithms (Ring, Tree) under a protocol, ps."""

    launch_ps: int  # baseLat
    nvlink_ps: int  # hwLat[NVLINK]: a step to a GPU of the same node
    net_ps: int  # hwLat[NET]: a step to another node, several GPUs of the team a node
    net_one_per_node_ps: int  # a step to another node, one GPU of the team a node (tuning.cc's ppn == 1: Tree's NET)
    net_overhead_ps: int  # getNetOverhead (x3 for Simple): the least a step inside a node takes, the team across nodes


@dataclass(frozen=True, slots=True)
class Protocol:
    """One protocol: its lines (0: none) and NCCL's latencies of its ring and its tree."""

    line_b: int  # a line on the wire (0: no lines)
    line_data_b: int  # the data bytes of a full line
    ring: Steps
    tree: Steps

    def data_mtu_b(self, mtu_b: int) -> int:
        """The data bytes a packet of ``mtu_b`` payload carries: whole lines (C++ ProtocolLines::PerPacket)."""
        return mtu_b // self.line_b * self.line_data_b if self.line_b else mtu_b


US = 1_000_000  # ps in a microsecond
NET_OVERHEAD_PS = 1 * US  # getNetOverhead: Intel CPUs and the default (AMD: 2 us)
# "none": mcsim's own rings and trees, RDMA WRITEs with immediate and no GPU-side cost (every run before protocols;
# hosts without GPUs, as the SC'24 testbed's). The default: Results stay as they were. nccl-tests' figures need one
# of NCCL's: its large-message figures (PUBLISHED.md's Nodes rows) are Simple's, the protocol of the highest
# bandwidth in NCCL's model (LL x 0.5, LL128 x 0.92), which its tuner therefore picks for large messages. Ring:
# baseLat, hwLat NVLink and NET (Ring's; Tree's NET with one GPU a node), getNetOverhead; Tree: baseLat, hwLat
# NVLink and NET (Tree's), no overhead floor (tuning.cc adds it to rings only).
PROTOCOLS: dict[str, Protocol | None] = {
    "none": None,
    "simple": Protocol(
        0,
        0,
        ring=Steps(8_400_000, 3_400_000, 14 * US, 14 * US, 3 * NET_OVERHEAD_PS),
        tree=Steps(8_400_000, 4 * US, 14 * US, 14 * US, 0),
    ),
    "ll": Protocol(
        16,
        8,
        ring=Steps(6_600_000, 600_000, 2_700_000, 5 * US, NET_OVERHEAD_PS),
        tree=Steps(6_800_000, 600_000, 5 * US, 5 * US, 0),
    ),
    "ll128": Protocol(
        128,
        120,
        ring=Steps(14 * US, 1_900_000, 4 * US, 8_500_000, NET_OVERHEAD_PS),
        tree=Steps(14 * US, 1_250_000, 8_500_000, 8_500_000, 0),
    ),
}
DEFAULT_PROTOCOL = "none"


def ring_mtu_b(name: str, mtu_b: int) -> int:
    """The data bytes in one packet of a ring under protocol ``name`` at MTU ``mtu_b``."""
    protocol = PROTOCOLS[name]
    return mtu_b if protocol is None else protocol.data_mtu_b(mtu_b)
