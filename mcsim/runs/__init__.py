# SPDX-License-Identifier: GPL-2.0-only
"""One module per kind of run, each building from configs and returning a result: scenario (collectives), jobs (a
workload's jobs on one fabric), verbs (RDMA verbs) and flows (raw flows), all on assemble, the one run skeleton
(Simulation, fabric, stack, teams or jobs, run, collect) through which they reach mcsim.native; stream (one link)
and dpa (a completion processor). A Scenario's own: scenario_checks, scenario_keywords, scenario_plan (its public
plan), buffers (a rank's region and buffers), cost (its estimate), verify (its data check), team_results.
"""
