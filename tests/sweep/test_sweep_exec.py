# SPDX-License-Identifier: GPL-2.0-only
"""Sweep execution: the task/outcome wire format, run_task in process, the local pool of worker processes
(same numbers as in process; a crash, an exit or a passed time limit is one FAILED Outcome and the
others go on; closing early leaves no worker) and the Dask executor (same numbers as the pool)."""

import json
import os
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

from mcsim.config.fabric import FOREVER, Faults
from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario, scenario_of
from mcsim.sweep import wire
from mcsim.sweep.executors import DaskExecutor, LocalPool
from mcsim.sweep.outcome import FAILED, OK, Outcome, Task
from mcsim.sweep.process import WorkerProcess
from mcsim.sweep.worker import run_task

RUN_ONLY = {"wall_s", "peak_rss_b"}  # metrics of the run's process, not of the simulation


def task(label: str, **kw) -> Task:
    sc = scenario_of(topology="fat-tree-k4", bytes_per_rank=4096, **kw)
    return Task(key=f"{sc.key()}-{label}", label=label, scenario=sc.to_dict())


def bad_task(label: str) -> Task:
    """A task whose scenario dict Scenario.from_dict rejects: FAILED at once, no simulation."""
    return Task(key=label, label=label, scenario={"schema": "not-a-scenario"})


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    return [
        task("ring", algorithm="ring"),
        task("mcast", algorithm="mcast"),
        task("mcast-s2", algorithm="mcast", seed=2),
    ]


@pytest.fixture(scope="module")
def in_process(tasks) -> dict[str, Outcome]:
    return {t.key: run_task(t) for t in tasks}


def simulated(outcome: Outcome) -> dict:
    assert outcome.metrics is not None
    return {k: v for k, v in outcome.metrics.items() if k not in RUN_ONLY}


def assert_same_runs(got: dict[str, Outcome], want: dict[str, Outcome]) -> None:
    assert got.keys() == want.keys()
    for key, outcome in got.items():
        assert outcome.status == want[key].status == OK, outcome.error
        assert simulated(outcome) == simulated(want[key])
        assert outcome.arrays is not None and want[key].arrays is not None
        assert outcome.arrays.keys() == want[key].arrays.keys()
        for name, values in outcome.arrays.items():
            assert values.dtype == want[key].arrays[name].dtype, name
            np.testing.assert_array_equal(values, want[key].arrays[name], err_msg=name)


def worker_pids() -> set[int]:
    """Live (not zombie) processes of this test process running a sweep worker, from /proc."""
    pids = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        state, ppid = fields[0], int(fields[1])
        if ppid == os.getpid() and state != "Z" and (b"mcsim.sweep.worker" in cmdline or b"wrapped_worker" in cmdline):
            pids.add(int(entry.name))
    return pids


# -------------------------------------------------------------------------------------------------
# wire format


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.float64, np.uint8, np.bool_, ">i4"])
def test_arrays_cross_as_json_with_dtype_and_shape(dtype):
    values = np.arange(12).reshape(3, 4).astype(dtype)
    back = wire.decode_array(json.loads(json.dumps(wire.encode_array(values))))
    assert back.dtype == values.dtype and back.shape == (3, 4) and back.flags.writeable
    np.testing.assert_array_equal(back, values)


@pytest.mark.parametrize(
    "data, match",
    [
        ({"dtype": "|O", "shape": [1], "data": ""}, "not numeric"),
        ({"dtype": "<i8", "shape": [2], "data": "AAAAAAAAAAA="}, "8 bytes do not make an array"),
        ({"dtype": "<i8", "shape": [1], "data": "!!"}, "a bad array"),
        ({"dtype": "<i8", "shape": [1]}, "must be {dtype, shape, data}"),
    ],
)
def test_a_bad_array_is_one_error_line(data, match):
    with pytest.raises(McsimError, match=match):
        wire.decode_array(data)


def test_an_object_array_is_not_encoded():
    with pytest.raises(McsimError, match="not numeric"):
        wire.encode_array(np.array([{}], dtype=object))


def test_outcomes_round_trip_through_a_protocol_line(in_process, tasks):
    outcome = in_process[tasks[0].key]
    line = wire.to_line(wire.outcome_to_dict(outcome))
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    back = wire.outcome_from_dict(wire.from_line(line))
    assert_same_runs({outcome.key: back}, {outcome.key: outcome})
    for name in ("wall_s", "peak_rss_b", "host", "started", "ended", "metrics"):
        assert getattr(back, name) == getattr(outcome, name), name
    assert wire.task_from_dict(json.loads(json.dumps(wire.task_to_dict(tasks[0])))) == tasks[0]


def test_a_line_that_is_not_an_outcome_is_one_error_line():
    with pytest.raises(McsimError, match="not JSON"):
        wire.from_line(b"noise\n")
    with pytest.raises(McsimError, match="must have the fields of Outcome"):
        wire.outcome_from_dict({"key": "k"})


# -------------------------------------------------------------------------------------------------
# run_task, in this process


