# SPDX-License-Identifier: GPL-2.0-only
"""Sweeps end to end: store keys, the `mcsim sweep` command (dry run, run, show, a bad spec), resume
after SIGKILL with finished rows byte-identical, a crashed run recorded as failed with the exit status
saying so, and the Dask cluster giving the local pool's numbers."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcsim.cli import main
from mcsim.config.rdma import RcConfig, RdmaConfig
from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario, scenario_of
from mcsim.sweep import SweepSpec, plan, run_key, run_sweep, runner
from mcsim.sweep.executors import LocalPool
from mcsim.sweep.store import Store

SPEC = """
name = "sizes"
[base]
topology = "fat-tree-k4"
[axes]
bytes_per_rank = [{sizes}]
algorithm = ["ring", "mcast"]
"""
RUN_ONLY = {"wall_s", "peak_rss_b"}  # metrics of the worker process, not of the simulation


def spec_file(tmp_path: Path, sizes: list[str]) -> Path:
    path = tmp_path / "sizes.toml"
    path.write_text(SPEC.format(sizes=", ".join(f'"{s}"' for s in sizes)))
    return path


def raw_rows(store: Path) -> dict[str, tuple]:
    """Every stored run's row exactly as SQLite holds it (for byte-identity checks)."""
    with sqlite3.connect(store) as db:
        return {row[0]: row for row in db.execute("SELECT * FROM runs ORDER BY key")}


# ------------------------------------------------------------------------------------------------
# keys


def test_the_key_covers_the_versions_and_the_topology_files_content(tmp_path):
    versions = runner.versions()
    assert set(versions) == {"mcsim", "ns3", "build_key"}
    sc = Scenario(topology="fat-tree-k4", bytes_per_rank="4KiB")
    assert run_key(sc, versions) == run_key(Scenario(topology="fat-tree-k4", bytes_per_rank=4096), versions)
    assert run_key(sc, versions) != run_key(sc, {**versions, "build_key": "0" * 16})
    assert run_key(sc, versions) != run_key(sc, {**versions, "mcsim": "0.0.0"})
    # a topology file: the key follows its content, not its path
    topo = tmp_path / "t.toml"
    ready = Path(runner.topology.ready()["fat-tree-k4"])
    topo.write_text(ready.read_text())
    by_file = Scenario(topology=str(topo), bytes_per_rank="4KiB")
    first = run_key(by_file, versions)
    topo.write_text(ready.read_text().replace('delay = "100ns"', 'delay = "200ns"'))
    assert "200ns" in topo.read_text()
    assert run_key(by_file, versions) != first


def test_a_spec_with_two_spellings_of_one_run_is_one_line(tmp_path):
    spec = SweepSpec(name="dup", base={"topology": "fat-tree-k4"}, axes={"bytes_per_rank": ["4KiB", 4096]})
    with Store(tmp_path / "s.sqlite") as store, pytest.raises(McsimError, match=r"are the same Scenario"):
        plan(spec, store)


# ------------------------------------------------------------------------------------------------
# the command


