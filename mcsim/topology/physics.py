# SPDX-License-Identifier: GPL-2.0-only
"""Link physics: signalling rate, line encoding, data rate, propagation delay, and their closed forms.

A leaf module: of mcsim it imports only mcsim.errors and mcsim.units (tests/test_imports.py checks it).

Names
-----
- ``rate_bps``: the signalling rate on the wire (FDR InfiniBand: 4 lanes x 14.0625 Gbaud = 56.25 Gbit/s).
- ``data_rate_bps``: the rate left for data after the line code (FDR, 64b/66b: 54.545 Gbit/s).
- a nominal rate (``preset``'s ``nominal_bps``, ``Scenario.rate``): the marketing name of a generation
  ("56Gbps" = FDR), turned into a signalling rate and an encoding by :func:`preset`.

A topology edge carries :data:`EDGE_ATTRS`: the link's fields plus ``parallel``, built by
:func:`edge_attrs` and checked by :func:`check_link`, the one check of a link's parameters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcsim.errors import McsimError, require_integer, require_positive
from mcsim.units import MAX_RATE_BPS, MAX_SIMULATED_PS, PS_PER_S, format_rate

DEFAULT_DELAY_PS = 100_000  # 100 ns: ~20 m of fibre
LINK_ATTRS = ("rate_bps", "encoding_data_bits", "encoding_line_bits", "delay_ps")
EDGE_ATTRS = (*LINK_ATTRS, "parallel")  # parallel: number of parallel links between two nodes, >= 1
# A link's propagation delay is at most 1 s (200,000 km of fibre; a geostationary satellite hop is
# 0.12 s): delays add up along every route and every round trip, and must leave a run far inside the
# simulated clock's limit (MAX_SIMULATED_PS, 53.4 days), which one delay of 4e18 ps times 6 hops passes.
MAX_DELAY_PS = PS_PER_S
MAX_ENCODING_BITS = 2**32 - 1  # a line code's bits are uint32 in the C++ Port (EncodingDataBits/LineBits)
# Parallel links are ports of both ends: the largest switches have 512 ports (51.2T at 100G), and a
# count past this is a typo that would only exhaust memory building ports.
MAX_PARALLEL = 4096


def check_link(where: str, attrs: Mapping[str, Any]) -> None:
    """Raise McsimError unless ``attrs`` (a Link's fields or an edge's attrs) describe a link.

    Every key given must be an integer; rate_bps, the encoding bits and parallel (if given) > 0,
    delay_ps >= 0, encoding_data_bits <= encoding_line_bits; and each within mcsim's limits:
    delay_ps <= MAX_DELAY_PS (1 s), rate_bps <= MAX_RATE_BPS, the encoding bits <= MAX_ENCODING_BITS,
    parallel <= MAX_PARALLEL. Messages start with ``where``.
    """
    require_integer(where, **attrs)
    require_positive(where, **{key: value for key, value in attrs.items() if key != "delay_ps"})
    delay_ps, data_bits, line_bits = attrs["delay_ps"], attrs["encoding_data_bits"], attrs["encoding_line_bits"]
    if delay_ps < 0:
        raise McsimError(f"{where}: delay_ps={delay_ps} must be >= 0; e.g. 100_000 for 100 ns")
    if delay_ps > MAX_DELAY_PS:
        raise McsimError(
            f"{where}: delay_ps={delay_ps} must be <= {MAX_DELAY_PS} (1 s, 200,000 km of fibre: delays add up "
            f"along routes, and a run must stay inside the simulated clock's {MAX_SIMULATED_PS} ps)"
        )
    if attrs.get("rate_bps", 0) > MAX_RATE_BPS:
        raise McsimError(
            f"{where}: rate_bps={attrs['rate_bps']} must be <= {MAX_RATE_BPS} ({format_rate(MAX_RATE_BPS)}, "
            "mcsim's largest rate)"
        )
    for key in ("encoding_data_bits", "encoding_line_bits"):
        if attrs[key] > MAX_ENCODING_BITS:
            raise McsimError(f"{where}: {key}={attrs[key]} must be <= {MAX_ENCODING_BITS} (uint32 in C++)")
    if attrs.get("parallel", 1) > MAX_PARALLEL:
        raise McsimError(
            f"{where}: parallel={attrs['parallel']} must be <= {MAX_PARALLEL} (parallel links are switch ports)"
        )
    if data_bits > line_bits:
        raise McsimError(
            f"{where}: encoding_data_bits={data_bits} must be <= encoding_line_bits={line_bits}; "
            "e.g. 64 and 66 for 64b/66b"
        )


def edge_attrs(
    where: str,
    *,
    rate_bps: int,
    delay_ps: int,
    encoding_data_bits: int = 1,
    encoding_line_bits: int = 1,
    parallel: int = 1,
) -> dict[str, int]:
    """Return the attributes of a topology edge (:data:`EDGE_ATTRS`), checked; errors name ``where``."""
    attrs = {
        "rate_bps": rate_bps,
        "encoding_data_bits": encoding_data_bits,
        "encoding_line_bits": encoding_line_bits,
        "delay_ps": delay_ps,
        "parallel": parallel,
    }
    check_link(where, attrs)
    return attrs


@dataclass(frozen=True, slots=True, kw_only=True)
class Link:
    """One link's physics: signalling rate, line encoding, propagation delay.

    The data rate is ``rate_bps * encoding_data_bits / encoding_line_bits`` (FDR InfiniBand:
    56.25 Gbit/s with 64b/66b gives 54.55 Gbit/s). These are the edge attributes of a topology.
    """

    rate_bps: int  # signalling rate, bit/s
    encoding_data_bits: int = 1
    encoding_line_bits: int = 1
    delay_ps: int = DEFAULT_DELAY_PS

    def __post_init__(self) -> None:
        check_link("Link", {key: getattr(self, key) for key in LINK_ATTRS})

    @classmethod
    def from_edge(cls, attrs: Mapping[str, int]) -> Link:
        """The link of a topology edge (its attrs; ``parallel`` is not the link's)."""
        return cls(**{key: attrs[key] for key in LINK_ATTRS})

    @property
    def data_rate_bps(self) -> int:
        """Data rate after line encoding, in bit/s, rounded down."""
        return self.rate_bps * self.encoding_data_bits // self.encoding_line_bits

    def tx_ps(self, wire_bytes: int) -> int:
        """Serialization time of ``wire_bytes`` in ps, rounded up (as the C++ Port computes it)."""
        num = wire_bytes * 8 * PS_PER_S * self.encoding_line_bits
        den = self.encoding_data_bits * self.rate_bps
        return -(-num // den)

    def expected_finish_ps(self, size_b: int, *, mtu_b: int, overhead_b: int) -> int:
        """Closed form: ``size_b`` payload bytes in back-to-back packets of ``mtu_b`` (the last one the
        remainder), each with ``overhead_b`` more bytes on the wire, plus one delay: the last bit's arrival."""
        full, rest = divmod(size_b, mtu_b)
        last = self.tx_ps(rest + overhead_b) if rest else 0
        return full * self.tx_ps(mtu_b + overhead_b) + last + self.delay_ps

    def edge_attrs(self, parallel: int = 1) -> dict[str, int]:
        """The attributes of a topology edge with this link (``parallel`` of them)."""
        return edge_attrs(
            "Link",
            rate_bps=self.rate_bps,
            delay_ps=self.delay_ps,
            encoding_data_bits=self.encoding_data_bits,
            encoding_line_bits=self.encoding_line_bits,
            parallel=parallel,
        )


# InfiniBand lane speeds, by the name ibnetdiscover prints ("4xFDR" = 4 lanes of FDR): the signalling
# rate of one lane in bit/s and its line code (data bits, line bits). Source: InfiniBand Architecture
# Specification Vol. 2 (Physical Layer), Release 1.3 (SDR 2.5, DDR 5, QDR 10 Gbaud with 8b/10b;
# FDR10 10.3125, FDR 14.0625, EDR 25.78125 Gbaud with 64b/66b), Release 1.4 (HDR 53.125 Gbit/s
# a lane, PAM4 at 26.5625 Gbaud) and Release 1.5 (NDR 106.25 Gbit/s a lane, PAM4 at 53.125 Gbaud).
# HDR and NDR carry 50 and 100 Gbit/s of data a lane: 256b/257b transcoding and RS(544,514) FEC cost
# 257/256 x 544/514 = 17/16 exactly, written here as the line code 16b/17b. XDR (212.5 Gbit/s a lane,
# 200 Gbit/s of data: IBTA's XDR roadmap) is taken with the same 16b/17b: an assumption.
IB_LANE_SPEEDS: dict[str, tuple[int, int, int]] = {  # name -> (lane bit/s, data bits, line bits)
    "SDR": (2_500_000_000, 8, 10),
    "DDR": (5_000_000_000, 8, 10),
    "QDR": (10_000_000_000, 8, 10),
    "FDR10": (10_312_500_000, 64, 66),
    "FDR": (14_062_500_000, 64, 66),
    "EDR": (25_781_250_000, 64, 66),
    "HDR": (53_125_000_000, 16, 17),
    "NDR": (106_250_000_000, 16, 17),
    "XDR": (212_500_000_000, 16, 17),
}
IB_WIDTHS = (1, 2, 4, 8, 12)  # lanes of a port: the widths ibnetdiscover prints ("1x" .. "12x")


def infiniband_link(text: str, *, delay_ps: int = DEFAULT_DELAY_PS) -> Link:
    """The link of an InfiniBand width and speed as ibnetdiscover prints them: "4xFDR" is 4 lanes of
    14.0625 Gbaud with 64b/66b (56.25 Gbit/s signalling, 54.545 Gbit/s of data); see IB_LANE_SPEEDS."""
    m = re.fullmatch(r"(\d+)x([A-Za-z0-9]+)", text.strip())
    if m is None or int(m[1]) not in IB_WIDTHS or m[2] not in IB_LANE_SPEEDS:
        raise McsimError(
            f"InfiniBand link {text!r} is not a width ({', '.join(f'{w}x' for w in IB_WIDTHS)}) and a speed "
            f"({', '.join(IB_LANE_SPEEDS)}); e.g. '4xEDR'"
        )
    lane_bps, data_bits, line_bits = IB_LANE_SPEEDS[m[2]]
    return Link(
        rate_bps=int(m[1]) * lane_bps, encoding_data_bits=data_bits, encoding_line_bits=line_bits, delay_ps=delay_ps
    )


def _ib_preset(text: str) -> tuple[int, int, int]:
    link = infiniband_link(text)
    return link.rate_bps, link.encoding_data_bits, link.encoding_line_bits


# Ethernet physical layers by name: (lanes, lane bit/s, data bits, line bits). Each preset's line code is its
# whole physical-layer overhead between the MAC's data rate and the signalling rate, as one ratio: 64b/66b
# (100GBASE-R over 25.78125 Gbaud NRZ lanes; with RS(528,514) after 256b/257b transcoding the ratio is the
# same, 257 x 528 / (256 x 514) = 33/32) or 256b/257b with RS(544,514) FEC (200G and faster, PAM4 lanes of
# 53.125 or 106.25 Gbit/s, and 212.5 for 1.6TbE: 257/256 x 544/514 = 17/16, written 16b/17b). Sources: IEEE
# 802.3 clauses 82 and 91 (100GBASE-R4), 802.3bs/cd/ck (200G, 400G), 802.3df (800G, eight 106.25 Gbit/s
# lanes), 802.3dj (1.6T, eight 212.5 Gbit/s lanes; its optical PMDs' inner FEC is not modelled); the lane
# rates as Intel's PAM4 and FEC application notes give them (AN 846). PCS alignment markers come out of idle
# time and are not counted. What each packet adds on the wire is the wire format's: a RoCEv2 frame's
# Ethernet, IPv4, UDP, BTH, ICRC and FCS bytes and 20 B of preamble, SFD and inter-frame gap
# (mcsim.config.rdma.PHYSICAL_OVERHEAD_BYTES).
ETHERNET_PHYS: dict[str, tuple[int, int, int, int]] = {
    "100GbE": (4, 25_781_250_000, 64, 66),
    "200GbE": (4, 53_125_000_000, 16, 17),
    "400GbE": (8, 53_125_000_000, 16, 17),
    "800GbE": (8, 106_250_000_000, 16, 17),
    "1.6TbE": (8, 212_500_000_000, 16, 17),
}


def ethernet_link(name: str, *, delay_ps: int = DEFAULT_DELAY_PS) -> Link:
    """The link of an Ethernet physical layer by its name in ETHERNET_PHYS: "400GbE" is 8 lanes of 53.125
    Gbit/s with 256b/257b and RS(544,514) (425 Gbit/s signalling, 400 Gbit/s of data)."""
    if name not in ETHERNET_PHYS:
        raise McsimError(f"Ethernet link {name!r} is not one of {', '.join(ETHERNET_PHYS)}")
    lanes, lane_bps, data_bits, line_bits = ETHERNET_PHYS[name]
    return Link(
        rate_bps=lanes * lane_bps, encoding_data_bits=data_bits, encoding_line_bits=line_bits, delay_ps=delay_ps
    )


# Ethernet generations by nominal (data) rate: what a RoCEv2 run's rate means (Scenario with wire_format rocev2).
ETHERNET_PRESETS: dict[int, str] = {
    lanes * lane_bps * data_bits // line_bits: name
    for name, (lanes, lane_bps, data_bits, line_bits) in ETHERNET_PHYS.items()
}

# InfiniBand generations by nominal rate, from the lane table (IB_LANE_SPEEDS), as an imported link of that
# speed gets them: 56 Gbit/s is 4xFDR (its name, 54.545 Gbit/s of data), the others their data rate: 100 Gbit/s
# 4xEDR (64b/66b), 200, 400 and 800 Gbit/s 4xHDR, 4xNDR and 4xXDR, 1.6 Tbit/s 8xXDR (an assumption: IBTA's XDR
# ports are 4x, 800 Gbit/s), each 16b/17b (256b/257b x RS(544,514)). The data rate of each is its nominal rate
# exactly, and a packet's wire time (bits x 17 / (16 x rate)) the same number of ps as at that rate with no line
# code: what the 200G-1.6T presets simulate did not change when they took the lane table (issue 49).
IB_PRESET_PORTS = ("4xEDR", "4xHDR", "4xNDR", "4xXDR", "8xXDR")
LINK_PRESETS: dict[int, tuple[int, int, int]] = {  # nominal bit/s -> (rate_bps, data bits, line bits)
    56 * 10**9: _ib_preset("4xFDR"),
    **{infiniband_link(port).data_rate_bps: _ib_preset(port) for port in IB_PRESET_PORTS},
}


def preset(nominal_bps: int, *, delay_ps: int = DEFAULT_DELAY_PS, ethernet: bool = False) -> Link:
    """The link of a nominal rate: 56 Gbit/s is FDR (56.25 Gbit/s, 64b/66b), 100 EDR, 200 HDR .. 1600 8xXDR
    (LINK_PRESETS); others as given, with no line code. With
    ``ethernet``, the Ethernet physical layer of that data rate (ETHERNET_PRESETS: 100GbE .. 1.6TbE) if any."""
    if ethernet and nominal_bps in ETHERNET_PRESETS:
        return ethernet_link(ETHERNET_PRESETS[nominal_bps], delay_ps=delay_ps)
    rate_bps, data_bits, line_bits = LINK_PRESETS.get(nominal_bps, (nominal_bps, 1, 1))
    return Link(rate_bps=rate_bps, encoding_data_bits=data_bits, encoding_line_bits=line_bits, delay_ps=delay_ps)


def parse_encoding(text: str) -> tuple[int, int]:
    """Return (data bits, line bits) of a line code: "64b/66b" -> (64, 66); "none" -> (1, 1)."""
    if text.strip().lower() == "none":
        return 1, 1
    m = re.fullmatch(r"\s*(\d+)b/(\d+)b\s*", text)
    if m is None or int(m[1]) == 0 or int(m[1]) > int(m[2]):
        raise McsimError(f"encoding={text!r} is not a line code; e.g. '64b/66b', '128b/130b' or 'none'")
    return int(m[1]), int(m[2])


def format_encoding(data_bits: int, line_bits: int) -> str:
    """The text :func:`parse_encoding` reads back: (64, 66) -> "64b/66b"; (1, 1) -> "none"."""
    return "none" if (data_bits, line_bits) == (1, 1) else f"{data_bits}b/{line_bits}b"
