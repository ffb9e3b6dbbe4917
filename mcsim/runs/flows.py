# SPDX-License-Identifier: GPL-2.0-only
"""Raw flows over a fabric: build it (mcsim.runs.assemble), run the flows, return every counter.

The flows and the fabric's settings (Flow, FabricConfig, Faults) are frozen data in mcsim.config.fabric.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import networkx as nx

from mcsim.config.fabric import (
    FabricConfig,
    Faults,
    Flow,
    check_flows,
    check_groups,
    check_pfc,
    check_renamed,
    check_run_arguments,
)
from mcsim.config.queue_trace import QueueTraceConfig
from mcsim.errors import McsimError
from mcsim.result import FabricResult
from mcsim.routing.layout import Layout, layout_of
from mcsim.runs.assemble import assembled


def simulate(
    g: nx.Graph[Any] | Layout,
    flows: Sequence[Flow],
    *,
    groups: Sequence[Sequence[int]] = (),
    fabric: FabricConfig | None = None,
    faults: Faults | None = None,
    queue_trace: QueueTraceConfig | None = None,
    **renamed: Any,
) -> FabricResult:
    """Build the fabric of ``g``, run raw ``flows`` to completion, and return every counter.

    ``g`` is a topology (:mod:`mcsim.topology`) or its Layout; it is laid out here, once. ``fabric``: the
    fabric's settings (FabricConfig; default FabricConfig()), the name Scenario and run_verbs give them.

    A flow with ``group=i`` multicasts to ``groups[i]`` (the sender must be a member; every other
    member receives one copy). With ``queue_trace``, the output queues of its ports are sampled
    (``FabricResult.queue_trace``). See :func:`mcsim.native.fabric.build` for the other parameters.

    Raises
    ------
    McsimError
        A bad flow, group, fault or setting, before any C++ object exists; ``config=`` (the old name of
        ``fabric=``) with a hint.
    """
    check_renamed("simulate", renamed)
    check_run_arguments(
        "simulate",
        flows=(flows, Flow),
        fabric=(fabric, FabricConfig),
        faults=(faults, Faults),
        queue_trace=(queue_trace, QueueTraceConfig),
    )
    config = fabric or FabricConfig()
    layout = layout_of(g)
    check_groups("simulate", groups, layout.hosts)
    check_flows(layout, flows, len(groups), config)
    check_pfc("simulate", config, layout)
    for i, f in enumerate(flows):
        if f.group is not None and f.src not in groups[f.group]:
            raise McsimError(f"flow {i}: src={f.src} is not a member of group {f.group}")
    expected = sum(-(-f.size_b // f.mtu_b) * f.receivers(groups) for f in flows)
    with assembled(layout, fabric_config=config, groups=groups, faults=faults) as run:
        run.add_flows(flows)
        run.run(queue_trace=queue_trace)
        return replace(run.collect(), expected_rx_packets=expected)
