# SPDX-License-Identifier: GPL-2.0-only
"""A workload as a sweep base: its data (a workload file's keys, mcsim.workloads.workload_file), the axes
that name its fields, each run's Workload built and checked at planning time, and a run's results as
flat metrics (every job's figures under its name).

A workload base is ``workload = "file.toml"`` or a ``[workload]`` table with a workload file's keys
(topology, rate, seed, ``[[workload.jobs]]``); the table may start from a file, ``file = "w.toml"``,
its keys replacing the file's (``jobs`` as a whole). An axis is a top-level field (``rate``,
``topology``, ``seed``), a run option (``"options.endpoints"``, ``"options.processor"``: a keyword of the
workload's ``[options]``) or one key of one job, named by the job's name: ``"jobs.train.allgather"``. A
bad value from an axis is the line the workload file's reader gives for it, after the run's label. An
``[options] faults`` file is read into the base (its content, not its name, enters each run's key).
"""

from __future__ import annotations

import copy
import hashlib
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mcsim.config import codec
from mcsim.errors import McsimError, pick
from mcsim.runs.job_planning import check_workload
from mcsim.runs.keyword_tables import known
from mcsim.sweep.outcome import COMPLETE
from mcsim.util import toml_text
from mcsim.workloads.workload_file import (
    FAULTS,
    JOB_KEYS,
    KINDS,
    RUN_OPTIONS,
    TOP_KEYS,
    Workload,
    from_folder,
    job_name,
    topology_from_folder,
    trace_files,
    workload_of,
)

if TYPE_CHECKING:
    from mcsim.runs.jobs import WorkloadResult

WORKLOAD_FILE = "file"  # a [workload] table's key: the workload file it starts from
JOBS = "jobs"
OPTIONS = "options"  # a run option's axis: options.<keyword>
PLAIN_AXES = tuple(k for k in TOP_KEYS if k not in (JOBS, OPTIONS))  # topology, rate, seed
JOB_AXIS = "jobs.<job name>.<key>"
OPTION_AXIS = "options.<keyword>"
NOT_AXES = ("name",)  # a job's name names its axes: it is no axis itself
JOB_COUNT = "jobs"  # the run-level metric that says a stored run is a workload run: its number of jobs
TIMES = ("iteration_us", "exposed_comm_us")  # the figures of each job that `sweep show` prints
WHERE = "workload"  # how a run's messages name its workload


def traces_from_folder(value: object, folder: Path) -> object:
    """A Chakra job's ``traces`` (a prefix or a list of files) as paths from ``folder``."""
    return [from_folder(v, folder) for v in value] if isinstance(value, list) else from_folder(value, folder)


def faults_from_folder(value: object, folder: Path) -> object:
    """An [options] faults value as a run's data holds it: a faults file (relative to ``folder``) as its table,
    read now, so that its content, not its name, enters each run's key (a table as it is). For an axis
    ``options.faults`` too (its files relative to the spec's folder)."""
    if not isinstance(value, str):
        return value
    path = str(from_folder(value, folder))
    return toml_text.read_document(path, f"faults file {toml_text.shown_path(path)}")


def resolve_paths(data: dict[str, Any], folder: Path) -> None:
    """A workload's relative file paths (its topology file, its jobs' traces) as paths from ``folder``, in place;
    its [options] faults file as its table (read now: its content, not its name, enters each run's key)."""
    if "topology" in data:
        data["topology"] = topology_from_folder(data["topology"], folder)
    options = data.get(OPTIONS)
    if isinstance(options, dict) and FAULTS in options:
        options[FAULTS] = faults_from_folder(options[FAULTS], folder)
    tables = data.get(JOBS)
    for table in tables if isinstance(tables, list) else []:
        if isinstance(table, dict) and "traces" in table:
            table["traces"] = traces_from_folder(table["traces"], folder)


def load(value: object, where: str) -> dict[str, Any]:
    """A workload base as data: a workload file (its relative paths from its folder), or a table of a
    workload file's keys, starting from the file its ``file`` key names if any. JSON data only."""
    if isinstance(value, str | os.PathLike):
        path = Path(value)
        data = toml_text.read_document(path, f"{where} file {toml_text.shown_path(path)}")
        resolve_paths(data, path.resolve().parent)
    else:
        table = dict(codec.require_dict(where, value))
        start = table.pop(WORKLOAD_FILE, None)
        if start is not None and not isinstance(start, str | os.PathLike):
            raise McsimError(f"{where}: {WORKLOAD_FILE}={start!r} must be the path of a workload file")
        data = {**(load(start, where) if start is not None else {}), **table}
    codec.canonical_json(data, where)
    return copy.deepcopy(data)


def job_index(data: Mapping[str, Any], where: str) -> dict[str, int]:
    """Each job's name -> its place in ``jobs`` (empty when jobs are not tables: building a run says so)."""
    tables = data.get(JOBS)
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        return {}
    names: dict[str, int] = {}
    for i, table in enumerate(tables):
        name = job_name(table, i)
        if isinstance(name, str) and name in names:
            raise McsimError(f"{where}: two jobs are named {name!r}; an axis names a job by its name")
        if isinstance(name, str):
            names[name] = i
    return names


def _split(name: str, where: str) -> tuple[str, str]:
    """(job, key) of an axis ``jobs.<job>.<key>`` (a job's name may hold dots, a key none)."""
    top, _, rest = name.partition(".")
    job, _, key = rest.rpartition(".")
    if top != JOBS or not job or not key:
        raise McsimError(f"{where}: not a workload field; give {', '.join(PLAIN_AXES)}, {OPTION_AXIS} or {JOB_AXIS}")
    return job, key


