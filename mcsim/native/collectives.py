# SPDX-License-Identifier: GPL-2.0-only
"""The collectives' binding: which C++ rank application runs a collective, with which parameters.

A collective is (kind, algorithm): ("allgather", "ring") runs ns3::mcsim::RingAllgather on every
rank, ("allgather", "mcast") and ("broadcast", "mcast") run ns3::mcsim::McastAllgather (the
SC'24 multicast protocol with its repair phase), ("reduce_scatter", "ring") runs
ns3::mcsim::RingReduceScatter, ("reduce_scatter", "innet") and ("allreduce", "innet") run
ns3::mcsim::InnetReduction (the switches sum: in-network reduction over the fabric's aggregation
trees). ``start_team`` puts one team of ranks on an RdmaStack; several teams may share a stack
(they run at once on the same NICs). TeamSpec and ALGORITHMS are frozen data in mcsim.config.collectives.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mcsim.config.collectives import ALGORITHMS, TEAM, TeamSpec
from mcsim.native import abi, runtime
from mcsim.native.arrays import read_counters, u32
from mcsim.native.attributes import factory_of, set_attributes_of


def setup_team(stack: abi.Handle, spec: TeamSpec) -> abi.Handle:
    """Create and wire one team on an RdmaStack, not started (a Job starts it); return the C++
    CollectiveTeam."""
    type_name = ALGORITHMS[(spec.collective, spec.algorithm)]
    factory = factory_of(spec, type_name)
    lib = runtime.load()
    team = abi.Handle(lib, TEAM)
    with runtime.disposed_on_error(team):  # not handed to a Simulation yet
        set_attributes_of(team, spec)
        lib.mcsim_team_setup(team, stack, factory, u32(spec.hosts), len(spec.hosts))
    return team


def start_team(stack: abi.Handle, spec: TeamSpec, after: Sequence[abi.Handle] = ()) -> abi.Handle:
    """Create, wire and schedule one team on an RdmaStack (at spec.start_ps, or once every rank of every team
    in ``after`` has finished); return the C++ CollectiveTeam."""
    team = setup_team(stack, spec)
    lib = runtime.load()
    with runtime.disposed_on_error(team):
        if not after:
            lib.mcsim_team_start(team, spec.start_ps)
        for first in after:
            lib.mcsim_team_start_after(team, first)
    return team


def team_stats(team: abi.Handle) -> dict[str, np.ndarray]:
    """The "rank" stats of every rank of a team, as numpy arrays (after the run)."""
    lib = runtime.load()
    return read_counters("rank", lib.mcsim_team_n_ranks(team), team)


# CollectiveRank::EventKind, in its order: what each protocol event was
EVENT_KINDS = (
    "start", "data_start", "activate", "token_out", "token_in", "need_fetch_out", "need_fetch_in", "fetch_ok_out",
    "fetch_ok_in", "read_out", "read_in", "fin_out", "fin_in", "data_timeout", "finish",
)  # fmt: skip
EVENT_DTYPE = np.dtype(
    [("team", np.int64), ("rank", np.int64), ("time_ps", np.int64), ("kind", "U14"), ("source", np.int64),
     ("value", np.int64), ("count", np.int64)]
)  # fmt: skip
EVENT_FIELDS = 6  # per event from C++: rank, time, kind, source, value, count (CollectiveTeam::EVENT_FIELDS)


def record_events(team: abi.Handle) -> None:
    """Every rank of the team records its protocol events (before the run)."""
    runtime.load().mcsim_team_record_events(team)


def team_events(team: abi.Handle, index: int = 0) -> np.ndarray:
    """The team's protocol events after the run (EVENT_DTYPE, ``team`` = index): rank by rank, each rank's in
    the order they happened."""
    lib = runtime.load()
    raw = np.empty(lib.mcsim_team_event_count(team) * EVENT_FIELDS, dtype=np.int64)
    if raw.size:
        lib.mcsim_team_events(team, raw, raw.size)
    rows = raw.reshape(-1, EVENT_FIELDS)
    out = np.empty(rows.shape[0], dtype=EVENT_DTYPE)
    out["team"] = index
    for i, name in enumerate(("rank", "time_ps")):
        out[name] = rows[:, i]
    out["kind"] = np.asarray(EVENT_KINDS)[rows[:, 2]] if rows.size else []
    for i, name in enumerate(("source", "value", "count"), 3):
        out[name] = rows[:, i]
    return out
