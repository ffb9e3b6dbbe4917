# SPDX-License-Identifier: GPL-2.0-only
"""Completion processors' binding: a processor config (HostCpuConfig, DpaConfig) -> the ns-3
ObjectFactory that makes one processor per host (an RdmaStack's, or a CompletionSource's).

The configs are frozen data in mcsim.config.rdma and mcsim.config.dpa; a processor model written
outside mcsim brings its own ``factory()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcsim.config.dpa import DpaConfig
from mcsim.config.rdma import CompletionProcessorConfig, HostCpuConfig, is_processor_config
from mcsim.errors import McsimError
from mcsim.native import abi
from mcsim.native.attributes import factory_of


def _processor_factory(processor: Any) -> abi.Factory:
    """The factory of a processor config whose fields name their attributes (config.ns3_attributes)."""
    return factory_of(processor, processor.TYPE_ID)


# completion processor config type -> what makes its ns-3 ObjectFactory (one processor per host)
PROCESSOR_FACTORIES: dict[type, Callable[[Any], abi.Factory]] = {
    HostCpuConfig: _processor_factory,
    DpaConfig: _processor_factory,
}


def processor_factory(processor: CompletionProcessorConfig) -> abi.Factory:
    """The ns-3 ObjectFactory that makes one completion processor per host from its config
    (HostCpuConfig, DpaConfig: PROCESSOR_FACTORIES, through mcsim.native.attributes.make_factory), or the
    config's own ``factory()`` (a processor model written outside mcsim)."""
    make = PROCESSOR_FACTORIES.get(type(processor))
    if make is None and callable(getattr(processor, "factory", None)):
        made: abi.Factory = processor.factory()  # type: ignore[attr-defined]
        return made
    if make is None or not is_processor_config(processor):
        raise McsimError(
            f"processor={processor!r} is not a completion processor config mcsim knows "
            f"(one of {', '.join(t.__name__ for t in PROCESSOR_FACTORIES)})"
        )
    return make(processor)
