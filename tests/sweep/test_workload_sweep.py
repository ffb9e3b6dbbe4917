# SPDX-License-Identifier: GPL-2.0-only
"""Sweeps over a workload: every stored run's per-job figures and timelines equal a direct run_jobs of
the same workload, keys per run (and a re-run reusing every one), the workload file, its paths and its
overrides, `sweep --dry-run` and `sweep show`, and bad axes or specs as one line each."""

from __future__ import annotations

import copy
import gzip
import json
import re
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from mcsim import topology
from mcsim.cli import main
from mcsim.errors import McsimError
from mcsim.runs.jobs import run_workload
from mcsim.sweep import SweepSpec, run_sweep, runner
from mcsim.sweep.outcome import OK, Outcome
from mcsim.sweep.store import Store
from mcsim.workloads.workload_file import workload_of

FSDP = {"kind": "fsdp", "layers": 2, "bytes_per_layer": "64KiB", "forward": "5us", "backward": "10us"}
WORKLOAD = {
    "topology": "fat-tree-k4",
    "rate": "100Gbps",
    "jobs": [{"name": "train", "ranks": 4, **FSDP}, {"name": "other", "ranks": 4, **FSDP, "allgather": "ring"}],
}
WORKLOAD_TOML = """topology = "fat-tree-k4"
rate = "100Gbps"
[[jobs]]
name = "train"
ranks = 4
kind = "fsdp"
layers = 2
bytes_per_layer = "64KiB"
forward = "5us"
backward = "10us"
[[jobs]]
name = "neighbour"
ranks = 4
kind = "background"
bytes_per_peer = "16KiB"
load = 0.5
"""
DATA = Path(__file__).resolve().parent.parent / "workloads" / "data"
RUN_ONLY = {"wall_s", "peak_rss_b"}  # metrics of the worker process, not of the simulation


def with_job(job: str, **values) -> dict:
    """WORKLOAD with one job's keys set: the workload a run of an axis on that job should run."""
    out = copy.deepcopy(WORKLOAD)
    next(t for t in out["jobs"] if t["name"] == job).update(values)
    return out


def direct(data: dict) -> dict[str, dict]:
    """Each job's summary (less its name) and arrays, from run_jobs on the workload itself."""
    result = run_workload(workload_of(copy.deepcopy(data), "w"))
    return {
        j.job.name: {"summary": j.summary(), "timeline": j.timeline, "injected_b": j.injected_b} for j in result.jobs
    }


def one_line(**kwargs) -> str:
    """The McsimError of making SweepSpec(**kwargs) and expanding it: exactly one line."""
    with pytest.raises(McsimError) as info:
        SweepSpec(**kwargs).runs()
    text = str(info.value)
    assert "\n" not in text and "Traceback" not in text
    return text


