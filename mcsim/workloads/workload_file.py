# SPDX-License-Identifier: GPL-2.0-only
"""A workload file (``mcsim workload FILE.toml``): the fabric and its jobs, read as data with tomllib; the
example is the format's core (a test reads it as written here)::

    topology = "testbed-188"      # a name from topologies/ or a file (relative to this file)
    rate = "56Gbps"               # optional: every link at this rate
    seed = 1                      # optional: ECMP hash and random placement
    [[jobs]]
    name = "train"
    ranks = 64
    placement = "interleaved"     # contiguous | interleaved | random | hosts = [..]
    kind = "fsdp"
    layers = 8
    bytes_per_layer = "16MiB"     # parameters per layer, all ranks together
    forward = "200us"             # compute per layer
    backward = "400us"
    prefetch = 1
    allgather = "mcast"
    reduce_scatter = "ring"
    [[jobs]]
    name = "neighbour"
    ranks = 64
    placement = "interleaved"
    kind = "background"           # fsdp | data_parallel | background | chakra
    pattern = "permutation"
    load = 0.5

Jobs are placed in the file's order, each on hosts no earlier job has: ``contiguous`` the lowest free
hosts, ``interleaved`` one free host of each leaf switch in turn (leaf by leaf, lowest first),
``random`` a sample of the free hosts drawn with the seed, or ``hosts = [...]`` exactly those (``ranks``, if
given too, must be their count). ``[options] faults`` takes what ``--faults FILE.toml`` takes: a faults file
(relative to this file) or a table in its format (mcsim.config.faults_file: times with units, "forever"). An
unknown key, kind or placement is one line naming it; so is a job past the steps a job may hold
(mcsim.workloads.job.MAX_JOB_STEPS, also the jobs' together), estimated before any is built.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from mcsim import topology as topologies
from mcsim.config import codec
from mcsim.config.fabric import MAX_SEED, Faults
from mcsim.config.faults_file import EXAMPLES, faults_from_toml, load_faults
from mcsim.config.setup import Setup
from mcsim.errors import McsimError, is_integer, pick, require_int, shown_value
from mcsim.runs.keyword_tables import KEYWORDS, STEP_FIELDS, known, value_of
from mcsim.units import parse_rate, parse_size, parse_time
from mcsim.util import toml_text
from mcsim.workloads.chakra import DEFAULT_ALGORITHMS, chakra_job
from mcsim.workloads.job import MAX_COMPUTE_UNITS, MAX_JOB_STEPS, Job
from mcsim.workloads.training import BACKGROUND_BYTES, background_job, data_parallel_job, fsdp_job

PLACEMENTS = ("contiguous", "interleaved", "random")  # or hosts = [...]
FAULTS = "faults"  # [options] faults: a faults file or a table in its format (mcsim.config.faults_file)
# how a Scenario's, a config's and a Faults' checks start their line (classes a workload file's user never wrote)
CLASS_PREFIX = re.compile(r"^(Scenario|Faults|[A-Z][A-Za-z]*Config): ")
TOPOLOGY_SUFFIXES = (".toml", ".graphml")  # with "/": a file path, as mcsim.topology.files.resolve decides
TOP_KEYS = ("topology", "rate", "seed", "options", "jobs")
# [options]: Scenario keywords for the whole run (its fabric and every collective step), configs as tables
# (processor = { kind = "dpa", threads = 16 }); not a step's own, nor what the file's top keys set
RUN_OPTIONS = tuple(k for k in KEYWORDS if k not in (*STEP_FIELDS, "topology", "rate", "seed"))
FSDP_KEYS = {
    "layers": None,
    "bytes_per_layer": None,
    "forward": None,
    "backward": None,
    "prefetch": 1,
    "allgather": "mcast",
    "reduce_scatter": "ring",
}
DATA_PARALLEL_KEYS = {
    "layers": None,
    "bytes_per_layer": None,
    "forward": None,
    "backward": None,
    "bucket_layers": 1,
    "allreduce": "ring",
}
# a Chakra trace per rank: traces = [files] (one per rank) or "prefix" (files prefix.0.et, prefix.1.et, ...,
# as ASTRA-sim names them, or gzipped prefix.0.et.gz, ...), relative to the workload file; each collective's
# algorithm by its name
CHAKRA_KEYS: dict[str, Any] = {"traces": None, **DEFAULT_ALGORITHMS}
TRACE_SUFFIXES = (".et", ".et.gz")  # a prefix's rank r: prefix.r.et, else prefix.r.et.gz (tests/workloads/data)
# background traffic: rounds of an Alltoall or a permutation (a random derangement per round, drawn with the
# file's seed + the job's index) with idle gaps, offering `load` of each rank's link
BACKGROUND_KEYS: dict[str, Any] = {
    "pattern": "alltoall",
    "bytes_per_peer": BACKGROUND_BYTES,
    "load": None,
    "rounds": None,  # rounds or duration (neither: one round)
    "duration": None,
    "algorithm": "all_at_once",
}
BACKGROUND_ONE_OF = ("rounds", "duration")
JOB_KEYS = ("name", "ranks", "placement", "hosts", "kind", "compute_units")
# a job's kind -> its keys (None: required) and their defaults
KINDS: dict[str, dict[str, Any]] = {
    "fsdp": FSDP_KEYS,
    "data_parallel": DATA_PARALLEL_KEYS,
    "chakra": CHAKRA_KEYS,
    "background": BACKGROUND_KEYS,
}


@dataclass(frozen=True, slots=True)
class Workload:
    """A workload file's fabric, run options and jobs (placed); ``notes``: what reading it changed (a Chakra
    trace's dependencies on nodes it does not hold, dropped). mcsim.runs.jobs checks it (check_workload) and runs
    it (run_workload)."""

    topology: str
    rate: str | None
    seed: int
    jobs: tuple[Job, ...]
    notes: tuple[str, ...] = ()
    options: dict[str, Any] = dataclasses.field(default_factory=dict)  # run_jobs' options: [options]
    where: str = "workload"  # how its messages name it: its file


@contextmanager
def users_words(where: str, options: dict[str, Any]) -> Iterator[None]:
    """A Scenario's, a config's or a Faults' check's line ("Scenario: endpoints=0 must be ...") as the file's key
    says it: "<where>: [options] endpoints=0 must be ..." ("<where>: rate=..." for a top-level key; a config's
    field that is no key of [options] keeps its class: "<where>: [options] FabricConfig: ...")."""
    try:
        yield
    except McsimError as exc:
        text = str(exc)
        head = CLASS_PREFIX.match(text)
        if head is None:
            raise
        rest = text[head.end() :]
        key = rest.partition("=")[0]
        if head[1] == "Faults":
            said = f"[options] {FAULTS}: {rest}"
        elif key in options:
            said = f"[options] {rest}"
        else:
            said = rest if head[1] == "Scenario" else f"[options] {text}"
        raise McsimError(f"{where}: {said}") from None


def from_folder(value: object, folder: Path) -> object:
    """A relative path written in a file, as a path from that file's ``folder`` (anything else as it is)."""
    if not isinstance(value, str) or os.path.isabs(value):
        return value
    return str(folder / value)


