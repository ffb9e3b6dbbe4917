# SPDX-License-Identifier: GPL-2.0-only
"""What a run will cost before it runs (packets, trees, memory), and the memory it may take on this
machine (MemAvailable, ulimit -v / -d, the cgroup's limit): a run that would not fit is one line."""

import re

import networkx as nx
import pytest

from mcsim import topology
from mcsim.config.collectives import EVERY_ALGORITHM, HIERARCHICAL, NVLS_HIERARCHICAL
from mcsim.config.rdma import GPU_RECEIVE, MAX_QP_WR, RdmaConfig
from mcsim.errors import McsimError
from mcsim.routing import routes
from mcsim.routing.layout import layout_of
from mcsim.runs.cost import PROCESS_B
from mcsim.runs.scenario import Scenario
from mcsim.runs.stream import two_hosts
from mcsim.topology.physics import Link
from mcsim.util import machine

QP = rf"\(a ConnectX queue holds at most {MAX_QP_WR} work requests, max_qp_wr\)"
BUF, ONE_PACKET = "a lossless buffer", "a lossless buffer holds at least one largest packet"
DELAY = r"must be <= 1000000000000 \(1 s, 200,000 km of fibre: delays add up along routes"


# ---------------------------------------------------------------------------------------------
# what a run costs, before it runs


def test_estimate_counts_ring_packets_from_the_closed_form():
    sc = Scenario(topology="fat-tree-k4", algorithm="ring", bytes_per_rank="100000", ring_chunk="64KiB")
    e = sc.estimate()
    per_shard = 16 + 9  # a 65536 B WRITE is 16 packets of 4 KiB, the other 34464 B are 9 (the last one short)
    assert e["hops_bound"] == 6  # host-edge-agg-core-agg-edge-host
    assert e["packets"] == 16 * 15 * per_shard * 6
    assert e["bitmap_b"] == 0 and e["verify_b"] == 0
    # the fabric: 36 nodes and 48 edges of graph, and 2 x 4 B x 20 switches x (2 x 16 hosts + 1) of tables
    assert e["fabric_b"] == (36 + 48) * machine.GRAPH_B_PER_ELEMENT + 2 * 4 * 20 * 33
    assert e["memory_b"] == PROCESS_B + e["fabric_b"] + e["send_queue_b"]


