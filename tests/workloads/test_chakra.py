# SPDX-License-Identifier: GPL-2.0-only
"""Chakra execution traces as jobs: a trace written from a known FSDP schedule runs as the FSDP generator's
job, step for step; sends and receives run as transfers; a pipeline's traces run as a graph per rank
(against the pipeline's closed form); real public traces run (a PyTorch trace; MSCCL's ring Allreduce in
sends and receives); bad traces are one line each."""

from pathlib import Path

import numpy as np
import pytest

from mcsim import topology
from mcsim.errors import McsimError
from mcsim.runs.jobs import run_jobs
from mcsim.runs.scenario import Scenario
from mcsim.workloads import Collective, Compute, Job
from mcsim.workloads.chakra import chakra_job, message_classes, read_trace
from mcsim.workloads.job import Message, Transfer
from mcsim.workloads.training import fsdp_job

REAL = Path(__file__).parent / "data" / "chakra-feeder.0.et.gz"  # see data/README.md
COMM_TYPE = {"allreduce": 0, "allgather": 2, "reduce_scatter": 7, "alltoall": 6}  # et_def.proto CollectiveCommType
US = 1_000_000


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def write_trace(path: Path, nodes: list[dict], version: str = "0.0.4") -> None:
    """A trace file: GlobalMetadata, then each Node, each after its length (protobuf's delimited stream)."""
    metadata_cls, node_cls = message_classes()
    messages = [metadata_cls(version=version).SerializeToString()]
    for n in nodes:
        node = node_cls(id=n["id"], name=n["name"], type=n["type"], duration_micros=n.get("us", 0))
        node.data_deps.extend(n.get("deps", ()))
        node.ctrl_deps.extend(n.get("ctrl", ()))
        for key, value in n.get("attr", {}).items():
            node.attr.add(name=key, int64_val=value)
        messages.append(node.SerializeToString())
    path.write_bytes(b"".join(varint(len(m)) + m for m in messages))


