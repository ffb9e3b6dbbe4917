# SPDX-License-Identifier: GPL-2.0-only
"""The one user-facing error type and the small checks that raise it.

Every message reads ``"<where>: <name>=<value> <rule>; <hint>"`` so that the CLI can print it as
one line and a user knows what to change.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any, TypeVar

T = TypeVar("T")


class McsimError(ValueError):
    """Bad input or an environment problem that the user can fix; printed as one line."""


class IncompleteRun(McsimError):
    """A run in which some rank never got its whole output: it has no time and no bandwidth."""


def is_integer(value: object) -> bool:
    """An integer: a Python or numpy integer, not a bool (the one test every integer check uses)."""
    return isinstance(value, Integral) and not isinstance(value, bool)


def as_int(value: Any) -> Any:
    """A numpy integer as a Python int (plain data); any other value as it is."""
    return int(value) if is_integer(value) and type(value) is not int else value


def require_integer(where: str, **values: object) -> None:
    """Raise McsimError for the first of ``values`` that is not an integer (a bool is not one)."""
    for name, value in values.items():
        if not is_integer(value):
            raise McsimError(f"{where}: {name}={value!r} must be an integer")


def require_bool(where: str, **values: object) -> None:
    """Raise McsimError for the first of ``values`` that is not True or False (1 and None are not)."""
    for name, value in values.items():
        if not isinstance(value, bool):
            raise McsimError(f"{where}: {name}={value!r} must be True or False")


def require_positive(where: str, **values: int | float) -> None:
    """Raise McsimError for the first of ``values`` that is not > 0."""
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, Real):
            raise McsimError(f"{where}: {name}={value!r} must be a number")
        if not value > 0:
            raise McsimError(f"{where}: {name}={value!r} must be > 0")


def require_int(where: str, name: str, value: object, *, lo: int, hi: int | None = None, why: str = "") -> int:
    """Return ``value`` if it is an integer (not a bool) in lo..hi (hi None: no upper bound).

    Otherwise raise McsimError ``"<where>: <name>=<value> must be [an integer] <range><why>"``
    ("an integer" when the type is wrong); ``why`` (e.g. ``" (the ranks)"``) says where the range
    comes from.
    """
    bounds = f">= {lo}" if hi is None else f"{lo}..{hi}"
    if not is_integer(value):
        raise McsimError(f"{where}: {name}={value!r} must be an integer {bounds}{why}")
    if value < lo or (hi is not None and value > hi):  # type: ignore[operator]
        raise McsimError(f"{where}: {name}={value!r} must be {bounds}{why}")
    return int(value)  # type: ignore[call-overload]


SHOWN_VALUE_CHARS = 60  # a value a message quotes: its repr, cut here (a file may hold a megabyte in one value)


def shown_value(value: object) -> str:
    """A value as a message quotes it: its repr, cut at SHOWN_VALUE_CHARS characters."""
    try:
        text = repr(value)
    except RecursionError:
        return f"{type(value).__name__} (nested too deep to show)"
    return text if len(text) <= SHOWN_VALUE_CHARS else text[: SHOWN_VALUE_CHARS - 3] + "..."


def pick(kind: str, name: str, registry: Mapping[str, T]) -> T:
    """Return ``registry[name]``; an unknown name (or not a string) raises the one "unknown X" message."""
    if not isinstance(name, str) or name not in registry:
        near = ""
        if isinstance(name, str):
            near = "".join(f"; did you mean {m!r}?" for m in difflib.get_close_matches(name, registry, 1))
        raise McsimError(f"unknown {kind} {name!r}; choose one of {', '.join(sorted(registry))}{near}")
    return registry[name]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a simulation; the message says how far it got (the CLI prints it, exit 130)."""
