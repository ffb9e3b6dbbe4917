# SPDX-License-Identifier: GPL-2.0-only
"""The sweep result store: put/status/load round trip (metrics with NaN and inf, arrays bit for bit,
one column per axis), "ok" rows never overwritten and "failed" ones replaced, runs in two sweeps,
two writer processes at once, and one McsimError line for a file that is not a store. Outcomes are
made by hand: no simulation."""

import dataclasses
import io
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from mcsim.errors import McsimError
from mcsim.sweep.outcome import CORRUPT, FAILED, INCOMPLETE, OK, Outcome
from mcsim.sweep.store import (
    SCHEMA,
    Store,
    arrays_from_npz,
    arrays_to_npz,
    from_json,
    read_dataframe,
    show_rows,
    to_json,
)

VERSIONS = {"mcsim": "0.1.0", "build": "abc123"}
REPO = Path(__file__).resolve().parents[2]


def metrics(i: int) -> dict:
    return {
        "time_ps": 1_000_000 + i,
        "busbw_GBps": 12.5 + i,
        "complete": True,
        "algorithm": "ring",
        "bound_ps": None,
        "slowdown": math.inf,
        "gap": -math.inf,
        "nan_metric": math.nan,
        "wall_s": 0.5,
        "peak_rss_b": 200 << 20,
    }


def arrays(i: int) -> dict[str, np.ndarray]:
    return {
        "finish_ps": np.array([5, 7, i, -1], dtype=np.int64),
        "rate": np.array([1.5, np.nan, np.inf, -0.0]) * (i + 1),
        "received_b": np.arange(4, dtype=np.uint64) << 40,
        "ok": np.array([True, False, True, True]),
        "grid": np.arange(6, dtype=np.int32).reshape(2, 3),
    }


def ok(key: str, i: int = 0, label: str | None = None) -> Outcome:
    return Outcome(
        key=key,
        label=label or f"run={key}",
        status=OK,
        error=None,
        metrics=metrics(i),
        arrays=arrays(i),
        wall_s=0.5 + i,
        peak_rss_b=200 << 20,
        host="node-1",
        started="2026-01-02T03:04:05.000+00:00",
        ended="2026-01-02T03:04:06.000+00:00",
    )


def failed(key: str, error: str = "worker died: SIGSEGV\nline 2 of stderr\nline 3") -> Outcome:
    return Outcome(
        key=key,
        label=f"run={key}",
        status=FAILED,
        error=error,
        metrics=None,
        arrays=None,
        wall_s=1.25,
        peak_rss_b=None,
        host="node-2",
        started="2026-01-02T03:04:05.000+00:00",
        ended="2026-01-02T03:04:07.000+00:00",
    )


def raw_row(path: Path, key: str) -> tuple:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT * FROM runs WHERE key = ?", (key,)).fetchone()


def one_line(exc_info) -> str:
    text = str(exc_info.value)
    assert "\n" not in text and "Traceback" not in text
    return text


@pytest.fixture
def path(tmp_path) -> Path:
    return tmp_path / "sweeps.sqlite"


# ---------------------------------------------------------------------------------------------
# round trip


