# SPDX-License-Identifier: GPL-2.0-only
"""The one run skeleton: a Simulation, its fabric, its RDMA stack, then teams, jobs, verbs or flows, run, collect.
A run of collectives (mcsim.runs.scenario), of jobs (mcsim.runs.jobs), of verbs (mcsim.runs.verbs) and of raw
flows (mcsim.runs.flows) build on it and reach mcsim.native only through here; each keeps the order of its own
native calls (and so every result, bit for bit). (A completion processor alone, mcsim.runs.dpa.saturate, has no
fabric.)

::

    with assembled(layout, groups=..., reductions=..., fabric=..., faults=..., rdma=..., attributes=...) as run:
        team = run.start_team(spec)          # or run.setup_team(spec) and run.add_job(...)
        run.run()
        stats, nic, fabric = run.team_stats(team), run.nic_counters(), run.collect()
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mcsim.config.collectives import TeamSpec
from mcsim.config.fabric import FabricConfig, Flow
from mcsim.config.queue_trace import QueueTraceConfig
from mcsim.config.rdma import PcapConfig, RcOp, RdmaConfig, UdStream
from mcsim.native import collectives, fabric, jobs, library, rdma, runtime
from mcsim.native.attributes import set_attributes_of
from mcsim.native.fabric import BuiltFabric, Reduction, plan_reductions
from mcsim.native.jobs import ACKED, ALL_RANKS, ARRIVED, TRANSFER, Messages
from mcsim.native.simulation import Simulation
from mcsim.result import FabricResult, VerbsResult
from mcsim.routing.layout import Layout
from mcsim.runs import packet_trace
from mcsim.runs.verify import Expected

# what the kinds of run name of native/ (a job's step kinds and message states, the fabric's reductions)
__all__ = [
    "ACKED",
    "ALL_RANKS",
    "ARRIVED",
    "TRANSFER",
    "Assembly",
    "Messages",
    "Reduction",
    "assembled",
    "build_versions",
    "load",
    "plan_reductions",
]


def build_versions(sources: Path) -> dict[str, str]:
    """The C++ build every run loads: the ns-3 wheel's version and the build key of ``sources`` (the models' C++)
    with this toolchain. An environment in which the models cannot be loaded (a cache folder that cannot be
    written, no compiler) is one McsimError line."""
    library.check_environment()
    wheel = library.find_ns3()
    return {"ns3": wheel.version, "build_key": library.build_key(sources, library.find_toolchain(), wheel)}


def load() -> None:
    """Load the C++ models (built first if their sources changed): a worker does, before its first run."""
    runtime.load()


@dataclass(frozen=True, slots=True)
class Assembly:
    """A Simulation with its fabric and RDMA stack built: what a run adds to it (teams, jobs), runs, and reads."""

    sim: Simulation
    fabric: BuiltFabric
    stack: Any

    @property
    def reductions(self) -> list[Reduction]:
        """The fabric's in-network reductions (their aggregation trees), as fabric.build planned them."""
        return list(self.fabric.reductions)

    def fill(self, expected: Expected, size: int, ranks: Sequence[int] | None = None) -> None:
        """Verify mode: every host 0..P-1 gets a region of real bytes; contributors hold their input (host h that of
        rank ``ranks[h]``: a hierarchical collective's output position; by default rank h)."""
        for host in range(expected.ranks):
            rdma.enable_memory(self.stack, host, size)
            held = expected.input(host if ranks is None else ranks[host])
            if held is not None:
                offset, data = held
                rdma.write_memory(self.stack, host, offset, data)

    def start_team(self, spec: TeamSpec, *, after: Sequence[Any] = (), events: bool = False) -> Any:
        """A collective team, started at 0 (or once every rank of every team in ``after`` has finished); ``events``:
        its ranks record their protocol events."""
        team = self.sim.own_app(collectives.start_team(self.stack, spec, after=after))
        if events:
            collectives.record_events(team)
        return team

    def setup_team(self, spec: TeamSpec) -> Any:
        """A collective team, set up and not started (a job starts it)."""
        return self.sim.own_app(collectives.setup_team(self.stack, spec))

    def add_job(
        self,
        j: int,
        compute_units: int,
        hosts: Sequence[int],
        steps: list[Any],
        dependencies: list[list[tuple[int, int]]],
        messages: Messages,
    ) -> Any:
        """Job j's C++ Job, started at 0 (steps: its teams, compute durations and TRANSFER)."""
        return self.sim.own_app(jobs.build_job(j, compute_units, hosts, steps, dependencies, self.stack, messages))

    def add_flows(self, flows: Sequence[Flow]) -> None:
        """Raw traffic sources on the fabric (checked by mcsim.runs.flows.simulate)."""
        self.fabric.add_flows(flows)

    def add_verbs(self, groups: Sequence[Sequence[int]], rc_ops: Sequence[RcOp], ud_streams: Sequence[UdStream]) -> Any:
        """RDMA verbs on the stack: its UD groups, RC operations and UD streams (checked by run_verbs)."""
        return self.sim.own_app(rdma.verbs_workload(self.stack, groups, rc_ops, ud_streams))

    def collect_verbs(self, work: Any, n_ops: int) -> VerbsResult:
        """Every counter of a verbs run."""
        return rdma.collect_verbs(work, self.stack, self.fabric, n_ops)

    def run(
        self,
        *,
        pcap: PcapConfig | None = None,
        queue_trace: QueueTraceConfig | None = None,
        layout: Layout | None = None,
    ) -> tuple[tuple[str, int, int], ...] | None:
        """Run the simulation to its end; with ``pcap`` the frames of its hosts (on ``layout``) go to pcap files
        (returned), with ``queue_trace`` the output queues of its ports are sampled."""
        writers = []
        if pcap is not None:
            assert layout is not None, "a pcap trace names its hosts' ports: the run's layout"
            writers = self._open_writers(pcap, layout)
        if queue_trace is not None:
            self.sim.own_app(self.fabric.sample_queues(queue_trace))
        self.sim.run()
        return tuple((path, *rdma.close_pcap(w)) for path, w in writers) if pcap is not None else None

    def _open_writers(self, pcap: PcapConfig, layout: Layout) -> list[tuple[str, Any]]:
        """A pcap writer per host and per port (owned by the simulation), checked first: (its file, the writer)."""
        packet_trace.check_pcap(pcap, layout)
        files: list[tuple[str, tuple[Sequence[int], Sequence[tuple[int, int]]]]] = [
            (pcap.path(h), ((h,), ())) for h in pcap.hosts
        ] + [(pcap.port_path(n, p), ((), ((n, p),))) for n, p in pcap.ports]
        return [
            (
                path,
                self.sim.own_app(
                    rdma.open_pcap(self.stack, self.fabric.cxx, path, traced, pcap.max_packets, pcap.max_bytes)
                ),
            )
            for path, traced in files
        ]

    def team_stats(self, team: Any) -> dict[str, np.ndarray]:
        return collectives.team_stats(team)

    def team_events(self, team: Any, index: int) -> np.ndarray:
        return collectives.team_events(team, index)

    def timeline(self, job: Any, steps: int, ranks: int) -> np.ndarray:
        return jobs.timeline(job, steps, ranks)

    def message_states(self, job: Any, messages: int) -> np.ndarray:
        return jobs.message_states(job, messages)

    def nic_counters(self) -> dict[str, np.ndarray]:
        return rdma.read_nic_counters(self.stack, self.fabric.n_hosts)

    def cc_counters(self) -> dict[str, np.ndarray]:
        return rdma.read_cc_counters(self.stack, self.fabric.n_hosts)

    def collect(self) -> FabricResult:
        return self.fabric.collect()

    def read_memory(self, host: int, size: int) -> np.ndarray:
        return rdma.read_memory(self.stack, host, size)


@contextmanager
def assembled(
    layout: Layout,
    *,
    fabric_config: FabricConfig,
    rdma_config: RdmaConfig | None = None,
    attributes: object = None,
    **build: Any,
) -> Iterator[Assembly]:
    """A Simulation, the fabric of ``layout`` (``build``: the rest of mcsim.native.fabric.build's keywords:
    multicast ``groups``, ``faults``, in-network ``reductions`` and their ``slot_b``), the attributes
    ``attributes``' fields name set on it (if given), and the RDMA stack on its hosts (with ``rdma_config``; a run
    of raw flows has none); the Simulation ends (every C++ object freed) when the block does."""
    with Simulation() as sim:
        fab = sim.own_fabric(fabric.build(layout, config=fabric_config, **build))
        if attributes is not None:
            set_attributes_of(fab.cxx, attributes)
        stack = sim.own_stack(rdma.build_stack(fab, rdma_config)) if rdma_config is not None else None
        yield Assembly(sim, fab, stack)
