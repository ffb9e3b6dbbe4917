# SPDX-License-Identifier: GPL-2.0-only
"""A workload that does not finish says why, as the collective commands' INCOMPLETE does: the step (index and
label), the ranks still waiting and what each waits for (a collective's unfinished ranks and their reason, the
ranks that never entered a collective, a message from or to a rank, a compute unit), in JobResult, the
`mcsim workload` table, its JSON and CSV rows, and a workload sweep's progress lines and `sweep show` (whose
status column says incomplete, not ok)."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from mcsim import topology
from mcsim.config.fabric import FOREVER, Faults
from mcsim.errors import IncompleteRun
from mcsim.native import jobs
from mcsim.runs.jobs import JobResult, run_jobs
from mcsim.workloads.job import Collective, Compute, Job, Message, Transfer

HOSTS = (0, 1, 2, 3)
CUT_OFF = "its only link went down for good at 0.000 us (Faults.link_down)"
RC_ERROR = "an RC queue pair of its NIC exhausted its retries (RcConfig.retry_cnt) and went to the error state"
HELD_UP = "it misses data that ranks 2, 3 could not deliver (cut off, or a failed RC queue pair)"


def cut(host: int) -> Faults:
    """Host's only link down from 0, forever."""
    leaf = min(topology.resolve("fat-tree-k4").neighbors(host))
    return Faults(link_down=((host, leaf, 0, FOREVER),))


def ag(after: tuple[int, ...] = ()) -> Collective:
    return Collective(label="AG", collective="allgather", algorithm="ring", bytes_per_rank="4KiB", after=after)


def send(*messages: Message) -> Transfer:
    return Transfer(label="send", messages=messages)


# (case, the job's steps, the faults, the rate, the job's why_incomplete)
CASES = [
    (
        "collective-under-a-cut-off-host",
        (ag(),),
        cut(3),
        "100Gbps",
        f"step 0 (AG): ranks 0, 1 of 4 did not finish: {HELD_UP}; rank 2 of 4 did not finish: {RC_ERROR}; "
        f"rank 3 of 4 did not finish: {CUT_OFF}",
    ),
    (
        "message-to-a-cut-off-host-and-the-collective-behind-it",
        (
            send(Message(0, 3, 4096), Message(0, 1, 4096)),
            ag(after=(0,)),
            Compute(label="C", duration_ps=10, after=(1,)),
        ),
        cut(3),
        "100Gbps",
        "step 0 (send): rank 0 of 4 waits for its message to rank 3 to be acknowledged: rank 3's only link went "
        f"down for good at 0.000 us (Faults.link_down); rank 3 of 4 waits for a message from rank 0: {CUT_OFF}; "
        "step 1 (AG): ranks 1, 2 of 4 wait for ranks 0, 3 to enter it; 1 later step waits behind them",
    ),
    (
        "message-from-a-cut-off-host",
        (send(Message(3, 1, 4096), Message(3, 2, 4096), Message(0, 1, 4096)),),
        cut(3),
        "100Gbps",
        "step 0 (send): ranks 1, 2 of 4 wait for a message from rank 3: rank 3's only link went down for good at "
        f"0.000 us (Faults.link_down); rank 3 of 4 waits for its 2 messages to ranks 1, 2 to be acknowledged: "
        f"{CUT_OFF}",
    ),
    (
        "a-message-at-1bps-exhausts-its-rc-retries",
        (send(Message(0, 1, 4096)), Compute(label="C", duration_ps=10, after=(0,))),
        None,
        "1bps",
        f"step 0 (send): rank 0 of 4 waits for its message to rank 1 to be acknowledged: {RC_ERROR}; "
        "1 later step waits behind them",
    ),
]


