# SPDX-License-Identifier: GPL-2.0-only
"""What every run on one fabric shares: the topology, its nominal link rate, the fabric's and the NICs' configs,
the faults and the seed. A Scenario composes one (Scenario.setup), and so does a run of jobs (its collective steps
all run on it); the topology is read and laid out once per (topology, rate) and shared, read-only."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from mcsim import topology as topologies
from mcsim.config.codec import GraphTopology
from mcsim.config.fabric import FabricConfig, Faults
from mcsim.config.rdma import RdmaConfig
from mcsim.routing.layout import Layout, layout_of
from mcsim.topology.physics import Link, preset
from mcsim.units import parse_rate


@functools.lru_cache(maxsize=16)
def shared_graph(topo: str | GraphTopology, rate: str | None = None, ethernet: bool = False) -> nx.Graph[Any]:
    """The topology, every link at the nominal ``rate`` if given (``ethernet``: its Ethernet physical layer),
    shared by every run that names them: frozen (read-only); Setup.graph hands out copies."""
    if rate is not None:
        link = preset(parse_rate(rate), ethernet=ethernet)
        frozen: nx.Graph[Any] = nx.freeze(topologies.with_link(shared_graph(topo), link))
        return frozen
    given: nx.Graph[Any] = nx.freeze(topologies.resolve(topo) if isinstance(topo, str) else topo.graph())
    return given


@dataclass(frozen=True, slots=True, kw_only=True)
class Setup:
    """One fabric as every run on it sees it: ``topology`` (a name from topologies/, a file, or a GraphTopology),
    every link at the nominal ``rate`` if given (None: as the file), ``fabric`` (FabricConfig: switches, flow
    control, the seed of ECMP and of the faults' draws), ``rdma`` (RdmaConfig: the NICs, their MTU and wire format)
    and ``faults``. Plain data: the caller (Scenario, a run of jobs) has checked it."""

    topology: str | GraphTopology = "testbed-188"
    rate: str | None = None
    fabric: FabricConfig = field(default_factory=FabricConfig)
    rdma: RdmaConfig = field(default_factory=RdmaConfig)
    faults: Faults | None = None

    @property
    def seed(self) -> int:
        """The seed of ECMP's hash and of the faults' random draws (FabricConfig.seed)."""
        return self.fabric.seed

    def base_graph(self) -> nx.Graph[Any]:
        """The topology as given (the file's rates), for reading only (shared)."""
        return shared_graph(self.topology)

    def graph(self) -> nx.Graph[Any]:
        """The topology at the link rate (on a RoCEv2 fabric its Ethernet physical layer), for reading only
        (shared)."""
        return shared_graph(self.topology, self.rate, self.rdma.wire_format == "rocev2")

    def layout(self) -> Layout:
        """The Layout of :meth:`graph` (its ports and routes' tables): validated and laid out once, kept by the
        shared graph."""
        return layout_of(self.graph())

    @property
    def hosts(self) -> int:
        """The topology's hosts."""
        return topologies.host_count(self.base_graph())

    @property
    def data_rate_bps(self) -> int:
        """The data rate of host 0's link (after encoding)."""
        g = self.graph()
        return Link.from_edge(g.edges[0, next(iter(g.neighbors(0)))]).data_rate_bps
