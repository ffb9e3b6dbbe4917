# SPDX-License-Identifier: GPL-2.0-only
"""Topology files: ``.toml`` (a builder and its parameters, units at the boundary) and ``.graphml``.

A ``.toml`` file names a builder and its parameters, with units at the boundary::

    name = "testbed-188"
    description = "..."
    [builder]
    name = "leaf_spine"
    leaves = 12
    rate = "56.25Gbps"     # -> rate_bps, parsed by mcsim.units.parse_rate
    encoding = "64b/66b"   # -> encoding_data_bits/encoding_line_bits, by mcsim.topology.physics.parse_encoding
    delay = "100ns"        # -> delay_ps, parsed by mcsim.units.parse_time

A ``.graphml`` file holds any graph that :func:`mcsim.topology.validate` accepts.
"""

from __future__ import annotations

import difflib
import inspect
import io
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import networkx as nx

from mcsim.errors import McsimError, pick
from mcsim.topology.builders import BUILDERS
from mcsim.topology.physics import EDGE_ATTRS, format_encoding, parse_encoding
from mcsim.topology.rules import validate
from mcsim.units import format_rate, format_time, parse_rate, parse_time
from mcsim.util import package_data, toml_text

TOPOLOGIES_ENV = "MCSIM_TOPOLOGIES"  # more folders of ready topologies, os.pathsep between them
# Graph attrs kept in a GraphML file; "params" is stored there as a JSON string.
GRAPH_ATTRS = ("name", "description", "builder", "params")
# [builder] keys with units: the file key and the builder's keyword arguments it fills.
_UNIT_KEYS = {
    "rate": ("rate_bps",),
    "tor_uplink_rate": ("tor_uplink_rate_bps",),
    "agg_uplink_rate": ("agg_uplink_rate_bps",),
    "nvlink_rate": ("nvlink_rate_bps",),
    "delay": ("delay_ps",),
    "encoding": ("encoding_data_bits", "encoding_line_bits"),
}
_RATE_KEYS = tuple(key for key in _UNIT_KEYS if key.endswith("rate"))  # rates: "400Gbps" -> <key>_bps
_TOP_KEYS = ("name", "description", "builder")


def _builder_keys(name: str) -> tuple[list[str], set[str]]:
    """Return the [builder] keys a builder accepts (in signature order) and those it requires."""
    params = inspect.signature(BUILDERS[name]).parameters.values()
    keys: list[str] = []
    required: set[str] = set()
    for p in params:
        unit_key = next((k for k, names in _UNIT_KEYS.items() if p.name in names), None)
        key = unit_key or p.name
        if key not in keys:
            keys.append(key)
        if p.default is inspect.Parameter.empty:
            required.add(key)
    return keys, required


def _reject_unknown(where: str, what: str, key: str, accepted: Sequence[str]) -> None:
    """Raise for a file key that is not in ``accepted``: list them, suggest the nearest."""
    near = "".join(f"; did you mean {m!r}?" for m in difflib.get_close_matches(key, accepted, 1))
    raise McsimError(f"{where}: {what} {key!r} is not accepted; accepted keys: {', '.join(sorted(accepted))}{near}")


def call_builder(name: str, table: Mapping[str, Any], *, where: str = "topology") -> nx.Graph:
    """Call builder ``name`` with the keys of a [builder] table (units as strings, see module doc)."""
    fn = pick("topology builder", name, BUILDERS)
    keys, required = _builder_keys(name)
    for key in table:
        if key not in keys:
            _reject_unknown(where, f"[builder] {name} key", key, keys)
    for key in keys:
        if key in required and key not in table:
            raise McsimError(
                f"{where}: [builder] for {name} needs key {key!r}; required keys: {', '.join(sorted(required))}"
            )
    kwargs: dict[str, Any] = {}
    for key, value in table.items():
        if key in _RATE_KEYS:
            kwargs[f"{key}_bps"] = parse_rate(value, what=f"{where}: {key}")
        elif key == "delay":
            kwargs["delay_ps"] = parse_time(value, what=f"{where}: delay")
        elif key == "encoding":
            if not isinstance(value, str):
                raise McsimError(f"{where}: encoding={value!r} must be a string; e.g. '64b/66b' or 'none'")
            kwargs["encoding_data_bits"], kwargs["encoding_line_bits"] = parse_encoding(value)
        else:
            kwargs[key] = value
    try:
        return fn(**kwargs)
    except McsimError as exc:
        raise McsimError(f"{where}: {exc}") from None


def _load_toml(data: bytes, where: str, stem: str) -> nx.Graph:
    doc = toml_text.loads(data, where)
    for key in doc:
        if key not in _TOP_KEYS:
            _reject_unknown(where, "key", key, _TOP_KEYS)
    table = doc.get("builder")
    if not isinstance(table, dict):
        raise McsimError(f'{where}: needs a [builder] table; e.g. [builder] name = "fat_tree" k = 4 ...')
    table = dict(table)
    name = table.pop("name", None)
    if not isinstance(name, str):
        raise McsimError(f"{where}: [builder] name={name!r} must name a builder; choose one of {', '.join(BUILDERS)}")
    g = call_builder(name, table, where=where)
    g.graph["name"] = doc.get("name", stem)
    if "description" in doc:
        g.graph["description"] = doc["description"]
    for key in ("name", "description"):
        if key in g.graph and not isinstance(g.graph[key], str):
            raise McsimError(f"{where}: {key}={g.graph[key]!r} must be a string")
    return g


