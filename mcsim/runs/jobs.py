# SPDX-License-Identifier: GPL-2.0-only
"""Run jobs on one fabric: every collective step is a team on its job's hosts, every job a C++ Job that
starts its steps as their dependencies end and sends its transfers' messages (no Python during the
run); then each job's timeline and per-job figures (iteration, compute, exposed communication, bytes
injected)."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from mcsim.config.collectives import TeamSpec
from mcsim.config.dpa import DpaConfig
from mcsim.config.fabric import Faults
from mcsim.errors import IncompleteRun, McsimError
from mcsim.result import FabricResult, Result
from mcsim.runs import team_results
from mcsim.runs.assemble import ALL_RANKS, TRANSFER, Assembly, Messages, assembled
from mcsim.runs.job_incomplete import Unfinished, incomplete_text, message_rows
from mcsim.runs.job_planning import MAX_QPS_PER_NIC, Plan, RunOptionError, checked_run
from mcsim.runs.scenario import Scenario
from mcsim.workloads.job import Compute, Job, Transfer, holds_on, present, shown, step_kind
from mcsim.workloads.workload_file import Workload

# the options of a run whose multicast receives on the paper's engine: the BlueField-3 DPA, 16 threads, one UD
# endpoint each, datagrams in place (zero copy); run_jobs(..., **DPA_RECEIVE)
DPA_RECEIVE: dict[str, Any] = {"processor": DpaConfig(threads=16), "endpoints": 16, "staging": False}


@dataclass(frozen=True, slots=True)
class JobResult:
    """One job of a run. ``timeline[step, rank]`` is (ready, start, end) in ps, -1 where never."""

    job: Job
    timeline: np.ndarray  # int64 [steps, ranks, 3]
    injected_b: np.ndarray  # per rank: payload bytes its NIC sent (its host's: every collective on it)
    # step -> its collective's Result (finish times from the run's start; bytes: the hosts' NICs, every step's)
    collectives: dict[int, Result]
    unfinished: Unfinished | None = None  # an incomplete job's: why (None for a complete one)

    @property
    def complete(self) -> bool:
        """Every step ended on every rank."""
        return bool((self.timeline[:, :, 2] >= 0).all())

    @property
    def iteration_ps(self) -> int:
        """When its last step ended on its last rank (IncompleteRun, saying why, if some step never ended)."""
        if not self.complete:
            raise IncompleteRun(f"job {self.job.name!r}: {self.why_incomplete()} (see timeline: -1)")
        return int(self.timeline[:, :, 2].max())

    def why_incomplete(self) -> str:
        """Why the job did not finish, step by step (empty for a complete job): each step that some rank was
        ready for but never ended, by index and label, its ranks still waiting and what each waits for (the
        ranks that never entered a collective, a collective's unfinished ranks and why, a message from or to a
        rank, a compute unit); then how many steps wait behind them (never ready on some rank)."""
        if self.complete:
            return ""
        return incomplete_text(self)

    def incomplete_line(self) -> str:
        """What tables print instead of the job's figures: ``"INCOMPLETE: step 3 (AG F1): ..."``."""
        return f"INCOMPLETE: {self.why_incomplete()}"

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
            "why_incomplete": None if done else self.why_incomplete(),
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


def _team_spec(sc: Scenario, job: Job, first_group: int, reduction: Any) -> TeamSpec:
    """The step's TeamSpec on the job's hosts, with its own groups or aggregation trees in the fabric."""
    (spec,) = sc.teams(reduction)
    if reduction is not None:
        return dataclasses.replace(spec, hosts=job.hosts, group=reduction.first_group, first_tree=reduction.first_tree)
    return dataclasses.replace(spec, hosts=job.hosts, group=first_group)


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
    try:
        base, plan = checked_run(jobs_, topology=topology, rate=rate, **options)
    except RunOptionError as exc:  # the API's words: the keyword, not the Scenario's name
        raise McsimError(f"workload: {str(exc).removeprefix('Scenario: ')}") from None
    setup = plan.setup
    rdma_cfg = dataclasses.replace(setup.rdma, region_b=plan.region_b)
    with assembled(
        setup.layout(),
        fabric_config=setup.fabric,
        rdma_config=rdma_cfg,
        attributes=base,  # the fabric attributes a Scenario's fields set (verify: never a run option)
        groups=plan.groups,
        faults=setup.faults,
        reductions=plan.reductions,
        slot_b=rdma_cfg.mtu_b,
    ) as run:
        handles = [_build_job(run, plan, j, job) for j, job in enumerate(jobs_)]
        run.run()
        timelines = [
            run.timeline(h, len(job.steps), len(job.hosts)) for (h, _), job in zip(handles, jobs_, strict=True)
        ]
        states = [run.message_states(h, len(message_rows(job))) for (h, _), job in zip(handles, jobs_, strict=True)]
        stats = [{s: (run.team_stats(t), spec) for s, (t, spec) in teams.items()} for _, teams in handles]
        nic = run.nic_counters()
        fres = run.collect()
    return WorkloadResult(
        tuple(
            _job_result(job, tl, st, nic, fres, plan, j, ms, setup.faults or Faults())
            for j, (job, tl, st, ms) in enumerate(zip(jobs_, timelines, stats, states, strict=True))
        ),
        fres,
    )


