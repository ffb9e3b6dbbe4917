# SPDX-License-Identifier: GPL-2.0-only
"""The sweep result store: one SQLite file that keeps every finished run, written as each run ends.

Tables: ``runs`` (one row per run key: its Scenario JSON, status, error, metrics, per-rank arrays,
wall time, peak RSS, versions, host, start/end and when it was stored) and ``members`` (which sweeps
a run belongs to, with its label and axis values). A run key is in the store once, however many
sweeps list it. WAL journal and a long busy timeout: two sweeps may write one store at once. An "ok"
row is never overwritten; a "failed" one is replaced when the run is tried again.

Data only: metrics, params and versions are canonical JSON (a non-finite float as ``{"$float":
"nan"}``, ``"inf"`` or ``"-inf"``); arrays are one ``.npz`` BLOB (numpy's format, no pickle).
A row whose data cannot be read back (JSON that does not parse, a damaged or non-numeric ``.npz``)
reads as CORRUPT with the column and why: never a traceback, never unpickled; a sweep runs it again
and replaces it (``Store.put(..., over_corrupt=True)``).
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
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mcsim.config.codec import canonical_json
from mcsim.errors import McsimError
from mcsim.sweep.outcome import COMPLETE_METRICS, CORRUPT, OK, STATUSES, Outcome, state
from mcsim.sweep.wire import NUMERIC_KINDS

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
# a run again over a CORRUPT row (Store.put checks in its transaction that the row is still corrupt)
PUT_OVER = PUT.rsplit(" WHERE ", 1)[0]
ADD_MEMBER = (
    "INSERT INTO members (sweep, key, label, params) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (sweep, key) DO UPDATE SET label = excluded.label, params = excluded.params"
)
READ = (
    "SELECT m.sweep, m.key, m.label, m.params, r.status, r.error, r.metrics, r.arrays, r.wall_s, "
    "r.peak_rss_b, r.host, r.started, r.ended, r.versions FROM members m JOIN runs r ON r.key = m.key"
)

CHECKED = ("key", "status", "metrics", "arrays", "versions", "wall_s")  # what Store.states reads of a row


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
    """The arrays of :func:`arrays_to_npz` (None: no arrays, an empty dict). Data only: a member that
    is not a numeric ``.npy`` (an object array would need pickle), or whose header does not match
    its bytes, is a ValueError; nothing is ever unpickled."""
    if blob is None:
        return {}
    if not isinstance(blob, bytes):
        raise ValueError(f"a {type(blob).__name__}, not a BLOB")
    out = {}
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        for info in zf.infolist():
            name, suffix = info.filename[:-4], info.filename[-4:]
            if suffix != ".npy" or not name:
                raise ValueError(f"member {info.filename!r} is not an .npy array")
            out[name] = _npy(zf.read(info), name)
    return out


def _npy(raw: bytes, name: str) -> np.ndarray:
    """One ``.npy`` member's array, its header checked against its bytes before any is allocated."""
    fp = io.BytesIO(raw)
    version = np.lib.format.read_magic(fp)
    header = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
    if version not in header:
        raise ValueError(f"array {name!r}: .npy version {version} is not one mcsim writes")
    shape, _, dtype = header[version](fp)
    if dtype.kind not in NUMERIC_KINDS:
        raise ValueError(f"array {name!r}: dtype {dtype} is not numeric (no pickle)")
    if math.prod(shape) * dtype.itemsize != len(raw) - fp.tell():
        raise ValueError(f"array {name!r}: {len(raw) - fp.tell()} bytes do not make shape {shape} of {dtype}")
    fp.seek(0)
    return np.lib.format.read_array(fp, allow_pickle=False)


# what reading a damaged value raises: json (ValueError; RecursionError for deep nesting), zipfile,
# zlib, numpy's .npy reader; each is caught per column and the row reported CORRUPT
DECODE_ERRORS = (ValueError, TypeError, RecursionError, OSError, EOFError, zipfile.BadZipFile, zlib.error)


