# SPDX-License-Identifier: GPL-2.0-only
"""A workload sweep's dry run lists its first run at once (each run is built and checked as it is reached, not
a chunk of them first), and still refuses a bad run in one line before anything runs; a workload sweep whose
run cannot work (past the clock, past a NIC's queue pairs) is refused as `mcsim workload` refuses it, in the
job's and step's words, before the store is made."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcsim.errors import McsimError
from mcsim.sweep import SweepSpec, runner
from mcsim.sweep import workload_spec as workload_spec_module

FSDP = {"kind": "fsdp", "layers": 1, "bytes_per_layer": "4KiB", "forward": "1us", "backward": "1us"}
WORKLOAD = {"topology": "fat-tree-k4", "rate": "100Gbps", "jobs": [{"name": "train", "ranks": 4, **FSDP}]}


def test_a_workload_dry_run_lists_its_first_run_before_building_the_next(monkeypatch):
    built = []
    real = workload_spec_module.WorkloadRun.build
    monkeypatch.setattr(workload_spec_module.WorkloadRun, "build", lambda data: built.append(1) or real(data))
    spec = SweepSpec(name="w", workload=WORKLOAD, axes={"seed": list(range(200))})
    rows = runner.DryRun(spec, None).rows()
    first = next(rows)
    assert (first["run"], first["label"], first["status"]) == (0, "seed=0", "missing")
    assert len(built) == 1  # one run built for the first line (a chunk of 500 took ~26 s)


def test_a_bad_run_after_the_first_is_still_refused_in_one_line():
    """The first rows stream; the bad run (the third) is one McsimError line when it is reached."""
    spec = SweepSpec(name="w", workload=WORKLOAD, axes={"jobs.train.allgather": ["ring", "mcast", "warp", "innet"]})
    rows = runner.DryRun(spec, None).rows()
    assert [r["label"] for r in itertools.islice(rows, 2)] == [
        "jobs.train.allgather=ring",
        "jobs.train.allgather=mcast",
    ]
    with pytest.raises(McsimError, match=r"^sweep 'w' run 2 \(jobs.train.allgather=warp\): .*'warp'"):
        next(rows)
    with pytest.raises(McsimError, match=r"^sweep 'w' run 2 \(jobs.train.allgather=warp\): "):
        spec.runs()  # a run (not a dry run) builds every run before the store is touched


WORKLOAD_TOML = """topology = "fat-tree-k4"
rate = "100Gbps"
[[jobs]]
name = "train"
ranks = 4
kind = "fsdp"
layers = 1
bytes_per_layer = "4KiB"
forward = "1us"
backward = "1000000s"
"""
CLOCK = r"past 2\^62 ps = 53\.4 days, the simulated clock's limit"
# (case, the spec's axes, the one line after "mcsim: error: ")
CASES = [
    (
        "rate-axis-past-the-clock",
        '"rate" = ["100Gbps", "1bps"]\n"jobs.train.bytes_per_layer" = ["64MiB"]',
        r"sweep 's' run 1 \(rate=1bps jobs.train.bytes_per_layer=64MiB\): job 'train': step 0 \(AG F0\): each rank "
        rf"must move 50331648 B at 1bps \(rate='1bps', bytes_per_rank=16777216\): at least 4\.027e\+08 s, {CLOCK}; "
        r"raise the rate or lower bytes_per_rank",
    ),
    (
        "forward-axis-chain-past-the-clock",
        '"jobs.train.forward" = ["1us", "4000000s"]',
        r"sweep 's' run 1 \(jobs.train.forward=4000000s\): job 'train': step 3 \(B0\): the steps up to it take at "
        r"least 5e\+06 s one after another \(compute, and each collective's and message's data at 100Gbps\), "
        rf"{CLOCK}; give the job fewer or shorter steps, or raise the rate",
    ),
    (
        "layers-axis-past-the-qp-limit",
        '"jobs.train.layers" = [1, 33000]',
        r"sweep 's' run 1 \(jobs.train.layers=33000\): job 'train': its steps need at least 198000 queue pairs on the "
        r"NIC of host 0 \(rank 0: 198000 for its 99000 collective steps, 0 for the ranks its messages go to or come "
        r"from\); a NIC has at most 65535 \(the 16-bit QP number\); give the job fewer collective steps",
    ),
]


@pytest.mark.parametrize(("axes", "line"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dry", [False, True], ids=["run", "dry-run"])
def test_a_workload_sweep_that_cannot_work_is_refused_in_one_line(tmp_path: Path, axes, line, dry):
    (tmp_path / "w.toml").write_text(WORKLOAD_TOML)
    (tmp_path / "s.toml").write_text(f'name = "s"\nworkload = "w.toml"\n[axes]\n{axes}\n')
    argv = [sys.executable, "-m", "mcsim", "sweep", "s.toml", *(["--dry-run"] if dry else ["--workers", "1"])]
    p = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 2
    assert re.fullmatch(f"mcsim: error: {line}\n", p.stderr), p.stderr
    assert not (tmp_path / "s.sqlite").exists()  # nothing ran, no store made
    if dry:  # the runs before it were listed as they were built
        assert p.stdout.splitlines()[0] == "run,label,status,key" and p.stdout.splitlines()[1].startswith("0,")


def test_a_sweep_whose_runs_take_long_to_build_says_so_before_it_refuses_a_bad_one(tmp_path, monkeypatch, capsys):
    """Building and checking every run before the first starts (a workload's: each its jobs' steps) says how
    far it got once it takes BUILDING_NOTE_S (here 0: each run); a bad run is still refused before the store."""
    from mcsim.cli import main
    from mcsim.sweep import commands

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(commands, "BUILDING_NOTE_S", 0.0)
    monkeypatch.setattr(commands, "BUILDING_EVERY_S", 0.0)
    (tmp_path / "w.toml").write_text(WORKLOAD_TOML)
    (tmp_path / "s.toml").write_text(
        'name = "s"\nworkload = "w.toml"\n[axes]\n"jobs.train.allgather" = ["ring", "x"]\n'
    )
    assert main(["sweep", "s.toml", "--workers", "1"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "mcsim: sweep 's': built and checked 1 of 2 runs ..."
    assert err[1].startswith("mcsim: error: sweep 's' run 1 (jobs.train.allgather=x): ") and len(err) == 2
    assert not (tmp_path / "s.sqlite").exists()


# ------------------------------------------------------------------------------------------------
# an options.faults axis of faults files: each file from the spec's folder, read into the run's data


def _faults_spec(folder: Path, links: str | None, axis: str = "faults.toml") -> Path:
    """A sweep file in ``folder`` over a workload whose options.faults axis names ``axis`` (a faults file there
    holding ``links``, if given)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "w.toml").write_text(WORKLOAD_TOML.replace('"1000000s"', '"1us"'))
    if links is not None:
        (folder / "faults.toml").write_text(links)
    spec = folder / "s.toml"
    spec.write_text(f'name = "s"\nworkload = "w.toml"\n[axes]\n"options.faults" = ["{axis}"]\n')
    return spec


