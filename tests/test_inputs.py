# SPDX-License-Identifier: GPL-2.0-only
"""Bad input is one McsimError line before any C++ exists: every Scenario field, faults files and
the files given to a Scenario (costs and memory: tests/runs/test_cost_and_memory.py)."""

import math
import re

import networkx as nx
import numpy as np
import pytest

from mcsim import topology
from mcsim.config.fabric import DEFAULT_REROUTE_DELAY_PS, FabricConfig, Faults
from mcsim.config.faults_file import load_faults, read_faults
from mcsim.config.rdma import MAX_ENDPOINTS, MAX_QP_WR, RcConfig, RcOp
from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario, scenario_of
from mcsim.runs.stream import two_hosts
from mcsim.topology.physics import Link

QP = rf"\(a ConnectX queue holds at most {MAX_QP_WR} work requests, max_qp_wr\)"
BUF, ONE_PACKET = "a lossless buffer", "a lossless buffer holds at least one largest packet"
DELAY = r"must be <= 1000000000000 \(1 s, 200,000 km of fibre: delays add up along routes"


def _with_edges(**attrs) -> nx.Graph:
    """fat-tree-k4 as a graph, every link's attributes changed as given (unchecked)."""
    g = topology.resolve("fat-tree-k4").copy()
    for u, v in g.edges:
        g.edges[u, v].update(attrs)
    return g


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ranks": "4"}, r"^Scenario: ranks='4' must be an integer 2..16 \(the hosts of fat-tree-k4\)$"),
        ({"ranks": 4.0}, r"^Scenario: ranks=4.0 must be an integer 2..16"),
        ({"ranks": True}, r"^Scenario: ranks=True must be an integer 2..16"),
        ({"ranks": 0}, r"^Scenario: ranks=0 must be 2..16 \(the hosts of fat-tree-k4\)$"),
        ({"roots": "2"}, r"^Scenario: roots='2' must be an integer 1..16 \(the ranks\)$"),
        ({"roots": 2.0}, r"^Scenario: roots=2.0 must be an integer 1..16"),
        ({"roots": 0}, r"^Scenario: roots=0 must be 1..16 \(the ranks\)$"),
        ({"root": "0"}, r"^Scenario: root='0' must be an integer 0..15 \(a rank\)$"),
        ({"root": 0.0}, r"^Scenario: root=0.0 must be an integer 0..15"),
        ({"root": -1}, r"^Scenario: root=-1 must be 0..15 \(a rank\)$"),
        # a field the collective does not read (the CLI refuses its option): issue 49
        *(
            (
                {"root": 3, "collective": c, "algorithm": a},
                rf"^Scenario: root=3 is for collective='broadcast' and 'reduce' \(the rank that sends or gets the "
                rf"buffer\); collective='{c}' has no root$",
            )
            for c, a in (
                ("allgather", "mcast"),
                ("allgather", "ring"),
                ("reduce_scatter", "ring"),
                ("allreduce", "ring_mcast"),
                ("alltoall", "pairwise"),
            )
        ),
        (
            {"overlap_algorithm": "innet"},
            r"^Scenario: overlap_algorithm='innet' is the algorithm of overlap='reduce_scatter'; give "
            r"overlap='reduce_scatter' or leave overlap_algorithm out$",
        ),
        ({"timeout_scale": "5"}, r"^Scenario: timeout_scale='5' must be a finite number > 0 \(int or float\)$"),
        ({"timeout_scale": True}, r"^Scenario: timeout_scale=True must be a finite number > 0"),
        ({"timeout_scale": 0}, r"^Scenario: timeout_scale=0 must be a finite number > 0"),
        ({"timeout_scale": -1.5}, r"^Scenario: timeout_scale=-1.5 must be a finite number > 0"),
        ({"timeout_scale": math.inf}, r"^Scenario: timeout_scale=inf must be a finite number > 0"),
        ({"timeout_scale": math.nan}, r"^Scenario: timeout_scale=nan must be a finite number > 0"),
        (
            {"timeout_scale": 1e300},
            r"^Scenario: timeout_scale=1e\+300 makes a data timeout of inf ps, "
            r"past 2\^62 ps = 53.4 days, the simulated clock's limit$",
        ),
        ({"timeout_scale": 1e10}, r"^Scenario: timeout_scale=10000000000.0 makes a data timeout of 2.\d+e\+19 ps"),
        (  # the receive bound N(P-1)/BW alone (15 x 1 MiB x 8 bit at 1 bit/s) is past the clock
            {"rate": "1bps", "algorithm": "ring"},
            r"^Scenario: each rank must move 15728640 B at 1bps \(rate='1bps', bytes_per_rank='1MiB'\): at least "
            r"1.258e\+08 s, past 2\^62 ps = 53.4 days, the simulated clock's limit; raise the rate or lower",
        ),
        (  # the same before the multicast's data timeout (5 x the bound) is looked at
            {"rate": "1bps"},
            r"^Scenario: each rank must move 15728640 B at 1bps",
        ),
        (  # a Broadcast's bound is N/BW (1 MiB x 8 bit at 1 bit/s: 97 days), not N(P-1)/BW
            {"rate": "1bps", "collective": "broadcast"},
            r"^Scenario: each rank must move 1048576 B at 1bps \(rate='1bps', bytes_per_rank='1MiB'\): at least "
            r"8.389e\+06 s, past",
        ),
        ({"batch": "8"}, rf"^Scenario: batch='8' must be an integer 1..{MAX_QP_WR} {QP}$"),
        ({"batch": 8.0}, rf"^Scenario: batch=8.0 must be an integer 1..{MAX_QP_WR}"),
        ({"batch": 0}, rf"^Scenario: batch=0 must be 1..{MAX_QP_WR} {QP}$"),
        ({"batch": 10**12}, rf"^Scenario: batch=1000000000000 must be 1..{MAX_QP_WR} {QP}$"),
        ({"rq_depth": "8"}, rf"^Scenario: rq_depth='8' must be an integer 1..{MAX_QP_WR} {QP}$"),
        ({"rq_depth": 8.5}, rf"^Scenario: rq_depth=8.5 must be an integer 1..{MAX_QP_WR}"),
        ({"rq_depth": -1}, rf"^Scenario: rq_depth=-1 must be 1..{MAX_QP_WR}"),
        ({"endpoints": "2"}, rf"^Scenario: endpoints='2' must be an integer 1..{MAX_ENDPOINTS}: each endpoint"),
        ({"endpoints": 2.0}, rf"^Scenario: endpoints=2.0 must be an integer 1..{MAX_ENDPOINTS}"),
        ({"endpoints": 0}, rf"^Scenario: endpoints=0 must be 1..{MAX_ENDPOINTS}"),
        (
            {"endpoints": 100_000},
            rf"^Scenario: endpoints=100000 must be 1..{MAX_ENDPOINTS}: each endpoint is one UD QP per rank in a "
            rf"multicast group of its own, and an InfiniBand subnet has {MAX_ENDPOINTS} multicast LIDs",
        ),
        ({"seed": "1"}, r"^Scenario: seed='1' must be an integer 0..18446744073709551615$"),
        ({"seed": 1.5}, r"^Scenario: seed=1.5 must be an integer"),
        ({"seed": -1}, r"^Scenario: seed=-1 must be 0..18446744073709551615$"),
        ({"seed": 2**64}, r"^Scenario: seed=18446744073709551616 must be 0..18446744073709551615$"),
        ({"reduce_ps_per_byte": 0.5}, r"^Scenario: reduce_ps_per_byte=0.5 must be an integer >= 0$"),
        # NCCL's protocols: a name, and only on rings (every team of the run, the overlap's too)
        ({"nccl_protocol": 3}, r"^Scenario: nccl_protocol=3 must be a string$"),
        ({"nccl_protocol": None}, r"^Scenario: nccl_protocol=None must be a string$"),
        (
            {"algorithm": "ring", "nccl_protocol": "ll256"},
            r"^unknown nccl_protocol 'll256'; choose one of ll, ll128, none, simple; did you mean 'll128'\?$",
        ),
        (
            {"algorithm": "mcast", "nccl_protocol": "ll"},
            r"^Scenario: nccl_protocol='ll' is NCCL's: it runs on NCCL's .*",
        ),
        (
            {"collective": "allreduce", "algorithm": "halving_doubling", "nccl_protocol": "ll128"},
            r"^Scenario: nccl_protocol='ll128' is NCCL's: .* this run has allreduce halving_doubling \(mcsim's",
        ),
        (
            {"algorithm": "ring", "overlap": "reduce_scatter", "overlap_algorithm": "innet", "nccl_protocol": "simple"},
            r"^Scenario: nccl_protocol='simple' is NCCL's: .* this run has reduce_scatter innet ",
        ),
        ({"staging": "no"}, r"^Scenario: staging='no' must be True or False$"),
        ({"staging": 0}, r"^Scenario: staging=0 must be True or False$"),
        ({"verify": "yes"}, r"^Scenario: verify='yes' must be True or False$"),
        ({"faults": "drop"}, r"^Scenario: faults='drop' must be a mcsim.config.fabric.Faults or None$"),
        (
            {"processor": "dpa"},
            r"^Scenario: processor='dpa' is not a completion processor config; use HostCpuConfig\(\) or",
        ),
        ({"rc": 7}, r"^Scenario: rc=7 must be a mcsim.config.rdma.RcConfig$"),
        ({"rc": {"retry_cnt": 0}}, r"^Scenario: rc=\{'retry_cnt': 0\} must be a mcsim.config.rdma.RcConfig$"),
        ({"topology": ["fat-tree-k4"]}, r"^Scenario: topology=\['fat-tree-k4'\] must be a string$"),
        ({"collective": None}, r"^Scenario: collective=None must be a string$"),
        ({"algorithm": 3}, r"^Scenario: algorithm=3 must be a string$"),
        ({"wire_format": None}, r"^Scenario: wire_format=None must be a string$"),
        ({"flow_control": 1}, r"^Scenario: flow_control=1 must be a string$"),
        ({"overlap": 1}, r"^Scenario: overlap=1 must be None or 'reduce_scatter'$"),
        ({"bytes_per_rank": 1.5}, r"^Scenario: bytes_per_rank=1.5 is not a size"),
        ({"bytes_per_rank": "-4KiB"}, r"^Scenario: bytes_per_rank='-4KiB' must not be negative$"),
        (
            {"bytes_per_rank": "1TiB"},
            r"^Scenario: bytes_per_rank='1TiB' makes 4294967296 multicast chunks of 4096 B \(16 shards\); the "
            r"chunk id has 24 bits \(at most 16777215\)",
        ),
        (
            {"bytes_per_rank": "1TiB", "collective": "broadcast"},
            r"^Scenario: bytes_per_rank='1TiB' makes 268435456 multicast chunks of 4096 B \(1 shards\)",
        ),
        (
            {"bytes_per_rank": "1TiB", "algorithm": "ring", "ring_chunk": "4KiB"},
            r"^Scenario: bytes_per_rank='1TiB' makes 4294967296 ring chunks of 4096 B; the chunk id is the WRITE's "
            r"32-bit immediate \(at most 4294967295\): raise ring_chunk$",
        ),
        (  # a two-phase Allreduce multicasts P blocks of N/P: 16 x 16 M chunks
            {"bytes_per_rank": "1TiB", "collective": "allreduce", "algorithm": "ring_mcast"},
            r"^Scenario: bytes_per_rank='1TiB' makes 268435456 multicast chunks of 4096 B \(16 shards\)",
        ),
        (
            {"bytes_per_rank": "1TiB", "collective": "allreduce", "algorithm": "innet_mcast"},
            r"^Scenario: bytes_per_rank='1TiB' makes 268435456 multicast chunks of 4096 B \(16 shards\)",
        ),
        (  # its ring Reduce-Scatter's chunk ids: 16 blocks of 256 MiB in WRITEs of 1 B
            {"bytes_per_rank": "4GiB", "collective": "allreduce", "algorithm": "ring_mcast", "ring_chunk": 1},
            r"^Scenario: bytes_per_rank='4GiB' makes 4294967296 ring chunks of 1 B; the chunk id is the WRITE's",
        ),
        # the immediates of the newer collectives: an overflow is one line, never a wrapped id
        (
            {"collective": "allreduce", "algorithm": "halving_doubling", "bytes_per_rank": "64MiB", "ring_chunk": 1},
            r"^Scenario: bytes_per_rank='64MiB' makes 33554432 chunks of 1 B in one halving step; the immediate "
            r"holds at most 16777215 beside the step: raise ring_chunk$",
        ),
        (
            {"collective": "reduce", "algorithm": "binomial", "bytes_per_rank": "1GiB", "ring_chunk": 1},
            r"^Scenario: bytes_per_rank='1GiB' makes 4294967296 chunk ids of 1 B \(4 children of 1073741824 chunks\)",
        ),
        (
            {"collective": "allreduce", "algorithm": "tree", "bytes_per_rank": "1GiB", "ring_chunk": 1},
            r"^Scenario: bytes_per_rank='1GiB' makes 2147483648 chunk ids of 1 B \(2 children .* way-down flag",
        ),
        (
            {"collective": "allgather", "algorithm": "bruck", "bytes_per_rank": "1GiB", "ring_chunk": 1},
            r"^Scenario: bytes_per_rank='1GiB' sends 17179869184 packets over one RC QP; RC PSNs are 32-bit",
        ),
        (
            {"collective": "alltoall", "algorithm": "pairwise", "bytes_per_rank": "1TiB", "ring_chunk": 4096},
            r"^Scenario: bytes_per_rank='1TiB' makes 4294967296 Alltoall chunks of 4096 B; the chunk id is the WRITE's",
        ),
        (
            {"collective": "allreduce", "algorithm": "tree", "verify": True, "bytes_per_rank": "1022B"},
            r"^Scenario: bytes_per_rank='1022B' and ring_chunk='64KiB' must be whole numbers of 32-bit integers",
        ),
        (
            {"collective": "allreduce", "algorithm": "halving_doubling", "ranks": 12},
            r"^Scenario: algorithm='halving_doubling' needs a power of 2 ranks, not 12; 'ring' takes any$",
        ),
        (
            {"topology": "testbed-188", "bytes_per_rank": "1TiB", "algorithm": "ring"},
            rf"^Scenario: bytes_per_rank='1TiB' sends {187 * 2**28} packets over each ring QP; RC PSNs are 32-bit",
        ),
        ({"ring_chunk": 10**12}, r"^Scenario: ring_chunk=1000000000000 must be 1..2147483648 B \(2 GiB: the largest"),
        ({"ring_chunk": "0"}, r"^Scenario: ring_chunk='0' must be 1..2147483648 B"),
        ({"mtu": 4000}, r"^Scenario: mtu=4000 is not an MTU"),
        ({"rate": "56GBps"}, r"^Scenario: rate='56GBps': unknown unit 'GBps' \(rates are in bits"),
        ({"loss": "0.1"}, r"^FabricConfig: loss='0.1' must be a probability >= 0 and < 1"),
        (
            {"collective": "gather"},
            r"^unknown collective 'gather'; choose one of allgather, allreduce, alltoall, broadcast, reduce, "
            r"reduce_scatter",
        ),
        (
            {"algorithm": "tree"},
            r"^unknown algorithm for allgather 'tree'; choose one of bruck, hier_mcast, hier_ring, mcast, nvls_ring, "
            r"recursive_doubling, ring$",
        ),
        # a lossless buffer holds one largest packet: the MTU, 86 B of RDMA headers, the physical overhead
        (
            {"fabric": FabricConfig(switch_buffer_b=100)},
            rf"^Scenario: a 4182 B packet does not fit {BUF} of 100 B "
            rf"\(switch_buffer_b\); {ONE_PACKET}: raise switch_buffer_b to >= 4182 or lower the MTU \(mtu_b\)$",
        ),
        (
            {"fabric": FabricConfig(host_buffer_b=4181)},
            rf"^Scenario: a 4182 B packet does not fit {BUF} of 4181 B "
            r"\(host_buffer_b\)",
        ),
        (
            {"fabric": FabricConfig(host_buffer_b=4200), "wire_format": "rocev2"},
            rf"^Scenario: a 4202 B packet does not fit {BUF} of 4200 B \(host_buffer_b\)",
        ),
        (
            {"fabric": FabricConfig(switch_buffer_b=300), "mtu": "256B"},
            rf"^Scenario: a 342 B packet does not fit {BUF}",
        ),
        # a graph topology is checked as a file is
        (
            {"topology": _with_edges(delay_ps=4 * 10**18)},
            rf"^topology: link 0-16: delay_ps=4000000000000000000 {DELAY}",
        ),
        ({"topology": _with_edges(rate_bps=10**16)}, r"^topology: link 0-16: rate_bps=10000000000000000 must be <= "),
        ({"topology": _with_edges(delay_ps=float("nan"))}, r"^topology: link 0-16: delay_ps=nan must be an integer$"),
    ],
)
def test_every_bad_scenario_field_is_one_line(kwargs, message):
    with pytest.raises(McsimError, match=message) as info:  # a Scenario's fields and the short names
        scenario_of(**({"topology": "fat-tree-k4"} | kwargs))
    assert "\n" not in str(info.value)


