# SPDX-License-Identifier: GPL-2.0-only
"""Configs as plain data: the canonical dict of FabricConfig, RdmaConfig (with its RcConfig and
processor), Faults and a topology graph (GraphTopology), and back (for Scenario.to_dict / from_dict).

Canonical: only JSON types (dict, list, str, int, float, bool, None), every field present (defaults
included), the same config always gives the same dict (sorted where order carries no meaning).
Reading back checks the shape first, then lets each config's own validation speak: a foreign or
corrupt dict is one McsimError line naming the key.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import networkx as nx
import numpy as np

from mcsim import topology
from mcsim.config import congestion
from mcsim.config.dpa import DpaConfig
from mcsim.config.fabric import Faults
from mcsim.config.rdma import HostCpuConfig, RcConfig
from mcsim.errors import McsimError, is_integer, pick, shown_value
from mcsim.units import parse_rate, parse_size

# completion processor configs by their canonical name ("kind" in the dict)
PROCESSORS: dict[str, type] = {"host_cpu": HostCpuConfig, "dpa": DpaConfig}
T = TypeVar("T")


MAX_DEPTH = 32  # nesting of plain data read back: a canonical Scenario dict nests 5 deep (topology params)


def require_shallow(where: str, data: object, max_depth: int = MAX_DEPTH) -> None:
    """Raise McsimError (one line) if lists and dicts in ``data`` nest deeper than ``max_depth``: deeper
    data is no mcsim dict, and its repr or JSON would pass Python's recursion limit (RecursionError)."""
    level: list[object] = [data]
    for _ in range(max_depth + 1):
        level = [x for v in level for x in _children(v)]
        if not level:
            return
    raise McsimError(f"{where}: data nested more than {max_depth} deep is not a mcsim dict")


def _children(value: object) -> list[object]:
    if isinstance(value, Mapping):
        return [*value.keys(), *value.values()]
    if isinstance(value, list | tuple):
        return list(value)
    return []


