# SPDX-License-Identifier: GPL-2.0-only
"""One link: its physical parameters, closed-form serialization time, and a one-link stream run.

The stream run is the smallest use of the fabric: two hosts, one link, one flow. Python plans, C++
runs every packet, Python reads the counters afterwards.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import networkx as nx

from mcsim.errors import McsimError, require_positive
from mcsim.fabric import DEFAULT_HEADER_BYTES, DEFAULT_MTU_BYTES, FABRIC_HEADER_BYTES, FabricConfig, Flow, simulate

PS_PER_S = 10**12
DEFAULT_DELAY_PS = 100_000  # 100 ns: ~20 m of fibre


@dataclass(frozen=True, slots=True, kw_only=True)
class Link:
    """One link's physics: signalling rate, line encoding, propagation delay.

    The data rate is ``rate_bps * encoding_data_bits / encoding_line_bits`` (FDR InfiniBand:
    56.25 Gbit/s with 64b/66b gives 54.55 Gbit/s). These are the edge attributes of a topology.
    """

    rate_bps: int
    encoding_data_bits: int = 1
    encoding_line_bits: int = 1
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
        if self.delay_ps < 0:
            raise McsimError(f"Link: delay_ps={self.delay_ps} must be >= 0")

    @property
    def data_rate_bps(self) -> int:
        """Data rate after line encoding, in bit/s, rounded down."""
        return self.rate_bps * self.encoding_data_bits // self.encoding_line_bits

    def tx_ps(self, wire_bytes: int) -> int:
        """Serialization time of ``wire_bytes`` in ps, rounded up (as the C++ Port computes it)."""
        num = wire_bytes * 8 * PS_PER_S * self.encoding_line_bits
        den = self.encoding_data_bits * self.rate_bps
        return -(-num // den)

    def edge_attrs(self) -> dict[str, int]:
        """The attributes of a topology edge with this link (one link: parallel=1)."""
        return {
            "rate_bps": self.rate_bps,
            "encoding_data_bits": self.encoding_data_bits,
            "encoding_line_bits": self.encoding_line_bits,
            "delay_ps": self.delay_ps,
            "parallel": 1,
        }


# InfiniBand generations by nominal rate: FDR and EDR signal 4 lanes at 14.0625 and 25.78125 Gbaud
# with 64b/66b; HDR and faster are given as data rates (their FEC/encoding overhead folded in).
LINK_PRESETS = {
    56 * 10**9: (56_250_000_000, 64, 66),
    100 * 10**9: (103_125_000_000, 64, 66),
}


def preset(rate_bps: int, *, delay_ps: int = DEFAULT_DELAY_PS) -> Link:
    """The link of a nominal rate: 56 Gbit/s is FDR (56.25 Gbit/s, 64b/66b), 100 EDR; others as given."""
    signal, data_bits, line_bits = LINK_PRESETS.get(rate_bps, (rate_bps, 1, 1))
    return Link(rate_bps=signal, encoding_data_bits=data_bits, encoding_line_bits=line_bits, delay_ps=delay_ps)


def with_link(g: nx.Graph, link: Link) -> nx.Graph:
    """A copy of topology g whose every link has this rate and encoding (delays, parallel kept)."""
    out = g.copy()
    for _, _, e in out.edges(data=True):
        e.update(
            rate_bps=link.rate_bps,
            encoding_data_bits=link.encoding_data_bits,
            encoding_line_bits=link.encoding_line_bits,
        )
    return out


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
    received_b: int  # payload bytes the receiver got
    received_packets: int
    wire_bytes: int  # bytes on the wire: payload, FabricHeader and header_bytes
    first_arrival_ps: int  # last bit of the first packet at the receiver
    finish_ps: int  # last bit of the last packet at the receiver
    busy_ps: int  # total serialization time of the sender's port

    def goodput_bps(self) -> float:
        """Payload bit/s from time 0 to the last arrival."""
        return self.size_b * 8 * PS_PER_S / self.finish_ps


def wire_bytes_per_packet(payload_b: int, header_bytes: int) -> int:
    """A packet's bytes on the wire: payload, the 16-byte FabricHeader, and header_bytes."""
    return payload_b + FABRIC_HEADER_BYTES + header_bytes


def expected_finish_ps(link: Link, size_b: int, mtu_b: int, header_bytes: int) -> int:
    """Closed form: back-to-back packets of mtu_b (the last one the remainder) plus one delay."""
    full, rest = divmod(size_b, mtu_b)
    last = link.tx_ps(wire_bytes_per_packet(rest, header_bytes)) if rest else 0
    return full * link.tx_ps(wire_bytes_per_packet(mtu_b, header_bytes)) + last + link.delay_ps


def two_hosts(link: Link) -> nx.Graph:
    """Two hosts joined by one link: the smallest topology."""
    g = nx.Graph(name="two-hosts")
    for h in (0, 1):
        g.add_node(h, role="host", tier=0, name=f"h{h}")
    g.add_edge(0, 1, **link.edge_attrs())
    return g


def stream(
    link: Link, size_b: int, *, mtu_b: int = DEFAULT_MTU_BYTES, header_bytes: int = DEFAULT_HEADER_BYTES
) -> StreamResult:
    """Send ``size_b`` payload bytes from host 0 to host 1 over ``link``; return what happened."""
    require_positive("stream", size_b=size_b, mtu_b=mtu_b)
    r = simulate(
        two_hosts(link),
        [Flow(src=0, dst=1, size_b=size_b, mtu_b=mtu_b)],
        config=FabricConfig(header_bytes=header_bytes),
    )
    packets = int(r.sources["sent_packets"][0])
    return StreamResult(
        size_b=int(r.sources["sent_bytes"][0]),
        packets=packets,
        received_b=int(r.hosts["rx_bytes"][1]) - packets * FABRIC_HEADER_BYTES,
        received_packets=int(r.hosts["rx_packets"][1]),
        wire_bytes=int(r.ports["tx_wire_bytes"][r.port_index(0, 0)]),
        first_arrival_ps=int(r.hosts["first_arrival_ps"][1]),
        finish_ps=int(r.hosts["last_arrival_ps"][1]),
        busy_ps=int(r.ports["busy_ps"][r.port_index(0, 0)]),
    )
