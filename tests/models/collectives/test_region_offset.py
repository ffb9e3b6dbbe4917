# SPDX-License-Identifier: GPL-2.0-only
"""A team's buffer at an offset of each rank's region (TeamSpec.region_offset_b, C++ "RegionOffsetBytes"): what
teams composed into a hierarchical collective need. Every rank class that honours it (REGION_OFFSET_RANKS), in
verify mode on fat-tree-k4: the bytes land exactly at the offset and no byte outside the team's buffer moves; two
teams at once on disjoint hosts at different offsets; an offset that is no multiple of the chunk; the multicast
repair READs under loss; an offset moves no packet (lossless counters and times equal to offset 0's); bad offsets
are one McsimError line."""

import dataclasses

import numpy as np
import pytest

from mcsim.config.collectives import (
    ALGORITHMS,
    MAX_REGION_OFFSET_B,
    RANKS,
    REGION_OFFSET_RANKS,
    Part,
    TeamSpec,
)
from mcsim.errors import McsimError
from mcsim.native import rdma, runtime
from mcsim.native.attributes import make_factory
from mcsim.runs import assemble, buffers
from mcsim.runs import scenario as scenario_module
from mcsim.runs.scenario import Scenario, scenario_of
from mcsim.runs.verify import Expected, pattern

HONOURING = [pair for pair, rank in ALGORITHMS.items() if rank in REGION_OFFSET_RANKS]
N = 40_000  # bytes per rank: whole 32-bit integers, no multiple of a chunk or the MTU
CHUNK = 16_384  # a ring's WRITE (the multicast's and the in-network reduction's: the MTU, 4096)
ODD_OFFSET = 3 * CHUNK + 1_233  # no multiple of a chunk, a datagram or a 32-bit integer
TAIL = 4_096  # region bytes after the teams' buffers (and landing zones), checked untouched too
SENTINEL = 0xA5  # what the region holds outside the team's buffer before the run, and must after it


def _spec(collective: str, algorithm: str, hosts: tuple[int, ...], offset: int, **kw) -> TeamSpec:
    chunk = {"mcast": None, "innet": None}.get(algorithm, CHUNK)
    return TeamSpec(
        collective=collective,
        algorithm=algorithm,
        hosts=hosts,
        bytes_per_rank_b=N,
        chunk_b=chunk,
        region_offset_b=offset,
        **kw,
    )


@dataclasses.dataclass
class Run:
    regions: dict[int, np.ndarray]  # host -> its whole region after the run (verify mode)
    stats: list[dict[str, np.ndarray]]  # per team
    nic: dict[str, np.ndarray]
    fabric: object


def run_teams(env: Scenario, specs: list[TeamSpec]) -> Run:
    """Run teams at once on env's fabric (its topology, fabric, rdma, faults, verify): each multicast team its own
    group, each in-network one its own reduction; every region holds the furthest team's buffer and TAIL more; in
    verify mode every byte outside the teams' buffers starts as SENTINEL and each rank holds its Expected input."""
    groups = [list(s.hosts) for s in specs if s.algorithm == "mcast"]
    reductions = [list(s.hosts) for s in specs if s.algorithm == "innet"]
    region = max(buffers.region_end_b(s, len(s.hosts), env.verify) for s in specs) + TAIL
    rdma_config = dataclasses.replace(env.rdma, region_b=region)
    hosts = sorted({h for s in specs for h in s.hosts})
    with assemble.assembled(
        env.setup.layout(),
        fabric_config=env.fabric,
        rdma_config=rdma_config,
        attributes=env,
        groups=groups,
        faults=env.faults,
        reductions=reductions,
        slot_b=env.rdma.mtu_b,
    ) as run:
        placed, mcast, innet = [], 0, 0
        for s in specs:
            if s.algorithm == "mcast":
                s, mcast = dataclasses.replace(s, group=mcast), mcast + 1
            elif s.algorithm == "innet":
                red, innet = run.reductions[innet], innet + 1
                s = dataclasses.replace(s, first_tree=red.first_tree, trees=len(red.trees), group=red.first_group)
            placed.append(s)
        if env.verify:
            for h in hosts:
                rdma.enable_memory(run.stack, h, region)
                rdma.write_memory(run.stack, h, 0, np.full(region, SENTINEL, dtype=np.uint8))
            for s in placed:
                expected = _expected(s)
                for rank, h in enumerate(s.hosts):
                    held = expected.input(rank)
                    end = buffers.region_end_b(s, len(s.hosts), True)
                    # the team's buffer (and landing zone) starts zeroed, as a region does; inputs on top
                    rdma.write_memory(run.stack, h, s.region_offset_b, np.zeros(end - s.region_offset_b, np.uint8))
                    if held is not None:
                        rdma.write_memory(run.stack, h, *held)
        teams = [run.start_team(s) for s in placed]
        run.run()
        stats = [run.team_stats(t) for t in teams]
        nic = run.nic_counters()
        fabric = run.collect()
        regions = {h: run.read_memory(h, region) for h in hosts} if env.verify else {}
    return Run(regions, stats, nic, fabric)