def test_run_task_records_the_run_and_its_process(in_process, tasks):
    sc = Scenario.from_dict(tasks[0].scenario)
    outcome = in_process[tasks[0].key]
    assert (outcome.key, outcome.label, outcome.status, outcome.error) == (tasks[0].key, "ring", OK, None)
    assert simulated(outcome) == sc.run().record()
    assert outcome.metrics["wall_s"] == outcome.wall_s > 0
    assert outcome.metrics["peak_rss_b"] == outcome.peak_rss_b > 10 * 2**20  # Python + ns-3: tens of MB
    assert outcome.started <= outcome.ended and outcome.started.endswith("+00:00")
    assert set(outcome.arrays) == set(sc.run().rank_arrays())


def test_run_task_gives_a_bad_scenario_as_one_failed_line():
    outcome = run_task(bad_task("bad"))
    assert outcome.status == FAILED and outcome.metrics is None and outcome.arrays is None
    assert outcome.error.startswith("Scenario.from_dict: ") and "\n" not in outcome.error


def test_run_task_gives_an_incomplete_run_as_ok():
    faults = Faults(link_down=[(1, 16, 0, FOREVER)], reroute_delay_ps=1_000_000)
    outcome = run_task(task("cut-off", algorithm="mcast", faults=faults))
    assert outcome.status == OK and outcome.metrics["complete"] is False and outcome.metrics["time_ps"] is None
    assert outcome.arrays["finish_ps"].tolist() == [-1] * 16


# -------------------------------------------------------------------------------------------------
# LocalPool


@pytest.fixture(scope="module")
def pooled(tasks) -> tuple[dict[str, Outcome], list[Task]]:
    """The tasks' Outcomes from a LocalPool of 2 workers, and the tasks on_start saw."""
    started: list[Task] = []
    return {o.key: o for o in LocalPool(2).run(tasks, on_start=started.append)}, started


def test_local_pool_gives_the_numbers_of_run_task(pooled, tasks, in_process):
    got, started = pooled
    assert sorted(t.key for t in started) == sorted(t.key for t in tasks)
    assert_same_runs(got, in_process)
    assert {o.host for o in got.values()} == {in_process[tasks[0].key].host}
    assert worker_pids() == set()


def test_a_worker_that_aborts_or_exits_fails_only_its_run(worker_command, tasks):
    runs = [tasks[0], task("abort", algorithm="ring"), tasks[1], task("exit", algorithm="ring")]
    got = {o.label: o for o in LocalPool(2, command=worker_command()).run(runs)}
    assert sorted(got) == sorted(t.label for t in runs)
    aborted, exited = got.pop("abort"), got.pop("exit")
    assert aborted.status == exited.status == FAILED and aborted.metrics is None and aborted.arrays is None
    assert aborted.error.splitlines()[0] == "worker process died (signal 6, SIGABRT) while running it"
    assert exited.error.splitlines()[0] == "worker process died (exit code 3) while running it"
    # the tail of what the worker wrote during that run, stdout noise included (fd 1 is stderr)
    # then Python's traceback (faulthandler) shows where it was
    tail = aborted.error.splitlines()[1:]
    noise = ["noise on stdout from Python", "noise on file descriptor 1", "about to abort"]
    assert tail[:4] == [*noise, "Fatal Python error: Aborted"]
    assert any("in run_task" in line for line in tail) and len(tail) <= 40
    assert exited.error.splitlines()[-1] == "about to exit"
    assert all(o.status == OK for o in got.values()), [o.error for o in got.values()]


def test_a_run_past_the_time_limit_is_killed_and_the_next_runs_on_a_new_worker(worker_command):
    pool = LocalPool(1, time_limit_s=0.5, command=worker_command(simulates=False))
    hung, after = list(pool.run([task("hang", algorithm="ring"), bad_task("after")]))
    assert hung.label == "hang" and hung.status == FAILED
    assert hung.error.splitlines()[0] == "passed its time limit of 0.5 s"
    assert hung.error.splitlines()[-1] == "about to hang"
    assert 0.5 <= hung.wall_s < 60
    assert after.label == "after" and after.error.startswith("Scenario.from_dict: ")  # a new worker ran it
    assert worker_pids() == set()


def test_closing_the_outcomes_early_kills_every_worker(worker_command):
    runs = [bad_task("quick"), task("hang", algorithm="ring"), task("hang", algorithm="mcast")]
    outcomes = LocalPool(2, command=worker_command(simulates=False)).run(runs)
    first = next(outcomes)
    assert first.label == "quick"
    alive = worker_pids()
    assert len(alive) == 2  # both workers are there, the second hangs
    outcomes.close()
    assert worker_pids() == set()
    for pid in alive:
        assert not Path(f"/proc/{pid}").exists()


def test_an_interrupt_kills_every_worker(worker_command):
    def interrupt(task: Task) -> None:
        if task.label == "third":
            raise KeyboardInterrupt

    runs = [task("hang", algorithm="ring"), bad_task("second"), bad_task("third")]
    with pytest.raises(KeyboardInterrupt):
        list(LocalPool(2, command=worker_command(simulates=False)).run(runs, on_start=interrupt))
    assert worker_pids() == set()