def test_a_buffer_of_one_largest_packet_is_accepted_and_lossy_buffers_are_not_checked():
    Scenario(topology="fat-tree-k4", fabric=FabricConfig(switch_buffer_b=4182, host_buffer_b=4182))
    Scenario(topology="fat-tree-k4", fabric=FabricConfig(flow_control="lossy", switch_buffer_b=100))


def test_run_verbs_refuses_a_lossless_buffer_below_one_packet_before_cxx(monkeypatch):
    from mcsim.runs import assemble, verbs

    monkeypatch.setattr(assemble, "Simulation", None)  # a run would fail: the check comes first
    with pytest.raises(McsimError, match=rf"^run_verbs: a 4182 B packet does not fit {BUF} of 100 B"):
        verbs.run_verbs(
            two_hosts(Link(rate_bps=10**9)),
            rc_ops=[RcOp(src=0, dst=1, verb="write", size_b=4096)],
            fabric=FabricConfig(switch_buffer_b=100),
        )


def test_good_values_of_every_checked_type_are_accepted():
    sc = scenario_of(
        topology="fat-tree-k4",
        ranks=16,
        roots=16,
        timeout_scale=2,  # an int is a number too
        batch=MAX_QP_WR,
        rq_depth=MAX_QP_WR,
        endpoints=MAX_ENDPOINTS,
        seed=2**64 - 1,
        staging=False,
        faults=Faults(drops=[(0, 0, 0)]),
        rc=RcConfig(retry_cnt=None),
        ring_chunk="2GiB",
    )
    assert sc.n_ranks == 16 and sc.output_b == 16 << 20
    for collective, algorithm in (("broadcast", "mcast"), ("reduce", "chain")):  # root: the collectives with one
        assert Scenario(topology="fat-tree-k4", collective=collective, algorithm=algorithm, root=15).root == 15


