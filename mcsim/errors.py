# SPDX-License-Identifier: GPL-2.0-only
"""The one user-facing error type and the small checks that raise it.

Every message reads ``"<where>: <name>=<value> <rule>; <hint>"`` so that the CLI can print it as
one line and a user knows what to change.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import TypeVar

T = TypeVar("T")


class McsimError(ValueError):
    """Bad input or an environment problem that the user can fix; printed as one line."""


def require_positive(where: str, **values: int | float) -> None:
    """Raise McsimError for the first of ``values`` that is not > 0."""
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise McsimError(f"{where}: {name}={value!r} must be a number")
        if not value > 0:
            raise McsimError(f"{where}: {name}={value!r} must be > 0")


def pick(kind: str, name: str, registry: Mapping[str, T]) -> T:
    """Return ``registry[name]``; an unknown name raises the one "unknown X" message."""
    if name not in registry:
        near = "".join(f"; did you mean {m!r}?" for m in difflib.get_close_matches(name, registry, 1))
        raise McsimError(f"unknown {kind} {name!r}; choose one of {', '.join(sorted(registry))}{near}")
    return registry[name]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a simulation; the message says how far it got (the CLI prints it, exit 130)."""
