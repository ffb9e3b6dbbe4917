# SPDX-License-Identifier: GPL-2.0-only
"""Property test: under any mix of random loss, chosen drops and a switch link that fails (for a
while or for good, with the subnet manager routing around it), every collective ends complete and
byte-exact in verify mode.

The transport is given unlimited retries (RcConfig(retry_cnt=None)): with InfiniBand's limit of 7
retries an RC QP may legitimately give up at high loss, which is a different property (the run then
ends incomplete and says why). A fast subset runs in every CI run; the big sweep is marked slow.
"""

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcsim import topology
from mcsim.config.fabric import FOREVER, Faults
from mcsim.config.rdma import RcConfig
from mcsim.routing.layout import port_map
from mcsim.runs.scenario import scenario_of

LINK = {"rate_bps": 100 * 10**9, "delay_ps": 100_000}
US = 1_000_000  # ps


def _graphs() -> dict[str, nx.Graph]:
    return {
        "star": topology.leaf_spine(1, 0, 6, **LINK),
        "leaf-spine": topology.leaf_spine(2, 2, 4, **LINK),
        "fat-tree-k4": topology.resolve("fat-tree-k4"),
    }


GRAPHS = _graphs()


@pytest.fixture(scope="module")
def topology_files(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("topologies")
    files = {}
    for name, g in GRAPHS.items():
        if name in topology.available():
            files[name] = name
        else:
            topology.write_topology_file(g, folder / f"{name}.toml")
            files[name] = str(folder / f"{name}.toml")
    return files


def switch_links(g: nx.Graph) -> list[tuple[int, int]]:
    hosts = topology.host_count(g)
    return sorted((min(u, v), max(u, v)) for u, v in g.edges if u >= hosts and v >= hosts)


@st.composite
def runs(draw, sizes=(4096, 10_000, 65_536), max_drops=4, last_index=400):
    name = draw(st.sampled_from(sorted(GRAPHS)))
    g = GRAPHS[name]
    hosts = topology.host_count(g)
    collective, algorithm = draw(
        st.sampled_from([("allgather", "ring"), ("allgather", "mcast"), ("broadcast", "mcast")])
    )
    ranks = draw(st.integers(2, hosts))
    size = draw(st.sampled_from(sizes))
    loss = draw(st.sampled_from([0.0, 1e-4, 1e-3, 1e-2, 3e-2, 1e-1]))
    ports = port_map(g)
    drops = draw(
        st.lists(
            st.tuples(st.integers(0, g.number_of_nodes() - 1), st.integers(0, 63), st.integers(0, last_index)),
            max_size=max_drops,
            unique=True,
        )
    )
    drops = [(n, p % len(ports[n]), i) for n, p, i in drops]
    drops = list(dict.fromkeys(drops))  # the modulo may make two equal
    link_down = []
    links = switch_links(g)
    if links and draw(st.booleans()):
        u, v = draw(st.sampled_from(links))
        down = draw(st.integers(0, 200)) * US
        up = draw(st.one_of(st.just(FOREVER), st.integers(1, 500).map(lambda d: down + d * US)))
        link_down.append((u, v, down, up))
    reroute = draw(st.sampled_from([1 * US, 50 * US, 1_000 * US]))
    faults = Faults(drops=drops, link_down=link_down, reroute_delay_ps=reroute)
    seed = draw(st.integers(1, 2**16))
    root = draw(st.integers(0, ranks - 1))
    endpoints = draw(st.sampled_from([1, 1, 2, 3])) if algorithm == "mcast" else 1
    return dict(
        endpoints=endpoints,
        topology=name,
        collective=collective,
        algorithm=algorithm,
        ranks=ranks,
        bytes_per_rank=str(size),
        loss=loss,
        faults=faults,
        seed=seed,
        root=root if collective == "broadcast" else 0,
    )


def check_recovers(topology_files: dict[str, str], case: dict) -> None:
    kwargs = dict(case, topology=topology_files[case["topology"]])
    r = scenario_of(verify=True, rc=RcConfig(retry_cnt=None), **kwargs).run()
    assert r.complete, (case, r.finish_ps)
    assert r.verified, (case, r.wrong_bytes)
    assert int(np.asarray(r.wrong_bytes).sum()) == 0
    assert int(r.nic["rc_errors"].sum()) == 0
    lost = sum(r.fabric.drops_by_cause().values()) + int(r.rank["receive_drops"].sum())  # wire + no buffer
    if lost == 0:  # nothing lost: nothing to repair, no early fetch, no RC recovery
        assert int(r.rank["need_fetches"].sum()) == 0 and int(r.rank["repair_reads"].sum()) == 0
        assert int(r.nic["retransmits"].sum()) == 0 and int(r.nic["rc_timeouts"].sum()) == 0


SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])


@settings(max_examples=60, **SETTINGS)
@given(case=runs())
def test_every_collective_recovers_from_loss_drops_and_a_failed_link(topology_files, case):
    check_recovers(topology_files, case)


@pytest.mark.slow
@settings(max_examples=1500, **SETTINGS)
@given(case=runs(sizes=(4096, 10_000, 65_536, 100_000, 262_144), max_drops=12, last_index=3000))
def test_every_collective_recovers_big_sweep(topology_files, case):
    check_recovers(topology_files, case)
