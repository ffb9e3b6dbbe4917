# SPDX-License-Identifier: GPL-2.0-only
"""Jobs of steps on one fabric (mcsim.workloads): compute alone lasts its critical path exactly; a
collective step alone lasts its single run to the ps; an FSDP iteration keeps its dependencies and its
prefetch depth; two jobs inside their own leaves do not slow each other, two that share an
oversubscribed uplink do; bad jobs are one line."""

import networkx as nx
import numpy as np
import pytest

from mcsim import topology
from mcsim.errors import McsimError
from mcsim.routing.layout import layout_of
from mcsim.runs.jobs import run_jobs
from mcsim.runs.scenario import Scenario
from mcsim.workloads import Collective, Compute, Job
from mcsim.workloads.job import job_of_graph
from mcsim.workloads.training import background_job, data_parallel_job, fsdp_job

US = 1_000_000  # ps


def leaves(n_leaves: int, hosts_per_leaf: int) -> nx.Graph:
    """Leaves of hosts_per_leaf hosts at 100 Gbit/s under one spine: each leaf's uplink is shared by
    its hosts (hosts_per_leaf : 1 oversubscribed); one leaf is a star."""
    g = topology.leaf_spine(n_leaves, min(1, n_leaves - 1), hosts_per_leaf, rate_bps=100 * 10**9, delay_ps=100_000)
    g.graph.update(name=f"leaves-{n_leaves}x{hosts_per_leaf}")
    return g


BRANCHES = (  # a -> (b, c) -> d
    Compute(label="a", duration_ps=3 * US),
    Compute(label="b", duration_ps=5 * US, after=(0,)),
    Compute(label="c", duration_ps=2 * US, after=(0,)),
    Compute(label="d", duration_ps=1 * US, after=(1, 2)),
)


def test_compute_alone_lasts_its_critical_path_with_a_unit_per_branch():
    r = run_jobs([Job(name="j", hosts=(0, 1, 2), steps=BRANCHES, compute_units=0)], topology=leaves(1, 4)).jobs[0]
    assert r.iteration_ps == (3 + 5 + 1) * US  # the longer branch
    np.testing.assert_array_equal(r.timeline[3, :, 1], np.full(3, 8 * US))  # d starts when b ends
    np.testing.assert_array_equal(r.timeline[2, :, 2], np.full(3, 5 * US))  # c ran beside b
    assert r.injected_b.sum() == 0


def test_one_compute_unit_runs_ready_steps_one_after_the_other_in_the_order_they_became_ready():
    r = run_jobs([Job(name="j", hosts=(0, 1, 2), steps=BRANCHES)], topology=leaves(1, 4)).jobs[0]
    assert r.iteration_ps == r.compute_ps == (3 + 5 + 2 + 1) * US and r.exposed_comm_ps == 0
    np.testing.assert_array_equal(r.timeline[2, :, 0], np.full(3, 3 * US))  # c ready with b ...
    np.testing.assert_array_equal(r.timeline[2, :, 1], np.full(3, 8 * US))  # ... runs once b has ended


@pytest.mark.parametrize(
    ("collective", "algorithm", "n"),
    [
        ("allgather", "ring", "64KiB"),
        ("allgather", "mcast", "16KiB"),
        ("reduce_scatter", "ring", "16KiB"),
        ("allreduce", "tree", "40KiB"),
        ("reduce_scatter", "innet", "16KiB"),
        ("alltoall", "pairwise", "8KiB"),
    ],
)
def test_a_collective_step_lasts_its_single_run_to_the_ps(collective, algorithm, n):
    # on one switch, after a compute step and before another, with no other traffic
    g = leaves(1, 8)
    steps = (
        Compute(label="before", duration_ps=US),
        Collective(label="c", collective=collective, algorithm=algorithm, bytes_per_rank=n, after=(0,)),
        Compute(label="after", duration_ps=2 * US, after=(1,)),
    )
    r = run_jobs([Job(name="j", hosts=tuple(range(8)), steps=steps)], topology=g).jobs[0]
    alone = Scenario(topology=g, collective=collective, algorithm=algorithm, bytes_per_rank=n).run()
    np.testing.assert_array_equal(r.timeline[1, :, 1], np.full(8, US))  # every rank enters at once
    np.testing.assert_array_equal(r.timeline[1, :, 2] - US, alone.finish_ps)  # each rank as in the run alone
    assert r.iteration_ps == US + alone.time_ps + 2 * US
    assert r.exposed_comm_ps == alone.time_ps


