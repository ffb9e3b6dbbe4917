# SPDX-License-Identifier: GPL-2.0-only
"""What run_jobs checks and plans before any C++ object exists (one McsimError line for the first fault, in the
user's words: the job's name, the step's index and label): the options, the jobs' hosts and steps, every collective
step's Scenario and its place in the fabric (multicast groups, aggregation trees), a NIC's queue pairs, the
simulated clock."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from mcsim.bounds import lacking_b
from mcsim.config.collectives import ROOTED_COLLECTIVES
from mcsim.config.rdma import MAX_MESSAGE_B
from mcsim.config.setup import Setup
from mcsim.errors import McsimError
from mcsim.runs.assemble import plan_reductions
from mcsim.runs.keyword_tables import KEYWORDS, STEP_FIELDS, known
from mcsim.runs.scenario import TEAM_DEFAULTS, Scenario, scenario_of
from mcsim.units import CLOCK_LIMIT, MAX_SIMULATED_PS, PS_PER_S, format_rate
from mcsim.workloads.job import (
    MAX_JOB_STEPS,
    Collective,
    Compute,
    Job,
    Message,
    Transfer,
    check_jobs,
    holds_on,
    shown,
)
from mcsim.workloads.workload_file import Workload, users_words


class RunOptionError(McsimError):
    """A run option's or the fabric's fault, as its Scenario or config says it ("Scenario: endpoints=0 must be ...",
    "Faults: link_down[0]=..."): run_jobs says it under "workload: ", a workload file under its key
    (mcsim.workloads.workload_file.users_words: "w.toml: [options] endpoints=0 must be ...")."""


def _step_scenario(base: Scenario, job: Job, step: Collective) -> Scenario:
    """The Scenario of one collective step on P = the job's ranks: its checks (ids, sizes, P), its team."""
    sc = dataclasses.replace(
        base,
        collective=step.collective,
        algorithm=step.algorithm,
        bytes_per_rank=step.bytes_per_rank,
        ranks=len(job.hosts),
        # the run's root is a Broadcast's or a Reduce's (a Scenario refuses it where it is not read)
        root=base.root if step.collective in ROOTED_COLLECTIVES else TEAM_DEFAULTS["root"],
    )
    if len(sc.plan().parts) != 1:
        raise McsimError(
            f"{step.collective} {step.algorithm} is two teams; a job's collective step is one (give its phases as "
            "two steps)"
        )
    return sc


@dataclasses.dataclass
class Plan:
    """The fabric every job runs on (``setup``: what every run on it shares), its groups and reductions, and each
    collective step's team, for every job."""

    setup: Setup
    groups: list[list[int]] = dataclasses.field(default_factory=list)
    reductions: list[list[int]] = dataclasses.field(default_factory=list)
    specs: dict[tuple[int, int], tuple[Scenario, int, int]] = dataclasses.field(default_factory=dict)
    region_b: int = 1


def _plan(base: Scenario, jobs_: tuple[Job, ...]) -> Plan:
    """Every collective step's Scenario, with the multicast groups (its endpoints) and the reduction
    (its aggregation trees) it gets in the fabric; the largest region any step needs."""
    plan = Plan(setup=base.setup)
    made: dict[tuple[str, str, str | int, int], Scenario] = {}  # steps alike share one (a model's layers)
    for j, job in enumerate(jobs_):
        for s, step in enumerate(job.steps):
            if isinstance(step, Transfer):
                plan.region_b = max(plan.region_b, *(_message_b(job, s, m) for m in step.messages), 1)
            if not isinstance(step, Collective):
                continue
            key = (step.collective, step.algorithm, step.bytes_per_rank, len(job.hosts))
            alike = all(isinstance(x, str | int) for x in key)  # else no key (a list): the Scenario's line says so
            try:
                sc = made.get(key) if alike else None
                if sc is None:
                    sc = _step_scenario(base, job, step)
                    if alike:
                        made[key] = sc
            except McsimError as exc:  # the step's words, not the Scenario's name
                raise McsimError(
                    f"job {job.name!r}: step {s} ({shown(step.label)}): {str(exc).removeprefix('Scenario: ')}"
                ) from None
            plan.region_b = max(plan.region_b, sc.rdma.region_b)
            step_plan = sc.plan()
            groups = sc.endpoints if step_plan.multicast else 0
            plan.specs[j, s] = (sc, len(plan.groups), len(plan.reductions) if step_plan.in_network else -1)
            plan.groups += [list(job.hosts)] * groups
            if step_plan.in_network:
                plan.reductions.append(list(job.hosts))
    return plan


