# SPDX-License-Identifier: GPL-2.0-only
"""Workloads as data: jobs of steps (compute, collectives, point-to-point transfers) with dependencies, their
generators (training), workload files and Chakra traces. A run of jobs on one fabric is mcsim.runs.jobs
(``from mcsim import run_jobs``)."""

from mcsim.workloads.job import Collective, Compute, Job, Message, Transfer

__all__ = ["Collective", "Compute", "Job", "Message", "Transfer"]
