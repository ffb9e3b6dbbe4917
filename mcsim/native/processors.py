# SPDX-License-Identifier: GPL-2.0-only
"""Completion processors' binding: a processor config (HostCpuConfig, DpaConfig) -> the ns-3
ObjectFactory that makes one processor per host (an RdmaStack's, or a CompletionSource's).

The configs are frozen data in mcsim.config.rdma and mcsim.config.dpa; a processor model written
outside mcsim brings its own ``factory()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcsim.config.dpa import PLACEMENTS, DpaConfig
from mcsim.config.rdma import CompletionProcessorConfig, HostCpuConfig, is_processor_config
from mcsim.errors import McsimError
from mcsim.native import abi
from mcsim.native.attributes import make_factory


def _host_cpu_factory(cpu: HostCpuConfig) -> abi.Factory:
    return make_factory(cpu.TYPE_ID, "HostCpuConfig", PerCompletionCost=cpu.completion_ps, MemcpyRate=cpu.memcpy_bps)


def _dpa_factory(dpa: DpaConfig) -> abi.Factory:
    return make_factory(
        dpa.TYPE_ID,
        "DpaConfig",
        Cores=dpa.cores,
        ThreadsPerCore=dpa.threads_per_core,
        Threads=dpa.threads,
        Placement=PLACEMENTS[dpa.placement],
        ClockHz=dpa.clock_hz,
        ZeroCopyCycles=dpa.zero_copy_cycles,
        StagingCycles=dpa.staging_cycles,
        IssueShare=dpa.issue_share,
        CoreContention=dpa.core_contention,
        LoopbackRate=dpa.loopback_bps,
    )


# completion processor config type -> what makes its ns-3 ObjectFactory (one processor per host)
PROCESSOR_FACTORIES: dict[type, Callable[[Any], abi.Factory]] = {
    HostCpuConfig: _host_cpu_factory,
    DpaConfig: _dpa_factory,
}


def processor_factory(processor: CompletionProcessorConfig) -> abi.Factory:
    """The ns-3 ObjectFactory that makes one completion processor per host from its config
    (HostCpuConfig, DpaConfig: PROCESSOR_FACTORIES, through mcsim.native.attributes.make_factory), or the
    config's own ``factory()`` (a processor model written outside mcsim)."""
    make = PROCESSOR_FACTORIES.get(type(processor))
    if make is None and callable(getattr(processor, "factory", None)):
        return processor.factory()  # type: ignore[attr-defined]
    if make is None or not is_processor_config(processor):
        raise McsimError(
            f"processor={processor!r} is not a completion processor config mcsim knows "
            f"(one of {', '.join(t.__name__ for t in PROCESSOR_FACTORIES)})"
        )
    return make(processor)