def _message_b(job: Job, s: int, m: Message) -> int:
    """A Transfer step's message's bytes: one RDMA WRITE, at most the largest InfiniBand message."""
    if m.bytes_b > MAX_MESSAGE_B:
        raise McsimError(
            f"job {job.name!r}: step {s} ({shown(job.steps[s].label)}): a message of {m.bytes_b} B from rank {m.src} "
            f"to rank {m.dst} is more than {MAX_MESSAGE_B} B, the largest InfiniBand message (one RDMA WRITE); send "
            "it as several messages"
        )
    return m.bytes_b


# a NIC's queue pairs: at most 65535 (C++ Nic::AddQp; the QP number is 16 bits of the transport header)
MAX_QPS_PER_NIC = 0xFFFF
RING_QPS = 2  # every team's ring: each rank's RC QP to the next and from the previous (CollectiveTeam::Setup)


def team_qps(sc: Scenario) -> int:
    """Queue pairs a collective step's team gives each rank's NIC, at least (C++ CollectiveTeam::Setup): its
    ring's two RC QPs (next, prev), two more per distance of its rings (an Alltoall: 2 .. P-1; a power-of-two
    algorithm: 2, 4, .. < P; a tree: its heap's), and its UD QPs (multicast: one per endpoint; in-network: one)."""
    plan = sc.plan()
    ud = sc.endpoints if plan.multicast else 1 if plan.in_network else 0
    return RING_QPS + 2 * ring_distances(sc.collective, sc.algorithm, sc.n_ranks, sc.barriers) + ud


@functools.cache
def ring_distances(collective: str, algorithm: str, p: int, barriers: int = 0) -> int:
    """How many rings beyond its first a team of ``p`` ranks wires (C++ CollectiveRank::GetRingDistances)."""
    if algorithm == "mcast":  # its RC barriers' rounds, 1, 2, 4, .. < P (McastAllgather, RcBarrier::Rounds)
        return (p - 1).bit_length() if barriers > 0 else 0
    if collective == "alltoall":
        return max(p - 2, 0)
    if algorithm in ("recursive_doubling", "bruck", "binomial", "halving_doubling"):
        return max((p - 1).bit_length() - 1, 0)
    if algorithm == "tree":  # a heap's child - parent, v + 1 and v + 2 (TreeAllreduce::Distances)
        return len({c - v for v in range(p) for c in (2 * v + 1, 2 * v + 2) if c < p and c - v > 1})
    return 0


def check_qps(job: Job, qps_of: Callable[[int], int]) -> None:
    """Refuse a job whose steps give a NIC more queue pairs than it has (MAX_QPS_PER_NIC), before any C++
    object exists: every collective step's team's (``qps_of(step)``: at least RING_QPS, team_qps once the step's
    Scenario is made) and one RC QP per rank its messages go to or come from."""
    teams = sum(qps_of(s) for s, step in enumerate(job.steps) if isinstance(step, Collective))
    peers: list[set[int]] = [set() for _ in job.hosts]
    for step in job.steps:
        for m in step.messages if isinstance(step, Transfer) else ():
            peers[m.src].add(m.dst)
            peers[m.dst].add(m.src)
    most = max(range(len(job.hosts)), key=lambda r: len(peers[r]))
    if teams + len(peers[most]) > MAX_QPS_PER_NIC:
        collectives_ = sum(isinstance(step, Collective) for step in job.steps)
        raise McsimError(
            f"job {job.name!r}: its steps need at least {teams + len(peers[most])} queue pairs on the NIC of host "
            f"{job.hosts[most]} (rank {most}: {teams} for its {collectives_} collective steps, {len(peers[most])} "
            f"for the ranks its messages go to or come from); a NIC has at most {MAX_QPS_PER_NIC} (the 16-bit QP "
            "number); give the job fewer collective steps"
        )


