# SPDX-License-Identifier: GPL-2.0-only
"""Scenario as plain data: composed of its typed configs, a topology given as a graph, the canonical
dict and JSON, the content key, and one line for a foreign or corrupt dict."""

import dataclasses
import hashlib
import json

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcsim import topology
from mcsim.config.collectives import ROOTED_COLLECTIVES
from mcsim.config.dpa import DpaConfig
from mcsim.config.fabric import FabricConfig, Faults
from mcsim.config.rdma import IB_MTUS, HostCpuConfig, RcConfig, RdmaConfig
from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario, scenario_of


def star(hosts: int) -> nx.Graph:
    g = topology.leaf_spine(1, 0, hosts, rate_bps=100 * 10**9, delay_ps=100_000)
    g.graph["name"] = f"star-{hosts}"
    return g


# ---------------------------------------------------------------------------------------------
# composed of the typed configs


def test_keywords_set_the_fields_of_the_configs():
    sc = scenario_of(topology="fat-tree-k4", mtu="2KiB", rq_depth=64, staging=False, loss=1e-3, seed=9)
    assert (sc.rdma.mtu_b, sc.rdma.rq_depth, sc.rdma.staging) == (2048, 64, False)
    assert (sc.fabric.loss, sc.fabric.seed, sc.fabric.ecmp_seed) == (1e-3, 9, 9)
    given_configs = Scenario(
        topology="fat-tree-k4",
        rdma=RdmaConfig(mtu_b=2048, rq_depth=64, staging=False),
        fabric=FabricConfig(loss=1e-3, seed=9, ecmp_seed=9),
    )
    assert sc == given_configs and sc.key() == given_configs.key()


def test_a_keyword_sets_a_field_the_given_config_leaves_at_its_default():
    sc = scenario_of(topology="fat-tree-k4", rdma=RdmaConfig(rq_depth=8), mtu="2KiB")
    assert (sc.rdma.mtu_b, sc.rdma.rq_depth) == (2048, 8)
    assert scenario_of(**{f.name: getattr(sc, f.name) for f in dataclasses.fields(sc)}, staging=False).rdma == (
        dataclasses.replace(sc.rdma, staging=False)
    )
    with pytest.raises(TypeError, match="staging"):  # Scenario takes each field one way: its config's
        dataclasses.replace(sc, staging=False)
    same = scenario_of(
        topology="fat-tree-k4", rdma=RdmaConfig(mtu_b=2048), mtu="2KiB", seed=5, fabric=FabricConfig(seed=5)
    )
    assert same.rdma.mtu_b == 2048 and same.fabric.seed == 5  # the same value twice is no conflict


TWO_WAYS = r"give one field two ways; give it once \(the keyword, or the (rdma|fabric) config's field\)$"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mtu": "2KiB", "rdma": RdmaConfig(mtu_b=4096 // 4)}, r"^Scenario: mtu='2KiB' and rdma\.mtu_b=1024 "),
        ({"seed": 3, "fabric": FabricConfig(seed=5)}, r"^Scenario: seed=3 and fabric\.seed=5 "),
        ({"seed": 3, "fabric": FabricConfig(ecmp_seed=5)}, r"^Scenario: seed=3 and fabric\.ecmp_seed=5 "),
        (
            {"rc": RcConfig(retry_cnt=2), "rdma": RdmaConfig(rc=RcConfig(retry_cnt=3))},
            r"^Scenario: rc=RcConfig\(.*retry_cnt=2.*\) and rdma\.rc=RcConfig\(.*retry_cnt=3.*\) ",
        ),
        (
            {"processor": HostCpuConfig(completion_ps=1), "rdma": RdmaConfig(processor=HostCpuConfig(completion_ps=2))},
            r"^Scenario: processor=HostCpuConfig\(completion_ps=1, .*\) "
            r"and rdma\.processor=HostCpuConfig\(completion_ps=2, .*\) ",
        ),
        ({"staging": True, "rdma": RdmaConfig(staging=False)}, r"^Scenario: staging=True and rdma\.staging=False "),
        (
            {"wire_format": "infiniband", "rdma": RdmaConfig(wire_format="rocev2")},
            r"^Scenario: wire_format='infiniband' and rdma\.wire_format='rocev2' ",
        ),
        ({"rq_depth": 64, "rdma": RdmaConfig(rq_depth=32)}, r"^Scenario: rq_depth=64 and rdma\.rq_depth=32 "),
        (
            {"flow_control": "lossless", "fabric": FabricConfig(flow_control="lossy")},
            r"^Scenario: flow_control='lossless' and fabric\.flow_control='lossy' ",
        ),
        (
            {"forwarding": "cut_through", "fabric": FabricConfig(forwarding="store_and_forward")},
            r"^Scenario: forwarding='cut_through' and fabric\.forwarding='store_and_forward' ",
        ),
        ({"loss": 0.01, "fabric": FabricConfig(loss=0.02)}, r"^Scenario: loss=0\.01 and fabric\.loss=0\.02 "),
    ],
)
def test_a_field_given_two_ways_is_refused(kwargs, message):
    with pytest.raises(McsimError, match=message + TWO_WAYS):
        scenario_of(topology="fat-tree-k4", **kwargs)