def trace_of(job, ranks: int) -> list[dict]:
    """The nodes of a job's steps: compute as COMP_NODE of its microseconds, collectives as COMM_COLL_NODE
    with comm_size the bytes each rank puts in (a Reduce-Scatter's P blocks)."""
    nodes = []
    for i, step in enumerate(job.steps):
        node = {"id": 100 + i, "name": step.label, "deps": [100 + a for a in step.after]}
        if isinstance(step, Compute):
            node |= {"type": 4, "us": step.duration_ps // US}
        else:
            size = step.bytes_per_rank_b * (ranks if step.collective in ("reduce_scatter", "alltoall") else 1)
            node |= {"type": 7, "attr": {"comm_type": COMM_TYPE[step.collective], "comm_size": size}}
        nodes.append(node)
    return nodes


def test_a_trace_of_an_fsdp_schedule_runs_as_the_fsdp_job(tmp_path):
    hosts = (0, 1, 2, 3)
    fsdp = fsdp_job("f", hosts, layers=3, bytes_per_layer=128 << 10, forward_ps=10 * US, backward_ps=20 * US)
    paths = []
    for r in range(4):
        paths.append(tmp_path / f"f.{r}.et")
        write_trace(paths[-1], trace_of(fsdp, 4))
    job, dropped = chakra_job("f", hosts, paths, {"allgather": "mcast", "reduce_scatter": "ring"})
    assert dropped == 0
    assert [(type(s), s.label, s.after) for s in job.steps] == [(type(s), s.label, s.after) for s in fsdp.steps]
    a = run_jobs([job], topology="fat-tree-k4").jobs[0]
    b = run_jobs([fsdp], topology="fat-tree-k4").jobs[0]
    np.testing.assert_array_equal(a.timeline, b.timeline)


def test_compute_may_last_differently_per_rank(tmp_path):
    nodes = [
        {"id": 1, "name": "c", "type": 4, "us": 5},
        {"id": 2, "name": "ar", "type": 7, "deps": [1], "attr": {"comm_type": 0, "comm_size": 4096}},
    ]
    paths = []
    for r in range(3):
        paths.append(tmp_path / f"t.{r}.et")
        write_trace(paths[-1], [dict(nodes[0], us=5 + r), nodes[1]])
    job, _ = chakra_job("t", (0, 1, 2), paths)
    assert job.steps[0].duration_ps == (5 * US, 6 * US, 7 * US)
    r = run_jobs([job], topology="fat-tree-k4").jobs[0]
    assert (r.timeline[1, :, 1] == 7 * US).all()  # the Allreduce starts with its slowest rank


def test_a_real_public_trace_runs():
    # one rank's trace of a PyTorch run (MLCommons Chakra's feeder test trace), on 4 ranks
    trace = read_trace(REAL)
    assert trace.version == "1.0.1" and len(trace.nodes) == 3664
    job, dropped = chakra_job("real", (0, 1, 2, 3), [REAL] * 4)
    collectives = [s for s in job.steps if isinstance(s, Collective)]
    assert dropped == 0 and len(job.steps) == 3664
    assert [s.collective for s in collectives] == ["broadcast"] * 2 + ["allreduce"] * 5
    r = run_jobs([job], topology="fat-tree-k4").jobs[0]
    assert r.complete
    assert r.iteration_ps >= r.compute_ps > 0  # one compute unit per rank: the compute alone is a bound
    for s, step in enumerate(job.steps):  # every step after the ones it waits for, on every rank
        for a in step.after:
            assert (r.timeline[s, :, 1] >= r.timeline[a, :, 2]).all()


def _bad(tmp_path: Path, nodes: list[dict], version: str = "0.0.4") -> Path:
    path = tmp_path / "bad.0.et"
    write_trace(path, nodes, version)
    return path


COMP = {"id": 1, "name": "c", "type": 4, "us": 1}


@pytest.mark.parametrize(
    ("nodes", "version", "message"),
    [
        (
            [COMP],
            "0.0.3",
            r"Chakra schema version '0\.0\.3', which this reader cannot read \(it reads 0\.0\.4 and 1\.x\)",
        ),
        (
            [COMP, {"id": 2, "name": "s", "type": 5}],
            "0.0.4",
            r"rank 0's node 2 \(s\): comm_dst=None; give another rank",
        ),
        (
            [COMP, {"id": 2, "name": "s", "type": 6, "attr": {"comm_src": 0, "comm_size": 8}}],
            "0.0.4",
            r"rank 0's node 2 \(s\): comm_src=0; give another rank \(0\.\.1\)",
        ),
        (
            [COMP, {"id": 2, "name": "s", "type": 6, "attr": {"comm_src": 7, "comm_size": 8}}],
            "0.0.4",
            r"comm_src=7; give another rank",
        ),
        (
            [COMP, {"id": 2, "name": "b", "type": 7, "attr": {"comm_type": 9, "comm_size": 8}}],
            "1.0.0",
            r"node 2 \(b\): a BARRIER collective, which mcsim does not run",
        ),
        (
            [COMP, {"id": 2, "name": "x", "type": 7, "attr": {"comm_type": 0}}],
            "1.0.0",
            r"node 2 \(x\): comm_size=None; a collective needs its bytes",
        ),
        (
            [dict(COMP, deps=[2]), {"id": 2, "name": "d", "type": 4, "deps": [1]}],
            "1.0.0",
            r"^job 'j': the steps' dependencies have a cycle",
        ),
        ([COMP, dict(COMP, name="again")], "1.0.0", r"a node id appears twice"),
        ([{"id": 1, "name": "z", "type": 0}], "1.0.0", r"node 1 \(z\) is a INVALID_NODE"),
    ],
)
def test_a_bad_trace_is_one_line(tmp_path, nodes, version, message):
    path = _bad(tmp_path, nodes, version)
    with pytest.raises(McsimError, match=message) as err:
        chakra_job("j", (0, 1), [path, path])
    assert "\n" not in str(err.value)


def _p2p_traces(tmp_path: Path, ranks: int, nodes_of) -> list[Path]:
    paths = []
    for r in range(ranks):
        paths.append(tmp_path / f"p.{r}.et")
        write_trace(paths[-1], nodes_of(r))
    return paths


def _send(node_id: int, to: int, size: int, deps=(), tag: int = 0) -> dict:
    return {"id": node_id, "name": f"send{node_id}", "type": 5, "deps": list(deps),
            "attr": {"comm_dst": to, "comm_size": size, "comm_tag": tag}}  # fmt: skip


def _recv(node_id: int, frm: int, size: int, deps=(), tag: int = 0) -> dict:
    return {"id": node_id, "name": f"recv{node_id}", "type": 6, "deps": list(deps),
            "attr": {"comm_src": frm, "comm_size": size, "comm_tag": tag}}  # fmt: skip


def test_sends_and_receives_run_as_the_transfers_of_their_schedule(tmp_path):
    # a ring exchange: compute, a send to r + 1 and a receive from r - 1, compute; the trace runs as the job
    # written by hand: each message leaves once its sender has computed, and is in no sooner than its bytes
    # take at the hosts' data rate
    n, ranks = 48 << 10, 4

    def nodes(r: int) -> list[dict]:
        return [
            {"id": 1, "name": "c", "type": 4, "us": r + 1},
            _send(2, (r + 1) % ranks, n, deps=[1]),
            _recv(3, (r - 1) % ranks, n, deps=[1]),
            {"id": 4, "name": "d", "type": 4, "us": 1, "deps": [2, 3]},
        ]

    job, _ = chakra_job("p", tuple(range(ranks)), _p2p_traces(tmp_path, ranks, nodes))
    by_hand = Job(name="p", hosts=tuple(range(ranks)), steps=(
        Compute(label="c", duration_ps=tuple((r + 1) * US for r in range(ranks))),
        Transfer(label="send2", messages=tuple(Message(r, (r + 1) % ranks, n, into=2) for r in range(ranks)),
                 after=(0,)),
        Transfer(label="recv3", messages=(), after=(0,)),
        Compute(label="d", duration_ps=US, after=(1, 2)),
    ))  # fmt: skip
    assert job == by_hand
    r = run_jobs([job], topology="fat-tree-k4").jobs[0]
    rate_bps = Scenario(topology="fat-tree-k4", ranks=2, algorithm="ring", bytes_per_rank=4).data_rate_bps
    for src in range(ranks):  # a send leaves when its rank has computed; a receive ends once its message is in
        dst = (src + 1) % ranks
        assert r.timeline[1, src, 1] == (src + 1) * US
        assert r.timeline[2, dst, 2] >= max((src + 1) * US + n * 8 * 10**12 // rate_bps, (dst + 1) * US)
    assert int(r.injected_b.sum()) == ranks * n


def test_a_position_may_send_on_one_rank_and_receive_on_another(tmp_path):
    # a two-stage pipeline: rank 0 sends its activations to rank 1 at the same node (tags keep two apart)
    def nodes(r: int) -> list[dict]:
        p2p = (
            [_send(2, 1, 1000, tag=7), _send(3, 1, 3000, deps=[2], tag=8)]
            if r == 0
            else [_recv(2, 0, 1000, tag=7), _recv(3, 0, 3000, deps=[2], tag=8)]
        )
        return [{"id": 1, "name": "c", "type": 4, "us": 2}, *p2p]  # fmt: skip

    job, _ = chakra_job("pp", (0, 1), _p2p_traces(tmp_path, 2, nodes))
    assert [s.messages for s in job.steps[1:]] == [(Message(0, 1, 1000, into=1),), (Message(0, 1, 3000, into=2),)]
    r = run_jobs([job], topology="fat-tree-k4").jobs[0]
    np.testing.assert_array_equal(r.injected_b, [4000, 0])
    assert r.complete


@pytest.mark.parametrize(
    ("nodes_of", "message"),
    [
        (lambda r: [_send(1, 1 - r, 64)] if r == 0 else [_recv(1, 0, 64, tag=3)],
         r"rank 0's send node 1 \(from rank 0 to rank 1, tag 0\) has no partner in the other rank's trace"),
        (lambda r: [_send(1, 1, 64)] if r == 0 else [_recv(1, 0, 32)],
         r"rank 0's send node 1 of 64 B is received by rank 1's node 1 as 32 B"),
        (lambda r: [_recv(1, 1 - r, 64)],
         r"rank 1's receive node 1 \(from rank 0 to rank 1, tag 0\) has no partner"),
        (lambda r: [_send(1, 1 - r, 0)], r"comm_size=0; a message needs its bytes"),
        (lambda r: [_send(1, 1, 8)] if r == 0 else [{"id": 1, "name": "c", "type": 4}],
         r"rank 0's send node 1 \(from rank 0 to rank 1, tag 0\) has no partner"),
    ],
)  # fmt: skip
def test_a_bad_send_or_receive_is_one_line(tmp_path, nodes_of, message):
    with pytest.raises(McsimError, match=message) as err:
        chakra_job("j", (0, 1), _p2p_traces(tmp_path, 2, nodes_of))
    assert "\n" not in str(err.value)


def test_a_file_that_is_not_a_trace_is_one_line(tmp_path):
    junk = tmp_path / "junk.et"
    junk.write_bytes(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")
    with pytest.raises(McsimError, match=r"not a Chakra trace \(a length is longer than 64 bits"):
        read_trace(junk)
    junk.write_bytes(b"\x05ab")
    with pytest.raises(McsimError, match=r"not a Chakra trace \(a message of 5 B runs past the end of the file\)"):
        read_trace(junk)
    junk.write_bytes(b"\x02\x0a")  # a message whose field 1 runs past its end
    with pytest.raises(McsimError, match=r"^.*junk\.et: not a Chakra trace"):
        read_trace(junk)
    with pytest.raises(McsimError, match=r"^/\S+/missing\.et does not exist$"):  # as every file mcsim reads says
        read_trace(tmp_path / "missing.et")


def test_ranks_whose_traces_differ_are_one_line(tmp_path):
    a, b = tmp_path / "a.et", tmp_path / "b.et"
    write_trace(a, [COMP, {"id": 2, "name": "ar", "type": 7, "deps": [1], "attr": {"comm_type": 0, "comm_size": 64}}])
    write_trace(b, [COMP, {"id": 2, "name": "ar", "type": 7, "deps": [1], "attr": {"comm_type": 0, "comm_size": 32}}])
    with pytest.raises(
        McsimError, match=r"collective 0 is rank 0's node 2 and rank 1's node 2, of another type or size"
    ):
        chakra_job("j", (0, 1), [a, b])
    write_trace(b, [COMP])
    with pytest.raises(McsimError, match=r"rank 1's trace \(.*b\.et\) holds 0 collectives, rank 0's 1"):
        chakra_job("j", (0, 1), [a, b])
    with pytest.raises(McsimError, match=r"1 trace files for 2 ranks"):
        chakra_job("j", (0, 1), [a])


def test_ctrl_deps_order_nothing_and_missing_deps_are_dropped_and_counted(tmp_path):
    path = tmp_path / "t.et"
    # node 2 names node 1 its parent (ctrl) and waits for node 7, which the trace does not hold
    write_trace(path, [dict(COMP, ctrl=[2]), {"id": 2, "name": "k", "type": 4, "us": 2, "ctrl": [1], "deps": [7]}])
    job, dropped = chakra_job("j", (0, 1), [path, path])
    assert dropped == 1 and [s.after for s in job.steps] == [(), ()]


def test_a_pipeline_s_traces_run_as_a_graph_per_rank(tmp_path):
    # two pipeline stages, M micro-batches, forward only: rank 0 computes F_m (f us each) and sends its
    # activations to rank 1, which receives them in order and computes G_m (g us); then an Allreduce of both.
    # A message is posted when F_m has ended (rank 1 is ready sooner) and, f being longer than a message,
    # none waits for another: R_m ends at (m + 1) f + T_in, G_m runs from then, and the Allreduce starts when
    # the later rank is ready (T_in, T_ack: one message's receive and acknowledgement times alone)
    m_batches, f, g, n = 4, 10, 6, 32 << 10

    def nodes(r: int) -> list[dict]:
        out = []
        for m in range(m_batches):
            if r == 0:
                out.append({"id": 10 + m, "name": f"F{m}", "type": 4, "us": f, "deps": [10 + m - 1] if m else []})
                out.append(_send(20 + m, 1, n, deps=[10 + m], tag=m))
            else:
                out.append(_recv(30 + m, 0, n, deps=[30 + m - 1] if m else [], tag=m))
                out.append({"id": 40 + m, "name": f"G{m}", "type": 4, "us": g, "deps": [30 + m]})
        last = [20 + m_batches - 1] if r == 0 else [40 + m_batches - 1]
        return [*out, {"id": 99, "name": "ar", "type": 7, "deps": last, "attr": {"comm_type": 0, "comm_size": 4096}}]

    job, dropped = chakra_job("pp", (0, 1), _p2p_traces(tmp_path, 2, nodes))
    assert dropped == 0 and len(job.steps) == 4 * m_batches + 1
    assert {s.rank for s in job.steps if not isinstance(s, Collective)} == {0, 1}
    r = run_jobs([job], topology="fat-tree-k4").jobs[0]
    alone = run_jobs([Job(name="m", hosts=(0, 1), steps=(Transfer(label="t", messages=(Message(0, 1, n),)),))],
                     topology="fat-tree-k4").jobs[0].timeline[0, :, 2]  # fmt: skip
    t_ack, t_in = int(alone[0]), int(alone[1])
    assert t_in < f * US  # the messages do not overlap
    step = {s.label: i for i, s in enumerate(job.steps)}
    for m in range(m_batches):
        assert r.timeline[step[f"recv{30 + m}"], 1, 2] == (m + 1) * f * US + t_in
        assert r.timeline[step[f"G{m}"], 1, 2] == (m + 1) * f * US + t_in + g * US
        assert r.timeline[step[f"send{20 + m}"], 0, 2] == (m + 1) * f * US + t_ack
    ar = step["ar"]
    assert (r.timeline[ar, :, 1] == max(m_batches * f * US + t_ack, m_batches * f * US + t_in + g * US)).all()
    assert r.compute_ps == m_batches * f * US  # rank 0's compute (rank 1's: M g)
    rows = [row for row in r.rows() if row["label"] == "G0"]
    assert [row["rank"] for row in rows] == [1]  # a rank's own step is that rank's only


def test_a_dependency_between_collectives_holds_on_the_ranks_whose_traces_have_it(tmp_path):
    # rank 0's second Allreduce waits for its first, rank 1's does not (it waits for 5 us of compute): on rank 1
    # the second starts with the compute; on rank 0 once the first has ended there
    def nodes(r: int) -> list[dict]:
        ar = {"type": 7, "attr": {"comm_type": 0, "comm_size": 64 << 10}}
        first = {"id": 1, "name": "ar1", **ar}
        if r == 0:
            return [first, {"id": 2, "name": "ar2", "deps": [1], **ar}]
        return [first, {"id": 3, "name": "c", "type": 4, "us": 5}, {"id": 2, "name": "ar2", "deps": [3], **ar}]

    job, _ = chakra_job("c", (0, 1), _p2p_traces(tmp_path, 2, nodes))
    relays = [s for s in job.steps if isinstance(s, Transfer)]
    assert [(s.rank, s.messages) for s in relays] == [(0, ())]
    r = run_jobs([job], topology="fat-tree-k4").jobs[0]
    step = {s.label: i for i, s in enumerate(job.steps)}
    first_end = r.timeline[step["ar1"], 0, 2]
    assert r.timeline[step["ar2"], 1, 0] == 5 * US  # rank 1: ready after its compute, not after ar1
    assert r.timeline[step["ar2"], 0, 0] == first_end  # rank 0: once ar1 ended (the relay passes at once)
    assert (r.timeline[step["ar2"], :, 1] == max(first_end, 5 * US)).all()


def test_a_real_trace_of_sends_and_receives_runs():
    # MSCCL's ring Allreduce of 1 MiB on 8 ranks as ASTRA-sim ships it: per rank 14 sends of 128 KiB (to r + 1),
    # 14 receives (from r - 1) and 7 computes; a rank's receive waits for its send, its next send for the
    # compute after the receive. So each rank's chain is its 14 sends (each at least one message's
    # acknowledgement alone) and its computes, and on one switch at most the ACKs' share of a link more
    ranks, n = 8, 128 << 10
    folder = Path(__file__).parent / "data" / "msccl-ring-allreduce"
    job, dropped = chakra_job(
        "msccl", tuple(range(ranks)), [folder / f"custom_allreduce.{r}.et.gz" for r in range(ranks)]
    )
    transfers = [s for s in job.steps if isinstance(s, Transfer)]
    assert dropped == 0 and len(job.steps) == 35 and len(transfers) == 28
    assert sorted((m.src, m.dst) for s in transfers for m in s.messages) == sorted(
        (r, (r + 1) % ranks) for r in range(ranks) for _ in range(14)
    )
    g = topology.leaf_spine(1, 0, ranks, rate_bps=100 * 10**9, delay_ps=100_000)
    g.graph.update(name="star-8")
    r = run_jobs([job], topology=g).jobs[0]
    assert r.complete
    np.testing.assert_array_equal(r.injected_b, np.full(ranks, 14 * n))  # 2 (P-1) blocks of N / P
    one = Job(name="m", hosts=(0, 1), steps=(Transfer(label="t", messages=(Message(0, 1, n),)),))
    t_ack = int(run_jobs([one], topology=g).jobs[0].timeline[0, 0, 2])
    chain = 14 * t_ack + r.compute_ps
    assert chain <= r.iteration_ps <= chain + 14 * ranks * 64 * 8 * 10**12 // (100 * 10**9)
