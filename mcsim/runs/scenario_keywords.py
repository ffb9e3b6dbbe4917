# SPDX-License-Identifier: GPL-2.0-only
"""Scenario from its keywords and the short names of its config fields (their table: mcsim.runs.keyword_tables).

A Scenario takes each field one way (``rdma=RdmaConfig(mtu_b=2048)``). The CLI's flags (``--mtu``,
``--seed``, ``--loss`` ...) and a sweep spec's keys (``seed = [1, 2]``) keep their short names:
SHORT_NAMES says which config fields each sets, and :func:`folded` (mcsim.runs.scenario.scenario_of) folds them into the
configs, refusing a short name and the same field of a given config with different values.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from mcsim.config import congestion
from mcsim.config.fabric import MAX_SEED, FabricConfig
from mcsim.config.rdma import IB_MTUS, MAX_QP_WR, QP_WR_WHY, RcConfig, RdmaConfig, is_processor_config
from mcsim.errors import McsimError, as_int, require_bool, require_int
from mcsim.runs.keyword_tables import SHORT_NAMES
from mcsim.units import parse_size

DEFAULTS: dict[str, Any] = {"rdma": RdmaConfig(), "fabric": FabricConfig()}  # a field at its default was not given


def folded(keywords: dict[str, Any]) -> dict[str, Any]:
    """Scenario's keywords of its keywords and SHORT_NAMES: each short name folded into its config (scenario_of)."""
    keywords = dict(keywords)
    short = {name: as_int(keywords.pop(name)) for name in list(keywords) if name in SHORT_NAMES}
    _check(short)
    for config, cls in (("rdma", RdmaConfig), ("fabric", FabricConfig)):
        sets = {f: _value(name, v) for name, v in short.items() for c, f in SHORT_NAMES[name] if c == config}
        given = keywords.get(config)
        if sets and (given is None or isinstance(given, cls)):  # another type: Scenario says so
            base = DEFAULTS[config] if given is None else given
            if isinstance(base, RdmaConfig) and congestion.kind_of(base.congestion) == short.get("congestion_control"):
                sets.pop("congestion", None)  # the given config is of that kind: its settings stay
            _check_two_ways(config, base, sets, short)
            keywords[config] = dataclasses.replace(base, **sets)
    return keywords


def _value(name: str, value: Any) -> Any:
    """The config field's value of a short name's: the MTU as bytes."""
    if name == "congestion_control":
        return congestion.from_text(value, {}, "Scenario")
    return parse_size(value) if name == "mtu" else value


def _check(short: dict[str, Any]) -> None:
    """The short names' types and ranges, before any is compared with a config's field."""
    for name in ("wire_format", "flow_control", "forwarding", "congestion_control"):
        if name in short and not isinstance(short[name], str):
            raise McsimError(f"Scenario: {name}={short[name]!r} must be a string")
    if "staging" in short:
        require_bool("Scenario", staging=short["staging"])
    if "ecn" in short:
        require_bool("Scenario", ecn=short["ecn"])
    if "rc" in short and not isinstance(short["rc"], RcConfig):
        raise McsimError(f"Scenario: rc={short['rc']!r} must be a mcsim.config.rdma.RcConfig")
    if "processor" in short and not is_processor_config(short["processor"]):
        raise McsimError(
            f"Scenario: processor={short['processor']!r} is not a completion processor config; "
            "use HostCpuConfig() or DpaConfig()"
        )
    if "rq_depth" in short:
        require_int("Scenario", "rq_depth", short["rq_depth"], lo=1, hi=MAX_QP_WR, why=QP_WR_WHY)
    if "seed" in short:
        require_int("Scenario", "seed", short["seed"], lo=0, hi=MAX_SEED)
    if "mtu" in short and parse_size(short["mtu"], what="Scenario: mtu") not in IB_MTUS:
        raise McsimError(f"Scenario: mtu={short['mtu']!r} is not an MTU; choose one of {IB_MTUS} bytes")


def _check_two_ways(config: str, given: Any, sets: dict[str, Any], short: dict[str, Any]) -> None:
    """A short name and the same field of a given config, with different values, is one field given
    two ways: refused. A config's field still at its default was not given (the short name sets it);
    the same value twice is no conflict."""
    for field, value in sets.items():
        name = next(n for n in short if (config, field) in SHORT_NAMES[n])
        have = getattr(given, field)
        if have != getattr(DEFAULTS[config], field) and have != value:
            raise McsimError(
                f"Scenario: {name}={short[name]!r} and {config}.{field}={have!r} give one field two ways; "
                f"give it once (the keyword, or the {config} config's field)"
            )
