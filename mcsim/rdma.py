# SPDX-License-Identifier: GPL-2.0-only
"""RDMA verbs over the fabric: NICs, RC and UD queue pairs, completion processing.

``run_verbs`` puts an RDMA NIC with a completion processor (the host CPU) on every host of a
fabric and runs verbs-level operations, like perftest: RC SEND, WRITE (with immediate), READ
between host pairs, and UD datagram streams to a host or a multicast group. Every packet carries
the real header bytes of its opcode in the chosen wire format (InfiniBand or RoCEv2).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

import networkx as nx
import numpy as np

from mcsim import fabric, native, runtime
from mcsim.arrays import i64, read_counters, read_u64, u32, u64
from mcsim.attributes import make_factory
from mcsim.errors import McsimError, pick, require_int, require_positive
from mcsim.result import VerbsResult, times_ps
from mcsim.routing.layout import Layout, layout_of
from mcsim.simulation import Simulation

WIRE_FORMATS = {"infiniband": "InfiniBand", "rocev2": "RoCEv2"}  # -> ns3::mcsim::WireFormat, by its checker's names
# who processes send completions -> ns3::mcsim::SendCompletions: nobody (the application hears of
# each at once, free), a processor of their own (the SC'24 artifact's TX thread), or the receive one
SEND_COMPLETIONS = {"free": "Free", "separate": "Separate", "shared": "Shared"}
# bytes each packet takes on the wire beyond the IB/RoCE packet: Ethernet preamble + SFD 8 and
# the inter-frame gap 12; an InfiniBand packet has no such overhead in mcsim's model
PHYSICAL_OVERHEAD_BYTES = {"infiniband": 0, "rocev2": 20}
IB_MTUS = (256, 512, 1024, 2048, 4096)
# The most header and trailer bytes an RDMA packet carries in either wire format (WireHeaderBytes in
# rdma/model/wire-format.cc): InfiniBand LRH 8 + GRH 40 + BTH 12 + RETH 16 + ImmDt 4 + ICRC 4 + VCRC 2
# (RoCEv2 at most 82); with the MTU and FabricConfig.header_b, what a lossless buffer must hold.
MAX_WIRE_HEADER_B = 86
# A NIC's latency on each side (PCIe: doorbell, WQE fetch and DMA read; DMA writes of payload and
# CQE): 300 ns each, an assumption. Mellanox states sub-microsecond application-to-application
# latency for ConnectX-3 FDR; both sides, one 170 ns switch and two 100 ns links then give 0.97 us.
# The split between the sides is not published.
DEFAULT_NIC_LATENCY_PS = 300_000
RC_VERBS = {"send": 0, "write": 1, "write_imm": 2, "read": 3}  # VerbsWorkload::RcVerb
NO_GROUP = 0xFFFFFFFF
RETRY_FOREVER = 0xFFFFFFFF  # RcQp RetryCount: never give up
ACK_TIMEOUT_UNIT_PS = 4_096_000  # IB local ACK timeout: 4.096 us x 2^timeout
# IB min_rnr_timer codes 0..31 -> the RNR NAK wait in ps (IB spec table 45; code 0 is the longest)
RNR_TIMER_PS = tuple(
    int(ms * 1_000_000_000)
    for ms in (
        655.36, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12, 0.16, 0.24, 0.32, 0.48, 0.64, 0.96, 1.28, 1.92,
        2.56, 3.84, 5.12, 7.68, 10.24, 15.36, 20.48, 30.72, 40.96, 61.44, 81.92, 122.88, 163.84, 245.76,
        327.68, 491.52,
    )
)  # fmt: skip


class CompletionProcessorConfig(Protocol):
    """The settings of a receive-completion processor: what RdmaConfig.processor holds.

    HostCpuConfig (a host CPU thread) and dpa.DpaConfig (a SmartNIC's DPA) implement it; a new
    processor model needs only a config with this method.
    """

    def factory(self) -> native.Factory:
        """The ns-3 ObjectFactory that makes one ns3::mcsim::CompletionProcessor per host
        (mcsim.attributes.make_factory)."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class HostCpuConfig:
    """The default completion processor: one host CPU thread (ns3::mcsim::HostCpu)."""

    completion_ps: int = 100_000  # CPU time per receive completion
    memcpy_bps: int = 100 * 10**9  # copy rate for staged (UD) payloads

    def __post_init__(self) -> None:
        require_int("HostCpuConfig", "completion_ps", self.completion_ps, lo=0)
        require_positive("HostCpuConfig", memcpy_bps=self.memcpy_bps)

    def factory(self) -> native.Factory:
        """The ns-3 ObjectFactory that makes one processor per host."""
        return make_factory(
            "ns3::mcsim::HostCpu",
            "HostCpuConfig",
            PerCompletionCost=self.completion_ps,
            MemcpyRate=self.memcpy_bps,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RcConfig:
    """Reliable Connected QP settings, with their InfiniBand encodings (ibv_modify_qp).

    The defaults are common verbs settings: a local ACK timeout of 67.1 ms never fires in a
    loss-free fabric, however loaded; ``RcConfig(ack_timeout_exp=0, retry_cnt=0, rnr_retry=0,
    min_rnr_timer=30)`` is the paper artifact's host transport without --rnr_retry.
    """

    ack_interval: int = 16  # the responder ACKs every this many packets (and each message's last)
    ack_timeout_exp: int = 14  # "timeout": local ACK timeout 4.096 us x 2^n (14: 67.1 ms); 0: never
    # 0..7 retries (timeouts, sequence-error and implied NAKs) without progress, then the QP fails;
    # None: retry for ever (not an IB setting: for studying the layers above RC at extreme loss)
    retry_cnt: int | None = 7
    rnr_retry: int = 7  # 0..7 RNR NAKs without progress; 7: retry for ever
    min_rnr_timer: int = 12  # 0..31 code of the wait after an RNR NAK (12: 0.64 ms; see RNR_TIMER_PS)
    max_outstanding_reads: int = 16  # max_rd_atomic: READs in flight per QP

    def __post_init__(self) -> None:
        require_positive("RcConfig", ack_interval=self.ack_interval, max_outstanding_reads=self.max_outstanding_reads)
        for name, top in (("ack_timeout_exp", 31), ("retry_cnt", 7), ("rnr_retry", 7), ("min_rnr_timer", 31)):
            value = getattr(self, name)
            if name == "retry_cnt" and value is None:
                continue
            require_int("RcConfig", name, value, lo=0, hi=top, why=" (its InfiniBand encoding)")

    @property
    def ack_timeout_ps(self) -> int:
        """The local ACK timeout (0: none)."""
        return 0 if self.ack_timeout_exp == 0 else ACK_TIMEOUT_UNIT_PS << self.ack_timeout_exp

    def attributes(self) -> dict[str, int]:
        """ns3::mcsim::RcQp attributes as Python values (times in ps), for mcsim.attributes."""
        return {
            "AckInterval": self.ack_interval,
            "LocalAckTimeout": self.ack_timeout_ps,
            "RetryCount": RETRY_FOREVER if self.retry_cnt is None else self.retry_cnt,
            "RnrRetry": self.rnr_retry,
            "MaxOutstandingReads": self.max_outstanding_reads,
            "RnrDelay": RNR_TIMER_PS[self.min_rnr_timer],
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class RdmaConfig:
    """NIC, queue-pair and host-CPU settings; sizes in bytes, times in ps, rates in bit/s."""

    wire_format: str = "infiniband"  # or "rocev2"
    mtu_b: int = 4096
    rc: RcConfig = dataclasses.field(default_factory=RcConfig)
    rq_depth: int = 128  # UD receive buffers posted
    staging: bool = True  # UD payloads land in staging buffers and are copied to their place
    region_b: int = 1 << 30  # registered memory per host (WRITE/READ targets)
    # NIC latency (README, "The RDMA transport"): post -> first byte on the wire, last byte in -> completion
    send_latency_ps: int = DEFAULT_NIC_LATENCY_PS
    receive_latency_ps: int = DEFAULT_NIC_LATENCY_PS
    # a multicast datagram also reaches the sender's own QP in the group, taking a receive buffer and a
    # completion (InfiniBand's default, and the SC'24 artifact's: its senders drop their own chunks)
    multicast_loopback: bool = False
    # who processes signalled send completions (README, "The RDMA transport"): "free" (nobody: the
    # application hears of each at once), "separate" (a processor of their own, made from `processor`:
    # the artifact's TX thread) or "shared" (the receive completions' processor)
    send_completions: str = "free"
    # who processes receive completions (HostCpuConfig, dpa.DpaConfig, or a SmartNIC model's config)
    processor: CompletionProcessorConfig = dataclasses.field(default_factory=HostCpuConfig)

    def __post_init__(self) -> None:
        pick("wire format", self.wire_format, WIRE_FORMATS)
        pick("send_completions", self.send_completions, SEND_COMPLETIONS)
        if self.mtu_b not in IB_MTUS:
            raise McsimError(f"RdmaConfig: mtu_b={self.mtu_b} is not an MTU; choose one of {IB_MTUS}")
        if isinstance(self.rq_depth, int) and self.rq_depth < 1:
            raise McsimError(f"RdmaConfig: rq_depth={self.rq_depth} must be >= 1 (a UD QP needs posted buffers)")
        require_positive("RdmaConfig", rq_depth=self.rq_depth, region_b=self.region_b)
        for name in ("send_latency_ps", "receive_latency_ps"):
            require_int("RdmaConfig", name, getattr(self, name), lo=0)
        if not isinstance(self.rc, RcConfig):
            raise McsimError(f"RdmaConfig: rc={self.rc!r} must be an RcConfig")
        if not isinstance(self.multicast_loopback, bool):
            raise McsimError(f"RdmaConfig: multicast_loopback={self.multicast_loopback!r} must be True or False")
        if not callable(getattr(self.processor, "factory", None)):
            raise McsimError(f"RdmaConfig: processor={self.processor!r} has no factory(); use HostCpuConfig()")


@dataclass(frozen=True, slots=True, kw_only=True)
class RcOp:
    """One RC operation on its own QP pair: ``src`` posts ``verb`` of ``size_b`` toward ``dst``."""

    verb: str  # "send", "write", "write_imm", "read"
    src: int
    dst: int
    size_b: int
    start_ps: int = 0

    def __post_init__(self) -> None:
        """Types and signs now (a 4096.5-byte READ is an error, not a 4096-byte one); the hosts and
        the region are checked against the fabric by run_verbs."""
        pick("RC verb", self.verb, RC_VERBS)
        for name, lo in (("src", 0), ("dst", 0), ("size_b", 1), ("start_ps", 0)):
            require_int("RcOp", name, getattr(self, name), lo=lo)


@dataclass(frozen=True, slots=True, kw_only=True)
class UdStream:
    """``src`` sends ``count`` UD datagrams of ``size_b`` (<= MTU) to host ``dst`` or to ``group``."""

    src: int
    size_b: int
    count: int
    dst: int | None = None
    group: int | None = None
    start_ps: int = 0

    def __post_init__(self) -> None:
        """Types and signs now; the hosts, the group and the MTU are checked by run_verbs."""
        for name, lo in (("src", 0), ("size_b", 1), ("count", 1), ("start_ps", 0)):
            require_int("UdStream", name, getattr(self, name), lo=lo)
        for name in ("dst", "group"):
            if getattr(self, name) is not None:
                require_int("UdStream", name, getattr(self, name), lo=0)


def _check(n_hosts: int, rc_ops: Sequence[RcOp], ud_streams: Sequence[UdStream], groups, cfg: RdmaConfig) -> None:

    def host(where: str, name: str, h: int) -> None:
        if not isinstance(h, int) or not 0 <= h < n_hosts:
            raise McsimError(f"{where}: {name}={h!r} is not a host (hosts are 0..{n_hosts - 1})")

    for i, op in enumerate(rc_ops):
        where = f"rc op {i}"
        pick("RC verb", op.verb, RC_VERBS)
        host(where, "src", op.src)
        host(where, "dst", op.dst)
        if op.src == op.dst:
            raise McsimError(f"{where}: dst={op.dst} is the requester itself")
        require_positive(where, size_b=op.size_b)
        if op.verb != "send" and op.size_b > cfg.region_b:
            raise McsimError(
                f"{where}: a {op.verb.upper()} of {op.size_b} B is larger than the registered region "
                f"(region_b={cfg.region_b}); raise RdmaConfig.region_b"
            )
        if op.start_ps < 0:
            raise McsimError(f"{where}: start_ps={op.start_ps} must be >= 0")
    for i, s in enumerate(ud_streams):
        where = f"ud stream {i}"
        host(where, "src", s.src)
        if (s.dst is None) == (s.group is None):
            raise McsimError(f"{where}: give exactly one of dst (a host) and group")
        if s.dst is not None:
            host(where, "dst", s.dst)
        elif s.group is None or not 0 <= s.group < len(groups):
            raise McsimError(f"{where}: group={s.group} is not one of the {len(groups)} groups given")
        elif s.src not in groups[s.group]:
            raise McsimError(f"{where}: src={s.src} is not a member of group {s.group}")
        require_positive(where, size_b=s.size_b, count=s.count)
        if s.size_b > cfg.mtu_b:
            raise McsimError(f"{where}: size_b={s.size_b} is larger than one datagram (mtu_b={cfg.mtu_b})")
        if s.start_ps < 0:
            raise McsimError(f"{where}: start_ps={s.start_ps} must be >= 0")


def run_verbs(
    g: nx.Graph | Layout,
    *,
    rc_ops: Sequence[RcOp] = (),
    ud_streams: Sequence[UdStream] = (),
    groups: Sequence[Sequence[int]] = (),
    rdma: RdmaConfig | None = None,
    config: fabric.FabricConfig | None = None,
    **fabric_options: Any,
) -> VerbsResult:
    """Run RC operations and UD streams on the fabric of ``g``; return times and counters.

    Parameters
    ----------
    g
        A topology (mcsim.topology) or its Layout.
    rc_ops, ud_streams
        The workload; each RC op gets its own connected QP pair, each UD receiver one UD QP
        (per group it is a member of, plus one for unicast datagrams).
    groups
        Multicast groups (lists of member hosts); UdStream.group indexes them.
    rdma
        NIC, QP and host-CPU settings.
    config
        Fabric settings; its header_b is replaced by the wire format's physical-layer
        overhead (0 for InfiniBand, 20 for RoCEv2), since the NIC sends real headers.
    fabric_options
        Passed on to fabric.build (e.g. faults=...).
    """
    rdma = rdma or RdmaConfig()
    if not rc_ops and not ud_streams:
        raise McsimError("run_verbs: no RC ops and no UD streams given")
    layout = layout_of(g)
    _check(layout.hosts, rc_ops, ud_streams, groups, rdma)
    config = fabric_config_for(rdma, config, "run_verbs")
    with Simulation() as sim:
        fab = sim.own_fabric(fabric.build(layout, groups=groups, config=config, **fabric_options))
        lib = sim.lib
        stack = sim.own_stack(build_stack(fab, rdma))
        work = sim.own_app(native.Handle(lib, "ns3::mcsim::VerbsWorkload"))
        lib.mcsim_verbs_setup(work, stack)
        for gid, members in enumerate(groups):
            arr = u32(sorted(members))
            lib.mcsim_verbs_add_ud_group(work, gid, arr, len(members))
        if rc_ops:
            lib.mcsim_verbs_add_rc_ops(
                work,
                u32([RC_VERBS[op.verb] for op in rc_ops]),
                u32([op.src for op in rc_ops]),
                u32([op.dst for op in rc_ops]),
                u64([op.size_b for op in rc_ops]),
                i64([op.start_ps for op in rc_ops]),
                len(rc_ops),
            )
        if ud_streams:
            lib.mcsim_verbs_add_ud_streams(
                work,
                u32([s.src for s in ud_streams]),
                u32([fabric.destination(s.dst, s.group) for s in ud_streams]),
                u32([s.count for s in ud_streams]),
                u32([s.size_b for s in ud_streams]),
                i64([s.start_ps for s in ud_streams]),
                len(ud_streams),
            )
        sim.run()
        return _collect(work, stack, fab, len(rc_ops))


def _collect(work: native.Handle, stack: native.Handle, fab: fabric.BuiltFabric, n_ops: int) -> VerbsResult:
    lib = fab.lib
    times = read_u64(n_ops * 4, partial(lib.mcsim_verbs_rc_op_times, work)).reshape(-1, 4)
    rc = read_counters("rc_qp", 2 * n_ops, partial(lib.mcsim_verbs_rc_qp_counters, work))  # requester, responder
    ud = read_counters("ud_qp", lib.mcsim_verbs_n_ud_qps(work), partial(lib.mcsim_verbs_ud_qp_counters, work))
    nic = read_nic_counters(stack, fab.n_hosts)
    return VerbsResult(
        fabric=fab.collect(),
        rc_done_ps=times_ps(times[:, 0]),
        rc_responder_done_ps=times_ps(times[:, 1]),
        rc_requester={k: v[0::2].copy() for k, v in rc.items()},
        rc_responder={k: v[1::2].copy() for k, v in rc.items()},
        ud=ud,
        nic=nic,
    )


def read_nic_counters(stack: native.Handle, n_hosts: int) -> dict[str, np.ndarray]:
    """The "nic" counters of every host of an RdmaStack, as numpy arrays."""
    return read_counters("nic", n_hosts, partial(runtime.load().mcsim_stack_host_counters, stack))


def build_stack(fab: fabric.BuiltFabric, rdma: RdmaConfig) -> native.Handle:
    """An ns3::mcsim::RdmaStack on a built fabric: a NIC and a completion processor per host."""
    nic = make_factory(
        "ns3::mcsim::Nic",
        "RdmaConfig",
        WireFormat=WIRE_FORMATS[rdma.wire_format],
        MtuBytes=rdma.mtu_b,
        SendLatency=rdma.send_latency_ps,
        ReceiveLatency=rdma.receive_latency_ps,
        MulticastLoopback=rdma.multicast_loopback,
        SendCompletions=SEND_COMPLETIONS[rdma.send_completions],
    )
    rc = make_factory("ns3::mcsim::RcQp", "RcConfig", **rdma.rc.attributes())
    ud = make_factory("ns3::mcsim::UdQp", "RdmaConfig", RqDepth=rdma.rq_depth, Staging=rdma.staging)
    processor = rdma.processor.factory()
    stack = native.Handle(fab.lib, "ns3::mcsim::RdmaStack")
    try:
        fab.lib.mcsim_stack_setup(stack, fab.cxx, nic, processor, rc, ud, rdma.region_b)
    except BaseException:
        runtime.dispose(stack)  # not handed to a Simulation yet
        raise
    return stack


def fabric_config_for(
    rdma: RdmaConfig, config: fabric.FabricConfig | None, where: str = "RdmaConfig"
) -> fabric.FabricConfig:
    """The fabric settings of an RDMA run: header_b becomes the physical-layer overhead.

    Raises
    ------
    McsimError
        If a lossless buffer cannot hold one largest packet (the MTU and MAX_WIRE_HEADER_B).
    """
    out = dataclasses.replace(config or fabric.FabricConfig(), header_b=PHYSICAL_OVERHEAD_BYTES[rdma.wire_format])
    fabric.check_lossless_buffers(where, out, rdma.mtu_b + MAX_WIRE_HEADER_B, "the MTU (mtu_b)")
    return out