def _int_attr(where: str, key: str, value: object) -> object:
    """A GraphML value as an int: an integer's text, or a float that is a whole number (3.0, 4e18);
    NaN, infinities and fractions are refused here, other types are left to validate()."""
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise McsimError(f"{where}: {key}={value!r} must be an integer") from None
    if isinstance(value, float):
        if not value.is_integer():
            raise McsimError(f"{where}: {key}={value!r} must be an integer")
        return int(value)
    return value


def _load_graphml(data: bytes, where: str, stem: str) -> nx.Graph:
    try:
        raw = nx.read_graphml(io.BytesIO(data))
    except Exception as exc:  # networkx raises several types for malformed files
        raise McsimError(f"{where}: not a readable GraphML file ({exc})") from None
    if raw.is_multigraph() or raw.is_directed():
        raise McsimError(f"{where}: must be an undirected graph without repeated edges; use the 'parallel' attribute")
    ids: dict[Any, int] = {}
    for node in raw.nodes:
        try:
            ids[node] = int(node)
        except ValueError:
            raise McsimError(f"{where}: node id {node!r} must be an integer (hosts 0..H-1, then switches)") from None
    g: nx.Graph[int] = nx.Graph()
    for key in GRAPH_ATTRS:
        if key in raw.graph:
            g.graph[key] = raw.graph[key]
    if "params" in g.graph:
        try:
            g.graph["params"] = json.loads(g.graph["params"])
        except (TypeError, json.JSONDecodeError):
            raise McsimError(f"{where}: graph attribute params must be a JSON object") from None
    g.graph.setdefault("name", stem)
    for node in sorted(raw.nodes, key=ids.__getitem__):
        attrs = dict(raw.nodes[node])
        if "tier" in attrs:
            attrs["tier"] = _int_attr(f"{where}: node {node}", "tier", attrs["tier"])
        for key in ("latency_ps", "aggregation_bps"):  # a switch's own (rules.check_switch_attrs)
            if key in attrs:
                attrs[key] = _int_attr(f"{where}: node {node}", key, attrs[key])
        g.add_node(ids[node], **attrs)
    for u, v, attrs in sorted(raw.edges(data=True), key=lambda e: sorted((ids[e[0]], ids[e[1]]))):
        attrs = {"encoding_data_bits": 1, "encoding_line_bits": 1, "parallel": 1, **attrs}
        for key in EDGE_ATTRS:
            if key in attrs:
                attrs[key] = _int_attr(f"{where}: link {u}-{v}", key, attrs[key])
        g.add_edge(*sorted((ids[u], ids[v])), **attrs)
    return g


_LOADERS: dict[str, Callable[[bytes, str, str], nx.Graph]] = {".toml": _load_toml, ".graphml": _load_graphml}


def read_topology_file(path: str | Path) -> nx.Graph:
    """Read a topology from a ``.toml`` (builder + parameters) or ``.graphml`` file and validate it.

    Raises
    ------
    McsimError
        One line naming the file: for a file that is missing, a folder, unreadable, binary, not
        TOML or GraphML, an unknown suffix, an unknown builder or builder key, or a graph that
        :func:`validate` rejects (e.g. a value past mcsim's limits: see :func:`mcsim.topology.physics.check_link`).
    """
    path = Path(path)
    loader = pick("topology file type", path.suffix, _LOADERS)
    data = toml_text.read_bytes(path, f"topology file {toml_text.shown_path(path)}", toml_text.MAX_FABRIC_FILE_BYTES)
    name = path.name if len(path.name) <= toml_text.MAX_SHOWN_PATH else toml_text.shown_path(path.name)
    where = f"topology {name}"
    g = loader(data, where, path.stem)
    validate(g, where=where)
    return g


def _user_dirs() -> list[Path]:
    env = os.environ.get(TOPOLOGIES_ENV, "")
    return [Path(part).expanduser() for part in env.split(os.pathsep) if part]


def topology_dirs() -> tuple[Path, ...]:
    """The folders whose files are ready topologies, by name: those in $MCSIM_TOPOLOGIES (separated
    by os.pathsep) that are folders, in that order, then mcsim's own (the package's topologies/).

    A name in $MCSIM_TOPOLOGIES that is not a folder is left out here (so listing never fails: the
    CLI lists the names in its help); :func:`resolve` reports it when it looks a topology up by name.
    """
    user = [folder for folder in _user_dirs() if folder.is_dir()]
    return (*user, package_data.package_dir(package_data.TOPOLOGIES))


