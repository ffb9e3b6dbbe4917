# SPDX-License-Identifier: GPL-2.0-only
"""RDMA verbs over the fabric: NICs, RC and UD queue pairs, completion processing.

``run_verbs`` puts an RDMA NIC with a completion processor (the host CPU) on every host of a
fabric and runs verbs-level operations, like perftest: RC SEND, WRITE (with immediate), READ
between host pairs, and UD datagram streams to a host or a multicast group. Every packet carries
the real header bytes of its opcode in the chosen wire format (InfiniBand or RoCEv2). The settings
and the workload (RdmaConfig, RcOp, UdStream, ...) are frozen data in mcsim.config.rdma; this module
makes the ns-3 objects from them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import networkx as nx
import numpy as np

from mcsim import fabric, native, runtime
from mcsim.arrays import i64, read_counters, read_u64, u32, u64
from mcsim.attributes import make_factory
from mcsim.config.dpa import DpaConfig
from mcsim.config.fabric import FabricConfig, destination
from mcsim.config.ns3_attributes import attributes_of
from mcsim.config.rdma import (
    NIC,
    RC_QP,
    RC_VERBS,
    UD_QP,
    CompletionProcessorConfig,
    HostCpuConfig,
    RcOp,
    RdmaConfig,
    UdStream,
    check_workload,
    fabric_config_for,
    is_processor_config,
)
from mcsim.errors import McsimError
from mcsim.result import VerbsResult, times_ps
from mcsim.routing.layout import Layout, layout_of
from mcsim.simulation import Simulation


def run_verbs(
    g: nx.Graph | Layout,
    *,
    rc_ops: Sequence[RcOp] = (),
    ud_streams: Sequence[UdStream] = (),
    groups: Sequence[Sequence[int]] = (),
    rdma: RdmaConfig | None = None,
    config: FabricConfig | None = None,
    **fabric_options: Any,
) -> VerbsResult:
    """Run RC operations and UD streams on the fabric of ``g``; return times and counters.

    Parameters
    ----------
    g
        A topology (mcsim.topology) or its Layout.
    rc_ops, ud_streams
        The workload; each RC op gets its own connected QP pair, each UD receiver one UD QP
        (per group it is a member of, plus one for unicast datagrams).
    groups
        Multicast groups (lists of member hosts); UdStream.group indexes them.
    rdma
        NIC, QP and host-CPU settings.
    config
        Fabric settings; its header_b is replaced by the wire format's physical-layer
        overhead (0 for InfiniBand, 20 for RoCEv2), since the NIC sends real headers.
    fabric_options
        Passed on to fabric.build (e.g. faults=...).
    """
    rdma = rdma or RdmaConfig()
    if not rc_ops and not ud_streams:
        raise McsimError("run_verbs: no RC ops and no UD streams given")
    layout = layout_of(g)
    check_workload(layout.hosts, rc_ops, ud_streams, groups, rdma)
    config = fabric_config_for(rdma, config, "run_verbs")
    with Simulation() as sim:
        fab = sim.own_fabric(fabric.build(layout, groups=groups, config=config, **fabric_options))
        lib = sim.lib
        stack = sim.own_stack(build_stack(fab, rdma))
        work = sim.own_app(native.Handle(lib, "ns3::mcsim::VerbsWorkload"))
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
        sim.run()
        return _collect(work, stack, fab, len(rc_ops))


def _collect(work: native.Handle, stack: native.Handle, fab: fabric.BuiltFabric, n_ops: int) -> VerbsResult:
    lib = fab.lib
    times = read_u64(n_ops * 4, partial(lib.mcsim_verbs_rc_op_times, work)).reshape(-1, 4)
    rc = read_counters("rc_qp", 2 * n_ops, partial(lib.mcsim_verbs_rc_qp_counters, work))  # requester, responder
    ud = read_counters("ud_qp", lib.mcsim_verbs_n_ud_qps(work), partial(lib.mcsim_verbs_ud_qp_counters, work))
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


def read_nic_counters(stack: native.Handle, n_hosts: int) -> dict[str, np.ndarray]:
    """The "nic" counters of every host of an RdmaStack, as numpy arrays."""
    return read_counters("nic", n_hosts, partial(runtime.load().mcsim_stack_host_counters, stack))


def build_stack(fab: fabric.BuiltFabric, rdma: RdmaConfig) -> native.Handle:
    """An ns3::mcsim::RdmaStack on a built fabric: a NIC and a completion processor per host."""
    nic = make_factory(NIC, "RdmaConfig", **attributes_of(rdma, NIC))
    rc = make_factory(RC_QP, "RcConfig", **attributes_of(rdma.rc, RC_QP))
    ud = make_factory(UD_QP, "RdmaConfig", **attributes_of(rdma, UD_QP))
    processor = processor_factory(rdma.processor)
    stack = native.Handle(fab.lib, "ns3::mcsim::RdmaStack")
    try:
        fab.lib.mcsim_stack_setup(stack, fab.cxx, nic, processor, rc, ud, rdma.region_b)
    except BaseException:
        runtime.dispose(stack)  # not handed to a Simulation yet
        raise
    return stack


def _processor_factory(processor: Any) -> native.Factory:
    """The factory of a processor config whose fields name their attributes (config.ns3_attributes)."""
    return make_factory(processor.TYPE_ID, type(processor).__name__, **attributes_of(processor, processor.TYPE_ID))


# completion processor config type -> what makes its ns-3 ObjectFactory (one processor per host)
PROCESSOR_FACTORIES: dict[type, Callable[[Any], native.Factory]] = {
    HostCpuConfig: _processor_factory,
    DpaConfig: _processor_factory,
}


def processor_factory(processor: CompletionProcessorConfig) -> native.Factory:
    """The ns-3 ObjectFactory that makes one completion processor per host from its config
    (HostCpuConfig, DpaConfig: PROCESSOR_FACTORIES, through mcsim.attributes.make_factory), or the
    config's own ``factory()`` (a processor model written outside mcsim)."""
    make = PROCESSOR_FACTORIES.get(type(processor))
    if make is None and callable(getattr(processor, "factory", None)):
        return processor.factory()  # type: ignore[attr-defined]
    if make is None or not is_processor_config(processor):
        raise McsimError(
            f"processor={processor!r} is not a completion processor config mcsim.rdma knows "
            f"(one of {', '.join(t.__name__ for t in PROCESSOR_FACTORIES)})"
        )
    return make(processor)
