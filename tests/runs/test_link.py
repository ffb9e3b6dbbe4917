# SPDX-License-Identifier: GPL-2.0-only
"""One link: the simulated stream against its closed form, at 56 Gbit/s to 1.6 Tbit/s."""

import pytest

from mcsim.config.fabric import FABRIC_HEADER_BYTES
from mcsim.errors import McsimError
from mcsim.runs.stream import expected_finish_ps, stream
from mcsim.topology.physics import Link
from mcsim.units import parse_rate, parse_size

RATES = ["56Gbps", "100Gbps", "200Gbps", "400Gbps", "800Gbps", "1.6Tbps"]


@pytest.mark.parametrize("rate", RATES)
def test_stream_time_is_bytes_on_wire_over_rate_plus_delay(rate):
    link = Link(rate_bps=parse_rate(rate), delay_ps=250_000)
    size_b, mtu_b = parse_size("4MiB") + 1000, 4096  # a short last packet too
    r = stream(link, size_b, mtu_b=mtu_b, header_b=10)
    packets = -(-size_b // mtu_b)
    assert (r.size_b, r.received_b, r.packets, r.received_packets) == (size_b, size_b, packets, packets)
    assert r.wire_bytes == size_b + (FABRIC_HEADER_BYTES + 10) * packets
    # exact: every packet's serialization time is rounded up to the next ps
    assert r.finish_ps == expected_finish_ps(link, size_b, mtu_b, 10)
    ideal_ps = r.wire_bytes * 8 * 10**12 / link.data_rate_bps + link.delay_ps
    assert ideal_ps <= r.finish_ps <= ideal_ps + packets  # at most 1 ps of rounding per packet
    assert r.busy_ps == r.finish_ps - link.delay_ps  # the port never idled


def test_fdr_goodput_is_the_64b66b_data_rate_after_headers():
    fdr = Link(rate_bps=parse_rate("56.25Gbps"), encoding_data_bits=64, encoding_line_bits=66)
    assert fdr.data_rate_bps == 54_545_454_545
    r = stream(fdr, parse_size("16MiB"), header_b=10)  # 16 + 10 = 26 header bytes
    assert r.goodput_bps() == pytest.approx(fdr.data_rate_bps * 4096 / 4122, rel=1e-3)


def test_same_stream_twice_is_identical():
    link = Link(rate_bps=parse_rate("400Gbps"))
    assert stream(link, 123_457, mtu_b=1024, header_b=42) == stream(link, 123_457, mtu_b=1024, header_b=42)


def test_bad_stream_is_one_line():
    with pytest.raises(McsimError, match=r"stream: size_b=0 must be > 0"):
        stream(Link(rate_bps=10**9), 0)