def test_a_collective_starts_when_its_last_rank_is_ready():
    # the ranks reach it at different times only through the steps before; here all at once, so a
    # job whose first step is the collective starts it at 0 on every rank
    g = leaves(1, 4)
    steps = (Collective(label="ag", collective="allgather", algorithm="ring", bytes_per_rank="4KiB"),)
    r = run_jobs([Job(name="j", hosts=(3, 1, 0, 2), steps=steps)], topology=g).jobs[0]
    alone = Scenario(topology=g, algorithm="ring", bytes_per_rank="4KiB").run()
    assert (r.timeline[0, :, 1] == 0).all()
    assert r.iteration_ps == alone.time_ps  # on one switch the hosts' order changes nothing


@pytest.mark.parametrize("prefetch", [0, 1, 2])
def test_an_fsdp_iteration_keeps_its_dependencies_and_its_prefetch_depth(prefetch):
    hosts = tuple(range(8))
    job = fsdp_job(
        "fsdp", hosts, layers=4, bytes_per_layer=256 << 10, forward_ps=20 * US, backward_ps=40 * US, prefetch=prefetch
    )
    r = run_jobs([job], topology=leaves(1, 8)).jobs[0]
    assert r.complete
    label = {s.label: i for i, s in enumerate(job.steps)}
    tl = r.timeline
    computes = [f"F{layer}" for layer in range(4)] + [f"B{layer}" for layer in reversed(range(4))]
    for k, c in enumerate(computes):
        gather = label[f"AG {c}"]
        assert (tl[label[c], :, 1] >= tl[gather, :, 2]).all(), "no compute before its Allgather ended"
        if k:
            assert (tl[label[c], :, 1] >= tl[label[computes[k - 1]], :, 2]).all()
        if k - 1 - prefetch >= 0:  # at most `prefetch` Allgathers ahead
            assert (tl[gather, :, 1] >= tl[label[computes[k - 1 - prefetch]], :, 2].max()).all()
    for layer in range(4):
        assert (tl[label[f"RS {layer}"], :, 1] >= tl[label[f"B{layer}"], :, 2].max()).all()
    assert r.compute_ps == 4 * 20 * US + 4 * 40 * US
    assert r.iteration_ps >= r.compute_ps


def test_prefetching_hides_allgathers_behind_compute():
    hosts = tuple(range(8))
    kw = {"layers": 4, "bytes_per_layer": 1 << 20, "forward_ps": 100 * US, "backward_ps": 200 * US}
    none = run_jobs([fsdp_job("a", hosts, prefetch=0, **kw)], topology=leaves(1, 8)).jobs[0]
    one = run_jobs([fsdp_job("a", hosts, prefetch=1, **kw)], topology=leaves(1, 8)).jobs[0]
    assert one.iteration_ps < none.iteration_ps
    assert one.exposed_comm_ps < none.exposed_comm_ps


def _ring_job(name, hosts):
    return Job(
        name=name,
        hosts=hosts,
        steps=(Collective(label="ag", collective="allgather", algorithm="ring", bytes_per_rank="256KiB"),),
    )


def test_two_jobs_inside_their_own_leaves_do_not_slow_each_other():
    g = leaves(2, 4)
    a, b = _ring_job("a", (0, 1, 2, 3)), _ring_job("b", (4, 5, 6, 7))
    both = run_jobs([a, b], topology=g)
    alone_a = run_jobs([a], topology=g).jobs[0]
    alone_b = run_jobs([b], topology=g).jobs[0]
    np.testing.assert_array_equal(both.job("a").timeline, alone_a.timeline)
    np.testing.assert_array_equal(both.job("b").timeline, alone_b.timeline)


def test_two_jobs_across_a_shared_uplink_slow_each_other():
    # interleaved: each job has two hosts on each leaf, so both rings cross the leaves' one uplink
    g = leaves(2, 4)
    a, b = _ring_job("a", (0, 1, 4, 5)), _ring_job("b", (2, 3, 6, 7))
    both = run_jobs([a, b], topology=g)
    alone = run_jobs([a], topology=g).jobs[0]
    assert both.job("a").iteration_ps > alone.iteration_ps


