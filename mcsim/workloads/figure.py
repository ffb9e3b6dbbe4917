# SPDX-License-Identifier: GPL-2.0-only
"""The timeline figure of a workload run (``mcsim workload FILE.toml --timeline timeline.svg``): per job a
lane of compute, one per collective it runs and one of transfers, each step a bar from its first rank's
start to its last rank's end (a step that never ended: hatched, to the run's last time)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mcsim.errors import McsimError
from mcsim.util.output import write_atomic
from mcsim.workloads.job import Collective, Step, present, step_kind

if TYPE_CHECKING:  # a run's result (mcsim.runs.jobs), drawn; the figure needs no run
    from mcsim.runs.jobs import WorkloadResult

STEP_COLORS = {  # a step's colour by what it is
    "compute": "#7f7f7f",
    "allgather": "#d62728",
    "reduce_scatter": "#1f77b4",
    "allreduce": "#2ca02c",
    "transfer": "#ff7f0e",
}
OTHER_COLOR = "#9467bd"  # the other collectives


def _kind(step: Step) -> str:
    """A step's lane: compute, its collective, or transfer."""
    return step.collective if isinstance(step, Collective) else step_kind(step)


def _lanes(result: WorkloadResult) -> list[tuple[int, str]]:
    """(job, kind) per lane, top first: a job's compute, then each collective it runs and its transfers, in
    STEP_COLORS' order."""
    lanes = []
    for j, jr in enumerate(result.jobs):
        kinds = {_kind(s) for s in jr.job.steps}
        lanes += [(j, k) for k in (*STEP_COLORS, *sorted(kinds - set(STEP_COLORS))) if k in kinds]
    return lanes


def timeline_svg(result: WorkloadResult) -> str:
    """The figure as SVG text: time on x (us), per job a lane of compute, one per collective it runs and one
    of transfers;
    a step's bar goes from its first rank's start to its last rank's end."""
    try:
        from mcsim.util.plots import new_figure, svg_of
    except ModuleNotFoundError:
        raise McsimError("the timeline figure needs matplotlib: pip install 'mcsim[report]'") from None
    lanes = _lanes(result)
    row = {lane: len(lanes) - 1 - i for i, lane in enumerate(lanes)}
    fig, ax = new_figure(9.0, 1.2 + 0.45 * len(lanes))
    last = max(int(result.fabric.end_ps), *(int(jr.timeline.max()) for jr in result.jobs))  # the run's last time
    for j, jr in enumerate(result.jobs):
        for s, step in enumerate(jr.job.steps):
            ranks = [r for r in range(len(jr.job.hosts)) if present(step, r)]
            starts, ends = jr.timeline[s, ranks, 1], jr.timeline[s, ranks, 2]
            if (starts < 0).all():
                continue
            start, ended = int(starts[starts >= 0].min()), bool((ends >= 0).all())
            end = int(ends.max()) if ended else last  # a step that never ended: hatched, to the run's last time
            kind = _kind(step)
            ax.broken_barh(
                [(start / 1e6, (end - start) / 1e6)],
                (row[j, kind] - 0.4, 0.8),
                color=STEP_COLORS.get(kind, OTHER_COLOR),
                edgecolor="white" if ended else "black",
                linewidth=0.5,
                hatch=None if ended else "//",
                alpha=1.0 if ended else 0.5,
            )
    ax.set_yticks(range(len(lanes)), [f"{result.jobs[j].job.name}: {k.replace('_', '-')}" for j, k in reversed(lanes)])
    ax.set_xlabel("time (us)")
    unfinished = [jr.job.name for jr in result.jobs if not jr.complete]
    if unfinished:  # the table's row says why
        ax.set_title(f"INCOMPLETE: {', '.join(unfinished)} (hatched: a step that never ended)", fontsize=9)
    return svg_of(fig)


def write_timeline_svg(result: WorkloadResult, path: str | Path) -> None:
    write_atomic(path, timeline_svg(result))
