# SPDX-License-Identifier: GPL-2.0-only
"""Rows out: the one table formatter (fixed columns, as OSU and nccl-tests print) and the one
CSV/JSON writer for result rows (``Result.summary()`` is a row).

A row is a mapping of column name -> number, string, bool or None, units in the names. Data only:
CSV, JSON (an array of rows) or JSON Lines (one row per line); never pickle. NaN (an incomplete
run's time) is written as ``nan`` (CSV) and ``null`` (JSON: RFC 8259 has no NaN). Files are
written atomically: a run that dies leaves the old file or none, never half a file; a command checks
that it can write its output (:func:`check_writable`) before it does any work.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcsim.errors import McsimError, pick

Row = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a table: the row key it shows, how, and how wide (at least the name)."""

    name: str
    spec: str = ""  # format spec of a value without its width: ".2f", ".1%", "" (str())
    width: int = 0  # characters; 0: the name's length
    left: bool = False  # left-aligned (labels); numbers are right-aligned

    def cell(self, value: object) -> str:
        text = format(value, self.spec) if self.spec and value is not None else str(value)
        w = max(self.width, len(self.name))
        return f"{text:<{w}}" if self.left else f"{text:>{w}}"


class Table:
    """Fixed-width columns separated by one space: ``header()``, then ``row(values)`` per row, or
    ``note(first, text)`` for a row that has text instead of numbers (an INCOMPLETE run). It
    formats lines; the caller prints them (a script row by row, with flush, as runs finish)."""

    def __init__(self, columns: Sequence[Column | str]) -> None:
        self.columns = tuple(Column(c) if isinstance(c, str) else c for c in columns)

    def header(self) -> str:
        return " ".join(Column(c.name, width=c.width, left=c.left).cell(c.name) for c in self.columns)

    def row(self, values: Row) -> str:
        missing = [c.name for c in self.columns if c.name not in values]
        if missing:
            raise McsimError(f"Table: row has no {', '.join(missing)}; it has {', '.join(values)}")
        return " ".join(c.cell(values[c.name]) for c in self.columns)

    def note(self, first: object, text: str) -> str:
        """The first column's value, then ``text`` in place of the other columns."""
        return f"{self.columns[0].cell(first)} {text}"


def _rows(rows: Iterable[Row]) -> list[dict[str, Any]]:
    out = [dict(r) for r in rows]
    for i, r in enumerate(out[1:], 1):
        if list(r) != list(out[0]):
            raise McsimError(f"rows: row {i} has columns {', '.join(r)}; row 0 has {', '.join(out[0])}")
    return out


def csv_text(rows: Iterable[Row]) -> str:
    """A header line (the first row's keys), then one line per row; None is empty."""
    table = _rows(rows)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    if table:
        writer.writerow(table[0])
        writer.writerows(r.values() for r in table)
    return buf.getvalue()


def _json(row: Row) -> str:
    """One row as RFC 8259 JSON: a NaN or infinite number (an incomplete run's time) is null."""
    finite = {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in row.items()}
    return json.dumps(finite, allow_nan=False)


def jsonl_text(rows: Iterable[Row]) -> str:
    """JSON Lines: one object per row."""
    return "".join(_json(r) + "\n" for r in _rows(rows))


def json_text(rows: Iterable[Row]) -> str:
    """One JSON array of the rows, one row per line."""
    table = _rows(rows)
    return "[" + ",\n ".join(_json(r) for r in table) + "]\n"


FORMATS = {"csv": csv_text, "json": json_text, "jsonl": jsonl_text}
SUFFIXES = {f".{name}": name for name in FORMATS}


def rows_text(rows: Iterable[Row], fmt: str) -> str:
    """The rows as ``fmt`` text: csv, json (an array) or jsonl (one object per line)."""
    return pick("output format", fmt, FORMATS)(rows)


def _mode(target: Path) -> int:
    """The mode a file written at ``target`` gets: the old file's, else 0666 less the umask."""
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def probe_write(folder: Path, prefix: str) -> None:
    """Make a temporary file in ``folder`` and remove it: OSError if no file can be made there (a
    read-only folder, /proc, a path through a file), which os.access does not tell a root process."""
    fd, probe = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=".tmp")
    os.close(fd)
    os.unlink(probe)


