# SPDX-License-Identifier: GPL-2.0-only
"""Question: how long does one host take to push 64 MiB over one link, from FDR 56G to 1.6T?

Each row streams the payload from one host to another in 4 KiB packets (InfiniBand MTU) with 26
bytes of headers per packet (RC middle packet: LRH 8 + BTH 12 + ICRC 4 + VCRC 2: the 16-byte fabric
header plus 10) and compares the simulated finish time with the closed form packets * tx_time +
delay. FDR and EDR run at their real signalling rates with
64b/66b encoding (56.25 and 103.125 Gbit/s -> 54.55 and 100 Gbit/s of data); the faster rates are
given as data rates (their encoding and FEC overhead folded in).

Run: mcsim run scenarios/link_stream.py [--size 64MiB]
"""

import sys

from mcsim.config.fabric import DEFAULT_HEADER_BYTES, FABRIC_HEADER_BYTES
from mcsim.runs.stream import expected_finish_ps, stream
from mcsim.topology.physics import Link
from mcsim.units import format_rate, format_size, parse_rate, parse_size
from mcsim.util.options import Parser
from mcsim.util.output import Column, Table

MTU_BYTES = 4096
LINKS = {
    "FDR 56G": Link(rate_bps=parse_rate("56.25Gbps"), encoding_data_bits=64, encoding_line_bits=66),
    "EDR 100G": Link(rate_bps=parse_rate("103.125Gbps"), encoding_data_bits=64, encoding_line_bits=66),
    "HDR 200G": Link(rate_bps=parse_rate("200Gbps")),
    "NDR 400G": Link(rate_bps=parse_rate("400Gbps")),
    "XDR 800G": Link(rate_bps=parse_rate("800Gbps")),
    "1.6T": Link(rate_bps=parse_rate("1.6Tbps")),
}
TABLE = Table(
    [
        Column("link", width=9, left=True),
        Column("data_rate", width=10),
        Column("time_us", ".3f", 11),
        Column("closed_form_us", ".3f", 15),
        Column("goodput_Gbps", ".2f", 13),
        Column("of_data_rate", ".2%", 12),
    ]
)


def main() -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="64MiB", help="payload per stream (default 64MiB)")
    size_b = parse_size(parser.parse_args().size, what="--size")

    header_b = FABRIC_HEADER_BYTES + DEFAULT_HEADER_BYTES
    print(f"one link, {format_size(size_b)} in {format_size(MTU_BYTES)} packets + {header_b} B headers")
    print(TABLE.header())
    failures = 0
    for name, link in LINKS.items():
        r = stream(link, size_b, mtu_b=MTU_BYTES, header_b=DEFAULT_HEADER_BYTES)
        bound_ps = expected_finish_ps(link, size_b, MTU_BYTES, DEFAULT_HEADER_BYTES)
        failures += r.finish_ps != bound_ps or r.received_b != size_b
        row = {
            "link": name,
            "data_rate": format_rate(link.data_rate_bps),
            "time_us": r.finish_ps / 1e6,
            "closed_form_us": bound_ps / 1e6,
            "goodput_Gbps": r.goodput_bps() / 1e9,
            "of_data_rate": r.goodput_bps() / link.data_rate_bps,
        }
        print(TABLE.row(row))
    print(
        "every stream matches its closed form" if not failures else f"{failures} stream(s) differ from the closed form"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
