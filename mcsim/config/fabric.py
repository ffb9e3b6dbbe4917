# SPDX-License-Identifier: GPL-2.0-only
"""The fabric's settings as frozen data: FabricConfig, Faults, Flow and their checks (no C++).

mcsim.native.fabric builds a fabric from them; mcsim.runs.flows runs raw flows on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import networkx as nx
import numpy as np

from mcsim.config.ns3_attributes import sets
from mcsim.errors import McsimError, is_integer, pick, require_positive
from mcsim.routing.layout import Layout
from mcsim.topology.physics import Link
from mcsim.units import (
    CLOCK_LIMIT,
    MAX_SIMULATED_PS,
    MAX_SIZE_B,
    NEVER,
    PS_PER_S,
    format_rate,
    format_time,
    require_rate_bps,
    require_time_ps,
)

# the C++ types FabricConfig sets attributes of: the Fabric, and the factories of its switches and ports
FABRIC, SWITCH, PORT = "ns3::mcsim::Fabric", "ns3::mcsim::Switch", "ns3::mcsim::Port"
# -> ns3::mcsim::FlowControl, by its checker's names
FLOW_CONTROLS = {"lossless": "Lossless", "lossy": "Lossy", "pfc": "Pfc"}
FORWARDINGS = {"cut_through": "CutThrough", "store_and_forward": "StoreAndForward"}  # -> ns3::mcsim::Forwarding
DEFAULT_SWITCH_LATENCY_PS = 170_000  # SX6036 (mcsim/ns3_modules/fabric/doc/fabric.md, "Fabric")
INFINIBAND_LRH_BYTES = 8  # what an InfiniBand switch routes by: the local route header (destination LID)
# shared with C++ (capi::Constants; tests/native/test_constants.py compares): FabricHeader::GROUP_FLAG,
# the destination is a multicast group; FabricHeader::SERIALIZED_BYTES
GROUP_FLAG = 0x80000000
FABRIC_HEADER_BYTES = 16
DEFAULT_BUFFER_BYTES = 256 * 1024  # Port::DEFAULT_BUFFER_BYTES (fabric/doc/fabric.md, "Fabric")
# PFC (fabric/doc/fabric.md, "Priority Flow Control"): XON this far below XOFF, two 4 KiB frames
# (Port::DEFAULT_PFC_RESUME_OFFSET_BYTES); an XOFF's pause time, the largest a PFC frame carries
# (IEEE 802.1Qbb: 16 bits of 512-bit-time quanta), refreshed at half of it while in force
DEFAULT_PFC_RESUME_OFFSET_BYTES = 2 * 4096
PFC_MAX_QUANTA = 0xFFFF
PFC_FRAME_BYTES = 64  # pfc::FRAME_BYTES (fabric/model/pfc.h): a PFC frame, destination address to FCS
ECN_DEFAULT_PMAX = 0.01  # ecn::DEFAULT_PMAX (fabric/model/ecn.h): DCQCN's (SIGCOMM 2015, section 5.3)
# ASSUMPTION: partial-sum buffer per switch (no published figure for the SHARP ASICs); 4 MiB holds
# 1024 slots of 4 KiB, far more than a lossless tree needs to stream at line rate.
DEFAULT_AGGREGATION_BUFFER_BYTES = 4 * 1024 * 1024
AGGREGATION_ROOT = 2**32 - 1  # AggregationUnit::ROOT, the parent port of a tree's root (shared with C++)
DEFAULT_MTU_BYTES = 4096
# InfiniBand RC: LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26 bytes; the FabricHeader carries 16 of them.
DEFAULT_HEADER_BYTES = 26 - FABRIC_HEADER_BYTES

MAX_SEED = 2**64 - 1
MAX_NODE_ID = 2**32 - 1  # node ids and port numbers cross the C ABI as uint32
MAX_PACKET_INDEX = 2**64 - 1  # a chosen drop's packet index crosses as uint64 (Fabric::SetChosenDrops)
FOREVER = None  # the up_ps of a Faults.link_down entry whose link never comes back
DEFAULT_REROUTE_DELAY_PS = 100_000_000_000  # 100 ms: trap, sweep, route computation, switch programming


@dataclass(frozen=True, slots=True, kw_only=True)
class FabricConfig:
    """Fabric-wide settings; every size in bytes, every time in ps."""

    # "lossless" (credits, never drops), "lossy" (tail drop) or "pfc" (Priority Flow Control: each
    # ingress queue pauses its upstream port above pfc_xoff_b, resumes it at pfc_xoff_b less
    # pfc_resume_offset_b; no drop within its headroom)
    flow_control: str = field(default="lossless", metadata=sets(FABRIC, "FlowControl", FLOW_CONTROLS))
    # PFC: an ingress queue's XOFF threshold; 0: its buffer (switch_buffer_b) less its headroom
    pfc_xoff_b: int = field(default=0, metadata=sets(PORT, "PfcXoffBytes"))
    pfc_resume_offset_b: int = field(
        default=DEFAULT_PFC_RESUME_OFFSET_BYTES, metadata=sets(PORT, "PfcResumeOffsetBytes")
    )
    # PFC: bytes an ingress takes past XOFF (then it drops); 0: computed per link, what can still
    # arrive: 2 x (largest frame + delay x data rate) + the PFC frame (fabric.md)
    pfc_headroom_b: int = field(default=0, metadata=sets(PORT, "PfcHeadroomBytes"))
    pfc_pause_quanta: int = field(default=PFC_MAX_QUANTA, metadata=sets(PORT, "PfcPauseQuanta"))
    # PFC: the largest data packet (bytes beyond header_b) the headroom must take; set from the
    # RDMA MTU for RDMA runs
    pfc_max_frame_b: int = field(default=DEFAULT_MTU_BYTES + 64, metadata=sets(PORT, "PfcMaxFrameBytes"))
    # ECN (fabric.md, "ECN"): switch ports RED-mark CE on ECN-capable packets as they join an output queue of
    # more than ecn_kmin_b (probability ecn_pmax (q - Kmin) / (Kmax - Kmin), every packet from ecn_kmax_b on);
    # hosts' ports send every packet ECT(0). Thresholds 0: DCQCN's 5 KB and 200 KB at 40 Gbit/s (SIGCOMM
    # 2015, section 5.3), scaled with each port's data rate; Pmax 1 %, DCQCN's
    ecn: bool = field(default=False, metadata=sets(FABRIC, "Ecn"))
    ecn_kmin_b: int = field(default=0, metadata=sets(PORT, "EcnKminBytes"))
    ecn_kmax_b: int = field(default=0, metadata=sets(PORT, "EcnKmaxBytes"))
    ecn_pmax: float = field(default=ECN_DEFAULT_PMAX, metadata=sets(PORT, "EcnPmax"))
    # per switch port
    switch_buffer_b: int = field(default=DEFAULT_BUFFER_BYTES, metadata=sets(FABRIC, "SwitchBufferBytes"))
    # a host port's ingress buffer
    host_buffer_b: int = field(default=DEFAULT_BUFFER_BYTES, metadata=sets(FABRIC, "HostBufferBytes"))
    # wire bytes per packet beyond the packet itself
    header_b: int = field(default=DEFAULT_HEADER_BYTES, metadata=sets(PORT, "HeaderBytes"))
    # "cut_through" (a switch may send a packet on once its routing header is in: InfiniBand) or
    # "store_and_forward" (once its last bit is in); either way it occupies every link for its
    # whole serialization
    forwarding: str = field(default="cut_through", metadata=sets(FABRIC, "Forwarding", FORWARDINGS))
    # bytes a cut-through switch waits for
    routing_header_b: int = field(default=INFINIBAND_LRH_BYTES, metadata=sets(FABRIC, "RoutingHeaderBytes"))
    # from having the packet to its earliest start
    switch_latency_ps: int = field(default=DEFAULT_SWITCH_LATENCY_PS, metadata=sets(SWITCH, "Latency"))
    ecmp_seed: int = field(default=1, metadata=sets(SWITCH, "EcmpSeed"))
    # in-network reduction (switch aggregation, algorithm "innet"): each switch's ALU throughput in
    # contribution bytes (whole packets) per second as bit/s, 0: the sum of its ports' data rates
    # (it keeps up with every port at line rate); its buffer of partial sums, split among its trees
    aggregation_rate_bps: int = field(default=0, metadata=sets(SWITCH, "AggregationRate"))
    aggregation_buffer_b: int = field(
        default=DEFAULT_AGGREGATION_BUFFER_BYTES, metadata=sets(FABRIC, "AggregationBufferBytes")
    )
    aggregation_trees: int = 0  # trees per reduction, one from each best root; 0: from every one
    # PFC's traffic classes (fabric.md, "Traffic classes"): these hosts send every packet in the lossy class
    # (DSCP CS1), which no pause holds and which holds no PFC ingress; a switch's port tail-drops it beyond
    # switch_buffer_b of it. Every other packet is in the lossless class, and so are these hosts' in-network
    # reductions' contributions (nothing repairs a lost one). Sorted, each host once.
    lossy_hosts: tuple[int, ...] = ()
    loss: float = 0.0  # probability that a packet is lost on a link, every link and direction
    # seed of the random faults: the same seed loses the same packets
    seed: int = field(default=1, metadata=sets(FABRIC, "Seed"))

    def __post_init__(self) -> None:
        pick("flow control", self.flow_control, FLOW_CONTROLS)
        pick("forwarding", self.forwarding, FORWARDINGS)
        require_positive(
            "FabricConfig",
            switch_buffer_b=self.switch_buffer_b,
            host_buffer_b=self.host_buffer_b,
            routing_header_b=self.routing_header_b,
            aggregation_buffer_b=self.aggregation_buffer_b,
        )
        names = ("header_b", "routing_header_b", "switch_latency_ps", "ecmp_seed", "seed", "pfc_xoff_b",
                 "pfc_resume_offset_b", "pfc_headroom_b", "ecn_kmin_b", "ecn_kmax_b")  # fmt: skip
        for name in (*names, "aggregation_rate_bps", "aggregation_buffer_b", "aggregation_trees"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise McsimError(f"FabricConfig: {name}={value!r} must be an integer >= 0")
        for name in ("routing_header_b", "aggregation_trees"):
            if getattr(self, name) >= 2**32:
                raise McsimError(f"FabricConfig: {name}={getattr(self, name)} must be < 2**32")
        if not isinstance(self.pfc_pause_quanta, int) or not 2 <= self.pfc_pause_quanta <= PFC_MAX_QUANTA:
            raise McsimError(
                f"FabricConfig: pfc_pause_quanta={self.pfc_pause_quanta!r} must be an integer in 2..{PFC_MAX_QUANTA} "
                "(quanta of 512 bit times: the pause time a PFC frame carries)"
            )
        if not isinstance(self.ecn, bool):
            raise McsimError(f"FabricConfig: ecn={self.ecn!r} must be True or False")
        if isinstance(self.ecn_pmax, bool) or not isinstance(self.ecn_pmax, Real) or not 0 <= self.ecn_pmax <= 1:
            raise McsimError(f"FabricConfig: ecn_pmax={self.ecn_pmax!r} must be a probability in [0, 1]")
        if 0 < self.ecn_kmax_b < self.ecn_kmin_b:
            raise McsimError(f"FabricConfig: ecn_kmin_b={self.ecn_kmin_b} must be <= ecn_kmax_b={self.ecn_kmax_b}")
        if not isinstance(self.pfc_max_frame_b, int) or not 0 < self.pfc_max_frame_b < 2**32:
            raise McsimError(f"FabricConfig: pfc_max_frame_b={self.pfc_max_frame_b!r} must be an integer in 1..2**32-1")
        require_time_ps("FabricConfig", "switch_latency_ps", self.switch_latency_ps)
        require_rate_bps("FabricConfig", "aggregation_rate_bps", self.aggregation_rate_bps, lo=0)
        if self.seed > MAX_SEED:
            raise McsimError(f"FabricConfig: seed={self.seed} must be < 2**64")
        _check_probability("FabricConfig", "loss", self.loss)
        _check_lossy_hosts(self)


def _check_lossy_hosts(cfg: FabricConfig) -> None:
    """lossy_hosts: host ids (each once, stored sorted) on a PFC fabric."""
    hosts = cfg.lossy_hosts
    if not isinstance(hosts, tuple | list) or not all(is_integer(h) and 0 <= h <= MAX_NODE_ID for h in hosts):
        raise McsimError(f"FabricConfig: lossy_hosts={hosts!r} must be host ids (integers >= 0)")
    if len(set(hosts)) != len(hosts):
        raise McsimError(f"FabricConfig: lossy_hosts names host {next(h for h in hosts if hosts.count(h) > 1)} twice")
    if hosts and cfg.flow_control != "pfc":
        raise McsimError(
            f"FabricConfig: lossy_hosts needs flow_control='pfc' (its lossless and lossy classes); with "
            f"{cfg.flow_control!r} every packet is {'lossy' if cfg.flow_control == 'lossy' else 'lossless'}"
        )
    object.__setattr__(cfg, "lossy_hosts", tuple(sorted(int(h) for h in hosts)))


def _check_probability(where: str, name: str, p: object) -> None:
    if isinstance(p, bool) or not isinstance(p, Real) or not 0 <= float(p) < 1:  # NaN fails 0 <= p too
        raise McsimError(
            f"{where}: {name}={p!r} must be a probability >= 0 and < 1; e.g. 1e-3 loses one packet in 1000"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Faults:
    """Faults injected into the links of one run (pass to build() or simulate() as ``faults=``).

    A lost packet occupies the wire (counted in ``tx_packets``) and is discarded when it arrives
    (its last bit; at a cut-through switch, its routing header), instead of being handed to the far
    end; in lossless mode the far end's ingress credit comes back when its last bit would have
    arrived, so credits are conserved. Each lost packet counts under one cause in the
    sending port's counters (see :data:`DROP_CAUSES`): link down first, then chosen, then random.

    Attributes
    ----------
    link_loss
        ``{(u, v): p}``: loss probability of the graph edge (u, v) (either order), 0 <= p < 1, for
        all its parallel links and both directions; overrides FabricConfig.loss there.
    drops
        ``[(node, port, index), ...]``: lose the index-th packet (0-based, in the order the packets
        are committed to the wire) sent by ``port`` of ``node``; e.g. ``(root, 0, 0)`` loses the
        first packet host ``root`` sends. An index past the last packet sent drops nothing.
    link_down
        ``[(u, v, down_ps, up_ps), ...]``: the edge (u, v) (all its parallel links, both
        directions) is down during [down_ps, up_ps); ``up_ps=FOREVER`` (None): down for good.
        Simplification: the link keeps serializing while down; a packet whose last bit arrives in
        the interval is lost. Intervals may overlap.
    reroute_delay_ps
        The subnet manager (mcsim.routing.subnet_manager): this long after a link of ``link_down`` goes
        down or comes back, it recomputes up*/down* unicast routes and the multicast trees over the
        links that are up and reprograms every switch (links down from time 0 are routed around
        from the start). Default 100 ms; None: no subnet manager, the routes stay as built.
    """

    link_loss: Mapping[tuple[int, int], float] = field(default_factory=dict)
    drops: Sequence[tuple[int, int, int]] = ()
    link_down: Sequence[tuple[int, int, int, int | None]] = ()
    reroute_delay_ps: int | None = DEFAULT_REROUTE_DELAY_PS

    def __post_init__(self) -> None:
        if not isinstance(self.link_loss, Mapping):
            raise McsimError(f"Faults: link_loss={self.link_loss!r} must be a dict {{(u, v): p}}")
        object.__setattr__(self, "link_loss", dict(self.link_loss))
        for name, fields in (("drops", "(node, port, index)"), ("link_down", "(u, v, down_ps, up_ps)")):
            rows = getattr(self, name)
            if isinstance(rows, str | bytes) or not isinstance(rows, Sequence):  # a string's letters are no rows
                raise McsimError(f"Faults: {name}={rows!r} must be a list of {fields} entries")
        object.__setattr__(self, "drops", tuple(_row("drops", i, r, 3) for i, r in enumerate(self.drops)))
        object.__setattr__(self, "link_down", tuple(_row("link_down", i, r, 4) for i, r in enumerate(self.link_down)))
        for edge, p in self.link_loss.items():
            where = f"Faults: link_loss[{edge!r}]"
            if not isinstance(edge, tuple) or len(edge) != 2 or not all(map(is_integer, edge)):
                raise McsimError(f"{where} must be keyed by an edge (u, v) of two nodes; e.g. {{(0, 4): 1e-3}}")
            _check_probability(where, "p", p)
        seen: dict[tuple[int, int, int], int] = {}
        for i, (node, port, index) in enumerate(self.drops):
            where = f"Faults: drops[{i}]=({node}, {port}, {index})"
            for name, value, top in (("node", node, MAX_NODE_ID), ("port", port, MAX_NODE_ID)):
                if value < 0:
                    raise McsimError(f"{where}: {name}={value} must be >= 0")
                if value > top:
                    raise McsimError(f"{where}: {name}={value} must be <= {top} (uint32 in C++)")
            if index < 0:
                raise McsimError(f"{where}: index={index} must be >= 0")
            if index > MAX_PACKET_INDEX:
                raise McsimError(f"{where}: index={index} must be <= {MAX_PACKET_INDEX} (uint64 in C++)")
            if (node, port, index) in seen:
                raise McsimError(f"{where} repeats drops[{seen[node, port, index]}]; list each packet once")
            seen[node, port, index] = i
        for i, (u, v, down_ps, up_ps) in enumerate(self.link_down):
            where = f"Faults: link_down[{i}]=({u}, {v}, {down_ps}, {up_ps})"
            if down_ps < 0:
                raise McsimError(f"{where}: down_ps={down_ps} must be >= 0")
            times: tuple[tuple[str, int | None], ...] = (("down_ps", down_ps), ("up_ps", up_ps))
            for name, time_ps in times:
                if time_ps is not None and time_ps > MAX_SIMULATED_PS:
                    raise McsimError(f"{where}: {name}={time_ps} must be <= {MAX_SIMULATED_PS} ({CLOCK_LIMIT})")
            if up_ps is not None and up_ps <= down_ps:
                raise McsimError(
                    f"{where}: up_ps={up_ps} must be > down_ps={down_ps}; the link is down in [down_ps, up_ps) "
                    "(up_ps=FOREVER: for good)"
                )
        if self.reroute_delay_ps is not None and (not is_integer(self.reroute_delay_ps) or self.reroute_delay_ps < 0):
            raise McsimError(
                f"Faults: reroute_delay_ps={self.reroute_delay_ps!r} must be an integer >= 0 (ps), or None for "
                "static routes"
            )
        if self.reroute_delay_ps is not None and self.reroute_delay_ps > MAX_SIMULATED_PS:
            raise McsimError(
                f"Faults: reroute_delay_ps={self.reroute_delay_ps} must be <= {MAX_SIMULATED_PS} ({CLOCK_LIMIT})"
            )

    def down_for_good_ps(self, hosts: Sequence[int]) -> np.ndarray:
        """Per host of ``hosts`` (a team's ranks): when its only link went down for good, the earliest
        such ``link_down`` entry (units.NEVER: it never did)."""
        out = np.full(len(hosts), NEVER, dtype=np.int64)
        index = {h: i for i, h in enumerate(hosts)}
        for u, v, down_ps, up_ps in self.link_down:
            for h in (u, v):
                if up_ps is FOREVER and h in index:
                    i = index[h]
                    out[i] = down_ps if out[i] == NEVER else min(out[i], down_ps)
        return out

    def check(self, layout: Layout) -> None:
        """Raise McsimError for an entry that names an edge or port the topology of ``layout`` does
        not have."""
        g, ports = layout.graph, layout.ports
        name = g.graph.get("name", "the topology")
        normal: dict[tuple[int, int], tuple[int, int]] = {}
        for u, v in self.link_loss:
            where = f"Faults: link_loss[{(u, v)!r}]"
            if not g.has_edge(u, v):
                raise McsimError(f"{where}: ({u}, {v}) is not an edge of {name}; {_edge_hint(g, u)}")
            key = (min(u, v), max(u, v))
            if key in normal:
                raise McsimError(f"{where} repeats link_loss[{normal[key]!r}]; give each edge once")
            normal[key] = (u, v)
        for i, (node, port, index) in enumerate(self.drops):
            where = f"Faults: drops[{i}]=({node}, {port}, {index})"
            if node not in ports:
                raise McsimError(f"{where}: node={node} is not in {name} (nodes are 0..{len(ports) - 1})")
            if port >= len(ports[node]):
                raise McsimError(
                    f"{where}: port={port} is out of range; node {node} has ports 0..{len(ports[node]) - 1}"
                )
        for i, (u, v, down_ps, up_ps) in enumerate(self.link_down):
            if not g.has_edge(u, v):
                where = f"Faults: link_down[{i}]=({u}, {v}, {down_ps}, {up_ps})"
                raise McsimError(f"{where}: ({u}, {v}) is not an edge of {name}; {_edge_hint(g, u)}")


def _row(what: str, i: int, row: object, n: int) -> tuple[Any, ...]:
    """A fault entry as a tuple of n non-bool integers (a link_down's up_ps may be FOREVER), or
    McsimError naming it."""
    fields = "(node, port, index)" if what == "drops" else "(u, v, down_ps, up_ps or FOREVER)"
    bad = McsimError(f"Faults: {what}[{i}]={row!r} must be {n} integers {fields}")
    if not isinstance(row, Sequence) or len(row) != n:
        raise bad
    forever = what == "link_down" and row[-1] is FOREVER
    values = row[:-1] if forever else row
    if not all(map(is_integer, values)):
        raise bad
    return (*(int(x) for x in values), *((FOREVER,) if forever else ()))


def _edge_hint(g: nx.Graph[Any], u: object) -> str:
    if u in g:
        return f"node {u} links to {', '.join(map(str, sorted(g[u])))}"
    return f"nodes are 0..{g.number_of_nodes() - 1}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Flow:
    """Raw traffic: host ``src`` sends ``size_b`` payload bytes to host ``dst`` or to ``group``."""

    src: int
    size_b: int
    dst: int | None = None  # a host, or
    group: int | None = None  # an index into the groups given to simulate()
    mtu_b: int = DEFAULT_MTU_BYTES  # payload bytes per packet
    start_ps: int = 0
    flow_id: int = 0  # ECMP hash input: flows with different ids may take different paths

    def __post_init__(self) -> None:
        """Types now, and what crosses the C ABI (src, dst, group, mtu_b, flow_id as uint32); the hosts, the
        group and the buffers are checked against the fabric by simulate()."""
        for name in ("src", "size_b", "dst", "group", "mtu_b", "start_ps", "flow_id"):
            value = getattr(self, name)
            if not (is_integer(value) or (value is None and name in ("dst", "group"))):
                raise McsimError(
                    f"Flow: {name}={value!r} must be an integer" + (" or None" * (name in ("dst", "group")))
                )
        for name in ("src", "dst", "group", "mtu_b", "flow_id"):
            value = getattr(self, name)
            if value is not None and value > MAX_NODE_ID:
                raise McsimError(f"Flow: {name}={value} must be <= {MAX_NODE_ID} (uint32 in C++)")
        if self.flow_id < 0:
            raise McsimError(f"Flow: flow_id={self.flow_id} must be >= 0")
        if self.size_b > MAX_SIZE_B:
            raise McsimError(f"Flow: size_b={self.size_b} must be <= {MAX_SIZE_B} (2^62 B, mcsim's largest size)")

    @property
    def destination(self) -> int:
        """The FabricHeader destination: the host, or the group with GROUP_FLAG set."""
        return destination(self.dst, self.group)

    def receivers(self, groups: Sequence[Sequence[int]]) -> int:
        """Hosts that receive each packet: 1, or every other member of the group."""
        return 1 if self.group is None else len(groups[self.group]) - 1


def destination(dst: int | None, group: int | None) -> int:
    """What a packet's FabricHeader names: host ``dst``, or ``group`` with GROUP_FLAG set (exactly
    one of the two is given; the workload's checks say so before a run)."""
    if group is not None:
        return group | GROUP_FLAG
    if dst is None:
        raise McsimError("give exactly one of dst (a host) and group")
    return dst


# keywords of the run functions (simulate, run_verbs) that have a new name: old -> new. ``fabric=`` is what
# Scenario calls the fabric's settings; simulate and run_verbs called them ``config=`` before issue 49
RENAMED_KEYWORDS = {"config": "fabric"}


def check_renamed(where: str, given: Mapping[str, object], known: Sequence[str] = ()) -> None:
    """Raise McsimError (one line) for a keyword of ``given`` (the ``**`` of ``where``) that ``where`` does not
    take: an old name with its new one, or any other unless in ``known``."""
    for name in given:
        if name in RENAMED_KEYWORDS:
            new = RENAMED_KEYWORDS[name]
            raise McsimError(
                f"{where}: {name}= is now called {new}= (as Scenario calls it); pass {new}=FabricConfig(...)"
            )
        if name not in known:
            raise McsimError(f"{where}: unknown keyword {name}=")


def check_run_arguments(where: str, **values: tuple[object, type]) -> None:
    """Raise McsimError (one line) for the first argument of a run function (simulate, run_verbs) that is not of
    its type (None: the default) or, for a tuple type's name ending in "s", not a list of that type."""
    for name, (value, cls) in values.items():
        if value is None:
            continue
        if name in RUN_LISTS:
            if (
                isinstance(value, str | bytes)
                or not isinstance(value, Sequence)
                or not all(isinstance(x, cls) for x in value)
            ):
                raise McsimError(f"{where}: {name}={value!r} must be a list of {cls.__name__}")
        elif not isinstance(value, cls):
            raise McsimError(f"{where}: {name}={value!r} must be a {cls.__name__} or None")


RUN_LISTS = ("flows", "rc_ops", "ud_streams")  # the run functions' arguments that are lists of one type


def check_groups(where: str, groups: object, n_hosts: int) -> None:
    """Raise McsimError (one line) unless ``groups`` is a list of multicast groups, each a list of distinct hosts
    (a string's letters are no hosts)."""
    if isinstance(groups, str | bytes) or not isinstance(groups, Sequence):
        raise McsimError(f"{where}: groups={groups!r} must be a list of groups, each a list of hosts, e.g. [[0, 1, 2]]")
    for i, members in enumerate(groups):
        if (
            isinstance(members, str | bytes)
            or not isinstance(members, Sequence)
            or not all(is_integer(h) and 0 <= h < n_hosts for h in members)
        ):
            raise McsimError(f"{where}: groups[{i}]={members!r} must be a list of hosts (hosts are 0..{n_hosts - 1})")
        if len(set(members)) != len(members):
            raise McsimError(f"{where}: groups[{i}]={list(members)!r} names a host twice")


def check_flows(layout: Layout, flows: Sequence[Flow], n_groups: int, config: FabricConfig) -> None:
    n_hosts = layout.hosts
    if not flows:
        raise McsimError("simulate: no flows given")
    for i, f in enumerate(flows):
        where = f"flow {i}"
        if not 0 <= f.src < n_hosts:
            raise McsimError(f"{where}: src={f.src} is not a host (hosts are 0..{n_hosts - 1})")
        if (f.dst is None) == (f.group is None):
            raise McsimError(f"{where}: give exactly one of dst (a host) and group")
        if f.dst is not None and not 0 <= f.dst < n_hosts:
            raise McsimError(f"{where}: dst={f.dst} is not a host (hosts are 0..{n_hosts - 1})")
        if f.dst == f.src:
            raise McsimError(f"{where}: dst={f.dst} is the sender itself")
        if f.group is not None and not 0 <= f.group < n_groups:
            raise McsimError(f"{where}: group={f.group} is not one of the {n_groups} groups given")
        require_positive(where, size_b=f.size_b, mtu_b=f.mtu_b)
        require_time_ps(where, "start_ps", f.start_ps)
        check_lossless_buffers(where, config, f.mtu_b + FABRIC_HEADER_BYTES, "mtu_b")


def check_lossless_buffers(where: str, config: FabricConfig, packet_b: int, lower: str) -> None:
    """Raise McsimError (one line) unless every lossless buffer holds one largest packet: ``packet_b``
    plus ``config.header_b`` on the wire. A smaller one never gets the credits to send it, and the run
    ends without it. ``lower``: what the message suggests lowering instead ("mtu_b", "mtu")."""
    if config.flow_control != "lossless":
        return
    wire = packet_b + config.header_b
    for name in ("switch_buffer_b", "host_buffer_b"):
        size = getattr(config, name)
        if wire > size:
            raise McsimError(
                f"{where}: a {wire} B packet does not fit a lossless buffer of {size} B ({name}); a lossless "
                f"buffer holds at least one largest packet: raise {name} to >= {wire} or lower {lower}"
            )


def pfc_headroom_b(config: FabricConfig, link: Link) -> int:
    """What can still arrive at a PFC ingress of ``link`` once it passes XOFF, when nothing leaves it: the
    headroom the model computes when ``pfc_headroom_b`` is 0 (PfcPort::ComputedHeadroom; fabric.md, "Priority
    Flow Control"). The frame this port is sending delays the PFC frame, then the PFC frame's wire time, the
    frame the peer is sending when it arrives, and a link delay of bytes each way: 2 x (pfc_max_frame_b +
    header_b) + (PFC_FRAME_BYTES + header_b) + 2 x ceil(delay x data rate / 8)."""
    frame = config.pfc_max_frame_b + config.header_b
    delay_b = -(-link.delay_ps * link.data_rate_bps // (8 * PS_PER_S))
    return 2 * frame + PFC_FRAME_BYTES + config.header_b + 2 * delay_b


def check_pfc(where: str, config: FabricConfig, layout: Layout, prefix: str = "") -> None:
    """Raise McsimError (one line) for PFC settings the links of ``layout`` cannot work with: a headroom given
    below what can still arrive once an ingress pauses its peer (the lossless class would drop), or a switch
    port's buffer (switch_buffer_b) that does not hold the headroom in force when XOFF is computed from it
    (pfc_xoff_b 0). ``prefix`` names the config as the caller took it ("fabric.")."""
    if config.flow_control != "pfc":
        return
    g, hosts = layout.graph, layout.hosts
    links = [(Link.from_edge(a), u, v) for u, v, a in g.edges(data=True)]
    headrooms = [pfc_headroom_b(config, link) for link, _, _ in links]  # per link, computed once
    need = max(headrooms)
    link, u, v = links[headrooms.index(need)]  # the first link of the largest headroom
    given = config.pfc_headroom_b
    if 0 < given < need:
        frame = config.pfc_max_frame_b + config.header_b
        raise McsimError(
            f"{where}: {prefix}pfc_headroom_b={given} is less than what can still arrive at a PFC ingress once it "
            f"pauses its peer on link {u}-{v} ({format_rate(link.data_rate_bps)} of data, "
            f"{format_time(link.delay_ps)}): 2 x {frame} B frames + a {PFC_FRAME_BYTES + config.header_b} B PFC "
            f'frame + a link delay of bytes each way = {need} B (fabric.md, "Priority Flow Control"), so the '
            f"lossless class would drop; give >= {need}, or 0 (computed per link)"
        )
    if config.pfc_xoff_b == 0:
        for (_, u, v), computed in zip(links, headrooms, strict=True):
            if u < hosts and v < hosts:  # a switch port's buffer: a link with a switch end
                continue
            headroom = given or computed
            if headroom >= config.switch_buffer_b:
                raise McsimError(
                    f"{where}: a PFC ingress buffer of {config.switch_buffer_b} B does not hold its headroom of "
                    f"{headroom} B on link {u}-{v} ({prefix}switch_buffer_b; XOFF is the buffer less the headroom when "
                    f"pfc_xoff_b=0); raise switch_buffer_b above {headroom} or give pfc_xoff_b"
                )