def test_estimate_bounds_the_multicast_tree_and_counts_the_bitmaps():
    sc = Scenario(topology="fat-tree-k4", algorithm="mcast", bytes_per_rank="100000")
    e = sc.estimate()
    chunks = -(-100_000 // 4096)  # 25
    g = topology.resolve("fat-tree-k4")
    switch_links = min(20 - 1, 15 * (6 - 2))  # a tree over the 20 switches; each member leaf 4 switch links away
    assert e["tree_links_bound"] == 16 + switch_links
    assert e["packets"] == 16 * chunks * e["tree_links_bound"]
    # the routed tree really is within the bound: 16 host links + 8 edge-agg + 4 agg-core
    assert len(routes.multicast_tree(layout_of(g), range(16)).tree_links) <= e["tree_links_bound"]
    assert e["bitmap_b"] == 16 * 16 * chunks  # P^2 chunks: every rank keeps one byte per chunk of the output


# every algorithm of every collective, and the overlapped Reduce-Scatters: at 64 KiB on 16 ranks every data packet
# carries a whole MTU of payload (the Allreduces' blocks are N/P = 4 KiB), so a run's data packet-hops are at most
# the bytes its ports sent / MTU (the headers, ACKs and control packets only add to that), and at most its packets
RAIL_4X4 = "rail-4x4"  # 4 nodes of 4 H100s, a 400G NIC per GPU, 4 rails, 2 spines
RUNS = [{"collective": c, "algorithm": a} for c, a in EVERY_ALGORITHM] + [
    {"collective": "allgather", "algorithm": a, "overlap": "reduce_scatter", "overlap_algorithm": o}
    for a in ("ring", "mcast")
    for o in ("ring", "innet")
]


@pytest.mark.parametrize("run", RUNS, ids=lambda run: "-".join(run.values()))
def test_estimate_bounds_every_algorithm_s_data_packet_hops(run):
    hierarchical = (run["collective"], run["algorithm"]) in HIERARCHICAL  # on nodes of several GPUs
    nvls = {"rdma": RdmaConfig(staging=False, processor=GPU_RECEIVE)} if run["algorithm"] in NVLS_HIERARCHICAL else {}
    sc = Scenario(topology=RAIL_4X4 if hierarchical else "fat-tree-k4", bytes_per_rank="64KiB", **run, **nvls)
    mtu = sc.rdma.mtu_b
    estimate = sc.estimate()["packets"]
    r = sc.run()
    assert int(r.nic["tx_payload"].sum()) % mtu == 0  # the hosts sent whole MTUs only
    sent = r.fabric.ports
    data_hops = min(int(sent["tx_packets"].sum()), int(sent["tx_bytes"].sum()) // mtu)
    assert 0 < data_hops <= estimate


def test_estimate_of_verify_mode_counts_every_copy_of_the_output():
    sc = Scenario(topology="fat-tree-k4", algorithm="ring", bytes_per_rank="1MiB", verify=True)
    output = 16 << 20
    assert sc.estimate()["verify_b"] == 2 * 16 * output + 2 * output + 24 * (1 << 20)


def test_check_resources_refuses_what_does_not_fit_in_one_line():
    sc = Scenario(topology="fat-tree-k16", algorithm="ring", bytes_per_rank="64KiB", verify=True)
    need = sc.estimate()["memory_b"]
    assert need > 2 * 1024 * (64 << 20)  # 1024 ranks x 64 MiB of output, twice
    sc.check_resources(available_b=need)  # exactly enough
    with pytest.raises(
        McsimError, match=r"^Scenario: needs ~1[23]\d GiB \(process 0.293, fabric 0.00632, verify 1[23]\d"
    ) as info:
        sc.check_resources(available_b=need - 1)
    message = str(info.value)
    assert "\n" not in message
    assert message.endswith("available; use fewer ranks or a smaller bytes_per_rank, or verify=False")


def test_check_resources_reads_this_machines_memory():
    # 1024 ranks x 64 MiB x 2 = 128 GiB: more than a test machine has; the message gives both numbers
    sc = Scenario(topology="fat-tree-k16", algorithm="ring", bytes_per_rank="64KiB", verify=True)
    with pytest.raises(McsimError, match=r"^Scenario: needs ~1[23]\d GiB .*, this machine has [\d.]+ GiB available"):
        sc.check_resources()
    Scenario(topology="fat-tree-k4", bytes_per_rank="4KiB").check_resources()  # a small run fits


def test_a_large_multicast_bitmap_is_refused():
    sc = Scenario(topology="fat-tree-k16", algorithm="mcast", bytes_per_rank="64KiB")  # 1024 x 1024 x 16 chunks
    assert sc.estimate()["bitmap_b"] == 1024 * 1024 * 16
    with pytest.raises(
        McsimError, match=r"^Scenario: needs ~0.315 GiB \(process 0.293, fabric 0.00632, bitmap 0.0156 GiB\)"
    ):
        sc.check_resources(available_b=300 << 20)


LINK_100G = {"rate_bps": 10**11, "delay_ps": 0}


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: topology.fat_tree(200, **LINK_100G), r"^fat_tree: k=200 \(2000000 hosts, 50000 switches"),
        (lambda: topology.leaf_spine(4000, 500, 500, **LINK_100G), r"^leaf_spine: 2000000 hosts, 4500 switches"),
        # nodes of several GPUs: a file may ask for any count (nvswitches and switch_ports lift the port checks)
        (lambda: topology.nvlink_node(2_000_000, nvswitches=10**6), r"^nvlink_node: 2000000 GPUs, 2000001 switches"),
        (
            lambda: topology.rail_optimised(250_000, 8, switch_ports=10**7, **LINK_100G),
            r"^rail_optimised: 2000000 GPUs, 4250008 switches",
        ),
    ],
)
def test_a_fabric_too_big_for_this_machine_is_refused_before_it_is_built(build, message, monkeypatch):
    def no_graph(*args, **kwargs):
        raise AssertionError("the graph was being built")

    monkeypatch.setattr(nx, "Graph", no_graph)  # refused from the counts alone
    with pytest.raises(
        McsimError, match=message + r".* needs at least [\d.]+ GiB, this machine has [\d.]+ GiB available$"
    ):
        build()


def test_the_fabric_memory_bound_is_below_what_a_built_fabric_takes():
    import tracemalloc

    tracemalloc.start()
    g = topology.fat_tree(16, rate_bps=10**11, delay_ps=0)
    tables = routes.unicast_tables(layout_of(g))
    used, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert tables.candidates.size > 0
    # the bound counts the tables twice (Python and C++); here only Python's copy exists
    python_part = machine.fabric_memory_b(1024, 320, 3072) - 4 * 320 * (2 * 1024 + 1)
    assert python_part <= used


# ---------------------------------------------------------------------------------------------
# topology diameter


@pytest.mark.parametrize(
    ("g", "hops"),
    [
        (two_hosts(Link(rate_bps=10**11, encoding_data_bits=1, encoding_line_bits=1)), 1),
        (topology.leaf_spine(1, 0, 5, rate_bps=10**11, delay_ps=0), 2),
        (topology.leaf_spine(2, 1, [1, 1], rate_bps=10**11, delay_ps=0), 4),
        (topology.leaf_spine(2, 1, [3, 1], rate_bps=10**11, delay_ps=0), 4),
        (topology.fat_tree(4, rate_bps=10**11, delay_ps=0), 6),
    ],
    ids=["two-hosts", "star", "one-host-per-leaf", "leaf-spine", "fat-tree-k4"],
)
def test_diameter_is_the_largest_host_to_host_hop_count(g, hops):
    assert topology.diameter_hops(g) == hops
    shortest = dict(nx.all_pairs_shortest_path_length(g))
    n = topology.host_count(g)
    assert hops == max(shortest[a][b] for a in range(n) for b in range(n))