def topology_from_folder(value: object, folder: Path) -> object:
    """A topology file path (a name from topologies/ stays a name) as :func:`from_folder` gives it."""
    if not isinstance(value, str) or not ("/" in value or Path(value).suffix in TOPOLOGY_SUFFIXES):
        return value
    return from_folder(value, folder)


def leaf_of(g: nx.Graph, host: int) -> int:
    """The switch a host hangs from."""
    return min(g.neighbors(host))


def place(g: nx.Graph, ranks: int, placement: str, free: list[int], seed: int, where: str) -> tuple[int, ...]:
    """``ranks`` hosts among ``free`` (sorted) by the placement rule."""
    if ranks > len(free):
        raise McsimError(f"{where}: ranks={ranks} but only {len(free)} hosts are free (of {topologies.host_count(g)})")
    if placement == "contiguous":
        return tuple(free[:ranks])
    if placement == "random":
        rng = np.random.default_rng(seed)
        return tuple(int(h) for h in sorted(rng.choice(free, size=ranks, replace=False)))
    by_leaf: dict[int, list[int]] = {}
    for h in free:
        by_leaf.setdefault(leaf_of(g, h), []).append(h)
    queues = [by_leaf[leaf] for leaf in sorted(by_leaf)]
    chosen: list[int] = []
    while len(chosen) < ranks:
        for q in queues:
            if q and len(chosen) < ranks:
                chosen.append(q.pop(0))
    return tuple(chosen)