def test_a_job_s_bytes_are_its_hosts():
    g = leaves(1, 8)
    r = run_jobs([_ring_job("a", (0, 1, 2, 3)), _ring_job("b", (4, 5, 6, 7))], topology=g)
    for j in r.jobs:  # a ring Allgather: each rank sends the P-1 other shards once
        np.testing.assert_array_equal(j.injected_b, np.full(4, 3 * (256 << 10)))
    rows = r.job("b").rows()
    assert len(rows) == 4 and {row["host"] for row in rows} == {4, 5, 6, 7}


BAD = [
    (lambda: Job(name="j", hosts=(0, 1), steps=()), r"^job 'j': has no step$"),
    (lambda: Job(name="j", hosts=(0,), steps=(Compute(label="c", duration_ps=1),)), r"^job 'j': has 1 host"),
    (lambda: Job(name="j", hosts=(0, 0), steps=(Compute(label="c", duration_ps=1),)), r"a host appears twice"),
    (
        lambda: Job(name="j", hosts=(0, 1), steps=(Compute(label="c", duration_ps=1, after=(0,)),)),
        r"^job 'j': step 0 \(c\) waits for 0; a step waits only for earlier steps",
    ),
    (lambda: Job(name="j", hosts=(0, 1), steps=(Compute(label="c", duration_ps=-1),)), r"lasts -1 ps"),
    (lambda: Job(name="j", hosts=(0, 1), steps=(Compute(label="c", duration_ps=(1, 2, 3)),)), r"3 durations for 2"),
    (lambda: Job(name="j", hosts=(0, 1), steps=(Compute(label="c", duration_ps=(1, -2)),)), r"lasts \(1, -2\) ps"),
    (
        lambda: job_of_graph(
            "j",
            (0, 1),
            {"a": (Compute(label="a", duration_ps=1), ("b",)), "b": (Compute(label="b", duration_ps=1), ("a",))},
        ),
        r"^job 'j': the steps' dependencies have a cycle \(step 'a' is on or behind it\)$",
    ),
    (
        lambda: job_of_graph("j", (0, 1), {"a": (Compute(label="a", duration_ps=1), ("x",))}),
        r"^job 'j': step 'a' waits for 'x', which is no step of the job$",
    ),
    (lambda: fsdp_job("f", (0, 1), layers=0, bytes_per_layer=8, forward_ps=1, backward_ps=1), r"layers=0 must be"),
    (
        lambda: background_job("b", (0, 1), bytes_per_peer=8, load=0, rounds=1, data_rate_bps=10**9),
        r"^job 'b': load=0 must be a number in \(0, 1\]",
    ),
    (lambda: background_job("b", (0, 1), bytes_per_peer=8, load=1.5, rounds=1, data_rate_bps=10**9), r"load=1\.5"),
    (lambda: background_job("b", (0, 1), bytes_per_peer=8, load=0.5, rounds=0, data_rate_bps=10**9), r"rounds=0"),
]


@pytest.mark.parametrize(("make", "message"), BAD)
def test_a_bad_job_is_one_line(make, message):
    with pytest.raises(McsimError, match=message) as err:
        make()
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("jobs", "message"),
    [
        ((_ring_job("a", (0, 1)), _ring_job("b", (1, 2))), r"^job 'b': host 1 is also in job 'a'; jobs share no host$"),
        ((_ring_job("a", (0, 9)),), r"^job 'a': host 9 is not a host of the topology \(0\.\.7\)$"),
        ((_ring_job("a", (0, 1)), _ring_job("a", (2, 3))), r"^workload: two jobs are named 'a'$"),
        ((), r"^workload: has no job$"),
        (
            (
                Job(
                    name="a",
                    hosts=(0, 1),
                    steps=(
                        Collective(label="x", collective="allgather", algorithm="halving_doubling", bytes_per_rank=8),
                    ),
                ),
            ),
            r"^job 'a': step 0 \(x\): unknown algorithm for allgather 'halving_doubling'",
        ),
        (
            (
                Job(
                    name="a",
                    hosts=(0, 1, 2),
                    steps=(Collective(label="x", collective="allreduce", algorithm="ring_mcast", bytes_per_rank=8),),
                ),
            ),
            r"^job 'a': step 0 \(x\): allreduce ring_mcast is two teams; a job's collective step is one",
        ),
    ],
)
def test_bad_jobs_together_are_one_line_before_any_run(jobs, message):
    with pytest.raises(McsimError, match=message):
        run_jobs(jobs, topology=leaves(1, 8))


