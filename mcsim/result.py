# SPDX-License-Identifier: GPL-2.0-only
"""Results as plain data: what a run measured, as numpy arrays (nothing here needs the fabric, the
runtime or ns-3, so a stored result reads back anywhere).

FabricResult: the fabric's counters of any run. VerbsResult: a verbs-level run (mcsim.runs.verbs.run_verbs).
Result: one collective run, with nccl-tests bandwidths.

A run in which some rank never got its whole output has no time and no bandwidth: ``time_ps``,
``algbw_Bps`` and ``busbw_Bps`` raise :class:`~mcsim.errors.IncompleteRun`, ``summary()`` gives NaN,
and :meth:`Result.why_unfinished` says why each unfinished rank did not finish.

Times are int64 picoseconds. A time that did not happen (a host that received nothing, a work
request or a rank that never completed, a link that never went down for good) is :data:`NEVER`
(-1) in every time array of a result: C++ writes UINT64_MAX (ns3::mcsim::NEVER_PS) and
:func:`times_ps` converts, so every counter column named ``*_ps`` holds int64 ps or NEVER.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from mcsim.bounds import bound_b, hierarchical_b, lacking_b, output_b
from mcsim.errors import IncompleteRun, McsimError
from mcsim.units import NEVER as NEVER  # declared in the ground (config/ reads it too); mcsim.result.NEVER stays
from mcsim.units import PS_PER_S, format_size, format_time

NCCL_TYPE_B = 4  # nccl-tests' default data type, float: its count is size / 4


class Tree(Protocol):
    """What a result keeps of a multicast group's tree (mcsim.routing.routes.MulticastTree is one): its
    member hosts, the switch it was grown from, each tree switch's tree ports and its links (u, port_u, v,
    port_v). A result names no routing type, so it stays plain data over the ground alone."""

    @property
    def members(self) -> tuple[int, ...]: ...
    @property
    def root(self) -> int: ...
    @property
    def switch_ports(self) -> dict[int, tuple[int, ...]]: ...
    @property
    def tree_links(self) -> tuple[tuple[int, int, int, int], ...]: ...


def times_ps(raw: np.ndarray) -> np.ndarray:
    """C++ times (uint64 ps, UINT64_MAX: never) as int64 ps, :data:`NEVER` where they did not happen."""
    raw = np.asarray(raw, dtype=np.uint64)
    return np.where(raw == np.iinfo(np.uint64).max, NEVER, raw.astype(np.int64))


# drop cause -> the port counter that counts it (each dropped packet counts under exactly one)
DROP_CAUSES = {
    "tail": "drop_packets",
    "loss": "loss_packets",
    "chosen": "chosen_drops",
    "link_down": "link_down_drops",
}


@dataclass(frozen=True, slots=True, repr=False)
class QueueTrace:
    """The output queues of some ports sampled during a run (mcsim.config.queue_trace.QueueTraceConfig): wire
    bytes queued and waiting, as ECN's RED reads them, at 0, interval_ps, 2 interval_ps, ... to the run's end."""

    ports: tuple[tuple[int, int], ...]  # (node, port), in the order traced
    interval_ps: int
    time_ps: np.ndarray  # int64 per sample kept
    queue_b: np.ndarray  # int64, shape (ports, samples kept)
    left_out: int  # samples per port past max_samples, not kept
    ecn_kmin_b: np.ndarray  # per port: its RED thresholds in force (0 and 0: it marks nothing)
    ecn_kmax_b: np.ndarray

    def of(self, node: int, port: int) -> np.ndarray:
        """One port's samples as rows (time_ps, queue_b): int64, shape (samples kept, 2)."""
        if (node, port) not in self.ports:
            raise McsimError(f"QueueTrace: port {node}:{port} was not traced; traced: {self.ports}")
        return np.column_stack((self.time_ps, self.queue_b[self.ports.index((node, port))]))


