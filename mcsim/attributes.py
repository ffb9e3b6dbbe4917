# SPDX-License-Identifier: GPL-2.0-only
"""Python values -> ns-3 attribute values: the one place that wraps them, by the attribute's type.

Callers give plain Python values, named as the C++ attribute: an int for ``UintegerValue`` and
``IntegerValue``, a bool for ``BooleanValue``, a float for ``DoubleValue``, an int in ps for
``TimeValue``, an int in bit/s for ``DataRateValue``, and for an ``EnumValue<T>`` the name of a
member of the C++ enum T ("LOSSLESS", "INFINIBAND"). The attribute's own type picks the wrapper
and its checker checks the value, so a value out of range is a McsimError, never an ns-3 abort.
"""

from __future__ import annotations

import functools
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


# (TypeId name, attribute) -> (its checker, the class of its values): looked up once per process
_ATTRIBUTES: dict[tuple[str, str], tuple[Any, Any]] = {}


def _attribute(ns: Any, type_name: str, name: str) -> tuple[Any, Any]:
    key = (type_name, name)
    if key not in _ATTRIBUTES:
        info = ns.TypeId.AttributeInformation()
        if not ns.TypeId.LookupByName(type_name).LookupAttributeByName(name, info):
            raise AssertionError(f"{type_name} has no attribute {name}")
        # cppyy gives the initial value its dynamic class: UintegerValue, EnumValue<ns3::mcsim::X>, ...
        _ATTRIBUTES[key] = (info.checker, type(info.initialValue.__deref__()))
    return _ATTRIBUTES[key]


def _enum_value(ns: Any, kind: str, value_class: Any, where: str, name: str, value: object) -> Any:
    enum_name = kind[len(_ENUM) : -1]  # kind is "ns3::EnumValue<ns3::mcsim::FlowControl>"
    enum = functools.reduce(getattr, enum_name.split("::")[1:], ns)
    members = sorted(m for m in dir(enum) if m.isupper())
    if not isinstance(value, str) or value not in members:
        raise McsimError(f"{where}: {name}={value!r} is not one of {', '.join(members)} ({enum_name})")
    return value_class(getattr(enum, value))


def _wrap(ns: Any, type_name: str, where: str, name: str, value: object) -> tuple[Any, Any]:
    """(the ns-3 value of attribute ``name`` of ``type_name`` for ``value``, its checker)."""
    checker, value_class = _attribute(ns, type_name, name)
    kind = value_class.__cpp_name__
    if kind.startswith(_ENUM):
        return _enum_value(ns, kind, value_class, where, name, value), checker
    if kind not in _WRAPPERS:
        raise AssertionError(f"{type_name}.{name}: no Python mapping for {kind}")
    return _WRAPPERS[kind](ns, value), checker


def _refused(type_name: str, where: str, name: str, value: object, checker: Any) -> McsimError:
    return McsimError(
        f"{where}: {name}={value!r} is refused by {type_name} (accepts {checker.GetUnderlyingTypeInformation()})"
    )


def attribute_values(ns: Any, type_name: str, where: str, values: Mapping[str, object]) -> dict[str, Any]:
    """The ns-3 value of each attribute of ``type_name`` (a TypeId name such as
    "ns3::mcsim::Fabric"), wrapped as its type expects and checked by its checker.

    Raises
    ------
    McsimError
        ``"<where>: <name>=<value> ..."`` for a value the attribute refuses (out of range, an
        unknown enum name); AssertionError for an attribute the type does not have (a bug).
    """
    out = {}
    for name, value in values.items():
        wrapped, checker = _wrap(ns, type_name, where, name, value)
        if not checker.Check(wrapped):
            raise _refused(type_name, where, name, value, checker)
        out[name] = wrapped
    return out


def set_attributes(obj: Any, ns: Any, type_name: str, where: str, **values: object) -> None:
    """Set attributes of an existing ns-3 object of ``type_name`` by name (values as in
    :func:`attribute_values`; the object's own checkers refuse a bad one, with the same McsimError)."""
    for name, value in values.items():
        wrapped, checker = _wrap(ns, type_name, where, name, value)
        if not obj.SetAttributeFailSafe(name, wrapped):
            raise _refused(type_name, where, name, value, checker)


def make_factory(ns: Any, type_name: str, where: str, **values: object) -> Any:
    """An ns-3 ObjectFactory for ``type_name`` with attributes set by name (values checked first:
    ObjectFactory::Set aborts on a value its checker refuses)."""
    factory = ns.ObjectFactory(type_name)
    for name, wrapped in attribute_values(ns, type_name, where, values).items():
        factory.Set(name, wrapped)
    return factory
