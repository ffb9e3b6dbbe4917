# SPDX-License-Identifier: GPL-2.0-only
"""mcsim topo import ibnetdiscover: real dumps (tests/topology/data/README.md), checked against counts
taken from each file's own text by the regular expressions below (not by the parser under test)."""

import re
from fractions import Fraction
from pathlib import Path

import pytest

from mcsim.cli import main
from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario
from mcsim.topology import read_topology_file, summary
from mcsim.topology.ibnetdiscover import read_ibnetdiscover
from mcsim.topology.physics import infiniband_link

DATA = Path(__file__).parent / "data"
MAN = DATA / "ibnetdiscover-man-example.topo"
NDR = DATA / "ibnetdiscover-ndr-542hosts.topo"
DUMPS = [MAN, DATA / "ibnetdiscover-sdr-2hosts.topo", DATA / "ibnetdiscover-mixed-ufm.topo", NDR]
# the specification's lane signalling rates in Gbit/s and line codes (data/line): the test's own table
LANES = {
    "SDR": (Fraction(5, 2), Fraction(8, 10)),
    "DDR": (Fraction(5), Fraction(8, 10)),
    "QDR": (Fraction(10), Fraction(8, 10)),
    "FDR10": (Fraction("10.3125"), Fraction(64, 66)),
    "FDR": (Fraction("14.0625"), Fraction(64, 66)),
    "EDR": (Fraction("25.78125"), Fraction(64, 66)),
    "HDR": (Fraction("53.125"), Fraction(50, Fraction("53.125"))),  # 50 Gbit/s of data a lane
    "NDR": (Fraction("106.25"), Fraction(100, Fraction("106.25"))),
    "XDR": (Fraction("212.5"), Fraction(200, Fraction("212.5"))),
}


def _rate_bps(speed: str) -> int:
    width, name = re.fullmatch(r"(\d+)x(\w+)", speed).groups()  # type: ignore[union-attr]
    return int(int(width) * LANES[name][0] * 10**9)


def _text_fabric(text: str) -> tuple[dict[str, str], set[str], list[tuple[str, int, str, int, str]]]:
    """CAs (id -> description), switch ids, and port lines (node, port, peer, peer port, speed)."""
    cas, switches, ports, node = {}, set(), [], ""
    for line in text.splitlines():
        if m := re.match(r'(Switch|Ca)\s+\d+\s+"([^"]+)"\s*#\s*"([^"]*)"', line):
            node = m[2]
            if m[1] == "Ca":
                cas[node] = m[3]
            else:
                switches.add(node)
        elif m := re.match(r'\[(\d+)\]\S*\s+"([^"]+)"\[(\d+)\].*\s(\d+x[A-Z0-9]+)\s*$', line):
            ports.append((node, int(m[1]), m[2], int(m[3]), m[4]))
    return cas, switches, ports


def _expected_edges(text: str) -> tuple[set[str], set[str], dict[frozenset[str], tuple[int, int]]]:
    """Hosts, switches and per node pair (parallel cables, slowest rate reported for any of them) as the
    import's rules read the text: loopbacks, aggregation nodes and CA ports past the first left out."""
    cas, switches, ports = _text_fabric(text)
    hosts = {c for c, desc in cas.items() if "aggregation node" not in desc.lower()}
    host_ports: dict[str, set[int]] = {}  # a CA's ports from either end of its cables (its own block may list none)
    for node, port, peer, peer_port, _ in ports:
        for n, p in ((node, port), (peer, peer_port)):
            if n in hosts:
                host_ports.setdefault(n, set()).add(p)
    first = {c: min(p) for c, p in host_ports.items()}
    cables: dict[frozenset[tuple[str, int]], int] = {}
    for node, port, peer, peer_port, speed in ports:
        ends = frozenset({(node, port), (peer, peer_port)})
        if node == peer or not {node, peer} <= hosts | switches:
            continue
        if any(n in hosts and first[n] != p for n, p in ends):
            continue
        cables[ends] = min(cables.get(ends, _rate_bps(speed)), _rate_bps(speed))
    edges: dict[frozenset[str], tuple[int, int]] = {}
    for ends, rate in cables.items():
        pair = frozenset(n for n, _ in ends)
        count, slowest = edges.get(pair, (0, rate))
        edges[pair] = (count + 1, min(slowest, rate))
    return set(first), switches, edges


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: p.stem)
def test_hosts_switches_links_and_rates_are_the_files(path):
    hosts, switches, edges = _expected_edges(path.read_text())
    g = read_ibnetdiscover(path).graph
    s = summary(g)
    assert s["hosts"] == len(hosts) and s["switches"] == len(switches)
    assert s["links"] == sum(count for count, _ in edges.values())
    guid = dict(g.nodes(data="guid"))
    assert {guid[n] for n in range(s["hosts"])} == hosts
    got = {frozenset({guid[u], guid[v]}): (d["parallel"], d["rate_bps"]) for u, v, d in g.edges(data=True)}
    assert got == edges