def _expected(spec: TeamSpec) -> Expected:
    return Expected(spec.collective, len(spec.hosts), N, spec.root, region_offset_b=spec.region_offset_b)


def check_bytes(r: Run, specs: list[TeamSpec]) -> None:
    """Each rank's output is exactly at its team's offset; outside its team's buffer (and landing zone) nothing
    changed."""
    for s in specs:
        expected = _expected(s)
        end = buffers.region_end_b(s, len(s.hosts), True)
        assert (r.stats[specs.index(s)]["finish_ps"] >= 0).all(), f"{s.algorithm} did not finish"
        for rank, h in enumerate(s.hosts):
            region = r.regions[h]
            wrong = np.count_nonzero(region[expected.span] != expected.output(rank))
            assert wrong == 0, f"{s.collective} {s.algorithm} rank {rank}: {wrong} wrong bytes at the offset"
            assert (region[: s.region_offset_b] == SENTINEL).all(), "a byte below the offset moved"
            assert (region[end:] == SENTINEL).all(), "a byte after the team's buffer moved"


def _env(**kw) -> Scenario:
    return scenario_of(topology="fat-tree-k4", verify=True, **kw)


def test_the_python_table_is_the_classes_with_the_cpp_attribute():
    ns = runtime.cppyy_ns()
    info = ns.TypeId.AttributeInformation()
    has = {rank for rank in RANKS if ns.TypeId.LookupByName(rank).LookupAttributeByName("RegionOffsetBytes", info)}
    assert has == set(REGION_OFFSET_RANKS)


def test_the_cpp_bound_is_the_pythons():
    make_factory(REGION_OFFSET_RANKS[0], "test", RegionOffsetBytes=MAX_REGION_OFFSET_B)
    with pytest.raises(McsimError, match=r"^test: RegionOffsetBytes=9223372036854775808 is refused by "):
        make_factory(REGION_OFFSET_RANKS[0], "test", RegionOffsetBytes=MAX_REGION_OFFSET_B + 1)


@pytest.mark.parametrize(("collective", "algorithm"), HONOURING)
def test_a_team_at_an_offset_lands_exactly_there_and_nothing_else_moves(collective, algorithm):
    specs = [_spec(collective, algorithm, tuple(range(8)), ODD_OFFSET)]
    check_bytes(run_teams(_env(), specs), specs)


@pytest.mark.parametrize(("collective", "algorithm"), HONOURING)
def test_two_teams_at_once_on_disjoint_hosts_at_different_offsets(collective, algorithm):
    # the even hosts' team below the odd hosts' one, which is not a whole chunk further
    specs = [
        _spec(collective, algorithm, tuple(range(0, 16, 2)), 2 * CHUNK),
        _spec(collective, algorithm, tuple(range(1, 16, 2)), 8 * N + 5),
    ]
    check_bytes(run_teams(_env(), specs), specs)


def test_a_ring_and_a_multicast_team_at_once_keep_to_their_offsets():
    # as a hierarchical Allgather's two phases' teams could, at once: one region size for both
    specs = [
        _spec("allgather", "ring", tuple(range(0, 16, 2)), 7),
        _spec("allgather", "mcast", tuple(range(1, 16, 2)), 8 * N + 4_099),
    ]
    check_bytes(run_teams(_env(), specs), specs)


@pytest.mark.parametrize(("collective", "algorithm"), [("allgather", "mcast"), ("broadcast", "mcast")])
def test_under_loss_the_repair_reads_fetch_from_the_offset(collective, algorithm):
    # byte-exact at every seed; over the seeds, datagrams were lost and repair READs (each at the offset) fetched them
    lost = repaired = 0
    for seed in (1, 2, 3, 4):
        specs = [_spec(collective, algorithm, tuple(range(16)), ODD_OFFSET, data_timeout_ps=200_000_000)]
        r = run_teams(_env(loss=1e-3, seed=seed), specs)
        check_bytes(r, specs)
        lost += r.fabric.drops_by_cause()["loss"]
        repaired += int(r.stats[0]["repaired_chunks"].sum())
    assert lost > 0 and repaired > 0


def test_a_ring_under_loss_retransmits_from_the_offset():
    specs = [_spec("reduce_scatter", "ring", tuple(range(16)), ODD_OFFSET)]
    r = run_teams(_env(loss=1e-3, seed=4), specs)
    check_bytes(r, specs)
    assert r.fabric.drops_by_cause()["loss"] > 0


