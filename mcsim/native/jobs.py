# SPDX-License-Identifier: GPL-2.0-only
"""The Job binding: a C++ ns3::mcsim::Job (collectives/helper/job.h) runs one job's steps, compute,
collectives and transfers (messages between ranks) with their dependencies, with no Python during the
run; its timeline is read in bulk."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mcsim.native import abi, runtime
from mcsim.native.arrays import u32, u64
from mcsim.native.attributes import set_attributes

JOB = "ns3::mcsim::Job"
TIMES = 3  # per step and rank in the timeline: ready, start, end (C++ Job::TIMES)
TRANSFER = "transfer"  # build_job's step that is a transfer
ALL_RANKS = 0xFFFFFFFF  # a dependency on every rank (C++ Job::ALL_RANKS)


@dataclass(frozen=True, slots=True)
class Messages:
    """A job's messages as columns: message i leaves step from_step[i] on rank src[i] and arrives in step
    to_step[i] on rank dst[i], nbytes[i] bytes."""

    from_step: np.ndarray
    src: np.ndarray
    to_step: np.ndarray
    dst: np.ndarray
    nbytes: np.ndarray


def build_job(
    job_id: int,
    compute_units: int,
    hosts: Sequence[int],
    steps: Sequence[int | tuple[int, ...] | abi.Handle | str],
    dependencies: Sequence[Sequence[tuple[int, int]]],
    stack: abi.Handle | None = None,
    messages: Messages | None = None,
) -> abi.Handle:
    """A C++ Job on ``hosts``, each rank running ``compute_units`` compute steps at once (0: any number):
    step i is compute of steps[i] ps (an int: every rank; a tuple: one per rank), the collective of the
    team steps[i] (set up, not started) or, steps[i] = TRANSFER, a transfer of ``messages`` (RC QPs on
    ``stack``), and waits for the steps dependencies[i], each (step, the rank it holds on or ALL_RANKS);
    started at 0."""
    lib = runtime.load()
    job = abi.Handle(lib, JOB)
    with runtime.disposed_on_error(job):  # not handed to a Simulation yet
        set_attributes(job, "Job", Id=job_id, ComputeUnits=compute_units)
        lib.mcsim_job_setup(job, u32(hosts), len(hosts), len(steps))
        for i, step in enumerate(steps):
            if isinstance(step, int | tuple):
                durations = np.array(step if isinstance(step, tuple) else (step,), dtype=np.int64)
                lib.mcsim_job_compute(job, i, durations, durations.size)
            elif step == TRANSFER:
                lib.mcsim_job_transfer(job, i)
            else:
                lib.mcsim_job_collective(job, i, step)
            for on, rank in dependencies[i]:
                lib.mcsim_job_depend(job, i, on, rank)
        if messages is not None and messages.src.size:
            m = messages
            lib.mcsim_job_messages(
                job,
                stack,
                u32(np.column_stack([m.from_step, m.src]).ravel()),
                u32(np.column_stack([m.to_step, m.dst]).ravel()),
                u64(m.nbytes),
                m.src.size,
            )
        lib.mcsim_job_start(job, 0)
    return job


def timeline(job: abi.Handle, steps: int, ranks: int) -> np.ndarray:
    """The job's timeline after the run: int64 [step, rank, (ready, start, end)] in ps, -1 where never."""
    out = np.empty(steps * ranks * TIMES, dtype=np.int64)
    runtime.load().mcsim_job_timeline(job, out, out.size)
    return out.reshape(steps, ranks, TIMES)


ACKED, ARRIVED = 1, 2  # a message's state bits after the run (C++ Job::ACKED, Job::ARRIVED)


def message_states(job: abi.Handle, n: int) -> np.ndarray:
    """Each of the job's ``n`` messages' state after the run (uint8, in build_job's order): ACKED (its
    sender had its acknowledgement), ARRIVED (its receiver had it); 0: neither."""
    out = np.zeros(n, dtype=np.uint8)
    if n:
        runtime.load().mcsim_job_message_states(job, out, out.size)
    return out