def _past_clock(job: Job, s: int, what: str, hint: str) -> McsimError:
    return McsimError(f"job {job.name!r}: step {s} ({shown(job.steps[s].label)}): {what}, past {CLOCK_LIMIT}; {hint}")


def check_clock(job: Job, j: int, plan: Plan, rate_bps: int) -> None:
    """Refuse a job whose steps cannot end within the simulated clock (units.MAX_SIMULATED_PS), before it runs:
    a compute step, or a Transfer step's message at the hosts' data rate, past the clock alone (a collective
    step's own bound: its Scenario's check, in _plan); then the steps one after another along the job's
    dependencies (a lower bound of each rank's time: compute, each collective's receive bound
    bounds.lacking_b x 8 / the rate, each message's bytes x 8 / the rate; queueing and latency not counted).
    A job whose ranks all run the same (no rank's own step, no duration per rank, no Transfer) is walked once."""
    same = all(
        isinstance(step, Collective)
        or (isinstance(step, Compute) and step.rank is None and isinstance(step.duration_ps, int))
        for step in job.steps
    )
    if same:
        ends: list[float] = []
        for s, step in enumerate(job.steps):
            ends.append(max((ends[a] for a in step.after), default=0.0) + _own_ps(job, j, s, plan, rate_bps))
            _check_chain(job, s, ends[s], rate_bps)
        return
    _check_chain_per_rank(job, j, plan, rate_bps)


def _own_ps(job: Job, j: int, s: int, plan: Plan, rate_bps: int) -> float:
    """A compute step's duration (refused past the clock) or a collective step's receive bound at the rate."""
    step = job.steps[s]
    if isinstance(step, Collective):
        sc = plan.specs[j, s][0]
        return lacking_b(sc.collective, sc.bytes_per_rank_b, len(job.hosts)) * 8 * PS_PER_S / rate_bps
    assert isinstance(step, Compute)
    longest = max(step.duration_ps) if isinstance(step.duration_ps, tuple) else step.duration_ps
    if longest > MAX_SIMULATED_PS:
        raise _past_clock(job, s, f"duration_ps={longest}", "give a shorter compute step")
    return float(longest)


def _check_chain(job: Job, s: int, latest: float, rate_bps: int) -> None:
    if latest > MAX_SIMULATED_PS:
        chain = f"the steps up to it take at least {latest / PS_PER_S:.4g} s one after another (compute, and each"
        data = f"collective's and message's data at {format_rate(rate_bps)})"
        raise _past_clock(job, s, f"{chain} {data}", "give the job fewer or shorter steps, or raise the rate")


def _check_chain_per_rank(job: Job, j: int, plan: Plan, rate_bps: int) -> None:
    """check_clock's walk rank by rank (a rank's own steps, durations per rank, messages)."""
    p = len(job.hosts)
    end = np.zeros((len(job.steps), p))  # per step and rank: the earliest it can end, in ps (float: a bound)
    floor = np.zeros((len(job.steps), p))  # per step and rank: a message into it arrives no sooner
    for s, step in enumerate(job.steps):
        ready = np.zeros(p)
        for a in step.after:  # on every rank, or on the one rank whose own step one of them is
            rank = holds_on(step, job.steps[a])
            ready = np.maximum(ready, end[a]) if rank is None else np.maximum(ready, end[a] * (np.arange(p) == rank))
        if isinstance(step, Compute):
            _own_ps(job, j, s, plan, rate_bps)  # its longest duration: refused past the clock
            own = np.array(step.duration_ps if isinstance(step.duration_ps, tuple) else [step.duration_ps] * p)
            end[s] = ready + (own if step.rank is None else np.where(np.arange(p) == step.rank, own, 0))
        elif isinstance(step, Collective):
            end[s] = ready.max() + _own_ps(job, j, s, plan, rate_bps)
        else:
            end[s] = ready
            for m in step.messages:
                took = m.bytes_b * 8 * PS_PER_S / rate_bps
                if took > MAX_SIMULATED_PS:
                    what = f"a message of {m.bytes_b} B from rank {m.src} to rank {m.dst} takes at least"
                    at = f"{took / PS_PER_S:.4g} s at {format_rate(rate_bps)}"
                    raise _past_clock(job, s, f"{what} {at}", "raise the rate or send fewer bytes")
                into = s if m.into is None else int(m.into)
                end[s, m.src] = max(end[s, m.src], ready[m.src] + took)
                floor[into, m.dst] = max(floor[into, m.dst], ready[m.src] + took)
        np.maximum(end[s], floor[s], out=end[s])
        _check_chain(job, s, float(end[s].max()), rate_bps)


