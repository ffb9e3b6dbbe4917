# SPDX-License-Identifier: GPL-2.0-only
"""A stream over one link: the smallest use of the fabric (two hosts, one link, one flow).

Python plans, C++ runs every packet, Python reads the counters afterwards. The link itself (rates,
encoding, closed forms) is :class:`mcsim.topology.physics.Link`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import networkx as nx

from mcsim.config.fabric import DEFAULT_HEADER_BYTES, DEFAULT_MTU_BYTES, FABRIC_HEADER_BYTES, FabricConfig, Flow
from mcsim.config.rdma import IB_MTUS, MAX_WIRE_HEADER_B, PHYSICAL_OVERHEAD_BYTES
from mcsim.errors import McsimError, is_integer, require_positive
from mcsim.runs.flows import simulate
from mcsim.topology.builders import leaf_spine
from mcsim.topology.physics import Link
from mcsim.units import PS_PER_S, format_size

MAX_MTU_B = max(IB_MTUS)  # InfiniBand's largest MTU, 4096 B (RoCE's RDMA MTU is the same)
# the most wire bytes a packet carries beyond its payload and the fabric header: an RDMA packet's headers and
# trailers in either wire format (86 B), and RoCE's preamble, SFD and inter-frame gap (20 B)
MAX_HEADER_B = MAX_WIRE_HEADER_B + max(PHYSICAL_OVERHEAD_BYTES.values())


@dataclass(frozen=True, slots=True)
class StreamResult:
    """What one host-to-host stream over one link measured."""

    size_b: int  # payload bytes sent
    packets: int  # packets sent
    received_b: int  # payload bytes the receiver got
    received_packets: int
    wire_bytes: int  # bytes on the wire: payload, FabricHeader and header_b
    first_arrival_ps: int  # last bit of the first packet at the receiver
    finish_ps: int  # last bit of the last packet at the receiver
    busy_ps: int  # total serialization time of the sender's port

    def goodput_bps(self) -> float:
        """Payload bit/s from time 0 to the last arrival."""
        return self.size_b * 8 * PS_PER_S / self.finish_ps


def expected_finish_ps(link: Link, size_b: int, mtu_b: int, header_b: int) -> int:
    """Closed form of :func:`stream`: back-to-back packets of mtu_b (the last one the remainder), each
    with the 16-byte FabricHeader and header_b on the wire, plus one delay."""
    return link.expected_finish_ps(size_b, mtu_b=mtu_b, overhead_b=FABRIC_HEADER_BYTES + header_b)


def check_packet(mtu_b: int, header_b: int, *, mtu: str = "", header: str = "") -> None:
    """A stream's packet: ``mtu_b`` payload bytes of at most the largest MTU, ``header_b`` of at most
    :data:`MAX_HEADER_B`; else one McsimError line. ``mtu``, ``header``: the options as the user gave them
    (``--mtu='1MiB'``; default: the API's names)."""
    require_positive("stream", mtu_b=mtu_b)
    if mtu_b > MAX_MTU_B:
        raise McsimError(
            f"stream: {mtu or f'mtu_b={mtu_b}'} is {mtu_b} B, past the largest MTU, {MAX_MTU_B} B (InfiniBand's "
            f"largest: IB_MTUS in mcsim.config.rdma); give at most {format_size(MAX_MTU_B)}"
        )
    if is_integer(header_b) and header_b > MAX_HEADER_B:  # its type and sign: FabricConfig's checks
        raise McsimError(
            f"stream: {header or f'header_b={header_b}'} is {header_b} B, past the most a packet carries beyond "
            f"its payload and the {FABRIC_HEADER_BYTES}-byte fabric header, {MAX_HEADER_B} B (MAX_WIRE_HEADER_B "
            f"{MAX_WIRE_HEADER_B} in mcsim.config.rdma, and RoCE's {max(PHYSICAL_OVERHEAD_BYTES.values())} bytes of "
            "preamble and gap)"
        )


def two_hosts(link: Link) -> nx.Graph[Any]:
    """Two hosts joined by one link: the smallest topology."""
    g: nx.Graph[int] = nx.Graph(name="two-hosts")
    for h in (0, 1):
        g.add_node(h, role="host", tier=0, name=f"h{h}")
    g.add_edge(0, 1, **link.edge_attrs())
    return g


def star(hosts: int, link: Link) -> nx.Graph[Any]:
    """``hosts`` hosts on one switch (node ``hosts``), every link ``link``: every pair of hosts is the
    same distance apart."""
    return leaf_spine(
        1,
        0,
        hosts,
        rate_bps=link.rate_bps,
        delay_ps=link.delay_ps,
        encoding_data_bits=link.encoding_data_bits,
        encoding_line_bits=link.encoding_line_bits,
    )


def stream(
    link: Link, size_b: int, *, mtu_b: int = DEFAULT_MTU_BYTES, header_b: int = DEFAULT_HEADER_BYTES
) -> StreamResult:
    """Send ``size_b`` payload bytes from host 0 to host 1 over ``link``; return what happened. Packets carry
    at most ``mtu_b`` payload bytes (at most :data:`MAX_MTU_B`) and ``header_b`` more (at most :data:`MAX_HEADER_B`)."""
    require_positive("stream", size_b=size_b, mtu_b=mtu_b)
    check_packet(mtu_b, header_b)
    r = simulate(
        two_hosts(link),
        [Flow(src=0, dst=1, size_b=size_b, mtu_b=mtu_b)],
        fabric=FabricConfig(header_b=header_b),
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