def test_dry_run_run_rerun_and_show(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = spec_file(tmp_path, ["4KiB", "8KiB"])
    assert main(["sweep", str(spec), "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == "run,label,status,key"
    assert [line.split(",")[1:3] for line in out.splitlines()[1:]] == [
        ["bytes_per_rank=4KiB algorithm=ring", "missing"],
        ["bytes_per_rank=4KiB algorithm=mcast", "missing"],
        ["bytes_per_rank=8KiB algorithm=ring", "missing"],
        ["bytes_per_rank=8KiB algorithm=mcast", "missing"],
    ]
    assert "4 runs: 0 stored ok, 0 stored incomplete, 0 stored failed, 0 stored corrupt, 4 to run" in err
    assert not (tmp_path / "sizes.sqlite").exists()  # a dry run runs nothing, writes nothing

    assert main(["sweep", str(spec), "--workers", "2"]) == 0
    err = capsys.readouterr().err
    assert "4 runs, 4 ok, 0 incomplete, 0 failed (4 run now, 0 from the store 'sizes.sqlite')" in err
    assert err.count("] ok ") == 4  # one progress line per run (stderr is not a terminal)
    rows = raw_rows(tmp_path / "sizes.sqlite")
    assert len(rows) == 4

    # a second call runs nothing and leaves the rows as they were; a larger spec runs only what is new
    spec_file(tmp_path, ["4KiB", "8KiB", "16KiB"])
    assert main(["sweep", str(spec), "--dry-run"]) == 0
    assert (
        "6 runs: 4 stored ok, 0 stored incomplete, 0 stored failed, 0 stored corrupt, 2 to run"
        in capsys.readouterr().err
    )
    assert main(["sweep", str(spec)]) == 0
    assert "6 runs, 6 ok, 0 incomplete, 0 failed (2 run now, 4 from the store" in capsys.readouterr().err
    after = raw_rows(tmp_path / "sizes.sqlite")
    assert {k: after[k] for k in rows} == rows

    assert main(["sweep", "show", "sizes.sqlite", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("sweep,label,status,algorithm,bytes_per_rank,") and len(lines) == 7  # the axes
    assert lines[1].startswith("sizes,bytes_per_rank=4KiB algorithm=ring,ok,ring,4KiB,")
    assert main(["sweep", "show", "sizes.sqlite"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0] == "sweep sizes" and table[1].split()[:3] == ["status", "time_us", "time_over_bound"]
    assert sum(line.startswith("ok ") for line in table) == 6
    assert main(["sweep", "show", "sizes.sqlite", "--format", "json", "--out", str(tmp_path / "o.json")]) == 0
    assert len(json.loads((tmp_path / "o.json").read_text())) == 6


def test_the_stored_numbers_are_the_scenarios_own(tmp_path):
    """What the store holds for a run is what Scenario.run() gives in this process."""
    spec = SweepSpec(name="one", base={"topology": "fat-tree-k4", "bytes_per_rank": "4KiB", "algorithm": "mcast"})
    report = run_sweep(spec, tmp_path / "one.sqlite", workers=1, progress=False)
    (row,) = report.rows()
    direct = Scenario(topology="fat-tree-k4", bytes_per_rank="4KiB", algorithm="mcast").run().record()
    assert {k: v for k, v in row.items() if k in direct} == direct


@pytest.mark.parametrize(
    ("spec_text", "message"),
    [
        ('name = "x"\n[axes]\nrate = ["56Gbps", "fast"]\n', r"rate"),
        ('name = "x"\n[axes]\nbytes_per_rank = []\n', r"empty"),
        ('name = "x"\n[axes]\ncolour = ["red"]\n', r"unknown Scenario keyword 'colour'"),
        (
            'name = "x"\n[base]\ntopology = "fat-tree-k4"\n[axes]\nranks = [4, 99]\n',
            r"^mcsim: error: sweep 'x' run 1 \(ranks=99\): ",
        ),
    ],
)
def test_a_bad_spec_is_one_line_before_anything_runs(tmp_path, capsys, monkeypatch, spec_text, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.toml").write_text(spec_text)
    assert main(["sweep", "bad.toml"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("mcsim: error: ")
    assert re.search(message, err), err
    assert not (tmp_path / "x.sqlite").exists()  # nothing ran, nothing was written


# ------------------------------------------------------------------------------------------------
# resume after SIGKILL


def _stored_count(store: Path) -> int:
    try:
        with sqlite3.connect(store, timeout=5) as db:
            return int(db.execute("SELECT count(*) FROM runs").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_a_sweep_killed_with_sigkill_resumes_with_its_finished_runs_intact(tmp_path):
    # 10 runs; the sweep is killed once 3 are stored, so the 7 runs after them must take long enough
    # (seconds: 8 to 32 MiB per rank) that a loaded machine cannot finish them all before the kill
    spec = spec_file(tmp_path, ["4KiB", "8KiB", "8MiB", "16MiB", "32MiB"])
    store = tmp_path / "kill.sqlite"
    argv = [sys.executable, "-m", "mcsim", "sweep", str(spec), "--store", str(store), "--workers", "1"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 240
    while _stored_count(store) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep ended before it could be killed: " + proc.stderr.read().decode()[-2000:]
    os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its workers, at once
    proc.wait()
    proc.stderr.close()
    before = raw_rows(store)
    assert 3 <= len(before) < 10

    again = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert again.returncode == 0, again.stderr[-2000:]
    assert (
        f"10 runs, 10 ok, 0 incomplete, 0 failed ({10 - len(before)} run now, {len(before)} from the store"
        in again.stderr
    )
    after = raw_rows(store)
    assert len(after) == 10
    assert {k: after[k] for k in before} == before  # the finished rows, byte for byte


# ------------------------------------------------------------------------------------------------
# Dask


def test_a_dask_cluster_gives_the_local_pools_numbers(tmp_path):
    distributed = pytest.importorskip("distributed")
    spec = SweepSpec(
        name="dask",
        base={"topology": "fat-tree-k4", "bytes_per_rank": "4KiB"},
        axes={"algorithm": ["ring", "mcast"], "seed": [1, 2]},
    )
    local = run_sweep(spec, tmp_path / "local.sqlite", workers=2, progress=False).rows()
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        on_dask = run_sweep(spec, tmp_path / "dask.sqlite", client=client, progress=False).rows()
    assert len(local) == len(on_dask) == 4

    def simulated(row: dict) -> dict:
        return {k: v for k, v in row.items() if k not in RUN_ONLY}

    assert [simulated(r) for r in on_dask] == [simulated(r) for r in local]
    assert all(r["status"] == "ok" and r["complete"] for r in local)


# ------------------------------------------------------------------------------------------------
# the scenario scripts run as sweeps


@pytest.mark.parametrize(
    ("script", "args", "runs"),
    [
        ("link_speed_sweep.py", ["--rates", "56Gbps,400Gbps", "--size", "4KiB", "--ranks", "16"], 4),
        ("testbed_188_allgather.py", ["--sizes", "4KiB,16KiB", "--ranks", "16"], 4),
    ],
)
def test_the_scenarios_run_as_sweeps_and_reuse_the_store(tmp_path, script, args, runs):
    path = Path(__file__).resolve().parents[2] / "scenarios" / script
    argv = [sys.executable, "-m", "mcsim", "run", str(path), *args, "--store", str(tmp_path / "s.sqlite")]
    first = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    assert f"{runs} runs, {runs} ok, 0 incomplete, 0 failed ({runs} run now, 0 from the store" in first.stdout
    second = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert f"{runs} runs, {runs} ok, 0 incomplete, 0 failed (0 run now, {runs} from the store" in second.stdout

    def table(out: str) -> list[str]:  # everything but the sweep's own report line
        return [line for line in out.splitlines() if not line.startswith("sweep '")]

    assert "INCOMPLETE" not in first.stdout and "FAILED" not in first.stdout
    assert table(first.stdout) == table(second.stdout)  # the same numbers, from the store
    assert len(raw_rows(tmp_path / "s.sqlite")) == runs


def _tls_files(folder: Path) -> tuple[str, str, str]:
    """A throw-away CA and one certificate it signed (for the scheduler, workers and client)."""
    ca_key, ca, key, csr, cert = (str(folder / n) for n in ("ca.key", "ca.pem", "tls.key", "tls.csr", "tls.pem"))
    for argv in (
        f"req -x509 -newkey rsa:2048 -nodes -keyout {ca_key} -out {ca} -days 1 -subj /CN=mcsim-test-ca",
        f"req -newkey rsa:2048 -nodes -keyout {key} -out {csr} -subj /CN=localhost",
        f"x509 -req -in {csr} -CA {ca} -CAkey {ca_key} -CAcreateserial -out {cert} -days 1",
    ):
        subprocess.run(["openssl", *argv.split()], check=True, capture_output=True)
    return ca, cert, key


def test_the_command_reaches_a_dask_cluster_over_tls(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make the test's certificates")
    ca, cert, key = _tls_files(tmp_path)
    tls = {"tls_ca_file": str(ca), "tls_scheduler_cert": str(cert), "tls_scheduler_key": str(key)}
    tls |= {"tls_worker_cert": str(cert), "tls_worker_key": str(key), "tls_client_cert": str(cert)}
    security = distributed.Security(**tls, tls_client_key=str(key), require_encryption=True)
    spec = tmp_path / "tls.toml"
    spec.write_text('name = "tls"\n[base]\ntopology = "fat-tree-k4"\nbytes_per_rank = "4KiB"\n[axes]\nseed = [1, 2]\n')
    store = tmp_path / "tls.sqlite"
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, protocol="tls", security=security, dashboard_address=None
    ) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tls://")
        argv = ["sweep", str(spec), "--store", str(store), "--scheduler", address]
        # half the TLS options: one line; no certificate at all: the cluster refuses, one line
        assert main([*argv, "--tls-ca-file", str(ca)]) == 2
        assert "needs all of --tls-ca-file, --tls-cert and --tls-key" in capsys.readouterr().err
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"mcsim: error: --scheduler {address}: cannot connect") and err.count("\n") == 1, err
        assert not raw_rows(store)
        assert main([*argv, "--tls-ca-file", str(ca), "--tls-cert", str(cert), "--tls-key", str(key)]) == 0
    assert "2 runs, 2 ok, 0 incomplete, 0 failed (2 run now, 0 from the store" in capsys.readouterr().err
    assert len(raw_rows(store)) == 2


# ------------------------------------------------------------------------------------------------
# a run that crashes its worker


def test_a_run_that_aborts_its_worker_is_stored_as_failed_and_the_exit_status_says_so(
    tmp_path, capsys, monkeypatch, worker_command
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "crash.toml").write_text(
        'name = "crash"\n[base]\ntopology = "fat-tree-k4"\nbytes_per_rank = "4KiB"\n[axes]\nseed = [1, 2, 3, 4]\n'
    )
    spec = SweepSpec.from_toml(tmp_path / "crash.toml")
    with Store(tmp_path / "crash.sqlite") as store:
        the_plan = plan(spec, store)
        pool = LocalPool(2, command=worker_command(actions={"seed=2": "abort"}))
        report = runner.execute(the_plan, store, pool, progress=False)
    assert (report.ok, report.failed, report.ran) == (3, ["seed=2"], 4)
    rows = {r["label"]: r for r in report.rows()}
    assert [rows[f"seed={s}"]["status"] for s in (1, 2, 3, 4)] == ["ok", "failed", "ok", "ok"]
    error = rows["seed=2"]["error"]
    assert error.splitlines()[0].startswith("worker process died (signal 6, SIGABRT)")
    assert "about to abort" in error  # the tail of the worker's stderr

    # the command reports the stored failure (exit 1) and runs nothing; --retry-failed runs it again
    assert main(["sweep", "crash.toml"]) == 1
    err = capsys.readouterr().err
    assert "4 runs, 3 ok, 0 incomplete, 1 failed (0 run now, 4 from the store" in err and "failed: seed=2" in err
    assert main(["sweep", "crash.toml", "--retry-failed"]) == 0
    assert "4 runs, 4 ok, 0 incomplete, 0 failed (1 run now, 3 from the store" in capsys.readouterr().err
    assert main(["sweep", "show", "crash.sqlite", "--format", "csv"]) == 0
    assert capsys.readouterr().out.count("\ncrash,seed=") == 4


def test_the_default_store_is_named_after_the_sweep_with_safe_characters():
    spec = SweepSpec(name="link speed/../x", base={"topology": "fat-tree-k4"})
    assert runner.default_store(spec) == Path("link%20speed%2F..%2Fx.sqlite")  # no folder, no path out


def test_the_longest_runs_go_first(tmp_path):
    spec = SweepSpec(name="order", base={"topology": "fat-tree-k4"}, axes={"bytes_per_rank": ["4KiB", "1MiB", "64KiB"]})
    with Store(tmp_path / "o.sqlite") as store:
        the_plan = plan(spec, store)
    assert [t.label for t in the_plan.tasks] == [f"bytes_per_rank={s}" for s in ("4KiB", "1MiB", "64KiB")]
    assert [t.label for t in the_plan.todo] == [f"bytes_per_rank={s}" for s in ("1MiB", "64KiB", "4KiB")]


# ------------------------------------------------------------------------------------------------
# incomplete runs: counted apart, exit 1

LOSSY = """
name = "lossy"
[base]
topology = "fat-tree-k4"
bytes_per_rank = "4KiB"
rc = { retry_cnt = 0 }
[axes]
loss = [0, 0.2]
seed = [1, 2]
"""


def test_incomplete_runs_are_counted_apart_and_the_exit_status_is_1(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lossy.toml").write_text(LOSSY)
    # the lossy runs truly end incomplete: some rank never finishes (no RC retry), as mcsim allgather says
    rdma = RdmaConfig(rc=RcConfig(retry_cnt=0))
    direct = scenario_of(topology="fat-tree-k4", bytes_per_rank="4KiB", loss=0.2, seed=1, rdma=rdma)
    assert not direct.run().complete
    argv = ["allgather", "--topology", "fat-tree-k4", "--bytes-per-rank", "4KiB", "--loss", "0.2", "--retry-cnt", "0"]
    assert main([*argv, "--seed", "1"]) == 1
    capsys.readouterr()

    assert main(["sweep", "lossy.toml", "--workers", "2"]) == 1
    err = capsys.readouterr().err
    assert err.count("] INCOMPLETE loss=0.2 seed=") == 2 and err.count("] ok loss=0 seed=") == 2
    assert re.search(r"INCOMPLETE loss=0.2 seed=1 [\d.]+ s: \d+ of 16 ranks did not finish \| ok \d, incomplete", err)
    assert "[4/4] " in err and "| ok 2, incomplete 2, failed 0, running 0" in err
    line = err.splitlines()[-1]
    assert line.startswith("mcsim: sweep 'lossy': 4 runs, 2 ok, 2 incomplete, 0 failed (4 run now, 0 from the store")
    assert "; incomplete: loss=0.2 seed=1; loss=0.2 seed=2 (see: mcsim sweep show lossy.sqlite)" in line

    # from the store: the same counts, still exit 1, nothing run
    assert main(["sweep", "lossy.toml"]) == 1
    assert "4 runs, 2 ok, 2 incomplete, 0 failed (0 run now, 4 from the store" in capsys.readouterr().err
    assert main(["sweep", "lossy.toml", "--dry-run"]) == 0  # a listing: nothing ran, nothing failed
    out, err = capsys.readouterr()
    assert [line.split(",")[2] for line in out.splitlines()[1:]] == ["ok", "ok", "incomplete", "incomplete"]
    assert "4 runs: 2 stored ok, 2 stored incomplete, 0 stored failed, 0 stored corrupt, 0 to run" in err

    # show: every axis a column (seed, loss are no metric), strict JSON (null, never NaN)
    assert main(["sweep", "show", "lossy.sqlite", "--format", "json"]) == 0
    rows = [
        json.loads(line, parse_constant=lambda c: pytest.fail(f"bare {c} in JSON"))
        for line in capsys.readouterr().out.splitlines()
    ]
    assert [(r["loss"], r["seed"], r["complete"]) for r in rows] == [
        (0, 1, True),
        (0, 2, True),
        (0.2, 1, False),
        (0.2, 2, False),
    ]
    assert rows[2]["time_ps"] is None and rows[2]["unfinished_ranks"] > 0
    assert main(["sweep", "show", "lossy.sqlite", "--out", "lossy.json"]) == 0
    table = capsys.readouterr().out
    assert table.count("INCOMPLETE: ") == 2
    assert json.loads((tmp_path / "lossy.json").read_text(), parse_constant=pytest.fail)[3]["seed"] == 2


# ------------------------------------------------------------------------------------------------
# a corrupt row: shown with the row, run again and replaced


@pytest.mark.parametrize(
    ("column", "value", "why"),
    [
        ("metrics", '{"time_ps": ', r"column metrics is corrupt \(not JSON: "),
        ("arrays", b"PK\x03\x04junk", r"column arrays is corrupt \(not an intact \.npz: "),
        ("versions", "[]", r"column versions is corrupt \(JSON list, not an object\)"),
    ],
)
def test_a_corrupt_row_is_shown_with_its_row_and_run_again(tmp_path, capsys, monkeypatch, column, value, why):
    monkeypatch.chdir(tmp_path)
    spec_file(tmp_path, ["4KiB"])
    assert main(["sweep", "sizes.toml", "--no-progress"]) == 0
    intact = raw_rows(tmp_path / "sizes.sqlite")
    with sqlite3.connect(tmp_path / "sizes.sqlite") as db:
        (key,) = db.execute("SELECT key FROM runs WHERE label = 'bytes_per_rank=4KiB algorithm=mcast'").fetchone()
        db.execute(f"UPDATE runs SET {column} = ? WHERE key = ?", (value, key))
    capsys.readouterr()
    line = rf"^mcsim: sweep store 'sizes.sqlite': run 'bytes_per_rank=4KiB algorithm=mcast' \(key {key[:12]}\): {why}"

    assert main(["sweep", "show", "sizes.sqlite"]) == 1
    out, err = capsys.readouterr()
    assert re.search(line + r".*; running its sweep again replaces it$", err.strip()) and len(err.splitlines()) == 1
    assert [row.split()[0] for row in out.splitlines()[2:]] == ["ok", "corrupt"]
    assert main(["sweep", "show", "sizes.sqlite", "--format", "csv"]) == 1
    assert ",corrupt," in capsys.readouterr().out

    assert main(["sweep", "sizes.toml", "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[2].split(",")[2] == "corrupt"
    assert re.search(line + r".*; a run replaces it$", err.splitlines()[0])
    assert "2 runs: 1 stored ok, 0 stored incomplete, 0 stored failed, 1 stored corrupt, 1 to run" in err

    assert main(["sweep", "sizes.toml", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert re.search(line + r".*; running it again$", err.splitlines()[0])
    assert "2 runs, 2 ok, 0 incomplete, 0 failed (1 run now, 1 of them over a corrupt row, 1 from the store" in err
    after = raw_rows(tmp_path / "sizes.sqlite")
    assert set(after) == set(intact)
    names = ("key", "label", "scenario", "status", "error", "metrics", "arrays", "wall_s", "peak_rss_b", "versions")
    replaced, was = (dict(zip(names, row, strict=False)) for row in (after[key], intact[key]))
    assert replaced["status"] == "ok" and replaced["versions"] == was["versions"]
    simulated = {k: v for k, v in json.loads(replaced["metrics"]).items() if k not in RUN_ONLY}
    assert simulated == {k: v for k, v in json.loads(was["metrics"]).items() if k not in RUN_ONLY}
    assert replaced["arrays"] == was["arrays"]  # the same run, the same per-rank arrays
    assert main(["sweep", "show", "sizes.sqlite"]) == 0 and capsys.readouterr().err == ""


# ------------------------------------------------------------------------------------------------
# default store names

NAMES = ["é", "ü", "日本", "e\u0301", "a b", "a_b", "a%20b", "a/b", "a\\b", "A", "x.y", "..", "-", "Ω≈"]


def test_distinct_sweep_names_give_distinct_default_stores():
    paths = [runner.default_store(SweepSpec(name=n)) for n in NAMES]
    assert len(set(paths)) == len(NAMES)
    assert [p.name for p in paths[:3]] == ["é.sqlite", "ü.sqlite", "日本.sqlite"]  # letters of any script kept
    assert all(p.parent == Path(".") and "/" not in str(p) for p in paths)  # always a file here


def test_a_name_too_long_for_a_file_name_is_one_line():
    with pytest.raises(McsimError, match=r"default store file name would be 307 bytes, .* \(255\); give --store PATH"):
        runner.default_store(SweepSpec(name="x" * 300))
    assert runner.default_store(SweepSpec(name="x" * 248)).name == "x" * 248 + ".sqlite"


def test_two_non_ascii_sweeps_go_to_two_stores(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for i, name in enumerate(["é", "e\u0301"]):  # composed and decomposed: two names
        (tmp_path / f"{i}.toml").write_text(
            f'name = "{name}"\n[base]\ntopology = "fat-tree-k4"\nbytes_per_rank = "4KiB"\n'
        )
        assert main(["sweep", f"{i}.toml", "--no-progress"]) == 0
    assert sorted(p.name for p in tmp_path.glob("*.sqlite")) == sorted(["é.sqlite", "e%CC%81.sqlite"])
    for store, name in (("é.sqlite", "é"), ("e%CC%81.sqlite", "e\u0301")):
        assert main(["sweep", "show", store, "--format", "csv"]) == 0
        assert capsys.readouterr().out.splitlines()[1].startswith(f"{name},")