def _unknown(where: str, table: dict[str, Any], known: tuple[str, ...] | list[str]) -> None:
    extra = sorted(set(table) - set(known))
    if extra:
        raise McsimError(f"{where}: unknown key {extra[0]!r}; the keys are {', '.join(known)}")


def _training(where: str, name: str, hosts: tuple[int, ...], kind: str, table: dict[str, Any]) -> Job:
    """A training-iteration kind's job: its keys with their defaults, strings and integers checked."""
    values = {k: table.get(k, default) for k, default in KINDS[kind].items()}
    missing = [k for k, v in values.items() if v is None]
    if missing:
        raise McsimError(f"{where}: kind {kind!r} needs {missing[0]!r}")
    text: dict[str, str] = {}
    for key in (k for k in values if k not in ("layers", "prefetch", "bucket_layers")):
        value = values[key]
        if not isinstance(value, str):
            raise McsimError(f"{where}: {key}={value!r} must be a string, e.g. '16MiB', '200us', 'ring'")
        text[key] = value
    common = {
        "layers": require_int(where, "layers", values["layers"], lo=1),
        "bytes_per_layer": parse_size(text["bytes_per_layer"], what=f"{where}: bytes_per_layer"),
        "forward_ps": parse_time(text["forward"], what=f"{where}: forward"),
        "backward_ps": parse_time(text["backward"], what=f"{where}: backward"),
    }
    if kind == "fsdp":
        prefetch = require_int(where, "prefetch", values["prefetch"], lo=0)
        return fsdp_job(
            name, hosts, **common, prefetch=prefetch, allgather=text["allgather"], reduce_scatter=text["reduce_scatter"]
        )
    bucket = require_int(where, "bucket_layers", values["bucket_layers"], lo=1)
    return data_parallel_job(name, hosts, **common, bucket_layers=bucket, allreduce=text["allreduce"])


def trace_files(traces: object, ranks: int, folder: Path, where: str) -> list[Path]:
    """A Chakra job's trace files: ``traces`` a list of files (one per rank) or a prefix (files prefix.0.et or
    prefix.0.et.gz, prefix.1.et, ... for ``ranks`` ranks), relative to ``folder``; one line naming the first
    rank's file that neither name finds."""
    if isinstance(traces, str):
        return [_prefixed(traces, r, folder, where) for r in range(ranks)]
    if isinstance(traces, list) and all(isinstance(t, str) for t in traces):
        return [folder / t for t in traces]
    raise McsimError(f"{where}: traces={traces!r} must be a list of files, one per rank, or a prefix string")


def _prefixed(prefix: str, rank: int, folder: Path, where: str) -> Path:
    """Rank ``rank``'s trace file of a prefix: ``prefix.<rank>.et``, or gzipped ``.et.gz`` (as mcsim ships them)."""
    names = [folder / f"{prefix}.{rank}{suffix}" for suffix in TRACE_SUFFIXES]
    found = next((p for p in names if p.is_file()), None)
    if found is None:
        raise McsimError(
            f"{where}: traces={prefix!r}: no file {' or '.join(map(str, names))} (rank {rank}'s trace: a prefix "
            "names files <prefix>.0.et, <prefix>.1.et, ..., or .et.gz)"
        )
    return found


def _chakra(where: str, name: str, hosts: tuple[int, ...], table: dict[str, Any], folder: Path) -> tuple[Job, int]:
    """A Chakra job: its trace files (relative to the workload file's folder) and algorithms."""
    files = trace_files(table.get("traces"), len(hosts), folder, where)
    algorithms = {c: table.get(c, a) for c, a in DEFAULT_ALGORITHMS.items()}
    for c, a in algorithms.items():
        if not isinstance(a, str):
            raise McsimError(f"{where}: {c}={a!r} must be a string, e.g. {DEFAULT_ALGORITHMS[c]!r}")
    return chakra_job(name, hosts, files, algorithms)


