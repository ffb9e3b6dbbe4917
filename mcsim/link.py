# SPDX-License-Identifier: GPL-2.0-only
"""One link: its physical parameters, closed-form serialization time, and a one-link stream run.

The stream run drives the C++ models ``ns3::mcsim::TrafficSource -> Port -> TrafficSink`` and is
the smallest end-to-end use of the runtime: Python plans, C++ runs every packet, Python reads the
counters afterwards.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mcsim import runtime
from mcsim.errors import McsimError, require_positive

PS_PER_S = 10**12
DEFAULT_MTU_BYTES = 4096  # the InfiniBand MTU: the largest payload per packet
DEFAULT_DELAY_PS = 100_000  # 100 ns: ~20 m of fibre


@dataclass(frozen=True, slots=True, kw_only=True)
class Link:
    """A full-duplex link direction: signalling rate, line encoding, headers, propagation delay.

    ``rate_bps`` is the signalling rate; the data rate is ``rate_bps * encoding_data_bits /
    encoding_line_bits`` (FDR InfiniBand: 56.25 Gbit/s with 64b/66b gives 54.55 Gbit/s). Each
    packet also carries ``header_bytes`` on the wire beyond its payload.
    """

    rate_bps: int
    encoding_data_bits: int = 1
    encoding_line_bits: int = 1
    header_bytes: int = 0
    delay_ps: int = DEFAULT_DELAY_PS

    def __post_init__(self) -> None:
        require_positive(
            "Link",
            rate_bps=self.rate_bps,
            encoding_data_bits=self.encoding_data_bits,
            encoding_line_bits=self.encoding_line_bits,
        )
        if self.encoding_data_bits > self.encoding_line_bits:
            raise McsimError(
                f"Link: encoding {self.encoding_data_bits}b/{self.encoding_line_bits}b has more data bits "
                "than line bits; e.g. 64b/66b is encoding_data_bits=64, encoding_line_bits=66"
            )
        if self.header_bytes < 0:
            raise McsimError(f"Link: header_bytes={self.header_bytes} must be >= 0")
        if self.delay_ps < 0:
            raise McsimError(f"Link: delay_ps={self.delay_ps} must be >= 0")

    @property
    def data_rate_bps(self) -> int:
        """Data rate after line encoding, in bit/s, rounded down."""
        return self.rate_bps * self.encoding_data_bits // self.encoding_line_bits

    def tx_ps(self, payload_bytes: int) -> int:
        """Serialization time of one packet in ps, rounded up (as the C++ Port computes it)."""
        num = (payload_bytes + self.header_bytes) * 8 * PS_PER_S * self.encoding_line_bits
        den = self.encoding_data_bits * self.rate_bps
        return -(-num // den)


def parse_encoding(text: str) -> tuple[int, int]:
    """Return (data bits, line bits) of a line code: "64b/66b" -> (64, 66); "none" -> (1, 1)."""
    if text.strip().lower() == "none":
        return 1, 1
    m = re.fullmatch(r"\s*(\d+)b/(\d+)b\s*", text)
    if m is None or int(m[1]) == 0 or int(m[1]) > int(m[2]):
        raise McsimError(f"encoding={text!r} is not a line code; e.g. '64b/66b', '128b/130b' or 'none'")
    return int(m[1]), int(m[2])


@dataclass(frozen=True, slots=True)
class StreamResult:
    """What one host-to-host stream over one link measured."""

    size_b: int  # payload bytes sent
    packets: int  # packets sent
    received_b: int  # payload bytes the sink received
    received_packets: int
    wire_bytes: int  # bytes on the wire, headers included
    first_arrival_ps: int  # last bit of the first packet at the sink
    finish_ps: int  # last bit of the last packet at the sink
    busy_ps: int  # total serialization time of the port

    def goodput_bps(self) -> float:
        """Payload bit/s from time 0 to the last arrival."""
        return self.size_b * 8 * PS_PER_S / self.finish_ps


def expected_finish_ps(link: Link, size_b: int, mtu_b: int) -> int:
    """Closed form: back-to-back packets of mtu_b (the last one the remainder) plus one delay."""
    full, rest = divmod(size_b, mtu_b)
    return full * link.tx_ps(mtu_b) + (link.tx_ps(rest) if rest else 0) + link.delay_ps


def stream(link: Link, size_b: int, *, mtu_b: int = DEFAULT_MTU_BYTES) -> StreamResult:
    """Send ``size_b`` payload bytes over ``link`` in packets of at most ``mtu_b``; return counters."""
    require_positive("stream", size_b=size_b, mtu_b=mtu_b)
    ns = runtime.load()
    mcsim = ns.mcsim
    port = ns.CreateObject[mcsim.Port]()
    runtime.set_attributes(
        port,
        "Port",
        DataRate=ns.DataRateValue(ns.DataRate(link.rate_bps)),
        EncodingDataBits=ns.UintegerValue(link.encoding_data_bits),
        EncodingLineBits=ns.UintegerValue(link.encoding_line_bits),
        HeaderBytes=ns.UintegerValue(link.header_bytes),
        Delay=ns.TimeValue(ns.PicoSeconds(link.delay_ps)),
    )
    sink = ns.CreateObject[mcsim.TrafficSink]()
    port.Connect(sink.AsReceiver(), 0)
    source = ns.CreateObject[mcsim.TrafficSource]()
    runtime.set_attributes(
        source, "TrafficSource", TotalBytes=ns.UintegerValue(size_b), PacketBytes=ns.UintegerValue(mtu_b)
    )
    source.SetPort(port)
    source.Start(ns.Seconds(0))
    try:
        ns.Simulator.Run()
        return StreamResult(
            size_b=int(source.GetSentBytes()),
            packets=int(source.GetSentPackets()),
            received_b=int(sink.GetReceivedBytes()),
            received_packets=int(sink.GetReceivedPackets()),
            wire_bytes=int(port.GetTxWireBytes()),
            first_arrival_ps=int(sink.GetFirstArrival().GetPicoSeconds()),
            finish_ps=int(sink.GetLastArrival().GetPicoSeconds()),
            busy_ps=int(port.GetBusyTime().GetPicoSeconds()),
        )
    finally:
        runtime.destroy()
