# SPDX-License-Identifier: GPL-2.0-only
"""Transfer steps (point-to-point messages between a job's ranks): one message lasts its RC WRITE's verbs
run to the ps on both ends; a message leaves with its sender (eager) and may arrive in another step, where
it waits for its receiver; a ring of sends before receives does not deadlock;
a permutation on one switch runs every message at once; an incast is held to its receiver's link; bytes are
conserved; permutation background traffic offers its load; bad messages are one line."""

import networkx as nx
import numpy as np
import pytest

from mcsim import topology
from mcsim.config.rdma import RcOp
from mcsim.errors import McsimError
from mcsim.runs.jobs import run_jobs
from mcsim.runs.scenario import Scenario
from mcsim.runs.verbs import run_verbs
from mcsim.workloads import Compute, Job
from mcsim.workloads.job import Message, Transfer, job_of_graph
from mcsim.workloads.training import background_job, derangement

US = 1_000_000  # ps
RATE_BPS = 100 * 10**9


def star(hosts: int) -> nx.Graph:
    """One switch, hosts at 100 Gbit/s: no two messages with distinct ends share a link direction."""
    g = topology.leaf_spine(1, 0, hosts, rate_bps=RATE_BPS, delay_ps=100_000)
    g.graph.update(name=f"star-{hosts}")
    return g


def _transfer(*messages: Message, hosts: int = 4, after: tuple[int, ...] = ()) -> Job:
    return Job(name="j", hosts=tuple(range(hosts)), steps=(Transfer(label="t", messages=messages, after=after),))


@pytest.mark.parametrize("n", [4, 100_000, 1 << 20])
def test_one_message_lasts_its_write_s_verbs_run_on_both_ends(n):
    g = star(4)
    r = run_jobs([_transfer(Message(2, 1, n))], topology=g).jobs[0]
    v = run_verbs(g, rc_ops=[RcOp(verb="write_imm", src=2, dst=1, size_b=n)])
    assert r.timeline[0, 2, 2] == v.rc_done_ps[0]  # the sender: its WRITE acknowledged
    assert r.timeline[0, 1, 2] == v.rc_responder_done_ps[0]  # the receiver: its completion processed
    np.testing.assert_array_equal(r.timeline[0, [0, 3]], np.zeros((2, 3)))  # no message: ends when ready
    np.testing.assert_array_equal(r.injected_b, [0, 0, n, 0])


def test_a_message_leaves_with_its_sender_and_may_arrive_in_another_step():
    # ranks compute 1, 20, 3 and 4 us; ranks 0 and 2 send to 1 and 3 in step 1, which receive in step 2. A
    # message leaves when its sender is ready (eager) and lasts one message's time (the two share no link);
    # the receiver's step ends when it is ready and the message is in: rank 1 at 20 us (its message waited
    # in its buffer), rank 3 when the message arrives
    g, n = star(4), 64 << 10
    steps = (
        Compute(label="c", duration_ps=(1 * US, 20 * US, 3 * US, 4 * US)),
        Transfer(label="send", messages=(Message(0, 1, n, into=2), Message(2, 3, n, into=2)), after=(0,)),
        Transfer(label="recv", messages=(), after=(0,)),
        Compute(label="d", duration_ps=US, after=(1, 2)),
    )
    r = run_jobs([Job(name="j", hosts=(0, 1, 2, 3), steps=steps)], topology=g).jobs[0]
    t_ack, t_in = (int(x) for x in run_jobs([_transfer(Message(0, 1, n))], topology=g).jobs[0].timeline[0, :2, 2])
    assert 1 * US + t_in < 20 * US and 3 * US + t_in > 4 * US  # the cases the test is about
    np.testing.assert_array_equal(r.timeline[1, [0, 2], 2], [1 * US + t_ack, 3 * US + t_ack])  # acknowledged
    np.testing.assert_array_equal(r.timeline[2, 1], [20 * US, 20 * US, 20 * US])  # in before it was ready
    np.testing.assert_array_equal(r.timeline[2, 3], [4 * US, 4 * US, 3 * US + t_in])  # waited for its message
    for rank in (1, 3):  # nothing to send: at once
        assert r.timeline[1, rank, 1] == r.timeline[1, rank, 2] == r.timeline[1, rank, 0]
    np.testing.assert_array_equal(r.timeline[3, :, 1], np.maximum(r.timeline[1, :, 2], r.timeline[2, :, 2]))