@dataclass(frozen=True, slots=True, repr=False)
class FabricResult:
    """Counters of one run, as numpy arrays (uint64), plus the port -> (node, port) map."""

    port_node: np.ndarray  # global port index -> node
    port_num: np.ndarray  # global port index -> port number on that node
    port_peer: np.ndarray  # global port index -> global index of the port at the link's far end
    ports: dict[str, np.ndarray]  # runtime.counter_names("port") -> per global port
    hosts: dict[str, np.ndarray]  # counter_names("host") -> per host
    sources: dict[str, np.ndarray]  # counter_names("source") -> per flow, in the order given
    unroutable_packets: int
    end_ps: int  # simulation time when the last event ran
    trees: Sequence[Tree | None] = field(default_factory=list)
    # in-network reduction: counter_names("aggregation") -> per switch (in node order); empty
    # when the run has no reduction
    aggregation: dict[str, np.ndarray] = field(default_factory=dict)
    # raw flows (simulate()): packets the hosts receive when none is lost; None for RDMA runs, whose
    # transport recovers what is lost
    expected_rx_packets: int | None = None
    # Priority Flow Control (flow_control="pfc"): counter_names("pfc") -> per global port (pause frames
    # sent and received, paused time, ingress drops, ...); None without PFC
    pfc: dict[str, np.ndarray] | None = None
    # PFC: the ports of the deadlock that stopped the run, as (node, port), each paused by the next's node
    # and none moving (fabric.md, "Priority Flow Control"); () when none; None without PFC
    pfc_deadlock: tuple[tuple[int, int], ...] | None = None
    # ECN (FabricConfig.ecn): counter_names("ecn") -> per global port (ECN-capable packets its output queue
    # took, those it marked CE, those a host's port made ECN-capable); None without ECN
    ecn: dict[str, np.ndarray] | None = None
    # INT (HPCC, RdmaConfig.congestion=HpccConfig()): counter_names("int") -> per global port (hop records
    # its switch added to packets, packets that had no room left for it); None without HPCC
    telemetry: dict[str, np.ndarray] | None = None
    queue_trace: QueueTrace | None = None  # the queues sampled (simulate, run_verbs, Scenario.run: queue_trace=)

    def pfc_deadlock_text(self) -> str:
        """``"a PFC deadlock: ports 17:1 -> 18:2 -> 17:1 paused each other in a cycle"``, or "" if none."""
        if not self.pfc_deadlock:
            return ""
        cycle = " -> ".join(f"{n}:{p}" for n, p in (*self.pfc_deadlock, self.pfc_deadlock[0]))
        return f"a PFC deadlock: ports (node:port) {cycle} paused each other in a cycle, and the run was stopped"

    def drops_by_cause(self) -> dict[str, int]:
        """Dropped packets of the whole fabric by cause: tail, loss, chosen, link_down (and with PFC
        pfc_ingress: over an ingress queue's headroom, counted at the port where they arrived)."""
        out = {cause: int(self.ports[name].sum()) for cause, name in DROP_CAUSES.items()}
        if self.pfc is not None:
            out["pfc_ingress"] = int(self.pfc["ingress_drops"].sum())
        return out

    def dropped_packets(self) -> np.ndarray:
        """Per global port: packets it dropped or lost on its link, all causes (a PFC ingress drop
        counts at the port where the packet arrived)."""
        out = sum((self.ports[name] for name in DROP_CAUSES.values()), np.zeros_like(self.port_node, np.uint64))
        return out + self.pfc["ingress_drops"] if self.pfc is not None else out

    @property
    def finish_ps(self) -> int:
        """Last bit of the last packet at any host. For raw flows that lost packets there is no
        finish: IncompleteRun, naming how many were lost and why (raw flows do not recover)."""
        received = int(self.hosts["rx_packets"].sum())
        if self.pfc_deadlock:
            raise IncompleteRun(f"the flows have no finish time: {self.pfc_deadlock_text()}")
        if self.expected_rx_packets is not None and received < self.expected_rx_packets:
            causes = ", ".join(f"{n} {cause}" for cause, n in self.drops_by_cause().items() if n)
            raise IncompleteRun(
                f"the flows have no finish time: {self.expected_rx_packets - received} of "
                f"{self.expected_rx_packets} packets never arrived (drops: {causes or 'none counted'}; "
                f"{self.unroutable_packets} unroutable)"
            )
        return int(self.hosts["last_arrival_ps"].max())  # NEVER (-1) of a host that got nothing is below

    def link_traversals(self) -> int:
        """Packets sent over all links, both directions (a packet crossing 3 links counts 3)."""
        return int(self.ports["tx_packets"].sum())

    def port_index(self, node: int, port: int) -> int:
        """Global port index of (node, port)."""
        hits = np.flatnonzero((self.port_node == node) & (self.port_num == port))
        if hits.size != 1:
            raise McsimError(f"FabricResult: node {node} has no port {port}")
        return int(hits[0])

    def __repr__(self) -> str:
        """One line (the arrays stay out of it): ports, hosts, flows, end time, traversals, drops."""
        drops = sum(self.drops_by_cause().values()) if all(n in self.ports for n in DROP_CAUSES.values()) else "?"
        return (
            f"<FabricResult {self.port_node.size} ports, {len(next(iter(self.hosts.values()), ()))} hosts, "
            f"{len(next(iter(self.sources.values()), ()))} flows, end {format_time(self.end_ps)}, "
            f"{self.link_traversals() if 'tx_packets' in self.ports else '?'} link traversals, {drops} drops>"
        )