def check_writable(path: str | os.PathLike[str], what: str) -> Path:
    """Return ``path`` as a Path if a file can be written there atomically (a temporary file can be
    made in its folder, as :func:`write_atomic` does; it is not a folder); else raise McsimError
    naming ``what`` (the option, e.g. ``--out``). Commands call it before any work, so that no run
    is lost to an output that cannot be written."""
    target = Path(path)
    where = f"{what}={str(path)!r}"
    try:
        if target.is_dir():
            raise McsimError(f"{where} is a folder; give a file name")
        folder = target.parent
        if not folder.is_dir():
            raise McsimError(f"{where}: folder {str(folder)!r} does not exist")
        probe_write(folder, f".{target.name}.")
    except OSError as exc:  # a read-only folder, a name too long, a path through a file, /proc ...
        raise McsimError(f"{where} cannot be written ({exc.strerror or exc})") from None
    return target


class StdoutError(McsimError):
    """stdout cannot take a command's output: full, or an encoding without one of its characters
    (``refused``: the device refused bytes, which stay buffered and would fail again at exit)."""

    def __init__(self, text: str, *, refused: bool = True) -> None:
        super().__init__(text)
        self.refused = refused


def encoding_error(exc: UnicodeEncodeError) -> StdoutError:
    """The one line for a character stdout's encoding lacks (a non-ASCII job name in the C locale)."""
    char = exc.object[exc.start : exc.start + 1]
    return StdoutError(
        f"stdout's encoding, {exc.encoding}, cannot write {char!a} (U+{ord(char):04X}); "
        "set PYTHONIOENCODING=utf-8 or a UTF-8 locale (e.g. LC_ALL=C.UTF-8)",
        refused=False,
    )


class GuardedStdout:
    """stdout whose failures are one :class:`StdoutError` line instead of a traceback: a write or flush
    that the device refuses (/dev/full: "No space left on device") and a character its encoding lacks.
    A reader that has gone stays a BrokenPipeError (the CLI's exit 141). Anything else goes to the
    stream it guards."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            written = self.stream.write(text)
        except UnicodeEncodeError as exc:
            raise encoding_error(exc) from None
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StdoutError(f"cannot write to stdout ({exc.strerror or exc})") from None
        return len(text) if written is None else int(written)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StdoutError(f"cannot write to stdout ({exc.strerror or exc})") from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def same_path(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """``a`` and ``b`` name one file: the same path once symlinks, ``.`` and ``..`` are resolved
    (``./x.csv`` and ``x.csv``, a symlink and its target), or two hard links of one existing file."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist yet: not one file
        return False


def check_distinct(
    where: str,
    outputs: Sequence[tuple[str, str | os.PathLike[str] | None]],
    hint: str = "give each output a file of its own",
    *,
    inputs: Sequence[tuple[str, str | os.PathLike[str] | None]] = (),
) -> None:
    """Raise McsimError if two of a command's ``outputs`` ((option, path); a path of None: not given)
    name one file, however spelt (:func:`same_path`): the second written would overwrite the first (or
    an output the input it reads: ``hint`` says so); or if an output names one of the files ``inputs``
    that exists (a faults file, a topology or workload file the command reads: a name that is no file,
    e.g. a ready topology's, is none). Commands call it before any work, beside :func:`check_writable`."""
    given = [(option, path) for option, path in outputs if path is not None]
    for source, read in inputs:
        if read is None or not os.path.isfile(read):
            continue
        for option, path in given:
            if same_path(read, path):
                raise McsimError(
                    f"{where}: {option}={str(path)!r} names {source}={str(read)!r}, the file it reads "
                    f"({os.path.realpath(read)}); writing it would overwrite that file: give the output another name"
                )
    for i, (first, a) in enumerate(given):
        for second, b in given[i + 1 :]:
            if same_path(a, b):
                raise McsimError(
                    f"{where}: {first}={str(a)!r} and {second}={str(b)!r} name one file ({os.path.realpath(a)}); {hint}"
                )


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, then rename it over
    ``path`` (atomic on POSIX): readers see the old file or the whole new one."""
    target = Path(path)
    if not target.parent.is_dir():
        raise McsimError(f"output: folder {str(target.parent)!r} of {str(target)!r} does not exist")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _mode(target))  # mkstemp's is 0600: give the file the mode open() would
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_rows(path: str | os.PathLike[str], rows: Iterable[Row]) -> None:
    """Write result rows to ``path``, the format by its suffix (.csv, .json, .jsonl), atomically."""
    suffix = Path(path).suffix
    fmt = pick("output file suffix", suffix, SUFFIXES)
    write_atomic(path, rows_text(rows, fmt))