def test_the_man_page_example_by_hand():
    """Its 4 CAs and 2 switches; 7 cables, one CA's second port left out; a 1x cable end rules its pair."""
    text = MAN.read_text()
    assert len(re.findall(r"^Ca\s", text, re.M)) == 4 and len(re.findall(r"^Switch\s", text, re.M)) == 2
    imported = read_ibnetdiscover(MAN)
    g = imported.graph
    by_guid = {d["guid"]: n for n, d in g.nodes(data=True)}
    trunk = g[by_guid["S-005442ba00003080"]][by_guid["S-0008f10400410015"]]
    assert trunk["parallel"] == 2 and trunk["rate_bps"] == 2_500_000_000  # "1xSDR" on line 27
    assert (trunk["encoding_data_bits"], trunk["encoding_line_bits"]) == (8, 10)
    assert imported.skipped["CA port(s) beyond each CA's first connected one (a host has one NIC port)"] == 1
    # all four CAs share one description: each name adds the node's id
    assert sorted(g.nodes[h]["name"] for h in range(4)) == sorted(
        f"MT23108 InfiniHost Mellanox Technologies {c}" for c in re.findall(r'^Ca\s+\d+\s+"([^"]+)"', text, re.M)
    )


def test_hosts_come_first_leaf_by_leaf_and_a_tree_gets_tiers_from_its_hosts():
    g = read_ibnetdiscover(DATA / "ibnetdiscover-sdr-2hosts.topo").graph
    assert [g.nodes[n]["tier"] for n in g] == [0, 0, 1]
    # the switch lists compute-00-01 on port 1 and compute-00-00 on port 2
    assert [g.nodes[n]["name"] for n in (0, 1)] == ["compute-00-01 HCA-1", "compute-00-00 HCA-1"]


def test_a_leaf_spine_fabric_has_its_hosts_at_0_leaves_at_1_and_spines_at_2():
    """The NDR fabric: the switches its text cables to hosts are the ones named IBLEAF, the others IBSPINE,
    and each switch-to-switch cable joins a leaf and a spine; so it is tree-like, hosts at tier 0, leaves
    at 1, spines at 2, and its hosts come leaf by leaf (in file order), each leaf's in port order."""
    text = NDR.read_text()
    hosts, switches, edges = _expected_edges(text)
    named = dict(re.findall(r'^Switch\s+\d+\s+"([^"]+)"\s*#\s*"[^"]*?(IBLEAF|IBSPINE)', text, re.M))
    leaves = {s for pair in edges if pair & hosts for s in pair & switches}
    assert set(named) == switches and leaves == {s for s, kind in named.items() if kind == "IBLEAF"}
    spines = switches - leaves
    trunks = [pair for pair in edges if pair <= switches]
    assert trunks and all(len(pair & leaves) == len(pair & spines) == 1 for pair in trunks)
    assert {s for pair in trunks for s in pair & spines} == spines
    imported = read_ibnetdiscover(NDR)
    assert imported.tree_like and imported.roots == () and imported.same_tier_links == 0
    tier = {d["guid"]: d["tier"] for _, d in imported.graph.nodes(data=True)}
    assert tier == {**dict.fromkeys(hosts, 0), **dict.fromkeys(leaves, 1), **dict.fromkeys(spines, 2)}
    by_leaf: dict[str, list[tuple[int, str]]] = {}
    node = ""
    for line in text.splitlines():
        if m := re.match(r'(Switch|Ca)\s+\d+\s+"([^"]+)"', line):
            node = m[2]
        elif (m := re.match(r'\[(\d+)\]\s+"([^"]+)"', line)) and node in leaves and m[2] in hosts:
            by_leaf.setdefault(node, []).append((int(m[1]), m[2]))
    expected = [h for leaf in by_leaf for _, h in sorted(by_leaf[leaf])]  # dicts keep the file's order
    assert [imported.graph.nodes[n]["guid"] for n in range(len(hosts))] == expected


