# SPDX-License-Identifier: GPL-2.0-only
"""One module per kind of run, each building from configs through mcsim.native and returning a
result: scenario (collectives), flows (raw flows), verbs (RDMA verbs), stream (one link), dpa (a
completion processor); verify and cost are a Scenario's data check and its estimate.
"""