def test_the_scenario_sizes_the_region_and_the_wire_overhead():
    sc = scenario_of(topology="fat-tree-k4", bytes_per_rank="4KiB", wire_format="rocev2")
    assert sc.rdma.region_b == 16 * 4096 and sc.fabric.header_b == 20


def test_collective_defaults_are_the_team_specs():
    from mcsim.config.collectives import TeamSpec

    sc = Scenario(topology="fat-tree-k4")
    spec = TeamSpec(collective="allgather", algorithm="mcast", hosts=(0, 1), bytes_per_rank_b=1)
    assert (sc.roots, sc.batch, sc.root, sc.endpoints) == (spec.roots, spec.batch, spec.root, spec.endpoints)
    assert sc.teams()[0].roots == spec.roots and sc.teams()[0].chunk_b == sc.rdma.mtu_b


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fabric": "lossy"}, r"^Scenario: fabric='lossy' must be a mcsim.config.fabric.FabricConfig or None$"),
        (
            {"rdma": {"mtu_b": 4096}},
            r"^Scenario: rdma=\{'mtu_b': 4096\} must be a mcsim.config.rdma.RdmaConfig or None$",
        ),
        ({"rdma": RdmaConfig(rq_depth=10**6)}, r"^Scenario: rdma\.rq_depth=1000000 must be 1..32768 \(a ConnectX"),
        ({"topology": nx.DiGraph()}, r"^Scenario: topology=DiGraph must be an undirected simple nx.Graph$"),
    ],
)
def test_bad_configs_are_one_line(kwargs, message):
    with pytest.raises(McsimError, match=message):
        Scenario(**({"topology": "fat-tree-k4"} | kwargs))


# ---------------------------------------------------------------------------------------------
# a topology given as a graph


def test_a_graph_topology_is_copied_on_entry_and_never_handed_out():
    g = star(4)
    sc = Scenario(topology=g, bytes_per_rank="4KiB")
    before = sc.to_json()
    g.add_edge(0, 1, rate_bps=1, delay_ps=1, parallel=1)  # the caller's graph changes ...
    g.nodes[0]["name"] = "renamed"
    assert sc.to_json() == before  # ... the Scenario does not
    mine = sc.graph()
    mine.nodes[1]["name"] = "mine"
    mine.remove_edge(1, 4)
    assert sc.to_json() == before and sc.graph().has_edge(1, 4)
    assert Scenario(topology=star(4), bytes_per_rank="4KiB") == sc  # equal graphs, equal Scenarios


def test_a_graph_topology_runs_as_its_file(star_file):
    by_graph = Scenario(topology=star(4), algorithm="ring", bytes_per_rank="64KiB").run()
    by_file = Scenario(topology=star_file, algorithm="ring", bytes_per_rank="64KiB").run()
    np.testing.assert_array_equal(by_graph.finish_ps, by_file.finish_ps)
    for name, counts in by_file.fabric.ports.items():
        np.testing.assert_array_equal(by_graph.fabric.ports[name], counts)


@pytest.fixture
def star_file(tmp_path):
    path = tmp_path / "star-4.toml"
    topology.write_topology_file(star(4), path)
    return str(path)


def test_an_invalid_graph_is_one_line():
    g = star(4)
    g.nodes[0]["role"] = "router"
    with pytest.raises(McsimError) as info:
        Scenario(topology=g)
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------------------------------------
# canonical dict and JSON


