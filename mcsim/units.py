# SPDX-License-Identifier: GPL-2.0-only
"""Units: the only parser of "56Gbps", "1.6Tbps", "4KiB", "300ns".

Everything inside mcsim is an integer in a base unit named in the variable: bit/s (``rate_bps``),
bytes (``size_b``, ``..._bytes``) and picoseconds (``delay_ps``). Strings with units exist only at
the boundary (CLI options, scenario fields) and pass through the three ``parse_*`` functions here.
A Python ``int`` given to a parser is taken to be in the base unit already.

Parsing is exact (decimal strings go through ``Fraction``), so "1.6Tbps" is exactly
1_600_000_000_000 bit/s; a value that is not a whole number of base units is rejected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from mcsim.errors import McsimError, require_int

PS_PER_S = 10**12  # picoseconds per second: simulated time's resolution
# The simulated clock's limit. ns-3's Time in ps is a signed 64-bit integer (2^63 ps = 106.8 days);
# mcsim's EventLoop stops a run that would pass 2^62 ps (53.4 days), and every time a user gives is
# at most that, so that a time on the clock plus any one delay still fits in 64 bits.
MAX_SIMULATED_PS = 2**62
CLOCK_LIMIT = "2^62 ps = 53.4 days, the simulated clock's limit"
# A time that did not happen, in every time array of a result (C++ writes UINT64_MAX, NEVER_PS; the
# readers convert: mcsim.result.times_ps)
NEVER = -1
# The largest rate and size taken: the C ABI and ns-3 hold them as 64-bit integers, and a switch sums
# its ports' rates; 1 Pbit/s is 625x the fastest link generation (1.6T).
MAX_RATE_BPS = 10**15
MAX_SIZE_B = 2**62  # 4 EiB

RATE_LIMIT = "1 Pbit/s, mcsim's largest rate"


def require_time_ps(where: str, name: str, value: object, *, lo: int = 0) -> int:
    """``value`` if it is an integer time in ps, lo..MAX_SIMULATED_PS; else one McsimError line: "must be [an
    integer] >= lo" (mcsim.errors.require_int), or "must be <= MAX_SIMULATED_PS" naming the clock's limit (a time
    past it never comes, and the clock plus it would pass ns-3's 64-bit Time)."""
    ps = require_int(where, name, value, lo=lo)
    if ps > MAX_SIMULATED_PS:
        raise McsimError(f"{where}: {name}={ps} must be <= {MAX_SIMULATED_PS} ({CLOCK_LIMIT})")
    return ps


def require_rate_bps(where: str, name: str, value: object, *, lo: int = 1) -> int:
    """``value`` if it is an integer rate in bit/s, lo..MAX_RATE_BPS; else one McsimError line, as
    :func:`require_time_ps`."""
    bps = require_int(where, name, value, lo=lo)
    if bps > MAX_RATE_BPS:
        raise McsimError(f"{where}: {name}={bps} must be <= {MAX_RATE_BPS} ({RATE_LIMIT})")
    return bps


_NUMBER = re.compile(r"^\s*(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE](?P<exp>[+-]?[0-9]+))?\s*(?P<unit>\S*)\s*$")


@dataclass(frozen=True, slots=True)
class _Quantity:
    """One kind of quantity: its base unit, accepted suffixes and display suffixes."""

    kind: str  # "rate", "size", "time"
    base: str  # display name of the base unit
    limit: int  # the largest value taken, in the base unit
    why: str  # where the limit comes from
    suffixes: dict[str, int]  # accepted suffix -> multiplier to the base unit
    display: tuple[tuple[str, int], ...]  # largest first, for format()
    bare_ok: bool  # a string without a suffix is in the base unit
    example: str


def _rate_suffixes() -> dict[str, int]:
    table: dict[str, int] = {}
    for prefix, mult in {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}.items():
        for tail in ("bps", "bit/s", "b/s"):
            table[prefix + tail] = mult
        if prefix:
            table[prefix] = mult  # "400G"
            table[prefix + "b"] = mult  # "400Gb"
    return table