def test_a_workload_is_the_same_run_after_run():
    g = topology.resolve("fat-tree-k4")
    jobs = [
        fsdp_job("a", (0, 3, 5, 6, 9, 12), layers=2, bytes_per_layer=96 << 10, forward_ps=US, backward_ps=2 * US),
        _ring_job("b", (1, 2, 4, 7)),
    ]
    one, two = run_jobs(jobs, topology=g), run_jobs(jobs, topology=g)
    for a, b in zip(one.jobs, two.jobs, strict=True):
        np.testing.assert_array_equal(a.timeline, b.timeline)
        np.testing.assert_array_equal(a.injected_b, b.injected_b)


@pytest.mark.parametrize(("layers", "bucket"), [(4, 1), (5, 2), (3, 3)])
def test_data_parallel_buckets_start_after_their_last_backward_and_run_one_after_the_other(layers, bucket):
    job = data_parallel_job(
        "dp",
        tuple(range(4)),
        layers=layers,
        bytes_per_layer=64 << 10,
        forward_ps=10 * US,
        backward_ps=20 * US,
        bucket_layers=bucket,
    )
    buckets = [s for s in job.steps if isinstance(s, Collective)]
    assert len(buckets) == -(-layers // bucket)
    assert sum(s.bytes_per_rank_b for s in buckets) == layers * (64 << 10)  # every gradient once
    r = run_jobs([job], topology=leaves(1, 4)).jobs[0]
    label = {s.label: i for i, s in enumerate(job.steps)}
    tl = r.timeline
    order = list(reversed(range(layers)))
    for b, step in enumerate(buckets):
        last = order[min(len(order), (b + 1) * bucket) - 1]
        i = label[step.label]
        # it starts on every rank when its last rank has ended the bucket's last backward and the Allreduce before
        ready = tl[label[f"B{last}"], :, 2].max()
        if b:
            ready = max(ready, tl[label[buckets[b - 1].label], :, 2].max())
        assert (tl[i, :, 1] == ready).all()
    assert r.compute_ps == layers * 30 * US


def test_a_collective_waits_for_its_slowest_rank():
    # compute of 1, 2, 3, 4 us on ranks 0..3, then an Allgather: every rank enters at 4 us; its time after
    # that is its single run's
    g = leaves(1, 4)
    steps = (
        Compute(label="c", duration_ps=(US, 2 * US, 3 * US, 4 * US)),
        Collective(label="ag", collective="allgather", algorithm="ring", bytes_per_rank="8KiB", after=(0,)),
    )
    r = run_jobs([Job(name="j", hosts=(0, 1, 2, 3), steps=steps)], topology=g).jobs[0]
    alone = Scenario(topology=g, algorithm="ring", bytes_per_rank="8KiB").run()
    np.testing.assert_array_equal(r.timeline[0, :, 2], [US, 2 * US, 3 * US, 4 * US])
    np.testing.assert_array_equal(r.timeline[1, :, 0], [US, 2 * US, 3 * US, 4 * US])  # ready on each rank
    assert (r.timeline[1, :, 1] == 4 * US).all()
    np.testing.assert_array_equal(r.timeline[1, :, 2], 4 * US + alone.finish_ps)
    assert r.compute_ps == 4 * US and r.exposed_comm_ps == alone.time_ps


def _uplink(g: nx.Graph, r) -> int:
    """Packets leaf 0 sent up to the spine."""
    lay = layout_of(g)
    leaf = min(g.neighbors(0))
    spine = max(g.neighbors(leaf))
    return int(r.fabric.ports["tx_packets"][r.fabric.port_index(leaf, lay.first_port[leaf][spine])])


def test_a_multicast_allgather_puts_fewer_packets_on_the_shared_uplink_than_a_ring():
    # ranks on hosts 0, 1 (leaf 0) and 4, 5 (leaf 1), shards of 16 KiB = 4 packets, one WRITE each. Ring: the
    # edge from rank 1 to rank 2 carries P-1 = 3 shards up, and rank 0 acknowledges rank 3's WRITEs up (one
    # ACK per WRITE, or fewer, coalesced). Multicast: each of the 2 shards of leaf 0 goes up once, with the
    # FIN of rank 1 to rank 2 and rank 0's ACK of rank 3's FIN (the K = 2 tokens stay inside the leaves)
    g = leaves(2, 4)
    ring, mcast = (
        run_jobs(
            [
                Job(
                    name="a",
                    hosts=(0, 1, 4, 5),
                    steps=(Collective(label="ag", collective="allgather", algorithm=algo, bytes_per_rank="16KiB"),),
                )
            ],
            topology=g,
        )
        for algo in ("ring", "mcast")
    )
    assert 3 * 4 + 1 <= _uplink(g, ring) <= 3 * 4 + 3
    assert _uplink(g, mcast) == 2 * 4 + 2


def test_a_neighbour_s_multicast_allgathers_slow_a_job_less_than_its_rings():
    # jobs a and b interleaved over two leaves under one spine (4:1 oversubscribed): b's ring Allgathers
    # share the uplinks with a's Allgathers; a multicast a sends 2 shards up per Allgather instead of 3
    g = leaves(2, 4)

    def chain(name, hosts, algo):
        return Job(
            name=name,
            hosts=hosts,
            steps=tuple(
                Collective(
                    label=f"ag{i}",
                    collective="allgather",
                    algorithm=algo,
                    bytes_per_rank="256KiB",
                    after=(i - 1,) if i else (),
                )
                for i in range(3)
            ),
        )

    b = chain("b", (2, 3, 6, 7), "ring")
    alone = run_jobs([b], topology=g).jobs[0].iteration_ps
    with_ring = run_jobs([chain("a", (0, 1, 4, 5), "ring"), b], topology=g).job("b").iteration_ps
    with_mcast = run_jobs([chain("a", (0, 1, 4, 5), "mcast"), b], topology=g).job("b").iteration_ps
    assert alone < with_mcast < with_ring


def test_the_run_s_options_reach_the_fabric_and_every_step():
    # loss on every link: the ring steps resend what was lost and finish; an option a step owns is refused
    job = fsdp_job(
        "a", tuple(range(8)), layers=2, bytes_per_layer=256 << 10, forward_ps=US, backward_ps=US, allgather="ring"
    )
    r = run_jobs([job], topology="fat-tree-k4", loss=1e-3, seed=3)
    assert r.jobs[0].complete and r.fabric.drops_by_cause()["loss"] > 0
    assert sum(int(c.nic["retransmits"].sum()) for c in r.jobs[0].collectives.values()) > 0
    with pytest.raises(McsimError, match=r"^run_jobs: algorithm= is each collective step's own"):
        run_jobs([job], topology="fat-tree-k4", algorithm="ring")


@pytest.mark.parametrize("load", [0.25, 0.5, 1.0])
def test_background_traffic_offers_its_load_of_each_link(load):
    # one switch, 8 ranks: an all-at-once Alltoall runs at its bound, so rounds of Alltoall and idle gap offer
    # the load asked for (less the Alltoalls' latency above their bound)
    g, n, rounds = leaves(1, 8), 16 << 10, 3
    rate_bps = Scenario(topology=g, ranks=2, algorithm="ring", bytes_per_rank=4).data_rate_bps
    job = background_job("bg", tuple(range(8)), bytes_per_peer=n, load=load, rounds=rounds, data_rate_bps=rate_bps)
    bound_ps = 7 * n * 8 * 10**12 // rate_bps
    idle = [s for s in job.steps if isinstance(s, Compute)]
    assert len(idle) == rounds and all(s.duration_ps == round(bound_ps * (1 / load - 1)) for s in idle)
    r = run_jobs([job], topology=g).jobs[0]
    np.testing.assert_array_equal(r.injected_b, np.full(8, rounds * 7 * n))  # every block once per round
    # each round is the Alltoall's single run, then the gap: the load offered is the one asked for, less the
    # Alltoall's time above its bound
    single = Scenario(topology=g, collective="alltoall", algorithm="all_at_once", bytes_per_rank=n).run().time_ps
    assert r.iteration_ps == rounds * (single + idle[0].duration_ps)
    offered = int(r.injected_b[0]) * 8 * 10**12 / (r.iteration_ps * rate_bps)
    assert offered == pytest.approx(load * bound_ps / (bound_ps + load * (single - bound_ps)), rel=1e-6)


def test_a_heavier_background_slows_a_job_more():
    g = leaves(2, 4)
    rate_bps = Scenario(topology=g, ranks=2, algorithm="ring", bytes_per_rank=4).data_rate_bps
    study = _ring_job("a", (0, 1, 4, 5))

    def beside(load: float) -> int:
        bg = background_job("bg", (2, 3, 6, 7), bytes_per_peer=64 << 10, load=load, rounds=8, data_rate_bps=rate_bps)
        return run_jobs([study, bg], topology=g).job("a").iteration_ps

    alone = run_jobs([study], topology=g).jobs[0].iteration_ps
    assert alone < beside(0.2) < beside(0.9)
