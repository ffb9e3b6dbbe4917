# SPDX-License-Identifier: GPL-2.0-only
"""The sweep result store: one SQLite file that keeps every finished run, written as each run ends.

Tables: ``runs`` (one row per run key: its Scenario JSON, status, error, metrics, per-rank arrays,
wall time, peak RSS, versions, host, start/end and when it was stored) and ``members`` (which sweeps
a run belongs to, with its label and axis values). A run key is in the store once, however many
sweeps list it. WAL journal and a long busy timeout: two sweeps may write one store at once. An "ok"
row is never overwritten; a "failed" one is replaced when the run is tried again.

Data only: metrics, params and versions are canonical JSON (a non-finite float as ``{"$float":
"nan"}``, ``"inf"`` or ``"-inf"``); arrays are one ``.npz`` BLOB (numpy's format, no pickle).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import math
import os
import sqlite3
import time
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mcsim.errors import McsimError
from mcsim.plain import canonical_json
from mcsim.sweep.outcome import OK, STATUSES, Outcome

if TYPE_CHECKING:
    import pandas  # type: ignore[import-untyped]

SCHEMA = "mcsim.sweep-store/1"  # meta.schema; a change of the tables gets a new number
SCHEMA_FAMILY, SCHEMA_VERSION = SCHEMA.rsplit("/", 1)
BUSY_TIMEOUT_S = 120  # how long a writer waits for another one's transaction
LOCK_RETRY_S = 0.02  # opening: how often a store that another process is creating is tried again
NONFINITE = "$float"  # {"$float": "nan" | "inf" | "-inf"}: a float that JSON cannot hold
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # every .npz member's timestamp: equal arrays give equal bytes
KEYS_PER_QUERY = 500  # keys in one "IN (...)" (SQLite's variable limit is 32766)

TABLES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    key TEXT PRIMARY KEY,
    label TEXT NOT NULL,
    scenario TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    error TEXT,
    metrics TEXT,
    arrays BLOB,
    wall_s REAL NOT NULL,
    peak_rss_b INTEGER,
    versions TEXT NOT NULL,
    host TEXT NOT NULL,
    started TEXT NOT NULL,
    ended TEXT NOT NULL,
    stored TEXT NOT NULL
);
CREATE TABLE members (
    sweep TEXT NOT NULL,
    key TEXT NOT NULL,
    label TEXT NOT NULL,
    params TEXT NOT NULL,
    PRIMARY KEY (sweep, key)
);
"""
RUN_COLUMNS = (
    *("key", "label", "scenario", "status", "error", "metrics", "arrays", "wall_s", "peak_rss_b"),
    *("versions", "host", "started", "ended", "stored"),
)
# the one write of a run: a new key is inserted, a "failed" row replaced, an "ok" row left as it is
PUT = (
    f"INSERT INTO runs ({', '.join(RUN_COLUMNS)}) VALUES ({', '.join('?' * len(RUN_COLUMNS))}) "
    f"ON CONFLICT (key) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in RUN_COLUMNS[1:])} "
    f"WHERE runs.status <> '{OK}'"
)
ADD_MEMBER = (
    "INSERT INTO members (sweep, key, label, params) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (sweep, key) DO UPDATE SET label = excluded.label, params = excluded.params"
)
READ = (
    "SELECT m.sweep, m.key, m.label, m.params, r.status, r.error, r.metrics, r.arrays, r.wall_s, "
    "r.peak_rss_b, r.host, r.started, r.ended, r.versions FROM members m JOIN runs r ON r.key = m.key"
)