_RATE = _Quantity(
    kind="rate",
    base="bit/s",
    limit=MAX_RATE_BPS,
    why=RATE_LIMIT,
    suffixes=_rate_suffixes(),
    display=(("Tbps", 10**12), ("Gbps", 10**9), ("Mbps", 10**6), ("Kbps", 10**3), ("bps", 1)),
    bare_ok=False,
    example="'56Gbps', '1.6Tbps' or '400G'",
)
_SIZE = _Quantity(
    kind="size",
    base="B",
    limit=MAX_SIZE_B,
    why="2^62 B, mcsim's largest size",
    suffixes={
        "B": 1,
        "KiB": 2**10,
        "MiB": 2**20,
        "GiB": 2**30,
        "TiB": 2**40,
        "kB": 10**3,
        "KB": 10**3,
        "MB": 10**6,
        "GB": 10**9,
        "TB": 10**12,
    },
    display=(("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10), ("B", 1)),
    bare_ok=True,
    example="'4KiB', '1MiB' or '4096'",
)
_TIME = _Quantity(
    kind="time",
    base="ps",
    limit=MAX_SIMULATED_PS,
    why=CLOCK_LIMIT,
    suffixes={"ps": 1, "ns": 10**3, "us": 10**6, "µs": 10**6, "ms": 10**9, "s": 10**12},
    display=(("s", 10**12), ("ms", 10**9), ("us", 10**6), ("ns", 10**3), ("ps", 1)),
    bare_ok=False,
    example="'300ns', '1.5us' or '2ms'",
)


def _parse(q: _Quantity, text: str | int, what: str) -> int:
    value = _parse_unbounded(q, text, what)
    if value > q.limit:
        raise McsimError(f"{what}={text!r} is more than {_format(q, q.limit)} ({q.why})")
    return value


def _parse_unbounded(q: _Quantity, text: str | int, what: str) -> int:
    if isinstance(text, bool):
        raise McsimError(f"{what}={text!r} is not a {q.kind}; e.g. {q.example}")
    if isinstance(text, int):
        if text < 0:
            raise McsimError(f"{what}={text} must not be negative")
        return text
    if not isinstance(text, str):
        raise McsimError(f"{what}={text!r} is not a {q.kind}; e.g. {q.example}")
    if text.strip().startswith("-"):
        raise McsimError(f"{what}={text!r} must not be negative")
    m = _NUMBER.match(text)
    if m is None:
        raise McsimError(f"{what}={text!r} is not a {q.kind}; e.g. {q.example}")
    unit = m["unit"]
    if unit == "" and not q.bare_ok:
        raise McsimError(f"{what}={text!r} has no unit; e.g. {q.example}")
    if unit not in q.suffixes and unit != "":
        hint = ""
        if q is _RATE and "B" in unit:
            hint = " (rates are in bits: 'Gbps', not 'GBps')"
        elif q is _SIZE and unit in ("K", "k", "M", "G", "T", "Ki", "Mi", "Gi"):
            hint = f" (say '{unit[0].upper()}iB' for binary or '{unit[0].upper()}B' for decimal)"
        choices = ", ".join(s for s, _ in q.display)
        raise McsimError(f"{what}={text!r}: unknown unit {unit!r}{hint}; use one of {choices}")
    exp = int(m["exp"] or 0)
    if exp > 100:  # 10**exp alone would take long to compute, and is past every limit
        raise McsimError(f"{what}={text!r} is more than {_format(q, q.limit)} ({q.why})")
    if exp < -1000:  # as small: 0, or not a whole number of base units
        raise McsimError(f"{what}={text!r} is not a whole number of {q.base}")
    value = Fraction(m["num"]) * (Fraction(10) ** exp) * q.suffixes.get(unit, 1)
    if value.denominator != 1:
        raise McsimError(f"{what}={text!r} is not a whole number of {q.base}")
    return int(value)


def parse_rate(text: str | int, *, what: str = "rate") -> int:
    """Return a link rate in bit/s (> 0): "56Gbps", "1.6Tbps", "400G", "100Mbit/s"."""
    bps = _parse(_RATE, text, what)
    if bps == 0:
        raise McsimError(f"{what}={text!r} must be > 0 bit/s; e.g. {_RATE.example}")
    return bps


def parse_size(text: str | int, *, what: str = "size") -> int:
    """Return a size in bytes (>= 0): "4KiB", "1MiB", "4096", "1.5MB"."""
    return _parse(_SIZE, text, what)


def parse_time(text: str | int, *, what: str = "time") -> int:
    """Return a duration in picoseconds (>= 0): "300ns", "1.5us", "2ms"."""
    return _parse(_TIME, text, what)


def _format(q: _Quantity, value: int) -> str:
    for suffix, mult in q.display:
        if value >= mult or mult == 1:
            scaled = f"{value / mult:.3f}".rstrip("0").rstrip(".")
            return f"{scaled}{suffix}"
    raise AssertionError("unreachable: the last display unit has multiplier 1")


def format_rate(bps: int) -> str:
    """Return e.g. "1.6Tbps" for 1_600_000_000_000 (at most 3 decimals)."""
    return _format(_RATE, bps)


def format_size(size_b: int) -> str:
    """Return e.g. "4KiB" for 4096 (binary prefixes, at most 3 decimals)."""
    return _format(_SIZE, size_b)


def format_time(ps: int) -> str:
    """Return e.g. "20.56ns" for 20_560 ps (at most 3 decimals)."""
    return _format(_TIME, ps)