def test_the_canonical_dict_has_units_in_names_and_every_default():
    d = Scenario(topology="fat-tree-k4", rate="400Gbps", bytes_per_rank="1MiB").to_dict()
    assert d["bytes_per_rank_b"] == 1 << 20 and d["ring_chunk_b"] == 64 << 10 and d["nominal_rate_bps"] == 400 * 10**9
    assert d["ranks"] == 16 and d["rdma"]["mtu_b"] == 4096 and d["rdma"]["processor"]["kind"] == "host_cpu"
    fabric = dataclasses.asdict(Scenario(topology="fat-tree-k4").fabric)
    assert d["fabric"] == fabric | {"lossy_hosts": []}  # a tuple, as JSON has it
    text = Scenario(topology="fat-tree-k4").to_json()
    assert text == json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))


def test_equal_scenarios_give_equal_json_whatever_the_spelling():
    a = Scenario(topology="fat-tree-k4", bytes_per_rank="1MiB", ranks=None, timeout_scale=5)
    b = Scenario(topology="fat-tree-k4", bytes_per_rank=1 << 20, ranks=16, timeout_scale=5.0)
    assert a == b and a.to_json() == b.to_json() and a.key() == b.key() and hash(a) == hash(b)
    assert a != Scenario(topology="fat-tree-k4", bytes_per_rank="2MiB")


def test_the_key_is_the_sha256_of_the_canonical_json():
    sc = Scenario(topology="fat-tree-k4")
    assert sc.key() == hashlib.sha256(sc.to_json().encode()).hexdigest()


def test_every_config_round_trips():
    sc = scenario_of(
        topology=star(6),
        rate="56Gbps",
        collective="broadcast",
        root=5,
        processor=DpaConfig(threads=32),
        rc=RcConfig(retry_cnt=None, ack_timeout_exp=10),
        faults=Faults(link_loss={(0, 6): 1e-3}, drops=[(0, 0, 2)], link_down=[(1, 6, 10, None)]),
        verify=True,
        bytes_per_rank="8KiB",
    )
    back = Scenario.from_json(sc.to_json())
    assert back == sc and back.to_json() == sc.to_json()
    assert back.rdma.processor == DpaConfig(threads=32) and back.faults == sc.faults


SIZES = st.sampled_from(["4KiB", "64KiB", 4096, "1MiB", "100000"])


@st.composite
def scenarios(draw) -> Scenario:
    algorithm = draw(st.sampled_from(["mcast", "ring"]))
    collective = "allgather" if algorithm == "ring" else draw(st.sampled_from(["allgather", "broadcast"]))
    ranks = draw(st.one_of(st.none(), st.integers(2, 16)))
    p = ranks or 16
    return scenario_of(
        topology="fat-tree-k4",
        rate=draw(st.sampled_from([None, "56Gbps", "400Gbps"])),
        collective=collective,
        algorithm=algorithm,
        bytes_per_rank=draw(SIZES),
        ranks=ranks,
        roots=draw(st.integers(1, p)),
        batch=draw(st.integers(1, 512)),
        root=draw(st.integers(0, p - 1)) if collective in ROOTED_COLLECTIVES else 0,  # the others have none
        endpoints=draw(st.integers(1, 4)),
        timeout_scale=draw(st.sampled_from([1, 2.5, 5.0])),
        mtu=draw(st.sampled_from(IB_MTUS)),
        rq_depth=draw(st.integers(1, 256)),
        staging=draw(st.booleans()),
        seed=draw(st.integers(0, 2**64 - 1)),
        loss=draw(st.sampled_from([0.0, 1e-3, 0.25])),
        flow_control=draw(st.sampled_from(["lossless", "lossy"])),
        processor=draw(st.sampled_from([HostCpuConfig(), HostCpuConfig(completion_ps=7), DpaConfig(threads=8)])),
        rc=RcConfig(retry_cnt=draw(st.one_of(st.none(), st.integers(0, 7)))),
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_round_trip_gives_an_equal_scenario(sc):
    back = Scenario.from_json(sc.to_json())
    assert back == sc and back.to_dict() == sc.to_dict() and back.key() == sc.key()
    assert Scenario.from_dict(sc.to_dict()).to_json() == sc.to_json()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), scenarios())
def test_keys_are_equal_iff_the_dicts_are(a, b):
    assert (a.key() == b.key()) == (a.to_dict() == b.to_dict()) == (a == b)
    assert a.key() == Scenario.from_dict(a.to_dict()).key()


# ---------------------------------------------------------------------------------------------
# foreign or corrupt data


