# SPDX-License-Identifier: GPL-2.0-only
"""Scenario keywords as text files give them (a sweep spec's base and axes, a workload file's options): the
keywords, and configs as tables of some of their fields (a processor's table names its class, ``kind``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from mcsim.config import codec, congestion
from mcsim.config.fabric import FabricConfig
from mcsim.config.rdma import RcConfig, RdmaConfig
from mcsim.errors import McsimError, pick

# Scenario's fields by name, as the text interfaces take them (tests/runs/test_keyword_tables.py holds this table
# against dataclasses.fields(Scenario)): a name here, not Scenario itself, so what reads text reaches no run
SCENARIO_FIELDS = (
    "topology",
    "rate",
    "collective",
    "algorithm",
    "bytes_per_rank",
    "ranks",
    "roots",
    "batch",
    "batching",
    "barriers",
    "repair_reads",
    "fin_wait",
    "ring_chunk",
    "timeout_scale",
    "timeout_rate",
    "root",
    "endpoints",
    "overlap",
    "overlap_algorithm",
    "verify",
    "reduce_ps_per_byte",
    "nccl_protocol",
    "faults",
    "fabric",
    "rdma",
)
# short name -> the (config, field) pairs it sets; "seed" is both the ECMP hash's and the faults' seed
SHORT_NAMES: dict[str, tuple[tuple[str, str], ...]] = {
    "mtu": (("rdma", "mtu_b"),),
    "rq_depth": (("rdma", "rq_depth"),),
    "staging": (("rdma", "staging"),),
    "wire_format": (("rdma", "wire_format"),),
    "processor": (("rdma", "processor"),),
    "rc": (("rdma", "rc"),),
    "flow_control": (("fabric", "flow_control"),),
    "ecn": (("fabric", "ecn"),),
    "lossy_hosts": (("fabric", "lossy_hosts"),),
    "congestion_control": (("rdma", "congestion"),),  # a kind's name: its config at its defaults
    "forwarding": (("fabric", "forwarding"),),
    "loss": (("fabric", "loss"),),
    "seed": (("fabric", "seed"), ("fabric", "ecmp_seed")),
}
# what a base may set and an axis may sweep: every field of Scenario and the short names of config fields
KEYWORDS = (*SCENARIO_FIELDS, *SHORT_NAMES)
# the keywords that hold a config, given as a TOML table; a processor's table names its class ("kind")
CONFIGS: dict[str, type] = {"rc": RcConfig, "fabric": FabricConfig, "rdma": RdmaConfig}
TABLES = ("processor", *CONFIGS)
# the keywords each collective step of a job says itself (a run of jobs takes the others as its options)
STEP_FIELDS = ("collective", "algorithm", "bytes_per_rank", "ranks", "overlap", "overlap_algorithm", "verify")


def fields_of(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def known(kind: str, name: str, choices: Iterable[str], where: str = "") -> None:
    """The one "unknown X" message (mcsim.errors.pick), after ``where``."""
    try:
        pick(kind, name, dict.fromkeys(choices))
    except McsimError as exc:
        raise McsimError(f"{where}: {exc}" if where else str(exc)) from None


def config_of(name: str, table: object) -> Any:
    """The config of a table that sets some fields (the others keep the config's defaults)."""
    fields = dict(codec.require_dict(name, table))
    if name == "processor":
        if "kind" not in fields:
            raise McsimError(f"processor needs a kind; choose one of {', '.join(codec.PROCESSORS)}")
        cls = pick("processor kind", fields.pop("kind"), codec.PROCESSORS)
    else:
        cls = CONFIGS[name]
    if cls is RdmaConfig:  # its congestion control's text keys (congestion_control, dcqcn_*, hpcc_*)
        fields = congestion.split_text(fields, name)
    for key in fields:
        known(f"{cls.__name__} field", key, fields_of(cls), name)
    for key in ("processor", "rc"):
        if name == "rdma" and isinstance(fields.get(key), Mapping):
            fields[key] = config_of(key, fields[key])
    try:
        return cls(**fields)
    except TypeError as exc:
        raise McsimError(f"{name}: {exc}") from None


def value_of(name: str, value: Any) -> Any:
    """A base or axis value as Scenario takes it: tables become configs, faults or a graph."""
    if name in TABLES and isinstance(value, Mapping):
        return config_of(name, value)
    if name == "faults" and isinstance(value, Mapping):
        return codec.faults_from_dict(value, "faults")
    if name == "topology" and isinstance(value, Mapping):
        return codec.graph_from_dict(value, "topology")
    return value