# ------------------------------------------------------------------------------------------------
# stored runs against direct runs


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A 2 x 2 sweep (the train job's Allgather algorithm x the other job's bytes per layer), run on two
    workers, then run again: (spec, its first report, the second report, the store)."""
    store = tmp_path_factory.mktemp("wsweep") / "w.sqlite"
    spec = SweepSpec(
        name="algorithms",
        workload=WORKLOAD,
        axes={"jobs.train.allgather": ["ring", "mcast"], "jobs.other.bytes_per_layer": ["64KiB", "256KiB"]},
    )
    first = run_sweep(spec, store, workers=2, progress=False)
    again = run_sweep(spec, store, workers=2, progress=False)
    return spec, first, again, store


def test_every_stored_run_is_a_direct_run_of_its_workload(swept):
    _, report, _, store = swept
    assert report.all_ok and report.total == report.ok == report.ran == 4
    with Store(store, create=False) as db:
        rows = {r["key"]: r for r in db.rows("algorithms")}
    values = [(a, b) for a in ("ring", "mcast") for b in ("64KiB", "256KiB")]
    for key, (allgather, size) in zip(report.keys, values, strict=True):
        data = with_job("train", allgather=allgather)
        next(t for t in data["jobs"] if t["name"] == "other")["bytes_per_layer"] = size
        want = direct(data)
        row = rows[key]
        assert row["status"] == OK and row["params"] == {
            "jobs.train.allgather": allgather,
            "jobs.other.bytes_per_layer": size,
        }
        metrics = row["metrics"]
        assert metrics["jobs"] == 2 and metrics["complete"] is True
        for job, got in want.items():
            summary = {k: v for k, v in got["summary"].items() if k != "name"}
            assert {k: metrics[f"{job}.{k}"] for k in summary} == summary  # exactly: JSON keeps every float
            np.testing.assert_array_equal(row["arrays"][f"{job}.timeline"], got["timeline"])
            np.testing.assert_array_equal(row["arrays"][f"{job}.injected_b"], got["injected_b"])
        assert set(metrics) == {"jobs", "complete", *RUN_ONLY} | {
            f"{job}.{k}" for job in want for k in want[job]["summary"] if k != "name"
        }


def test_the_axes_change_what_runs(swept):
    """The train job's multicast Allgathers inject less than its rings (each rank sends its shard once, not
    P-1 times); the other job's larger layers inject more: the axis values reached the runs."""
    _, report, _, _ = swept
    rows = report.rows()
    train = {(r["jobs.train.allgather"], r["jobs.other.bytes_per_layer"]): r["train.injected_B"] for r in rows}
    other = {(r["jobs.train.allgather"], r["jobs.other.bytes_per_layer"]): r["other.injected_B"] for r in rows}
    assert train["mcast", "64KiB"] < train["ring", "64KiB"]
    assert other["ring", "256KiB"] > other["ring", "64KiB"]


def test_keys_differ_per_run_and_a_rerun_finds_every_run_stored(swept):
    spec, first, again, _ = swept
    assert len(set(first.keys)) == 4
    assert again.keys == first.keys and again.ran == 0 and again.reused == 4 and again.all_ok
    vers = runner.versions()
    assert [runner.key_of(r, vers) for r in spec.runs()] == first.keys  # the plan keys what the store holds


def test_the_key_covers_the_workload_the_topology_and_the_versions(tmp_path):
    vers = runner.versions()
    (run,) = SweepSpec(name="k", workload=WORKLOAD).runs()
    key = runner.key_of(run, vers)
    assert runner.key_of(run, {**vers, "build_key": "other"}) != key
    (seeded,) = SweepSpec(name="k", workload={**WORKLOAD, "seed": 2}).runs()
    assert runner.key_of(seeded, vers) != key
    topo = tmp_path / "ft.toml"
    shutil.copy(topology.ready()["fat-tree-k4"], topo)
    (from_file,) = SweepSpec(name="k", workload={**WORKLOAD, "topology": str(topo)}).runs()
    before = runner.key_of(from_file, vers)
    topo.write_text(topo.read_text() + "\n# the same graph, another file\n")
    assert runner.key_of(from_file, vers) != before  # the topology file's content, not its path


def test_a_chakra_job_s_traces_enter_the_key_by_content(tmp_path):
    pytest.importorskip("google.protobuf")
    trace = tmp_path / "t.0.et"
    trace.write_bytes(gzip.decompress((DATA / "chakra-feeder.0.et.gz").read_bytes()))
    job = {"name": "c", "kind": "chakra", "traces": [str(trace), str(trace)]}
    (run,) = SweepSpec(name="c", workload={"topology": "fat-tree-k4", "jobs": [job]}).runs()
    vers = runner.versions()
    key = runner.key_of(run, vers)
    trace.write_bytes(trace.read_bytes() + b"\0")
    assert runner.key_of(run, vers) != key


# ------------------------------------------------------------------------------------------------
# the spec: a workload file, paths, overrides, the dict and TOML forms