@dataclass(frozen=True, slots=True, repr=False)
class VerbsResult:
    """What a verbs run measured; arrays are numpy."""

    fabric: FabricResult
    rc_done_ps: np.ndarray  # per RC op: when the requester's work request completed (NEVER: it did not)
    rc_responder_done_ps: np.ndarray  # per RC op: responder receive completion (SEND, WRITE_IMM; else NEVER)
    rc_requester: dict[str, np.ndarray]  # counter_names("rc_qp") of each op's requester QP
    rc_responder: dict[str, np.ndarray]  # counter_names("rc_qp") of each op's responder QP
    ud: dict[str, np.ndarray]  # counter_names("ud_qp") per UD QP: "host", "group" (NO_GROUP: unicast), ...
    nic: dict[str, np.ndarray]  # counter_names("nic") per host

    def __repr__(self) -> str:
        """One line: RC operations (how many completed), UD QPs, and the fabric's line."""
        done = int((self.rc_done_ps >= 0).sum())
        ud = len(next(iter(self.ud.values()), ()))
        return f"<VerbsResult {self.rc_done_ps.size} RC ops ({done} completed), {ud} UD QPs; {self.fabric!r}>"


class AckTimeout(Protocol):
    """What :meth:`Result.timeout_note` reads of a run's RC settings (an ``mcsim.config.rdma.RcConfig``;
    named by shape, so that results import nothing of the transport)."""

    @property
    def ack_timeout_exp(self) -> int: ...

    @property
    def ack_timeout_ps(self) -> int: ...


MAX_LISTED_RANKS = 10  # an incomplete run's message names at most this many ranks per reason


RC_ERROR_REASON = "an RC queue pair of its NIC exhausted its retries (RcConfig.retry_cnt) and went to the error state"
NO_KNOWN_CAUSE_REASON = "did not receive its whole output (missing data when the simulation ran out of events)"


def cut_off_reason(down_ps: int) -> str:
    return f"its only link went down for good at {down_ps / 1e6:.3f} us (Faults.link_down)"


def ranks_text(ranks: list[int]) -> str:
    """``"rank 3"``, ``"ranks 0, 1, 2"``, or the first MAX_LISTED_RANKS then ``"... and N more"``."""
    listed = ", ".join(map(str, ranks[:MAX_LISTED_RANKS]))
    more = f" ... and {len(ranks) - MAX_LISTED_RANKS} more" if len(ranks) > MAX_LISTED_RANKS else ""
    return f"{'rank' if len(ranks) == 1 else 'ranks'} {listed}{more}"


