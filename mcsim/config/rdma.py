# SPDX-License-Identifier: GPL-2.0-only
"""RDMA settings as frozen data: RdmaConfig (NIC, QPs, wire format), RcConfig, the completion
processors' configs (HostCpuConfig), the verbs workload (RcOp, UdStream) and their checks (no C++).
The congestion controls' configs (DcqcnConfig, HpccConfig) are in mcsim.config.congestion.

mcsim.runs.verbs runs them (run_verbs) through mcsim.native.rdma; mcsim.native.processors makes each processor
config's ns-3 factory (processor_factory).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from mcsim.config.congestion import CongestionConfig, is_congestion_config, spelling, split_text, text_keys, uses_ecn
from mcsim.config.fabric import DEFAULT_MTU_BYTES, FabricConfig, check_lossless_buffers
from mcsim.config.ns3_attributes import sets
from mcsim.errors import McsimError, pick, require_bool, require_int, require_integer, require_positive
from mcsim.routing.layout import Layout
from mcsim.topology.physics import Link
from mcsim.topology.summary import diameter_hops
from mcsim.units import require_rate_bps, require_time_ps

# the C++ types RdmaConfig, RcConfig and HostCpuConfig set attributes of
NIC, UD_QP, RC_QP, HOST_CPU = "ns3::mcsim::Nic", "ns3::mcsim::UdQp", "ns3::mcsim::RcQp", "ns3::mcsim::HostCpu"
STACK = "ns3::mcsim::RdmaStack"
WIRE_FORMATS = {"infiniband": "InfiniBand", "rocev2": "RoCEv2"}
# shared with C++ (capi::Constants; tests/native/test_constants.py compares): HPCC's INT, the wire bytes it
# adds to each data packet of an HPCC QP and to its ACK (IntStore::HEADER_BYTES: a 2-byte hop count and room
# for 5 records of 8 bytes, as the HPCC authors' simulator's IntHeader)
INT_HEADER_B = 42
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
# shared with C++ (capi::Constants; tests/native/test_constants.py compares)
NO_GROUP = 0xFFFFFFFF  # VerbsWorkload::NO_GROUP: the group column of a host's unicast UD QP
RETRY_FOREVER = 0xFFFFFFFF  # RcQp::RETRY_FOREVER: a RetryCount that never gives up
# InfiniBand and NIC limits that bound a run (Scenario checks them; the reason goes into its message)
MAX_QP_WR = 32768  # work requests one queue holds (ibv_query_device max_qp_wr of ConnectX NICs)
QP_WR_WHY = f" (a ConnectX queue holds at most {MAX_QP_WR} work requests, max_qp_wr)"
MAX_ENDPOINTS = 16383  # multicast LIDs of an InfiniBand subnet (0xC000..0xFFFE)
ENDPOINTS_WHY = (
    ": each endpoint is one UD QP per rank in a multicast group of its own, and an InfiniBand subnet has "
    f"{MAX_ENDPOINTS} multicast LIDs (a NIC has 65535 QPs)"
)
MAX_MESSAGE_B = 2**31  # the largest InfiniBand message (one RDMA WRITE): 2 GiB
MAX_U32 = 2**32 - 1  # what crosses the C ABI as uint32 (a UD stream's datagram count)
MCAST_MAX_CHUNKS = 2**24 - 1  # the multicast chunk id is 24 bits of the UD immediate
RING_MAX_CHUNKS = 2**32 - 1  # the ring chunk id is the WRITE's 32-bit immediate
MAX_PSNS = 2**32 - 1  # packets one RC QP may send: its 32-bit PSNs must not wrap within a run
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

    HostCpuConfig (a host CPU thread) and mcsim.config.dpa.DpaConfig (a SmartNIC's DPA) implement it:
    frozen data naming the ns-3 type it configures. mcsim.native.processors.processor_factory makes that type's
    ObjectFactory from it (mcsim.native.processors.PROCESSOR_FACTORIES). A processor model written outside mcsim
    either adds its config type there or brings a ``factory()`` method that makes its ObjectFactory
    itself (mcsim.native.attributes.make_factory); it needs no TYPE_ID then.
    """

    TYPE_ID: ClassVar[str]  # the ns3::mcsim::CompletionProcessor it configures


