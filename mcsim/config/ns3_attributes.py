# SPDX-License-Identifier: GPL-2.0-only
"""Which ns-3 attribute each config field sets: declared once, in the field's metadata.

A config field that crosses to C++ as an attribute says so where it is declared::

    mtu_b: int = field(default=4096, metadata=sets("ns3::mcsim::Nic", "MtuBytes"))

and :func:`attributes_of` gives every attribute of one C++ type from a config, as the plain Python
values mcsim.native.attributes sets (an int in ps for a Time, in bit/s for a DataRate, an enum
member's checker name). A value the C++ type reads differently from the field (a choice's C++
name, a code's time) is converted by the metadata's ``to`` (a mapping, or a function of the value
and the whole config). tests/native checks that every attribute's C++ initial value is the
converted Python default, so a default changed on one side only fails there. Loads no C++.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

ATTRIBUTE = "ns3_attribute"  # the metadata key


@dataclass(frozen=True, slots=True)
class Attribute:
    """The ns-3 attribute ``name`` of each TypeId in ``type_ids`` that a field sets."""

    type_ids: tuple[str, ...]
    name: str
    to: Mapping[Any, Any] | Callable[[Any, Any], Any] | None = None  # (value, config) -> the attribute's value

    def value(self, value: Any, config: Any) -> Any:
        if self.to is None:
            return value
        if isinstance(self.to, Mapping):
            return self.to[value]
        return self.to(value, config)


def sets(
    type_ids: str | tuple[str, ...],
    name: str,
    to: Mapping[Any, Any] | Callable[[Any, Any], Any] | None = None,
    **metadata: Any,
) -> dict[str, Any]:
    """A field's metadata: it sets attribute ``name`` of ``type_ids`` (one TypeId or several)."""
    ids = (type_ids,) if isinstance(type_ids, str) else tuple(type_ids)
    return {ATTRIBUTE: Attribute(ids, name, to), **metadata}


def attribute_of(f: dataclasses.Field[Any]) -> Attribute | None:
    value = f.metadata.get(ATTRIBUTE)
    return value if isinstance(value, Attribute) else None


def attributes_of(config: Any, type_id: str) -> dict[str, Any]:
    """Every attribute of ``type_id`` that ``config``'s fields set, by name, in field order."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(config):
        attribute = attribute_of(f)
        if attribute is not None and type_id in attribute.type_ids:
            out[attribute.name] = attribute.value(getattr(config, f.name), config)
    return out


def type_ids_of(cls: type) -> tuple[str, ...]:
    """The TypeIds a config class's fields set attributes of, in the order they first appear."""
    seen: dict[str, None] = {}
    for f in dataclasses.fields(cls):
        attribute = attribute_of(f)
        for type_id in attribute.type_ids if attribute is not None else ():
            seen.setdefault(type_id)
    return tuple(seen)