def times_text(ratio: float) -> str:
    """A ratio as people read it: ``"2.18"``, ``"335"``, ``"2329"`` (no exponent)."""
    return f"{ratio:.3g}" if ratio < 100 else f"{ratio:.0f}"


def held_up_reason(culprits: list[int]) -> str:
    return f"it misses data that {ranks_text(culprits)} could not deliver (cut off, or a failed RC queue pair)"


def _cut_off(r: Result, rank: int) -> str | None:
    down = r.link_down_for_good_ps
    return cut_off_reason(int(down[rank])) if down is not None and down[rank] >= 0 else None


def _rc_error(r: Result, rank: int) -> str | None:
    errors = r.nic.get("rc_errors")
    return RC_ERROR_REASON if errors is not None and int(errors[rank]) > 0 else None


def _held_up(r: Result, rank: int) -> str | None:
    """Another rank that cannot deliver (cut off, or a failed QP) holds up this rank's data."""
    culprits = [c for c in range(r.ranks) if c != rank and (_cut_off(r, c) or _rc_error(r, c))]
    return held_up_reason(culprits) if culprits else None


def receive_drops_reason(drops: int) -> str:
    return (
        f"did not receive its whole output, and its NIC dropped {drops} datagrams that found no posted receive "
        "buffer (its receive completions were processed more slowly than they came: receive on the DPA, "
        "RdmaConfig(processor=DpaConfig()), or raise RdmaConfig.rq_depth)"
    )


def _receive_drops(r: Result, rank: int) -> str | None:
    drops = r.rank.get("receive_drops")
    return receive_drops_reason(int(drops[rank])) if drops is not None and int(drops[rank]) > 0 else None


def _no_known_cause(r: Result, rank: int) -> str | None:
    return NO_KNOWN_CAUSE_REASON


def _pfc_deadlock(r: Result, rank: int) -> str | None:
    return r.fabric.pfc_deadlock_text() or None


# Why a rank did not finish, from the data in its Result: each function returns the reason or
# None; the first that gives one wins and the last one always does. Add a cause before the last.
UNFINISHED_REASONS: tuple[Callable[[Result, int], str | None], ...] = (
    _pfc_deadlock,
    _cut_off,
    _rc_error,
    _held_up,
    _receive_drops,
    _no_known_cause,
)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a hierarchical collective's ranks sit: ``nodes`` nodes of ``gpus`` GPUs, rank h on host h (GPU l of node
    n is host n x gpus + l), GPU l of every node on rail l; its shard (Allgather) or block (Reduce-Scatter) is the
    output's position l x nodes + n (rail-major: each rail's shards side by side). ``nvlink_rate_bps``: the GPUs'
    NVLink data rate, which the node phase runs at (the Result's data_rate_bps is the NICs')."""

    nodes: int
    gpus: int
    nvlink_rate_bps: int

    def position(self, host: int) -> int:
        """The output position of host ``host``'s shard or block."""
        return (host % self.gpus) * self.nodes + host // self.gpus

    def text(self) -> str:
        return (
            f"{self.nodes} nodes x {self.gpus} GPUs; GPU l of node n (host n x {self.gpus} + l) on rail l, its shard "
            f"at position l x {self.nodes} + n (rail-major)"
        )