def _json_object(value: object, *, required: bool) -> dict[str, Any] | None:
    """The JSON object stored in a column (None if NULL and not ``required``); ValueError why not."""
    if value is None:
        if required:
            raise ValueError("missing")
        return None
    if not isinstance(value, str):
        raise ValueError(f"a {type(value).__name__}, not JSON text")
    try:
        data = from_json(value)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"not JSON: {str(exc)[:80]}") from None
    if not isinstance(data, dict):
        raise ValueError(f"JSON {type(data).__name__}, not an object")
    return data


def _metrics(value: object, status: object) -> dict[str, Any] | None:
    """An ok run's metrics: a JSON object whose COMPLETE_METRICS, if any, are true or false."""
    metrics = _json_object(value, required=status == OK)
    for name in COMPLETE_METRICS:
        if metrics is not None and not isinstance(metrics.get(name, True), bool):
            raise ValueError(f"{name}={metrics[name]!r} is not true or false")
    return metrics


def _arrays(value: Any) -> dict[str, np.ndarray]:
    try:
        return arrays_from_npz(value)
    except DECODE_ERRORS as exc:
        raise ValueError(f"not an intact .npz: {str(exc) or type(exc).__name__}") from None


def _number(value: object, _: object) -> object:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{value!r} is not a number")
    return value


def _status(value: object, _: object) -> object:
    if value not in STATUSES:
        raise ValueError(f"{value!r} is not one of {', '.join(STATUSES)}")
    return value


# column -> its reader (value, the row's status) -> decoded value; ValueError (or DECODE_ERRORS) why not
READERS: dict[str, Any] = {
    "status": _status,
    "metrics": _metrics,
    "versions": lambda value, _: _json_object(value, required=True),
    "params": lambda value, _: _json_object(value, required=True),
    "wall_s": _number,
    "arrays": lambda value, _: _arrays(value),
}


def decode_row(row: dict[str, Any]) -> dict[str, str]:
    """Decode ``row``'s stored columns (those of READERS it has) in place; return column -> why for
    each that cannot be read (its value becomes None; the row is CORRUPT). Never raises on data."""
    bad = {}
    for column, reader in READERS.items():
        if column in row:
            try:
                row[column] = reader(row[column], row.get("status"))
            except DECODE_ERRORS as exc:
                bad[column] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                row[column] = None
    return bad