def _plain(value: Any) -> Any:
    """JSON types only: numpy scalars as Python ones, a non-finite float as its tag."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else {NONFINITE: repr(float(value))}
    return value


def to_json(value: Any, where: str) -> str:
    """Canonical JSON (sorted keys, no spaces) of metrics, params or versions; NaN and inf survive."""
    return canonical_json(_plain(value), where)


def _tagged(d: dict[str, Any]) -> Any:
    return float(d[NONFINITE]) if len(d) == 1 and isinstance(d.get(NONFINITE), str) else d


def from_json(text: str | None) -> Any:
    """The value of :func:`to_json` text (None stays None)."""
    return None if text is None else json.loads(text, object_hook=_tagged)


def arrays_to_npz(arrays: Mapping[str, Any], where: str) -> bytes:
    """The arrays as one .npz (numpy's format, no pickle), members sorted, fixed timestamps."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(arrays):
            info = zipfile.ZipInfo(f"{name}.npy", date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            with zf.open(info, "w", force_zip64=True) as member:
                try:
                    np.lib.format.write_array(member, np.asarray(arrays[name]), allow_pickle=False)
                except ValueError as exc:  # object arrays would need pickle
                    raise McsimError(f"{where}: array {name!r} has no data form ({exc})") from None
    return buf.getvalue()


def arrays_from_npz(blob: bytes | None) -> dict[str, np.ndarray]:
    """The arrays of :func:`arrays_to_npz` (None: no arrays, an empty dict)."""
    if blob is None:
        return {}
    with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
        return {name: npz[name] for name in npz.files}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Store:
    """A sweep result store at ``path`` (created if missing, unless ``create=False``); see the module doc.

    A file that is not SQLite, SQLite without the store's schema tag, a store of a newer schema, or
    a damaged file: one McsimError line naming the path (also for a damage found later, by a read).
    """

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise McsimError(f"{self._where}: no such file")
        if self.path.is_dir():
            raise McsimError(f"{self._where}: is a folder; give a file path, e.g. {self.path / 'sweeps.sqlite'}")
        try:
            self._db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as exc:
            raise McsimError(f"{self._where}: cannot open it ({exc})") from None
        try:
            self._open(create)
        except McsimError:
            self._db.close()
            raise

    @property
    def _where(self) -> str:
        return f"sweep store {str(self.path)!r}"

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """SQLite's errors (not a database, malformed, locked for too long) as one McsimError line."""
        try:
            yield
        except sqlite3.Error as exc:
            raise McsimError(f"{self._where}: {exc} (not an intact sweep store)") from None

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (the write lock from the start): committed, or rolled back on error."""
        with self._errors():
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _tables(self) -> set[str]:
        return {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def _open(self, create: bool) -> None:
        """A new file gets the tables (WAL journal); any other must carry our tag, and is not changed if not.

        Two processes opening a new store at once race to create it: while one switches the journal
        mode, SQLite answers the other "database is locked" at once, without waiting (the busy
        timeout does not cover a journal mode change). A lock is therefore retried every LOCK_RETRY_S
        until BUSY_TIMEOUT_S; any other error is one McsimError line at once.
        """
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                tables, tag = self._read_or_create(create)
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise McsimError(f"{self._where}: {exc} (not an intact sweep store)") from None
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                time.sleep(LOCK_RETRY_S)
            except sqlite3.Error as exc:
                raise McsimError(f"{self._where}: {exc} (not an intact sweep store)") from None
        family, _, version = str(tag).rpartition("/")
        if family != SCHEMA_FAMILY or not version.isdigit():
            what = (
                "an empty SQLite file" if not tables else f"SQLite without the {SCHEMA!r} tag, tables {sorted(tables)}"
            )
            raise McsimError(f"{self._where}: not a sweep store ({what}); give a new path or a store mcsim made")
        if int(version) > int(SCHEMA_VERSION):
            raise McsimError(f"{self._where}: schema {tag!r} is newer than this mcsim's {SCHEMA!r}; upgrade mcsim")

    def _read_or_create(self, create: bool) -> tuple[set[str], str | None]:
        """The tables and the schema tag, after making the tables of a new store (``create``)."""
        self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_S * 1000}")
        tables = self._tables()  # the first read: a file that is not SQLite fails here
        if not tables and create:
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("BEGIN IMMEDIATE")
            try:
                if not self._tables():  # another writer may have made them since
                    for statement in TABLES.split(";"):
                        if statement.strip():
                            self._db.execute(statement)
                    self._db.execute("INSERT INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA,))
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            tables = self._tables()
        tag = None
        if "meta" in tables:
            with contextlib.suppress(sqlite3.OperationalError):  # a foreign table named meta
                row = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                tag = row[0] if row else None
        return tables, tag

    def add_members(self, sweep: str, runs: Sequence[tuple[str, str, dict[str, Any]]]) -> None:
        """Record that the runs (key, label, params) belong to ``sweep`` (one transaction)."""
        rows = [(sweep, key, label, to_json(params, f"sweep {sweep!r} {label}")) for key, label, params in runs]
        with self._transaction() as db:
            db.executemany(ADD_MEMBER, rows)

    def status(self, keys: Iterable[str]) -> dict[str, str]:
        """key -> "ok" | "failed" for the keys stored (a key not stored is absent)."""
        keys = list(keys)
        out: dict[str, str] = {}
        with self._errors():
            for i in range(0, len(keys), KEYS_PER_QUERY):
                chunk = keys[i : i + KEYS_PER_QUERY]
                query = f"SELECT key, status FROM runs WHERE key IN ({', '.join('?' * len(chunk))})"
                out.update(self._db.execute(query, chunk).fetchall())
        return out

    def put(self, outcome: Outcome, scenario_json: str, versions: dict[str, str]) -> None:
        """Store a finished run in one transaction: never over an "ok" row; over a "failed" one."""
        where = f"{self._where}: run {outcome.label!r}"
        if outcome.status not in STATUSES:
            raise McsimError(f"{where}: status={outcome.status!r} must be one of {', '.join(STATUSES)}")
        metrics = None if outcome.metrics is None else to_json(outcome.metrics, f"{where} metrics")
        arrays = None if outcome.arrays is None else arrays_to_npz(outcome.arrays, where)
        row = (
            *(outcome.key, outcome.label, scenario_json, outcome.status, outcome.error, metrics, arrays),
            *(float(outcome.wall_s), outcome.peak_rss_b, to_json(versions, f"{where} versions"), outcome.host),
            *(outcome.started, outcome.ended, _now()),
        )
        with self._transaction() as db:
            db.execute(PUT, row)

    def rows(self, sweep: str | None = None, *, arrays: bool = True) -> list[dict[str, Any]]:
        """One dict per (sweep, key) membership with a stored run, in the order the members were added:
        sweep, key, label, params, status, error, metrics, arrays, wall_s, peak_rss_b, host, started,
        ended, versions; JSON decoded, arrays as a dict name -> ndarray (``arrays=False``: not read)."""
        query, args = (READ + " WHERE m.sweep = ?", (sweep,)) if sweep is not None else (READ, ())
        with self._errors():
            cursor = self._db.execute(query + " ORDER BY m.rowid", args)
            names = [d[0] for d in cursor.description]
            rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
        for row in rows:
            for name in ("params", "metrics", "versions"):
                row[name] = from_json(row[name])
            try:
                row["arrays"] = arrays_from_npz(row["arrays"]) if arrays else None
            except (ValueError, OSError, zipfile.BadZipFile) as exc:
                raise McsimError(f"{self._where}: the arrays of run {row['label']!r} are damaged ({exc})") from None
        return rows

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


FIRST = ("sweep", "key", "label", "status", "error")
LAST = ("wall_s", "peak_rss_b", "host", "started", "ended", "versions", "arrays")


def _columns(rows: list[dict[str, Any]], fixed: Sequence[str]) -> tuple[list[str], list[str]]:
    """The param and metric columns, in order of first appearance. A metric named like a param or a
    fixed column (wall_s and peak_rss_b are in every Outcome's metrics too) is not repeated."""
    params = list(dict.fromkeys(name for row in rows for name in row["params"]))
    taken = {*fixed, *params}
    metrics = list(dict.fromkeys(name for row in rows for name in row["metrics"] or {} if name not in taken))
    return params, metrics


def load(path: str | os.PathLike[str], sweep: str | None = None) -> pandas.DataFrame:
    """The store as a DataFrame: one row per (sweep, key) membership with a stored run.

    Columns: sweep, key, label, status, error, each axis (param) of the sweeps, each metric, wall_s,
    peak_rss_b, host, started, ended, versions (a dict) and arrays (a dict name -> numpy array).
    """
    try:
        pd = importlib.import_module("pandas")
    except ImportError:
        raise McsimError("mcsim.sweep.load needs pandas: pip install 'mcsim[pandas]'") from None
    with Store(path, create=False) as store:
        rows = store.rows(sweep)
    params, metrics = _columns(rows, FIRST + LAST)
    table = [
        {
            **{c: row[c] for c in FIRST},
            **{p: row["params"].get(p) for p in params},
            **{m: (row["metrics"] or {}).get(m) for m in metrics},
            **{c: row[c] for c in LAST},
        }
        for row in rows
    ]
    return pd.DataFrame(table, columns=[*FIRST, *params, *metrics, *LAST])


def show_rows(path: str | os.PathLike[str], sweep: str | None = None) -> list[dict[str, Any]]:
    """Flat rows for ``mcsim sweep show`` (no pandas): sweep, label, status, every metric, wall_s and
    error (a failed run's first line, else None); every row has the same columns (None if missing)."""
    with Store(path, create=False) as store:
        rows = store.rows(sweep, arrays=False)
    fixed = ("sweep", "label", "status", "wall_s", "error")
    _, metrics = _columns([{**r, "params": {}} for r in rows], fixed)
    return [
        {
            **{c: row[c] for c in fixed[:3]},
            **{m: (row["metrics"] or {}).get(m) for m in metrics},
            "wall_s": row["wall_s"],
            "error": None if row["error"] is None else row["error"].split("\n", 1)[0],
        }
        for row in rows
    ]
