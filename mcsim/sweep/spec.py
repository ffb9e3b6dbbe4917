# SPDX-License-Identifier: GPL-2.0-only
"""A sweep spec: a base Scenario plus axes (a cartesian product) and zips (axes that move together),
from TOML or Python, expanded into the Runs of a sweep, each with its Scenario built and checked.

TOML form::

    name = "link-speed"
    [base]                                        # Scenario keywords; processor/rc/fabric/rdma as tables
    topology = "testbed-188"
    processor = { kind = "dpa", threads = 16 }    # kind: a key of mcsim.config.codec.PROCESSORS
    [axes]                                        # the cartesian product, first axis slowest
    rate = ["56Gbps", "100Gbps"]
    algorithm = ["ring", "mcast"]
    [[zip]]                                       # equal-length lists that move together: one dimension
    "processor.threads" = [4, 16]
    endpoints = [4, 16]

An axis is a Scenario keyword or a dotted path into a nested config ("processor.threads",
"rc.retry_cnt", "fabric.switch_buffer_b", "rdma.rq_depth"). A base may also be a Scenario (Python),
kept as ``{"base_scenario": Scenario.to_dict()}``: runs start from its values.

A workload is a base too (mcsim.sweep.workload_spec), in place of [base] (a spec with both is one
McsimError line)::

    name = "fsdp-allgather"
    workload = "w.toml"                           # a workload file (`mcsim workload`), from this file's folder
    [axes]                                        # its top-level fields, or a job's key by the job's name
    rate = ["56Gbps", "100Gbps"]
    "jobs.train.allgather" = ["ring", "mcast"]
    "jobs.neighbour.load" = [0.25, 0.5]

or an inline ``[workload]`` table with a workload file's keys (topology, rate, seed,
``[[workload.jobs]]``), which may start from a file: ``file = "w.toml"``, its keys replacing the file's
(``jobs`` as a whole). Relative paths (the workload file, a topology file, Chakra traces) are from the
file that writes them. The axes are ``topology``, ``rate``, ``seed`` and ``jobs.<job name>.<key>``
(a key of the job's kind; not ``name``); each run's Workload is built and checked (hosts, every
collective step's Scenario) before anything runs, a bad one one line naming the run.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx

from mcsim.config import codec, congestion
from mcsim.config.fabric import FabricConfig, Faults
from mcsim.config.faults_file import load_faults
from mcsim.config.rdma import RdmaConfig
from mcsim.errors import McsimError
from mcsim.runs.keyword_tables import KEYWORDS, SHORT_NAMES, TABLES, config_of, fields_of, known, value_of
from mcsim.runs.scenario import Scenario, scenario_of
from mcsim.sweep import workload_spec
from mcsim.sweep.workload_spec import WorkloadRun
from mcsim.util import toml_text

TOP_KEYS = ("name", "base", "workload", "axes", "zip")
# A sweep plans every run before the first one starts: each run's Scenario is built, checked and keyed
# in memory (~4 KB and ~0.7 ms each, measured on fat-tree-k4), and every run costs ~0.2 s of worker
# overhead on top of its simulation. 100,000 runs are ~0.4 GB and ~1 min of planning and 5.6 core-hours
# of overhead alone: more is almost surely an axis too long, and 10x more no longer plans in memory.
MAX_RUNS = 100_000
MAX_RUNS_WHY = "every run is planned in memory before the first starts"
BASE_SCENARIO = "base_scenario"  # the key of a base given as a Scenario (its canonical dict)
FAULTS_AXIS = f"{workload_spec.OPTIONS}.{workload_spec.FAULTS}"  # a workload's [options] faults, as an axis
NESTED = ("processor", "rc")  # the short names that hold a config of their own (within rdma: SHORT_NAMES)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _text(value: Any) -> str:
    """An axis value in a label: a string as written, anything else as JSON (true, 4, 0.001)."""
    return value if isinstance(value, str) else _json(value)


def _count(n: int) -> str:
    """A count as read at a glance: 150,000 or 6.5e11."""
    return f"{n:,}" if n < 10**9 else f"{n:.3g}".replace("e+", "e")


def _to_plain(name: str, value: Any) -> Any:
    """A value as JSON data: a config as its table (a processor with its kind), faults and a graph as
    their canonical dicts, a path as a string. ``name`` is the keyword or field that holds it."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and name in TABLES:
        if name != "processor":
            return codec.config_to_dict(value)
        kind = next((k for k, cls in codec.PROCESSORS.items() if type(value) is cls), None)
        if kind is None:
            raise McsimError(f"processor {type(value).__name__} has no kind (a key of mcsim.config.codec.PROCESSORS)")
        return {"kind": kind, **codec.config_to_dict(value)}
    if isinstance(value, Faults):
        return codec.faults_to_dict(value)
    if isinstance(value, nx.Graph):
        return codec.GraphTopology.of(value).to_dict()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, tuple | list):
        return [_to_plain("", v) for v in value]
    if isinstance(value, Mapping):
        return {k: _to_plain(k, v) for k, v in value.items()}
    return value


