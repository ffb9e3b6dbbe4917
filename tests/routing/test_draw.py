# SPDX-License-Identifier: GPL-2.0-only
"""The picture of a fabric (mcsim topo draw): every host, switch and link of the topology where its tier
says, a line style per rate, a group's multicast tree and aggregation tree as the fabric builds them (and
their link counts from the closed form of a two-tier tree); the files it writes; bad input in one line."""

import pytest

from mcsim import topology
from mcsim.cli import main
from mcsim.errors import McsimError
from mcsim.routing.draw import LINE_STYLES, drawing_of, write_drawing
from mcsim.routing.layout import layout_of
from mcsim.routing.routes import aggregation_trees, multicast_tree
from mcsim.util.options import parse_hosts as parse_group


def pairs(links) -> frozenset:
    return frozenset((min(u, v), max(u, v)) for u, _, v, _ in links)


def test_the_testbed_s_picture_holds_every_host_switch_and_link_by_tier():
    g = topology.resolve("testbed-188")
    d = drawing_of(g)
    assert d.hosts == 188 and len(d.tiers[0]) == 188
    assert sum(len(row) for t, row in d.tiers.items() if t > 0) == 18
    for tier, row in d.tiers.items():
        assert all(g.nodes[n]["tier"] == tier and d.positions[n][1] == tier for n in row)
        xs = [d.positions[n][0] for n in row]
        assert xs == sorted(xs) and 0 < xs[0] and xs[-1] < 1  # in id order across the width
    assert len(d.links) == g.number_of_edges()
    assert sum(p for *_, p in d.links) == sum(g.edges[e]["parallel"] for e in g.edges)
    assert d.rate_styles == {56_250_000_000: LINE_STYLES[0]}  # FDR everywhere: one style


def test_rates_get_a_style_each_fastest_first():
    g = topology.general_fat_tree(
        pods=2, tors_per_pod=2, aggs_per_pod=2, cores_per_agg=1, hosts_per_tor=2, rate_bps=100 * 10**9, delay_ps=1,
        tor_uplink_rate_bps=50 * 10**9, agg_uplink_rate_bps=25 * 10**9,
    )  # fmt: skip
    d = drawing_of(g)
    assert d.rate_styles == {100 * 10**9: "-", 50 * 10**9: "--", 25 * 10**9: ":"}


@pytest.mark.parametrize(
    ("group", "leaves"),
    [((0, 1, 2), 1), ((0, 50, 100, 150, 187), 5), (tuple(range(0, 188, 4)), 12)],
)
def test_a_group_s_trees_are_the_fabric_s(group, leaves):
    # on a leaf-spine, a tree spans each member's host link, and, across leaves, one spine's link to each
    # member leaf (rooted at the leaf when all members share one)
    g = topology.resolve("testbed-188")
    d = drawing_of(g, group, aggregation=True)
    layout = layout_of(g)
    assert d.tree == pairs(multicast_tree(layout, group).tree_links)
    assert d.aggregation == pairs(aggregation_trees(layout, group, 1)[0].tree_links)
    assert len(d.tree) == len(group) + (leaves if leaves > 1 else 0)
    assert d.members == group and g.nodes[d.root]["tier"] == (1 if leaves == 1 else 2)


def test_the_files_carry_every_kind_of_mark(tmp_path):
    pytest.importorskip("matplotlib")
    d = drawing_of(topology.resolve("testbed-188"), (0, 50, 100), aggregation=True)
    svg = tmp_path / "f.svg"
    write_drawing(d, svg)
    text = svg.read_text()
    assert text.startswith("<?xml") and "188 hosts, 18 switches" in text
    for gid in ("hosts", "switches", "links", "tree", "aggregation", "members", "root"):
        assert f'id="{gid}' in text, gid
    png = tmp_path / "f.png"
    write_drawing(d, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_the_command_draws_and_says_what(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "ft.svg"
    assert main(["topo", "draw", "fat-tree-k4", "--group", "0-3,8", "-o", str(out)]) == 0
    assert out.stat().st_size > 0
    line = capsys.readouterr().out.strip()
    g = topology.resolve("fat-tree-k4")
    tree = multicast_tree(layout_of(g), (0, 1, 2, 3, 8))
    cables = sum(g.edges[e]["parallel"] for e in g.edges)
    assert line == (
        f"{out}: fat-tree-k4: 16 hosts, 20 switches, {cables} links; group of 5 hosts: multicast tree of "
        f"{len(tree.tree_links)} links from {g.nodes[tree.root]['name']}"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("5-2", r"^--group='5-2': 5-2 is not a range of hosts 0\.\.15$"),
        ("0-16", r"0-16 is not a range of hosts 0\.\.15"),
        ("a,b", r"^--group='a,b': give hosts as 0,3,5 or ranges as 0-15, or all$"),
        ("", r"give hosts as"),
        ("3,3", None),
    ],
)
def test_a_group_is_hosts_or_ranges(text, message):
    if message is None:
        assert parse_group(text, 16) == (3,)
        return
    with pytest.raises(McsimError, match=message):
        parse_group(text, 16)


def test_bad_drawings_are_one_line(tmp_path):
    g = topology.resolve("fat-tree-k4")
    with pytest.raises(McsimError, match=r"^--aggregation: give the group"):
        drawing_of(g, (), aggregation=True)
    with pytest.raises(McsimError, match=r"^-o '.*f\.pdf': give a file ending in \.svg or \.png$"):
        write_drawing(drawing_of(g), tmp_path / "f.pdf")
