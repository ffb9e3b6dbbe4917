# SPDX-License-Identifier: GPL-2.0-only
"""A multi-core SmartNIC (BlueField-3 DPA) as the receive-completion processor, simulated: a stream
over many endpoints (receive_stream) and a processor alone (saturate).

Its config, profiles and closed forms: mcsim.config.dpa. The model, its sharing and calibration, and
how a stream drives many threads: mcsim/ns3_modules/dpa/doc/dpa.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

from mcsim.config.dpa import RECEIVE_PATHS, DpaConfig, rdma_config
from mcsim.config.rdma import CompletionProcessorConfig, UdStream, is_processor_config
from mcsim.errors import McsimError, pick, require_int, require_positive
from mcsim.native.dpa import busy_ps, dpa_thread_counters, processed_ps, start_source
from mcsim.native.simulation import Simulation
from mcsim.result import VerbsResult
from mcsim.runs.verbs import run_verbs
from mcsim.topology.physics import DEFAULT_DELAY_PS, Link
from mcsim.units import PS_PER_S


def switched_pair(link: Link) -> nx.Graph[Any]:
    """Two hosts on one switch (multicast needs a switch): host 0 - switch 2 - host 1."""
    g: nx.Graph[int] = nx.Graph(name="switched-pair")
    for h in (0, 1):
        g.add_node(h, role="host", tier=0, name=f"h{h}")
    g.add_node(2, role="switch", tier=1, name="s0")
    for h in (0, 1):
        g.add_edge(h, 2, **link.edge_attrs())
    return g


@dataclass(frozen=True, slots=True)
class ReceiveResult:
    """What receive_stream measured at the receiver; per-endpoint arrays are numpy."""

    endpoints: int
    offered: np.ndarray  # datagrams sent to each endpoint
    received: np.ndarray  # datagrams that found a posted buffer
    overruns: np.ndarray  # datagrams dropped for want of one
    processed: np.ndarray  # completions processed
    min_posted: np.ndarray  # fewest buffers posted at any time
    busy_ps: int  # processor busy time, summed over its threads
    end_ps: int  # when the last event ran
    verbs: VerbsResult


def receive_stream(
    rate_bps: int,
    chunk_b: int,
    *,
    path: str,
    processor: CompletionProcessorConfig,
    endpoints: int,
    datagrams: int,
    rq_depth: int = 32,
    delay_ps: int = DEFAULT_DELAY_PS,
) -> ReceiveResult:
    """Host 0 streams ``datagrams`` UD chunks of ``chunk_b`` at line rate to host 1, round-robin
    over ``endpoints`` endpoints (UD QPs of as many two-member multicast groups); host 1's
    completions go to ``processor`` (DpaConfig or HostCpuConfig). Endpoint e is QP e on host 1,
    so with a DPA of T threads it is served by thread e mod T.

    The hosts hang off one switch (switched_pair), both links at ``rate_bps`` with no line code (so
    it is also their data rate); each endpoint has ``rq_depth`` receive buffers. Every datagram
    carries UD_MULTICAST_HEADER_B header bytes.
    """
    pick("receive path", path, RECEIVE_PATHS)
    require_int("receive_stream", "endpoints", endpoints, lo=1)
    require_int("receive_stream", "datagrams", datagrams, lo=endpoints)
    link = Link(rate_bps=rate_bps, delay_ps=delay_ps)
    counts = [datagrams // endpoints + (1 if e < datagrams % endpoints else 0) for e in range(endpoints)]
    r = run_verbs(
        switched_pair(link),
        ud_streams=[UdStream(src=0, group=e, size_b=chunk_b, count=c) for e, c in enumerate(counts)],
        groups=[[0, 1]] * endpoints,
        rdma=rdma_config(path, processor, rq_depth=rq_depth),
    )
    rows = np.flatnonzero(r.ud["host"] == 1)
    rows = rows[np.argsort(r.ud["group"][rows])]
    return ReceiveResult(
        endpoints=endpoints,
        offered=np.asarray(counts, dtype=np.uint64),
        received=r.ud["rx_packets"][rows],
        overruns=r.ud["overruns"][rows],
        processed=r.ud["processed"][rows],
        min_posted=r.ud["min_posted"][rows],
        busy_ps=int(r.nic["cpu_busy_ps"][1]),
        end_ps=int(r.fabric.end_ps),
        verbs=r,
    )


@dataclass(frozen=True, slots=True)
class SaturationResult:
    """What saturate measured: the processor's completion rate with more work than it can do."""

    done_ps: np.ndarray  # when each completion was processed, in processing order
    rate_per_s: float  # completions/s over the middle half of the run (steady state)
    busy_ps: int  # processor busy time, summed over its threads
    threads: dict[str, np.ndarray] | None  # per DPA thread: "dpa_thread" counters (None for HostCpu)


def saturate(
    processor: CompletionProcessorConfig,
    *,
    path: str = "zero_copy",
    chunk_b: int = 4096,
    completions: int = 20_000,
    endpoints: int | None = None,
) -> SaturationResult:
    """Offer ``completions`` at once, round-robin over ``endpoints`` QPs (default: one per DPA
    thread), to ``processor`` alone (no network) and measure how fast it works through them.

    The rate is taken between the first and the third quarter of the completions, when every
    thread is busy (the first completions start with the DPA partly idle, the last ones end it).
    """
    staged = pick("receive path", path, RECEIVE_PATHS)
    if not is_processor_config(processor):
        raise McsimError(
            f"saturate: processor={processor!r} is not a completion processor config; "
            "use DpaConfig() or HostCpuConfig()"
        )
    endpoints = endpoints if endpoints is not None else getattr(processor, "threads", 1)
    require_int("saturate", "endpoints", endpoints, lo=1)
    require_int("saturate", "completions", completions, lo=8)
    require_positive("saturate", chunk_b=chunk_b)
    with Simulation() as sim:
        source = sim.own_app(
            start_source(processor, completions=completions, endpoints=endpoints, chunk_b=chunk_b, staged=staged)
        )
        sim.run()
        done = processed_ps(source)
        busy = busy_ps(source)
        threads = dpa_thread_counters(source, processor.threads) if isinstance(processor, DpaConfig) else None
    lo, hi = len(done) // 4, 3 * len(done) // 4
    rate = (hi - lo) * PS_PER_S / float(done[hi] - done[lo])
    return SaturationResult(done_ps=done, rate_per_s=rate, busy_ps=busy, threads=threads)


__all__ = [
    "ReceiveResult",
    "SaturationResult",
    "receive_stream",
    "saturate",
    "switched_pair",
]