def test_loopback_cables_are_skipped_and_counted():
    path = DATA / "ibnetdiscover-mixed-ufm.topo"
    _, _, ports = _text_fabric(path.read_text())
    looped = sum(node == peer for node, _, peer, _, _ in ports)  # each loopback cable: two port lines
    assert looped > 0 and looped % 2 == 0
    assert read_ibnetdiscover(path).skipped["loopback cable(s) (two ports of one node)"] == looped // 2


SYNTHETIC = """
switchguid=0x10(10)
Switch\t8 "S-0000000000000010"\t\t# "spine" base port 0 lid 1 lmc 0
[1]\t"S-0000000000000020"[7]\t\t# "leaf" lid 2 4xNDR
[2]\t"S-0000000000000020"[8]\t\t# "leaf" lid 2 4xNDR
[3]\t"S-0000000000000030"[7]\t\t# "leaf" lid 3 4xHDR
[5]\t"H-00000000000000a0"[1](a1) \t\t# "Mellanox Technologies Aggregation Node" lid 9 4xNDR

Switch\t8 "S-0000000000000020"\t\t# "leaf" base port 0 lid 2 lmc 0
[1]\t"H-0000000000000001"[1](2) \t\t# "" lid 4 2xXDR
[2]\t"H-0000000000000003"[1](4) \t\t# "gpu HCA-1" lid 5 4xNDR
[3]\t"H-0000000000000003"[2](5) \t\t# "gpu HCA-1" lid 6 4xNDR
[7]\t"S-0000000000000010"[1]\t\t# "spine" lid 1 4xNDR
[8]\t"S-0000000000000010"[2]\t\t# "spine" lid 1 4xNDR

Switch\t8 "S-0000000000000030"\t\t# "leaf" base port 0 lid 3 lmc 0
[1]\t"H-0000000000000005"[1](6) \t\t# "gpu HCA-1" lid 7 4xHDR
[7]\t"S-0000000000000010"[3]\t\t# "spine" lid 1 4xHDR

Ca\t1 "H-00000000000000a0"\t\t# "Mellanox Technologies Aggregation Node"
[1](a1) \t"S-0000000000000010"[5]\t\t# lid 9 lmc 0 "spine" lid 1 4xNDR
Ca\t1 "H-0000000000000001"\t\t# ""
[1](2) \t"S-0000000000000020"[1]\t\t# lid 4 lmc 0 "leaf" lid 2 2xXDR
Ca\t2 "H-0000000000000003"\t\t# "gpu HCA-1"
Ca\t1 "H-0000000000000005"\t\t# "gpu HCA-1"
Ca\t1 "H-0000000000000007"\t\t# "spare HCA-1"
"""