def test_a_faults_file_axis_enters_the_key_by_its_content(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the files are the spec's folder's, not the current folder's
    vers = runner.versions()
    lossy = _faults_spec(tmp_path / "a", "link_loss = [{u = 0, v = 16, p = 1e-3}]\n")
    cut = _faults_spec(tmp_path / "b", 'link_down = [{u = 3, v = 17, down = "0us", up = "forever"}]\n')
    (run_a,) = SweepSpec.from_toml(lossy).runs()
    (run_b,) = SweepSpec.from_toml(cut).runs()
    assert runner.key_of(run_a, vers) != runner.key_of(run_b, vers)
    assert run_a.workload is not None and run_a.workload.workload.options["faults"].link_loss == {(0, 16): 1e-3}
    assert run_b.workload is not None and run_b.workload.workload.options["faults"].link_down[0][:2] == (3, 17)


def test_a_missing_faults_file_axis_is_one_line(tmp_path):
    spec = _faults_spec(tmp_path, None, axis="gone.toml")
    p = subprocess.run(
        [sys.executable, "-m", "mcsim", "sweep", "s.toml", "--dry-run"], capture_output=True, text=True, cwd=tmp_path
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    line = r"sweep spec 's\.toml': axis 'options\.faults': faults file '/\S+/gone\.toml' does not exist"
    assert re.fullmatch(f"mcsim: error: {line}\n", p.stderr), p.stderr
    assert spec.exists()
