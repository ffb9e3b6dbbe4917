# SPDX-License-Identifier: GPL-2.0-only
"""Topology files: TOML builders and GraphML graphs read and written, and every bad file one line."""

import os
import re
import subprocess
import sys

import networkx as nx
import pytest

from mcsim import topology
from mcsim.errors import McsimError
from mcsim.topology import fat_tree, leaf_spine, read_topology_file, resolve, summary, write_topology_file

FDR_BPS = 56_250_000_000
LINK = {"rate_bps": 10**9, "delay_ps": 100_000}


# --- files ---------------------------------------------------------------------------------------


def write(tmp_path, text, name="t.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


BUILDER_TOML = """name = "small"
[builder]
name = "{builder}"
{keys}
rate = "56.25Gbps"
encoding = "64b/66b"
delay = "100ns"
"""


def test_toml_builds_with_units(tmp_path):
    g = read_topology_file(write(tmp_path, BUILDER_TOML.format(builder="fat_tree", keys="k = 4")))
    assert g.graph["name"] == "small" and g.graph["builder"] == "fat_tree"
    assert g.edges[0, 16] == {
        "rate_bps": FDR_BPS,
        "encoding_data_bits": 64,
        "encoding_line_bits": 66,
        "delay_ps": 100_000,
        "parallel": 1,
    }


def test_toml_rejects_unknown_builder(tmp_path):
    path = write(tmp_path, BUILDER_TOML.format(builder="fat_treee", keys="k = 4"))
    with pytest.raises(McsimError) as info:
        read_topology_file(path)
    assert (
        str(info.value)
        == "unknown topology builder 'fat_treee'; choose one of fat_tree, general_fat_tree, leaf_spine, nvlink_node, "
        "rail_optimised; "
        "did you mean 'fat_tree'?"
    )


def test_toml_rejects_unknown_builder_key(tmp_path):
    path = write(tmp_path, BUILDER_TOML.format(builder="leaf_spine", keys="leafs = 2\nspines = 1\nhosts_per_leaf = 2"))
    accepted = "delay, encoding, hosts_per_leaf, leaves, links_per_leaf_spine, rate, spines, switch_ports"
    with pytest.raises(
        McsimError, match=rf"key 'leafs' is not accepted; accepted keys: {accepted}; did you mean 'leaves'\?"
    ):
        read_topology_file(path)


def test_toml_rejects_missing_key_top_level_typo_and_bad_units(tmp_path):
    with pytest.raises(McsimError, match=r"\[builder\] for fat_tree needs key 'k'"):
        read_topology_file(write(tmp_path, BUILDER_TOML.format(builder="fat_tree", keys="")))
    with pytest.raises(
        McsimError, match=r"key 'descripton' is not accepted; accepted keys: builder, description, name"
    ):
        read_topology_file(
            write(tmp_path, 'descripton = "x"\n' + BUILDER_TOML.format(builder="fat_tree", keys="k = 4"))
        )
    text = BUILDER_TOML.format(builder="fat_tree", keys="k = 4").replace("56.25Gbps", "56GBps")
    with pytest.raises(McsimError, match=r"rate='56GBps': unknown unit 'GBps'"):
        read_topology_file(write(tmp_path, text))
    with pytest.raises(McsimError, match=r"fat_tree: k=5 must be even"):
        read_topology_file(write(tmp_path, BUILDER_TOML.format(builder="fat_tree", keys="k = 5")))
    with pytest.raises(McsimError, match=r"not valid TOML"):
        read_topology_file(write(tmp_path, "name = \n"))
    with pytest.raises(McsimError, match=r"unknown topology file type '.txt'"):
        read_topology_file(write(tmp_path, "x", name="t.txt"))
    with pytest.raises(McsimError, match=r"does not exist"):
        read_topology_file(tmp_path / "missing.toml")


@pytest.mark.parametrize(
    "g",
    [
        fat_tree(4, rate_bps=FDR_BPS, delay_ps=100_000, encoding_data_bits=64, encoding_line_bits=66),
        leaf_spine(3, 2, [2, 3, 1], 2, rate_bps=56_250_000_001, delay_ps=1),
        leaf_spine(12, 6, [16] * 8 + [15] * 4, 3, rate_bps=FDR_BPS, delay_ps=100_000, switch_ports=36),
    ],
    ids=["fat-tree-4", "leaf-spine-odd-rate", "testbed-188"],
)
@pytest.mark.parametrize("suffix", [".graphml", ".toml"])
def test_file_round_trip_gives_an_identical_graph(tmp_path, g, suffix, same_graph):
    g.graph["description"] = 'a "quoted" description'
    write_topology_file(g, tmp_path / f"g{suffix}")
    same_graph(read_topology_file(tmp_path / f"g{suffix}"), g)


def test_graphml_holds_graphs_that_no_builder_makes(tmp_path, same_graph):
    g = nx.Graph(name="triangle")  # 3 switches in a ring, 2 hosts each, mixed rates
    for h in range(6):
        g.add_node(h, role="host", tier=0, name=f"h{h}")
    for s in range(6, 9):
        g.add_node(s, role="switch", tier=1, name=f"s{s}")
    for h in range(6):
        g.add_edge(h, 6 + h // 2, rate_bps=10**11, encoding_data_bits=1, encoding_line_bits=1, delay_ps=0, parallel=1)
    for a, b in ((6, 7), (7, 8), (6, 8)):
        g.add_edge(a, b, rate_bps=4 * 10**11, encoding_data_bits=128, encoding_line_bits=130, delay_ps=5, parallel=2)
    write_topology_file(g, tmp_path / "tri.graphml")
    same_graph(read_topology_file(tmp_path / "tri.graphml"), g)
    assert summary(g)["diameter"] == 3
    with pytest.raises(McsimError, match=r"was not made by a builder; save it as .graphml"):
        write_topology_file(g, tmp_path / "tri.toml")


def test_toml_refuses_a_graph_changed_after_building(tmp_path):
    g = fat_tree(4, **LINK)
    g.edges[0, 16]["delay_ps"] = 7
    with pytest.raises(McsimError, match=r"was changed after fat_tree built it"):
        write_topology_file(g, tmp_path / "g.toml")


def test_graphml_rejects_non_integer_node_ids(tmp_path):
    g = nx.Graph()
    g.add_edge("a", "b")
    nx.write_graphml(g, tmp_path / "bad.graphml")
    with pytest.raises(McsimError, match=r"node id 'a' must be an integer"):
        read_topology_file(tmp_path / "bad.graphml")


# --- bad topology files: one line naming the file, the link or node, and the value ----------------


def _graphml(tmp_path, name="t.graphml", **edge_values):
    """A fat_tree(2) written as GraphML (networkx, unchecked) with every link's attributes set as given:
    a float is written as a GraphML double."""
    g = fat_tree(2, rate_bps=10**9, delay_ps=100)
    g.graph.clear()
    for u, v in g.edges:
        g.edges[u, v].update(edge_values)
    path = tmp_path / name
    nx.write_graphml(g, path)
    return path


LIMIT_DELAY = r"must be <= 1000000000000 \(1 s, 200,000 km of fibre: delays add up along routes"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"delay_ps": 4e18}, rf"^topology t\.graphml: link 0-2: delay_ps=4000000000000000000 {LIMIT_DELAY}"),
        (
            {"delay_ps": 1e30},
            rf"^topology t\.graphml: link 0-2: delay_ps=1000000000000000019884624838656 {LIMIT_DELAY}",
        ),
        ({"delay_ps": float("nan")}, r"^topology t\.graphml: link 0-2: delay_ps=nan must be an integer$"),
        ({"delay_ps": float("inf")}, r"^topology t\.graphml: link 0-2: delay_ps=inf must be an integer$"),
        ({"delay_ps": 1.5}, r"^topology t\.graphml: link 0-2: delay_ps=1\.5 must be an integer$"),
        (
            {"rate_bps": 1e16},
            r"^topology t\.graphml: link 0-2: rate_bps=10000000000000000 must be <= 1000000000000000 "
            r"\(1000Tbps, mcsim's largest rate\)$",
        ),
        (
            {"parallel": 1e9},
            r"^topology t\.graphml: link 0-2: parallel=1000000000 must be <= 4096 \(parallel links are switch ports\)$",
        ),
        (
            {"encoding_line_bits": 1e10},
            r"^topology t\.graphml: link 0-2: encoding_line_bits=10000000000 must be <= 4294967295 "
            r"\(uint32 in C\+\+\)$",
        ),
    ],
)
def test_graphml_values_past_mcsims_limits_are_one_line(tmp_path, change, message):
    path = _graphml(tmp_path, **change)
    with pytest.raises(McsimError, match=message):
        read_topology_file(path)


