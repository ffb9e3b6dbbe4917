# SPDX-License-Identifier: GPL-2.0-only
"""Faults from a TOML file (``mcsim allgather --faults FILE.toml``): read as data with tomllib.

Every key is optional; an unknown key anywhere is an error::

    link_loss = [{u = 0, v = 16, p = 1e-3}]                       # edge u-v (either order), both directions
    drops = [{node = 16, port = 0, index = 154}]                  # the index-th packet that port sends
    link_down = [{u = 16, v = 20, down = "10us", up = "forever"}] # down in [down, up); "forever": for good

Times are strings with a unit (``"300ns"``, ``"10us"``, ``"2ms"``). A top-level ``reroute_delay =
"100ms"`` sets the subnet manager's delay (``Faults.reroute_delay_ps``); ``"static"``: routes stay as
built.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcsim.config.fabric import MAX_NODE_ID, MAX_PACKET_INDEX, Faults
from mcsim.errors import McsimError, pick, require_int
from mcsim.units import parse_time
from mcsim.util import toml_text

FOREVER = "forever"  # link_down up = "forever": the link never comes back (up_ps None)
STATIC = "static"  # reroute_delay = "static": no re-routing (reroute_delay_ps None)


def _bounded(where: str, key: str, value: object, top: int, why: str) -> int:
    n = require_int(where, key, value, lo=0)
    if n > top:
        raise McsimError(f"{where}: {key}={n} must be <= {top} ({why})")
    return n


def _node(where: str, key: str, value: object) -> int:
    """A node id or port number: an integer 0..2^32-1 (uint32 in C++; Faults.check then asks the topology)."""
    return _bounded(where, key, value, MAX_NODE_ID, "uint32 in C++")


def _index(where: str, key: str, value: object) -> int:
    """A packet index: an integer 0..2^64-1 (uint64 in C++)."""
    return _bounded(where, key, value, MAX_PACKET_INDEX, "uint64 in C++")


def _probability(where: str, key: str, value: object) -> object:
    return value  # Faults checks it (0 <= p < 1) and names the edge


def _time(where: str, key: str, value: object) -> int:
    """A time string with a unit; ``where`` is the entry ("link_down[0]"), empty at the top level."""
    name = f"{where}: {key}" if where else key
    if not isinstance(value, str):
        raise McsimError(f"{name}={value!r} must be a time with a unit, e.g. '10us'")
    return parse_time(value, what=name)


def _up_time(where: str, key: str, value: object) -> int | None:
    if value == FOREVER:
        return None
    try:
        return _time(where, key, value)
    except McsimError as exc:
        raise McsimError(f"{exc}; or {FOREVER!r} for a link that never comes back") from None


# array -> its entries' keys, in the order of the Faults tuple, each with its parser
ENTRY_KEYS: dict[str, dict[str, Callable[[str, str, object], Any]]] = {
    "link_loss": {"u": _node, "v": _node, "p": _probability},
    "drops": {"node": _node, "port": _node, "index": _index},
    "link_down": {"u": _node, "v": _node, "down": _time, "up": _up_time},
}
EXAMPLES = {
    "link_loss": "link_loss = [{u = 0, v = 16, p = 1e-3}]",
    "drops": "drops = [{node = 16, port = 0, index = 154}]",
    "link_down": 'link_down = [{u = 16, v = 20, down = "10us", up = "forever"}]',
}


def _entries(name: str, value: object) -> list[tuple[Any, ...]]:
    """The rows of one array of tables, each a tuple in the order of ENTRY_KEYS[name]."""
    if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
        raise McsimError(f"{name} must be an array of tables, e.g. {EXAMPLES[name]}")
    keys = ENTRY_KEYS[name]
    rows = []
    for i, entry in enumerate(value):
        where = f"{name}[{i}]"
        for key in entry:
            pick(f"key in {where}", key, keys)
        for key in keys:
            if key not in entry:
                raise McsimError(f"{where} has no {key!r}; it needs {', '.join(keys)}, e.g. {EXAMPLES[name]}")
        rows.append(tuple(parse(where, key, entry[key]) for key, parse in keys.items()))
    return rows


def faults_from_toml(doc: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of Faults for a parsed faults file (McsimError for a bad key or value)."""
    accepted = {**ENTRY_KEYS, "reroute_delay": None}
    for key in doc:
        pick("key", key, accepted)
    kwargs: dict[str, Any] = {}
    if "link_loss" in doc:
        seen: dict[tuple[int, int], int] = {}
        loss = {}
        for i, (u, v, p) in enumerate(_entries("link_loss", doc["link_loss"])):
            edge = (min(u, v), max(u, v))
            if edge in seen:
                raise McsimError(f"link_loss[{i}] repeats the edge {u}-{v} of link_loss[{seen[edge]}]; give it once")
            seen[edge] = i
            loss[(u, v)] = p
        kwargs["link_loss"] = loss
    for name in ("drops", "link_down"):
        if name in doc:
            kwargs[name] = _entries(name, doc[name])
    if "reroute_delay" in doc:
        delay = doc["reroute_delay"]
        kwargs["reroute_delay_ps"] = None if delay == STATIC else _time("", "reroute_delay", delay)
    return kwargs


def read_faults(path: str | Path) -> dict[str, Any]:
    """The keyword arguments of Faults that the file at ``path`` gives (see the module doc)."""
    where = f"faults file {toml_text.shown_path(path)}"
    doc = toml_text.read_document(path, where)
    try:
        return faults_from_toml(doc)
    except McsimError as exc:
        raise McsimError(f"{where}: {exc}") from None


def load_faults(path: str | Path) -> Faults:
    """Faults from a TOML file; McsimError (one line naming the file and the key) for a file that
    is missing, a folder, unreadable, not TOML, or has an unknown key or a bad value (each number
    within its limit: node ids and ports uint32, packet indexes uint64, probabilities in [0, 1), times
    at most the simulated clock's limit)."""
    kwargs = read_faults(path)
    try:
        return Faults(**kwargs)
    except McsimError as exc:
        raise McsimError(f"faults file {toml_text.shown_path(path)}: {exc}") from None
