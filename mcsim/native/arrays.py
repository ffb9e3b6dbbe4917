# SPDX-License-Identifier: GPL-2.0-only
"""numpy <-> C++ bulk conversions: the arrays every ``const T*`` argument and counter read uses.

The C ABI (mcsim.native.abi) takes a C-contiguous numpy array of the right dtype for a ``const T*``
parameter without a copy. Every array made here has at least one element, so C++ never gets a
pointer to nothing, and the caller passes the real count alongside it. Counters come back the same
way: C++ fills a zeroed uint64 array, which is then split into named columns (copies, so they
outlive the C++ objects).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from mcsim.native import abi, runtime
from mcsim.result import times_ps


def _never_empty(values: npt.ArrayLike, dtype: type[np.generic]) -> np.ndarray:
    arr = np.ascontiguousarray(values, dtype=dtype)
    return arr if arr.size else np.zeros(1, dtype=dtype)


def u32(values: npt.ArrayLike) -> np.ndarray:
    """A C-contiguous uint32 array for a ``const uint32_t*``; never empty (pass the count too)."""
    return _never_empty(values, np.uint32)


def u64(values: npt.ArrayLike) -> np.ndarray:
    """A C-contiguous uint64 array for a ``const uint64_t*``; never empty (pass the count too)."""
    return _never_empty(values, np.uint64)


def i64(values: npt.ArrayLike) -> np.ndarray:
    """A C-contiguous int64 array for a ``const int64_t*`` (times in ps); never empty."""
    return _never_empty(values, np.int64)


def read_u64(n: int, fill: Callable[[np.ndarray, int], Any]) -> np.ndarray:
    """``n`` uint64 values that ``fill(out, n)`` (a C++ bulk getter) writes into a zeroed array."""
    out = np.zeros(max(n, 1), dtype=np.uint64)
    fill(out, n)
    return out[:n]


def columns(raw: np.ndarray, names: Sequence[str]) -> dict[str, np.ndarray]:
    """Split a row-major table of ``len(names)`` columns into one array per name (copies): uint64
    counts, and int64 times for the ``*_ps`` columns, with result.NEVER where the event did not
    happen (C++ writes UINT64_MAX)."""
    table = raw.reshape(-1, len(names))
    return {name: times_ps(table[:, i]) if name.endswith("_ps") else table[:, i].copy() for i, name in enumerate(names)}


def read_columns(rows: int, names: Sequence[str], fill: Callable[[np.ndarray, int], Any]) -> dict[str, np.ndarray]:
    """``rows`` rows of the counters ``names`` from a C++ bulk getter, one array per name."""
    return columns(read_u64(rows * len(names), fill), names)


def read_counters(table: str, rows: int, source: abi.Handle) -> dict[str, np.ndarray]:
    """``rows`` rows of the counter table ``table`` of the C++ object ``source`` (a Fabric's "port", "pfc",
    "ecn", "int", "host", "source", "aggregation"; a CollectiveTeam's "rank"; a CompletionSource's
    "dpa_thread"; an RdmaStack's "nic", "cc"; a VerbsWorkload's "rc_qp", "ud_qp"), read by the table's name
    (mcsim_counters: one ABI function for every table); return column name -> an array of ``rows`` values, the
    names and their order as C++ registered them (mcsim.native.runtime.counter_names)."""
    names = runtime.counter_names(table)  # McsimError for a table no reader registered
    return read_columns(rows, names, partial(runtime.load().mcsim_counters, source, table.encode()))