def is_processor_config(value: object) -> bool:
    """Whether ``value`` is a completion processor's config: an instance with a TYPE_ID, or one that
    makes its own factory (a ``factory()`` method)."""
    if isinstance(value, type):
        return False
    return isinstance(getattr(type(value), "TYPE_ID", None), str) or callable(getattr(value, "factory", None))


@dataclass(frozen=True, slots=True, kw_only=True)
class HostCpuConfig:
    """The default completion processor: one host CPU thread (ns3::mcsim::HostCpu)."""

    TYPE_ID: ClassVar[str] = HOST_CPU
    completion_ps: int = field(default=100_000, metadata=sets(HOST_CPU, "PerCompletionCost"))  # per receive completion
    memcpy_bps: int = field(default=100 * 10**9, metadata=sets(HOST_CPU, "MemcpyRate"))  # staged (UD) payloads' copy
    # a completion that only updates its host's state (a multicast datagram that completes nothing) is
    # processed without an event of its own, at its place in the canonical order: the results are the
    # same bit for bit; False runs one event per completion (to check that; README, "How it is built")
    defer_completions: bool = field(default=True, metadata=sets(HOST_CPU, "DeferCompletions"))

    def __post_init__(self) -> None:
        require_time_ps("HostCpuConfig", "completion_ps", self.completion_ps)
        require_rate_bps("HostCpuConfig", "memcpy_bps", self.memcpy_bps, lo=1)
        require_bool("HostCpuConfig", defer_completions=self.defer_completions)


# A GPU's own receive (nodes of several GPUs, mcsim.topology.nodes): the payload lands in its memory by the NIC's or
# the NVSwitch's writes, zero copy, and a kernel polls a flag: no cost per completion is modelled. The NVSwitch's
# multicast and reduction (NVLS) are then the mcast and innet algorithms on a node with this receive.
GPU_RECEIVE = HostCpuConfig(completion_ps=0)


@dataclass(frozen=True, slots=True, kw_only=True)
class RcConfig:
    """Reliable Connected QP settings, with their InfiniBand encodings (ibv_modify_qp).

    The defaults are common verbs settings: a local ACK timeout of 67.1 ms never fires in a
    loss-free fabric, however loaded; ``RcConfig(ack_timeout_exp=0, retry_cnt=0, rnr_retry=0,
    min_rnr_timer=30)`` is the paper artifact's host transport without --rnr_retry.
    """

    # the responder ACKs every this many packets (and each message's last)
    ack_interval: int = field(default=16, metadata=sets(RC_QP, "AckInterval"))
    # "timeout": local ACK timeout 4.096 us x 2^n (14: 67.1 ms); 0: never
    ack_timeout_exp: int = field(default=14, metadata=sets(RC_QP, "LocalAckTimeout", lambda _, rc: rc.ack_timeout_ps))
    # 0..7 retries (timeouts, sequence-error and implied NAKs) without progress, then the QP fails;
    # None: retry for ever (not an IB setting: for studying the layers above RC at extreme loss)
    retry_cnt: int | None = field(
        default=7, metadata=sets(RC_QP, "RetryCount", lambda n, _: RETRY_FOREVER if n is None else n)
    )
    rnr_retry: int = field(default=7, metadata=sets(RC_QP, "RnrRetry"))  # 0..7 RNR NAKs without progress; 7: for ever
    # 0..31 code of the wait after an RNR NAK (12: 0.64 ms; see RNR_TIMER_PS)
    min_rnr_timer: int = field(default=12, metadata=sets(RC_QP, "RnrDelay", lambda code, _: RNR_TIMER_PS[code]))
    # max_rd_atomic: READs in flight per QP
    max_outstanding_reads: int = field(default=16, metadata=sets(RC_QP, "MaxOutstandingReads"))

    def __post_init__(self) -> None:
        require_integer("RcConfig", ack_interval=self.ack_interval, max_outstanding_reads=self.max_outstanding_reads)
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


