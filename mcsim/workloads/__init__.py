# SPDX-License-Identifier: GPL-2.0-only
"""Workloads: jobs of steps (compute, collectives, point-to-point transfers) with dependencies, several jobs on
one fabric."""

from mcsim.workloads.job import Collective, Compute, Job, Message, Transfer
from mcsim.workloads.run import JobResult, WorkloadResult, run_jobs

__all__ = ["Collective", "Compute", "Job", "JobResult", "Message", "Transfer", "WorkloadResult", "run_jobs"]