# ---------------------------------------------------------------------------------------------
# memory: the least of MemAvailable, ulimit -v / -d and the cgroup's limit


def _fake_rlimit(monkeypatch, limit, spare_b):
    """A soft limit ``limit`` (resource.RLIMIT_AS or RLIMIT_DATA) of what the process maps now plus spare_b."""
    import resource

    used = machine._status_b("VmSize" if limit == resource.RLIMIT_AS else "VmData")
    real = resource.getrlimit
    monkeypatch.setattr(
        resource, "getrlimit", lambda which: (used + spare_b, resource.RLIM_INFINITY) if which == limit else real(which)
    )


VERIFY_4MIB = {"topology": "fat-tree-k4", "algorithm": "ring", "bytes_per_rank": "4MiB", "verify": True}


@pytest.mark.parametrize(
    ("limit", "bound"),
    [("RLIMIT_AS", r"the address-space limit \(ulimit -v\)"), ("RLIMIT_DATA", r"the data-segment limit \(ulimit -d\)")],
)
def test_a_process_limit_bounds_the_memory_a_run_may_take(monkeypatch, limit, bound):
    import resource

    _fake_rlimit(monkeypatch, getattr(resource, limit), 1 << 30)
    found = machine.available_memory()
    assert found is not None and re.fullmatch(bound, found.bound)
    assert (1 << 30) - (64 << 20) <= found.available_b <= 1 << 30  # the process may map a little more meanwhile
    with pytest.raises(
        McsimError,
        match=rf"^Scenario: needs ~2\.51 GiB \(.*\), this process can take (1|0\.9\d*) GiB more \({bound}\); "
        r"use fewer ranks or a smaller bytes_per_rank, or verify=False$",
    ):
        Scenario(**VERIFY_4MIB).check_resources()
    with pytest.raises(
        McsimError,
        match=rf"^fat_tree: k=48 .* needs at least 1\.2 GiB, this process can take (1|0\.9\d*) GiB more \({bound}\)$",
    ):
        topology.fat_tree(48, rate_bps=10**9, delay_ps=0)


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"memory.max": "2147483648\n", "memory.current": "1610612736\n"}, (512 << 20, "memory.max")),
        ({"memory.limit_in_bytes": "1073741824\n", "memory.usage_in_bytes": "0\n"}, (1 << 30, "memory.limit_in_bytes")),
        ({"memory.max": "max\n", "memory.current": "1\n"}, None),
        ({"memory.limit_in_bytes": "9223372036854771712\n", "memory.usage_in_bytes": "1\n"}, None),
        ({}, None),
    ],
)
def test_a_cgroup_memory_limit_bounds_the_memory_a_run_may_take(monkeypatch, tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.setattr(machine, "_cgroup_dirs", lambda: [tmp_path])
    if expected is None:
        assert machine._cgroup() is None
        return
    b, name = expected
    assert machine._cgroup() == machine.Memory(b, f"the cgroup's memory limit ({name})")
    assert machine.available_memory() == machine.Memory(b, f"the cgroup's memory limit ({name})")
    with pytest.raises(
        McsimError, match=rf", this process can take [\d.]+ GiB more \(the cgroup's memory limit \({name}\)\);"
    ):
        Scenario(**VERIFY_4MIB).check_resources()


def test_the_cli_under_ulimit_v_refuses_a_run_that_would_not_fit_in_one_line():
    import subprocess
    import sys

    run = "-m mcsim allgather --topology fat-tree-k4 --size 4MiB --algo ring --verify"
    cmd = f"ulimit -v 1500000; exec {sys.executable} {run}"  # 1.4 GiB of address space, ~0.2 already mapped
    proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert re.fullmatch(
        r"mcsim: error: Scenario: needs ~2\.51 GiB \(.*\), this process can take [\d.]+ GiB more "
        r"\(the address-space limit \(ulimit -v\)\); use fewer ranks or a smaller bytes_per_rank, or verify=False\n",
        proc.stderr,
    )


def test_a_python_allocation_failing_in_a_run_is_one_line(monkeypatch):
    sc = Scenario(topology="fat-tree-k4", bytes_per_rank="4KiB")

    def fail():
        raise MemoryError

    monkeypatch.setattr(Scenario, "_run", lambda self, *observers: fail())
    with pytest.raises(
        McsimError, match=r"^Scenario\.run: out of memory \(a Python allocation failed\) although the run "
    ):
        sc.run()
