# SPDX-License-Identifier: GPL-2.0-only
"""A workload file (``mcsim workload FILE.toml``): the fabric and its jobs, read as data with tomllib.

::

    topology = "testbed-188"      # a name from topologies/ or a file
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

Jobs are placed in the file's order, each on hosts no earlier job has: ``contiguous`` the lowest free
hosts, ``interleaved`` one free host of each leaf switch in turn (leaf by leaf, lowest first),
``random`` a sample of the free hosts drawn with the seed, or ``hosts = [...]`` exactly those. An
unknown key, kind or placement is one line naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from mcsim import topology as topologies
from mcsim.errors import McsimError, pick, require_int
from mcsim.units import parse_size, parse_time
from mcsim.util import toml_text
from mcsim.workloads.job import Job
from mcsim.workloads.training import data_parallel_job, fsdp_job

PLACEMENTS = ("contiguous", "interleaved", "random")  # or hosts = [...]
TOP_KEYS = ("topology", "rate", "seed", "jobs")
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
JOB_KEYS = ("name", "ranks", "placement", "hosts", "kind")
# a job's kind -> its keys (None: required) and their defaults
KINDS: dict[str, dict[str, Any]] = {"fsdp": FSDP_KEYS, "data_parallel": DATA_PARALLEL_KEYS}


@dataclass(frozen=True, slots=True)
class Workload:
    """A workload file's fabric and jobs (placed)."""

    topology: str
    rate: str | None
    seed: int
    jobs: tuple[Job, ...]


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


def workload_of(data: dict[str, Any], where: str) -> Workload:
    """The Workload of a parsed file (McsimError, one line, for anything else)."""
    _unknown(where, data, TOP_KEYS)
    topo = data.get("topology", "testbed-188")
    rate = data.get("rate")
    if not isinstance(topo, str) or (rate is not None and not isinstance(rate, str)):
        raise McsimError(f"{where}: topology and rate must be strings (e.g. 'testbed-188', '56Gbps')")
    seed = require_int(where, "seed", data.get("seed", 1), lo=0)
    tables = data.get("jobs")
    if not isinstance(tables, list) or not tables or not all(isinstance(t, dict) for t in tables):
        raise McsimError(f"{where}: needs [[jobs]] tables, one per job")
    g = topologies.resolve(topo)
    free = list(range(topologies.host_count(g)))
    jobs = []
    for i, table in enumerate(tables):
        at = f"{where}: jobs[{i}]"
        kind = table.get("kind")
        pick(f"kind of {at}", kind, KINDS)
        _unknown(at, table, [*JOB_KEYS, *KINDS[kind]])
        name = table.get("name", f"job{i}")
        if not isinstance(name, str) or not name:
            raise McsimError(f"{at}: name={name!r} must be a non-empty string")
        if "hosts" in table:
            hosts = table["hosts"]
            if "placement" in table or not isinstance(hosts, list):
                raise McsimError(f"{at}: give hosts = [..] (a list) or a placement, not both")
            chosen = tuple(hosts)
        else:
            placement = table.get("placement", "contiguous")
            pick(f"placement of {at}", placement, {p: p for p in PLACEMENTS})
            ranks = require_int(at, "ranks", table.get("ranks"), lo=2)
            chosen = place(g, ranks, placement, free, seed + i, at)
        free = [h for h in free if h not in set(chosen)]
        jobs.append(_training(at, name, chosen, kind, table))
    return Workload(topology=topo, rate=rate, seed=seed, jobs=tuple(jobs))


def read_workload(path: str | Path) -> Workload:
    where = str(path)
    return workload_of(toml_text.read_document(path, where), where)