def test_put_status_load_round_trip(path):
    with Store(path) as store:
        runs = [("k0", "rate=56Gbps bytes=4KiB", {"rate": "56Gbps", "bytes": "4KiB"})]
        runs += [("k1", "rate=1.6Tbps bytes=4KiB", {"rate": "1.6Tbps", "bytes": "4KiB"})]
        store.add_members("speeds", runs)
        assert store.status(["k0", "k1", "nope"]) == {}
        store.put(ok("k0", 0, runs[0][1]), '{"scenario":0}', VERSIONS)
        store.put(ok("k1", 1, runs[1][1]), '{"scenario":1}', VERSIONS)
        assert store.status(["k0", "k1", "nope"]) == {"k0": OK, "k1": OK}
    df = read_dataframe(path)
    assert list(df.columns[:7]) == ["sweep", "key", "label", "status", "error", "bytes", "rate"]  # params: sorted
    assert list(df.columns[-7:]) == ["wall_s", "peak_rss_b", "host", "started", "ended", "versions", "arrays"]
    assert list(df["rate"]) == ["56Gbps", "1.6Tbps"] and list(df["key"]) == ["k0", "k1"]
    assert list(df["time_ps"]) == [1_000_000, 1_000_001] and list(df["busbw_GBps"]) == [12.5, 13.5]
    assert list(df["wall_s"]) == [0.5, 1.5] and list(df["sweep"]) == ["speeds", "speeds"]
    assert df["slowdown"][0] == math.inf and df["gap"][1] == -math.inf and math.isnan(df["nan_metric"][0])
    assert df["algorithm"].tolist() == ["ring", "ring"] and df["complete"].tolist() == [True, True]
    assert df["versions"][0] == VERSIONS and df["host"][1] == "node-1"
    for i in range(2):
        got, want = df["arrays"][i], arrays(i)
        assert sorted(got) == sorted(want)
        for name in want:
            assert got[name].dtype == want[name].dtype and got[name].shape == want[name].shape
            assert got[name].tobytes() == want[name].tobytes()  # bit for bit (NaN, -0.0 included)


def test_nan_and_inf_survive_as_strict_json():
    value = {"a": math.nan, "b": [math.inf, -math.inf, 1.5], "c": np.float64(np.nan), "d": np.int64(3)}
    text = to_json(value, "test")

    def no_constants(name):
        raise AssertionError(f"{name} is not JSON")

    json.loads(text, parse_constant=no_constants)  # strict JSON: no NaN/Infinity literals
    back = from_json(text)
    assert math.isnan(back["a"]) and math.isnan(back["c"]) and back["b"] == [math.inf, -math.inf, 1.5]
    assert back["d"] == 3 and type(back["d"]) is int
    assert to_json({"z": 1, "a": 2}, "t") == '{"a":2,"z":1}'  # canonical: sorted, no spaces


def test_npz_blob_is_numpy_data_and_the_same_bytes_every_time():
    blob = arrays_to_npz(arrays(3), "test")
    assert blob == arrays_to_npz(arrays(3), "test")  # no timestamps in the zip
    with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
        assert sorted(npz.files) == sorted(arrays(3))
    assert arrays_from_npz(None) == {}
    with pytest.raises(McsimError, match=r"test: array 'bad' has no data form") as info:
        arrays_to_npz({"bad": np.array([object()], dtype=object)}, "test")
    one_line(info)


def test_failed_then_ok_replaces_the_failed_row(path):
    with Store(path) as store:
        store.add_members("s", [("k", "run=k", {})])
        store.put(failed("k"), "{}", VERSIONS)
        assert store.status(["k"]) == {"k": FAILED}
        store.put(failed("k", "killed: time limit"), "{}", VERSIONS)  # a failed row is replaced too
        assert raw_row(path, "k")[4] == "killed: time limit"
        store.put(ok("k"), "{}", VERSIONS)
        assert store.status(["k"]) == {"k": OK}
    (row,) = show_rows(path)
    assert row["status"] == OK and row["error"] is None and row["time_ps"] == 1_000_000


def test_an_ok_row_is_never_overwritten(path):
    with Store(path) as store:
        store.put(ok("k", 0), '{"first":1}', VERSIONS)
        before = raw_row(path, "k")
        store.put(ok("k", 5), '{"second":1}', {"mcsim": "9"})  # a second run of the same key
        store.put(failed("k"), "{}", VERSIONS)
        assert store.status(["k"]) == {"k": OK}
    assert raw_row(path, "k") == before  # every column, the BLOB and the stored time included
    assert before[2] == '{"first":1}'


def test_a_run_in_two_sweeps(path):
    with Store(path) as store:
        store.add_members("a", [("k1", "x=1", {"x": 1}), ("k2", "x=2", {"x": 2})])
        store.add_members("b", [("k2", "y=2", {"y": 2}), ("k3", "y=3", {"y": 3})])
        for key in ("k1", "k2"):
            store.put(ok(key), "{}", VERSIONS)
        # k3 is a member with no stored run: not a row
    df = read_dataframe(path)
    assert list(zip(df["sweep"], df["key"], strict=True)) == [("a", "k1"), ("a", "k2"), ("b", "k2")]
    assert df["x"].tolist()[:2] == [1, 2] and df["y"].tolist()[2] == 2
    assert read_dataframe(path, "b")["label"].tolist() == ["y=2"]
    assert [r["label"] for r in show_rows(path, "a")] == ["x=1", "x=2"]
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone() == (2,)  # k2 stored once


