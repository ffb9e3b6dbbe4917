# SPDX-License-Identifier: GPL-2.0-only
"""TOML text of plain data (the standard library reads TOML but does not write it), and the
reading of a user's input file with one-line errors.

Used where mcsim writes a file a user reads back with ``tomllib``: topology files
(mcsim.topology.files.write_topology_file) and sweep specs (mcsim.sweep.SweepSpec.to_toml). Plain data only:
str, int, float, bool, lists, and dicts with string keys; a dict's None values are left out (TOML
has no null, and every such field of mcsim means "the default").

Reading (:func:`read_bytes`, :func:`loads`, :func:`read_document`): a topology or faults file that is
missing, a folder, unreadable, not UTF-8, not TOML or nested past Python's recursion limit is one
McsimError line naming the file.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any

from mcsim.errors import McsimError

MAX_SHOWN_PATH = 120  # characters of a path an error message shows (a 10,000-character path stays readable)
# The most bytes a file is read whole before the first line (parsed, a file takes several times its size):
# a document (a workload, a faults file, a sweep spec) is kilobytes, and a sweep of 100,000 runs (its limit)
# lists its axes in well under 1 MiB; a fabric (a topology .toml or .graphml, ibnetdiscover output) of 27,648
# hosts (k=48, the largest mcsim has run) is about 12 MB of GraphML: each limit is some 16-20x that
MAX_DOCUMENT_BYTES = 16 * 2**20
MAX_FABRIC_FILE_BYTES = 256 * 2**20

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def key(name: str) -> str:
    """A key as TOML writes it: bare where it may be, else a quoted string ("processor.threads")."""
    if not isinstance(name, str):
        raise McsimError(f"TOML: key {name!r} is not a string")
    return name if _BARE_KEY.fullmatch(name) else _string(name)


def _string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, and TOML also wants DEL escaped."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def value(v: Any) -> str:
    """One TOML value: a string (JSON's escapes are TOML's), a number, a boolean, an array or an inline
    table.

    Raises
    ------
    McsimError
        For None inside an array and any other type (a set, bytes, an object).
    """
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)  # shortest text that reads back to the same float
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items() if x is not None) + "}"
    raise McsimError(f"TOML: no form for {v!r} ({type(v).__name__})")


def _is_tables(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def document(data: dict[str, Any]) -> str:
    """A TOML document of ``data``: its plain keys first, then each dict as a ``[table]`` and each
    non-empty list of dicts as ``[[tables]]``, in ``data``'s order; ``tomllib.loads`` gives ``data``
    back (less None values and empty lists of tables)."""
    lines: list[str] = []
    _section(data, [], lines)
    return "\n".join(lines).lstrip("\n") + "\n"


def _section(data: dict[str, Any], path: list[str], lines: list[str]) -> None:
    for k, v in data.items():
        if v is not None and not isinstance(v, dict) and not _is_tables(v) and v != []:
            lines.append(f"{key(k)} = {value(v)}")
        elif v == []:
            lines.append(f"{key(k)} = []")
    for k, v in data.items():
        name = ".".join(key(p) for p in [*path, k])
        if isinstance(v, dict):
            lines += ["", f"[{name}]"]
            _section(v, [*path, k], lines)
        elif _is_tables(v):
            for table in v:
                lines += ["", f"[[{name}]]"]
                _section(table, [*path, k], lines)


def shown_path(path: str | Path) -> str:
    """``path`` as an error message shows it: quoted, its middle cut if it is very long."""
    text = str(path)
    if len(text) <= MAX_SHOWN_PATH:
        return repr(text)
    half = MAX_SHOWN_PATH // 2
    return f"{text[:half] + '...' + text[-half:]!r} ({len(text)} characters)"


def read_bytes(path: str | Path, where: str, limit_b: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The bytes of the file at ``path``; McsimError (one line starting with ``where``, which names the
    file: "faults file 'x.toml'") if it is missing, a folder, unreadable, its name is too long, or it holds
    more than ``limit_b`` bytes (read no further than that: a pipe or a device has no size to ask first)."""
    try:
        with Path(path).open("rb") as f:
            data = f.read(limit_b + 1)
    except OSError as exc:
        raise unreadable(where, exc) from None
    if len(data) > limit_b:
        raise McsimError(
            f"{where} holds more than {limit_b} B ({limit_b // 2**20} MiB), the most mcsim reads of such a file "
            "(mcsim.util.toml_text: parsed, a file takes several times its size in memory)"
        )
    return data


def unreadable(where: str, exc: OSError) -> McsimError:
    """The one line for a file that could not be opened or read (``where`` names it): missing, a folder,
    or the system's reason."""
    if isinstance(exc, FileNotFoundError):
        return McsimError(f"{where} does not exist")
    if isinstance(exc, IsADirectoryError):
        return McsimError(f"{where} is a folder, not a file")
    return McsimError(f"{where}: cannot be read ({exc.strerror or exc})")


def loads(data: bytes, where: str) -> dict[str, Any]:
    """A TOML document from a file's bytes; McsimError (one line) for bytes that are not UTF-8 text, not
    TOML, or nested deeper than Python's recursion limit."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = data[exc.start]
        raise McsimError(f"{where}: not valid TOML (not UTF-8 text: byte {byte:#04x} at {exc.start})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise McsimError(f"{where}: not valid TOML ({exc})") from None
    except RecursionError:
        raise McsimError(f"{where}: not valid TOML for mcsim (arrays or tables nested too deep)") from None


def read_document(path: str | Path, where: str) -> dict[str, Any]:
    """The TOML document in the file at ``path`` (:func:`read_bytes`, then :func:`loads`)."""
    return loads(read_bytes(path, where), where)
