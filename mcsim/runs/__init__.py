# SPDX-License-Identifier: GPL-2.0-only
"""One module per kind of run, each building from configs and returning a result: scenario (collectives) and jobs
(a workload's jobs on one fabric), both on assemble, the one run skeleton (Simulation, fabric, stack, teams or
jobs, run, collect) through which they reach mcsim.native; flows (raw flows), verbs (RDMA verbs), stream (one
link), dpa (a completion processor). A Scenario's own: scenario_checks, scenario_keywords, scenario_plan (its
public plan), buffers (a rank's region and buffers), cost (its estimate), verify (its data check), team_results.
"""