@dataclass(frozen=True, slots=True, kw_only=True)
class RdmaConfig:
    """NIC, queue-pair and host-CPU settings; sizes in bytes, times in ps, rates in bit/s."""

    wire_format: str = field(default="infiniband", metadata=sets(NIC, "WireFormat", WIRE_FORMATS))  # or "rocev2"
    # the NICs' congestion control (mcsim.config.congestion): None (every QP at the line rate), DcqcnConfig() (it
    # turns the fabric's ECN marking on), HpccConfig(), or a congestion control model's config
    congestion: CongestionConfig | None = None
    mtu_b: int = field(default=DEFAULT_MTU_BYTES, metadata=sets(NIC, "MtuBytes"))
    rc: RcConfig = dataclasses.field(default_factory=RcConfig)
    rq_depth: int = field(default=128, metadata=sets(UD_QP, "RqDepth"))  # UD receive buffers posted
    # UD payloads land in staging buffers and are copied to their place
    staging: bool = field(default=True, metadata=sets(UD_QP, "Staging"))
    # UD datagrams to hosts and groups (the multicast's chunks) go in PFC's lossy class (fabric.md, "Traffic
    # classes"): never paused, tail-dropped. RC traffic (the multicast's READ repair) and the in-network
    # reductions' contributions (nothing repairs a lost one) stay lossless. A PFC fabric only
    ud_lossy: bool = field(default=False, metadata=sets(UD_QP, "LossyClass"))
    # registered memory per host (WRITE/READ targets)
    region_b: int = field(default=1 << 30, metadata=sets(STACK, "RegionBytes"))
    # NIC latency (README, "The RDMA transport"): post -> first byte on the wire, last byte in -> completion
    send_latency_ps: int = field(default=DEFAULT_NIC_LATENCY_PS, metadata=sets(NIC, "SendLatency"))
    receive_latency_ps: int = field(default=DEFAULT_NIC_LATENCY_PS, metadata=sets(NIC, "ReceiveLatency"))
    # a multicast datagram also reaches the sender's own QP in the group, taking a receive buffer and a
    # completion (InfiniBand's default, and the SC'24 artifact's: its senders drop their own chunks)
    multicast_loopback: bool = field(default=False, metadata=sets(NIC, "MulticastLoopback"))
    # who processes signalled send completions (README, "The RDMA transport"): "free" (nobody: the
    # application hears of each at once), "separate" (a processor of their own, made from `processor`:
    # the artifact's TX thread) or "shared" (the receive completions' processor)
    send_completions: str = field(default="free", metadata=sets(NIC, "SendCompletions", SEND_COMPLETIONS))
    # the NIC's arbiter picks its next packet when the current one has left (False), or already when a
    # cut-through switch has its header if that is earlier (True: a pipelined send engine, and no event
    # per packet sent); README, "The RDMA transport"
    pick_at_handover: bool = field(default=False, metadata=sets(NIC, "PickAtHandover"))
    # who processes receive completions (HostCpuConfig, config.dpa.DpaConfig, or a SmartNIC model's config)
    processor: CompletionProcessorConfig = dataclasses.field(default_factory=HostCpuConfig)

    def __post_init__(self) -> None:
        pick("wire format", self.wire_format, WIRE_FORMATS)
        if self.congestion is not None and not is_congestion_config(self.congestion):
            raise McsimError(
                f"RdmaConfig: congestion={self.congestion!r} is not a congestion control config; use DcqcnConfig(), "
                "HpccConfig() or None (mcsim.config.congestion)"
            )
        for name in ("send_latency_ps", "receive_latency_ps"):
            require_time_ps("RdmaConfig", name, getattr(self, name))
        pick("send_completions", self.send_completions, SEND_COMPLETIONS)
        if self.mtu_b not in IB_MTUS:
            raise McsimError(f"RdmaConfig: mtu_b={self.mtu_b} is not an MTU; choose one of {IB_MTUS}")
        if isinstance(self.rq_depth, int) and self.rq_depth < 1:
            raise McsimError(f"RdmaConfig: rq_depth={self.rq_depth} must be >= 1 (a UD QP needs posted buffers)")
        require_positive("RdmaConfig", rq_depth=self.rq_depth, region_b=self.region_b)
        require_integer("RdmaConfig", rq_depth=self.rq_depth, region_b=self.region_b)  # 8.5 buffers are none
        if not isinstance(self.rc, RcConfig):
            raise McsimError(f"RdmaConfig: rc={self.rc!r} must be an RcConfig")
        require_bool(
            "RdmaConfig",
            multicast_loopback=self.multicast_loopback,
            pick_at_handover=self.pick_at_handover,
            ud_lossy=self.ud_lossy,
        )
        if not is_processor_config(self.processor):
            raise McsimError(
                f"RdmaConfig: processor={self.processor!r} is not a completion processor config; use HostCpuConfig()"
            )


