# SPDX-License-Identifier: GPL-2.0-only
"""RDMA verbs over the fabric, like perftest: RC SEND, WRITE (with immediate), READ between host
pairs, and UD datagram streams to a host or a multicast group.

``run_verbs`` puts an RDMA NIC with a completion processor (the host CPU) on every host of a fabric
(on the run skeleton, mcsim.runs.assemble) and runs the operations. The settings and the workload
(RdmaConfig, RcOp, UdStream, ...) are frozen data in mcsim.config.rdma.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import networkx as nx

from mcsim.config.fabric import (
    RENAMED_KEYWORDS,
    FabricConfig,
    check_groups,
    check_pfc,
    check_renamed,
    check_run_arguments,
)
from mcsim.config.queue_trace import QueueTraceConfig
from mcsim.config.rdma import RcOp, RdmaConfig, UdStream, check_congestion_control, check_workload, fabric_config_for
from mcsim.errors import McsimError
from mcsim.result import VerbsResult
from mcsim.routing.layout import Layout, layout_of
from mcsim.runs.assemble import assembled


def run_verbs(
    g: nx.Graph[Any] | Layout,
    *,
    rc_ops: Sequence[RcOp] = (),
    ud_streams: Sequence[UdStream] = (),
    groups: Sequence[Sequence[int]] = (),
    rdma: RdmaConfig | None = None,
    fabric: FabricConfig | None = None,
    queue_trace: QueueTraceConfig | None = None,
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
    fabric
        Fabric settings (the name Scenario gives them; ``config=``, their old name, is refused with a hint); its
        header_b is replaced by the wire format's physical-layer
        overhead (0 for InfiniBand, 20 for RoCEv2), since the NIC sends real headers.
    queue_trace
        Sample the output queues of these ports (``VerbsResult.fabric.queue_trace``).
    fabric_options
        Passed on to mcsim.native.fabric.build (e.g. faults=...).
    """
    check_renamed("run_verbs", {k: v for k, v in fabric_options.items() if k in RENAMED_KEYWORDS})
    check_run_arguments(
        "run_verbs",
        rc_ops=(rc_ops, RcOp),
        ud_streams=(ud_streams, UdStream),
        rdma=(rdma, RdmaConfig),
        fabric=(fabric, FabricConfig),
        queue_trace=(queue_trace, QueueTraceConfig),
    )
    rdma = rdma or RdmaConfig()
    if not rc_ops and not ud_streams:
        raise McsimError("run_verbs: no RC ops and no UD streams given")
    layout = layout_of(g)
    check_groups("run_verbs", groups, layout.hosts)
    check_workload(layout.hosts, rc_ops, ud_streams, groups, rdma)
    config = fabric_config_for(rdma, fabric, "run_verbs")
    check_pfc("run_verbs", config, layout)
    check_congestion_control("run_verbs", layout, rdma)
    with assembled(layout, fabric_config=config, rdma_config=rdma, groups=groups, **fabric_options) as run:
        work = run.add_verbs(groups, rc_ops, ud_streams)
        run.run(queue_trace=queue_trace)
        return run.collect_verbs(work, len(rc_ops))
