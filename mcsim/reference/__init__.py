# SPDX-License-Identifier: GPL-2.0-only
"""The published record of the SC'24 multicast Allgather paper, and mcsim checked against it.

``claim``: a claim as data (Claim) and its kinds; ``claims``: every published claim (PUBLISHED.md's ids) as data,
the SC'24 paper's and ``node_claims``' (nodes of several GPUs, in-network reduction): its value and unit, its source,
whether mcsim's model predicts it or was fitted to it, and the runs that reproduce it.
``compare``: evaluates the claims (runs through mcsim.sweep and its store, or mcsim.config.dpa's closed
forms) into rows with a verdict, each claim by its evaluator (``evaluation``: what an evaluator is given and
returns). ``commands``: the ``mcsim compare`` command. ``traffic``: the
authors' traffic model (their counting rule) beside mcsim's own count on a topology.
"""