@dataclass(frozen=True, slots=True, repr=False)
class Result:
    """One collective run. Times in ps from the collective's start; bytes in bytes."""

    collective: str
    algorithm: str
    ranks: int
    bytes_per_rank_b: int
    data_rate_bps: int  # the hosts' link data rate (after encoding)
    finish_ps: np.ndarray  # per rank: every byte of its output is there (NEVER: it never was)
    injected_b: np.ndarray  # per rank: payload bytes its NIC sent (data, control, repair; an NCCL protocol's flags)
    received_b: np.ndarray  # per rank: payload bytes its NIC received
    rank: dict[str, np.ndarray]  # counter_names("rank") per rank
    nic: dict[str, np.ndarray]  # counter_names("nic") per rank (the NIC's: every collective on it)
    fabric: FabricResult
    concurrent: Result | None = None  # the collective that ran at the same time (Scenario.overlap)
    first_phase: Result | None = None  # a two-phase collective's first (its Reduce-Scatter: TWO_PHASE)
    # Scenario.run(events=True): every rank's protocol events (mcsim.native.collectives.EVENT_DTYPE)
    protocol_events: np.ndarray | None = None
    # Scenario.run(pcap=...): per file written (its path, frames in it, frames over its caps)
    pcap_files: tuple[tuple[str, int, int], ...] | None = None
    verified: bool | None = None  # verify mode: every byte of every output right (None: not checked)
    wrong_bytes: np.ndarray | None = None  # verify mode: per rank, bytes of its output that differ
    # congestion control (RdmaConfig.congestion): counter_names("cc") per rank (CNPs its NIC sent and
    # received, CE-marked packets its RC QPs got); None without
    congestion: dict[str, np.ndarray] | None = None
    # per rank: when its host's only link went down for good (Faults.link_down ... FOREVER), NEVER: never
    link_down_for_good_ps: np.ndarray | None = None
    placement: Placement | None = None  # a hierarchical collective's nodes, rails and output order
    # a phase of a hierarchical collective (Result.first_phase): the ranks of each of its teams (its bound's P;
    # its arrays hold every rank's); None otherwise
    team_ranks: int | None = None

    @property
    def complete(self) -> bool:
        """Every rank ended with its whole output."""
        return bool((self.finish_ps >= 0).all())

    @property
    def unfinished_ranks(self) -> np.ndarray:
        """The ranks that never had their whole output (finish_ps == NEVER), ascending."""
        return np.flatnonzero(self.finish_ps == NEVER)

    def why_unfinished(self) -> dict[int, str]:
        """A reason per unfinished rank (see UNFINISHED_REASONS); empty for a complete run."""
        reasons = {}
        for rank in map(int, self.unfinished_ranks):
            reasons[rank] = next(text for cause in UNFINISHED_REASONS if (text := cause(self, rank)) is not None)
        return reasons

    def unfinished_text(self) -> str:
        """``"ranks 3, 7 of 16 did not finish: <reason>"``, one part per reason ("; " between them);
        at most MAX_LISTED_RANKS ranks listed per reason. Empty for a complete run."""
        by_reason: dict[str, list[int]] = {}
        for rank, reason in self.why_unfinished().items():
            by_reason.setdefault(reason, []).append(rank)
        parts = []
        for reason, ranks in by_reason.items():
            parts.append(f"{ranks_text(ranks)} of {self.ranks} did not finish: {reason}")
        return "; ".join(parts)

    def incomplete_line(self) -> str:
        """What tables print instead of numbers for an incomplete run: ``"INCOMPLETE: ranks ..."``."""
        return f"INCOMPLETE: {self.unfinished_text()}"

    def verify_text(self) -> str | None:
        """What verify mode showed, as one phrase (None: not checked): complete and every byte right;
        complete with wrong bytes (how many, at which ranks); or incomplete: bytes missing at the
        unfinished ranks (their outputs are not judged), and what the finished ranks' outputs hold."""
        if self.verified is None or self.wrong_bytes is None:
            return None
        wrong = self.wrong_bytes
        finished_wrong = [int(r) for r in np.flatnonzero(wrong) if self.finish_ps[r] != NEVER]
        counted = int(wrong[finished_wrong].sum())
        bad = f"{counted} wrong bytes in the outputs of {ranks_text(finished_wrong)} of {self.ranks}"
        if self.complete:
            return "every byte of every output is right" if not finished_wrong else f"complete, but {bad}"
        unfinished = list(map(int, self.unfinished_ranks))
        missing = f"incomplete: bytes missing at {ranks_text(unfinished)} of {self.ranks}"
        if len(unfinished) == self.ranks:
            return missing
        return missing + (f"; {bad}, which finished" if finished_wrong else "; the finished ranks' outputs are right")

    def timeout_note(self, rc: AckTimeout) -> str | None:
        """A line on RC local ACK timeouts when they may have held the run up, else None.

        ``rc`` is the run's RcConfig (``Scenario.rdma.rc``). A timeout fires no sooner than one
        timeout length after the collective starts, so a run that took less was not held up by one:
        the note needs a complete run at least one timeout long and a timeout that fired (an
        incomplete run has no time; its :meth:`incomplete_line` says why). It says what the counters
        show: the timeouts (NIC counter ``rc_timeouts``), their length, their sum over queue pairs
        (which may overlap in time), and the run's time against its bound."""
        fired = int(self.nic["rc_timeouts"].sum()) if "rc_timeouts" in self.nic else 0
        timeout_ps = rc.ack_timeout_ps
        if fired == 0 or timeout_ps == 0 or not self.complete or self.time_ps < timeout_ps:
            return None
        return (
            f"RC local ACK timeouts ({format_time(timeout_ps)} each, ack_timeout_exp={rc.ack_timeout_exp}) fired "
            f"{fired} {'time' if fired == 1 else 'times'} ({format_time(fired * timeout_ps)} summed over queue "
            f"pairs); the run took {format_time(self.time_ps)}, {times_text(self.time_ps / self.bound_ps)} x "
            "its bound; see RcConfig.ack_timeout_exp (--ack-timeout-exp)"
        )

    def __repr__(self) -> str:
        """One line (the arrays stay out of it): collective, algorithm, P, size per rank, time and
        time over the bound (or incomplete), verify mode's verdict."""
        if self.complete:
            state = f"{format_time(self.time_ps)} = {times_text(self.time_ps / self.bound_ps)} x bound, complete"
        else:
            state = f"incomplete ({self.unfinished_ranks.size} of {self.ranks} ranks unfinished)"
        also = "" if self.concurrent is None else f", with {self.concurrent.collective} {self.concurrent.algorithm}"
        return (
            f"<Result {self.collective} {self.algorithm}, P={self.ranks}, {format_size(self.bytes_per_rank_b)} per "
            f"rank: {state}, verified={self.verified}{also}>"
        )

    def _require_complete(self, what: str) -> None:
        if not self.complete:
            raise IncompleteRun(
                f"{self.collective} {self.algorithm} of {self.bytes_per_rank_b} B per rank has no {what}: "
                f"{self.unfinished_text()} (finish_ps is -1 for them; see why_unfinished())"
            )

    @property
    def time_ps(self) -> int:
        """When the last rank had its whole output; IncompleteRun if some rank never had it."""
        self._require_complete("time")
        return int(self.finish_ps.max())

    @property
    def output_b(self) -> int:
        """nccl-tests size: P shards (Allgather, Reduce-Scatter input) or the buffer (Broadcast, Allreduce)."""
        return output_b(self.collective, self.bytes_per_rank_b, self.ranks)

    @property
    def algbw_Bps(self) -> float:
        """nccl-tests algorithm bandwidth: output bytes / time, in bytes/s (IncompleteRun if incomplete)."""
        self._require_complete("bandwidth")
        return self.output_b * PS_PER_S / self.time_ps

    @property
    def busbw_Bps(self) -> float:
        """nccl-tests bus bandwidth: algbw * (P-1)/P (Allgather, Reduce-Scatter, Alltoall), algbw
        (Broadcast, Reduce), algbw * 2(P-1)/P (Allreduce)."""
        rooted = self.collective in ("broadcast", "reduce")
        factor = (2.0 if self.collective == "allreduce" else 1.0) * (1.0 if rooted else (self.ranks - 1) / self.ranks)
        return self.algbw_Bps * factor

    @property
    def receive_bound_ps(self) -> float:
        """The lower bound: each rank must receive the output it lacks through one link (an Allreduce:
        the sum of the others' buffers, one buffer)."""
        return lacking_b(self.collective, self.bytes_per_rank_b, self.ranks) * 8 * PS_PER_S / self.data_rate_bps

    @property
    def bound_ps(self) -> float:
        """The algorithm's bound (:func:`mcsim.bounds.bound_b` through one link): the receive bound, or 2N(P-1)/(P BW)
        for a host-based Allreduce; a hierarchical collective's phases one after the other, its rail phase through
        the NIC, its node phase through NVLink (:func:`mcsim.bounds.hierarchical_b`); what "x bound" divides by."""
        if self.placement is not None:
            p = self.placement
            network_b, nvlink_b = hierarchical_b(
                self.collective, self.bytes_per_rank_b, p.nodes, p.gpus, algorithm=self.algorithm
            )
            return (network_b / self.data_rate_bps + nvlink_b / p.nvlink_rate_bps) * 8 * PS_PER_S
        return (
            bound_b(self.collective, self.algorithm, self.bytes_per_rank_b, self.team_ranks or self.ranks)
            * 8
            * PS_PER_S
            / (self.data_rate_bps)
        )

    def summary(self) -> dict[str, Any]:
        """Scalars for tables, CSV and JSON (units in the names), nccl-tests' first: ``size_B`` its size
        (:meth:`output_b`: P x N for Allgather, Reduce-Scatter and Alltoall, N for Broadcast and
        Allreduce, with N = ``bytes_per_rank_B``), ``count`` its elements (4-byte floats), time and
        bandwidths; time and bandwidths are NaN for an incomplete run, and ``unfinished_ranks`` counts
        the ranks that did not finish."""
        done = self.complete
        nan = float("nan")
        return {
            "collective": self.collective,
            "algorithm": self.algorithm,
            "ranks": self.ranks,
            "size_B": self.output_b,  # nccl-tests' size
            "count": self.output_b // NCCL_TYPE_B,  # nccl-tests' count: elements of its default type, float
            "bytes_per_rank_B": self.bytes_per_rank_b,
            "time_us": self.time_ps / 1e6 if done else nan,
            "algbw_GBps": self.algbw_Bps / 1e9 if done else nan,
            "busbw_GBps": self.busbw_Bps / 1e9 if done else nan,
            "bound_us": self.bound_ps / 1e6,
            "injected_B_per_rank": float(self.injected_b.mean()),
            "link_traversals": self.fabric.link_traversals(),
            "retransmits": int(self.nic["retransmits"].sum()),
            "receive_drops": int(self.rank["receive_drops"].sum()),
            "repaired_chunks": int(self.rank["repaired_chunks"].sum()),
            "repair_reads": int(self.rank["repair_reads"].sum()),
            "complete": done,
            "unfinished_ranks": int(self.unfinished_ranks.size),
            "verified": self.verified,
        }

    def events(self) -> np.ndarray:
        """Every rank's protocol events (a structured array: team, rank, time_ps, kind, source, value, count;
        rank by rank, each rank's in the order they happened): when it started, sent and received each
        activation token and FIN, sent and received each NEED_FETCH and FETCH_OK, posted and got back each
        repair READ (value: its first chunk, count: its chunks), timed out, finished. Recorded by
        ``Scenario.run(events=True)`` (the multicast Allgather and Broadcast record them all; the other
        algorithms their finish)."""
        if self.protocol_events is None:
            raise McsimError("Result.events: this run recorded none; run it with Scenario.run(events=True)")
        return self.protocol_events

    def record(self) -> dict[str, int | float | bool | str | None]:
        """One flat record of JSON scalars for a result store (units in the names; sums over ranks and
        over the whole fabric). An incomplete run's times and bandwidths are None, never NaN, so the
        record survives ``json.dumps(..., allow_nan=False)``. With ``concurrent`` (Scenario.overlap),
        the other collective's name, algorithm, time and completeness under ``concurrent_*``; with
        ``first_phase`` (a two-phase collective), its time as ``first_phase_time_ps``."""
        done = self.complete
        time_ps = self.time_ps if done else None
        bound_ps = self.bound_ps
        rec: dict[str, int | float | bool | str | None] = {
            "collective": self.collective,
            "algorithm": self.algorithm,
            "ranks": self.ranks,
            "bytes_per_rank_b": self.bytes_per_rank_b,
            "output_b": self.output_b,
            "data_rate_bps": self.data_rate_bps,
            "time_ps": time_ps,
            "receive_bound_ps": self.receive_bound_ps,
            "bound_ps": bound_ps,
            "time_over_bound": None if time_ps is None else time_ps / bound_ps,
            "algbw_Bps": self.algbw_Bps if done else None,
            "busbw_Bps": self.busbw_Bps if done else None,
            "injected_b": int(self.injected_b.sum()),
            "received_b": int(self.received_b.sum()),
            "link_traversals": self.fabric.link_traversals(),
            "wire_b": int(self.fabric.ports["tx_wire_bytes"].sum()),
            "retransmits": int(self.nic["retransmits"].sum()),
            "rc_timeouts": int(self.nic["rc_timeouts"].sum()),
        }
        for name in ("receive_drops", "repaired_chunks", "repair_reads", "need_fetches", "data_timeouts"):
            rec[name] = int(self.rank[name].sum())
        for cause, n in self.fabric.drops_by_cause().items():
            rec[f"drop_{cause}_packets"] = n
        rec |= {
            "unroutable_packets": int(self.fabric.unroutable_packets),
            "complete": done,
            "unfinished_ranks": int(self.unfinished_ranks.size),
            "verified": self.verified,
            "end_ps": int(self.fabric.end_ps),
        }
        if self.first_phase is not None:
            first = self.first_phase
            rec["first_phase_time_ps"] = first.time_ps if first.complete else None
        if self.concurrent is not None:
            other = self.concurrent
            rec |= {
                "concurrent_collective": other.collective,
                "concurrent_algorithm": other.algorithm,
                "concurrent_time_ps": other.time_ps if other.complete else None,
                "concurrent_complete": other.complete,
            }
        return rec

    def rank_arrays(self) -> dict[str, np.ndarray]:
        """The per-rank arrays (one entry per rank, numeric dtypes, contiguous copies): finish_ps,
        injected_b, received_b, ``rank.<counter>`` and ``nic.<counter>`` for every counter, and
        wrong_bytes, link_down_for_good_ps, ``concurrent.finish_ps`` and ``first_phase.finish_ps`` when the
        run has them."""
        arrays = {"finish_ps": self.finish_ps, "injected_b": self.injected_b, "received_b": self.received_b}
        arrays |= {f"rank.{name}": values for name, values in self.rank.items()}
        arrays |= {f"nic.{name}": values for name, values in self.nic.items()}
        optional = {
            "wrong_bytes": self.wrong_bytes,
            "link_down_for_good_ps": self.link_down_for_good_ps,
            "concurrent.finish_ps": None if self.concurrent is None else self.concurrent.finish_ps,
            "first_phase.finish_ps": None if self.first_phase is None else self.first_phase.finish_ps,
        }
        arrays |= {name: values for name, values in optional.items() if values is not None}
        return {name: np.array(values, copy=True, order="C") for name, values in arrays.items()}


def incomplete_lines(label: str, runs: Mapping[str, Result]) -> list[str]:
    """For a table row that compares ``runs`` (name -> Result): one ``"<label> <name> INCOMPLETE: ..."``
    line per incomplete run, to print instead of the row's numbers; empty if every run is complete."""
    return [f"{label} {name} {r.incomplete_line()}" for name, r in runs.items() if not r.complete]