def test_aggregation_nodes_spare_cas_unnamed_and_shared_names_and_ranks(tmp_path):
    path = tmp_path / "fabric.topo"
    path.write_text(SYNTHETIC)
    imported = read_ibnetdiscover(path)
    g = imported.graph
    assert imported.skipped["SHARP aggregation node(s) (not hosts)"] == 1
    assert imported.skipped["CA(s) with no connected port"] == 1  # the spare
    assert imported.skipped["CA port(s) beyond each CA's first connected one (a host has one NIC port)"] == 1
    names = [g.nodes[n]["name"] for n in range(3)]
    assert names == ["H-0000000000000001", "gpu HCA-1 H-0000000000000003", "gpu HCA-1 H-0000000000000005"]
    assert [g.nodes[n]["tier"] for n in g] == [0, 0, 0, 1, 1, 2] and imported.tree_like
    assert g.nodes[5]["name"] == "spine" and g[3][5]["parallel"] == 2
    assert g[0][3]["rate_bps"] == 2 * 212_500_000_000 and g[4][5]["rate_bps"] == 4 * 53_125_000_000
    # rooted at a leaf (by its GUID): that leaf is the top tier, the spine one below, the other leaf below it
    rooted = read_ibnetdiscover(path, roots=["0x30"])
    tiers = {d["guid"]: d["tier"] for _, d in rooted.graph.nodes(data=True) if d["tier"]}
    assert tiers == {"S-0000000000000020": 1, "S-0000000000000010": 2, "S-0000000000000030": 3}
    assert rooted.roots == ("leaf S-0000000000000030",) and rooted.tree_like


@pytest.mark.parametrize(
    ("speed", "data_gbps"),
    [
        *[("4xSDR", 8), ("4xDDR", 16), ("4xQDR", 32), ("4xFDR10", 40), ("4xEDR", 100), ("4xHDR", 200)],
        *[("4xNDR", 400), ("1xNDR", 100), ("2xXDR", 400), ("12xQDR", 96), ("8xHDR", 400)],
    ],
)
def test_lane_speeds_give_the_specifications_data_rates(speed, data_gbps):
    link = infiniband_link(speed)
    assert link.rate_bps == _rate_bps(speed)
    name = re.sub(r"^\d+x", "", speed)
    assert Fraction(link.encoding_data_bits, link.encoding_line_bits) == LANES[name][1]
    assert link.data_rate_bps == data_gbps * 10**9


def test_fdr_is_56_25_gbaud_with_64b_66b():
    link = infiniband_link("4xFDR")
    assert (link.rate_bps, link.encoding_data_bits, link.encoding_line_bits) == (56_250_000_000, 64, 66)


def test_an_imported_fabric_round_trips_and_runs_an_allgather(tmp_path, same_graph):
    path = DATA / "ibnetdiscover-mixed-ufm.topo"
    out = tmp_path / "ufm.graphml"
    assert main(["topo", "import", "ibnetdiscover", str(path), "-o", str(out)]) == 0
    g = read_topology_file(out)
    same_graph(g, read_ibnetdiscover(path).graph)
    hosts = summary(g)["hosts"]
    for algorithm in ("ring", "mcast"):
        result = Scenario(topology=str(out), algorithm=algorithm, bytes_per_rank="4KiB").run()
        assert result.complete and result.ranks == hosts
        assert (result.received_b >= (hosts - 1) * 4096).all()