def _background(where: str, name: str, hosts: tuple[int, ...], table: dict[str, Any], rate_bps: int, seed: int) -> Job:
    values = {k: table.get(k, default) for k, default in BACKGROUND_KEYS.items()}
    missing = [k for k, v in values.items() if v is None and k not in BACKGROUND_ONE_OF]
    if missing:
        raise McsimError(f"{where}: kind 'background' needs {missing[0]!r}")
    for key in ("pattern", "algorithm", *(("duration",) if values["duration"] is not None else ())):
        if not isinstance(values[key], str):
            raise McsimError(f"{where}: {key}={values[key]!r} must be a string, e.g. '64KiB', 'all_at_once', '2ms'")
    duration = values["duration"]
    return background_job(
        name,
        hosts,
        pattern=values["pattern"],
        bytes_per_peer=parse_size(values["bytes_per_peer"], what=f"{where}: bytes_per_peer"),
        load=values["load"],
        rounds=values["rounds"],
        duration_ps=None if duration is None else parse_time(duration, what=f"{where}: duration"),
        data_rate_bps=rate_bps,
        algorithm=values["algorithm"],
        seed=seed,
    )


def _hosts_of(g: nx.Graph, table: dict[str, Any], free: list[int], seed: int, at: str) -> tuple[int, ...]:
    """The job's hosts: ``hosts = [..]`` (``ranks``, if given too, its count), or ``ranks`` (a Chakra job: its
    trace list's length) by its placement."""
    if "hosts" in table:
        hosts = table["hosts"]
        if not isinstance(hosts, list) or not all(is_integer(h) and h >= 0 for h in hosts):
            raise McsimError(
                f"{at}: hosts={shown_value(hosts)} must be a list of host numbers, e.g. hosts = [0, 1, 2, 3]"
            )
        if "placement" in table:
            raise McsimError(f"{at}: give hosts = [..] (a list) or a placement, not both")
        if "ranks" in table and table["ranks"] != len(hosts):
            raise McsimError(
                f"{at}: ranks={shown_value(table['ranks'])} but hosts holds {len(hosts)} hosts; give one of them (the "
                "ranks are the hosts, in order), or both agreeing"
            )
        return tuple(hosts)
    placement = table.get("placement", "contiguous")
    pick(f"placement of {at}", placement, {p: p for p in PLACEMENTS})
    traces = table.get("traces")
    ranks = table.get("ranks", len(traces) if isinstance(traces, list) else None)
    return place(g, require_int(at, "ranks", ranks, lo=2), placement, free, seed, at)


def _data_rate_bps(topo: str, rate: str | None, where: str) -> int:
    """The hosts' data rate of the workload's fabric (host 0's link, at ``rate`` if given)."""
    if rate is not None:
        parse_rate(rate, what=f"{where}: rate")
    return Setup(topology=topo, rate=rate).data_rate_bps


def job_name(table: dict[str, Any], index: int) -> object:
    """The name of the job of a [[jobs]] table at ``index`` (its ``name``, else ``job<index>``)."""
    return table.get("name", f"job{index}")