def test_a_workload_file_with_overrides_and_paths_from_its_folder(tmp_path, monkeypatch):
    sub = tmp_path / "sub"
    sub.mkdir()
    shutil.copy(topology.ready()["fat-tree-k4"], sub / "ft.toml")
    (sub / "w.toml").write_text(WORKLOAD_TOML.replace('"fat-tree-k4"', '"ft.toml"'))
    (tmp_path / "spec.toml").write_text(
        'name = "f"\n[workload]\nfile = "sub/w.toml"\nrate = "400Gbps"\n[axes]\n"jobs.neighbour.load" = [0.25, 0.5]\n'
    )
    monkeypatch.chdir(sub.parent.parent)  # another folder: paths are the files', not the current folder's
    spec = SweepSpec.from_toml(tmp_path / "spec.toml")
    runs = spec.runs()
    assert [r.workload.data["jobs"][1]["load"] for r in runs] == [0.25, 0.5]
    assert all(r.workload.workload.rate == "400Gbps" for r in runs)  # the table's key over the file's
    assert runs[0].workload.workload.topology == str(sub / "ft.toml")
    again = SweepSpec.from_dict(json.loads(json.dumps(spec.to_dict())))
    assert [r.workload.data for r in again.runs()] == [r.workload.data for r in runs]
    (tmp_path / "back.toml").write_text(spec.to_toml())
    assert [r.workload.data for r in SweepSpec.from_toml(tmp_path / "back.toml").runs()] == [
        r.workload.data for r in runs
    ]


def test_top_level_fields_and_zips_sweep_as_for_a_scenario():
    spec = SweepSpec(
        name="z",
        workload=WORKLOAD,
        axes={"rate": ["56Gbps", "100Gbps"]},
        zips=({"jobs.train.placement": ["contiguous", "interleaved"], "seed": [1, 2]},),
    )
    runs = spec.runs()
    assert [r.label for r in runs] == [
        f"rate={rate} jobs.train.placement={p} seed={s}"
        for rate in ("56Gbps", "100Gbps")
        for p, s in (("contiguous", 1), ("interleaved", 2))
    ]
    assert (
        runs[1].workload.workload.jobs[0].hosts
        == workload_of(with_job("train", placement="interleaved"), "w").jobs[0].hosts
    )
    assert [r.workload.workload.seed for r in runs] == [1, 2, 1, 2]


# ------------------------------------------------------------------------------------------------
# the command: run, dry run, show


def runner_keys(spec_path: Path) -> list[str]:
    """The store keys of a spec file's runs, as the planner makes them."""
    vers = runner.versions()
    return [runner.key_of(r, vers) for r in SweepSpec.from_toml(spec_path).runs()]