def _check_user_dirs() -> None:
    """Raise McsimError (one line) for a name in $MCSIM_TOPOLOGIES that is not a readable folder."""
    for folder in _user_dirs():
        if not folder.is_dir():
            raise McsimError(f"${TOPOLOGIES_ENV} names {toml_text.shown_path(folder)}, which is not a folder")
        try:
            next(folder.iterdir(), None)
        except OSError as exc:
            raise McsimError(
                f"${TOPOLOGIES_ENV} names {toml_text.shown_path(folder)}, which cannot be read ({exc.strerror})"
            ) from None


def ready() -> dict[str, Path]:
    """Ready topologies: name (the file's stem) -> file, from :func:`topology_dirs`; where two
    folders hold the same name, the first folder's file wins (an unreadable folder gives none)."""
    found: dict[str, Path] = {}
    for folder in topology_dirs():
        try:
            paths = sorted(folder.iterdir())
        except OSError:
            continue  # resolve() reports it (_check_user_dirs)
        for path in paths:
            if path.suffix in _LOADERS and path.is_file():
                found.setdefault(path.stem, path)
    return dict(sorted(found.items()))


def available() -> tuple[str, ...]:
    """Return the names of the ready topologies (mcsim's own and those in $MCSIM_TOPOLOGIES); never
    raises for a bad $MCSIM_TOPOLOGIES (see :func:`topology_dirs`)."""
    return tuple(ready())


def resolve(name_or_path: str | Path) -> nx.Graph:
    """Load a ready topology by bare name ("testbed-188" -> topologies/testbed-188.toml) or a file path.

    A bare name first checks $MCSIM_TOPOLOGIES: a name there that is not a folder is one McsimError line.
    """
    text = str(name_or_path)
    if isinstance(name_or_path, Path) or Path(text).suffix in _LOADERS or "/" in text:
        return read_topology_file(text)
    _check_user_dirs()
    files = ready()
    return read_topology_file(files[pick("topology", text, {name: name for name in files})])


def _exact(value: int, fmt: Callable[[int], str], parse: Callable[[str], int], base: str) -> str:
    text = fmt(value)
    return text if parse(text) == value else f"{value}{base}"


def _same_graph(a: nx.Graph, b: nx.Graph) -> bool:
    return dict(a.nodes(data=True)) == dict(b.nodes(data=True)) and {
        (min(u, v), max(u, v)): d for u, v, d in a.edges(data=True)
    } == {(min(u, v), max(u, v)): d for u, v, d in b.edges(data=True)}


def _toml_text(g: nx.Graph) -> str:
    builder, params = g.graph.get("builder"), g.graph.get("params")
    if builder not in BUILDERS or not isinstance(params, dict):
        raise McsimError(f"topology: graph {g.graph.get('name')!r} was not made by a builder; save it as .graphml")
    try:
        rebuilt = BUILDERS[builder](**params)
    except TypeError as exc:
        raise McsimError(f"topology: graph params do not fit {builder} ({exc}); save it as .graphml") from None
    if not _same_graph(g, rebuilt):
        raise McsimError(
            f"topology: graph {g.graph.get('name')!r} was changed after {builder} built it; save it as .graphml"
        )
    lines = [f"name = {toml_text.value(g.graph.get('name', rebuilt.graph['name']))}"]
    if "description" in g.graph:
        lines.append(f"description = {toml_text.value(g.graph['description'])}")
    lines += ["", "[builder]", f"name = {toml_text.value(builder)}"]
    keys, _ = _builder_keys(builder)
    for key in keys:
        if key in _RATE_KEYS and params.get(f"{key}_bps") is not None:
            value = toml_text.value(_exact(params[f"{key}_bps"], format_rate, parse_rate, "bps"))
        elif key == "delay":
            value = toml_text.value(_exact(params["delay_ps"], format_time, parse_time, "ps"))
        elif key == "encoding":
            value = toml_text.value(format_encoding(params["encoding_data_bits"], params["encoding_line_bits"]))
        elif params.get(key) is None:
            continue
        else:
            value = toml_text.value(params[key])
        lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


def write_topology_file(g: nx.Graph, path: str | Path) -> None:
    """Write ``g`` to ``path``: ``.graphml`` for any valid graph, ``.toml`` for a graph a builder made.

    The GraphML file keeps every node and edge attribute and the graph attrs name, description,
    builder and params (the latter as a JSON string); :func:`read_topology_file` gives back an identical graph.
    """
    validate(g)
    path = Path(path)
    pick("topology file type", path.suffix, _LOADERS)
    if path.suffix == ".toml":
        path.write_text(_toml_text(g), encoding="utf-8")
        return
    out: nx.Graph[int] = nx.Graph()
    for key in GRAPH_ATTRS:
        if key in g.graph:
            out.graph[key] = json.dumps(g.graph[key], sort_keys=True) if key == "params" else g.graph[key]
    for node in sorted(g.nodes):
        out.add_node(node, **g.nodes[node])
    for u, v, attrs in sorted(((min(u, v), max(u, v), d) for u, v, d in g.edges(data=True)), key=lambda e: e[:2]):
        out.add_edge(u, v, **attrs)
    nx.write_graphml(out, path)
