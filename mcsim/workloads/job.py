# SPDX-License-Identifier: GPL-2.0-only
"""A job as frozen data: its hosts and a graph of steps (compute of a duration, collectives, transfers of
point-to-point messages), every rank running every step; checked before any C++ object exists (one
McsimError line each)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from mcsim.errors import McsimError, is_integer, require_int, shown_value
from mcsim.units import CLOCK_LIMIT, MAX_SIMULATED_PS, parse_size

# What a job may hold, so that no file or call makes mcsim plan without bound before its first line. Planning
# costs ~15 us and ~1.6 KB a step here (fsdp_job of 100,000 steps: 1.5 s; then run_jobs' checks ~75 us a step
# and 164 MB in all), so a job at the limit is planned in ~25 s and ~400 MB. Real jobs are far smaller: one FSDP
# iteration of a 70B model on 80 layers is ~400 steps, a big Chakra trace ~100,000 nodes.
MAX_JOB_STEPS = 250_000
# A message is a step's share of planning too (a permutation round holds one per rank): 4x the steps' limit,
# ~100 B each in Python.
MAX_JOB_MESSAGES = 1_000_000
STEPS_LIMIT = f"a job holds at most {MAX_JOB_STEPS} steps (mcsim.workloads.job.MAX_JOB_STEPS)"
MESSAGES_LIMIT = f"a job holds at most {MAX_JOB_MESSAGES} messages (mcsim.workloads.job.MAX_JOB_MESSAGES)"
MAX_SHOWN_LABEL = 120  # characters of a step's label a message shows
MAX_COMPUTE_UNITS = 2**32 - 1  # uint32 in C++ (the Job's ComputeUnits attribute)
HOSTS_RULE = "a tuple of host numbers (integers >= 0), e.g. (0, 1, 2, 3)"


def check_step_count(where: str, name: str, value: object, steps: int, messages: int = 0, per: str = "") -> None:
    """Refuse what ``name=value`` makes: ``steps`` steps (and ``messages`` messages) past the job's limits, one
    line with the estimate (``per``: how it follows, e.g. "5 per layer") and the limit; before any is built."""
    how = f" ({per})" if per else ""
    if steps > MAX_JOB_STEPS:
        raise McsimError(f"{where}: {name}={value!r} makes {steps} steps{how}; {STEPS_LIMIT}")
    if messages > MAX_JOB_MESSAGES:
        raise McsimError(f"{where}: {name}={value!r} makes {messages} messages{how}; {MESSAGES_LIMIT}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Compute:
    """Compute of ``duration_ps`` on every rank (or a tuple: one duration per rank), once the steps
    ``after`` (indices) have ended on it; with ``rank``, on that rank only."""

    label: str
    duration_ps: int | tuple[int, ...]
    after: tuple[int, ...] = ()
    rank: int | None = None  # one rank's own step (see Job); None: every rank's

    def on(self, rank: int) -> int:
        """Its duration on ``rank`` (0 where it is not the rank's step)."""
        if not present(self, rank):
            return 0
        return self.duration_ps[rank] if isinstance(self.duration_ps, tuple) else self.duration_ps


@dataclass(frozen=True, slots=True, kw_only=True)
class Collective:
    """A collective over the job's ranks (any collective and algorithm a Scenario runs as one team), once
    the steps ``after`` have ended on every rank: it starts on all ranks when the last one is ready."""

    label: str
    collective: str
    algorithm: str
    bytes_per_rank: str | int
    after: tuple[int, ...] = ()

    @property
    def bytes_per_rank_b(self) -> int:
        return parse_size(self.bytes_per_rank)


@dataclass(frozen=True, slots=True)
class Message:
    """``nbytes`` from rank ``src`` to rank ``dst`` of the job (one RC RDMA WRITE): it leaves the Transfer
    step that holds it and arrives in the Transfer step ``into`` on ``dst`` (None: the same step; an index in
    a Job, a step's key in job_of_graph's graph)."""

    src: int
    dst: int
    nbytes: int | str
    into: int | str | None = None

    @property
    def bytes_b(self) -> int:
        return parse_size(self.nbytes)


@dataclass(frozen=True, slots=True, kw_only=True)
class Transfer:
    """Point-to-point messages between the job's ranks. A message leaves once its sender is ready for this step
    (eager: its receive and buffer are posted in advance, as NCCL's are, so it never waits for its
    receiver); on a rank the step ends once it is ready, its messages out are acknowledged and its messages
    in (from any step) have arrived, at once on a rank with none left."""

    label: str
    messages: tuple[Message, ...]
    after: tuple[int, ...] = ()
    rank: int | None = None  # one rank's own step (see Job): its messages leave that rank; None: every rank's


Step = Compute | Collective | Transfer


def present(step: Step, rank: int) -> bool:
    """Whether ``step`` is ``rank``'s: every rank's, or that rank's own."""
    own = getattr(step, "rank", None)
    return own is None or own == rank


def holds_on(step: Step, on: Step) -> int | None:
    """The rank on which ``step`` waits for ``on``: both every rank's, every rank (None); else the one whose
    own step one of them is (-1: they are two ranks' own steps, which wait for nothing of each other)."""
    a, b = getattr(step, "rank", None), getattr(on, "rank", None)
    if a is not None and b is not None and a != b:
        return -1
    return a if a is not None else b


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    """One job: rank i on hosts[i]; its steps in an order where every step waits only for earlier ones. A
    ready compute step waits for a free compute unit of its rank (``compute_units``; ready steps in the order
    they became ready). Every rank runs every step, except a Compute or Transfer step with a ``rank``: that
    rank's own (a graph per rank, as traces of pipeline stages are), which passes at once on the other ranks;
    a step waits for one rank's own step on that rank only, and one rank's own step for nothing of another's."""

    name: str
    hosts: tuple[int, ...]
    steps: tuple[Step, ...]
    compute_units: int = 1  # compute steps a rank runs at once (a GPU: 1); 0: no limit

    def __post_init__(self) -> None:
        where = f"job {self.name!r}"
        object.__setattr__(self, "hosts", host_tuple(where, self.hosts))
        require_int(
            where,
            "compute_units",
            self.compute_units,
            lo=0,
            hi=MAX_COMPUTE_UNITS,
            why=" (compute steps a rank runs at once, 0: no limit; a 32-bit count)",
        )
        if not self.steps:
            raise McsimError(f"{where}: has no step")
        if len(self.steps) > MAX_JOB_STEPS:
            raise McsimError(f"{where}: holds {len(self.steps)} steps; {STEPS_LIMIT}")
        messages = sum(len(s.messages) for s in self.steps if isinstance(s, Transfer) and isinstance(s.messages, tuple))
        if messages > MAX_JOB_MESSAGES:
            raise McsimError(f"{where}: holds {messages} messages; {MESSAGES_LIMIT}")
        if len(self.hosts) < 2:
            raise McsimError(f"{where}: has {len(self.hosts)} host; a job needs 2")
        if len(set(self.hosts)) != len(self.hosts):
            raise McsimError(f"{where}: a host appears twice in its hosts")
        for i, step in enumerate(self.steps):
            if not isinstance(step, Compute | Collective | Transfer):
                raise McsimError(f"{where}: step {i} is {step!r}, not a Compute, a Collective or a Transfer")
            if getattr(step, "rank", None) is not None:
                require_int(
                    f"{where}: step {i} ({shown(step.label)})",
                    "rank",
                    getattr(step, "rank", None),
                    lo=0,
                    hi=len(self.hosts) - 1,
                )
            if isinstance(step.after, str | bytes) or not isinstance(step.after, tuple | list):
                raise McsimError(
                    f"{where}: step {i} ({shown(step.label)}): after={shown_value(step.after)} must be a tuple of the "
                    "indices of the steps it waits for, e.g. (0,)"
                )
            late = [a for a in step.after if not isinstance(a, int) or isinstance(a, bool) or not 0 <= a < i]
            if late:
                raise McsimError(
                    f"{where}: step {i} ({shown(step.label)}) waits for {late[0]!r}; a step waits only for earlier "
                    "steps (their indices), so the steps have no cycle"
                )
            if isinstance(step, Compute):
                _check_duration(where, i, step, len(self.hosts))
            if isinstance(step, Collective):
                parse_size(step.bytes_per_rank, what=f"{where}: step {i} ({shown(step.label)}): bytes_per_rank")
            other = next((a for a in step.after if holds_on(step, self.steps[a]) == -1), None)
            if other is not None:
                raise McsimError(
                    f"{where}: step {i} ({shown(step.label)}), rank {getattr(step, 'rank', None)}'s own, waits for "
                    f"step {other}, rank {getattr(self.steps[other], 'rank', None)}'s own"
                )
            if isinstance(step, Transfer):
                _check_messages(f"{where}: step {i} ({shown(step.label)})", step, self.steps, len(self.hosts))


def _check_duration(where: str, i: int, step: Compute, ranks: int) -> None:
    d = step.duration_ps
    each = d if isinstance(d, tuple) else (d,)
    if isinstance(d, tuple) and len(d) != ranks:
        raise McsimError(f"{where}: step {i} ({shown(step.label)}) has {len(d)} durations for {ranks} ranks")
    if not all(is_integer(x) and 0 <= x <= MAX_SIMULATED_PS for x in each):
        raise McsimError(
            f"{where}: step {i} ({shown(step.label)}) lasts {shown_value(d)} ps; give an int 0..{MAX_SIMULATED_PS} "
            f"({CLOCK_LIMIT}), or one per rank"
        )


def host_tuple(where: str, hosts: object) -> tuple[int, ...]:
    """A job's hosts as a tuple of ints (a list, a range or an array too); one line for a string, a set (rank i is
    on hosts[i]: they have an order) or a value not a host number, which would otherwise be read letter by letter
    or fail in arithmetic."""
    if isinstance(hosts, str | bytes | AbstractSet | Mapping) or not isinstance(hosts, Iterable):
        raise McsimError(f"{where}: hosts={shown_value(hosts)} must be {HOSTS_RULE}")
    out = tuple(hosts)
    if not all(is_integer(h) and h >= 0 for h in out):
        raise McsimError(f"{where}: hosts={shown_value(hosts)} must be {HOSTS_RULE}")
    return tuple(int(h) for h in out)


def shown(label: object) -> str:
    """A step's label as a message shows it: cut at MAX_SHOWN_LABEL characters (a trace's node may be named with
    megabytes)."""
    text = str(label)
    return text if len(text) <= MAX_SHOWN_LABEL else f"{text[: MAX_SHOWN_LABEL - 3]}..."


def _check_messages(where: str, step: Transfer, steps: tuple[Step, ...], ranks: int) -> None:
    if not isinstance(step.messages, tuple) or not all(isinstance(m, Message) for m in step.messages):
        raise McsimError(f"{where}: messages must be a tuple of Message")
    for m in step.messages:
        for name in ("src", "dst"):
            require_int(f"{where}: a message", name, getattr(m, name), lo=0, hi=ranks - 1)
        if m.src == m.dst:
            raise McsimError(f"{where}: a message from rank {m.src} to itself; a message goes to another rank")
        if parse_size(m.nbytes, what=f"{where}: a message's nbytes") < 1:
            raise McsimError(f"{where}: a message of {m.nbytes!r} bytes; give >= 1")
        into = m.into
        bad = into is not None and (not isinstance(into, int) or isinstance(into, bool) or not 0 <= into < len(steps))
        if bad or (into is not None and not isinstance(steps[into], Transfer)):  # type: ignore[index]
            raise McsimError(f"{where}: a message arrives in step {into!r}, which is no Transfer step of the job")
        arrives = step if into is None else steps[into]  # type: ignore[index]
        if not present(step, m.src) or not present(arrives, m.dst):
            raise McsimError(
                f"{where}: a message from rank {m.src} to rank {m.dst} leaves or enters a step that is another "
                "rank's own"
            )


def check_jobs(jobs: tuple[Job, ...], n_hosts: int) -> None:
    """Jobs share the fabric, never a host; every host exists."""
    if not jobs:
        raise McsimError("workload: has no job")
    owner: dict[int, str] = {}
    names = [j.name for j in jobs]
    if len(set(names)) != len(names):
        raise McsimError(f"workload: two jobs are named {next(n for n in names if names.count(n) > 1)!r}")
    for job in jobs:
        for h in job.hosts:
            if not isinstance(h, int) or isinstance(h, bool) or not 0 <= h < n_hosts:
                raise McsimError(f"job {job.name!r}: host {h!r} is not a host of the topology (0..{n_hosts - 1})")
            if h in owner:
                raise McsimError(f"job {job.name!r}: host {h} is also in job {owner[h]!r}; jobs share no host")
            owner[h] = job.name


def job_of_graph(
    name: str, hosts: tuple[int, ...], nodes: dict[str, tuple[Step, tuple[str, ...]]], compute_units: int = 1
) -> Job:
    """A Job from a graph of named steps (each with the names it waits for), its steps in a dependency
    order (Kahn's, ties in the order given); a cycle or a name that is no step is one McsimError line."""
    if not isinstance(nodes, Mapping):
        raise McsimError(
            f"job {name!r}: nodes={shown_value(nodes)} must be a dict {{key: (step, (keys it waits for))}}"
        )
    if len(nodes) > MAX_JOB_STEPS:
        raise McsimError(f"job {name!r}: holds {len(nodes)} steps; {STEPS_LIMIT}")
    for key, node in nodes.items():
        if not (isinstance(node, tuple | list) and len(node) == 2):
            raise McsimError(
                f"job {name!r}: step {key!r} is {shown_value(node)}; give (step, (the keys it waits for, ...))"
            )
        if isinstance(node[1], str | bytes):
            raise McsimError(
                f"job {name!r}: step {key!r} waits for {node[1]!r}, a string; give a tuple of keys, e.g. ({node[1]!r},)"
            )
    order: list[str] = []
    waiting = {key: len(set(deps)) for key, (_, deps) in nodes.items()}
    dependents: dict[str, list[str]] = {key: [] for key in nodes}
    for key, (_, deps) in nodes.items():
        for d in set(deps):
            if d not in nodes:
                raise McsimError(f"job {name!r}: step {key!r} waits for {d!r}, which is no step of the job")
            dependents[d].append(key)
    ready = [key for key in nodes if waiting[key] == 0]
    while ready:
        key = ready.pop(0)
        order.append(key)
        for d in dependents[key]:
            waiting[d] -= 1
            if waiting[d] == 0:
                ready.append(d)
    if len(order) < len(nodes):
        stuck = next(key for key in nodes if waiting[key] > 0)
        raise McsimError(f"job {name!r}: the steps' dependencies have a cycle (step {stuck!r} is on or behind it)")
    index = {key: i for i, key in enumerate(order)}
    steps = tuple(
        _indexed(name, key, nodes[key][0], index, tuple(sorted(index[d] for d in set(nodes[key][1])))) for key in order
    )
    return Job(name=name, hosts=hosts, steps=steps, compute_units=compute_units)


def _indexed(name: str, key: str, step: Step, index: dict[str, int], after: tuple[int, ...]) -> Step:
    """The step with its dependencies, and a Transfer's messages' ``into``, as indices."""
    if not isinstance(step, Transfer):
        return dataclasses.replace(step, after=after)
    for m in step.messages:
        if isinstance(m, Message) and m.into is not None and m.into not in index:
            raise McsimError(f"job {name!r}: step {key!r} sends a message into {m.into!r}, which is no step of the job")
    messages = tuple(
        dataclasses.replace(m, into=index[str(m.into)]) if isinstance(m, Message) and m.into is not None else m
        for m in step.messages
    )
    return dataclasses.replace(step, after=after, messages=messages)


def step_kind(step: Compute | Collective | Transfer) -> str:
    """compute, collective or transfer: the timeline's kind column."""
    return "compute" if isinstance(step, Compute) else "transfer" if isinstance(step, Transfer) else "collective"