def checked_run(jobs_: tuple[Job, ...], *, topology: Any, rate: str | None, **options: Any) -> tuple[Scenario, Plan]:
    """What run_jobs checks before any C++ object exists (one McsimError line for the first fault): the
    options, the jobs' hosts and every collective step's Scenario. Returns the run's options as every collective
    step's Scenario takes them (checked once, on every host; a step's Scenario replaces its own fields) and the
    plan (its Setup: the fabric every step shares)."""
    own = sorted(set(options) & set(STEP_FIELDS))
    if own:
        raise McsimError(f"run_jobs: {own[0]}= is each collective step's own; not an option of the run")
    for key in options:  # a misspelt option: one line with the nearest, not Scenario's TypeError
        known("run option", key, [k for k in KEYWORDS if k not in (*STEP_FIELDS, "topology", "rate")], "run_jobs")
    # on every host: an option bound by the ranks (root, roots) is checked on each step's own; a root on a
    # collective that reads it (every other step keeps the default)
    first = {"collective": "broadcast", "algorithm": "binomial"} if "root" in options else {"algorithm": "ring"}
    try:
        base = scenario_of(topology=topology, rate=rate, ranks=None, bytes_per_rank=4, **first, **options)
    except McsimError as exc:
        raise RunOptionError(str(exc)) from None
    setup = base.setup
    check_jobs(jobs_, setup.hosts)
    steps = sum(len(job.steps) for job in jobs_)  # each job is bounded by Job itself; together as one
    if steps > MAX_JOB_STEPS:
        raise McsimError(
            f"run_jobs: the jobs hold {steps} steps together; a run's jobs hold at most {MAX_JOB_STEPS} together, as "
            "a job's (mcsim.workloads.job.MAX_JOB_STEPS); run fewer or smaller jobs"
        )
    for job in jobs_:  # before each step's Scenario is made: a team has two RC QPs per rank at least
        check_qps(job, lambda s: RING_QPS)
    plan = _plan(base, jobs_)
    for j, job in enumerate(jobs_):
        check_qps(job, lambda s, j=j: team_qps(plan.specs[j, s][0]))  # type: ignore[misc]
        check_clock(job, j, plan, setup.data_rate_bps)
    if plan.reductions:  # every in-network step's trees share the switches' buffers (fabric.build checks it late)
        try:
            plan_reductions(setup.layout(), plan.reductions, len(plan.groups), setup.fabric, setup.rdma.mtu_b)
        except McsimError as exc:
            raise McsimError(
                f"workload: its in-network steps' aggregation trees (each step its own): "
                f"{str(exc).removeprefix('FabricConfig: ')}, or give fewer in-network steps"
            ) from None
    return base, plan


def check_workload(w: Workload) -> None:
    """What running a workload checks before any C++ object exists (mcsim.runs.job_planning.checked_run): one line,
    in the file's words (its key, or its [options] key, where the check is a Scenario's)."""
    with users_words(w.where, w.options):
        checked_run(w.jobs, topology=w.topology, rate=w.rate, seed=w.seed, **w.options)