def _refusing_old_keywords(init: Callable[..., None]) -> Callable[..., None]:
    """RdmaConfig's __init__, saying in one line how to spell the congestion control fields it had before issue 50
    (congestion_control, dcqcn_*, hpcc_*: now RdmaConfig.congestion, mcsim.config.congestion)."""

    @functools.wraps(init)
    def __init__(self: RdmaConfig, **kwargs: Any) -> None:
        old = [k for k in kwargs if k in text_keys()]
        if old:
            given = ", ".join(f"{k}={kwargs[k]!r}" for k in old)
            new = spelling(split_text({k: kwargs[k] for k in old}, "RdmaConfig")["congestion"])
            raise McsimError(f"RdmaConfig: {given} is now spelt congestion={new} (mcsim.config.congestion)")
        init(self, **kwargs)

    return __init__


setattr(RdmaConfig, "__init__", _refusing_old_keywords(RdmaConfig.__init__))  # noqa: B010 (a dataclass's own)


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
        for name, lo in (("src", 0), ("dst", 0)):
            require_int("RcOp", name, getattr(self, name), lo=lo)
        if require_int("RcOp", "size_b", self.size_b, lo=1) > MAX_MESSAGE_B:
            raise McsimError(
                f"RcOp: size_b={self.size_b} must be <= {MAX_MESSAGE_B} (2 GiB: the largest InfiniBand message)"
            )
        require_time_ps("RcOp", "start_ps", self.start_ps)


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
        for name, lo in (("src", 0), ("size_b", 1)):
            require_int("UdStream", name, getattr(self, name), lo=lo)
        if require_int("UdStream", "count", self.count, lo=1) > MAX_U32:
            raise McsimError(f"UdStream: count={self.count} must be <= {MAX_U32} (uint32 in C++)")
        require_time_ps("UdStream", "start_ps", self.start_ps)
        for name in ("dst", "group"):
            if getattr(self, name) is not None:
                require_int("UdStream", name, getattr(self, name), lo=0)


def check_workload(
    n_hosts: int,
    rc_ops: Sequence[RcOp],
    ud_streams: Sequence[UdStream],
    groups: Sequence[Sequence[int]],
    cfg: RdmaConfig,
) -> None:
    """Raise McsimError (one line) for an op or stream that does not fit ``n_hosts`` hosts, ``groups`` or ``cfg``
    (and for a receive queue deeper than a ConnectX queue, which Scenario checks for its runs)."""
    require_int("run_verbs", "rdma.rq_depth", cfg.rq_depth, lo=1, hi=MAX_QP_WR, why=QP_WR_WHY)

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


def fabric_config_for(rdma: RdmaConfig, config: FabricConfig | None, where: str = "RdmaConfig") -> FabricConfig:
    """The fabric settings of an RDMA run: header_b becomes the physical-layer overhead.

    Raises
    ------
    McsimError
        If a lossless buffer cannot hold one largest packet (the MTU and MAX_WIRE_HEADER_B), or ud_lossy
        is set on a fabric without PFC.
    """
    base = config or FabricConfig()
    if rdma.ud_lossy and base.flow_control != "pfc":
        raise McsimError(
            f"{where}: ud_lossy=True puts datagrams in PFC's lossy class; give FabricConfig(flow_control='pfc') "
            f"(not {base.flow_control!r})"
        )
    out = dataclasses.replace(
        base,
        header_b=PHYSICAL_OVERHEAD_BYTES[rdma.wire_format],
        pfc_max_frame_b=rdma.mtu_b + MAX_WIRE_HEADER_B,
        ecn=base.ecn or uses_ecn(rdma.congestion),  # DCQCN reacts to the switches' marks
    )
    check_lossless_buffers(where, out, rdma.mtu_b + MAX_WIRE_HEADER_B, "the MTU (mtu_b)")
    return out


# a pcap trace's caps per file when none are given: a million frames, 1 GiB (a file Wireshark opens at once)
PCAP_MAX_PACKETS = 1_000_000
PCAP_MAX_BYTES = 1 << 30