def require_dict(where: str, data: object, keys: tuple[str, ...] | None = None) -> Mapping[str, Any]:
    """``data`` as a mapping of str keys; with ``keys``, exactly those (a missing or foreign key is one line)."""
    if not isinstance(data, Mapping) or not all(isinstance(k, str) for k in data):
        raise McsimError(f"{where}: {type(data).__name__} {shown_value(data)} must be a dict with string keys")
    if keys is not None:
        for key in data:
            if key not in keys:
                pick(f"key of {where}", key, dict.fromkeys(keys))
        missing = [k for k in keys if k not in data]
        if missing:
            raise McsimError(f"{where}: missing {', '.join(map(repr, missing))} (a canonical dict has every key)")
    return data


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def config_to_dict(cfg: Any) -> dict[str, Any]:
    """A config dataclass as its canonical dict (nested RcConfig and processor included)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        if f.name == "processor":
            kind = next((k for k, cls in PROCESSORS.items() if type(value) is cls), None)
            if kind is None:
                raise McsimError(f"{type(cfg).__name__}: processor {type(value).__name__} has no canonical form")
            out[f.name] = {"kind": kind, **config_to_dict(value)}
        elif f.name == "congestion":  # as the text keys say it (congestion_control, dcqcn_*, hpcc_*)
            out |= congestion.to_text(value)
        elif dataclasses.is_dataclass(value):
            out[f.name] = config_to_dict(value)
        else:
            out[f.name] = _plain(value)
    return out


def config_from_dict(cls: type[T], data: object, where: str) -> T:
    """The config of type ``cls`` from its canonical dict; every field must be there."""
    names = tuple(
        n
        for f in dataclasses.fields(cls)  # type: ignore[arg-type]
        for n in (congestion.text_keys() if f.name == "congestion" else (f.name,))
    )
    fields = congestion.split_text(require_dict(where, data, names), where)
    if "rc" in fields:
        fields["rc"] = config_from_dict(RcConfig, fields["rc"], f"{where}.rc")
    if "processor" in fields:
        proc = require_dict(f"{where}.processor", fields["processor"])
        kind = pick(f"{where}.processor kind", proc.get("kind"), PROCESSORS)  # type: ignore[arg-type]
        rest = {k: v for k, v in proc.items() if k != "kind"}
        fields["processor"] = config_from_dict(kind, rest, f"{where}.processor")
    return cls(**fields)


@dataclass(frozen=True, slots=True)
class Plain:
    """How one field of a dataclass is written in its canonical dict (a field's ``metadata[PLAIN]``):
    under ``key`` (None: the field's name), as ``write(owner, value)`` returns it and read back by
    ``read(data, label)`` (label: "<where>: <key>", for its one-line messages); None: as it is."""

    key: str | None = None
    write: Callable[[Any, Any], Any] | None = None
    read: Callable[[Any, str], Any] | None = None


PLAIN = "plain"  # the metadata key of a field's Plain


def _plain_of(f: dataclasses.Field[Any]) -> Plain:
    plain = f.metadata.get(PLAIN, Plain())
    return plain if isinstance(plain, Plain) else Plain()


def plain_keys(cls: type) -> tuple[str, ...]:
    """The canonical dict's keys of a dataclass's fields, in field order."""
    return tuple(_plain_of(f).key or f.name for f in dataclasses.fields(cls))


def fields_to_dict(obj: Any) -> dict[str, Any]:
    """Every field of a dataclass instance under its canonical key, as its Plain writes it."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        plain, value = _plain_of(f), getattr(obj, f.name)
        out[plain.key or f.name] = value if plain.write is None else plain.write(obj, value)
    return out


def fields_from_dict(cls: type, data: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The keywords of ``cls`` from a canonical dict whose keys were checked (:func:`require_dict`)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        plain = _plain_of(f)
        key = plain.key or f.name
        out[f.name] = data[key] if plain.read is None else plain.read(data[key], f"{where}: {key}")
    return out


FAULTS_KEYS = ("drops", "link_down", "link_loss", "reroute_delay_ps")


def faults_to_dict(faults: Faults) -> dict[str, Any]:
    """``link_loss`` as sorted ``[u, v, p]`` rows (JSON keys are strings), rows as lists."""
    return {
        "drops": [list(r) for r in faults.drops],
        "link_down": [list(r) for r in faults.link_down],
        "link_loss": sorted([int(u), int(v), p] for (u, v), p in faults.link_loss.items()),
        "reroute_delay_ps": faults.reroute_delay_ps,
    }


def faults_from_dict(data: object, where: str) -> Faults:
    d = require_dict(where, data, FAULTS_KEYS)
    rows = {}
    for key in FAULTS_KEYS[:3]:
        if not isinstance(d[key], list) or not all(isinstance(r, list) for r in d[key]):
            raise McsimError(f"{where}: {key}={shown_value(d[key])} must be a list of lists")
        rows[key] = [tuple(r) for r in d[key]]
    for i, row in enumerate(rows["link_loss"]):
        if len(row) != 3:
            raise McsimError(f"{where}: link_loss[{i}]={list(row)!r} must be [u, v, p]")
    return Faults(
        link_loss={(u, v): p for u, v, p in rows["link_loss"]},
        drops=rows["drops"],
        link_down=rows["link_down"],
        reroute_delay_ps=d["reroute_delay_ps"],
    )


GRAPH_KEYS = ("edges", "graph", "nodes")


def graph_to_dict(g: nx.Graph[Any]) -> dict[str, Any]:
    """Node-link data of a topology graph: graph attrs, nodes by id, edges (u < v) sorted."""
    return {
        "graph": {k: _plain(v) for k, v in sorted(g.graph.items())},
        "nodes": [{"id": n, **{k: _plain(v) for k, v in sorted(g.nodes[n].items())}} for n in sorted(g.nodes)],
        "edges": [
            {"source": u, "target": v, **{k: _plain(a) for k, a in sorted(d.items())}}
            for u, v, d in sorted((min(u, v), max(u, v), d) for u, v, d in g.edges(data=True))
        ],
    }


def graph_from_dict(data: object, where: str) -> nx.Graph[Any]:
    """The graph of :func:`graph_to_dict` data, validated (topology.validate)."""
    d = require_dict(where, data, GRAPH_KEYS)
    g: nx.Graph[int] = nx.Graph()
    g.graph.update(require_dict(f"{where}.graph", d["graph"]))
    for key, item_keys in (("nodes", ("id",)), ("edges", ("source", "target"))):
        if not isinstance(d[key], list):
            raise McsimError(f"{where}: {key} must be a list")
        for i, item in enumerate(d[key]):
            attrs = dict(require_dict(f"{where}.{key}[{i}]", item))
            ids = [attrs.pop(k, None) for k in item_keys]
            if None in ids:
                raise McsimError(f"{where}.{key}[{i}]: needs {' and '.join(item_keys)}")
            if key == "nodes":
                g.add_node(ids[0], **attrs)
            else:
                g.add_edge(ids[0], ids[1], **attrs)
    topology.validate(g)
    return g


@dataclass(frozen=True, slots=True)
class GraphTopology:
    """A topology given as a networkx graph, kept as its canonical node-link JSON: immutable and
    compared by content (two equal graphs give equal Scenarios). :meth:`graph` builds a new graph."""

    node_link_json: str

    @classmethod
    def of(cls, g: nx.Graph[Any]) -> GraphTopology:
        if not isinstance(g, nx.Graph) or g.is_directed() or g.is_multigraph():
            raise McsimError(f"Scenario: topology={type(g).__name__} must be an undirected simple nx.Graph")
        topology.validate(g)
        try:
            data = graph_to_dict(g)
        except RecursionError:
            raise McsimError("Scenario: topology: an attribute of the graph is nested too deep for JSON") from None
        return cls(canonical_json(data, "Scenario: topology"))

    def to_dict(self) -> dict[str, Any]:
        return dict(json.loads(self.node_link_json))

    def graph(self) -> nx.Graph[Any]:
        return graph_from_dict(self.to_dict(), "Scenario: topology")

    def __repr__(self) -> str:
        name = self.to_dict()["graph"].get("name", "graph")
        return f"GraphTopology({name!r}, sha256 {hashlib.sha256(self.node_link_json.encode()).hexdigest()[:12]})"


def canonical_json(data: Any, where: str) -> str:
    """Sorted keys, no spaces, no NaN: equal data gives equal text."""
    try:
        return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False, default=_json_number)
    except (TypeError, ValueError) as exc:
        raise McsimError(f"{where}: has no JSON form ({exc})") from None
    except RecursionError:
        raise McsimError(f"{where}: has no JSON form (nested too deep)") from None


def _json_number(value: object) -> int | float:
    if is_integer(value):
        return int(value)  # type: ignore[call-overload, no-any-return]
    if isinstance(value, np.floating):
        return float(value)
    raise TypeError(f"{type(value).__name__} {value!r} is not JSON data")


# the Plains of fields that are not JSON data as given (mcsim.scenario's): written in the canonical
# dict in the units their keys name, read back with a one-line message for a foreign value
def _read_bps(data: Any, label: str) -> str | None:
    if data is not None and not is_integer(data):
        raise McsimError(f"{label}={data!r} must be an integer (bit/s) or null")
    return None if data is None else f"{data}bps"


def _read_bytes(data: Any, label: str) -> Any:
    if not is_integer(data):
        raise McsimError(f"{label}={data!r} must be an integer (bytes)")
    return data


def rate_plain(key: str) -> dict[str, Plain]:
    """A rate string ("56Gbps") written as an integer bit/s under ``key``; None stays null."""
    return {PLAIN: Plain(key, lambda _, v: None if v is None else parse_rate(v), _read_bps)}


def size_plain(key: str) -> dict[str, Plain]:
    """A size ("64KiB" or bytes) written as an integer of bytes under ``key``."""
    return {PLAIN: Plain(key, lambda _, v: parse_size(v), _read_bytes)}


def config_plain(cls: type) -> dict[str, Plain]:
    """A config dataclass written as its canonical dict (:func:`config_to_dict`)."""
    return {PLAIN: Plain(None, lambda _, v: config_to_dict(v), functools.partial(config_from_dict, cls))}


TOPOLOGY_PLAIN = Plain(  # a topology's name or file, else its graph's node-link data
    None,
    lambda _, v: v if isinstance(v, str) else v.to_dict(),
    lambda d, label: d if isinstance(d, str) else graph_from_dict(d, label),
)
FAULTS_PLAIN = Plain(
    None,
    lambda _, v: None if v is None else faults_to_dict(v),
    lambda d, label: None if d is None else faults_from_dict(d, label),
)
