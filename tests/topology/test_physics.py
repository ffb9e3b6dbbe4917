# SPDX-License-Identifier: GPL-2.0-only
"""Link physics: presets, data rates, serialization time, encodings, the one link check."""

from fractions import Fraction
from math import ceil

import pytest

from mcsim.errors import McsimError
from mcsim.topology.physics import Link, edge_attrs, format_encoding, parse_encoding, preset
from mcsim.units import PS_PER_S, parse_rate


@pytest.mark.parametrize(
    ("nominal", "rate", "bits", "data_rate_bps"),
    [
        ("56Gbps", "56.25Gbps", (64, 66), 54_545_454_545),  # FDR: 4 x 14.0625 Gbaud, 64b/66b
        ("100Gbps", "103.125Gbps", (64, 66), 100 * 10**9),  # EDR: 4 x 25.78125 Gbaud, 64b/66b
        # HDR and faster: the lane table's, as an imported link of that speed (issue 49: they had no line code)
        ("200Gbps", "212.5Gbps", (16, 17), 200 * 10**9),  # 4xHDR: 4 x 53.125 Gbit/s, 256b/257b x RS(544,514)
        ("400Gbps", "425Gbps", (16, 17), 400 * 10**9),  # 4xNDR: 4 x 106.25 Gbit/s
        ("800Gbps", "850Gbps", (16, 17), 800 * 10**9),  # 4xXDR: 4 x 212.5 Gbit/s
        ("1.6Tbps", "1.7Tbps", (16, 17), 1_600 * 10**9),  # 8xXDR (an assumption)
        ("25Gbps", "25Gbps", (1, 1), 25 * 10**9),  # a rate no generation has: as given, no line code
    ],
)
def test_preset_turns_a_nominal_rate_into_signalling_rate_and_encoding(nominal, rate, bits, data_rate_bps):
    link = preset(parse_rate(nominal), delay_ps=7)
    assert (link.rate_bps, (link.encoding_data_bits, link.encoding_line_bits)) == (parse_rate(rate), bits)
    assert link.data_rate_bps == data_rate_bps
    assert link.delay_ps == 7


@pytest.mark.parametrize(("nominal", "mpps"), [("400Gbps", 12.2), ("800Gbps", 24.4), ("1.6Tbps", 48.8)])
def test_4kib_packet_rate_matches_the_published_figures(nominal, mpps):
    assert PS_PER_S / preset(parse_rate(nominal)).tx_ps(4096) / 1e6 == pytest.approx(mpps, rel=5e-3)


@pytest.mark.parametrize("wire_b", [1, 26, 4122, 4096 + 26 + 40])
def test_tx_ps_is_wire_bits_over_data_rate_rounded_up(wire_b):
    fdr = preset(parse_rate("56Gbps"))
    exact = Fraction(wire_b * 8 * PS_PER_S * 66, 64 * 56_250_000_000)
    assert fdr.tx_ps(wire_b) == ceil(exact)


def test_expected_finish_is_full_packets_then_the_rest_then_one_delay():
    link = Link(rate_bps=8 * 10**9, delay_ps=1000)  # one byte per ns
    assert link.expected_finish_ps(10_000, mtu_b=4096, overhead_b=26) == (2 * 4122 + 1808 + 26) * 1000 + 1000
    assert link.expected_finish_ps(8192, mtu_b=4096, overhead_b=0) == 8192 * 1000 + 1000


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rate_bps": 0}, r"Link: rate_bps=0 must be > 0"),
        (
            {"rate_bps": 10**9, "encoding_data_bits": 66, "encoding_line_bits": 64},
            r"Link: encoding_data_bits=66 must be <= encoding_line_bits=64",
        ),
        ({"rate_bps": 10**9, "delay_ps": -5}, r"Link: delay_ps=-5 must be >= 0"),
        ({"rate_bps": 1.5e9}, r"Link: rate_bps=1500000000.0 must be an integer"),
    ],
)
def test_bad_link_is_one_line(kwargs, message):
    with pytest.raises(McsimError, match=message):
        Link(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rate_bps": 0, "delay_ps": 0}, r"^leaf_spine: rate_bps=0 must be > 0$"),
        ({"rate_bps": 10**9, "delay_ps": 0, "parallel": 0}, r"^leaf_spine: parallel=0 must be > 0$"),
        ({"rate_bps": 10**9, "delay_ps": True}, r"^leaf_spine: delay_ps=True must be an integer$"),
        (
            {"rate_bps": 10**9, "delay_ps": 0, "encoding_data_bits": 2},
            r"^leaf_spine: encoding_data_bits=2 must be <= encoding_line_bits=1; e\.g\. 64 and 66 for 64b/66b$",
        ),
    ],
)
def test_edge_attrs_checks_with_the_callers_name(kwargs, message):
    with pytest.raises(McsimError, match=message):
        edge_attrs("leaf_spine", **kwargs)