# ---------------------------------------------------------------------------------------------
# faults files


def write(tmp_path, text: str, name: str = "faults.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_faults_file_gives_the_faults_it_names(tmp_path):
    path = write(
        tmp_path,
        "link_loss = [{u = 0, v = 16, p = 1e-3}, {u = 16, v = 1, p = 0}]\n"
        "drops = [{node = 16, port = 0, index = 154}]\n"
        'link_down = [{u = 16, v = 24, down = "10us", up = "2.5ms"}]\n',
    )
    faults = load_faults(path)
    assert faults == Faults(
        link_loss={(0, 16): 1e-3, (16, 1): 0},
        drops=[(16, 0, 154)],
        link_down=[(16, 24, 10_000_000, 2_500_000_000)],
    )
    Scenario(topology="fat-tree-k4", faults=faults)  # every edge and port exists there
    assert load_faults(write(tmp_path, "", "empty.toml")) == Faults()


def test_up_forever_means_no_up_time(tmp_path):
    path = write(tmp_path, 'link_down = [{u = 16, v = 24, down = "0ps", up = "forever"}]\n')
    assert read_faults(path) == {"link_down": [(16, 24, 0, None)]}


def test_a_link_down_forever_loads(tmp_path):
    path = write(tmp_path, 'link_down = [{u = 16, v = 24, down = "10us", up = "forever"}]\n')
    assert load_faults(path).link_down == ((16, 24, 10_000_000, None),)


def test_reroute_delay_goes_to_the_subnet_manager(tmp_path):
    fast, static = write(tmp_path, 'reroute_delay = "2ms"', "a.toml"), write(tmp_path, 'reroute_delay = "static"')
    assert load_faults(fast).reroute_delay_ps == 2_000_000_000
    assert load_faults(static).reroute_delay_ps is None
    assert load_faults(write(tmp_path, "drops = []", "c.toml")).reroute_delay_ps == DEFAULT_REROUTE_DELAY_PS


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("link_loss = [{u = 0, v = 16, p = 1e-3}", r"not valid TOML \("),
        ("drops = " + "[" * 3000 + "]" * 3000, r"not valid TOML for mcsim \(arrays or tables nested too deep\)$"),
        (
            'link_down = [{u = 16, v = 24, down = "1e400s", up = "forever"}]',
            r"link_down\[0\]: down='1e400s' is more than .* \(2\^62 ps = 53\.4 days, the simulated clock's limit\)$",
        ),
        (
            'link_down = [{u = 16, v = 24, down = "1us", up = "60d"}]',
            r"link_down\[0\]: up='60d': unknown unit 'd'; .*; or 'forever' for a link that never comes back$",
        ),
        (
            'link_down = [{u = 16, v = 24, down = "1us", up = "1e7s"}]',
            r"link_down\[0\]: up='1e7s' is more than .* \(2\^62 ps = 53\.4 days, .*; or 'forever' for a link",
        ),
        ('reroute_delay = "1e30s"', r"reroute_delay='1e30s' is more than .* \(2\^62 ps = 53\.4 days"),
        ("reroute_delay = 5", r"reroute_delay=5 must be a time with a unit, e\.g\. '10us'$"),
        (
            "drops = [{node = 16, port = 0, index = 18446744073709551616}]",
            r"drops\[0\]: index=18446744073709551616 must be <= 18446744073709551615 \(uint64 in C\+\+\)$",
        ),
        ("drops = [{node = 16, port = 0, index = 1e30}]", r"drops\[0\]: index=1e\+30 must be an integer >= 0$"),
        (
            "drops = [{node = 4294967296, port = 0, index = 0}]",
            r"drops\[0\]: node=4294967296 must be <= 4294967295 \(uint32 in C\+\+\)$",
        ),
        (
            "drops = [{node = 16, port = 4294967296, index = 0}]",
            r"drops\[0\]: port=4294967296 must be <= 4294967295 \(uint32 in C\+\+\)$",
        ),
        (
            "link_loss = [{u = 0, v = 99999999999, p = 0.1}]",
            r"link_loss\[0\]: v=99999999999 must be <= 4294967295 \(uint32 in C\+\+\)$",
        ),
        ("link_loss = [{u = 0, v = 16, p = nan}]", r"Faults: link_loss\[\(0, 16\)\]: p=nan must be a probability"),
        ("link_loss = [{u = 0, v = 16, p = inf}]", r"Faults: link_loss\[\(0, 16\)\]: p=inf must be a probability"),
        (
            "linkloss = []",
            r"unknown key 'linkloss'; choose one of drops, link_down, link_loss.*did you mean 'link_loss'",
        ),
        (
            "[link_loss]\nu = 0",
            r"link_loss must be an array of tables, e\.g\. link_loss = \[\{u = 0, v = 16, p = 1e-3\}\]",
        ),
        ("drops = [1, 2]", r"drops must be an array of tables"),
        (
            "drops = [{node = 16, port = 0, idx = 1}]",
            r"unknown key in drops\[0\] 'idx'; choose one of index, node, port",
        ),
        ("drops = [{node = 16, port = 0}]", r"drops\[0\] has no 'index'; it needs node, port, index"),
        ("drops = [{node = 16, port = 0, index = -1}]", r"drops\[0\]: index=-1 must be >= 0$"),
        ("drops = [{node = 16, port = 0, index = 1.0}]", r"drops\[0\]: index=1.0 must be an integer >= 0$"),
        ("drops = [{node = 16, port = true, index = 1}]", r"drops\[0\]: port=True must be an integer >= 0$"),
        ('link_loss = [{u = 0, v = 16, p = "1e-3"}]', r"Faults: link_loss\[\(0, 16\)\]: p='1e-3' must be a probab"),
        ("link_loss = [{u = 0, v = 16, p = 1.0}]", r"Faults: link_loss\[\(0, 16\)\]: p=1.0 must be a probability"),
        (
            "link_loss = [{u = 0, v = 16, p = 0.1}, {u = 16, v = 0, p = 0.2}]",
            r"link_loss\[1\] repeats the edge 16-0 of link_loss\[0\]; give it once$",
        ),
        (
            'link_down = [{u = 16, v = 24, down = 10, up = "1ms"}]',
            r"link_down\[0\]: down=10 must be a time with a unit",
        ),
        ('link_down = [{u = 16, v = 24, down = "10", up = "1ms"}]', r"link_down\[0\]: down='10' has no unit"),
        (
            'link_down = [{u = 16, v = 24, down = "1us", up = "never"}]',
            r"link_down\[0\]: up='never' is not a time; .*; or 'forever' for a link that never comes back$",
        ),
        (
            'link_down = [{u = 16, v = 24, down = "1ms", up = "1us"}]',
            r"Faults: link_down\[0\]=\(16, 24, 1000000000, 1000000\): up_ps=1000000 must be > down_ps",
        ),
    ],
)
def test_a_bad_faults_file_is_one_line_naming_the_file_and_the_key(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(McsimError, match=rf"^faults file '{re.escape(str(path))}': {message}") as info:
        load_faults(path)
    assert "\n" not in str(info.value)


def test_a_missing_or_foreign_faults_file_is_one_line(tmp_path):
    with pytest.raises(McsimError, match=r"^faults file '.*nothing.toml' does not exist$"):
        load_faults(tmp_path / "nothing.toml")
    binary = tmp_path / "faults.toml"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    with pytest.raises(
        McsimError, match=r"^faults file '.*faults.toml': not valid TOML \(not UTF-8 text: byte 0x89 at 0\)$"
    ):
        load_faults(binary)
    folder = tmp_path / "folder.toml"
    folder.mkdir()
    with pytest.raises(McsimError, match=r"^faults file '.*folder.toml' is a folder, not a file$"):
        load_faults(folder)
    with pytest.raises(
        McsimError, match=r"^faults file '.*' \(100\d\d characters\): cannot be read \(File name too long\)$"
    ):
        load_faults(tmp_path / ("a" * 10_000 + ".toml"))


def test_a_faults_file_naming_a_missing_edge_is_refused_by_the_scenario(tmp_path):
    faults = load_faults(write(tmp_path, "link_loss = [{u = 0, v = 1, p = 0.1}]"))
    with pytest.raises(McsimError, match=r"^Faults: link_loss\[\(0, 1\)\]: \(0, 1\) is not an edge of fat-tree-k4"):
        Scenario(topology="fat-tree-k4", faults=faults)


def test_a_graph_handed_out_by_a_scenario_is_the_callers_own():
    sc = Scenario(topology="fat-tree-k4", bytes_per_rank="4KiB")
    g = sc.graph()
    g.add_node(999, role="host", tier=0, name="intruder")
    first = next(iter(g.edges))
    g.edges[first]["rate_bps"] = 1
    again = Scenario(topology="fat-tree-k4", bytes_per_rank="4KiB")
    assert 999 not in again.graph() and again.graph().edges[first]["rate_bps"] != 1
    assert again.data_rate_bps == sc.data_rate_bps > 1
    # with a rate, the re-rated topology is shared too, and handed out as a copy as well
    fast = Scenario(topology="fat-tree-k4", rate="400Gbps", bytes_per_rank="4KiB")
    fast.graph().edges[first]["rate_bps"] = 1
    # 400 Gbit/s InfiniBand is 4xNDR: 425 Gbit/s signalling with 16b/17b (the lane table), 400 of data
    rerated = Scenario(topology="fat-tree-k4", rate="400Gbps")
    assert rerated.graph().edges[first]["rate_bps"] == 425 * 10**9 and rerated.data_rate_bps == 400 * 10**9


def test_numpy_integers_are_integers_and_are_stored_as_python_ints():
    # a sweep over np.arange(...) hands numpy integers to a Scenario: they are accepted and stored
    # as plain ints (a Scenario is plain data); numpy floats where an integer is needed are not
    sc = scenario_of(
        topology="fat-tree-k4", ranks=np.int64(4), roots=np.int32(2), seed=np.uint64(3), bytes_per_rank="4KiB"
    )
    seed = sc.fabric.seed
    assert (sc.ranks, sc.roots, seed) == (4, 2, 3) and all(type(v) is int for v in (sc.ranks, sc.roots, seed))
    assert sc == scenario_of(topology="fat-tree-k4", ranks=4, roots=2, seed=3, bytes_per_rank="4KiB")
    with pytest.raises(McsimError, match=r"^Scenario: ranks=np.float64\(4.0\) must be an integer"):
        Scenario(topology="fat-tree-k4", ranks=np.float64(4.0))


# ---------------------------------------------------------------------------------------------
# files given to a Scenario and to the CLI


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bin.toml", b"\xff\x00", r"^topology bin\.toml: not valid TOML \(not UTF-8 text: byte 0xff at 0\)$"),
        ("x.graphml", b"<svg/>", r"^topology x\.graphml: not a readable GraphML file \(.+\)$"),
        ("dir.graphml", None, r"^topology file '.*dir\.graphml' is a folder, not a file$"),
        (
            "a" * 10_000 + ".toml",
            b"",
            r"^topology file '.*' \(100\d\d characters\): cannot be read \(File name too long\)$",
        ),
    ],
)
def test_a_bad_topology_file_given_to_a_scenario_is_one_line(tmp_path, name, content, message):
    path = tmp_path / name
    if content is None:
        path.mkdir()
    elif len(name) < 255:
        path.write_bytes(content)
    with pytest.raises(McsimError, match=message):
        Scenario(topology=path)
    with pytest.raises(McsimError, match=message):
        Scenario(topology=str(path))