def test_without_out_the_command_prints_what_it_read_and_the_summary(capsys):
    assert main(["topo", "import", "ibnetdiscover", str(MAN)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("imported ibnetdiscover-man-example: ")
    assert "not tree-like" in out and "topology ibnetdiscover-man-example" in out and "hosts             4" in out


GOOD_CA = 'Ca\t1 "H-01"\t\t# "a"\n[1](2) \t"S-02"[1]\t\t# lid 1 lmc 0 "s" lid 2 4xEDR\n'
GOOD_SWITCH = 'Switch\t8 "S-02"\t\t# "s" base port 0 lid 2 lmc 0\n[1]\t"H-01"[1](2) \t\t# "a" lid 1 4xEDR\n'


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", r"is empty; give the output of ibnetdiscover"),
        (b"\n  \n", r"is empty"),
        (bytes(range(256)), r"not ibnetdiscover output \(a binary file: byte 0x00 at 0\)"),
        (b"\xff\xfe", r"not ibnetdiscover output \(not UTF-8 text: byte 0xff at 0\)"),
        (b"# only a comment\n", r"holds no Switch or Ca block"),
        ((GOOD_SWITCH + "hello\n").encode(), r"line 3: not ibnetdiscover output: 'hello'$"),
        (b'[1]\t"S-02"[1]\t\t# "s" lid 2 4xEDR\n', r"line 1: a port line before any Switch or Ca line"),
        ((GOOD_SWITCH + GOOD_CA.replace('"S-02"', '"S-09"')).encode(), r"line 4: port \[1\] of H-01 leads to S-09"),
        (GOOD_SWITCH.replace("4xEDR", "4x???").encode(), r"line 2: InfiniBand link '4x\?\?\?' is not a width"),
        (GOOD_SWITCH.replace("4xEDR", "16xEDR").encode(), r"line 2: InfiniBand link '16xEDR' is not a width"),
        (GOOD_SWITCH.replace(" 4xEDR", "").encode(), r"line 2: no link width and speed"),
        ((GOOD_SWITCH + GOOD_SWITCH).encode(), r"line 3: node S-02 is declared again \(first on line 1\)"),
        (
            (GOOD_SWITCH + GOOD_CA.replace("[1]\t\t#", "[2]\t\t#")).encode(),
            r"line 2: port \[1\] of S-02 leads to H-01\[1\], but line 4 says that port leads to S-02\[2\]$",
        ),
        (GOOD_SWITCH.encode(), r"line 2: port \[1\] of S-02 leads to H-01, which no Switch or Ca block declares"),
        (
            b"CA    12  1  0x0002c9030004e939 4x QDR - SW     1 19 0x0008f1050020f2e4 ( 'a' - 's' )\n",
            r"line 1: not ibnetdiscover output: .*; a ports report \(ibnetdiscover -p\)\? give the topology \(no -p\)$",
        ),
        (
            (GOOD_SWITCH + GOOD_CA + GOOD_SWITCH.replace("S-02", "S-03").replace("H-01", "H-04")).encode()
            + GOOD_CA.replace("S-02", "S-03").replace("H-01", "H-04").encode(),
            r"graph is disconnected: 2 components",
        ),
        (GOOD_SWITCH.replace('"H-01"[1](2) ', '"S-02"[2]').encode(), r"graph has no host"),
    ],
)
def test_each_bad_dump_is_one_line_naming_the_file(tmp_path, content, message):
    path = tmp_path / "bad.topo"
    path.write_bytes(content)
    with pytest.raises(McsimError, match=r"^ibnetdiscover file '.*bad\.topo': .*" + message) as err:
        read_ibnetdiscover(path)
    assert "\n" not in str(err.value)


def test_a_missing_file_and_an_unknown_root_are_one_line(tmp_path):
    with pytest.raises(McsimError, match=r"^ibnetdiscover file '.*nope\.topo' does not exist$"):
        read_ibnetdiscover(tmp_path / "nope.topo")
    with pytest.raises(McsimError, match=r": root 'S-99' names no switch; give a switch's id or GUID"):
        read_ibnetdiscover(MAN, roots=["S-99"])


@pytest.mark.parametrize(
    ("roots", "message"),
    [  # issue 49: a string was read letter by letter ("root 'S' names no switch")
        (
            "S-0000000000000030",
            r": roots='S-0000000000000030' must be a list of switch names \(ids, GUIDs or descriptions\); for one "
            r"root, roots=\['S-0000000000000030'\]$",
        ),
        (3, r": roots=3 must be a list of switch names \(ids, GUIDs or descriptions\)$"),
        ([0x30], r": roots=\[48\] must be a list of switch names \(ids, GUIDs or descriptions\)$"),
    ],
)
def test_roots_that_are_no_list_of_names_are_one_line(roots, message):
    with pytest.raises(McsimError, match=rf"^ibnetdiscover file '.*'{message}"):
        read_ibnetdiscover(MAN, roots=roots)