def check_axis(name: str, data: Mapping[str, Any], swept: list[str], where: str) -> None:
    """An axis names a top-level field of the workload or a key its job's kind takes (any kind's, when
    the job's kind is swept too); one McsimError line if not."""
    if "." not in name:
        if name == JOBS:
            raise McsimError(f"{where}: sweep one key of one job, {JOB_AXIS}, e.g. jobs.train.allgather")
        try:
            pick("workload field", name, dict.fromkeys((*PLAIN_AXES, OPTION_AXIS, JOB_AXIS)))
        except McsimError as exc:
            raise McsimError(f"{where}: {exc}") from None
        return
    if name.startswith(f"{OPTIONS}."):
        known("run option", name.removeprefix(f"{OPTIONS}."), RUN_OPTIONS, where)
        return
    job, key = _split(name, where)
    names = job_index(data, where)
    if job not in names:
        raise McsimError(f"{where}: the workload has no job named {job!r}; its jobs: {', '.join(names) or 'none'}")
    if key in NOT_AXES:
        raise McsimError(f"{where}: a job's {key} names its axes; it is no axis")
    kind = data[JOBS][names[job]].get("kind")
    kinds = list(KINDS) if f"{JOBS}.{job}.kind" in swept or kind not in KINDS else [kind]
    keys = dict.fromkeys(k for k in (*JOB_KEYS, *(k for c in kinds for k in KINDS[c])) if k not in NOT_AXES)
    try:
        pick(f"key of job {job!r} ({' or '.join(kinds)})", key, keys)
    except McsimError as exc:
        raise McsimError(f"{where}: {exc}") from None


def apply(data: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """The workload of one run: ``data`` with each axis' value set (axes checked by :func:`check_axis`)."""
    out = copy.deepcopy(dict(data))
    names = job_index(out, WHERE) if any("." in name for name in params) else {}
    for name, value in params.items():
        if name.startswith(f"{OPTIONS}."):
            out.setdefault(OPTIONS, {})[name.removeprefix(f"{OPTIONS}.")] = copy.deepcopy(value)
        elif "." in name:
            job, key = _split(name, WHERE)
            out[JOBS][names[job]][key] = copy.deepcopy(value)
        else:
            out[name] = copy.deepcopy(value)
    return out


@dataclass(frozen=True, slots=True)
class WorkloadRun:
    """One run's workload: its data (what the worker gets and the key hashes) and its Workload, checked."""

    data: dict[str, Any]
    workload: Workload

    @classmethod
    def build(cls, data: dict[str, Any]) -> WorkloadRun:
        """Build the Workload and check it as run_jobs does before any C++ exists: hosts, and every collective
        step's Scenario (its collective, algorithm, size on its ranks); one McsimError line if it fails."""

        w = workload_of(data, WHERE)
        check_workload(w)
        return cls(data=data, workload=w)

    def trace_digests(self) -> dict[str, list[str]]:
        """sha256 of each Chakra job's trace files, by job name (its traces' content enters the run's key)."""
        out = {}
        for i, table in enumerate(self.data[JOBS]):
            if table.get("kind") == "chakra":
                job = self.workload.jobs[i]
                files = trace_files(table.get("traces"), len(job.hosts), Path(), f"{WHERE}: job {job.name!r}")
                out[job.name] = [_digest(path) for path in files]
        return out


def _digest(path: Path) -> str:
    """sha256 of a file, read 1 MiB at a time (a trace may be large)."""
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError as exc:
        raise McsimError(f"{WHERE}: cannot read {str(path)!r} ({exc.strerror})") from None


def metrics_of(result: WorkloadResult) -> dict[str, Any]:
    """A run's metrics: ``jobs`` (how many), ``complete`` (every job's every step ended), then each job's
    summary as ``<job>.<figure>`` (a time that did not happen: None)."""
    out: dict[str, Any] = {JOB_COUNT: len(result.jobs), COMPLETE: all(j.complete for j in result.jobs)}
    for j in result.jobs:
        summary = j.summary()
        name = summary.pop("name")
        for key, value in summary.items():
            out[f"{name}.{key}"] = None if isinstance(value, float) and math.isnan(value) else value
    return out


def arrays_of(result: WorkloadResult) -> dict[str, np.ndarray]:
    """A run's arrays: each job's timeline ([step, rank, (ready, start, end)] in ps) and injected bytes per rank."""
    out = {}
    for j in result.jobs:
        out[f"{j.job.name}.timeline"] = j.timeline
        out[f"{j.job.name}.injected_b"] = j.injected_b
    return out


def job_names(row: Mapping[str, Any]) -> list[str]:
    """The jobs of a stored workload run's row (metrics ``<job>.complete``); none for a Scenario's."""
    suffix = f".{COMPLETE}"
    return [k.removesuffix(suffix) for k, v in row.items() if k.endswith(suffix) and v is not None]


def unfinished(row: Mapping[str, Any]) -> str:
    """``jobs 'a', 'b' have a step that never ended``: an incomplete workload run's row, said in words."""
    names = [n for n in job_names(row) if row[f"{n}.{COMPLETE}"] is False]
    jobs, verb = ("jobs", "have") if len(names) > 1 else ("job", "has")
    return f"{jobs} {', '.join(map(repr, names))} {verb} a step that never ended"