@pytest.mark.parametrize(("collective", "algorithm"), HONOURING)
def test_an_offset_moves_no_packet(collective, algorithm):
    env = scenario_of(topology="fat-tree-k4")  # lossless, no real bytes
    hosts = tuple(range(0, 16, 2))
    at_zero = run_teams(env, [_spec(collective, algorithm, hosts, 0)])
    at_offset = run_teams(env, [_spec(collective, algorithm, hosts, ODD_OFFSET)])
    for table in ("stats", "nic"):
        a, b = getattr(at_zero, table), getattr(at_offset, table)
        for name, values in (a[0] if table == "stats" else a).items():
            other = (b[0] if table == "stats" else b)[name]
            np.testing.assert_array_equal(values, other, err_msg=f"{table}.{name}")
    assert at_zero.stats[0]["finish_ps"].max() > 0
    np.testing.assert_array_equal(at_zero.fabric.ports["tx_packets"], at_offset.fabric.ports["tx_packets"])


def test_a_scenarios_part_at_an_offset_gets_its_region_and_runs_as_at_zero(monkeypatch):
    kw = {"topology": "fat-tree-k4", "ranks": 8, "collective": "allgather", "algorithm": "ring", "bytes_per_rank": N}
    at_zero = Scenario(**kw)
    a = at_zero.run()
    part = Part(collective="allgather", algorithm="ring", bytes_per_rank_b=N, region_offset_b=ODD_OFFSET)
    monkeypatch.setattr(scenario_module, "parts_of", lambda *_: [part])
    moved = Scenario(**kw)
    assert moved.teams()[0].region_offset_b == ODD_OFFSET
    assert moved.rdma.region_b == ODD_OFFSET + 8 * N and at_zero.rdma.region_b == 8 * N
    b = moved.run()
    assert b.complete and a.time_ps == b.time_ps
    np.testing.assert_array_equal(a.nic["tx_packets"], b.nic["tx_packets"])


def test_the_region_holds_the_furthest_team():
    # a ring Reduce-Scatter's landing zone follows its buffer in verify mode (C++ RingReduceScatter)
    rs = _spec("reduce_scatter", "ring", tuple(range(8)), 100)
    assert buffers.region_end_b(rs, 8, False) == 100 + 8 * N
    assert buffers.region_end_b(rs, 8, True) == 100 + 2 * 8 * N
    bcast = _spec("broadcast", "mcast", tuple(range(8)), 100)
    assert buffers.region_end_b(bcast, 8, True) == 100 + N
    alltoall = TeamSpec(collective="alltoall", algorithm="pairwise", hosts=(0, 1), bytes_per_rank_b=N)
    assert buffers.region_end_b(alltoall, 2, True) == 0  # not placed at an offset: the collective's own size


def test_the_expected_bytes_are_placed_at_the_offset():
    e = Expected("allgather", 4, 100, region_offset_b=1_000)
    offset, data = e.input(2)
    assert offset == 1_000 + 200 and (data == pattern(2, 100)).all()
    assert e.span == slice(1_000, 1_400)
    assert Expected("broadcast", 4, 100, root=1, region_offset_b=5).input(1)[0] == 5


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"region_offset_b": -1}, r"^TeamSpec: region_offset_b=-1 must be 0..9223372036854775807$"),
        ({"region_offset_b": 1.5}, r"^TeamSpec: region_offset_b=1.5 must be an integer 0..9223372036854775807$"),
        ({"region_offset_b": "8"}, r"^TeamSpec: region_offset_b='8' must be an integer 0\.\."),
        ({"region_offset_b": True}, r"^TeamSpec: region_offset_b=True must be an integer 0\.\."),
        ({"region_offset_b": 2**63}, r"^TeamSpec: region_offset_b=9223372036854775808 must be 0..9223372036854775807$"),
        (
            {"collective": "alltoall", "algorithm": "pairwise", "region_offset_b": 64},
            r"^TeamSpec: region_offset_b=64 is not honoured by alltoall pairwise \(ns3::mcsim::Alltoall\), which "
            r"keeps its buffer at the region's start; these place it at an offset: allgather ring, allgather mcast, ",
        ),
        (
            {"collective": "allreduce", "algorithm": "tree", "region_offset_b": 1},
            r"^TeamSpec: region_offset_b=1 is not honoured by allreduce tree \(ns3::mcsim::TreeAllreduce\)",
        ),
        (
            {"collective": "allgather", "algorithm": "bruck", "region_offset_b": 4096},
            r"^TeamSpec: region_offset_b=4096 is not honoured by allgather bruck ",
        ),
    ],
)
def test_a_bad_region_offset_is_one_line(kw, message):
    with pytest.raises(McsimError, match=message) as info:
        TeamSpec(**({"collective": "allgather", "algorithm": "ring", "hosts": (0, 1), "bytes_per_rank_b": 8} | kw))
    assert "\n" not in str(info.value)


def test_a_class_that_does_not_honour_an_offset_takes_zero():
    spec = TeamSpec(collective="alltoall", algorithm="pairwise", hosts=(0, 1), bytes_per_rank_b=8, region_offset_b=0)
    assert spec.region_offset_b == 0
