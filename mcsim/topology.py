# SPDX-License-Identifier: GPL-2.0-only
"""Fabrics as networkx graphs: builders, validation, files and a summary.

Graph conventions
-----------------
An undirected ``networkx.Graph`` without multi-edges. Hosts are nodes ``0..H-1`` (they are the
ranks), switches ``H..H+S-1``.

- node attrs: ``role`` ("host" or "switch"), ``tier`` (0 host, 1 leaf/edge, 2 spine/aggregation,
  3 core), ``name`` ("h0", "leaf3", "spine1", "edge0", "agg2", "core5").
- edge attrs: ``rate_bps`` (signalling rate), ``encoding_data_bits`` and ``encoding_line_bits``
  (64 and 66 for FDR, 1 and 1 for none), ``delay_ps``, ``parallel`` (number of parallel links
  between the two nodes, >= 1); all ints.
- graph attrs: ``name``; ``builder`` and ``params`` (the builder's keyword arguments in base units)
  when a builder made the graph; ``description`` when a file gave one.

Files
-----
A ``.toml`` file names a builder and its parameters, with units at the boundary::

    name = "testbed-188"
    description = "..."
    [builder]
    name = "leaf_spine"
    leaves = 12
    rate = "56.25Gbps"     # -> rate_bps, parsed by mcsim.units.parse_rate
    encoding = "64b/66b"   # -> encoding_data_bits/encoding_line_bits, by mcsim.physics.parse_encoding
    delay = "100ns"        # -> delay_ps, parsed by mcsim.units.parse_time

A ``.graphml`` file holds any graph that :func:`validate` accepts.
"""

from __future__ import annotations

import difflib
import inspect
import json
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import networkx as nx

from mcsim import machine
from mcsim.errors import McsimError, pick, require_integer, require_positive
from mcsim.physics import EDGE_ATTRS, Link, check_link, edge_attrs, format_encoding, parse_encoding
from mcsim.units import format_rate, format_time, parse_rate, parse_time

HOST = "host"
SWITCH = "switch"
TOPOLOGY_DIR = Path(__file__).resolve().parent.parent / "topologies"
NODE_ATTRS = ("role", "tier", "name")
# Graph attrs kept in a GraphML file; "params" is stored there as a JSON string.
GRAPH_ATTRS = ("name", "description", "builder", "params")
# [builder] keys with units: the file key and the builder's keyword arguments it fills.
_UNIT_KEYS = {
    "rate": ("rate_bps",),
    "delay": ("delay_ps",),
    "encoding": ("encoding_data_bits", "encoding_line_bits"),
}
_TOP_KEYS = ("name", "description", "builder")


# ---------------------------------------------------------------------------------------------
# builders


