# SPDX-License-Identifier: GPL-2.0-only
"""The sweep's wire format: Tasks and Outcomes as JSON, the one encoding used on a worker's pipe (one
object per line) and between Dask workers and the client (JSON-able dicts). (mcsim.config.codec is
another thing: the canonical dicts of the configs.)

A per-rank array travels as ``{"dtype": "<i8", "shape": [16], "data": <base64 of the raw bytes>}``
and is read back with :func:`numpy.frombuffer` (numeric dtypes only; never pickle).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
from typing import Any

import numpy as np

from mcsim.errors import McsimError
from mcsim.sweep.outcome import STATUSES, Outcome, Task

NUMERIC_KINDS = "biuf"  # bool, signed and unsigned integers, floats


def encode_array(values: np.ndarray) -> dict[str, Any]:
    """A numeric array as dtype (with byte order), shape and base64 of its C-order bytes."""
    values = np.ascontiguousarray(values)
    if values.dtype.kind not in NUMERIC_KINDS:
        raise McsimError(f"sweep wire: an array of dtype {values.dtype} is not numeric")
    return {
        "dtype": values.dtype.str,
        "shape": list(values.shape),
        "data": base64.b64encode(values.tobytes()).decode("ascii"),
    }


def decode_array(data: object, where: str = "sweep wire") -> np.ndarray:
    """The array of :func:`encode_array` (a writable copy); anything else is one McsimError line."""
    if not isinstance(data, dict) or set(data) != {"dtype", "shape", "data"}:
        raise McsimError(f"{where}: an array must be {{dtype, shape, data}}, not {str(data)[:80]}")
    try:
        dtype = np.dtype(data["dtype"])
        shape = tuple(int(n) for n in data["shape"])
        raw = base64.b64decode(data["data"], validate=True)
    except (TypeError, ValueError, binascii.Error) as exc:
        raise McsimError(f"{where}: a bad array ({exc})") from None
    if dtype.kind not in NUMERIC_KINDS:
        raise McsimError(f"{where}: an array of dtype {dtype} is not numeric")
    if len(raw) != dtype.itemsize * int(np.prod(shape)):
        raise McsimError(f"{where}: {len(raw)} bytes do not make an array of {dtype} and shape {shape}")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


TASK_FIELDS = frozenset({"key", "label", "scenario"})  # a Scenario's task
WORKLOAD_TASK_FIELDS = frozenset({"key", "label", "workload"})  # a workload's task


def task_to_dict(task: Task) -> dict[str, Any]:
    """{key, label, scenario} (a Scenario's task) or {key, label, workload} (a workload's)."""
    data = dataclasses.asdict(task)
    del data["scenario" if task.workload is not None else "workload"]
    return data


def task_from_dict(data: object) -> Task:
    if not isinstance(data, dict) or set(data) not in (TASK_FIELDS, WORKLOAD_TASK_FIELDS):
        raise McsimError(
            f"sweep wire: a task must be {{key, label, scenario}} or {{key, label, workload}}, not {str(data)[:80]}"
        )
    if "workload" in data:
        if not isinstance(data["workload"], dict):
            raise McsimError(f"sweep wire: a task's workload must be a dict, not {str(data['workload'])[:80]}")
        return Task(key=str(data["key"]), label=str(data["label"]), scenario=None, workload=data["workload"])
    return Task(key=str(data["key"]), label=str(data["label"]), scenario=data["scenario"])


def outcome_to_dict(outcome: Outcome) -> dict[str, Any]:
    """The Outcome as JSON types: its arrays encoded, everything else as it is."""
    data = {f.name: getattr(outcome, f.name) for f in dataclasses.fields(outcome)}
    if outcome.arrays is not None:
        data["arrays"] = {name: encode_array(values) for name, values in outcome.arrays.items()}
    return data


OUTCOME_FIELDS = frozenset(f.name for f in dataclasses.fields(Outcome))


def outcome_from_dict(data: object) -> Outcome:
    """The Outcome of :func:`outcome_to_dict`; anything else is one McsimError line."""
    if not isinstance(data, dict) or set(data) != OUTCOME_FIELDS:
        raise McsimError(f"sweep wire: an outcome must have the fields of Outcome, not {str(data)[:80]}")
    if data["status"] not in STATUSES:
        raise McsimError(f"sweep wire: status={data['status']!r} is not one of {', '.join(STATUSES)}")
    arrays = data["arrays"]
    if arrays is not None:
        if not isinstance(arrays, dict):
            raise McsimError(f"sweep wire: arrays must be a dict, not {type(arrays).__name__}")
        arrays = {name: decode_array(values, f"sweep wire: array {name!r}") for name, values in arrays.items()}
    return Outcome(**{**data, "arrays": arrays})


def to_line(message: dict[str, Any]) -> bytes:
    """One message of the worker protocol: compact JSON (no NaN), one line."""
    return json.dumps(message, separators=(",", ":"), allow_nan=False).encode() + b"\n"


def from_line(line: bytes) -> dict[str, Any]:
    """The message of one protocol line; a line that is not a JSON object is one McsimError line."""
    try:
        message = json.loads(line)
    except ValueError as exc:
        raise McsimError(f"sweep wire: a line that is not JSON ({exc}): {line[:80]!r}") from None
    if not isinstance(message, dict):
        raise McsimError(f"sweep wire: a line that is not a JSON object: {line[:80]!r}")
    return message