def test_show_rows_are_flat_with_the_first_line_of_an_error(path):
    with Store(path) as store:
        store.add_members("s", [("a", "n=1", {"n": 1}), ("b", "n=2", {"n": 2})])
        store.put(ok("a"), "{}", VERSIONS)
        store.put(failed("b"), "{}", VERSIONS)
    rows = show_rows(path)
    assert [list(r) for r in rows] == [list(rows[0])] * 2  # the same columns in every row
    assert list(rows[0])[:3] == ["sweep", "label", "status"] and list(rows[0])[-2:] == ["wall_s", "error"]
    assert rows[1]["error"] == "worker died: SIGSEGV" and rows[1]["time_ps"] is None and rows[1]["wall_s"] == 1.25
    assert rows[0]["busbw_GBps"] == 12.5 and rows[0]["error"] is None


# ---------------------------------------------------------------------------------------------
# files that are not a store: one line each, naming the path


def test_a_foreign_sqlite_file_is_one_line_and_left_unchanged(path):
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE users (name TEXT)")
    before = path.read_bytes()
    for call in (lambda: Store(path), lambda: read_dataframe(path), lambda: show_rows(path)):
        with pytest.raises(McsimError, match=rf"sweep store '{path}': not a sweep store .*users") as info:
            call()
        one_line(info)
    assert path.read_bytes() == before


def test_a_foreign_meta_table_is_not_our_tag(path):
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE meta (k TEXT)")
    with pytest.raises(McsimError, match="not a sweep store") as info:
        Store(path)
    one_line(info)


def test_a_text_file_is_one_line(path):
    path.write_text("rate,time\n56Gbps,1.0\n" * 100)
    with pytest.raises(McsimError, match=rf"sweep store '{path}': file is not a database") as info:
        Store(path)
    one_line(info)


def test_a_truncated_store_is_one_line(path):
    with Store(path) as store:
        store.add_members("s", [(f"k{i}", f"i={i}", {"i": i}) for i in range(60)])
        for i in range(60):
            store.put(ok(f"k{i}", i), "{}" + " " * 2000, VERSIONS)
    assert not Path(f"{path}-wal").exists()  # the last close checkpointed everything into the file
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(McsimError, match=rf"sweep store '{path}': database disk image is malformed") as info:
        read_dataframe(path)
    one_line(info)


