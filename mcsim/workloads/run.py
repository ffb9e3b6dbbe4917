# SPDX-License-Identifier: GPL-2.0-only
"""Run jobs on one fabric: every collective step is a team on its job's hosts, every job a C++ Job that
starts its steps as their dependencies end and sends its transfers' messages (no Python during the
run); then each job's timeline and per-job figures (iteration, compute, exposed communication, bytes
injected)."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mcsim import topology as topologies
from mcsim.bounds import lacking_b
from mcsim.config.collectives import TeamSpec
from mcsim.config.dpa import DpaConfig
from mcsim.config.fabric import Faults
from mcsim.config.rdma import MAX_MESSAGE_B
from mcsim.errors import IncompleteRun, McsimError, require_int
from mcsim.native import collectives, fabric, jobs, rdma
from mcsim.native.attributes import set_attributes_of
from mcsim.native.simulation import Simulation
from mcsim.result import NO_KNOWN_CAUSE_REASON, RC_ERROR_REASON, FabricResult, Result, cut_off_reason, ranks_text
from mcsim.runs import team_results
from mcsim.runs.keyword_tables import KEYWORDS, known
from mcsim.runs.scenario import Scenario
from mcsim.runs.scenario_keywords import scenario_of
from mcsim.units import CLOCK_LIMIT, MAX_SIMULATED_PS, PS_PER_S, format_rate
from mcsim.workloads.job import Collective, Compute, Job, Message, Transfer, check_jobs, holds_on, present

# the options of a run whose multicast receives on the paper's engine: the BlueField-3 DPA, 16 threads, one UD
# endpoint each, datagrams in place (zero copy); run_jobs(..., **DPA_RECEIVE)
DPA_RECEIVE: dict[str, Any] = {"processor": DpaConfig(threads=16), "endpoints": 16, "staging": False}
STEP_FIELDS = ("collective", "algorithm", "bytes_per_rank", "ranks", "overlap", "overlap_algorithm", "verify")


def step_kind(step: Compute | Collective | Transfer) -> str:
    """compute, collective or transfer: the timeline's kind column."""
    return "compute" if isinstance(step, Compute) else "transfer" if isinstance(step, Transfer) else "collective"


@dataclass(frozen=True, slots=True)
class Unfinished:
    """What an incomplete job's run left that says why its steps never ended (JobResult.why_incomplete)."""

    # per message of its Transfer steps (their order, message by message): jobs.ACKED | jobs.ARRIVED as they happened
    message_states: np.ndarray
    rc_errors: np.ndarray | None  # per rank: its NIC's RC QPs that exhausted their retries
    link_down_for_good_ps: np.ndarray  # per rank: its host's only link down for good (NEVER: never)


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


MAX_LISTED_STEPS = 3  # an incomplete job's line names at most this many steps that never ended


def incomplete_text(r: JobResult) -> str:
    """:meth:`JobResult.why_incomplete` of an incomplete job: ``"step 3 (AG F1): ranks 0, 1 of 4 wait for
    rank 2 to enter it; step 2 (send): rank 2 of 4 waits for its message to rank 3 to be acknowledged: ...;
    5 later steps wait behind them"``."""
    ready, end = r.timeline[:, :, 0], r.timeline[:, :, 2]
    stuck = np.flatnonzero(((ready >= 0) & (end < 0)).any(axis=1))
    parts = [f"step {s} ({r.job.steps[s].label}): {_stuck_step(r, int(s))}" for s in stuck[:MAX_LISTED_STEPS]]
    if stuck.size > MAX_LISTED_STEPS:
        parts.append(f"... and {stuck.size - MAX_LISTED_STEPS} more steps that never ended")
    behind = int((ready < 0).any(axis=1).sum()) - int((ready[stuck] < 0).any(axis=1).sum())  # never ready somewhere
    if behind:
        parts.append(f"{behind} later {'step waits' if behind == 1 else 'steps wait'} behind them")
    return "; ".join(parts) or "a step never ended"


