# SPDX-License-Identifier: GPL-2.0-only
"""`mcsim sweep` input: every bad option or spec one line and exit 2 before any work; the dry run
streamed, reading the store and writing nothing."""

from __future__ import annotations

import contextlib
import itertools
import re
import shlex
import sqlite3
from pathlib import Path

import pytest

from mcsim.cli import main
from mcsim.sweep import SweepSpec, runner
from mcsim.sweep import spec as spec_module
from mcsim.sweep.spec import MAX_RUNS
from mcsim.sweep.store import KEYS_PER_QUERY, Store

SPEC = 'name = "sizes"\n[base]\ntopology = "fat-tree-k4"\n[axes]\nbytes_per_rank = ["4KiB"]\n'
SPEC += 'algorithm = ["ring", "mcast"]\n'


# ------------------------------------------------------------------------------------------------
# bad input: one line, exit 2, before any work


@pytest.fixture
def cli_dir(tmp_path, monkeypatch) -> Path:
    """A folder with spec.toml (2 runs, sweep 'sizes'), store.sqlite (that sweep's members, no runs),
    empty.sqlite (0 bytes), text.sqlite, foreign.sqlite (another program's SQLite), a TLS file, w.toml (a
    workload) and the workload sweeps of WORKLOAD_AXES, each with a bad axis, and both.toml (a base and a workload)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.toml").write_text(SPEC)
    with Store(tmp_path / "store.sqlite") as store:
        store.add_members("sizes", [("k", "bytes_per_rank=4KiB algorithm=ring", {"algorithm": "ring"})])
    (tmp_path / "empty.sqlite").write_bytes(b"")
    (tmp_path / "text.sqlite").write_text("rate,time\n56Gbps,1.0\n")
    with sqlite3.connect(tmp_path / "foreign.sqlite") as db:
        db.execute("CREATE TABLE users (name TEXT)")
    (tmp_path / "ca.pem").write_text("not really a certificate")
    (tmp_path / "folder.csv").mkdir()
    (tmp_path / "w.toml").write_text(WORKLOAD)
    for name, axis in WORKLOAD_AXES.items():
        (tmp_path / f"{name}.toml").write_text(f'name = "{name}"\nworkload = "w.toml"\n[axes]\n{axis}\n')
    (tmp_path / "both.toml").write_text('name = "both"\nworkload = "w.toml"\n[base]\ntopology = "fat-tree-k4"\n')
    (tmp_path / "huge.toml").write_text(
        'name = "huge"\n[base]\ntopology = "fat-tree-k4"\n[axes]\n'
        + "".join(f"{axis} = {list(range(1, n + 1))}\n" for axis, n in (("seed", 1000), ("ranks", 650), ("mtu", 1000)))
    )
    return tmp_path


WORKLOAD = 'topology = "fat-tree-k4"\n[[jobs]]\nname = "train"\nranks = 4\nkind = "fsdp"\nlayers = 2\n'
WORKLOAD += 'bytes_per_layer = "64KiB"\nforward = "5us"\nbackward = "10us"\n'
# workload sweeps (workload = "w.toml") with one bad axis each: spec name -> its [axes] line
WORKLOAD_AXES = {
    "no-job": '"jobs.trian.layers" = [1]',
    "no-key": '"jobs.train.allgathr" = ["ring"]',
    "no-algorithm": '"jobs.train.allgather" = ["ring", "foo"]',
    "no-field": 'colour = ["red"]',
}
SHOWN_ONLY = "does nothing when printing a store; it is an option of mcsim sweep SPEC.toml$"
RUN_ONLY_OPTION = "does nothing when running a spec; it is an option of mcsim sweep show STORE$"
BAD_INPUTS = [
    # options that do nothing in the form given
    ("show store.sqlite --dry-run", rf"^sweep show: --dry-run {SHOWN_ONLY}"),
    ("show store.sqlite --workers 2", rf"^sweep show: --workers {SHOWN_ONLY}"),
    ("show store.sqlite --time-limit 1s", rf"^sweep show: --time-limit {SHOWN_ONLY}"),
    ("show store.sqlite --retry-failed", rf"^sweep show: --retry-failed {SHOWN_ONLY}"),
    ("show store.sqlite --scheduler tcp://h:1", rf"^sweep show: --scheduler {SHOWN_ONLY}"),
    ("show store.sqlite --tls-cert ca.pem", rf"^sweep show: --tls-cert {SHOWN_ONLY}"),
    ("show store.sqlite --no-progress", rf"^sweep show: --no-progress {SHOWN_ONLY}"),
    ("show store.sqlite --store s.sqlite", r"^sweep show: --store does nothing; the store is the argument after show"),
    ("spec.toml --format csv", rf"^sweep: --format {RUN_ONLY_OPTION}"),
    ("spec.toml --sweep sizes", rf"^sweep: --sweep {RUN_ONLY_OPTION}"),
    ("spec.toml --out o.csv", rf"^sweep: --out {RUN_ONLY_OPTION}"),
    ("spec.toml --tls-cert ca.pem", r"^sweep: --tls-cert does nothing without --scheduler \(it is Dask's TLS\)"),
    ("spec.toml --tls-key ca.pem", r"^sweep: --tls-key does nothing without --scheduler"),
    ("spec.toml --tls-ca-file ca.pem", r"^sweep: --tls-ca-file does nothing without --scheduler"),
    ("spec.toml --scheduler tcp://h:1 --workers 2", r"^sweep: --workers does nothing with --scheduler"),
    ("spec.toml --dry-run --workers 2", r"^sweep: --workers does nothing with --dry-run \(it runs nothing\)"),
    ("spec.toml --dry-run --time-limit 1s", r"^sweep: --time-limit does nothing with --dry-run"),
    ("spec.toml --dry-run --no-progress", r"^sweep: --no-progress does nothing with --dry-run"),
    ("spec.toml --dry-run --scheduler tcp://h:1", r"^sweep: --scheduler does nothing with --dry-run"),
    ("spec.toml store.sqlite", r"^sweep: unexpected 'store.sqlite'; the store is --store PATH$"),
    # values
    ("spec.toml --workers 0", r"^sweep: --workers=0 must be 1\.\.1024 \(local worker processes"),
    ("spec.toml --workers -3", r"^sweep: --workers=-3 must be 1\.\.1024"),
    ("spec.toml --workers two", r"^argument --workers: invalid int value: 'two'"),
    ("spec.toml --workers 18446744073709551616", r"^sweep: --workers=18446744073709551616 must be 1\.\.1024"),
    ("spec.toml --scheduler ''", r"^sweep: --scheduler='' is empty; give the address, e\.g\. tcp://HOST:8786$"),
    ("spec.toml --time-limit 0s", r"^sweep: --time-limit='0s' must be > 0; e\.g\. --time-limit 600s$"),
    ("spec.toml --time-limit=-1s", r"^--time-limit='-1s' must not be negative"),
    ("spec.toml --time-limit 5", r"^--time-limit='5' has no unit"),
    ("spec.toml --time-limit soon", r"^--time-limit='soon' is not a time"),
    (
        "spec.toml --scheduler tcp://h:1 --tls-cert ca.pem",
        r"^sweep: Dask TLS needs all of .*; --tls-ca-file, --tls-key",
    ),
    (
        "spec.toml --scheduler tcp://h:1 --tls-cert ca.pem --tls-key ca.pem --tls-ca-file no.pem",
        r"^sweep: --tls-ca-file='no.pem' is not a file$",
    ),
    # a product too large, refused from the axis lengths (a run and a dry run alike)
    ("huge.toml", r"^sweep 'huge' has 650,000,000 runs \(1000 seed x 650 ranks x 1000 mtu\); at most 100,000 "),
    ("huge.toml --dry-run", r"^sweep 'huge' has 650,000,000 runs \(1000 seed x 650 ranks x 1000 mtu\); at most "),
    # a sweep over a workload: an axis naming no job, no key of the job's kind, a bad value; a base too
    (
        "no-job.toml",
        r"^sweep 'no-job': axis 'jobs.trian.layers': the workload has no job named 'trian'; its jobs: train$",
    ),
    ("no-key.toml --dry-run", r"^sweep 'no-key': axis 'jobs.train.allgathr': unknown key of job 'train' \(fsdp\) "),
    ("no-algorithm.toml", r"^sweep 'no-algorithm' run 1 \(jobs.train.allgather=foo\): job 'train': step 0 \(AG F0\): "),
    ("no-algorithm.toml --dry-run", r"^sweep 'no-algorithm' run 1 \(jobs.train.allgather=foo\): job 'train'"),
    (
        "no-field.toml",
        r"^sweep 'no-field': axis 'colour': unknown workload field 'colour'; choose one of jobs\.<job name>",
    ),
    ("both.toml", r"^sweep 'both': give a Scenario \[base\] or a workload, not both"),
    # show: the store and the output
    ("show", r"^sweep show: give the store to print: mcsim sweep show STORE$"),
    ("show nothing.sqlite", r"^sweep store 'nothing.sqlite': no such file$"),
    ("show .", r"^sweep store '\.': is a folder"),
    ("show empty.sqlite", r"^sweep store 'empty.sqlite': not a sweep store \(an empty SQLite file\)"),
    ("show text.sqlite", r"^sweep store 'text.sqlite': file is not a database \(not an intact sweep store\)$"),
    ("show foreign.sqlite", r"^sweep store 'foreign.sqlite': not a sweep store \(SQLite without the .*\['users'\]\)"),
    ("spec.toml --dry-run --store foreign.sqlite", r"^sweep store 'foreign.sqlite': not a sweep store"),
    ("spec.toml --store text.sqlite", r"^sweep store 'text.sqlite': file is not a database"),
    (
        "show store.sqlite --sweep other",
        r"^sweep show: --sweep='other' is not in store 'store.sqlite'; its sweeps: 'sizes'$",
    ),
    ("show store.sqlite --out o.txt", r"^sweep show: --out='o.txt' must end in \.csv, \.json, \.jsonl"),
    ("show store.sqlite --out no/such/o.csv", r"^--out='no/such/o.csv': folder 'no/such' does not exist$"),
    ("show store.sqlite --out folder.csv", r"^--out='folder.csv' is a folder; give a file name$"),
    ("show store.sqlite --format xml", r"^argument --format: invalid choice: 'xml'"),
]


@pytest.mark.parametrize(("argv", "match"), BAD_INPUTS, ids=[a for a, _ in BAD_INPUTS])
def test_bad_input_is_one_line_and_exit_2_before_any_work(cli_dir, capsys, argv, match):
    before = {p.name: p.read_bytes() for p in cli_dir.iterdir() if p.is_file()}
    with pytest.raises(SystemExit) if "invalid" in match else contextlib.nullcontext() as argparse_exit:
        code = main(["sweep", *shlex.split(argv)])
    code = argparse_exit.value.code if argparse_exit is not None else code
    out, err = capsys.readouterr()
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith("mcsim: error: "), err
    if out:  # a dry run lists the runs before a bad one as it builds them (streamed), never one after it
        bad = re.search(r" run (\d+) \(", err)
        assert "--dry-run" in argv and bad is not None and out.splitlines()[0] == "run,label,status,key", out
        assert [int(line.split(",")[0]) for line in out.splitlines()[1:]] == list(range(int(bad.group(1))))
    assert re.search(match, err.removeprefix("mcsim: error: ").removesuffix("\n").split(" (see mcsim")[0]), err
    after = {p.name: p.read_bytes() for p in cli_dir.iterdir() if p.is_file()}
    assert after == before  # nothing written, no store made


# ------------------------------------------------------------------------------------------------
# the dry run: streamed, reads the store, writes nothing


def test_the_dry_run_lists_runs_as_they_are_built(monkeypatch):
    """The first rows come as their runs are built, not after the whole product (nor a whole chunk)."""
    built = []
    real = spec_module._scenario
    monkeypatch.setattr(spec_module, "_scenario", lambda *a: built.append(1) or real(*a))
    spec = SweepSpec(name="many", base={"topology": "fat-tree-k4"}, axes={"seed": list(range(MAX_RUNS))})
    dry = runner.DryRun(spec, None)
    first = list(itertools.islice(dry.rows(), 3))
    assert [(r["run"], r["label"], r["status"]) for r in first] == [(i, f"seed={i}", "missing") for i in range(3)]
    assert len(built) == 3 < KEYS_PER_QUERY  # chunks of 1, then 2: the first row as soon as its run is built


def test_a_dry_run_prints_one_csv_header_across_chunks(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    n = KEYS_PER_QUERY * 2 + 1
    (tmp_path / "seeds.toml").write_text(
        f'name = "seeds"\n[base]\ntopology = "fat-tree-k4"\n[axes]\nseed = {list(range(n))}\n'
    )
    assert main(["sweep", "seeds.toml", "--dry-run"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert (
        lines[0] == "run,label,status,key"
        and len(lines) == n + 1
        and lines[-1].startswith(f"{n - 1},seed={n - 1},missing,")
    )
    assert f"{n} runs: 0 stored ok, 0 stored incomplete, 0 stored failed, 0 stored corrupt, {n} to run" in err
    assert not (tmp_path / "seeds.sqlite").exists()
