# SPDX-License-Identifier: GPL-2.0-only
"""Shared fixtures: a private copy of ns3_modules/ and a private build cache."""

import shutil
from pathlib import Path

import networkx as nx
import pytest

from mcsim import topology

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def module_sources(tmp_path_factory) -> Path:
    """A copy of ns3_modules/ that a test module may edit (restore what you change)."""
    dst = tmp_path_factory.mktemp("src") / "ns3_modules"
    shutil.copytree(REPO / "mcsim" / "ns3_modules", dst)
    return dst


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory) -> Path:
    """A build cache private to one test module."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def star(tmp_path):
    """star(hosts) -> the path of a topology file: hosts hosts on one switch, 100 Gbit/s links."""

    def make(hosts: int) -> str:
        path = tmp_path / f"star-{hosts}.toml"
        path.write_text(
            f'name = "star-{hosts}"\ndescription = "{hosts} hosts on one switch"\n[builder]\nname = "leaf_spine"\n'
            f'leaves = 1\nspines = 0\nhosts_per_leaf = {hosts}\nrate = "100Gbps"\nencoding = "none"\ndelay = "100ns"\n'
        )
        return str(path)

    return make


@pytest.fixture
def star_graph():
    """star_graph(hosts) -> the graph of star(hosts), for a Scenario (no file needed)."""

    def make(hosts: int) -> nx.Graph:
        g = topology.leaf_spine(1, 0, hosts, rate_bps=100 * 10**9, delay_ps=100_000)
        g.graph.update(name=f"star-{hosts}", description=f"{hosts} hosts on one switch")
        return g

    return make