def test_graphml_long_value_that_is_no_integer_names_the_file(tmp_path):
    path = _graphml(tmp_path)
    path.write_text(path.read_text().replace('">100</data>', '">4e18</data>'))  # the delays are "long"
    with pytest.raises(McsimError, match=r"^topology t\.graphml: not a readable GraphML file \(.*'4e18'\)$"):
        read_topology_file(path)


BUILDER_KEYS = '[builder]\nname = "{b}"\nrate = "{rate}"\ndelay = "{delay}"\n{keys}\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            BUILDER_KEYS.format(b="fat_tree", rate="1Gbps", delay="2s", keys="k = 2"),
            rf"^topology t\.toml: fat_tree: delay_ps=2000000000000 {LIMIT_DELAY}",
        ),
        (
            BUILDER_KEYS.format(b="fat_tree", rate="1Gbps", delay="1e400s", keys="k = 2"),
            r"^topology t\.toml: delay='1e400s' is more than .* "
            r"\(2\^62 ps = 53\.4 days, the simulated clock's limit\)$",
        ),
        (
            BUILDER_KEYS.format(b="fat_tree", rate="1e30Gbps", delay="1ns", keys="k = 2"),
            r"^topology t\.toml: rate='1e30Gbps' is more than 1000Tbps \(1 Pbit/s, mcsim's largest rate\)$",
        ),
        (
            BUILDER_KEYS.format(b="fat_tree", rate="1Gbps", delay="1ns", keys="k = 1e30"),
            r"^topology t\.toml: fat_tree: k=1e\+30 must be an integer$",
        ),
        (
            BUILDER_KEYS.format(b="fat_tree", rate="1Gbps", delay="1ns", keys="k = nan"),
            r"^topology t\.toml: fat_tree: k=nan must be an integer$",
        ),
        (
            BUILDER_KEYS.format(
                b="leaf_spine",
                rate="1Gbps",
                delay="1ns",
                keys="leaves = 2\nspines = 1\nhosts_per_leaf = 1\nlinks_per_leaf_spine = 100000",
            ),
            r"^topology t\.toml: link 2-4: parallel=100000 must be <= 4096 \(parallel links are switch ports\)$",
        ),
        (
            "a = " + "[" * 5000 + "]" * 5000,
            r"^topology t\.toml: not valid TOML for mcsim \(arrays or tables nested too deep\)$",
        ),
    ],
)
def test_toml_values_past_mcsims_limits_are_one_line(tmp_path, text, message):
    path = tmp_path / "t.toml"
    path.write_text(text)
    with pytest.raises(McsimError, match=message):
        read_topology_file(path)


