# SPDX-License-Identifier: GPL-2.0-only
"""Run jobs on one fabric: every collective step is a team on its job's hosts, every job a C++ Job that
starts its steps as their dependencies end and sends its transfers' messages (no Python during the
run); then each job's timeline and per-job figures (iteration, compute, exposed communication, bytes
injected)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from mcsim import topology as topologies
from mcsim.config.collectives import TeamSpec
from mcsim.config.dpa import DpaConfig
from mcsim.config.fabric import Faults
from mcsim.errors import McsimError
from mcsim.native import collectives, fabric, jobs, rdma
from mcsim.native.attributes import set_attributes_of
from mcsim.native.simulation import Simulation
from mcsim.result import FabricResult, Result
from mcsim.runs import team_results
from mcsim.runs.scenario import Scenario
from mcsim.runs.scenario_keywords import scenario_of
from mcsim.workloads.job import Collective, Compute, Job, Transfer, check_jobs, holds_on, present

# the options of a run whose multicast receives on the paper's engine: the BlueField-3 DPA, 16 threads, one UD
# endpoint each, datagrams in place (zero copy); run_jobs(..., **DPA_RECEIVE)
DPA_RECEIVE: dict[str, Any] = {"processor": DpaConfig(threads=16), "endpoints": 16, "staging": False}
STEP_FIELDS = ("collective", "algorithm", "bytes_per_rank", "ranks", "overlap", "overlap_algorithm", "verify")


def step_kind(step: Compute | Collective | Transfer) -> str:
    """compute, collective or transfer: the timeline's kind column."""
    return "compute" if isinstance(step, Compute) else "transfer" if isinstance(step, Transfer) else "collective"


@dataclass(frozen=True, slots=True)
class JobResult:
    """One job of a run. ``timeline[step, rank]`` is (ready, start, end) in ps, -1 where never."""

    job: Job
    timeline: np.ndarray  # int64 [steps, ranks, 3]
    injected_b: np.ndarray  # per rank: payload bytes its NIC sent (its host's: every collective on it)
    # step -> its collective's Result (finish times from the run's start; bytes: the hosts' NICs, every step's)
    collectives: dict[int, Result]

    @property
    def complete(self) -> bool:
        """Every step ended on every rank."""
        return bool((self.timeline[:, :, 2] >= 0).all())

    @property
    def iteration_ps(self) -> int:
        """When its last step ended on its last rank."""
        if not self.complete:
            raise McsimError(f"job {self.job.name!r}: some step never ended (see timeline: -1)")
        return int(self.timeline[:, :, 2].max())

    @property
    def compute_ps(self) -> int:
        """Compute per rank: the sum of its compute steps' durations, on the rank with the most."""
        steps = [s for s in self.job.steps if isinstance(s, Compute)]
        return max(sum(s.on(r) for s in steps) for r in range(len(self.job.hosts)))

    @property
    def exposed_comm_ps(self) -> int:
        """The iteration less the compute (:attr:`compute_ps`): the time the busiest rank's compute unit
        waited for the network (with one compute unit per rank, Job.compute_units = 1)."""
        return self.iteration_ps - self.compute_ps

    def summary(self) -> dict[str, Any]:
        """Scalars for tables, CSV and JSON, units in the names."""
        done = self.complete
        nan = float("nan")
        return {
            "name": self.job.name,
            "ranks": len(self.job.hosts),
            "steps": len(self.job.steps),
            "iteration_us": self.iteration_ps / 1e6 if done else nan,
            "compute_us": self.compute_ps / 1e6,
            "exposed_comm_us": self.exposed_comm_ps / 1e6 if done else nan,
            "injected_B": int(self.injected_b.sum()),
            "complete": done,
        }

    def rows(self) -> list[dict[str, Any]]:
        """The timeline as rows: job, step, label, kind, rank, host, ready_ps, start_ps, end_ps (a rank's own
        step on that rank only)."""
        out = []
        for s, step in enumerate(self.job.steps):
            kind = step_kind(step)
            for r, host in enumerate(self.job.hosts):
                if not present(step, r):
                    continue
                ready, start, end = (int(x) for x in self.timeline[s, r])
                out.append(
                    {
                        "job": self.job.name,
                        "step": s,
                        "label": step.label,
                        "kind": kind,
                        "rank": r,
                        "host": host,
                        "ready_ps": ready,
                        "start_ps": start,
                        "end_ps": end,
                    }
                )
        return out