def _canonical() -> dict:
    return Scenario(topology="fat-tree-k4").to_dict()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1, 2], r"^Scenario.from_dict: list \[1, 2\] must be a dict with string keys$"),
        (
            {"name": "x"},
            r"^unknown key of Scenario.from_dict 'name'; choose one of algorithm, barriers, batch, batching",
        ),
        ({k: v for k, v in _canonical().items() if k != "rdma"}, r"^Scenario.from_dict: missing 'rdma'"),
        (_canonical() | {"schema": "other/2"}, r"^Scenario.from_dict: schema='other/2' is not 'mcsim.Scenario/8'"),
        (_canonical() | {"bytes_per_rank_b": "1MiB"}, r"^Scenario.from_dict: bytes_per_rank_b='1MiB' must be an"),
        (_canonical() | {"roots": 99}, r"^Scenario: roots=99 must be 1..16 \(the ranks\)$"),
        (
            _canonical() | {"rdma": {"mtu_b": 4096}},
            r"^Scenario.from_dict: rdma: missing 'wire_format', 'congestion_control', 'dcqcn_g'",
        ),
        (
            _canonical() | {"rdma": _canonical()["rdma"] | {"processor": {"kind": "gpu"}}},
            r"^unknown Scenario.from_dict: rdma.processor kind 'gpu'; choose one of dpa, host_cpu$",
        ),
        (_canonical() | {"faults": {"drops": 3}}, r"^Scenario.from_dict: faults: missing 'link_down'"),
        (_canonical() | {"topology": {"nodes": []}}, r"^Scenario.from_dict: topology: missing 'edges', 'graph'"),
    ],
)
def test_a_foreign_or_corrupt_dict_is_one_line(data, message):
    with pytest.raises(McsimError, match=message) as info:
        Scenario.from_dict(data)
    assert "\n" not in str(info.value)


def _deep(n: int) -> list:
    """[[[...]]], n lists deep."""
    out: list = []
    for _ in range(n):
        out = [out]
    return out


@pytest.mark.parametrize("key", ["fabric", "collective", "topology", "faults", "rdma"])
def test_deeply_nested_data_is_one_line(key):
    with pytest.raises(McsimError, match=r"^Scenario\.from_dict: data nested more than 32 deep is not a mcsim dict$"):
        Scenario.from_dict(_canonical() | {key: _deep(5000)})
    Scenario.from_dict(
        _canonical() | {"faults": {"drops": [], "link_down": [], "link_loss": [], "reroute_delay_ps": None}}
    )


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a":' * 5000 + "1" + "}" * 5000])
def test_deeply_nested_json_is_one_line(text):
    with pytest.raises(
        McsimError, match=r"^Scenario\.from_json: not a mcsim Scenario \(arrays or objects nested too deep\)$"
    ):
        Scenario.from_json(text)


def test_a_graph_with_a_deeply_nested_attribute_is_one_line():
    g = Scenario(topology="fat-tree-k4").graph()
    g.graph["description"] = _deep(5000)
    with pytest.raises(
        McsimError, match=r"^Scenario: topology: an attribute of the graph is nested too deep for JSON$"
    ):
        Scenario(topology=g)


@pytest.mark.parametrize("text", ["", "{", "[1,", b"\xff\xfe", "not json"])
def test_corrupt_json_is_one_line(text):
    with pytest.raises(McsimError, match=r"^Scenario.from_json: not JSON \(") as info:
        Scenario.from_json(text)
    assert "\n" not in str(info.value)


def test_a_path_is_a_file_topology(star_file):
    from pathlib import Path

    assert Scenario(topology=Path(star_file)) == Scenario(topology=star_file)
    assert Scenario(topology=Path(star_file)).topology == star_file


@pytest.mark.parametrize("name", ["multicast_loopback", "pick_at_handover"])
@pytest.mark.parametrize("value", ["yes", 1, None])
def test_an_rdma_switch_that_is_not_a_bool_is_one_line(name, value):
    with pytest.raises(McsimError, match=rf"^RdmaConfig: {name}={value!r} must be True or False$"):
        RdmaConfig(**{name: value})


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_a_host_cpu_switch_that_is_not_a_bool_is_one_line(value):
    with pytest.raises(McsimError, match=rf"^HostCpuConfig: defer_completions={value!r} must be True or False$"):
        HostCpuConfig(defer_completions=value)
