# SPDX-License-Identifier: GPL-2.0-only
"""The DPA module's binding: an ns3::mcsim::CompletionSource that offers completions straight to one
completion processor (no network), and what it measured.

mcsim.runs.dpa.saturate runs one; the processor's factory comes from mcsim.native.processors.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from mcsim.config.rdma import CompletionProcessorConfig
from mcsim.native import abi, runtime
from mcsim.native.arrays import read_counters, read_u64
from mcsim.native.processors import processor_factory


def start_source(
    processor: CompletionProcessorConfig, *, completions: int, endpoints: int, chunk_b: int, staged: bool
) -> abi.Handle:
    """A CompletionSource that offers ``completions`` of ``chunk_b`` at time 0, round-robin over
    ``endpoints`` QPs, to one ``processor`` (on the staging path if ``staged``)."""
    lib = runtime.load()
    source = abi.Handle(lib, "ns3::mcsim::CompletionSource")
    with runtime.disposed_on_error(source):  # not handed to a Simulation yet
        lib.mcsim_source_setup(source, processor_factory(processor))
        lib.mcsim_source_start(source, completions, endpoints, chunk_b, staged, 0)
    return source


def processed_ps(source: abi.Handle) -> np.ndarray:
    """When each completion was processed, in processing order (after the run)."""
    lib = runtime.load()
    return read_u64(lib.mcsim_source_processed(source), partial(lib.mcsim_source_processed_ps, source))


def busy_ps(source: abi.Handle) -> int:
    """The processor's busy time, summed over its threads (after the run)."""
    return int(runtime.load().mcsim_source_busy_ps(source))


def dpa_thread_counters(source: abi.Handle, threads: int) -> dict[str, np.ndarray]:
    """The "dpa_thread" counters of each of a DPA processor's ``threads`` threads (after the run)."""
    return read_counters("dpa_thread", threads, source)