def test_a_ring_of_sends_each_before_its_receive_does_not_deadlock():
    # every rank sends to r + 1 and then receives from r - 1 (its receive waits for its send): a rendezvous
    # would wait around the ring for ever; eager messages all leave at once, as a permutation
    g, n = star(4), 32 << 10
    steps = (
        Transfer(label="send", messages=tuple(Message(r, (r + 1) % 4, n, into=1) for r in range(4))),
        Transfer(label="recv", messages=(), after=(0,)),
    )
    r = run_jobs([Job(name="j", hosts=(0, 1, 2, 3), steps=steps)], topology=g).jobs[0]
    assert r.complete
    np.testing.assert_array_equal(r.injected_b, np.full(4, n))
    np.testing.assert_array_equal(r.timeline[1, :, 2], np.maximum(r.timeline[0, :, 2], r.timeline[1, :, 2]))


def test_a_permutation_on_one_switch_runs_its_messages_at_once():
    # each host sends one message and receives one: no link carries two messages' data; only the ACKs of
    # the message in share a link with the data of the message out
    g, n = star(8), 256 << 10
    alone = run_jobs([_transfer(Message(0, 1, n), hosts=8)], topology=g).jobs[0].timeline[0, :2, 2]
    perm = derangement(8, np.random.default_rng(5))
    r = run_jobs([_transfer(*(Message(s, d, n) for s, d in enumerate(perm)), hosts=8)], topology=g).jobs[0]
    ends = r.timeline[0, :, 2]
    assert (ends >= alone.max()).all()
    assert (ends - alone.max() <= 8 * 64 * 8 * 10**12 // RATE_BPS).all()  # ACKs' share: <= a few small packets
    np.testing.assert_array_equal(r.injected_b, np.full(8, n))


@pytest.mark.parametrize("senders", [2, 5])
def test_an_incast_is_held_to_the_receiver_s_link(senders):
    g, n = star(8), 128 << 10
    r = run_jobs([_transfer(*(Message(s, 0, n) for s in range(1, senders + 1)), hosts=8)], topology=g).jobs[0]
    bound_ps = senders * n * 8 * 10**12 // RATE_BPS  # the receiver's link carries every byte
    one = run_jobs([_transfer(Message(1, 0, n), hosts=8)], topology=g).jobs[0].timeline[0, 0, 2]
    assert r.timeline[0, 0, 2] >= max(bound_ps, one)
    assert r.timeline[0, 0, 2] <= bound_ps + one  # no worse than the bound plus one message's latency
    assert int(r.injected_b.sum()) == senders * n


@pytest.mark.parametrize("load", [0.25, 1.0])
def test_permutation_background_offers_its_load(load):
    g, n, rounds = star(8), 64 << 10, 3
    rate_bps = Scenario(topology=g, ranks=2, algorithm="ring", bytes_per_rank=4).data_rate_bps
    job = background_job(
        "bg", tuple(range(8)), bytes_per_peer=n, load=load, rounds=rounds, data_rate_bps=rate_bps,
        pattern="permutation", seed=3,
    )  # fmt: skip
    bound_ps = n * 8 * 10**12 // rate_bps
    rounds_ = [s for s in job.steps if isinstance(s, Transfer)]
    assert len(rounds_) == rounds
    for s in rounds_:  # a derangement: every rank sends one message and receives one
        assert sorted(m.src for m in s.messages) == sorted(m.dst for m in s.messages) == list(range(8))
        assert all(m.src != m.dst for m in s.messages)
    r = run_jobs([job], topology=g).jobs[0]
    np.testing.assert_array_equal(r.injected_b, np.full(8, rounds * n))
    gap = round(bound_ps * (1 / load - 1))
    assert r.iteration_ps >= rounds * (bound_ps + gap)
    again = background_job(
        "bg", tuple(range(8)), bytes_per_peer=n, load=load, rounds=rounds, data_rate_bps=rate_bps,
        pattern="permutation", seed=3,
    )  # fmt: skip
    assert again == job  # the seed draws the same permutations
    other = background_job(
        "bg", tuple(range(8)), bytes_per_peer=n, load=load, rounds=rounds, data_rate_bps=rate_bps,
        pattern="permutation", seed=4,
    )  # fmt: skip
    assert other != job


def test_a_graph_s_message_arrives_in_the_step_it_names():
    nodes = {
        "s": (Transfer(label="s", messages=(Message(0, 1, 4096, into="r"),)), ()),
        "c": (Compute(label="c", duration_ps=(0, 2 * US)), ()),
        "r": (Transfer(label="r", messages=()), ("c",)),
    }
    job = job_of_graph("g", (0, 1), nodes)
    assert job.steps[0].messages[0].into == next(i for i, s in enumerate(job.steps) if s.label == "r")
    r = run_jobs([job], topology=star(2)).jobs[0]
    recv = next(i for i, s in enumerate(job.steps) if s.label == "r")
    t_in = run_jobs([_transfer(Message(0, 1, 4096), hosts=2)], topology=star(2)).jobs[0].timeline[0, 1, 2]
    assert r.timeline[0, 0, 1] == 0 and t_in < 2 * US  # the message left at once ...
    np.testing.assert_array_equal(r.timeline[recv, 1], [2 * US, 2 * US, 2 * US])  # ... and was in when rank 1 was


T = Transfer
BAD = [
    (lambda: _transfer(Message(1, 1, 8)), r"^job 'j': step 0 \(t\): a message from rank 1 to itself"),
    (lambda: _transfer(Message(0, 4, 8)), r"^job 'j': step 0 \(t\): a message: dst=4 must be 0\.\.3"),
    (lambda: _transfer(Message(-1, 2, 8)), r"src=-1 must be 0\.\.3"),
    (lambda: _transfer(Message(0, 1, 0)), r"a message of 0 bytes; give >= 1"),
    (lambda: _transfer(Message(0, 1, "lots")), r"lots"),
    (lambda: _transfer(Message(0, 1, 8, into=5)), r"a message arrives in step 5, which is no Transfer step"),
    (
        lambda: Job(
            name="j",
            hosts=(0, 1),
            steps=(Compute(label="c", duration_ps=1), T(label="t", messages=(Message(0, 1, 8, into=0),))),
        ),
        r"arrives in step 0, which is no Transfer step",
    ),
    (lambda: _transfer((0, 1, 8)), r"messages must be a tuple of Message"),
    (
        lambda: Job(name="j", hosts=(0, 1), steps=(Compute(label="c", duration_ps=1, rank=2),)),
        r"^job 'j': step 0 \(c\): rank=2 must be 0\.\.1",
    ),
    (
        lambda: Job(
            name="j",
            hosts=(0, 1),
            steps=(Compute(label="a", duration_ps=1, rank=0), Compute(label="b", duration_ps=1, rank=1, after=(0,))),
        ),
        r"^job 'j': step 1 \(b\), rank 1's own, waits for step 0, rank 0's own$",
    ),
    (
        lambda: Job(
            name="j",
            hosts=(0, 1),
            steps=(T(label="s", messages=(Message(0, 1, 8, into=1),), rank=1), T(label="r", messages=(), rank=1)),
        ),
        r"a message from rank 0 to rank 1 leaves or enters a step that is another rank's own",
    ),
    (
        lambda: Job(name="j", hosts=(0, 1), steps=(T(label="s", messages=(Message(0, 1, 8),), rank=0),)),
        r"a message from rank 0 to rank 1 leaves or enters a step that is another rank's own",
    ),
    (
        lambda: job_of_graph("g", (0, 1), {"s": (T(label="s", messages=(Message(0, 1, 8, into="x"),)), ())}),
        r"^job 'g': step 's' sends a message into 'x', which is no step of the job$",
    ),
    (
        lambda: background_job("b", (0, 1), bytes_per_peer=8, load=0.5, rounds=1, data_rate_bps=10**9, pattern="ring"),
        r"unknown pattern of job 'b' 'ring'; choose one of alltoall, permutation",
    ),
    (
        lambda: background_job(
            "b", (0, 1), bytes_per_peer=8, load=0.5, rounds=1, data_rate_bps=10**9, pattern="permutation", seed=-1
        ),
        r"seed=-1 must be >= 0",
    ),
]


@pytest.mark.parametrize(("make", "message"), BAD)
def test_a_bad_transfer_is_one_line(make, message):
    with pytest.raises(McsimError, match=message) as err:
        make()
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("seed", range(6))
def test_messages_arrive_over_a_lossy_fabric(seed):
    # rounds of permutations on a fat tree losing 1e-3 of the packets on every link: go-back-N resends what
    # was lost, every step ends on every rank and every message's bytes leave once (plus what was resent)
    job = background_job(
        "bg", tuple(range(16)), bytes_per_peer=96 << 10, load=1.0, rounds=3, data_rate_bps=100 * 10**9,
        pattern="permutation", seed=seed,
    )  # fmt: skip
    r = run_jobs([job], topology="fat-tree-k4", loss=1e-3, seed=seed)
    jr = r.jobs[0]
    assert jr.complete
    assert r.fabric.drops_by_cause()["loss"] > 0
    assert int(jr.injected_b.sum()) >= 16 * 3 * (96 << 10)  # every message, and what was resent