def run_workload(w: Workload) -> WorkloadResult:
    """Run a workload's jobs on its fabric (run_jobs) with its options."""
    return run_jobs(w.jobs, topology=w.topology, rate=w.rate, seed=w.seed, **w.options)


def _build_job(run: Assembly, plan: Plan, j: int, job: Job) -> tuple[Any, dict[int, Any]]:
    """Job j's teams (set up, not started) and its C++ Job, started at 0: (the Job, step -> its team and
    TeamSpec)."""
    teams: dict[int, tuple[Any, TeamSpec]] = {}
    steps: list[Any] = []
    for s, step in enumerate(job.steps):
        if isinstance(step, Transfer):
            steps.append(TRANSFER)
            continue
        if isinstance(step, Compute):  # one rank's own: 0 on the others
            own = step.rank is None
            steps.append(step.duration_ps if own else tuple(step.on(r) for r in range(len(job.hosts))))
            continue
        sc, first_group, red = plan.specs[j, s]
        try:
            spec = _team_spec(sc, job, first_group, run.reductions[red] if red >= 0 else None)
            teams[s] = (run.setup_team(spec), spec)
        except McsimError as exc:
            raise McsimError(f"job {job.name!r}: step {s} ({shown(step.label)}): {users_words(str(exc))}") from None
        steps.append(teams[s][0])
    try:
        made = run.add_job(j, job.compute_units, job.hosts, steps, _dependencies(job), _messages(job))
    except McsimError as exc:
        raise McsimError(f"job {job.name!r}: {users_words(str(exc))}") from None
    return made, teams


# a C++ setup error's leading name of its class (and method), "Nic::AddQp: ", "Job: ", "TeamSpec: ": not the user's
INTERNAL_PREFIX = re.compile(r"^(?:[A-Z][A-Za-z]*(?:::[A-Z][A-Za-z]*)?: )+")
QP_LIMIT_TEXT = "QPs per NIC"  # C++ Nic::AddQp's refusal (checked at planning: check_qps, a lower bound)


def users_words(text: str) -> str:
    """A setup error from C++ (or a TeamSpec) as a workload's user reads it: without the internal class's name,
    and a NIC's queue-pair limit said as check_qps says it."""
    if QP_LIMIT_TEXT in text:
        return (
            f"its host's NIC would hold more than {MAX_QPS_PER_NIC} queue pairs (the 16-bit QP number); give the "
            "job fewer collective steps"
        )
    return INTERNAL_PREFIX.sub("", text)


def _dependencies(job: Job) -> list[list[tuple[int, int]]]:
    """Per step, what it waits for: (step, the rank it holds on or ALL_RANKS)."""
    out = []
    for step in job.steps:
        holds = ((a, holds_on(step, job.steps[a])) for a in step.after)
        out.append([(a, ALL_RANKS if rank is None else rank) for a, rank in holds])
    return out


def _messages(job: Job) -> Messages:
    """Every Transfer step's messages, as the C++ Job takes them."""
    cols = np.array(message_rows(job), dtype=np.int64).reshape(-1, 5).T
    return Messages(*cols)


def _job_result(
    job: Job,
    tl: np.ndarray,
    stats: dict[int, tuple[dict[str, np.ndarray], TeamSpec]],
    nic: dict[str, np.ndarray],
    fres: FabricResult,
    plan: Plan,
    j: int,
    message_states: np.ndarray,
    faults: Faults,
) -> JobResult:
    """Job j's timeline, its hosts' bytes, its collective steps' Results (each a team's, on the job's hosts), and
    what says why a step never ended (its messages' states, its NICs' failed RC QPs, its hosts cut off)."""
    results = {}
    for s, (st, spec) in stats.items():
        sc = plan.specs[j, s][0]
        results[s] = team_results.of_team(spec, st, nic, fres, sc.data_rate_bps, sc.faults or Faults())
    hosts = np.array(job.hosts)
    done = bool((tl[:, :, 2] >= 0).all())  # a complete job's result holds what it did before (its hash too)
    why = Unfinished(
        message_states, nic["rc_errors"][hosts] if "rc_errors" in nic else None, faults.down_for_good_ps(job.hosts)
    )
    return JobResult(job, tl, nic["tx_payload"][hosts], results, None if done else why)