LONG_NAME = "a" * 10_000 + ".toml"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda d: _write_bytes(d / "bin.toml", bytes(range(256))),
            r"^topology bin\.toml: not valid TOML \(not UTF-8 text: byte 0x80 at 128\)$",
        ),
        (
            lambda d: _write_bytes(d / "bin.graphml", bytes(range(256))),
            r"^topology bin\.graphml: not a readable GraphML file \(.+\)$",
        ),
        (lambda d: _mkdir(d / "dir.toml"), r"^topology file '.*/dir\.toml' is a folder, not a file$"),
        (lambda d: d / "missing.graphml", r"^topology file '.*/missing\.graphml' does not exist$"),
        (
            lambda d: d / LONG_NAME,
            r"^topology file '.*\.\.\.a+\.toml' \(100\d\d characters\): cannot be read \(File name too long\)$",
        ),
        (
            lambda d: _write_bytes(d / "x.graphml", b'<?xml version="1.0"?><html><body/></html>'),
            r"^topology x\.graphml: not a readable GraphML file \(file not successfully read as graphml\)$",
        ),
        (
            lambda d: _write_bytes(d / "x.graphml", b"name = 'x'\n"),
            r"^topology x\.graphml: not a readable GraphML file \(.+\)$",
        ),
        (
            lambda d: _write_bytes(d / "x.toml", b'<?xml version="1.0"?><graphml/>'),
            r"^topology x\.toml: not valid TOML \(.+\)$",
        ),
        (
            lambda d: _write_bytes(
                d / "empty.graphml", b'<?xml version="1.0"?><graphml><graph edgedefault="undirected"/></graphml>'
            ),
            r"^topology empty\.graphml: graph has no host; hosts are nodes 0\.\.H-1 with role='host'$",
        ),
    ],
)
def test_bad_topology_files_are_one_line(tmp_path, make, message):
    path = make(tmp_path)
    with pytest.raises(McsimError, match=message):
        read_topology_file(path)
    with pytest.raises(McsimError, match=message):
        resolve(str(path))


