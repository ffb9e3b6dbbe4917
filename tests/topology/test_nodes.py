# SPDX-License-Identifier: GPL-2.0-only
"""Nodes of several GPUs (mcsim.topology.nodes): the parts and their rates against the presets' closed forms,
routes (inside a node through its NVSwitch, across nodes on the destination's rail), and bad node descriptions
as one line from the builders, files, graphs and the command."""

import subprocess
import sys

import networkx as nx
import pytest

from mcsim import topology
from mcsim.errors import McsimError
from mcsim.routing.layout import layout_of
from mcsim.routing.routes import path, unicast_tables
from mcsim.runs.scenario import Scenario
from mcsim.topology.nodes import GB, GPUS, PCIE, PCIE_LANES, nodes_of, nvlink_node, rail_optimised
from mcsim.topology.physics import Link

NDR = {"rate_bps": 425 * 10**9, "encoding_data_bits": 16, "encoding_line_bits": 17, "delay_ps": 100_000}


def small_rail(**kw):
    """4 nodes of 4 GPUs, 2 spines (a rail per GPU, one leaf a rail)."""
    return rail_optimised(**({"nodes": 4, "gpus_per_node": 4, "spines": 2, **NDR} | kw))


@pytest.mark.parametrize("name", sorted(GPUS))
def test_a_node_s_nvlink_is_the_generation_s(name):
    gpu = GPUS[name]
    g = nvlink_node(8 if name != "gb200" else 72, gpu=name)
    topology.validate(g)
    link = Link.from_edge(g.edges[0, next(iter(g[0]))])  # the GPU's link into its hub
    assert link.rate_bps == round(gpu.links * gpu.raw_gbps * GB)  # the data sheet's raw rate
    assert link.data_rate_bps == pytest.approx(gpu.links * gpu.usable_gbps * GB, rel=1e-12)  # NCCL's usable
    assert nodes_of(g).nvlink_bps == link.data_rate_bps


def test_h100_nvlink_is_nccl_s_370_8_gb_per_s():
    assert nodes_of(topology.resolve("dgx-h100")).nvlink_bps == 18 * 206 * 10**8 * 8  # 18 x 20.6 GB/s, in bit/s


