# SPDX-License-Identifier: GPL-2.0-only
"""A queue trace's settings as frozen data: which ports' output queues to sample, how often, how many samples
to keep (no C++). ``Scenario.run(queue_trace=...)``, ``simulate(..., queue_trace=...)`` and
``run_verbs(..., queue_trace=...)`` take it; the samples come back as ``FabricResult.queue_trace``
(:class:`mcsim.result.QueueTrace`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from mcsim.config.ns3_attributes import sets
from mcsim.errors import McsimError, require_int
from mcsim.routing.layout import Layout
from mcsim.units import CLOCK_LIMIT, MAX_SIMULATED_PS

QUEUE_SAMPLER = "ns3::mcsim::QueueSampler"  # the C++ type QueueTraceConfig sets attributes of
DEFAULT_QUEUE_INTERVAL_PS = 1_000_000  # QueueSampler::DEFAULT_INTERVAL_PS: 1 us, tens of samples per DCQCN timer
DEFAULT_QUEUE_MAX_SAMPLES = 1_000_000  # QueueSampler::DEFAULT_MAX_SAMPLES per port: a run of 1 s at 1 us
QUEUE_SAMPLE_B = 8  # one sample in C++ (a uint64 of queue bytes); Python's int64 arrays take as much again
# what one trace may keep over all its ports: 2**27 samples, 1 GiB in C++
QUEUE_TRACE_MAX_SAMPLES = 2**27


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueTraceConfig:
    """Sample the output queue of each port in ``ports`` (``(node, port)`` as :class:`PcapConfig` and
    :class:`Faults` name them) every ``interval_ps`` from time 0 to the run's end: its wire bytes committed and
    not yet sent plus those waiting (for credits or a PFC pause), as ECN's RED reads them when a packet joins.
    A sample at time t is the queue once every event at t has run. Sampling adds no event: the run's results
    are those of the same run untraced, bit for bit (fabric.md, "Queue trace"). At most ``max_samples`` are kept
    per port; the later ones are counted (``QueueTrace.left_out``)."""

    ports: tuple[tuple[int, int], ...]
    interval_ps: int = field(default=DEFAULT_QUEUE_INTERVAL_PS, metadata=sets(QUEUE_SAMPLER, "Interval"))
    max_samples: int = field(default=DEFAULT_QUEUE_MAX_SAMPLES, metadata=sets(QUEUE_SAMPLER, "MaxSamples"))

    def __post_init__(self) -> None:
        where = "QueueTraceConfig"
        if not isinstance(self.ports, tuple) or not self.ports:
            raise McsimError(f"{where}: ports={self.ports!r}: give a tuple of (node, port) pairs, e.g. ((16, 0),)")
        for p in self.ports:
            if not isinstance(p, tuple) or len(p) != 2:
                raise McsimError(f"{where}: ports={self.ports!r}: each port is a (node, port) pair, not {p!r}")
            require_int(where, "ports", p[0], lo=0)
            require_int(where, "ports", p[1], lo=0)
        if len(set(self.ports)) != len(self.ports):
            raise McsimError(f"{where}: ports={self.ports!r} names one twice")
        require_int(where, "interval_ps", self.interval_ps, lo=1, hi=MAX_SIMULATED_PS, why=f" ({CLOCK_LIMIT})")
        require_int(where, "max_samples", self.max_samples, lo=1)
        total = len(self.ports) * self.max_samples
        if total > QUEUE_TRACE_MAX_SAMPLES:
            raise McsimError(
                f"{where}: {len(self.ports)} ports x max_samples={self.max_samples} = {total} samples is more than "
                f"a trace keeps ({QUEUE_TRACE_MAX_SAMPLES} samples, {QUEUE_TRACE_MAX_SAMPLES * QUEUE_SAMPLE_B >> 30} "
                "GiB); trace fewer ports or lower max_samples"
            )

    def check(self, layout: Layout) -> None:
        """Raise McsimError (one line) for a port the topology of ``layout`` does not have."""
        for node, port in self.ports:
            layout.check_port("queue trace", node, port)