@dataclass(frozen=True, slots=True, kw_only=True)
class PcapConfig:
    """A packet trace (``Scenario.run(pcap=...)``): one pcap file per host in ``hosts`` (the frames its NIC sends
    and receives, ``folder``/host-<h>.pcap) and per port in ``ports`` (``(node, port)`` as in
    :class:`Faults`: the frames the port sends and those that arrive at it, ``folder``/node-<n>-port-<p>.pcap).
    Frames as the run's wire format carries them: native InfiniBand in ERF records, RoCEv2 as Ethernet frames;
    truncated after their headers (with their length on the wire), whole with ICRC and VCRC or FCS in verify
    mode. Each file holds at most ``max_packets`` frames and ``max_bytes`` bytes (0: no cap), the rest counted."""

    folder: str
    hosts: tuple[int, ...] = (0,)
    ports: tuple[tuple[int, int], ...] = ()
    max_packets: int = PCAP_MAX_PACKETS
    max_bytes: int = PCAP_MAX_BYTES

    def __post_init__(self) -> None:
        if not isinstance(self.folder, str) or not self.folder:
            raise McsimError(f"PcapConfig: folder={self.folder!r} must be a folder's path")
        if not isinstance(self.hosts, tuple) or not isinstance(self.ports, tuple) or not self.hosts + self.ports:
            raise McsimError(
                f"PcapConfig: hosts={self.hosts!r}, ports={self.ports!r}: give a tuple of hosts, e.g. (0, 1), "
                "and/or of (node, port) pairs"
            )
        for h in self.hosts:
            require_int("PcapConfig", "hosts", h, lo=0)
        for p in self.ports:
            if not isinstance(p, tuple) or len(p) != 2:
                raise McsimError(f"PcapConfig: ports={self.ports!r}: each port is a (node, port) pair, not {p!r}")
            require_int("PcapConfig", "ports", p[0], lo=0)
            require_int("PcapConfig", "ports", p[1], lo=0)
        for name, items in (("hosts", self.hosts), ("ports", self.ports)):
            if len(set(items)) != len(items):
                raise McsimError(f"PcapConfig: {name}={items!r} names one twice")
        require_int("PcapConfig", "max_packets", self.max_packets, lo=0)
        require_int("PcapConfig", "max_bytes", self.max_bytes, lo=0)

    def path(self, host: int) -> str:
        """The file of one host's frames."""
        return os.path.join(self.folder, f"host-{host}.pcap")

    def port_path(self, node: int, port: int) -> str:
        """The file of one port's frames."""
        return os.path.join(self.folder, f"node-{node}-port-{port}.pcap")


def hpcc_base_rtt_ps(layout: Layout, fabric: FabricConfig, rdma: RdmaConfig) -> int:
    """HPCC's T when its ``base_rtt_ps`` (HpccConfig) is 0: the fabric's largest base RTT, from a data packet's first
    bit to the arrival of the ACK that covers it, on an idle fabric, as an upper bound.

    On the longest host-to-host path (D links, ``diameter_hops``), every link at the slowest data rate and the
    largest delay of the fabric, store and forward: D x (2 x delay + a full data packet's and an ACK's
    serialization, each with MAX_WIRE_HEADER_B, the INT header and header_b) + 2 (D - 1) switch latencies (an
    HPCC packet asks for its ACK: the responder does not wait for ack_interval of them).
    """
    links = [Link.from_edge(attrs) for _, _, attrs in layout.graph.edges(data=True)]
    slowest = min(links, key=lambda link: link.data_rate_bps)
    delay = max(link.delay_ps for link in links)
    hops = diameter_hops(layout.graph)
    data = slowest.tx_ps(rdma.mtu_b + MAX_WIRE_HEADER_B + INT_HEADER_B + fabric.header_b)
    ack = slowest.tx_ps(MAX_WIRE_HEADER_B + INT_HEADER_B + fabric.header_b)
    return hops * (2 * delay + data + ack) + 2 * (hops - 1) * fabric.switch_latency_ps


def check_congestion_control(where: str, layout: Layout, rdma: RdmaConfig, prefix: str = "") -> None:
    """Raise McsimError (one line) for congestion control parameters that cannot work at the slowest host's line
    rate: the config's own ``check_line_rate`` (DcqcnConfig's floor, HpccConfig's window; mcsim.config.congestion),
    its fields named after ``prefix`` and "congestion."."""
    check = getattr(rdma.congestion, "check_line_rate", None)
    if check is None:
        return
    g = layout.graph
    rate = min(Link.from_edge(g.edges[h, next(iter(g.neighbors(h)))]).data_rate_bps for h in range(layout.hosts))
    check(where, rate, f"{prefix}congestion.")
