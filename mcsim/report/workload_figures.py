# SPDX-License-Identifier: GPL-2.0-only
"""The report's workload figure: one FSDP iteration's timeline with two rings and with the network doing
both collectives (multicast Allgather, in-network Reduce-Scatter), side by side."""

from __future__ import annotations

from mcsim import topology as topologies
from mcsim.reference.claims import FDR
from mcsim.report.panel import Panel, Runs, topology_for
from mcsim.runs.jobs import WorkloadResult, run_jobs
from mcsim.workloads.figure import timeline_svg
from mcsim.workloads.training import fsdp_job

PAIRS = (("ring", "ring"), ("mcast", "innet"))  # (Allgather, Reduce-Scatter)
FSDP = {"layers": 4, "bytes_per_layer": 16 << 20, "forward_ps": 200_000_000, "backward_ps": 400_000_000}


def fsdp_timeline(quick: bool, runs: Runs) -> Panel:
    """The figure: per pair a run of one FSDP iteration on every host, drawn as lanes of one timeline."""
    topo = topology_for(quick)
    hosts = tuple(range(topologies.host_count(topologies.resolve(topo))))
    done = [
        run_jobs(
            [fsdp_job(f"AG {ag}, RS {rs}", hosts, allgather=ag, reduce_scatter=rs, **FSDP)], topology=topo, rate=FDR
        )
        for ag, rs in PAIRS
    ]
    results = [w.jobs[0] for w in done]
    table = [
        (r.job.name, round(r.iteration_ps / 1e6, 1), round(r.compute_ps / 1e6, 1), round(r.exposed_comm_ps / 1e6, 1))
        for r in results
    ]
    return Panel(
        id="fsdp-timeline",
        title=f"One FSDP iteration on {topo} at {FDR}: two rings against the network doing both collectives",
        caption=f"One FSDP iteration on the {len(hosts)} hosts of {topo} (mcsim.workloads.training.fsdp_job: "
        f"{FSDP['layers']} layers of {FSDP['bytes_per_layer'] >> 20} MiB of parameters, forward "
        f"{FSDP['forward_ps'] // 10**6} us and backward {FSDP['backward_ps'] // 10**6} us per layer, the Allgathers "
        "prefetched one ahead), once with ring Allgathers and Reduce-Scatters and once with multicast Allgathers and "
        "in-network Reduce-Scatters. Each bar is a step from its first rank's start to its last rank's end; the "
        "gaps in a compute lane are the bubble the network leaves (exposed communication = iteration - compute).",
        svg=timeline_svg(WorkloadResult(tuple(results), done[0].fabric)),  # the pairs as lanes of one figure
        columns=("pair", "iteration_us", "compute_us", "exposed_us"),
        rows=table,
    )