def test_a_newer_store_is_one_line(path):
    Store(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = 'mcsim.sweep-store/2' WHERE key = 'schema'")
    with pytest.raises(McsimError, match=r"schema 'mcsim.sweep-store/2' is newer than .*upgrade mcsim") as info:
        Store(path)
    one_line(info)


def test_a_new_store_is_wal_and_tagged(path):
    Store(path).close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (SCHEMA,)


def test_reading_a_missing_store_is_one_line(tmp_path):
    with pytest.raises(McsimError, match=r"sweep store '.*nothing.sqlite': no such file$"):
        show_rows(tmp_path / "nothing.sqlite")
    assert not (tmp_path / "nothing.sqlite").exists()


def test_a_bad_status_is_one_line(path):
    bad = dataclasses.replace(ok("k"), status="done")
    with Store(path) as store, pytest.raises(McsimError, match=r"status='done' must be one of ok, failed"):
        store.put(bad, "{}", VERSIONS)


def test_load_without_pandas_is_one_line(path, monkeypatch):
    Store(path).close()
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(McsimError, match=r"^mcsim.sweep.read_dataframe needs pandas: pip install 'mcsim\[pandas\]'$"):
        read_dataframe(path)
    assert show_rows(path) == []  # show needs no pandas


def test_a_store_in_a_missing_folder_is_one_line(tmp_path):
    with pytest.raises(McsimError, match=r"sweep store '.*no/such/dir/s.sqlite': cannot open it") as info:
        Store(tmp_path / "no" / "such" / "dir" / "s.sqlite")
    one_line(info)


# ---------------------------------------------------------------------------------------------
# two writers at once

WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from mcsim.sweep.outcome import Outcome
    from mcsim.sweep.store import Store
    import numpy as np
    path, who, n, shared = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    print("ready", flush=True)
    sys.stdin.readline()  # "go": both processes start together
    store = Store(path)  # both may create the file at once
    keys = [f"{who}-{i}" for i in range(n)] + [f"shared-{i}" for i in range(shared)]
    store.add_members(who, [(k, k, {"i": j}) for j, k in enumerate(keys)])
    Path(f"{path}.{who}.open").touch()  # then wait for the other writer: the puts overlap
    waited = time.time()
    while len(list(Path(path).parent.glob("*.open"))) < 2:
        if time.time() - waited > 60:
            sys.exit("the other writer never opened the store")
        time.sleep(0.001)
    first = time.time()
    for k in keys:
        o = Outcome(k, k, "ok", None, {"who": who, "x": float("nan")}, {"a": np.arange(64) * len(k)},
                    0.1, 1, who, "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:01+00:00")
        store.put(o, "{}", {"mcsim": "test"})
        store.status([k])
    print(first, time.time(), flush=True)
    store.close()
    """
)


def test_two_writers_at_once_lose_nothing(path, tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    n, shared = 100, 20
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(path), who, str(n), str(shared)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for who in ("w1", "w2")
    ]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    spans = []
    for p in procs:
        out, _ = p.communicate(timeout=300)
        assert p.returncode == 0
        spans.append([float(x) for x in out.split()])
    assert max(s[0] for s in spans) < min(s[1] for s in spans)  # the writers really overlapped
    keys = [f"{w}-{i}" for w in ("w1", "w2") for i in range(n)] + [f"shared-{i}" for i in range(shared)]
    with Store(path) as store:
        assert store.status(keys) == dict.fromkeys(keys, OK)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone() == (2 * n + shared,)
        assert db.execute("SELECT COUNT(*) FROM members").fetchone() == (2 * (n + shared),)
    rows = show_rows(path)
    assert len(rows) == 2 * (n + shared) and all(math.isnan(r["x"]) for r in rows)
    owners = {r["label"]: r["who"] for r in rows if r["label"].startswith("shared-")}
    assert set(owners.values()) <= {"w1", "w2"}  # each shared run is one writer's, whole


OPENER = textwrap.dedent(
    """
    import sys, time
    from mcsim.sweep.store import Store
    path, start = sys.argv[1], float(sys.argv[2])
    time.sleep(max(0.0, start - time.time()))  # every opener starts at the same instant
    Store(path).close()
    """
)


def test_processes_creating_one_new_store_at_once_all_open_it(tmp_path):
    """4 processes open the same new store at the same instant, 5 times over: every one opens it and
    the store is whole. (CI once saw "database is locked" from Store() in the two-writers test below:
    SQLite does not always wait on a lock while a new store's journal mode changes; Store retries.)"""
    script = tmp_path / "opener.py"
    script.write_text(OPENER)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for round_ in range(5):
        path = tmp_path / f"new-{round_}.sqlite"
        start = time.time() + 1.0
        procs = [
            subprocess.Popen(
                [sys.executable, str(script), str(path), str(start)], stderr=subprocess.PIPE, text=True, env=env
            )
            for _ in range(4)
        ]
        errors = [p.communicate(timeout=120)[1] for p in procs]
        assert [p.returncode for p in procs] == [0] * 4, errors
        with Store(path) as store:
            assert store.status(["x"]) == {}
        with sqlite3.connect(path) as db:
            assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchall() == [(SCHEMA,)]


# ---------------------------------------------------------------------------------------------
# a corrupt row: reported with its row (store, label, key, column), run again; never a traceback,
# never unpickled


class Trap:
    """Unpickling this writes a file: the proof that a store's arrays were unpickled."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (Path(self.marker), "unpickled"))


def _npz(**arrays_: object) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays_)  # allow_pickle: an object array becomes a pickle inside the .npy
    return buf.getvalue()


def _npy_claiming(shape: tuple[int, ...]) -> bytes:
    """An .npz whose one member's header claims ``shape`` over 4 int64 values of data."""
    member = io.BytesIO()
    np.lib.format.write_array_header_1_0(member, {"descr": "<i8", "fortran_order": False, "shape": shape})
    member.write(np.arange(4, dtype=np.int64).tobytes())
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("finish_ps.npy", member.getvalue())
    return buf.getvalue()


def _npy() -> bytes:
    """One .npy array, not an .npz of them."""
    buf = io.BytesIO()
    np.save(buf, np.arange(3))
    return buf.getvalue()


def _bad_crc() -> bytes:
    blob = bytearray(arrays_to_npz(arrays(0), "test"))
    at = blob.index(b"PK\x01\x02") - 40  # inside the last member's compressed data
    blob[at] ^= 0xFF
    return bytes(blob)


CORRUPT_CASES = [
    ("runs", "metrics", "{bad", r"column metrics is corrupt \(not JSON: Expecting property name"),
    ("runs", "metrics", "[1, 2]", r"column metrics is corrupt \(JSON list, not an object\)"),
    ("runs", "metrics", None, r"column metrics is corrupt \(missing\)"),  # an ok run has metrics
    ("runs", "metrics", '{"complete": "yes"}', r"column metrics is corrupt \(complete='yes' is not true or false\)"),
    ("runs", "metrics", "[" * 100_000, r"column metrics is corrupt \(not JSON: maximum recursion depth"),
    ("runs", "metrics", '{"x": {"$float": "many"}}', r"column metrics is corrupt \(not JSON: could not convert"),
    ("runs", "metrics", b"\xff\xfe", r"column metrics is corrupt \(a bytes, not JSON text\)"),
    ("runs", "arrays", b"PK\x03\x04 not a zip", r"column arrays is corrupt \(not an intact \.npz: File is not a zip"),
    ("runs", "arrays", "text", r"column arrays is corrupt \(not an intact \.npz: a str, not a BLOB\)"),
    ("runs", "arrays", None, None),  # no arrays: intact (a run may have none)
    ("runs", "arrays", "npy", r"column arrays is corrupt \(not an intact \.npz: File is not a zip"),
    ("runs", "arrays", "crc", r"column arrays is corrupt \(not an intact \.npz: (Bad CRC-32|Error -3)"),
    ("runs", "arrays", "shape", r"array 'finish_ps': 32 bytes do not make shape \(1000000000000,\) of int64"),
    ("runs", "arrays", "pickle", r"array 'x': dtype object is not numeric \(no pickle\)"),
    ("runs", "versions", "nope", r"column versions is corrupt \(not JSON: Expecting value"),
    ("runs", "wall_s", "abc", r"column wall_s is corrupt \('abc' is not a number\)"),
    ("members", "params", "{", r"column params is corrupt \(not JSON: "),
]


def _corrupt(path: Path, table: str, column: str, value: object, tmp_path: Path) -> None:
    """Store two ok runs (a, b), then write ``value`` into ``column`` of run a's row by hand."""
    with Store(path) as store:
        store.add_members("s", [("a", "n=1", {"n": 1}), ("b", "n=2", {"n": 2})])
        store.put(ok("a"), "{}", VERSIONS)
        store.put(ok("b", 1), "{}", VERSIONS)
    blobs = {
        "npy": _npy,
        "crc": _bad_crc,
        "shape": lambda: _npy_claiming((10**12,)),
        "pickle": lambda: _npz(x=np.array([Trap(str(tmp_path / "trap"))], dtype=object)),
    }
    value = blobs[value]() if isinstance(value, str) and value in blobs else value
    with sqlite3.connect(path) as db:
        db.execute(f"UPDATE {table} SET {column} = ? WHERE key = 'a'", (value,))


@pytest.mark.parametrize(("table", "column", "value", "match"), CORRUPT_CASES)
def test_a_corrupt_column_is_reported_with_its_row(path, tmp_path, table, column, value, match):
    _corrupt(path, table, column, value, tmp_path)
    rows = show_rows(path)  # never raises on a row's data
    assert [r["label"] for r in rows] == ["n=1", "n=2"] and rows[1]["status"] == OK and rows[1]["error"] is None
    with Store(path) as store:
        status = store.status(["a", "b"])
        full = store.rows()
    if match is None:
        assert rows[0]["status"] == OK and status == {"a": OK, "b": OK}
        return
    assert rows[0]["status"] == CORRUPT
    where = rf"^sweep store '{re.escape(str(path))}': run 'n=1' \(key a\): "
    assert re.search(where + ".*" + match, rows[0]["error"]), rows[0]["error"]
    assert "\n" not in rows[0]["error"]
    assert rows[0]["time_ps"] == (None if column == "metrics" else 1_000_000)  # what can be read is shown
    # a run's own columns make it CORRUPT (a sweep runs it again); its membership's params are rewritten
    # by the next sweep that lists it, so the run itself stays done
    assert status == {"a": OK if table == "members" else CORRUPT, "b": OK}
    assert full[0]["status"] == CORRUPT and full[0][column] in (None, {}) and full[1]["status"] == OK
    assert not (tmp_path / "trap").exists()  # nothing was unpickled


def test_the_trap_would_spring_if_unpickled(tmp_path):
    """The pickle case above means something: numpy with allow_pickle=True runs the trap."""
    blob = _npz(x=np.array([Trap(str(tmp_path / "trap"))], dtype=object))
    with np.load(io.BytesIO(blob), allow_pickle=True) as npz:
        npz["x"]
    assert (tmp_path / "trap").read_text() == "unpickled"


def test_a_row_with_several_corrupt_columns_names_each(path, tmp_path):
    _corrupt(path, "runs", "metrics", "{", tmp_path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE runs SET versions = '3' WHERE key = 'a'")
    (why,) = (r["error"] for r in show_rows(path) if r["status"] == CORRUPT)
    assert re.search(r"columns metrics, versions are corrupt \(metrics: not JSON: .*; versions: JSON int, not", why)


def test_load_gives_a_corrupt_row_as_such(path, tmp_path):
    pytest.importorskip("pandas")
    _corrupt(path, "runs", "arrays", b"junk", tmp_path)
    df = read_dataframe(path)
    assert df["status"].tolist() == [CORRUPT, OK] and df["arrays"][0] is None
    assert df["error"][0].startswith("column arrays is corrupt (not an intact .npz:")


def test_a_new_run_replaces_a_corrupt_row_only(path, tmp_path):
    _corrupt(path, "runs", "metrics", "{", tmp_path)
    with Store(path) as store:
        store.put(ok("a", 5), "{}", VERSIONS)  # as before: an "ok" row is never overwritten ...
        assert store.status(["a"]) == {"a": CORRUPT}
        store.put(ok("a", 5), "{}", VERSIONS, over_corrupt=True)  # ... unless it is corrupt
        assert store.status(["a"]) == {"a": OK}
        (row,) = (r for r in store.rows() if r["key"] == "a")
        assert row["metrics"]["time_ps"] == 1_000_005 and row["arrays"]["finish_ps"][2] == 5
        before = raw_row(path, "b")
        store.put(ok("b", 9), "{}", VERSIONS, over_corrupt=True)  # an intact row stays as it is
    assert raw_row(path, "b") == before


def test_an_incomplete_run_is_ok_in_the_store_and_incomplete_in_its_state(path):
    with Store(path) as store:
        store.add_members("s", [("a", "n=1", {"n": 1}), ("b", "n=2", {"n": 2})])
        store.put(dataclasses.replace(ok("a"), metrics={**metrics(0), "complete": False}), "{}", VERSIONS)
        store.put(dataclasses.replace(ok("b"), metrics={**metrics(0), "concurrent_complete": False}), "{}", VERSIONS)
        assert store.status(["a", "b"]) == {"a": INCOMPLETE, "b": INCOMPLETE}
    assert [r["status"] for r in show_rows(path)] == [OK, OK]  # stored ok: it ended, with its counters


def test_an_empty_file_is_one_line(path):
    path.write_bytes(b"")
    with pytest.raises(McsimError, match=rf"sweep store '{path}': not a sweep store \(an empty SQLite file\)") as info:
        show_rows(path)
    one_line(info)