def _grouped(by_rank: dict[int, str], ranks: int) -> str:
    """``"ranks 0, 1 of 4 <what>; rank 3 of 4 <other>"``: ranks with the same words together (a ``{s}``
    in the words: ``s`` for one rank, so the verb agrees)."""
    groups: dict[str, list[int]] = {}
    for rank, what in by_rank.items():
        groups.setdefault(what, []).append(rank)
    return "; ".join(
        f"{ranks_text(rs)} of {ranks} {what.replace('{s}', 's' if len(rs) == 1 else '')}" for what, rs in groups.items()
    )


def _stuck_step(r: JobResult, s: int) -> str:
    """The ranks that were ready for step s but never ended it, and what each waits for."""
    tl, step, p = r.timeline, r.job.steps[s], len(r.job.hosts)
    ranks = [int(x) for x in np.flatnonzero((tl[s, :, 0] >= 0) & (tl[s, :, 2] < 0))]
    if isinstance(step, Collective):
        if tl[s, 0, 1] < 0:  # it never began: some rank was never ready for it
            missing = [int(x) for x in np.flatnonzero(tl[s, :, 0] < 0)]
            return _grouped(dict.fromkeys(ranks, f"wait{{s}} for {ranks_text(missing)} to enter it"), p)
        reasons = r.collectives[s].why_unfinished() if s in r.collectives else {}
        return _grouped({k: f"did not finish: {reasons.get(k, NO_KNOWN_CAUSE_REASON)}" for k in ranks}, p)
    if isinstance(step, Compute):
        return _grouped({k: _compute_wait(r, s, k) for k in ranks}, p)
    return _grouped(_transfer_waits(r, s, ranks), p)


def _compute_wait(r: JobResult, s: int, rank: int) -> str:
    """A compute step's rank: computing past the run's end, or waiting for a compute unit (held by ...)."""
    tl = r.timeline
    if tl[s, rank, 1] >= 0:
        return "did not finish computing (the run ended first)"
    held = [
        k for k, other in enumerate(r.job.steps) if isinstance(other, Compute) and tl[k, rank, 1] >= 0 > tl[k, rank, 2]
    ]
    by = f" (held by step {held[0]} ({r.job.steps[held[0]].label}))" if held else ""
    return f"wait{{s}} for a compute unit{by}"


def _message_rows(job: Job) -> list[tuple[int, int, int, int]]:
    """Every Transfer step's messages in build order: (its step, src, the step it arrives in, dst)."""
    return [
        (s, m.src, s if m.into is None else int(m.into), m.dst)
        for s, step in enumerate(job.steps)
        if isinstance(step, Transfer)
        for m in step.messages
    ]


def _transfer_waits(r: JobResult, s: int, ranks: list[int]) -> dict[int, str]:
    """A transfer step's ranks: the messages each still waits for (out: acknowledged, in: arrived), and the
    cause its NIC or a peer's link shows (one pass over the job's messages)."""
    rows = np.array(_message_rows(r.job), dtype=np.int64).reshape(-1, 4)
    states = r.unfinished.message_states if r.unfinished is not None else np.zeros(len(rows), dtype=np.uint8)
    out: dict[int, list[int]] = {}
    into: dict[int, list[int]] = {}
    for src, dst in rows[(rows[:, 0] == s) & (states & jobs.ACKED == 0)][:, [1, 3]].tolist():
        out.setdefault(src, []).append(dst)
    for src, dst in rows[(rows[:, 2] == s) & (states & jobs.ARRIVED == 0)][:, [1, 3]].tolist():
        into.setdefault(dst, []).append(src)
    by_rank = {}
    for rank in ranks:
        to, of = out.get(rank, []), into.get(rank, [])
        mine = "its message" if len(to) == 1 else f"its {len(to)} messages"
        waits = [f"{mine} to {ranks_text(sorted(set(to)))} to be acknowledged"] if to else []
        waits += [f"{'a message' if len(of) == 1 else 'messages'} from {ranks_text(sorted(set(of)))}"] if of else []
        what = f"wait{{s}} for {' and '.join(waits)}" if waits else "did not end (its messages are all done)"
        cause = _transfer_cause(r, rank, sorted(set(to + of)))
        by_rank[rank] = f"{what}: {cause}" if cause else what
    return by_rank


