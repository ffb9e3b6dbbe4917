# SPDX-License-Identifier: GPL-2.0-only
"""Run a sweep: spec -> runs -> store keys -> what the store lacks -> an executor -> the store.

A run's store key hashes what decides its numbers: the Scenario's canonical JSON, the content of its
topology file (a ready topology's name or a path is not enough: the file may change), mcsim's
version and the C++ build key (every source, the compiler, the ns3 wheel). So a run is reused from
the store exactly when it would give the same result, and a changed model reruns everything.

Each run is written to the store the moment it ends, in its own transaction: a sweep killed at any
point keeps every finished run, and running the same spec again runs only what is missing (and,
with ``retry_failed``, what failed).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import mcsim
from mcsim import runtime, topology
from mcsim.errors import McsimError
from mcsim.plain import GraphTopology
from mcsim.scenario import Scenario
from mcsim.sweep.executors import DaskExecutor, Executor, LocalPool
from mcsim.sweep.outcome import FAILED, OK, Task
from mcsim.sweep.progress import Progress
from mcsim.sweep.spec import Run, SweepSpec
from mcsim.sweep.store import Store

KEY_FORMAT = "mcsim.sweep-key/1"  # bump when what the key hashes changes


def versions() -> dict[str, str]:
    """What, besides the Scenario, decides a run's numbers: mcsim's version and the C++ build key."""
    sources = runtime.source_dir()
    wheel = runtime.find_ns3()
    return {
        "mcsim": mcsim.__version__,
        "ns3": wheel.version,
        "build_key": runtime.build_key(sources, runtime.find_toolchain(), wheel),
    }


def _topology_digest(sc: Scenario) -> str | None:
    """sha256 of the topology file a Scenario names (None for a graph: it is in the Scenario's JSON)."""
    if isinstance(sc.topology, GraphTopology):
        return None
    text = sc.topology
    files = topology.ready()
    path = files[text] if text in files and not Path(text).suffix else Path(text)
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise McsimError(f"topology {text!r}: cannot read {str(path)!r} ({exc.strerror})") from None


def run_key(sc: Scenario, versions: dict[str, str]) -> str:
    """The store key of one run (sha256 hex); see the module doc for what it covers."""
    what = {"format": KEY_FORMAT, "scenario": sc.key(), "topology_sha256": _topology_digest(sc), **versions}
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Plan:
    """What a sweep will do: every run with its key and task, and what the store already holds."""

    spec: SweepSpec
    runs: list[Run]
    tasks: list[Task]  # one per run, in expansion order
    stored: dict[str, str]  # key -> "ok" | "failed", for the runs already in the store
    todo: list[Task]  # the runs to execute now, the longest (estimated) first
    versions: dict[str, str]

    def status_of(self, task: Task) -> str:
        """ "ok" / "failed" (stored) or "missing"."""
        return self.stored.get(task.key, "missing")


def plan(spec: SweepSpec, store: Store, *, retry_failed: bool = False, runs: list[Run] | None = None) -> Plan:
    """Expand ``spec`` (every Scenario checked: a bad run is one McsimError line, before anything
    runs; ``runs``: its expansion, if already made), key every run, and find what ``store`` lacks.
    Records the runs as members of the sweep."""
    runs = spec.runs() if runs is None else runs
    vers = versions()
    tasks = [Task(key=run_key(r.scenario, vers), label=r.label, scenario=r.scenario.to_dict()) for r in runs]
    seen: dict[str, str] = {}
    for task in tasks:  # a spec's axes are distinct, but two spellings of one value give one Scenario
        if task.key in seen:
            raise McsimError(
                f"sweep {spec.name!r}: runs {seen[task.key]!r} and {task.label!r} are the same Scenario; "
                "remove one of the values"
            )
        seen[task.key] = task.label
    store.add_members(spec.name, [(t.key, t.label, r.params) for t, r in zip(tasks, runs, strict=True)])
    stored = store.status(t.key for t in tasks)
    wanted = {"missing", FAILED} if retry_failed else {"missing"}
    # the longest runs first (by the closed-form packet estimate), so that no worker is left with a
    # long run alone at the end while the others idle; equal estimates keep the spec's order
    cost = {t.key: r.scenario.estimate()["packets"] for t, r in zip(tasks, runs, strict=True)}
    todo = sorted((t for t in tasks if stored.get(t.key, "missing") in wanted), key=lambda t: -cost[t.key])
    return Plan(spec=spec, runs=runs, tasks=tasks, stored=stored, todo=todo, versions=vers)


@dataclass(frozen=True, slots=True)
class SweepReport:
    """How a sweep went: counts over all its runs, after this call."""

    name: str
    store: Path
    total: int
    reused: int  # runs that were in the store already (ok, or failed and not retried)
    ran: int  # runs executed by this call
    ok: int
    failed: list[str]  # labels of the runs whose stored status is failed
    keys: list[str]  # every run's store key, in expansion order
    params: list[dict[str, Any]]  # every run's axis values, in expansion order

    @property
    def all_ok(self) -> bool:
        return not self.failed

    def rows(self) -> list[dict[str, Any]]:
        """The sweep's runs as stored, in expansion order: label, status, error, the axis values,
        then the metrics (Result.record() plus wall_s, peak_rss_b; none for a failed run)."""
        with Store(self.store, create=False) as db:
            stored = {r["key"]: r for r in db.rows(self.name, arrays=False)}
        out = []
        for key, params in zip(self.keys, self.params, strict=True):
            r = stored[key]
            head = {"label": r["label"], "status": r["status"], "error": r["error"]}
            out.append({**head, **params, **(r["metrics"] or {})})
        return out

    def timed_rows(self) -> tuple[list[dict[str, Any]], list[str]]:
        """(the rows of :meth:`rows` that have a time, in spec order; ``"<label>: <why not>"`` of each
        that has none, as :func:`why_no_time` says it)."""
        rows = self.rows()
        return [r for r in rows if has_time(r)], [f"{r['label']}: {why_no_time(r)}" for r in rows if not has_time(r)]

    def line(self) -> str:
        text = (
            f"sweep {self.name!r}: {self.total} runs, {self.ok} ok, {len(self.failed)} failed "
            f"({self.ran} run now, {self.reused} from the store {str(self.store)!r})"
        )
        if self.failed:
            shown = "; ".join(self.failed[:5]) + ("; ..." if len(self.failed) > 5 else "")
            text += f"; failed: {shown} (see: mcsim sweep show {self.store})"
        return text


def has_time(row: dict[str, Any]) -> bool:
    """A row of :meth:`SweepReport.rows`: the run ended and every rank had its whole output."""
    return bool(row["status"] == OK and row["complete"])


def why_no_time(row: dict[str, Any]) -> str:
    """A row without a time: ``FAILED: <first line>`` or ``INCOMPLETE: n of P ranks did not finish``."""
    if row["status"] != OK:
        return f"FAILED: {str(row['error']).splitlines()[0]}"
    return f"INCOMPLETE: {row['unfinished_ranks']} of {row['ranks']} ranks did not finish"


def default_store(spec: SweepSpec) -> Path:
    """Where a sweep's results go unless told: ``<spec name>.sqlite`` in the current folder (characters
    other than letters, digits, ``.``, ``_`` and ``-`` become ``_``)."""
    return Path(re.sub(r"[^A-Za-z0-9._-]", "_", spec.name) + ".sqlite")


def execute(
    the_plan: Plan,
    store: Store,
    executor: Executor,
    *,
    progress_stream: TextIO | None = None,
    progress: bool = True,
) -> SweepReport:
    """Run ``the_plan.todo`` on ``executor``; store each run as it ends; report on the whole sweep."""
    scenario_json = {t.key: json.dumps(t.scenario, sort_keys=True, separators=(",", ":")) for t in the_plan.todo}
    done_before = len(the_plan.tasks) - len(the_plan.todo)
    stream = progress_stream if progress_stream is not None else sys.stderr
    ran = 0
    if the_plan.todo:
        with Progress(len(the_plan.tasks), stored=done_before, stream=stream if progress else io.StringIO()) as bar:
            for outcome in executor.run(the_plan.todo, on_start=bar.started):
                store.put(outcome, scenario_json[outcome.key], the_plan.versions)
                ran += 1
                bar.finished(outcome)
    status = store.status(t.key for t in the_plan.tasks)
    return SweepReport(
        name=the_plan.spec.name,
        store=store.path,
        total=len(the_plan.tasks),
        reused=done_before,
        ran=ran,
        ok=sum(1 for t in the_plan.tasks if status.get(t.key) == OK),
        failed=[t.label for t in the_plan.tasks if status.get(t.key) == FAILED],
        keys=[t.key for t in the_plan.tasks],
        params=[r.params for r in the_plan.runs],
    )


def executor(*, client: Any = None, workers: int | None = None, time_limit_s: float | None = None) -> Executor:
    """A DaskExecutor on ``client`` if given, else a LocalPool of ``workers`` processes."""
    if client is not None:
        return DaskExecutor(client, time_limit_s=time_limit_s)
    return LocalPool(workers=workers, time_limit_s=time_limit_s)


def run(
    spec: SweepSpec | str | os.PathLike[str],
    store: str | os.PathLike[str] | None = None,
    *,
    client: Any = None,
    workers: int | None = None,
    time_limit_s: float | None = None,
    retry_failed: bool = False,
    progress: bool = True,
) -> SweepReport:
    """Run a sweep (a SweepSpec or a TOML file) and store every run in ``store`` (SQLite; default
    ``<name>.sqlite``). ``client``: a ``distributed.Client`` to run on a Dask cluster; else a local
    pool of ``workers`` processes (default: one per core). ``time_limit_s``: a run that takes longer
    is stopped and stored as failed. Runs already stored are not run again (failed ones are with
    ``retry_failed``)."""
    the_spec = spec if isinstance(spec, SweepSpec) else SweepSpec.from_toml(spec)
    runs = the_spec.runs()  # a bad spec fails here, before the store is touched
    runs_on = executor(client=client, workers=workers, time_limit_s=time_limit_s)
    with Store(store if store is not None else default_store(the_spec)) as db:
        return execute(plan(the_spec, db, retry_failed=retry_failed, runs=runs), db, runs_on, progress=progress)


def dry_run_rows(the_plan: Plan) -> list[dict[str, Any]]:
    """One row per run for ``--dry-run``: index, label, stored status, key (first 12 hex digits)."""
    return [
        {"run": i, "label": t.label, "status": the_plan.status_of(t), "key": t.key[:12]}
        for i, t in enumerate(the_plan.tasks)
    ]