def test_rail_optimised_parts_and_counts():
    g = small_rail(gpus_per_node=8, gpus_per_nic=2, pcie="gen4")
    topology.validate(g)
    hosts, rails = 32, 4
    assert topology.host_count(g) == hosts
    assert g.number_of_nodes() == hosts + 4 * (8 + 1 + rails) + rails + 2  # + hubs, NVSwitch, NICs a node
    nodes = nodes_of(g)
    assert (nodes.count, nodes.gpus, nodes.rails) == (4, 8, rails)
    lane, data, line = PCIE["gen4"]
    assert nodes.network_bps == min(lane * PCIE_LANES * data // line, 400 * 10**9)  # Gen4 x16 (252 Gbit/s) binds
    for nic in (x for x, part in g.nodes(data="part") if part == "nic"):
        (leaf,) = (x for x in g[nic] if g.nodes[x].get("part") is None)
        assert g.nodes[leaf]["rail"] == g.nodes[nic]["rail"]
        hubs = sorted(g.nodes[x]["gpu"] for x in g[nic] if g.nodes[x].get("part") == "hub")
        assert hubs == [2 * g.nodes[nic]["rail"], 2 * g.nodes[nic]["rail"] + 1]  # shared by two GPUs


def test_a_topology_wide_rate_leaves_the_node_s_links():
    g = topology.with_link(small_rail(), Link(rate_bps=850 * 10**9, encoding_data_bits=16, encoding_line_bits=17))
    nodes = nodes_of(g)
    assert nodes.nvlink_bps == nodes_of(small_rail()).nvlink_bps
    assert nodes.network_bps == min(PCIE["gen5"][0] * PCIE_LANES * 128 // 130, 800 * 10**9)


def _hash_choice(src, dst):
    return lambda switch, cands: (src * 31 + dst * 7 + switch) % len(cands)


def test_routes_stay_in_the_node_or_take_the_gpu_s_rail():
    g = small_rail()
    lay = layout_of(g)
    tables = unicast_tables(lay)
    parts = g.nodes
    for src in range(16):
        for dst in range(16):
            if src == dst:
                continue
            for choose in (lambda s, c: 0, lambda s, c: len(c) - 1, _hash_choice(src, dst)):
                hops = path(lay, tables, src, dst, choose)
                kinds = [parts[x].get("part", "leaf" if "rail" in parts[x] else "spine") for x in hops]
                if parts[src]["node"] == parts[dst]["node"]:
                    assert kinds == ["gpu", "hub", "nvswitch", "hub", "gpu"]
                elif parts[src]["gpu"] == parts[dst]["gpu"]:  # one rail, the GPUs' own NICs, no spine
                    assert kinds == ["gpu", "hub", "nic", "leaf", "nic", "hub", "gpu"]
                    assert {parts[x].get("rail") for x in hops[2:5]} == {parts[src]["gpu"]}
                else:  # 8 hops: a spine, or one of the two nodes' NVSwitches
                    assert len(hops) == 9 and kinds.count("nic") == 2
                    assert kinds.count("spine") + kinds.count("nvswitch") == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"gpus_per_node": 0}, r"^nodes: gpus_per_node=0 must be >= 1$"),
        ({"nodes": 0}, r"^nodes: nodes=0 must be >= 1$"),
        ({"gpus_per_node": 2.5}, r"^nodes: gpus_per_node=2.5 must be an integer"),
        ({"nvlink_rate_bps": 0}, r"^nodes: nvlink_rate=0 bit/s must be > 0"),
        ({"gpus_per_node": 15}, r"^nodes: 15 GPUs x 18 NVLinks = 270 NVLink ports, more than 4 NVSwitch chips x 64 "),
        ({"nvswitches": 0}, r"^nodes: nvswitches=0 must be >= 1"),
        ({"gpus_per_nic": 3}, r"^nodes: gpus_per_nic=3 must divide gpus_per_node=4"),
        ({"gpu": "h1000"}, r"^unknown gpu 'h1000'; choose one of a100, b200, gb200, h100, h200; did you mean"),
        ({"pcie": "gen7"}, r"^unknown pcie generation 'gen7'; choose one of gen4, gen5, gen6"),
        ({"spines": 0, "nodes_per_leaf": 2}, r"^rail_optimised: 2 leaves a rail need spines to join them"),
        ({"switch_ports": 3}, r"^rail_optimised: a leaf needs 4 NIC ports \+ 2 spines x 1 links = 6 ports"),
        ({"spines": -1}, r"^rail_optimised: spines=-1 must be >= 0"),
        ({"planes": 0}, r"^rail_optimised: planes=0 must be >= 1 \(a NIC's ports, each on its own plane\)$"),
        ({"planes": 1.5}, r"^rail_optimised: planes=1.5 must be an integer$"),
        # a NIC's ports fit in switch_ports (planes=10**7 built a 20-million-switch graph for minutes before)
        (
            {"planes": 10**7, "spines": 0},
            r"^rail_optimised: planes=10000000 network ports on each NIC, more than switch_ports=64$",
        ),
        (
            {"planes": 3, "spines": 3},
            r"^rail_optimised: planes=3 must divide rate=425000000000 bit/s exactly \(a NIC's port splits ",
        ),
        (
            {"planes": 2, "spines": 3},
            r"^rail_optimised: spines=3 must be a multiple of 2: each of the 2 planes has its ",
        ),
        (
            {"spine_groups": "per_rail"},
            r"^rail_optimised: spines=2 must be a multiple of 4: each of the 4 rails has its own spines, as many each "
            r"\(spine_groups='per_rail', planes=1\)$",
        ),
        (
            {"spine_groups": "per_rail", "planes": 2, "spines": 4},
            r"^rail_optimised: spines=4 must be a multiple of 8: each of the 4 rails in each of the 2 planes has its ",
        ),
        (
            {"spine_groups": "rails"},
            r"^unknown spine_groups 'rails'; choose one of per_rail, shared; did you mean 'per",
        ),
        (
            {"spine_groups": "per_rail", "spines": 4, "nodes_per_leaf": 1, "switch_ports": 3},
            r"^rail_optimised: a spine needs 4 leaves x 1 links = 4 ports, more than switch_ports=3$",
        ),
    ],
)
def test_bad_node_descriptions_are_one_line(kwargs, message, tmp_path):
    with pytest.raises(McsimError, match=message) as info:
        small_rail(**kwargs)
    assert "\n" not in str(info.value)
    # the same from a file, named by it
    keys = {"nvlink_rate_bps": "nvlink_rate"}
    lines = [f"{keys.get(k, k)} = {v!r}".replace("'", '"') for k, v in kwargs.items()]
    if "nvlink_rate_bps" in kwargs:
        lines = [f'nvlink_rate = "{kwargs["nvlink_rate_bps"]}bps"']
    base = {"nodes": 4, "gpus_per_node": 4, "spines": 2} | {k: v for k, v in kwargs.items() if k in ("nodes",)}
    text = "\n".join(
        ["[builder]", 'name = "rail_optimised"', 'rate = "425Gbps"', 'encoding = "16b/17b"', 'delay = "100ns"']
        + [f"{k} = {v}" for k, v in base.items() if k not in kwargs]
        + lines
    )
    path_ = tmp_path / "bad.toml"
    path_.write_text(text + "\n")
    with pytest.raises(McsimError) as from_file:
        topology.read_topology_file(path_)
    assert str(from_file.value).startswith(str(path_)) or "bad.toml" in str(from_file.value)
    assert "\n" not in str(from_file.value)