def _path(name: str, kw: Mapping[str, Any]) -> list[str]:
    """The path of a dotted axis from a config of Scenario: a short name's fields live in the config
    SHORT_NAMES names (processor.* and rc.* in rdma)."""
    path = name.split(".")
    if path[0] == "processor" and "processor" not in kw and "rdma" not in kw:
        raise McsimError(
            "an axis 'processor.<field>' needs a processor in the base: a [base] processor table with a kind "
            f'({", ".join(codec.PROCESSORS)}), e.g. processor = {{ kind = "dpa", threads = 16 }}'
        )
    if path[0] == "rdma" and len(path) == 2 and (field := congestion.field_path(path[1])):
        return ["rdma", *field]  # rdma.dcqcn_g: the base's DCQCN config's g
    return [SHORT_NAMES[path[0]][0][0], *path] if path[0] in NESTED else path


def _fold(kw: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords with processor and rc folded into the rdma config and both configs present (the
    default ones if not given), for dotted axes to change (the same Scenario as the keywords give)."""
    out = dict(kw)
    nested = {name: out.pop(name) for name in NESTED if name in out}
    rdma = out.get("rdma", RdmaConfig())
    if not isinstance(rdma, RdmaConfig):
        raise McsimError(f"rdma={rdma!r} must be a table of RdmaConfig fields")
    out["rdma"] = dataclasses.replace(rdma, **nested)
    out.setdefault("fabric", FabricConfig())
    return out


def _walk(cfg: Any, path: list[str]) -> Any:
    """The value at ``path`` in a config; an unknown field is the "unknown X" message."""
    for field in path:
        if not dataclasses.is_dataclass(cfg):
            raise McsimError(f"{type(cfg).__name__} {cfg!r} has no field {field!r}")
        known(f"{type(cfg).__name__} field", field, fields_of(type(cfg)))
        cfg = getattr(cfg, field)
    return cfg


def _replace(cfg: Any, path: list[str], value: Any) -> Any:
    """``cfg`` with the field at ``path`` (in a nested config for a longer path) set to ``value``."""
    _walk(cfg, path[:1])
    if len(path) > 1:
        value = _replace(getattr(cfg, path[0]), path[1:], value)
    elif path[0] in TABLES and isinstance(value, Mapping):
        value = config_of(path[0], value)
    try:
        return dataclasses.replace(cfg, **{path[0]: value})
    except TypeError as exc:
        raise McsimError(f"{type(cfg).__name__}: {path[0]}={value!r}: {exc}") from None


def _scenario_kwargs(base: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords of Scenario() that a base sets: a base Scenario's fields, then the base's own keys."""
    kw: dict[str, Any] = {}
    if BASE_SCENARIO in base:
        sc = Scenario.from_dict(base[BASE_SCENARIO])
        kw = {f.name: getattr(sc, f.name) for f in dataclasses.fields(Scenario)}
    for name, value in base.items():
        if name != BASE_SCENARIO:
            kw[name] = value_of(name, value)
    return kw


@dataclass(frozen=True, slots=True)
class Run:
    """One run of a sweep: its place in the expansion, its label, its axis values and its Scenario (or,
    in a sweep over a workload, its workload)."""

    index: int  # 0-based position in the expansion order
    label: str  # "rate=56Gbps bytes_per_rank=64KiB algorithm=ring" (axis=value as written)
    params: dict[str, Any]  # axis name -> value as written in the spec (JSON types)
    scenario: Scenario | None  # None in a sweep over a workload
    workload: WorkloadRun | None = None  # a sweep over a workload: the run's workload, built and checked


@dataclass(frozen=True, slots=True)
class SweepSpec:
    """A named base Scenario (or a workload: ``workload``, a workload file's path or its keys as a dict,
    see mcsim.sweep.workload_spec) plus axes (cartesian product, first axis slowest) and zips (each one
    more dimension of axes that move together). Checked when made; :meth:`runs` builds every Scenario
    (every Workload)."""

    name: str
    base: dict[str, Any] | Scenario = dataclasses.field(default_factory=dict)  # a Scenario is kept as a dict
    axes: dict[str, list[Any]] = dataclasses.field(default_factory=dict)
    zips: tuple[dict[str, list[Any]], ...] = ()
    # a workload base instead of a Scenario one: kept as its data (a file read, its relative paths resolved)
    workload: dict[str, Any] | str | os.PathLike[str] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise McsimError(f'sweep: name={self.name!r} must be a non-empty string; e.g. name = "link-speed"')
        where = f"sweep {self.name!r}"
        if self.workload is not None:
            if isinstance(self.base, Scenario) or self.base:
                raise McsimError(
                    f"{where}: give a Scenario [base] or a workload, not both; a workload's runs take topology, "
                    "rate and seed from the workload (sweep them as axes)"
                )
            object.__setattr__(self, "workload", workload_spec.load(self.workload, f"{where} [workload]"))
        base = {BASE_SCENARIO: self.base.to_dict()} if isinstance(self.base, Scenario) else self.base
        base = dict(codec.require_dict(f"{where} [base]", base))
        for key in base:
            if key != BASE_SCENARIO:
                known("Scenario keyword", key, KEYWORDS, f"{where} [base]")
        base = {k: _to_plain(k, v) for k, v in base.items()}
        codec.canonical_json(base, f"{where} [base]")  # JSON data only: to_dict() is what it holds
        object.__setattr__(self, "base", base)
        if not isinstance(self.zips, tuple | list):
            raise McsimError(f"{where}: zips={self.zips!r} must be a list of tables (one per [[zip]])")
        object.__setattr__(self, "axes", _axes(self.axes, f"{where} [axes]"))
        zips = tuple(_axes(z, f"{where} [[zip]] {i}", zipped=True) for i, z in enumerate(self.zips))
        object.__setattr__(self, "zips", zips)
        names = self._axis_names()
        for name in names:
            if names.count(name) > 1:
                raise McsimError(f"{where}: axis {name!r} appears twice; each axis goes in [axes] or one [[zip]]")
        if isinstance(self.workload, dict):
            for name in names:
                workload_spec.check_axis(name, self.workload, names, f"{where}: axis {name!r}")
            return
        try:
            kw = _scenario_kwargs(base)
        except McsimError as exc:
            raise McsimError(f"{where} [base]: {exc}") from None
        for name in names:
            self._check_axis_name(name, kw, f"{where}: axis {name!r}")

    def _axis_names(self) -> list[str]:
        return [*self.axes, *(name for z in self.zips for name in z)]

    def _check_axis_name(self, name: str, kw: dict[str, Any], where: str) -> None:
        """A Scenario keyword, or a path to a field of a config of the base (when its top is no axis)."""
        top, _, rest = name.partition(".")
        if not rest:
            known("Scenario keyword", name, KEYWORDS, where)
        elif top not in TABLES:
            paths = ", ".join(f"{c}.<field>" for c in TABLES)
            raise McsimError(f"{where}: not a Scenario keyword or a config field ({paths})")
        elif top not in self._axis_names():
            try:
                top, *path = _path(name, kw)
                _walk(_fold(kw)[top], path)
            except McsimError as exc:
                raise McsimError(f"{where}: {exc}") from None

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> SweepSpec:
        """Read a spec from a TOML file; relative topology paths are relative to the file's folder."""
        path = Path(path)
        where = f"sweep spec {toml_text.shown_path(path)}"
        data = toml_text.read_document(path, where)
        try:
            _resolve_paths(data, path.resolve().parent)
        except McsimError as exc:
            raise McsimError(f"{where}: {exc}") from None
        return cls.from_dict(data, where)

    @classmethod
    def from_dict(cls, data: object, where: str = "sweep spec") -> SweepSpec:
        """A spec from its dict form (:meth:`to_dict`, or a parsed TOML document)."""
        d = codec.require_dict(where, data)
        for key in d:
            known("key", key, TOP_KEYS, where)
        if "name" not in d:
            raise McsimError(f'{where}: name is missing; e.g. name = "link-speed"')
        zips = d.get("zip", [])
        if not isinstance(zips, list):
            raise McsimError(f"{where}: zip={zips!r} must be a list of tables ([[zip]])")
        base, axes, workload = d.get("base", {}), d.get("axes", {}), d.get("workload")
        return cls(name=d["name"], base=base, axes=axes, zips=tuple(zips), workload=workload)

    def to_dict(self) -> dict[str, Any]:
        """JSON data that :meth:`from_dict` reads back to an equal spec (a base Scenario as its dict; a
        workload as its data, a file read)."""
        if self.workload is not None:
            return copy.deepcopy(
                {"name": self.name, "workload": self.workload, "axes": self.axes, "zip": list(self.zips)}
            )
        return copy.deepcopy({"name": self.name, "base": self.base, "axes": self.axes, "zip": list(self.zips)})

    def to_toml(self) -> str:
        """The spec as a TOML file that :meth:`from_toml` reads back to a spec with the same runs
        (``mcsim sweep`` runs it). A base field of None (the default) is left out; None among an
        axis' values has no TOML form (McsimError)."""
        return toml_text.document(self.to_dict())

    def dimensions(self) -> list[tuple[str, int]]:
        """Each dimension of the product, slowest first, as (name, length): an axis is its name, a
        zip ``[[zip]] I``. Read from the axis lengths: nothing is expanded."""
        dims = [(name, len(values)) for name, values in self.axes.items()]
        dims += [(f"[[zip]] {i}", len(next(iter(z.values())))) for i, z in enumerate(self.zips)]
        return dims

    def size(self) -> int:
        """How many runs the spec has (the product of its dimensions' lengths), without expanding it."""
        return math.prod(n for _, n in self.dimensions())

    def check_size(self) -> int:
        """The number of runs; above MAX_RUNS one McsimError line that gives it as the product of the axes."""
        n = self.size()
        if n > MAX_RUNS:
            product = " x ".join(f"{length} {name}" for name, length in self.dimensions())
            raise McsimError(
                f"sweep {self.name!r} has {_count(n)} runs ({product}); at most {MAX_RUNS:,} ({MAX_RUNS_WHY}); "
                "split it into several sweeps (they may share one --store) or shorten an axis"
            )
        return n

    def iter_runs(self) -> Iterator[Run]:
        """Every run, in expansion order, one at a time (a dry run lists them as they come); each
        Scenario is built (checked) as its run is reached. The size is checked first (:meth:`check_size`).

        Raises McsimError ``sweep 'NAME' run I (LABEL): <Scenario's message>`` for a combination that
        Scenario (or a config) rejects.
        """
        self.check_size()
        where = f"sweep {self.name!r}"
        assert isinstance(self.base, dict)  # __post_init__ keeps a base Scenario as its dict
        kw = _scenario_kwargs(self.base) if self.workload is None else {}
        dims: list[list[tuple[tuple[str, Any], ...]]] = [[((n, v),) for v in vs] for n, vs in self.axes.items()]
        for z in self.zips:  # one dimension: row i of a zip is (name, values[i]) of each of its axes
            dims.append([tuple(zip(z, row, strict=True)) for row in zip(*z.values(), strict=True)])
        for index, combo in enumerate(itertools.product(*dims)):
            params = dict(pair for step in combo for pair in step)
            label = " ".join(f"{name}={_text(value)}" for name, value in params.items())
            try:
                if isinstance(self.workload, dict):
                    run = Run(index, label, params, None, WorkloadRun.build(workload_spec.apply(self.workload, params)))
                else:
                    run = Run(index=index, label=label, params=params, scenario=_scenario(kw, params))
            except McsimError as exc:
                raise McsimError(f"{where} run {index} ({label}): {exc}") from None
            yield run

    def runs(self) -> list[Run]:
        """Every run, in expansion order (:meth:`iter_runs`), each Scenario built and checked before
        anything runs; a spec of more than MAX_RUNS runs is one McsimError line, before any is built."""
        return list(self.iter_runs())


def _scenario(base: dict[str, Any], params: dict[str, Any]) -> Scenario:
    """The Scenario of one run: the base's keywords, the plain axes, then the dotted ones."""
    kw = dict(base)
    dotted = {name: value for name, value in params.items() if "." in name}
    for name, value in params.items():
        if name not in dotted:
            kw[name] = value_of(name, value)
    if dotted:
        paths = {name: _path(name, kw) for name in dotted}
        kw = _fold(kw)
        for name, value in dotted.items():
            top, *rest = paths[name]
            kw[top] = _replace(kw[top], rest, value)
    try:
        return scenario_of(**kw)
    except TypeError as exc:
        raise McsimError(f"Scenario: {exc}") from None


def _axes(table: object, where: str, *, zipped: bool = False) -> dict[str, list[Any]]:
    """Each axis as a non-empty list of JSON values, no value twice (a zip: equal lengths, no row twice)."""
    axes = dict(codec.require_dict(where, table))
    if zipped and not axes:
        raise McsimError(f"{where}: is empty; a [[zip]] ties axes that move together, e.g. endpoints = [4, 16]")
    for name, values in axes.items():
        if not isinstance(values, list | tuple):
            raise McsimError(f"{where}: {name}={values!r} must be a list of values, e.g. [{_json(values)}]")
        if not values:
            raise McsimError(f"{where}: axis {name!r} is empty; give it at least one value")
        axes[name] = [_to_plain(name.rpartition(".")[2], v) for v in values]
        codec.canonical_json(axes[name], f"{where}: {name}")
    lengths = {name: len(values) for name, values in axes.items()}
    if zipped and len(set(lengths.values())) > 1:
        shown = ", ".join(f"{name} has {n}" for name, n in lengths.items())
        raise McsimError(f"{where}: the axes of a zip must have equal lengths ({shown})")
    columns = {"the zip": list(zip(*axes.values(), strict=True))} if zipped else axes
    for name, values in columns.items():
        twice = _first_twice(_json(v) for v in values)
        if twice is not None:
            what = name if zipped else f"axis {name!r}"
            raise McsimError(f"{where}: {what} lists {twice} twice; each run must differ")
    return axes


def _first_twice(texts: Iterable[str]) -> str | None:
    """The first text that comes a second time (one pass: an axis may have 100,000 values)."""
    seen: set[str] = set()
    for text in texts:
        if text in seen:
            return text
        seen.add(text)
    return None


def _resolve_paths(data: dict[str, Any], folder: Path) -> None:
    """Relative paths of a TOML spec, as paths from the spec's folder (in place): topology files (in the
    base, a workload table and axes), a workload file, a workload's Chakra traces (in its table and axes); a
    workload's faults files (its [options] faults, an axis options.faults) and a Scenario's (faults, in the base or
    an axis) read into their tables."""
    workload = data.get("workload")
    if isinstance(workload, str):
        data["workload"] = workload_spec.from_folder(workload, folder)
    elif isinstance(workload, dict):
        if workload_spec.WORKLOAD_FILE in workload:
            start = workload[workload_spec.WORKLOAD_FILE]
            workload[workload_spec.WORKLOAD_FILE] = workload_spec.from_folder(start, folder)
        workload_spec.resolve_paths(workload, folder)
    zips = data.get("zip")
    tables = [data.get("base"), data.get("axes"), *(zips if isinstance(zips, list) else [])]
    for i, table in enumerate(tables):
        if not isinstance(table, dict):
            continue
        for name, values in table.items():
            if name == "topology":
                resolve = workload_spec.topology_from_folder
            elif name.startswith(f"{workload_spec.JOBS}.") and name.endswith(".traces"):
                resolve = workload_spec.traces_from_folder
            elif name == FAULTS_AXIS:  # a faults file read now: its content, not its name, enters each run's key
                resolve = workload_spec.faults_from_folder
            elif name == "faults" and data.get("workload") is None:  # a Scenario's: its table, read now
                resolve = _faults_file
            else:
                continue
            try:
                table[name] = (
                    [resolve(v, folder) for v in values] if isinstance(values, list) else resolve(values, folder)
                )
            except McsimError as exc:
                raise McsimError(f"{f'[base] {name}' if i == 0 else f'axis {name!r}'}: {exc}") from None


def _faults_file(value: object, folder: Path) -> object:
    """A Scenario sweep's faults given as a faults file (``--faults FILE.toml``'s format, relative to ``folder``):
    its faults as their canonical table (codec.faults_to_dict), read now, so that its content, not its name, enters
    each run's key; a table as it is."""
    if not isinstance(value, str):
        return value
    return codec.faults_to_dict(load_faults(str(workload_spec.from_folder(value, folder))))
