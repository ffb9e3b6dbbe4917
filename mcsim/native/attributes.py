# SPDX-License-Identifier: GPL-2.0-only
"""Python values -> ns-3 attributes: the one place that sets them, by name, checked by their own type.

Callers give plain Python values, named as the C++ attribute: an int for ``UintegerValue`` and
``IntegerValue``, a bool for ``BooleanValue``, a float for ``DoubleValue``, an int in ps for
``TimeValue``, an int in bit/s for ``DataRateValue``, and for an ``EnumValue<T>`` the name the
attribute's checker gives a member of T (``MakeEnumChecker(FlowControl::LOSSY, "Lossy", ...)``:
"Lossy"). All of an object's attributes go to C++ in one call, as text
(``ns3::mcsim::SetAttributesFromText``, capi/attribute-text.h), where the attribute's own
type reads the value exactly and its checker judges it: a value out of range is a McsimError,
never an ns-3 abort. Python builds no ns-3 AttributeValue, so cling compiles no call wrapper per
value type and instantiates no EnumValue<T> when a process starts its first run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcsim.config.ns3_attributes import attributes_of
from mcsim.errors import McsimError

if TYPE_CHECKING:
    from mcsim.native import abi

_ENUM = "ns3::EnumValue<"


def _text(type_name: str, name: str, value: object) -> str:
    """One "Name=text" line (the text as attribute-text.h reads it)."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int | str):
        text = str(value)
    elif isinstance(value, float):
        text = repr(value)  # the shortest text that reads back to the same double
    else:
        raise AssertionError(f"{type_name}.{name}: no text for {value!r} ({type(value).__name__})")
    if "=" in name or "\n" in name or "\n" in text:
        raise AssertionError(f"{type_name}.{name}: {value!r} cannot be set as text")
    return f"{name}={text}"


def _settings(type_name: str, values: dict[str, object]) -> str:
    return "\n".join(_text(type_name, name, value) for name, value in values.items())


def _check(refused: int, type_name: str, where: str, values: dict[str, object]) -> None:
    """Raise for what C++ refused (mcsim_last_text(): "Name\tvalue type\taccepts"), if it did."""
    if not refused:
        return
    from mcsim.native import abi, runtime

    name, kind, accepts = abi.last_text(runtime.load()).split("\t", 2)
    if not kind:
        raise AssertionError(f"{type_name} has no attribute {name}")
    value = values[name]
    if kind.startswith(_ENUM):
        members = ", ".join(accepts.split("|"))
        raise McsimError(f"{where}: {name}={value!r} is not one of {members} ({kind[len(_ENUM) : -1]})")
    raise McsimError(f"{where}: {name}={value!r} is refused by {type_name} (accepts {accepts})")


def set_attributes(obj: abi.Handle, where: str, **values: object) -> None:
    """Set attributes of an existing ns-3 object by name, in one call.

    Raises
    ------
    McsimError
        ``"<where>: <name>=<value> ..."`` for a value the attribute refuses (out of range, not of
        its type, an unknown enum member); AssertionError for an attribute the type does not have
        (a bug). The attributes named before the refused one are set.
    """
    from mcsim.native import runtime

    refused = runtime.load().mcsim_set_attributes(obj, _settings(obj.type_name, values).encode())
    _check(refused, obj.type_name, where, values)


def make_factory(type_name: str, where: str, **values: object) -> abi.Factory:
    """An ns-3 ObjectFactory for ``type_name`` with attributes set by name (each value checked by its
    attribute's checker first, so that creating an object never aborts on one; errors as
    :func:`set_attributes`)."""
    from mcsim.native import abi, runtime

    lib = runtime.load()
    factory = abi.Factory(lib, type_name)
    _check(lib.mcsim_factory_set(factory, _settings(type_name, values).encode()), type_name, where, values)
    return factory


def factory_of(config: Any, type_name: str) -> abi.Factory:
    """The ObjectFactory of ``type_name`` with every attribute of it that ``config``'s fields set
    (their metadata: mcsim.config.ns3_attributes); errors name the config's type."""
    return make_factory(type_name, type(config).__name__, **attributes_of(config, type_name))


def set_attributes_of(obj: abi.Handle, config: Any) -> None:
    """Set every attribute of ``obj``'s type that ``config``'s fields set (as :func:`factory_of`)."""
    set_attributes(obj, type(config).__name__, **attributes_of(config, obj.type_name))
