# SPDX-License-Identifier: GPL-2.0-only
"""Every config default that crosses to C++ as an attribute is the C++ attribute's initial value.

The configs name the attribute each field sets (mcsim.config.ns3_attributes, in the field's
metadata); here each config's default is made into the ns-3 ObjectFactory a run would make, and
every attribute's value in it, as C++ serializes it, is compared with the initial value its TypeId
declares. A default changed on one side only fails here; no third list of the mapping exists."""

import dataclasses

import pytest

from mcsim.config.collectives import ALGORITHMS, RING_CHUNK_B, TeamSpec
from mcsim.config.congestion import DcqcnConfig, HpccConfig
from mcsim.config.dpa import DpaConfig
from mcsim.config.fabric import FabricConfig
from mcsim.config.ns3_attributes import attribute_of, attributes_of, type_ids_of
from mcsim.config.queue_trace import QueueTraceConfig
from mcsim.config.rdma import HostCpuConfig, RcConfig, RdmaConfig
from mcsim.errors import McsimError
from mcsim.native import runtime
from mcsim.native.attributes import factory_of, make_factory
from mcsim.runs.scenario import Scenario


def _team(type_id: str) -> TeamSpec:
    collective, algorithm = next((pair for pair, tid in ALGORITHMS.items() if tid == type_id), next(iter(ALGORITHMS)))
    # bytes_per_rank_b has no default: 0, the CollectiveTeam's "not set" (its Setup refuses it)
    return TeamSpec(collective=collective, algorithm=algorithm, hosts=(0, 1), bytes_per_rank_b=0)


# each config at its defaults, per TypeId its fields set (a TeamSpec has no default collective: each
# rank application's own, the first pair of ALGORITHMS that names it; the CollectiveTeam's, the first)
CONFIGS = (
    Scenario(),
    FabricConfig(),
    RdmaConfig(),
    RcConfig(),
    HostCpuConfig(),
    DpaConfig(),
    DcqcnConfig(),
    HpccConfig(),
    QueueTraceConfig(ports=((0, 0),)),
)
DEFAULTS = [
    *((cfg, tid) for cfg in CONFIGS for tid in type_ids_of(type(cfg))),
    *((_team(tid), tid) for tid in type_ids_of(TeamSpec)),
]


@pytest.fixture(scope="module")
def ns():
    return runtime.cppyy_ns()


def _factory_values(ns, factory) -> dict[str, str]:
    """An ObjectFactory's attributes as C++ serializes them: "TypeId[Name=text|Name=text]"."""
    text = str(runtime.cppyy_object(factory))
    body = text[text.index("[") + 1 : text.rindex("]")]
    return dict(part.split("=", 1) for part in body.split("|") if part)


def _initial_text(ns, type_id: str, name: str) -> str:
    info = ns.TypeId.AttributeInformation()
    assert ns.TypeId.LookupByName(type_id).LookupAttributeByName(name, info), f"{type_id} has no {name}"
    return str(info.initialValue.SerializeToString(info.checker))


@pytest.mark.parametrize(("config", "type_id"), DEFAULTS, ids=lambda v: v if isinstance(v, str) else type(v).__name__)
def test_a_python_default_is_the_cpp_attributes_initial_value(ns, config, type_id):
    values = attributes_of(config, type_id)
    assert values, f"{type(config).__name__} sets no attribute of {type_id}"
    made = _factory_values(ns, make_factory(type_id, type(config).__name__, **values))
    assert set(made) == set(values)
    differ = {name: (made[name], _initial_text(ns, type_id, name)) for name in values}
    differ = {name: pair for name, pair in differ.items() if pair[0] != pair[1]}
    assert not differ, f"{type(config).__name__} default (Python, C++) differ for {type_id}: {differ}"


def test_every_field_names_an_attribute_its_type_has(ns):
    for cls in (
        Scenario,
        FabricConfig,
        RdmaConfig,
        RcConfig,
        HostCpuConfig,
        DpaConfig,
        DcqcnConfig,
        HpccConfig,
        TeamSpec,
        QueueTraceConfig,
    ):
        for f in dataclasses.fields(cls):
            attribute = attribute_of(f)
            for type_id in attribute.type_ids if attribute is not None else ():
                _initial_text(ns, type_id, attribute.name)


@pytest.mark.parametrize("algorithm", ["ring", "mcast"])
def test_a_team_chunk_of_zero_bytes_is_refused_not_defaulted(algorithm):
    # chunk_b left out takes its algorithm's default (the rings' 64 KiB, else the MTU); 0 is a value the
    # rank applications refuse, as before the default existed
    spec = TeamSpec(collective="allgather", algorithm=algorithm, hosts=(0, 1), bytes_per_rank_b=1, chunk_b=0)
    assert spec.chunk_b == 0
    with pytest.raises(McsimError, match=r"^TeamSpec: ChunkBytes=0 is refused by ns3::mcsim::\w+ "):
        factory_of(spec, ALGORITHMS[("allgather", algorithm)])
    assert _team(ALGORITHMS[("allgather", algorithm)]).chunk_b == (RING_CHUNK_B if algorithm == "ring" else 4096)