def fat_tree(
    k: int, *, rate_bps: int, delay_ps: int, encoding_data_bits: int = 1, encoding_line_bits: int = 1
) -> nx.Graph:
    """Return the classic 3-level k-ary fat-tree (Al-Fares et al. 2008).

    Parameters
    ----------
    k : int
        Switch radix, even and >= 2: k pods of k/2 edge and k/2 aggregation switches, (k/2)**2 core
        switches, k/2 hosts per edge switch.
    rate_bps : int
        Signalling rate of every link in bit/s.
    delay_ps : int
        Propagation delay of every link in ps (>= 0).
    encoding_data_bits, encoding_line_bits : int
        Line code of every link (64, 66 for 64b/66b; 1, 1 for none).

    Returns
    -------
    networkx.Graph
        Hosts ``0..k**3/4-1`` (pod by pod, edge by edge), then edge switches ("edge0".., tier 1),
        aggregation switches ("agg0".., tier 2) and core switches ("core0".., tier 3).

    Raises
    ------
    McsimError
        For an odd k or k < 2, a non-positive rate or encoding, or a negative delay.

    Notes
    -----
    k**3/4 hosts, 5*k**2/4 switches, 3*k**3/4 links, full bisection bandwidth. Edge switch j of a
    pod connects to every aggregation switch of its pod; aggregation switch j of every pod connects
    to core switches j*k/2 .. j*k/2+k/2-1.
    """
    require_integer("fat_tree", k=k)
    if k < 2 or k % 2:
        raise McsimError(f"fat_tree: k={k} must be even and >= 2; try k={max(2, k + k % 2)}")
    link = edge_attrs(
        "fat_tree",
        rate_bps=rate_bps,
        delay_ps=delay_ps,
        encoding_data_bits=encoding_data_bits,
        encoding_line_bits=encoding_line_bits,
    )
    half = k // 2
    hosts = k * half * half
    machine.require_fits(
        f"fat_tree: k={k} ({hosts} hosts, {5 * k * k // 4} switches; a route from every switch to every host)",
        machine.fabric_memory_b(hosts, 5 * k * k // 4, 3 * hosts),
    )
    first_edge = hosts
    first_agg = first_edge + k * half
    first_core = first_agg + k * half
    g: nx.Graph[int] = nx.Graph(name=f"fat-tree-k{k}", builder="fat_tree")
    g.graph["params"] = {
        "k": k,
        "rate_bps": rate_bps,
        "delay_ps": delay_ps,
        "encoding_data_bits": encoding_data_bits,
        "encoding_line_bits": encoding_line_bits,
    }
    for h in range(hosts):
        g.add_node(h, role=HOST, tier=0, name=f"h{h}")
    for i in range(k * half):
        g.add_node(first_edge + i, role=SWITCH, tier=1, name=f"edge{i}")
    for i in range(k * half):
        g.add_node(first_agg + i, role=SWITCH, tier=2, name=f"agg{i}")
    for i in range(half * half):
        g.add_node(first_core + i, role=SWITCH, tier=3, name=f"core{i}")
    for h in range(hosts):
        g.add_edge(h, first_edge + h // half, **link)
    for pod in range(k):
        for e in range(half):
            for a in range(half):
                g.add_edge(first_edge + pod * half + e, first_agg + pod * half + a, **link)
    for pod in range(k):
        for a in range(half):
            for c in range(half):
                g.add_edge(first_agg + pod * half + a, first_core + a * half + c, **link)
    return g


def leaf_spine(
    leaves: int,
    spines: int,
    hosts_per_leaf: int | Sequence[int],
    links_per_leaf_spine: int = 1,
    *,
    rate_bps: int,
    delay_ps: int,
    encoding_data_bits: int = 1,
    encoding_line_bits: int = 1,
    switch_ports: int | None = None,
) -> nx.Graph:
    """Return a two-tier leaf-spine (folded Clos) fabric.

    Parameters
    ----------
    leaves : int
        Number of leaf switches (>= 1).
    spines : int
        Number of spine switches (>= 1; 0 only with one leaf: a single-switch star).
    hosts_per_leaf : int or sequence of int
        Hosts on every leaf, or one count per leaf (each >= 1).
    links_per_leaf_spine : int
        Parallel links from every leaf to every spine (>= 1).
    rate_bps, delay_ps, encoding_data_bits, encoding_line_bits : int
        Link parameters as in :func:`fat_tree`.
    switch_ports : int or None
        Ports per switch; if given, a leaf or spine that needs more ports is rejected.

    Returns
    -------
    networkx.Graph
        Hosts numbered leaf by leaf, then leaves ("leaf0".., tier 1), then spines ("spine0"..,
        tier 2). Each leaf-spine edge has ``parallel = links_per_leaf_spine``.

    Raises
    ------
    McsimError
        For bad counts, a switch with more links than ``switch_ports``, or bad link parameters.

    Notes
    -----
    A leaf's oversubscription is hosts / (spines * links_per_leaf_spine) at equal link rates; it
    may exceed 1 (see :func:`summary`).
    """
    require_integer("leaf_spine", leaves=leaves, spines=spines, links_per_leaf_spine=links_per_leaf_spine)
    require_positive("leaf_spine", leaves=leaves, links_per_leaf_spine=links_per_leaf_spine)
    if spines < 0:
        raise McsimError(f"leaf_spine: spines={spines} must be >= 0")
    if spines == 0 and leaves > 1:
        raise McsimError(f"leaf_spine: spines=0 leaves {leaves} leaves disconnected; use spines >= 1 or leaves=1")
    if isinstance(hosts_per_leaf, int) and not isinstance(hosts_per_leaf, bool):
        counts = [hosts_per_leaf] * leaves
    elif isinstance(hosts_per_leaf, Sequence) and not isinstance(hosts_per_leaf, str):
        counts = list(hosts_per_leaf)
        if len(counts) != leaves:
            raise McsimError(
                f"leaf_spine: hosts_per_leaf has {len(counts)} entries but leaves={leaves}; give one count per leaf"
            )
    else:
        raise McsimError(f"leaf_spine: hosts_per_leaf={hosts_per_leaf!r} must be an integer or a list of integers")
    for i, n in enumerate(counts):
        require_integer("leaf_spine", **{f"hosts_per_leaf[{i}]": n})
        require_positive("leaf_spine", **{f"hosts_per_leaf[{i}]": n})
    link = edge_attrs(
        "leaf_spine",
        rate_bps=rate_bps,
        delay_ps=delay_ps,
        encoding_data_bits=encoding_data_bits,
        encoding_line_bits=encoding_line_bits,
    )
    uplinks = spines * links_per_leaf_spine
    if switch_ports is not None:
        require_integer("leaf_spine", switch_ports=switch_ports)
        require_positive("leaf_spine", switch_ports=switch_ports)
        for i, n in enumerate(counts):
            if n + uplinks > switch_ports:
                raise McsimError(
                    f"leaf_spine: leaf {i} needs {n + uplinks} ports ({n} hosts + {uplinks} spine links) but "
                    f"switch_ports={switch_ports}; put fewer hosts on it or use fewer links_per_leaf_spine"
                )
        if leaves * links_per_leaf_spine > switch_ports:
            raise McsimError(
                f"leaf_spine: spine 0 needs {leaves * links_per_leaf_spine} ports ({leaves} leaves x "
                f"{links_per_leaf_spine} links) but switch_ports={switch_ports}; use fewer leaves or fewer "
                "links_per_leaf_spine"
            )
    hosts = sum(counts)
    machine.require_fits(
        f"leaf_spine: {hosts} hosts, {leaves + spines} switches (a route from every switch to every host)",
        machine.fabric_memory_b(hosts, leaves + spines, hosts + leaves * spines),
    )
    g: nx.Graph[int] = nx.Graph(name=f"leaf-spine-{leaves}x{spines}", builder="leaf_spine")
    g.graph["params"] = {
        "leaves": leaves,
        "spines": spines,
        "hosts_per_leaf": hosts_per_leaf if isinstance(hosts_per_leaf, int) else counts,
        "links_per_leaf_spine": links_per_leaf_spine,
        "rate_bps": rate_bps,
        "delay_ps": delay_ps,
        "encoding_data_bits": encoding_data_bits,
        "encoding_line_bits": encoding_line_bits,
        "switch_ports": switch_ports,
    }
    for h in range(hosts):
        g.add_node(h, role=HOST, tier=0, name=f"h{h}")
    for i in range(leaves):
        g.add_node(hosts + i, role=SWITCH, tier=1, name=f"leaf{i}")
    for i in range(spines):
        g.add_node(hosts + leaves + i, role=SWITCH, tier=2, name=f"spine{i}")
    h = 0
    for i, n in enumerate(counts):
        for _ in range(n):
            g.add_edge(h, hosts + i, **link)
            h += 1
    for i in range(leaves):
        for j in range(spines):
            g.add_edge(hosts + i, hosts + leaves + j, **{**link, "parallel": links_per_leaf_spine})
    return g


BUILDERS: dict[str, Callable[..., nx.Graph]] = {"fat_tree": fat_tree, "leaf_spine": leaf_spine}


def with_link(g: nx.Graph, link: Link) -> nx.Graph:
    """A copy of topology g whose every link has this rate and encoding (delays, parallel kept)."""
    out = g.copy()
    for _, _, e in out.edges(data=True):
        e.update(
            rate_bps=link.rate_bps,
            encoding_data_bits=link.encoding_data_bits,
            encoding_line_bits=link.encoding_line_bits,
        )
    return out


# ---------------------------------------------------------------------------------------------
# validation


def host_count(g: nx.Graph) -> int:
    """Return H, the number of hosts (= ranks): nodes 0..H-1 of a validated graph."""
    return sum(1 for _, role in g.nodes(data="role") if role == HOST)


def validate(g: nx.Graph) -> None:
    """Raise McsimError unless ``g`` follows the graph conventions of this module.

    Checks: an undirected simple graph; node ids 0..N-1 with the hosts first (at least one host);
    node attrs role, tier (0 for hosts, >= 1 for switches) and a unique name; edge attrs all
    positive integers (delay_ps >= 0, encoding_data_bits <= encoding_line_bits); no self-loops;
    every host has exactly one link, with parallel=1 (one NIC port); connected. So the only graph
    without switches is two hosts joined by one link.
    """
    if not isinstance(g, nx.Graph) or g.is_directed() or g.is_multigraph():
        raise McsimError(
            f"topology: graph type {type(g).__name__} must be an undirected networkx.Graph; "
            "give parallel links as the edge attribute 'parallel'"
        )
    n = g.number_of_nodes()
    for node in g.nodes:
        if isinstance(node, bool) or not isinstance(node, int) or not 0 <= node < n:
            raise McsimError(f"topology: node id {node!r} must be an integer in 0..{n - 1}; number nodes densely")
    names: dict[str, int] = {}
    last_host, first_switch = -1, n
    for node in sorted(g.nodes):
        attrs = g.nodes[node]
        for key in NODE_ATTRS:
            if key not in attrs:
                raise McsimError(f"topology: node {node} has no {key!r}; every node needs {', '.join(NODE_ATTRS)}")
        role, tier, name = attrs["role"], attrs["tier"], attrs["name"]
        if role not in (HOST, SWITCH):
            raise McsimError(f"topology: node {node} role={role!r} must be 'host' or 'switch'")
        require_integer(f"topology: node {node}", tier=tier)
        if (role == HOST) != (tier == 0) or tier < 0:
            raise McsimError(f"topology: node {node} tier={tier} must be 0 for hosts and >= 1 for switches")
        if not isinstance(name, str) or not name:
            raise McsimError(f"topology: node {node} name={name!r} must be a non-empty string")
        if name in names:
            raise McsimError(f"topology: node {node} name={name!r} is already node {names[name]}'s; names are unique")
        names[name] = node
        if role == HOST:
            last_host = node
        else:
            first_switch = min(first_switch, node)
    if last_host < 0:
        raise McsimError("topology: graph has no host; hosts are nodes 0..H-1 with role='host'")
    if first_switch < last_host:
        raise McsimError(
            f"topology: host {last_host} comes after switch {first_switch}; hosts must be nodes 0..H-1, then switches"
        )
    for u, v, attrs in g.edges(data=True):
        where = f"topology: link {min(u, v)}-{max(u, v)}"
        if u == v:
            raise McsimError(f"{where} is a self-loop; remove it")
        for key in EDGE_ATTRS:
            if key not in attrs:
                raise McsimError(f"{where} has no {key!r}; every link needs {', '.join(EDGE_ATTRS)}")
        check_link(where, {key: attrs[key] for key in EDGE_ATTRS})
    for h in range(last_host + 1):
        if g.degree(h) != 1:
            raise McsimError(f"topology: host {h} has {g.degree(h)} links; each host needs exactly one NIC link")
        (leaf,) = g[h]
        if g[h][leaf]["parallel"] != 1:
            raise McsimError(f"topology: host {h} link parallel={g[h][leaf]['parallel']} must be 1 (one NIC port)")
    if not nx.is_connected(g):
        parts = sorted((sorted(c) for c in nx.connected_components(g)), key=lambda c: c[0])
        far = parts[1][0]
        raise McsimError(
            f"topology: graph is disconnected: {len(parts)} components; e.g. node {far} "
            f"({g.nodes[far]['name']}) cannot reach node 0 ({g.nodes[0]['name']})"
        )


# ---------------------------------------------------------------------------------------------
# files


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


def build(name: str, table: Mapping[str, Any], *, where: str = "topology") -> nx.Graph:
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
        if key == "rate":
            kwargs["rate_bps"] = parse_rate(value, what=f"{where}: rate")
        elif key == "delay":
            kwargs["delay_ps"] = parse_time(value, what=f"{where}: delay")
        elif key == "encoding":
            if not isinstance(value, str):
                raise McsimError(f"{where}: encoding={value!r} must be a string; e.g. '64b/66b' or 'none'")
            kwargs["encoding_data_bits"], kwargs["encoding_line_bits"] = parse_encoding(value)
        else:
            kwargs[key] = value
    return fn(**kwargs)


def _load_toml(path: Path) -> nx.Graph:
    where = f"topology {path.name}"
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise McsimError(f"{where}: not valid TOML ({exc})") from None
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
    g = build(name, table, where=where)
    g.graph["name"] = doc.get("name", path.stem)
    if "description" in doc:
        g.graph["description"] = doc["description"]
    for key in ("name", "description"):
        if key in g.graph and not isinstance(g.graph[key], str):
            raise McsimError(f"{where}: {key}={g.graph[key]!r} must be a string")
    return g


def _int_attr(where: str, key: str, value: object) -> object:
    """Convert a GraphML value to int where it is one (floats like 3.0 too); leave others to validate()."""
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise McsimError(f"{where}: {key}={value!r} must be an integer") from None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _load_graphml(path: Path) -> nx.Graph:
    where = f"topology {path.name}"
    try:
        raw = nx.read_graphml(path)
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
    g.graph.setdefault("name", path.stem)
    for node in sorted(raw.nodes, key=ids.__getitem__):
        attrs = dict(raw.nodes[node])
        if "tier" in attrs:
            attrs["tier"] = _int_attr(f"{where}: node {node}", "tier", attrs["tier"])
        g.add_node(ids[node], **attrs)
    for u, v, attrs in sorted(raw.edges(data=True), key=lambda e: sorted((ids[e[0]], ids[e[1]]))):
        attrs = {"encoding_data_bits": 1, "encoding_line_bits": 1, "parallel": 1, **attrs}
        for key in EDGE_ATTRS:
            if key in attrs:
                attrs[key] = _int_attr(f"{where}: link {u}-{v}", key, attrs[key])
        g.add_edge(*sorted((ids[u], ids[v])), **attrs)
    return g


_LOADERS: dict[str, Callable[[Path], nx.Graph]] = {".toml": _load_toml, ".graphml": _load_graphml}


def load(path: str | Path) -> nx.Graph:
    """Read a topology from a ``.toml`` (builder + parameters) or ``.graphml`` file and validate it.

    Raises
    ------
    McsimError
        For a missing file, an unknown suffix, an unknown builder or builder key, or a graph that
        :func:`validate` rejects.
    """
    path = Path(path)
    loader = pick("topology file type", path.suffix, _LOADERS)
    if not path.is_file():
        raise McsimError(f"topology: file {str(path)!r} does not exist")
    g = loader(path)
    validate(g)
    return g


def available() -> tuple[str, ...]:
    """Return the names of the ready topologies in the repository's topologies/ folder."""
    return tuple(sorted(p.stem for p in TOPOLOGY_DIR.glob("*.toml")))


def resolve(name_or_path: str | Path) -> nx.Graph:
    """Load a ready topology by bare name ("testbed-188" -> topologies/testbed-188.toml) or a file path."""
    text = str(name_or_path)
    if isinstance(name_or_path, Path) or Path(text).suffix in _LOADERS or "/" in text:
        return load(text)
    ready = {name: name for name in available()}
    return load(TOPOLOGY_DIR / f"{pick('topology', text, ready)}.toml")


def _exact(value: int, fmt: Callable[[int], str], parse: Callable[[str], int], base: str) -> str:
    text = fmt(value)
    return text if parse(text) == value else f"{value}{base}"


def _toml_value(value: object) -> str:
    if isinstance(value, bool) or value is None:
        raise AssertionError(f"no TOML form for {value!r}")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise AssertionError(f"no TOML form for {value!r}")


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
    lines = [f"name = {_toml_value(g.graph.get('name', rebuilt.graph['name']))}"]
    if "description" in g.graph:
        lines.append(f"description = {_toml_value(g.graph['description'])}")
    lines += ["", "[builder]", f"name = {_toml_value(builder)}"]
    keys, _ = _builder_keys(builder)
    for key in keys:
        if key == "rate":
            value = _toml_value(_exact(params["rate_bps"], format_rate, parse_rate, "bps"))
        elif key == "delay":
            value = _toml_value(_exact(params["delay_ps"], format_time, parse_time, "ps"))
        elif key == "encoding":
            value = _toml_value(format_encoding(params["encoding_data_bits"], params["encoding_line_bits"]))
        elif params.get(key) is None:
            continue
        else:
            value = _toml_value(params[key])
        lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


def save(g: nx.Graph, path: str | Path) -> None:
    """Write ``g`` to ``path``: ``.graphml`` for any valid graph, ``.toml`` for a graph a builder made.

    The GraphML file keeps every node and edge attribute and the graph attrs name, description,
    builder and params (the latter as a JSON string); :func:`load` gives back an identical graph.
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


# ---------------------------------------------------------------------------------------------
# summary


def _tier_label(tier: int) -> str:
    return "host" if tier == 0 else f"tier{tier}"


def _bisection_bps(g: nx.Graph, hosts: int) -> int:
    if hosts < 2:
        return 0
    flow: nx.DiGraph[int | str] = nx.DiGraph()  # the hosts and switches, and "source", "sink"
    for u, v, attrs in g.edges(data=True):
        cap = Link.from_edge(attrs).data_rate_bps * attrs["parallel"]
        flow.add_edge(u, v, capacity=cap)
        flow.add_edge(v, u, capacity=cap)
    source, sink = "source", "sink"  # no capacity attribute: unbounded
    for h in range(hosts // 2):
        flow.add_edge(source, h)
    for h in range(hosts // 2, hosts):
        flow.add_edge(h, sink)
    return int(nx.maximum_flow_value(flow, source, sink))


def diameter_hops(g: nx.Graph) -> int:
    """Return the largest host-to-host hop count of a validated graph (0 with one host).

    A host's one link goes to its attachment node x (a switch, or the other host when two hosts
    share one link), so its distance to any other host b is 1 + dist(x, b): one BFS per attachment
    node.
    """
    hosts = host_count(g)
    attached: dict[int, list[int]] = {}
    for h in range(hosts):
        (x,) = g[h]
        attached.setdefault(x, []).append(h)
    best = 0
    for x, mine in attached.items():
        dist = nx.single_source_shortest_path_length(g, x)
        others = (b for b in range(hosts) if len(mine) > 1 or b != mine[0])
        best = max(best, max((dist[b] + 1 for b in others), default=0))
    return best


def summary(g: nx.Graph) -> dict[str, Any]:
    """Return the size, link rates, bisection bandwidth, diameter and oversubscription of ``g``.

    Returns
    -------
    dict
        ``name``; ``hosts``; ``switches``; ``switches_per_tier`` ({"tier1": 12, "tier2": 6});
        ``links`` (parallel links counted one by one); ``tiers``: one entry per pair of tiers that
        links join, keyed "host-tier1", "tier1-tier2", ..., each ``{"links": n, "rates_bps": [...],
        "data_rates_bps": [...]}`` (the distinct signalling and data rates, ascending);
        ``max_switch_ports`` (largest number of links on one switch); ``bisection_bps`` (max-flow
        from hosts 0..H/2-1 to hosts H/2..H-1, link capacity = data rate * parallel); ``diameter``
        (largest host-to-host hop count); ``oversubscription``: per switch tier that has links both
        down and up, the largest (data rate down) / (data rate up) over its switches, as a float.
    """
    validate(g)
    hosts = host_count(g)
    tier = dict(g.nodes(data="tier"))
    per_tier: dict[str, int] = {}
    for node in range(hosts, g.number_of_nodes()):
        per_tier[_tier_label(tier[node])] = per_tier.get(_tier_label(tier[node]), 0) + 1
    groups: dict[tuple[int, int], dict[str, Any]] = {}
    down: dict[int, int] = {}
    up: dict[int, int] = {}
    ports: dict[int, int] = {}
    for u, v, attrs in g.edges(data=True):
        lo, hi = sorted((u, v), key=lambda n: (tier[n], n))
        group = groups.setdefault((tier[lo], tier[hi]), {"links": 0, "rates_bps": set(), "data_rates_bps": set()})
        group["links"] += attrs["parallel"]
        group["rates_bps"].add(attrs["rate_bps"])
        data_rate_bps = Link.from_edge(attrs).data_rate_bps
        group["data_rates_bps"].add(data_rate_bps)
        cap = data_rate_bps * attrs["parallel"]
        if tier[lo] < tier[hi]:
            down[hi] = down.get(hi, 0) + cap
            up[lo] = up.get(lo, 0) + cap
        for node in (u, v):
            ports[node] = ports.get(node, 0) + attrs["parallel"]
    oversub: dict[str, float] = {}
    for node in range(hosts, g.number_of_nodes()):
        if down.get(node) and up.get(node):
            label = _tier_label(tier[node])
            oversub[label] = max(oversub.get(label, 0.0), down[node] / up[node])
    tiers = {
        f"{_tier_label(a)}-{_tier_label(b)}": {
            "links": grp["links"],
            "rates_bps": sorted(grp["rates_bps"]),
            "data_rates_bps": sorted(grp["data_rates_bps"]),
        }
        for (a, b), grp in sorted(groups.items())
    }
    return {
        "name": g.graph.get("name", ""),
        "hosts": hosts,
        "switches": g.number_of_nodes() - hosts,
        "switches_per_tier": dict(sorted(per_tier.items())),
        "links": sum(grp["links"] for grp in tiers.values()),
        "tiers": tiers,
        "max_switch_ports": max((ports[n] for n in range(hosts, g.number_of_nodes())), default=0),
        "bisection_bps": _bisection_bps(g, hosts),
        "diameter": diameter_hops(g),
        "oversubscription": dict(sorted(oversub.items())),
    }


def _tier_kinds(g: nx.Graph, hosts: int) -> dict[str, str]:
    """Tier label -> the switches' common name stem ("tier1" -> "leaf"), where they share one."""
    stems: dict[str, set[str]] = {}
    for node in range(hosts, g.number_of_nodes()):
        stems.setdefault(_tier_label(g.nodes[node]["tier"]), set()).add(g.nodes[node]["name"].rstrip("0123456789"))
    return {label: f"{next(iter(names))} ({label})" for label, names in stems.items() if len(names) == 1}


def format_summary(g: nx.Graph) -> str:
    """Return :func:`summary` as readable lines with units (for ``mcsim topo show``)."""
    s = summary(g)
    title = s["name"] + (f" ({g.graph['builder']})" if "builder" in g.graph else "")
    lines = [f"topology {title}"]
    if "description" in g.graph:
        lines.append(f"  {g.graph['description']}")
    kinds = _tier_kinds(g, s["hosts"])
    per_tier = ", ".join(f"{n} {kinds.get(label, label)}" for label, n in s["switches_per_tier"].items())
    lines += [
        f"  hosts             {s['hosts']}",
        f"  switches          {s['switches']} ({per_tier}), up to {s['max_switch_ports']} ports each",
        f"  links             {s['links']}",
    ]
    for label, grp in s["tiers"].items():
        rates = ", ".join(format_rate(r) for r in grp["rates_bps"])
        data = ", ".join(format_rate(r) for r in grp["data_rates_bps"])
        lines.append(f"    {label:<14}  {grp['links']} links at {rates} ({data} data)")
    half = s["hosts"] // 2
    lines.append(
        f"  bisection         {format_rate(s['bisection_bps'])} (hosts 0..{half - 1} to {half}..{s['hosts'] - 1})"
        if half
        else "  bisection         0bps (one host)"
    )
    lines.append(f"  diameter          {s['diameter']} hops host to host")
    if s["oversubscription"]:
        over = ", ".join(f"{label} {ratio:.3g}:1" for label, ratio in s["oversubscription"].items())
        lines.append(f"  oversubscription  {over} (max down/up data rate per switch)")
    return "\n".join(lines)