def test_the_command_runs_lists_and_shows_a_workload_sweep(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.toml").write_text(WORKLOAD_TOML)
    (tmp_path / "s.toml").write_text(
        'name = "s"\nworkload = "w.toml"\n[axes]\n"jobs.train.allgather" = ["ring", "mcast"]\n'
    )
    assert main(["sweep", "s.toml", "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[1:] == [
        f"{i},jobs.train.allgather={a},missing,{k[:12]}"
        for i, (a, k) in enumerate(zip(("ring", "mcast"), runner_keys(tmp_path / "s.toml"), strict=True))
    ]
    assert "2 to run" in err and not (tmp_path / "s.sqlite").exists()
    assert main(["sweep", "s.toml", "--workers", "1", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["sweep", "show", "s.sqlite"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "sweep s"
    assert lines[1].split() == [
        "status",
        *(f"{j}.{f}" for j in ("neighbour", "train") for f in ("iteration_us", "exposed_comm_us")),
        "wall_s",
        "label",
    ]
    with Store("s.sqlite", create=False) as db:
        stored = {r["label"]: r["metrics"] for r in db.rows("s")}
    for line in lines[2:]:
        cells = line.split()
        metrics = stored[cells[-1]]
        assert cells[0] == "ok"
        assert cells[1:5] == [
            f"{metrics[f'{j}.{f}']:.2f}" for j in ("neighbour", "train") for f in ("iteration_us", "exposed_comm_us")
        ]
    assert main(["sweep", "show", "s.sqlite", "--format", "json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    for row in rows:
        assert {k: row[k] for k in stored[row["label"]]} == stored[row["label"]]  # every metric


def test_show_names_the_jobs_of_an_incomplete_run(tmp_path, capsys):
    metrics = {"jobs": 2, "complete": False, "a.complete": False, "a.iteration_us": None, "a.exposed_comm_us": None}
    metrics |= {"b.complete": True, "b.iteration_us": 12.5, "b.exposed_comm_us": 2.5}
    outcome = Outcome(
        key="k", label="seed=1", status=OK, error=None, metrics=metrics, arrays=None, wall_s=0.1, peak_rss_b=1,
        host="h", started="t0", ended="t1",
    )  # fmt: skip
    with Store(tmp_path / "s.sqlite") as store:
        store.add_members("s", [("k", "seed=1", {"seed": 1})])
        store.put(outcome, '{"workload":{}}', {"mcsim": "x"})
        assert store.status(["k"]) == {"k": "incomplete"}
    assert main(["sweep", "show", str(tmp_path / "s.sqlite")]) == 0
    line = capsys.readouterr().out.splitlines()[2]
    assert line.split()[:5] == ["incomplete", "None", "None", "12.50", "2.50"]  # its status: what it is
    assert line.endswith("INCOMPLETE: job 'a' has a step that never ended")
    assert runner.why_no_time({"status": OK, **metrics}) == "INCOMPLETE: job 'a' has a step that never ended"


# ------------------------------------------------------------------------------------------------
# bad input: one line


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"axes": {"jobs.trian.allgather": ["ring"]}},
            r"^sweep 'w': axis 'jobs.trian.allgather': the workload has no job named 'trian'; its jobs: train, other$",
        ),
        (
            {"axes": {"jobs.train.allgathr": ["ring"]}},
            r"^sweep 'w': axis 'jobs.train.allgathr': unknown key of job 'train' \(fsdp\) 'allgathr'; choose one of "
            r"allgather, .*; did you mean 'allgather'\?$",
        ),
        (  # a data_parallel key on an fsdp job
            {"axes": {"jobs.train.allreduce": ["ring"]}},
            r"^sweep 'w': axis 'jobs.train.allreduce': unknown key of job 'train' \(fsdp\) 'allreduce'",
        ),
        (
            {"axes": {"jobs.train.allgather": ["ring", "foo"]}},
            r"^sweep 'w' run 1 \(jobs.train.allgather=foo\): job 'train': step 0 \(AG F0\): unknown algorithm for "
            r"allgather 'foo'; choose one of",
        ),
        (
            {"axes": {"jobs.train.bytes_per_layer": ["64KiB", "lots"]}},
            r"^sweep 'w' run 1 \(jobs.train.bytes_per_layer=lots\): workload: jobs\[0\]: bytes_per_layer",
        ),
        (
            {"axes": {"jobs.train.ranks": [4, 40]}},
            r"^sweep 'w' run 1 \(jobs.train.ranks=40\): workload: jobs\[0\]: ranks=40 but only 16 hosts are free",
        ),
        (
            {"axes": {"rat": ["56Gbps"]}},
            r"^sweep 'w': axis 'rat': unknown workload field 'rat'; choose one of jobs.<job name>.<key>, "
            r"options.<keyword>, rate, seed, topology; did you mean 'rate'\?$",
        ),
        ({"axes": {"jobs": [[]]}}, r"^sweep 'w': axis 'jobs': sweep one key of one job, jobs.<job name>.<key>"),
        (
            {"axes": {"options.warp": [1]}},
            r"^sweep 'w': axis 'options.warp': unknown run option 'warp'; choose one of",
        ),
        (
            {"axes": {"options.collective": ["allreduce"]}},
            r"^sweep 'w': axis 'options.collective': unknown run option 'collective'",
        ),
        (
            {"axes": {"options.endpoints": [1, 0]}},
            r"^sweep 'w' run 1 \(options.endpoints=0\): ",
        ),
        (
            {"axes": {"jobs.train": [{}]}},
            r"^sweep 'w': axis 'jobs.train': not a workload field; give topology, rate, seed, options.<keyword> or",
        ),
        ({"axes": {"jobs.train.name": ["x"]}}, r"^sweep 'w': axis 'jobs.train.name': a job's name names its axes"),
        (
            {"axes": {"rate": ["1Gbps", "1Gbps"]}},
            r'^sweep \'w\' \[axes\]: axis \'rate\' lists "1Gbps" twice; each run must differ$',
        ),
        (
            {"base": {"topology": "fat-tree-k4"}},
            r"^sweep 'w': give a Scenario \[base\] or a workload, not both; a workload's runs take topology, rate and "
            r"seed from the workload \(sweep them as axes\)$",
        ),
        ({"workload": "no-such.toml"}, r"^sweep 'w' \[workload\] file 'no-such.toml' does not exist"),
        ({"workload": {"file": 3}}, r"^sweep 'w' \[workload\]: file=3 must be the path of a workload file$"),
        (
            {"workload": {**WORKLOAD, "jobs": [{"name": "a", "ranks": 2, **FSDP}] * 2}, "axes": {"jobs.a.layers": [1]}},
            r"^sweep 'w': axis 'jobs.a.layers': two jobs are named 'a'; an axis names a job by its name$",
        ),
        (
            {"workload": {**WORKLOAD, "jobs": [{"name": "a", "ranks": 2, **FSDP}] * 2}, "axes": {"seed": [1]}},
            r"^sweep 'w' run 0 \(seed=1\): workload: two jobs are named 'a'$",
        ),
        ({"workload": {**WORKLOAD, "colour": "red"}}, r"^sweep 'w' run 0 \(\): workload: unknown key 'colour'"),
    ],
)
def test_a_bad_workload_sweep_is_one_line(kwargs, match):
    text = one_line(name="w", **{"workload": WORKLOAD, **kwargs})
    assert re.search(match, text), text


def test_a_task_carries_the_workload_and_the_store_keeps_it(swept):
    spec, _, _, store = swept
    with Store(store, create=False) as db:
        the_plan = runner.plan(spec, db)
    assert not the_plan.todo  # everything stored
    with sqlite3.connect(store) as db:
        held = dict(db.execute("SELECT key, scenario FROM runs"))
    for task, run in zip(the_plan.tasks, spec.runs(), strict=True):
        assert task.scenario is None and task.workload == run.workload.data
        assert json.loads(held[task.key]) == {"workload": run.workload.data}


def test_a_run_option_sweeps_as_an_axis(tmp_path):
    # the train job's multicast Allgathers received on the DPA with 1 or 4 endpoints: each stored run is the
    # direct run of the workload with that option, and the endpoints reach the run (the times differ)
    base = {**WORKLOAD, "options": {"processor": {"kind": "dpa", "threads": 4}, "staging": False}}
    spec = SweepSpec(name="opts", workload=base, axes={"options.endpoints": [1, 4]})
    report = run_sweep(spec, tmp_path / "o.sqlite", workers=1, progress=False)
    assert report.all_ok
    rows = {r["options.endpoints"]: r for r in report.rows()}
    for endpoints, row in rows.items():
        want = direct({**base, "options": {**base["options"], "endpoints": endpoints}})
        assert row["train.iteration_us"] == want["train"]["summary"]["iteration_us"]
    assert rows[1]["train.iteration_us"] != rows[4]["train.iteration_us"]
