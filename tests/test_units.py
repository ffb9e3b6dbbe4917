# SPDX-License-Identifier: GPL-2.0-only
"""units.py: exact parsing of rates, sizes and times, and one clear line for bad input."""

import pytest

from mcsim.errors import McsimError
from mcsim.units import format_rate, format_size, format_time, parse_rate, parse_size, parse_time


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("56Gbps", 56 * 10**9),
        ("1.6Tbps", 1_600_000_000_000),  # exact: no float rounding
        ("400G", 400 * 10**9),
        ("1.6Tb", 1_600_000_000_000),
        ("100Mbit/s", 100 * 10**6),
        ("54.545454545Gbps", 54_545_454_545),
        ("1e9bps", 10**9),
        (" 25 Gbps ", 25 * 10**9),
        (800_000_000_000, 800 * 10**9),  # an int is already in bit/s
    ],
)
def test_parse_rate(text, bps):
    assert parse_rate(text) == bps


@pytest.mark.parametrize(
    ("text", "size_b"),
    [("4KiB", 4096), ("1MiB", 2**20), ("4096", 4096), ("1.5MiB", 3 * 2**19), ("4KB", 4000), ("0", 0), ("2GiB", 2**31)],
)
def test_parse_size(text, size_b):
    assert parse_size(text) == size_b


@pytest.mark.parametrize(
    ("text", "ps"),
    [("300ns", 300_000), ("1.5us", 1_500_000), ("1µs", 10**6), ("2ms", 2 * 10**9), ("1s", 10**12), ("20.56ns", 20_560)],
)
def test_parse_time(text, ps):
    assert parse_time(text) == ps


@pytest.mark.parametrize(
    ("parser", "text", "message"),
    [
        (parse_rate, "-56Gbps", r"rate='-56Gbps' must not be negative"),
        (parse_rate, "0Gbps", r"rate='0Gbps' must be > 0 bit/s"),
        (parse_rate, 0, r"rate=0 must be > 0 bit/s"),
        (parse_rate, "56Gbs", r"rate='56Gbs': unknown unit 'Gbs'; use one of Tbps"),
        (parse_rate, "56GBps", r"rates are in bits"),
        (parse_rate, "56", r"rate='56' has no unit"),
        (parse_rate, "fast", r"rate='fast' is not a rate"),
        (parse_rate, "0.5bps", r"not a whole number of bit/s"),
        (parse_size, "-1KiB", r"size='-1KiB' must not be negative"),
        (parse_size, "4K", r"unknown unit 'K' \(say 'KiB' for binary or 'KB' for decimal\)"),
        (parse_size, "1.5B", r"not a whole number of B"),
        (parse_size, "4 kibibytes", r"unknown unit 'kibibytes'"),
        (parse_size, -4, r"size=-4 must not be negative"),
        (parse_time, "300", r"time='300' has no unit"),
        (parse_time, "1.5fs", r"unknown unit 'fs'"),
        (parse_time, "0.1ps", r"not a whole number of ps"),
        (parse_time, True, r"is not a time"),
        (parse_time, 3.5, r"is not a time"),
    ],
)
def test_bad_input_is_one_clear_line(parser, text, message):
    with pytest.raises(McsimError, match=message) as info:
        parser(text)
    assert "\n" not in str(info.value)


def test_message_names_the_option():
    with pytest.raises(McsimError, match=r"^--rate='1.6TB': unknown unit 'TB' \(rates are in bits"):
        parse_rate("1.6TB", what="--rate")


@pytest.mark.parametrize(
    ("fmt", "parse", "value", "text"),
    [
        (format_rate, parse_rate, 1_600_000_000_000, "1.6Tbps"),
        (format_rate, parse_rate, 56 * 10**9, "56Gbps"),
        (format_size, parse_size, 4096, "4KiB"),
        (format_size, parse_size, 3 * 2**19, "1.5MiB"),
        (format_size, parse_size, 100, "100B"),
        (format_time, parse_time, 20_560, "20.56ns"),
        (format_time, parse_time, 0, "0ps"),
    ],
)
def test_format_round_trips(fmt, parse, value, text):
    assert fmt(value) == text
    assert parse(text) == value
