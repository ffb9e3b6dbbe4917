# SPDX-License-Identifier: GPL-2.0-only
"""The RDMA binding: an ns3::mcsim::RdmaStack (a NIC and a completion processor per host) on a built
fabric, a VerbsWorkload of RC operations and UD streams on it, the stack's memory (verify mode) and
their counters.

Every packet carries the real header bytes of its opcode in the chosen wire format (InfiniBand or
RoCEv2). The settings and the workload (RdmaConfig, RcOp, UdStream, ...) are frozen data in
mcsim.config.rdma; mcsim.runs.verbs runs a workload; mcsim.native.processors makes the completion
processors' factories, mcsim.native.congestion the congestion controls'.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np

from mcsim.config.congestion import uses_int
from mcsim.config.fabric import destination
from mcsim.config.rdma import NIC, RC_QP, RC_VERBS, STACK, UD_QP, RcOp, RdmaConfig, UdStream
from mcsim.native import abi, runtime
from mcsim.native.arrays import i64, read_counters, read_u64, u32, u64
from mcsim.native.attributes import factory_of, set_attributes, set_attributes_of
from mcsim.native.congestion import congestion_factory, for_fabric
from mcsim.native.fabric import BuiltFabric
from mcsim.native.processors import processor_factory
from mcsim.result import VerbsResult, times_ps


def verbs_workload(
    stack: abi.Handle, groups: Sequence[Sequence[int]], rc_ops: Sequence[RcOp], ud_streams: Sequence[UdStream]
) -> abi.Handle:
    """An ns3::mcsim::VerbsWorkload on an RdmaStack: its UD groups, RC operations and UD streams
    (checked by mcsim.config.rdma.check_workload)."""
    lib = runtime.load()
    work = abi.Handle(lib, "ns3::mcsim::VerbsWorkload")
    with runtime.disposed_on_error(work):  # not handed to a Simulation yet
        lib.mcsim_verbs_setup(work, stack)
        for gid, members in enumerate(groups):
            arr = u32(sorted(members))
            lib.mcsim_verbs_add_ud_group(work, gid, arr, len(members))
        if rc_ops:
            lib.mcsim_verbs_add_rc_ops(
                work,
                u32([RC_VERBS[op.verb] for op in rc_ops]),
                u32([op.src for op in rc_ops]),
                u32([op.dst for op in rc_ops]),
                u64([op.size_b for op in rc_ops]),
                i64([op.start_ps for op in rc_ops]),
                len(rc_ops),
            )
        if ud_streams:
            lib.mcsim_verbs_add_ud_streams(
                work,
                u32([s.src for s in ud_streams]),
                u32([destination(s.dst, s.group) for s in ud_streams]),
                u32([s.count for s in ud_streams]),
                u32([s.size_b for s in ud_streams]),
                i64([s.start_ps for s in ud_streams]),
                len(ud_streams),
            )
    return work


def collect_verbs(work: abi.Handle, stack: abi.Handle, fab: BuiltFabric, n_ops: int) -> VerbsResult:
    """Every counter of a verbs run (after it, before the Simulation disposes its objects)."""
    lib = fab.lib
    times = read_u64(n_ops * 4, partial(lib.mcsim_verbs_rc_op_times, work)).reshape(-1, 4)
    rc = read_counters("rc_qp", 2 * n_ops, work)  # requester, responder
    ud = read_counters("ud_qp", lib.mcsim_verbs_n_ud_qps(work), work)
    nic = read_nic_counters(stack, fab.n_hosts)
    return VerbsResult(
        fabric=fab.collect(),
        rc_done_ps=times_ps(times[:, 0]),
        rc_responder_done_ps=times_ps(times[:, 1]),
        rc_requester={k: v[0::2].copy() for k, v in rc.items()},
        rc_responder={k: v[1::2].copy() for k, v in rc.items()},
        ud=ud,
        nic=nic,
    )


def read_nic_counters(stack: abi.Handle, n_hosts: int) -> dict[str, np.ndarray]:
    """The "nic" counters of every host of an RdmaStack, as numpy arrays."""
    return read_counters("nic", n_hosts, stack)


def read_cc_counters(stack: abi.Handle, n_hosts: int) -> dict[str, np.ndarray]:
    """The "cc" counters (congestion control: CNPs sent and received, CE marks) of every host's NIC."""
    return read_counters("cc", n_hosts, stack)