@dataclass(frozen=True, slots=True)
class WorkloadResult:
    jobs: tuple[JobResult, ...]
    fabric: FabricResult

    def job(self, name: str) -> JobResult:
        for j in self.jobs:
            if j.job.name == name:
                return j
        raise McsimError(f"WorkloadResult: no job {name!r}; the jobs are {', '.join(j.job.name for j in self.jobs)}")


def _step_scenario(base: Scenario, job: Job, step: Collective) -> Scenario:
    """The Scenario of one collective step on P = the job's ranks: its checks (ids, sizes, P), its team."""
    sc = dataclasses.replace(
        base,
        collective=step.collective,
        algorithm=step.algorithm,
        bytes_per_rank=step.bytes_per_rank,
        ranks=len(job.hosts),
    )
    if len(sc._parts()) != 1:
        raise McsimError(
            f"{step.collective} {step.algorithm} is two teams; a job's collective step is one (give its phases as "
            "two steps)"
        )
    return sc


@dataclass
class _Plan:
    """The fabric's groups and reductions, and each collective step's team, for every job."""

    groups: list[list[int]] = dataclasses.field(default_factory=list)
    reductions: list[list[int]] = dataclasses.field(default_factory=list)
    specs: dict[tuple[int, int], tuple[Scenario, int, int]] = dataclasses.field(default_factory=dict)
    region_b: int = 1


def _plan(base: Scenario, jobs_: tuple[Job, ...]) -> _Plan:
    """Every collective step's Scenario, with the multicast groups (its endpoints) and the reduction
    (its aggregation trees) it gets in the fabric; the largest region any step needs."""
    plan = _Plan()
    for j, job in enumerate(jobs_):
        for s, step in enumerate(job.steps):
            if isinstance(step, Transfer):
                plan.region_b = max(plan.region_b, *(m.bytes_b for m in step.messages), 1)
            if not isinstance(step, Collective):
                continue
            try:
                sc = _step_scenario(base, job, step)
            except McsimError as exc:
                raise McsimError(f"job {job.name!r}: step {s} ({step.label}): {exc}") from None
            plan.region_b = max(plan.region_b, sc.rdma.region_b)
            groups = sc.endpoints if sc._mcast else 0
            plan.specs[j, s] = (sc, len(plan.groups), len(plan.reductions) if sc._innet else -1)
            plan.groups += [list(job.hosts)] * groups
            if sc._innet:
                plan.reductions.append(list(job.hosts))
    return plan


def _team_spec(sc: Scenario, job: Job, first_group: int, reduction: Any) -> TeamSpec:
    """The step's TeamSpec on the job's hosts, with its own groups or aggregation trees in the fabric."""
    (spec,) = sc.teams(reduction)
    if reduction is not None:
        return dataclasses.replace(spec, hosts=job.hosts, group=reduction.first_group, first_tree=reduction.first_tree)
    return dataclasses.replace(spec, hosts=job.hosts, group=first_group)


def checked_run(jobs_: tuple[Job, ...], *, topology: Any, rate: str | None, **options: Any) -> tuple[Scenario, _Plan]:
    """What run_jobs checks before any C++ object exists (one McsimError line for the first fault): the
    options, the jobs' hosts and every collective step's Scenario; the run's base Scenario and its plan."""
    own = sorted(set(options) & set(STEP_FIELDS))
    if own:
        raise McsimError(f"run_jobs: {own[0]}= is each collective step's own; not an option of the run")
    base = scenario_of(topology=topology, rate=rate, ranks=2, algorithm="ring", bytes_per_rank=4, **options)
    check_jobs(jobs_, topologies.host_count(base._base_graph()))
    return base, _plan(base, jobs_)