def _write_bytes(path, data):
    path.write_bytes(data)
    return path


def _mkdir(path):
    path.mkdir()
    return path


def test_unreadable_topology_file_is_one_line(tmp_path, monkeypatch):
    path = _write_bytes(tmp_path / "t.toml", b"")

    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(type(path), "open", refuse)  # root reads any file: the reader opens it through Path.open
    with pytest.raises(McsimError, match=r"^topology file '.*/t\.toml': cannot be read \(Permission denied\)$"):
        read_topology_file(path)


@pytest.mark.parametrize(
    ("make", "stderr"),
    [
        (
            lambda d: _write_bytes(d / "bin.toml", b"\xff\xfe"),
            r"^mcsim: error: topology bin\.toml: not valid TOML \(not UTF-8",
        ),
        (
            lambda d: _mkdir(d / "dir.graphml"),
            r"^mcsim: error: topology file '.*/dir\.graphml' is a folder, not a file$",
        ),
        (lambda d: d / LONG_NAME, r"^mcsim: error: topology file '.*' \(100\d\d characters\): cannot be read"),
        (
            lambda d: _graphml(d, delay_ps=4e18),
            rf"^mcsim: error: topology t\.graphml: link 0-2: delay_ps=4000000000000000000 {LIMIT_DELAY}",
        ),
    ],
)
def test_topo_show_of_a_bad_file_is_exit_2_and_one_line(tmp_path, capsys, make, stderr):
    from mcsim import cli

    path = make(tmp_path)
    assert cli.main(["topo", "show", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert re.match(stderr, err)


def test_a_missing_topologies_folder_is_reported_only_on_lookup(monkeypatch, tmp_path):
    monkeypatch.setenv("MCSIM_TOPOLOGIES", str(tmp_path / "nowhere"))
    assert "fat-tree-k4" in topology.available()  # listing never fails: the CLI's help lists the names
    assert topology.topology_dirs()[-1].name == "topologies"
    with pytest.raises(McsimError, match=r"^\$MCSIM_TOPOLOGIES names '.*nowhere', which is not a folder$"):
        resolve("fat-tree-k4")
    assert topology.host_count(resolve(str(_graphml(tmp_path)))) == 2  # a path needs no folder


def test_a_missing_topologies_folder_breaks_no_command(tmp_path):
    env = {**os.environ, "MCSIM_TOPOLOGIES": str(tmp_path / "nowhere")}
    version = subprocess.run([sys.executable, "-m", "mcsim", "--version"], capture_output=True, text=True, env=env)
    assert version.returncode == 0 and version.stdout.startswith("mcsim ")
    show = subprocess.run(
        [sys.executable, "-m", "mcsim", "topo", "show", "fat-tree-k4"], capture_output=True, text=True, env=env
    )
    assert show.returncode == 2 and show.stdout == ""
    assert re.fullmatch(r"mcsim: error: \$MCSIM_TOPOLOGIES names '.*nowhere', which is not a folder\n", show.stderr)
