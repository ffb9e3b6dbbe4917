# SPDX-License-Identifier: GPL-2.0-only
"""Fabrics as networkx graphs: builders, validation, files and a summary (one import for all).

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

Modules
-------
:mod:`mcsim.topology.rules` (these conventions: :func:`validate`, :func:`host_count`),
:mod:`mcsim.topology.builders` (:func:`fat_tree`, :func:`general_fat_tree`,
:func:`leaf_spine`), :mod:`mcsim.topology.files`
(``.toml``: a builder and its parameters with units; ``.graphml``: any valid graph) and
:mod:`mcsim.topology.summary`; this package exports them all. :mod:`mcsim.topology.nodes` builds nodes of several GPUs
(:func:`nvlink_node`, :func:`rail_optimised`; a GPU is a host, its hub, NVSwitch and NICs are switches with a
``part`` attr) and reads them back (:func:`nodes_of`). :mod:`mcsim.topology.ibnetdiscover`
imports a real fabric from ``ibnetdiscover`` output (:func:`read_ibnetdiscover`). Link physics (rates, line codes,
delays, presets) is :mod:`mcsim.topology.physics`, which imports only mcsim.errors and mcsim.units.
"""

from mcsim.topology.builders import BUILDERS, fat_tree, general_fat_tree, leaf_spine, with_link
from mcsim.topology.files import (
    GRAPH_ATTRS,
    available,
    call_builder,
    read_topology_file,
    ready,
    resolve,
    topology_dirs,
    write_topology_file,
)
from mcsim.topology.nodes import nodes_of, nvlink_node, rail_optimised
from mcsim.topology.rules import HOST, NODE_ATTRS, SWITCH, host_count, validate
from mcsim.topology.summary import diameter_hops, format_summary, summary

__all__ = [
    "BUILDERS",
    "GRAPH_ATTRS",
    "HOST",
    "NODE_ATTRS",
    "SWITCH",
    "available",
    "call_builder",
    "diameter_hops",
    "fat_tree",
    "format_summary",
    "general_fat_tree",
    "host_count",
    "leaf_spine",
    "nodes_of",
    "nvlink_node",
    "rail_optimised",
    "read_topology_file",
    "ready",
    "resolve",
    "summary",
    "topology_dirs",
    "validate",
    "with_link",
    "write_topology_file",
]
