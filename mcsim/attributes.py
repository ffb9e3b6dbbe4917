# SPDX-License-Identifier: GPL-2.0-only
"""Python values -> ns-3 attribute values: the one place that wraps them, by the attribute's type.

Callers give plain Python values, named as the C++ attribute: an int for ``UintegerValue`` and
``IntegerValue``, a bool for ``BooleanValue``, a float for ``DoubleValue``, an int in ps for
``TimeValue``, an int in bit/s for ``DataRateValue``, and for an ``EnumValue<T>`` the name its
``MakeEnumChecker`` gives ("Lossless", "InfiniBand"). The attribute's own checker picks the
wrapper and checks the value, so a value out of range is a McsimError, never an ns-3 abort.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcsim.errors import McsimError

_ENUM = "ns3::EnumValue<"
# ns-3 value type name -> how a Python value becomes one
_WRAPPERS: dict[str, Callable[[Any, Any], Any]] = {
    "ns3::UintegerValue": lambda ns, v: ns.UintegerValue(v),
    "ns3::IntegerValue": lambda ns, v: ns.IntegerValue(v),
    "ns3::BooleanValue": lambda ns, v: ns.BooleanValue(v),
    "ns3::DoubleValue": lambda ns, v: ns.DoubleValue(float(v)),
    "ns3::TimeValue": lambda ns, v: ns.TimeValue(ns.PicoSeconds(v)),
    "ns3::DataRateValue": lambda ns, v: ns.DataRateValue(ns.DataRate(v)),
}


def _checker(ns: Any, type_name: str, name: str) -> Any:
    info = ns.TypeId.AttributeInformation()
    if not ns.TypeId.LookupByName(type_name).LookupAttributeByName(name, info):
        raise AssertionError(f"{type_name} has no attribute {name}")
    return info.checker


def _enum_value(ns: Any, kind: str, checker: Any, where: str, name: str, value: object) -> Any:
    names = str(checker.GetUnderlyingTypeInformation()).split("|")
    if not isinstance(value, str) or value not in names:  # DeserializeFromString aborts on an unknown name
        raise McsimError(f"{where}: {name}={value!r} is not one of {', '.join(names)}")
    wrapped = ns.EnumValue[kind[len(_ENUM) : -1]]()  # kind is "ns3::EnumValue<ns3::mcsim::FlowControl>"
    wrapped.DeserializeFromString(value, checker)
    return wrapped


def attribute_values(ns: Any, type_name: str, where: str, values: Mapping[str, object]) -> dict[str, Any]:
    """The ns-3 value of each attribute of ``type_name`` (a TypeId name such as
    "ns3::mcsim::Fabric"), wrapped as its checker expects and checked by it.

    Raises
    ------
    McsimError
        ``"<where>: <name>=<value> ..."`` for a value the attribute refuses (out of range, an
        unknown enum name); AssertionError for an attribute the type does not have (a bug).
    """
    out = {}
    for name, value in values.items():
        checker = _checker(ns, type_name, name)
        kind = str(checker.GetValueTypeName())
        if kind.startswith(_ENUM):
            wrapped = _enum_value(ns, kind, checker, where, name, value)
        elif kind in _WRAPPERS:
            wrapped = _WRAPPERS[kind](ns, value)
        else:
            raise AssertionError(f"{type_name}.{name}: no Python mapping for {kind}")
        if not checker.Check(wrapped):
            raise McsimError(
                f"{where}: {name}={value!r} is refused by {type_name} "
                f"(accepts {checker.GetUnderlyingTypeInformation()})"
            )
        out[name] = wrapped
    return out


def set_attributes(obj: Any, ns: Any, where: str, **values: object) -> None:
    """Set attributes of an existing ns-3 object by name (see :func:`attribute_values`)."""
    type_name = str(obj.GetInstanceTypeId().GetName())
    for name, wrapped in attribute_values(ns, type_name, where, values).items():
        if not obj.SetAttributeFailSafe(name, wrapped):
            raise AssertionError(f"{type_name}: attribute {name} refused a value its checker accepted")


def make_factory(ns: Any, type_name: str, where: str, **values: object) -> Any:
    """An ns-3 ObjectFactory for ``type_name`` with attributes set by name (see :func:`attribute_values`)."""
    factory = ns.ObjectFactory(type_name)
    for name, wrapped in attribute_values(ns, type_name, where, values).items():
        factory.Set(name, wrapped)
    return factory