def build_stack(fab: BuiltFabric, rdma: RdmaConfig) -> abi.Handle:
    """An ns3::mcsim::RdmaStack on a built fabric: a NIC and a completion processor per host, and per QP a
    congestion control of ``rdma.congestion``'s (none: the line rate).

    HPCC: its base RTT, if 0, becomes the fabric's (mcsim.native.congestion.for_fabric); a congestion control that
    uses INT has the fabric's INT counters read.
    """
    cc = None if rdma.congestion is None else for_fabric(rdma.congestion, fab, rdma)
    if uses_int(cc):
        fab.telemetry = True
    nic, rc, ud = factory_of(rdma, NIC), factory_of(rdma.rc, RC_QP), factory_of(rdma, UD_QP)
    processor = processor_factory(rdma.processor)
    stack = abi.Handle(fab.lib, STACK)
    with runtime.disposed_on_error(stack):  # not handed to a Simulation yet
        set_attributes_of(stack, rdma)
        if cc is not None:
            fab.lib.mcsim_stack_set_congestion(stack, congestion_factory(cc))
        fab.lib.mcsim_stack_setup(stack, fab.cxx, nic, processor, rc, ud)
    return stack


def enable_memory(stack: abi.Handle, host: int, size_b: int) -> None:
    """Verify mode: give ``host``'s NIC a region of ``size_b`` real bytes (zeroed); its packets then carry them."""
    runtime.load().mcsim_stack_enable_memory(stack, host, size_b)


def write_memory(stack: abi.Handle, host: int, offset_b: int, data: np.ndarray) -> None:
    """Verify mode: copy ``data`` (bytes) into ``host``'s region at ``offset_b``."""
    runtime.load().mcsim_stack_write_memory(
        stack, host, offset_b, np.ascontiguousarray(data, dtype=np.uint8), data.size
    )


def read_memory(stack: abi.Handle, host: int, size_b: int) -> np.ndarray:
    """Verify mode: the first ``size_b`` bytes of ``host``'s region, as a new uint8 array."""
    out = np.zeros(size_b, dtype=np.uint8)
    runtime.load().mcsim_stack_read_memory(stack, host, 0, out, out.size)
    return out


PCAP_WRITER = "ns3::mcsim::PcapWriter"


def open_pcap(
    stack: abi.Handle,
    fabric: abi.Handle,
    path: str,
    traced: tuple[Sequence[int], Sequence[tuple[int, int]]],
    max_packets: int,
    max_bytes: int,
) -> abi.Handle:
    """A C++ PcapWriter writing ``path`` in the stack's wire format (whole frames if its NICs hold memory),
    tracing ``traced`` = (the NICs of these hosts, these (node, port) ports) (before the run)."""
    lib = runtime.load()
    writer = abi.Handle(lib, PCAP_WRITER)
    with runtime.disposed_on_error(writer):
        set_attributes(writer, "PcapWriter", MaxPackets=max_packets, MaxBytes=max_bytes)
        lib.mcsim_pcap_open(writer, stack, path.encode())
        hosts, ports = traced
        for host in hosts:
            lib.mcsim_pcap_attach(writer, stack, host)
        for node, port in ports:
            lib.mcsim_pcap_attach_port(writer, fabric, node, port)
    return writer


def close_pcap(writer: abi.Handle) -> tuple[int, int]:
    """Close the file after the run: (frames written, frames over a cap)."""
    out = np.zeros(2, dtype=np.uint64)
    runtime.load().mcsim_pcap_close(writer, out, out.size)
    return int(out[0]), int(out[1])