def test_edge_attrs_and_from_edge_round_trip():
    link = Link(rate_bps=56_250_000_000, encoding_data_bits=64, encoding_line_bits=66, delay_ps=5)
    attrs = link.edge_attrs(parallel=3)
    assert attrs == {
        "rate_bps": 56_250_000_000,
        "encoding_data_bits": 64,
        "encoding_line_bits": 66,
        "delay_ps": 5,
        "parallel": 3,
    }
    assert Link.from_edge(attrs) == link


@pytest.mark.parametrize(("text", "bits"), [("64b/66b", (64, 66)), ("128b/130b", (128, 130)), ("none", (1, 1))])
def test_parse_encoding(text, bits):
    assert parse_encoding(text) == bits
    assert parse_encoding(format_encoding(*bits)) == bits


@pytest.mark.parametrize("text", ["66b/64b", "64/66", "0b/1b"])
def test_bad_encoding_is_one_line(text):
    with pytest.raises(McsimError, match=rf"encoding='{text}' is not a line code"):
        parse_encoding(text)


ETHERNET = {  # name -> (lanes x lane Gbit/s, the FEC's and line code's ratio): IEEE 802.3 as physics.py cites
    "100GbE": (4 * Fraction("25.78125"), Fraction(64, 66)),
    "200GbE": (4 * Fraction("53.125"), Fraction(256, 257) * Fraction(514, 544)),
    "400GbE": (8 * Fraction("53.125"), Fraction(256, 257) * Fraction(514, 544)),
    "800GbE": (8 * Fraction("106.25"), Fraction(256, 257) * Fraction(514, 544)),
    "1.6TbE": (8 * Fraction("212.5"), Fraction(256, 257) * Fraction(514, 544)),
}


@pytest.mark.parametrize("name", ETHERNET)
def test_ethernet_presets_carry_their_nominal_data_rate(name):
    from mcsim.topology.physics import ETHERNET_PRESETS, ethernet_link

    signalling_g, ratio = ETHERNET[name]
    link = ethernet_link(name)
    assert link.rate_bps == signalling_g * 10**9
    assert Fraction(link.encoding_data_bits, link.encoding_line_bits) == ratio
    nominal = int(signalling_g * ratio * 10**9)
    assert link.data_rate_bps == nominal and ETHERNET_PRESETS[nominal] == name
    assert preset(nominal, ethernet=True) == link
    # a RoCEv2 packet of a 4 KiB payload: 62 B of headers and FCS and 20 B of preamble, SFD and gap
    assert link.tx_ps(4096 + 82) == ceil(Fraction((4096 + 82) * 8 * PS_PER_S, nominal))


def test_an_unknown_ethernet_link_is_one_line():
    from mcsim.topology.physics import ethernet_link

    with pytest.raises(McsimError, match=r"Ethernet link '300GbE' is not one of 100GbE, 200GbE"):
        ethernet_link("300GbE")


def test_a_rocev2_scenario_runs_on_the_ethernet_preset_of_its_rate():
    from mcsim.runs.scenario import scenario_of
    from mcsim.topology.physics import ethernet_link

    sc = scenario_of(topology="fat-tree-k4", rate="400Gbps", wire_format="rocev2")
    edge = next(iter(sc.graph().edges(data=True)))[2]
    link = ethernet_link("400GbE")
    assert (edge["rate_bps"], edge["encoding_data_bits"], edge["encoding_line_bits"]) == (
        link.rate_bps, link.encoding_data_bits, link.encoding_line_bits
    )  # fmt: skip
    assert sc.data_rate_bps == 400 * 10**9


@pytest.mark.parametrize("nominal", ["200Gbps", "400Gbps", "800Gbps", "1.6Tbps"])
@pytest.mark.parametrize("wire_b", [1, 64, 4122, 4096 + 86])
def test_a_preset_and_an_imported_link_of_its_speed_agree_and_time_as_the_data_rate(nominal, wire_b):
    from mcsim.topology.physics import IB_PRESET_PORTS, infiniband_link

    link = preset(parse_rate(nominal))
    port = next(p for p in IB_PRESET_PORTS if infiniband_link(p).data_rate_bps == parse_rate(nominal))
    assert link == infiniband_link(port)  # one physics table: the lane table
    # a packet's wire time at the data rate with no code is the same number of ps: the presets' runs unchanged
    assert link.tx_ps(wire_b) == Link(rate_bps=parse_rate(nominal)).tx_ps(wire_b)