def _transfer_cause(r: JobResult, rank: int, peers: list[int]) -> str | None:
    """Why a rank's messages never completed: its own or a peer's host cut off (Faults.link_down), or an RC QP
    of its NIC that exhausted its retries."""
    if r.unfinished is None:
        return None
    down, errors = r.unfinished.link_down_for_good_ps, r.unfinished.rc_errors
    for k in (rank, *peers):
        if down[k] >= 0:
            reason = cut_off_reason(int(down[k]))
            return reason if k == rank else f"rank {k}'s {reason.removeprefix('its ')}"
    if errors is not None and int(errors[rank]) > 0:
        return RC_ERROR_REASON
    failed = [k for k in peers if errors is not None and int(errors[k]) > 0]
    return RC_ERROR_REASON.replace("its NIC", f"rank {failed[0]}'s NIC") if failed else None


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
    made: dict[tuple[str, str, str | int, int], Scenario] = {}  # steps alike share one (a model's layers)
    for j, job in enumerate(jobs_):
        for s, step in enumerate(job.steps):
            if isinstance(step, Transfer):
                plan.region_b = max(plan.region_b, *(_message_b(job, s, m) for m in step.messages), 1)
            if not isinstance(step, Collective):
                continue
            key = (step.collective, step.algorithm, step.bytes_per_rank, len(job.hosts))
            try:
                sc = made[key] if key in made else made.setdefault(key, _step_scenario(base, job, step))
            except McsimError as exc:  # the step's words, not the Scenario's name
                raise McsimError(
                    f"job {job.name!r}: step {s} ({step.label}): {str(exc).removeprefix('Scenario: ')}"
                ) from None
            plan.region_b = max(plan.region_b, sc.rdma.region_b)
            groups = sc.endpoints if sc._mcast else 0
            plan.specs[j, s] = (sc, len(plan.groups), len(plan.reductions) if sc._innet else -1)
            plan.groups += [list(job.hosts)] * groups
            if sc._innet:
                plan.reductions.append(list(job.hosts))
    return plan


MAX_COMPUTE_UNITS = 2**32 - 1  # a rank's compute units (C++ Job's "ComputeUnits": uint32_t)
UNITS_WHY = " (compute steps a rank runs at once, 0: no limit; a 32-bit count)"


def _message_b(job: Job, s: int, m: Message) -> int:
    """A Transfer step's message's bytes: one RDMA WRITE, at most the largest InfiniBand message."""
    if m.bytes_b > MAX_MESSAGE_B:
        raise McsimError(
            f"job {job.name!r}: step {s} ({job.steps[s].label}): a message of {m.bytes_b} B from rank {m.src} to rank "
            f"{m.dst} is more than {MAX_MESSAGE_B} B, the largest InfiniBand message (one RDMA WRITE); send it as "
            "several messages"
        )
    return m.bytes_b


# a NIC's queue pairs: at most 65535 (C++ Nic::AddQp; the QP number is 16 bits of the transport header)
MAX_QPS_PER_NIC = 0xFFFF
RING_QPS = 2  # every team's ring: each rank's RC QP to the next and from the previous (CollectiveTeam::Setup)


def team_qps(sc: Scenario) -> int:
    """Queue pairs a collective step's team gives each rank's NIC, at least (C++ CollectiveTeam::Setup): its
    ring's two RC QPs (next, prev), two more per distance of its rings (an Alltoall: 2 .. P-1; a power-of-two
    algorithm: 2, 4, .. < P; a tree: its heap's), and its UD QPs (multicast: one per endpoint; in-network: one)."""
    ud = sc.endpoints if sc._mcast else 1 if sc._innet else 0
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
    return McsimError(f"job {job.name!r}: step {s} ({job.steps[s].label}): {what}, past {CLOCK_LIMIT}; {hint}")