@pytest.mark.parametrize(
    ("name", "content", "stderr"),
    [
        ("bin.toml", b"\x89PNG\r\n", r"faults file '.*bin\.toml': not valid TOML \(not UTF-8 text: byte 0x89 at 0\)"),
        ("dir.toml", None, r"faults file '.*dir\.toml' is a folder, not a file"),
        (
            "down.toml",
            b'link_down = [{u = 16, v = 24, down = "1e400s", up = "forever"}]',
            r"faults file '.*down\.toml': link_down\[0\]: down='1e400s' is more than .*the simulated clock's limit\)",
        ),
        (
            "index.toml",
            b"drops = [{node = 16, port = 0, index = 18446744073709551616}]",
            r"faults file '.*index\.toml': drops\[0\]: index=18446744073709551616 must be <= 18446744073709551615 ",
        ),
    ],
)
def test_the_cli_refuses_a_bad_faults_file_with_exit_2_and_one_line(tmp_path, capsys, name, content, stderr):
    from mcsim import cli

    path = tmp_path / name
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    assert cli.main(["allgather", "--topology", "fat-tree-k4", "--size", "4KiB", "--faults", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert re.match(r"^mcsim: error: " + stderr, err)


@pytest.mark.parametrize(
    ("kwargs", "unread"),
    [
        ({"algorithm": "ring", "endpoints": 4, "roots": 4, "ring_chunk": "8KiB"}, ("roots", "endpoints")),
        ({"algorithm": "mcast", "ring_chunk": "8KiB", "reduce_ps_per_byte": 1}, ("ring_chunk", "reduce_ps_per_byte")),
        ({"collective": "broadcast", "roots": 4, "root": 3}, ("roots",)),
        ({"collective": "allreduce", "algorithm": "ring_mcast", "roots": 4, "ring_chunk": "8KiB"}, ()),
        ({"collective": "allreduce", "algorithm": "innet", "batch": 8, "timeout_scale": 2}, ("timeout_scale",)),
        ({"overlap": "reduce_scatter", "overlap_algorithm": "innet", "reduce_ps_per_byte": 3}, ("reduce_ps_per_byte",)),
        ({"overlap": "reduce_scatter", "reduce_ps_per_byte": 3, "ring_chunk": "64KiB"}, ()),
    ],
)
def test_unread_names_the_tunables_given_that_the_run_does_not_read(kwargs, unread):
    # root and overlap_algorithm among them are refused (above); the others are run options a workload or a sweep
    # gives every collective of a run, and Scenario.unread() names them
    assert Scenario(topology="fat-tree-k4", **kwargs).unread() == unread
