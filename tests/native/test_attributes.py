# SPDX-License-Identifier: GPL-2.0-only
"""attributes.py: Python values become ns-3 attribute values by the attribute's own type and checker."""

import pytest

from mcsim.errors import McsimError
from mcsim.native import abi, runtime
from mcsim.native.attributes import make_factory, set_attributes


@pytest.fixture(scope="module")
def ns():
    return runtime.cppyy_ns()  # to read the values back


def new_fabric():
    return abi.Handle(runtime.load(), "ns3::mcsim::Fabric")


def new_port():
    return abi.Handle(runtime.load(), "ns3::mcsim::Port")


def test_python_values_are_wrapped_by_the_attribute_type(ns):
    port = new_port()
    try:
        set_attributes(
            port,
            "FabricConfig",
            FlowControl="Lossy",
            Delay=123_456,
            BufferBytes=77,
        )
        delay, buffer = ns.TimeValue(), ns.UintegerValue()
        view = runtime.cppyy_object(port)
        view.GetAttribute("Delay", delay)
        view.GetAttribute("BufferBytes", buffer)
        mode = ns.EnumValue[ns.mcsim.FlowControl]()
        view.GetAttribute("FlowControl", mode)
        assert delay.Get().GetPicoSeconds() == 123_456  # an int is ps for a TimeValue
        assert buffer.Get() == 77
        assert mode.Get() == ns.mcsim.FlowControl.LOSSY
    finally:
        runtime.dispose(port)


def test_a_factory_carries_every_kind_of_value(ns):
    factory = make_factory(
        "ns3::mcsim::Dpa", "DpaConfig", Placement="Pack", IssueShare=0.5, LoopbackRate=10**12, Threads=3
    )
    text = str(runtime.cppyy_object(factory))
    for part in ("Placement=Pack", "IssueShare=0.5", "LoopbackRate=1000000000000bps", "Threads=3"):
        assert part in text


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            {"FlowControl": "LOSSY"},
            r"FabricConfig: FlowControl='LOSSY' is not one of Lossless, Lossy, Pfc \(ns3::mcsim::FlowControl\)",
        ),
        ({"SwitchBufferBytes": 0}, r"FabricConfig: SwitchBufferBytes=0 is refused by ns3::mcsim::Fabric"),
        ({"RoutingHeaderBytes": 2**33}, r"FabricConfig: RoutingHeaderBytes=8589934592 is refused .*uint32_t"),
    ],
)
def test_a_refused_value_is_one_error_line_not_an_abort(ns, values, message):
    with pytest.raises(McsimError, match=message):
        make_factory("ns3::mcsim::Fabric", "FabricConfig", **values)


def test_an_object_refuses_a_bad_value_with_the_same_error(ns):
    fabric = new_fabric()
    try:
        with pytest.raises(McsimError, match=r"^FabricConfig: SwitchBufferBytes=0 is refused by ns3::mcsim::Fabric"):
            set_attributes(fabric, "FabricConfig", SwitchBufferBytes=0)
    finally:
        runtime.dispose(fabric)


def test_an_attribute_the_type_lacks_is_a_bug(ns):
    with pytest.raises(AssertionError, match="has no attribute Bogus"):
        make_factory("ns3::mcsim::Fabric", "FabricConfig", Bogus=1)


def test_values_arrive_exactly_where_a_double_would_round(ns):
    """Integers go to C++ as text and are read as integers: 2**60 + 1 ps and a 64-bit seed survive
    (a double would round both); a float is the same double on both sides."""
    fabric, port = new_fabric(), new_port()
    try:
        set_attributes(port, "FabricConfig", Delay=2**60 + 1)
        set_attributes(fabric, "FabricConfig", Seed=2**64 - 3)
        delay, seed = ns.TimeValue(), ns.UintegerValue()
        runtime.cppyy_object(port).GetAttribute("Delay", delay)
        runtime.cppyy_object(fabric).GetAttribute("Seed", seed)
        assert delay.Get().GetPicoSeconds() == 2**60 + 1
        assert seed.Get() == 2**64 - 3
    finally:
        runtime.dispose(fabric, port)
    factory = make_factory("ns3::mcsim::Dpa", "DpaConfig", IssueShare=0.1)
    assert "IssueShare=0.1" in str(runtime.cppyy_object(factory))


@pytest.mark.parametrize(("name", "value"), [("SwitchBufferBytes", 1.5), ("SwitchBufferBytes", True), ("Seed", -1)])
def test_a_value_not_of_the_attribute_type_is_refused(ns, name, value):
    with pytest.raises(McsimError, match=rf"^FabricConfig: {name}={value!r} is refused by ns3::mcsim::Fabric"):
        make_factory("ns3::mcsim::Fabric", "FabricConfig", **{name: value})