def _graph_without(kind):
    g = small_rail()
    g = nx.Graph(g)
    if kind == "nic":  # GPU 5 (node 1) loses its PCIe link: no path to the other nodes
        nic = next(x for x in g[next(iter(g[5]))] if g.nodes[x].get("part") == "nic")
        g.remove_edge(next(iter(g[5])), nic)
    elif kind == "ports":
        nvswitch = next(x for x, d in g.nodes(data=True) if d.get("part") == "nvswitch")
        g.nodes[nvswitch]["nvlink_ports"] = 10  # 4 GPUs x 18 NVLinks
    elif kind == "rate":
        g.edges[0, next(iter(g[0]))]["rate_bps"] = 0
    elif kind == "mixed":
        g.nodes[3]["part"] = None
    return g


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("nic", r"^topology: GPU 5 has no path to a NIC: its hub n1.hub1 has no PCIe link to a NIC of its node"),
        ("ports", r"^topology: node 0's 4 GPUs have 72 NVLinks, more than n0.nvswitch's 10 NVLink ports$"),
        ("rate", r"^topology: link 0-16: rate_bps=0 must be"),
        ("mixed", r"^topology: host 3 part=None: in a topology of nodes every host is a GPU$"),
    ],
)
def test_bad_node_graphs_are_one_line_from_a_file_and_a_scenario(kind, message, tmp_path):
    g = _graph_without(kind)
    with pytest.raises(McsimError, match=message):
        topology.validate(g)
    if kind != "mixed":  # GraphML cannot hold None
        out = tmp_path / "bad.graphml"
        g.graph.pop("params")  # GraphML holds no dict (mcsim's writer stores it as JSON, but checks the graph first)
        nx.write_graphml(g, out)
        with pytest.raises(McsimError, match=message.replace("^topology", "^.*bad.graphml")) as info:
            topology.read_topology_file(out)
        assert "\n" not in str(info.value)
    with pytest.raises(McsimError, match=message):
        Scenario(topology=g, ranks=2)


def test_the_command_shows_nodes_and_rails():
    out = subprocess.run(
        [sys.executable, "-m", "mcsim", "topo", "show", "rail-16x8"], capture_output=True, text=True, check=True
    ).stdout
    assert "nodes             16 x 8 GPUs (h100) = 128 GPUs (hosts)" in out
    assert "rails             8 (NIC r of every node on rail r), 400Gbps data a NIC" in out


def test_a_bad_node_file_is_one_line_from_the_command(tmp_path):
    f = tmp_path / "n.toml"
    f.write_text('[builder]\nname = "nvlink_node"\ngpus = 0\n')
    res = subprocess.run([sys.executable, "-m", "mcsim", "topo", "show", str(f)], capture_output=True, text=True)
    assert res.returncode != 0
    assert res.stderr.strip().count("\n") == 0 and "gpus=0 must be >= 1" in res.stderr


def test_a_switch_s_own_latency_is_added_on_every_path_through_it():
    """A node's hubs forward in 0 (their latency_ps); give them 1 us and a 2-GPU ring's one WRITE, which crosses
    both hubs (GPU, hub, NVSwitch, hub, GPU), lands exactly 2 us later."""
    g = nvlink_node(2)
    assert {d["latency_ps"] for _, d in g.nodes(data=True) if d.get("part") in ("hub", "nic")} == {0}
    run = {"collective": "allgather", "algorithm": "ring", "bytes_per_rank": "4KiB"}
    base = Scenario(topology=g, **run).run().finish_ps
    slow = nx.Graph(g)
    for _, d in slow.nodes(data=True):
        if d.get("part") == "hub":
            d["latency_ps"] = 1_000_000
    assert (Scenario(topology=slow, **run).run().finish_ps - base == 2_000_000).all()


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [("latency_ps", -1, r"latency_ps=-1 must be 0..1000000000000 \(1 s\)$"),
     ("latency_ps", 2.5, r"latency_ps=2.5 must be an integer"),
     ("latency_ps", 10**13, r"latency_ps=10000000000000 must be 0..1000000000000"),
     ("aggregation_bps", 0, r"aggregation_bps=0 must be 1..1000000000000000 \(1 Pbit/s\)$"),
     ("aggregation_bps", 10**16, r"aggregation_bps=10000000000000000 must be 1..")],
)  # fmt: skip
def test_a_bad_switch_attribute_is_one_line(key, value, message, tmp_path):
    g = nx.Graph(nvlink_node(2))
    g.nodes[2][key] = value
    with pytest.raises(McsimError, match=message):
        topology.validate(g)
    host = nx.Graph(nvlink_node(2))
    host.nodes[0]["latency_ps"] = 0
    with pytest.raises(McsimError, match=r"latency_ps and aggregation_bps are a switch's; a host's are its NIC's$"):
        topology.validate(host)