def test_a_worker_command_that_cannot_start_is_one_error_line(tmp_path):
    with pytest.raises(McsimError, match=r"^sweep: cannot start the worker command no-such-mcsim-worker: "):
        list(LocalPool(1, command=["no-such-mcsim-worker"]).run([bad_task("x")]))
    chatty = [sys.executable, "-c", "print('hello'); import mcsim.sweep.worker as w; w.main()"]
    with pytest.raises(McsimError, match=r"wrote to stdout before its ready line; a wrapper must print nothing"):
        list(LocalPool(1, command=chatty).run([bad_task("x")]))
    ends = [sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"]
    with pytest.raises(McsimError, match=r"ended before it was ready \(exit code 3\): boom$"):
        list(LocalPool(1, command=ends).run([bad_task("x")]))
    assert worker_pids() == set()


def test_one_worker_process_runs_tasks_one_by_one_and_knows_when_it_was_killed(worker_command):
    with WorkerProcess(worker_command(simulates=False)) as proc:
        proc.wait_ready()
        assert proc.alive() and proc.task is None
        first = proc.run(bad_task("first"))
        assert first.label == "first" and first.error.startswith("Scenario.from_dict: ") and proc.alive()
        raised = proc.run(bad_task("raise"))  # a bug (not a McsimError) fails the run, not the worker
        assert raised.status == FAILED and proc.alive()
        assert raised.error.splitlines()[0] == "the run raised RuntimeError: a bug in the run"
        assert raised.error.splitlines()[-1] == "RuntimeError: a bug in the run"  # the traceback's end
        os.kill(proc.pid, signal.SIGKILL)  # as the OOM killer would, while it is idle
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # until it is gone (not reaped)
        assert not proc.alive()
        second = proc.run(bad_task("second"))
        assert second.status == FAILED
        assert second.error.splitlines()[0] == "worker process died (signal 9, SIGKILL) while running it"
    assert worker_pids() == set()


@pytest.mark.parametrize(
    "kw, match",
    [
        (
            {"workers": 0},
            r"LocalPool: workers=0 must be 1\.\.1024 \(local worker processes: each is a process of its own",
        ),
        ({"workers": 2**64}, r"LocalPool: workers=18446744073709551616 must be 1\.\.1024"),
        ({"time_limit_s": 0}, r"LocalPool: time_limit_s=0 must be > 0"),
        ({"command": []}, r"LocalPool: command=\[\] is empty"),
    ],
)
def test_bad_pool_settings_are_one_error_line(kw, match):
    with pytest.raises(McsimError, match=match):
        LocalPool(**kw)


def test_no_tasks_start_no_worker():
    assert list(LocalPool(2, command=["no-such-mcsim-worker"]).run([])) == []


# -------------------------------------------------------------------------------------------------
# DaskExecutor


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as dask_client,
    ):
        yield dask_client


def dask_worker_pids(client) -> dict[str, int]:
    return client.run(os.getpid)


def test_dask_gives_the_numbers_of_the_local_pool(client, tasks, pooled):
    started: list[Task] = []
    outcomes = DaskExecutor(client).run(tasks, on_start=started.append)
    first = next(outcomes)
    assert [t.key for t in started] == [t.key for t in tasks]  # on_start at submission: all before any ends
    got = {o.key: o for o in [first, *outcomes]}
    assert_same_runs(got, pooled[0])


def test_a_crash_under_dask_fails_its_run_and_the_dask_worker_survives(client, worker_command, tasks):
    before = dask_worker_pids(client)
    runs = [task("abort", algorithm="ring"), tasks[0], bad_task("bad")]
    got = {o.label: o for o in DaskExecutor(client, command=worker_command()).run(runs)}
    assert got["abort"].status == FAILED
    assert got["abort"].error.splitlines()[0] == "worker process died (signal 6, SIGABRT) while running it"
    assert "about to abort" in got["abort"].error.splitlines()
    assert got["ring"].status == OK and got["bad"].error.startswith("Scenario.from_dict: ")
    assert dask_worker_pids(client) == before


def test_a_run_past_the_time_limit_under_dask_fails(client, worker_command):
    runs = [task("hang", algorithm="ring"), bad_task("after")]
    got = {
        o.label: o for o in DaskExecutor(client, time_limit_s=0.5, command=worker_command(simulates=False)).run(runs)
    }
    assert got["hang"].error.splitlines()[0] == "passed its time limit of 0.5 s"
    assert got["after"].status == FAILED and got["after"].error.startswith("Scenario.from_dict: ")


def test_a_worker_that_cannot_start_under_dask_fails_each_run_in_one_line(client):
    got = list(DaskExecutor(client, command=["no-such-mcsim-worker"]).run([bad_task("a"), bad_task("b")]))
    assert sorted(o.label for o in got) == ["a", "b"]
    for o in got:
        assert o.status == FAILED
        assert o.error.startswith("on Dask: sweep: cannot start the worker command no-such-mcsim-worker: ")
        assert "\n" not in o.error


def test_bad_dask_settings_are_one_error_line():
    with pytest.raises(McsimError, match=r"DaskExecutor: time_limit_s=-1 must be > 0"):
        DaskExecutor(object(), time_limit_s=-1)