def corrupt_text(bad: Mapping[str, str]) -> str:
    """``column metrics is corrupt (not JSON: ...)``, or for several ``columns a, b are corrupt (a: ...; b: ...)``."""
    if len(bad) == 1:
        ((column, why),) = bad.items()
        return f"column {column} is corrupt ({why})"
    return f"columns {', '.join(bad)} are corrupt ({'; '.join(f'{c}: {why}' for c, why in bad.items())})"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Store:
    """A sweep result store at ``path`` (created if missing, unless ``create=False``); see the module doc.

    A file that is not SQLite, SQLite without the store's schema tag, a store of a newer schema, or
    a damaged file: one McsimError line naming the path (also for a damage found later, by a read).
    """

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise McsimError(f"{self._where}: is a folder; give a file path, e.g. {self.path / 'sweeps.sqlite'}")
        if not create and not self.path.is_file():
            raise McsimError(f"{self._where}: no such file")
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

    def states(self, keys: Iterable[str]) -> dict[str, tuple[str, str | None]]:
        """key -> (state, why) for the keys stored (a key not stored is absent): state OK, INCOMPLETE,
        FAILED, or CORRUPT with why (:func:`corrupt_text`; None for the others). Reads and checks
        every stored column of the runs (metrics, arrays, versions, wall_s)."""
        keys = list(keys)
        out: dict[str, tuple[str, str | None]] = {}
        with self._errors():
            for i in range(0, len(keys), KEYS_PER_QUERY):
                chunk = keys[i : i + KEYS_PER_QUERY]
                query = f"SELECT {', '.join(CHECKED)} FROM runs WHERE key IN ({', '.join('?' * len(chunk))})"
                for values in self._db.execute(query, chunk):
                    row = dict(zip(CHECKED, values, strict=True))
                    bad = decode_row(row)
                    out[row["key"]] = (
                        (CORRUPT, corrupt_text(bad)) if bad else (state(row["status"], row["metrics"]), None)
                    )
        return out

    def sweeps(self) -> list[str]:
        """The names of the sweeps that have runs recorded in the store, in the order they were added."""
        with self._errors():
            return [row[0] for row in self._db.execute("SELECT sweep FROM members GROUP BY sweep ORDER BY MIN(rowid)")]

    def status(self, keys: Iterable[str]) -> dict[str, str]:
        """key -> OK, INCOMPLETE, FAILED or CORRUPT for the keys stored (see :meth:`states`)."""
        return {key: what for key, (what, _) in self.states(keys).items()}

    def corrupt_line(self, key: str, label: str, why: str | None) -> str:
        """The one line of a corrupt row: the store, the run's label and key, and which column."""
        return f"{self._where}: run {label!r} (key {key[:12]}): {why}"

    def put(
        self, outcome: Outcome, scenario_json: str, versions: dict[str, str], *, over_corrupt: bool = False
    ) -> None:
        """Store a finished run in one transaction: never over an "ok" row; over a "failed" one, and
        (``over_corrupt``) over a row that is still CORRUPT when the transaction reads it."""
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
            query = f"SELECT {', '.join(CHECKED)} FROM runs WHERE key = ?"
            old = db.execute(query, (outcome.key,)).fetchone() if over_corrupt else None
            corrupt = old is not None and bool(decode_row(dict(zip(CHECKED, old, strict=True))))
            db.execute(PUT_OVER if corrupt else PUT, row)

    def rows(self, sweep: str | None = None, *, arrays: bool = True) -> list[dict[str, Any]]:
        """One dict per (sweep, key) membership with a stored run, in the order the members were added:
        sweep, key, label, params, status, error, metrics, arrays, wall_s, peak_rss_b, host, started,
        ended, versions; JSON decoded, arrays as a dict name -> ndarray (``arrays=False``: checked, not
        kept). A row whose data cannot be read has status CORRUPT, error :func:`corrupt_text` (for
        :meth:`corrupt_line`) and None in each column that cannot be read (params: {})."""
        query, args = (READ + " WHERE m.sweep = ?", (sweep,)) if sweep is not None else (READ, ())
        with self._errors():
            cursor = self._db.execute(query + " ORDER BY m.rowid", args)
            names = [d[0] for d in cursor.description]
            rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
        for row in rows:
            bad = decode_row(row)
            if bad:
                row.update(status=CORRUPT, error=corrupt_text(bad), params=row["params"] or {})
            if not arrays:
                row["arrays"] = None
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


def read_dataframe(path: str | os.PathLike[str], sweep: str | None = None) -> pandas.DataFrame:
    """The store as a DataFrame: one row per (sweep, key) membership with a stored run.

    Columns: sweep, key, label, status, error, each axis (param) of the sweeps, each metric, wall_s,
    peak_rss_b, host, started, ended, versions (a dict) and arrays (a dict name -> numpy array).
    """
    try:
        pd = importlib.import_module("pandas")
    except ImportError:
        raise McsimError("mcsim.sweep.read_dataframe needs pandas: pip install 'mcsim[pandas]'") from None
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
    """Flat rows for ``mcsim sweep show`` (no pandas): sweep, label, status, each axis of the sweeps,
    every metric, wall_s and error (a failed run's first line, a CORRUPT row's :meth:`Store.corrupt_line`,
    else None); every row has the same columns (None if missing)."""
    with Store(path, create=False) as store:
        rows = store.rows(sweep, arrays=False)
        for row in rows:
            if row["status"] == CORRUPT:
                row["error"] = store.corrupt_line(row["key"], row["label"], row["error"])
    fixed = ("sweep", "label", "status", "wall_s", "error")
    params, metrics = _columns(rows, fixed)
    return [
        {
            **{c: row[c] for c in fixed[:3]},
            **{p: row["params"].get(p) for p in params},
            **{m: (row["metrics"] or {}).get(m) for m in metrics},
            "wall_s": row["wall_s"],
            "error": None if row["error"] is None else row["error"].split("\n", 1)[0],
        }
        for row in rows
    ]