def run_jobs(
    jobs_: tuple[Job, ...] | list[Job],
    *,
    topology: Any = "testbed-188",
    rate: str | None = None,
    **options: Any,
) -> WorkloadResult:
    """Run the jobs at once on one fabric (every job starts at 0); each job's steps run as their
    dependencies end, in C++. ``options``: Scenario keywords for every collective step and the fabric
    (its fields and short names: ``seed=3``, ``endpoints=16``, ``processor=DpaConfig()``, ``ring_chunk``,
    ``fabric=FabricConfig(...)``, ...), never what a step says itself."""
    jobs_ = tuple(jobs_)
    base, plan = checked_run(jobs_, topology=topology, rate=rate, **options)
    rdma_cfg = dataclasses.replace(base.rdma, region_b=plan.region_b)
    with Simulation() as sim:
        fab = sim.own_fabric(
            fabric.build(
                base._layout(),
                groups=plan.groups,
                config=base.fabric,
                faults=base.faults,
                reductions=plan.reductions,
                slot_b=rdma_cfg.mtu_b,
            )
        )
        set_attributes_of(fab.cxx, base)
        stack = sim.own_stack(rdma.build_stack(fab, rdma_cfg))
        handles = [_build_job(sim, stack, fab, plan, j, job) for j, job in enumerate(jobs_)]
        sim.run()
        timelines = [
            jobs.timeline(h, len(job.steps), len(job.hosts)) for (h, _), job in zip(handles, jobs_, strict=True)
        ]
        stats = [{s: (collectives.team_stats(t), spec) for s, (t, spec) in teams.items()} for _, teams in handles]
        nic = rdma.read_nic_counters(stack, fab.n_hosts)
        fres = fab.collect()
    return WorkloadResult(
        tuple(
            _job_result(job, tl, st, nic, fres, plan, j)
            for j, (job, tl, st) in enumerate(zip(jobs_, timelines, stats, strict=True))
        ),
        fres,
    )


def _build_job(sim: Simulation, stack: Any, fab: Any, plan: _Plan, j: int, job: Job) -> tuple[Any, dict[int, Any]]:
    """Job j's teams (set up, not started) and its C++ Job, started at 0: (the Job, step -> its team and
    TeamSpec)."""
    teams: dict[int, tuple[Any, TeamSpec]] = {}
    steps: list[Any] = []
    for s, step in enumerate(job.steps):
        if isinstance(step, Transfer):
            steps.append(jobs.TRANSFER)
            continue
        if isinstance(step, Compute):  # one rank's own: 0 on the others
            own = step.rank is None
            steps.append(step.duration_ps if own else tuple(step.on(r) for r in range(len(job.hosts))))
            continue
        sc, first_group, red = plan.specs[j, s]
        spec = _team_spec(sc, job, first_group, fab.reductions[red] if red >= 0 else None)
        teams[s] = (sim.own_app(collectives.setup_team(stack, spec)), spec)
        steps.append(teams[s][0])
    handle = sim.own_app(
        jobs.build_job(j, job.compute_units, job.hosts, steps, _dependencies(job), stack, _messages(job))
    )
    return handle, teams


def _dependencies(job: Job) -> list[list[tuple[int, int]]]:
    """Per step, what it waits for: (step, the rank it holds on or jobs.ALL_RANKS)."""
    out = []
    for step in job.steps:
        holds = ((a, holds_on(step, job.steps[a])) for a in step.after)
        out.append([(a, jobs.ALL_RANKS if rank is None else rank) for a, rank in holds])
    return out


def _messages(job: Job) -> jobs.Messages:
    """Every Transfer step's messages, as the C++ Job takes them."""
    rows = [
        (s, m.src, s if m.into is None else m.into, m.dst, m.bytes_b)
        for s, step in enumerate(job.steps)
        if isinstance(step, Transfer)
        for m in step.messages
    ]
    cols = np.array(rows, dtype=np.int64).reshape(-1, 5).T
    return jobs.Messages(*cols)


def _job_result(
    job: Job,
    tl: np.ndarray,
    stats: dict[int, tuple[dict[str, np.ndarray], TeamSpec]],
    nic: dict[str, np.ndarray],
    fres: FabricResult,
    plan: _Plan,
    j: int,
) -> JobResult:
    """Job j's timeline, its hosts' bytes and its collective steps' Results (each a team's, on the job's hosts)."""
    results = {}
    for s, (st, spec) in stats.items():
        sc = plan.specs[j, s][0]
        results[s] = team_results.of_team(spec, st, nic, fres, sc.data_rate_bps, sc.faults or Faults())
    return JobResult(job, tl, nic["tx_payload"][np.array(job.hosts)], results)