@pytest.mark.parametrize(("steps", "faults", "rate", "why"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_an_incomplete_job_names_the_step_the_ranks_and_what_they_wait_for(steps, faults, rate, why):
    (r,) = run_jobs([Job(name="j", hosts=HOSTS, steps=steps)], topology="fat-tree-k4", rate=rate, faults=faults).jobs
    assert not r.complete
    assert r.why_incomplete() == why
    assert r.incomplete_line() == f"INCOMPLETE: {why}"
    assert r.summary()["why_incomplete"] == why and r.summary()["complete"] is False
    with pytest.raises(IncompleteRun, match=f"^job 'j': {re.escape(why)} \\(see timeline: -1\\)$"):
        _ = r.iteration_ps


def test_a_message_whose_senders_queue_pair_failed_names_the_sender():
    """Host 0's first packet lost, no RC retry: its QP fails; rank 1 waits for what rank 0's NIC never delivered."""
    from mcsim.config.rdma import RcConfig

    steps = (send(Message(0, 1, 4096)),)
    faults = Faults(drops=((0, 0, 0),))
    (r,) = run_jobs(
        [Job(name="j", hosts=HOSTS, steps=steps)], topology="fat-tree-k4", faults=faults, rc=RcConfig(retry_cnt=0)
    ).jobs
    assert r.why_incomplete() == (
        f"step 0 (send): rank 0 of 4 waits for its message to rank 1 to be acknowledged: {RC_ERROR}; rank 1 of 4 "
        "waits for a message from rank 0: an RC queue pair of rank 0's NIC exhausted its retries (RcConfig.retry_cnt) "
        "and went to the error state"
    )


def test_a_complete_job_has_no_why():
    (r,) = run_jobs([Job(name="j", hosts=HOSTS, steps=(ag(),))], topology="fat-tree-k4", rate="100Gbps").jobs
    assert r.complete and r.why_incomplete() == "" and r.summary()["why_incomplete"] is None
    assert r.unfinished is None  # a complete job's result holds what it held before (result_hashes.py)


def test_message_states_are_read_from_the_job():
    """The C++ Job's states per message after the run: the one to a cut-off host neither acknowledged nor
    arrived; the other both."""
    steps = (send(Message(0, 3, 4096), Message(0, 1, 4096)),)
    (r,) = run_jobs([Job(name="j", hosts=HOSTS, steps=steps)], topology="fat-tree-k4", faults=cut(3)).jobs
    assert r.unfinished is not None
    assert r.unfinished.message_states.tolist() == [0, jobs.ACKED | jobs.ARRIVED]


def _result(timeline: list) -> JobResult:
    """A JobResult of two compute steps on 2 ranks with a hand-made timeline (no run: a compute unit held past
    the run's end needs a clock the API does not stop)."""
    job = Job(
        name="c",
        hosts=(0, 1),
        steps=(Compute(label="long", duration_ps=5), Compute(label="next", duration_ps=5)),
    )
    return JobResult(job, np.array(timeline, dtype=np.int64), np.zeros(2, dtype=np.int64), {})


def test_compute_ranks_say_they_wait_for_a_compute_unit():
    # rank 0: "long" started and never ended, "next" ready and never started; rank 1: both done
    r = _result([[[0, 0, -1], [0, 5, 10]], [[0, -1, -1], [5, 10, 15]]])
    assert r.why_incomplete() == (
        "step 0 (long): rank 0 of 2 did not finish computing (the run ended first); "
        "step 1 (next): rank 0 of 2 waits for a compute unit (held by step 0 (long))"
    )


def test_a_long_label_is_shown_cut_as_every_message_cuts_it():
    """A trace's node may be named with megabytes: the line shows its first 117 characters and "..." (Job.shown)."""
    long = [dataclasses.replace(s, label=f"{s.label}-" + "x" * 300) for s in _result([]).job.steps]
    r = _result([[[0, 0, -1], [0, 5, 10]], [[0, -1, -1], [5, 10, 15]]])
    r = dataclasses.replace(r, job=dataclasses.replace(r.job, steps=tuple(long)))
    first, second = ("long-" + "x" * 112 + "...", "next-" + "x" * 112 + "...")
    assert r.why_incomplete() == (
        f"step 0 ({first}): rank 0 of 2 did not finish computing (the run ended first); "
        f"step 1 ({second}): rank 0 of 2 waits for a compute unit (held by step 0 ({first}))"
    )


WORKLOAD_1BPS = """topology = "fat-tree-k4"
rate = "1bps"
[[jobs]]
name = "a"
ranks = 4
kind = "fsdp"
layers = 1
bytes_per_layer = "4KiB"
forward = "1us"
backward = "1us"
"""
WHY_1BPS = f"step 4 (RS 0): ranks 0, 1, 2, 3 of 4 did not finish: {RC_ERROR}"


def _mcsim(*argv: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mcsim", *argv], capture_output=True, text=True, cwd=cwd)


def test_the_workload_command_says_why_in_its_table_and_rows(tmp_path):
    (tmp_path / "w.toml").write_text(WORKLOAD_1BPS)
    table = _mcsim("workload", "w.toml", cwd=tmp_path)
    assert table.returncode == 1
    row = table.stdout.splitlines()[1]
    assert re.fullmatch(rf"a +INCOMPLETE: {re.escape(WHY_1BPS)}", row), row
    as_json = _mcsim("workload", "w.toml", "--format", "json", "--out", "rows.csv", cwd=tmp_path)
    assert as_json.returncode == 1
    (got,) = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert got["complete"] is False and got["why_incomplete"] == WHY_1BPS
    assert f"mcsim: job 'a': INCOMPLETE: {WHY_1BPS}" in as_json.stderr.splitlines()
    (written,) = csv.DictReader(io.StringIO((tmp_path / "rows.csv").read_text()))
    assert written["why_incomplete"] == WHY_1BPS


def test_a_workload_sweep_shows_incomplete_runs_as_incomplete(tmp_path):
    (tmp_path / "w.toml").write_text(WORKLOAD_1BPS)
    (tmp_path / "s.toml").write_text('name = "inc"\nworkload = "w.toml"\n[axes]\nseed = [1, 2]\n')
    run = _mcsim("sweep", "s.toml", "--workers", "1", cwd=tmp_path)
    assert run.returncode == 1
    assert "[1/2] INCOMPLETE seed=1 " in run.stderr and f"s: job 'a': {WHY_1BPS} | ok 0, incomplete 1" in run.stderr
    table = _mcsim("sweep", "show", "inc.sqlite", cwd=tmp_path)
    assert table.returncode == 0
    lines = table.stdout.splitlines()
    assert lines[1].startswith("status     ")
    for line, seed in zip(lines[2:], (1, 2), strict=True):
        assert re.fullmatch(
            rf"incomplete +None +None +[\d.]+ seed={seed}  INCOMPLETE: job 'a': {re.escape(WHY_1BPS)}", line
        )
    as_json = _mcsim("sweep", "show", "inc.sqlite", "--format", "json", cwd=tmp_path)
    rows = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert [(r["status"], r["a.why_incomplete"]) for r in rows] == [("incomplete", WHY_1BPS)] * 2
    as_csv = _mcsim("sweep", "show", "inc.sqlite", "--format", "csv", cwd=tmp_path)
    assert [r["status"] for r in csv.DictReader(io.StringIO(as_csv.stdout))] == ["incomplete"] * 2


def test_the_sweep_api_says_incomplete_and_why(tmp_path):
    """run_sweep's report: each row's status incomplete, and timed_rows' reason is each job's why."""
    from mcsim.sweep import SweepSpec, run_sweep

    (tmp_path / "w.toml").write_text(WORKLOAD_1BPS)
    spec = SweepSpec(name="inc", workload=str(tmp_path / "w.toml"), axes={"seed": [1, 2]})
    report = run_sweep(spec, tmp_path / "s.sqlite", workers=1, progress=False)
    assert report.incomplete == ["seed=1", "seed=2"] and not report.all_ok
    assert [r["status"] for r in report.rows()] == ["incomplete", "incomplete"]
    timed, untimed = report.timed_rows()
    assert timed == [] and untimed == [f"seed={s}: INCOMPLETE: job 'a': {WHY_1BPS}" for s in (1, 2)]


def test_the_timeline_figure_hatches_the_step_that_never_ended(tmp_path):
    """--timeline t.svg of an incomplete run: the step that never ended is drawn (hatched, to the run's end),
    and the title says which job is incomplete."""
    pytest.importorskip("matplotlib")
    from mcsim.workloads.figure import timeline_svg

    steps = (send(Message(0, 3, 4096)), Compute(label="C", duration_ps=10, after=(0,)))
    result = run_jobs([Job(name="j", hosts=HOSTS, steps=steps)], topology="fat-tree-k4", faults=cut(3))
    svg = timeline_svg(result)
    assert "INCOMPLETE: j (hatched: a step that never ended)" in svg
    assert svg.count("<pattern") == 2  # the transfer, and the compute ranks 0 and 3 never began


def test_a_scenario_sweeps_incomplete_run_is_shown_as_incomplete(tmp_path):
    """The same status column for a collective's run in which some rank never finished (it said ok)."""
    spec = 'name = "lossy"\n[base]\ntopology = "fat-tree-k4"\nbytes_per_rank = "4KiB"\nrc = { retry_cnt = 0 }\n'
    (tmp_path / "s.toml").write_text(spec + "[axes]\nloss = [0, 0.2]\n")
    assert _mcsim("sweep", "s.toml", "--workers", "1", cwd=tmp_path).returncode == 1
    table = _mcsim("sweep", "show", "lossy.sqlite", cwd=tmp_path).stdout.splitlines()
    assert table[2].startswith("ok ") and re.match(
        r"incomplete +None .* INCOMPLETE: \d+ ranks did not finish$", table[3]
    )
    as_json = _mcsim("sweep", "show", "lossy.sqlite", "--format", "json", cwd=tmp_path).stdout.splitlines()
    assert [json.loads(line)["status"] for line in as_json] == ["ok", "incomplete"]
