# SPDX-License-Identifier: GPL-2.0-only
"""Why a workload's job did not finish (JobResult.why_incomplete), step by step: each step some rank was ready for
but never ended, its ranks still waiting and what each waits for (a collective's unfinished ranks and why, the
ranks that never entered it, a message from or to a rank and the cause its NIC or a peer's link shows, a compute
unit), then how many steps wait behind them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from mcsim.result import NO_KNOWN_CAUSE_REASON, RC_ERROR_REASON, Result, cut_off_reason, ranks_text
from mcsim.runs.assemble import ACKED, ARRIVED
from mcsim.workloads.job import Collective, Compute, Job, Transfer, shown


@dataclass(frozen=True, slots=True)
class Unfinished:
    """What an incomplete job's run left that says why its steps never ended (JobResult.why_incomplete)."""

    # per message of its Transfer steps (their order, message by message): ACKED | ARRIVED as they happened
    message_states: np.ndarray
    rc_errors: np.ndarray | None  # per rank: its NIC's RC QPs that exhausted their retries
    link_down_for_good_ps: np.ndarray  # per rank: its host's only link down for good (NEVER: never)


class Ran(Protocol):
    """What the text reads of a job's run (mcsim.runs.jobs.JobResult, which imports this module)."""

    @property
    def job(self) -> Job: ...
    @property
    def timeline(self) -> np.ndarray: ...
    @property
    def collectives(self) -> dict[int, Result]: ...
    @property
    def unfinished(self) -> Unfinished | None: ...


MAX_LISTED_STEPS = 3  # an incomplete job's line names at most this many steps that never ended


def incomplete_text(r: Ran) -> str:
    """:meth:`JobResult.why_incomplete` of an incomplete job: ``"step 3 (AG F1): ranks 0, 1 of 4 wait for
    rank 2 to enter it; step 2 (send): rank 2 of 4 waits for its message to rank 3 to be acknowledged: ...;
    5 later steps wait behind them"``."""
    ready, end = r.timeline[:, :, 0], r.timeline[:, :, 2]
    stuck = np.flatnonzero(((ready >= 0) & (end < 0)).any(axis=1))
    parts = [f"step {s} ({shown(r.job.steps[s].label)}): {_stuck_step(r, int(s))}" for s in stuck[:MAX_LISTED_STEPS]]
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


def _stuck_step(r: Ran, s: int) -> str:
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


def _compute_wait(r: Ran, s: int, rank: int) -> str:
    """A compute step's rank: computing past the run's end, or waiting for a compute unit (held by ...)."""
    tl = r.timeline
    if tl[s, rank, 1] >= 0:
        return "did not finish computing (the run ended first)"
    held = [
        k for k, other in enumerate(r.job.steps) if isinstance(other, Compute) and tl[k, rank, 1] >= 0 > tl[k, rank, 2]
    ]
    by = f" (held by step {held[0]} ({shown(r.job.steps[held[0]].label)}))" if held else ""
    return f"wait{{s}} for a compute unit{by}"


def message_rows(job: Job) -> list[tuple[int, int, int, int, int]]:
    """Every Transfer step's messages in build order, as the C++ Job takes them: (its step, src, the step it
    arrives in, dst, bytes)."""
    return [
        (s, m.src, s if m.into is None else int(m.into), m.dst, m.bytes_b)
        for s, step in enumerate(job.steps)
        if isinstance(step, Transfer)
        for m in step.messages
    ]


def _transfer_waits(r: Ran, s: int, ranks: list[int]) -> dict[int, str]:
    """A transfer step's ranks: the messages each still waits for (out: acknowledged, in: arrived), and the
    cause its NIC or a peer's link shows (one pass over the job's messages)."""
    rows = np.array(message_rows(r.job), dtype=np.int64).reshape(-1, 5)
    states = r.unfinished.message_states if r.unfinished is not None else np.zeros(len(rows), dtype=np.uint8)
    out: dict[int, list[int]] = {}
    into: dict[int, list[int]] = {}
    for src, dst in rows[(rows[:, 0] == s) & (states & ACKED == 0)][:, [1, 3]].tolist():
        out.setdefault(src, []).append(dst)
    for src, dst in rows[(rows[:, 2] == s) & (states & ARRIVED == 0)][:, [1, 3]].tolist():
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


def _transfer_cause(r: Ran, rank: int, peers: list[int]) -> str | None:
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