def workload_of(data: dict[str, Any], where: str, folder: Path | None = None) -> Workload:
    """The Workload of a parsed file (McsimError, one line, for anything else); ``folder``: where the
    file's relative paths start (default: the current folder)."""
    _unknown(where, data, TOP_KEYS)
    folder = folder or Path()
    topo = topology_from_folder(data.get("topology", "testbed-188"), folder)
    rate = data.get("rate")
    if not isinstance(topo, str) or (rate is not None and not isinstance(rate, str)):
        raise McsimError(f"{where}: topology and rate must be strings (e.g. 'testbed-188', '56Gbps')")
    seed = require_int(where, "seed", data.get("seed", 1), lo=0, hi=MAX_SEED)
    options = _options(where, data.get("options", {}), folder)
    tables = data.get("jobs")
    if not isinstance(tables, list) or not tables or not all(isinstance(t, dict) for t in tables):
        raise McsimError(f"{where}: needs [[jobs]] tables, one per job")
    try:
        g = topologies.resolve(topo)
    except McsimError as exc:
        raise McsimError(f"{where}: {exc}") from None
    free = list(range(topologies.host_count(g)))
    jobs: list[Job] = []
    notes = []
    for i, table in enumerate(tables):
        at = f"{where}: jobs[{i}]"
        job, note = _job(g, table, i, free, topo, rate, seed, where, folder)  # a generator's line: "job 'a': .."
        free = [h for h in free if h not in set(job.hosts)]
        jobs.append(job)
        notes += note
        steps = sum(len(j.steps) for j in jobs)
        if steps > MAX_JOB_STEPS:
            raise McsimError(
                f"{at}: the jobs hold {steps} steps together; a workload's jobs hold at most {MAX_JOB_STEPS} "
                "together, as a job's (mcsim.workloads.job.MAX_JOB_STEPS)"
            )
    return Workload(
        topology=topo, rate=rate, seed=seed, jobs=tuple(jobs), notes=tuple(notes), options=options, where=where
    )


def _job(
    g: nx.Graph,
    table: dict[str, Any],
    i: int,
    free: list[int],
    topo: str,
    rate: str | None,
    seed: int,
    where: str,
    folder: Path,
) -> tuple[Job, list[str]]:
    """The job of the [[jobs]] table at ``i`` (on hosts among ``free``; seed + i its random draws) and the notes
    reading it made."""
    at = f"{where}: jobs[{i}]"
    seed += i
    kind: Any = table.get("kind")
    pick(f"kind of {at}", kind, KINDS)
    _unknown(at, table, [*JOB_KEYS, *KINDS[kind]])
    name = job_name(table, i)
    if not isinstance(name, str) or not name:
        raise McsimError(f"{at}: name={name!r} must be a non-empty string")
    units = require_int(at, "compute_units", table.get("compute_units", 1), lo=0, hi=MAX_COMPUTE_UNITS)
    chosen = _hosts_of(g, table, free, seed, at)
    notes = []
    if kind == "chakra":
        job, dropped = _chakra(at, name, chosen, table, folder)
        if dropped:
            notes.append(f"job {name!r}: {dropped} dependencies on nodes its trace does not hold were dropped")
    elif kind == "background":
        with users_words(where, {}):
            rate_bps = _data_rate_bps(topo, rate, where)
        job = _background(at, name, chosen, table, rate_bps, seed)
    else:
        job = _training(at, name, chosen, kind, table)
    if units != job.compute_units:  # a replaced Job checks every step again: only when it changes
        job = dataclasses.replace(job, compute_units=units)
    return job, notes


def _options(where: str, table: object, folder: Path) -> dict[str, Any]:
    """[options] as run_jobs' keywords (tables as configs, ``faults`` as the CLI's --faults file takes them); one
    line for an unknown or a step's own keyword."""
    table = codec.require_dict(f"{where}: [options]", table)
    for key in table:
        known("run option", key, RUN_OPTIONS, f"{where}: [options]")
    out = {}
    for key, value in table.items():
        try:
            out[key] = faults_of(value, folder) if key == FAULTS else value_of(key, value)
        except McsimError as exc:
            raise McsimError(f"{where}: [options] {key}: {exc}") from None
    return out


def faults_of(value: object, folder: Path) -> Faults:
    """[options] faults: a faults file (its path relative to the workload file) or a table in its format
    (mcsim.config.faults_file: times with units, "forever"), as ``--faults FILE.toml`` takes it."""
    if isinstance(value, str):
        return load_faults(str(from_folder(value, folder)))
    if isinstance(value, dict):
        try:
            return Faults(**faults_from_toml(value))
        except McsimError as exc:  # said under "[options] faults: " (as a file's: under its name)
            raise McsimError(str(exc).removeprefix("Faults: ")) from None
    raise McsimError(
        f"faults={shown_value(value)} must be a faults file (its path) or a table in its format, e.g. "
        f"faults = {{ {EXAMPLES['link_down']} }}"
    )


def read_workload(path: str | Path) -> Workload:
    where = str(path)
    return workload_of(toml_text.read_document(path, where), where, Path(path).parent)