def check_clock(job: Job, j: int, plan: _Plan, rate_bps: int) -> None:
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


def _own_ps(job: Job, j: int, s: int, plan: _Plan, rate_bps: int) -> float:
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


def _check_chain_per_rank(job: Job, j: int, plan: _Plan, rate_bps: int) -> None:
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
    for key in options:  # a misspelt option: one line with the nearest, not Scenario's TypeError
        known("run option", key, [k for k in KEYWORDS if k not in (*STEP_FIELDS, "topology", "rate")], "run_jobs")
    try:  # on every host: an option bound by the ranks (root, roots) is checked on each step's own
        base = scenario_of(topology=topology, rate=rate, ranks=None, algorithm="ring", bytes_per_rank=4, **options)
    except McsimError as exc:
        raise McsimError(f"workload: {str(exc).removeprefix('Scenario: ')}") from None
    check_jobs(jobs_, topologies.host_count(base._base_graph()))
    for job in jobs_:  # before each step's Scenario is made: a team has two RC QPs per rank at least
        require_int(f"job {job.name!r}", "compute_units", job.compute_units, lo=0, hi=MAX_COMPUTE_UNITS, why=UNITS_WHY)
        check_qps(job, lambda s: RING_QPS)
    plan = _plan(base, jobs_)
    for j, job in enumerate(jobs_):
        check_qps(job, lambda s, j=j: team_qps(plan.specs[j, s][0]))  # type: ignore[misc]
        check_clock(job, j, plan, base.data_rate_bps)
    if plan.reductions:  # every in-network step's trees share the switches' buffers (fabric.build checks it late)
        try:
            fabric._plan_reductions(base._layout(), plan.reductions, len(plan.groups), base.fabric, base.rdma.mtu_b)
        except McsimError as exc:
            raise McsimError(
                f"workload: its in-network steps' aggregation trees (each step its own): "
                f"{str(exc).removeprefix('FabricConfig: ')}, or give fewer in-network steps"
            ) from None
    return base, plan


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
        states = [jobs.message_states(h, len(_message_rows(job))) for (h, _), job in zip(handles, jobs_, strict=True)]
        stats = [{s: (collectives.team_stats(t), spec) for s, (t, spec) in teams.items()} for _, teams in handles]
        nic = rdma.read_nic_counters(stack, fab.n_hosts)
        fres = fab.collect()
    return WorkloadResult(
        tuple(
            _job_result(job, tl, st, nic, fres, plan, j, ms, base.faults or Faults())
            for j, (job, tl, st, ms) in enumerate(zip(jobs_, timelines, stats, states, strict=True))
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
        try:
            spec = _team_spec(sc, job, first_group, fab.reductions[red] if red >= 0 else None)
            teams[s] = (sim.own_app(collectives.setup_team(stack, spec)), spec)
        except McsimError as exc:
            raise McsimError(f"job {job.name!r}: step {s} ({step.label}): {users_words(str(exc))}") from None
        steps.append(teams[s][0])
    try:
        made = jobs.build_job(j, job.compute_units, job.hosts, steps, _dependencies(job), stack, _messages(job))
    except McsimError as exc:
        raise McsimError(f"job {job.name!r}: {users_words(str(exc))}") from None
    return sim.own_app(made), teams


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
    """Per step, what it waits for: (step, the rank it holds on or jobs.ALL_RANKS)."""
    out = []
    for step in job.steps:
        holds = ((a, holds_on(step, job.steps[a])) for a in step.after)
        out.append([(a, jobs.ALL_RANKS if rank is None else rank) for a, rank in holds])
    return out


def _messages(job: Job) -> jobs.Messages:
    """Every Transfer step's messages, as the C++ Job takes them."""
    sizes = [m.bytes_b for step in job.steps if isinstance(step, Transfer) for m in step.messages]
    rows = [(*row, b) for row, b in zip(_message_rows(job), sizes, strict=True)]
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
