# SPDX-License-Identifier: GPL-2.0-only
"""Run a sweep: spec -> runs -> store keys -> what the store lacks -> an executor -> the store.

A run's store key hashes what decides its numbers: the Scenario's canonical JSON, the content of its
topology file (a ready topology's name or a path is not enough: the file may change), mcsim's
version and the C++ build key (every source, the compiler, the ns3 wheel). So a run is reused from
the store exactly when it would give the same result, and a changed model reruns everything.

Each run is written to the store the moment it ends, in its own transaction: a sweep killed at any
point keeps every finished run, and running the same spec again runs only what is missing or
stored corrupt (and, with ``retry_failed``, what failed).

A run is counted as ok (it ended and every rank finished), incomplete (it ended, but some rank never
finished: a lossy run out of RC retries, a cut fabric) or failed (it gave no result: bad input, a
crashed worker, the time limit). Incomplete runs are stored and not run again (the same Scenario
gives the same result); a sweep with any run incomplete or failed is not all ok (the command exits 1).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import mcsim
from mcsim import topology
from mcsim.config.codec import GraphTopology, canonical_json
from mcsim.errors import McsimError
from mcsim.runs.assemble import build_versions
from mcsim.runs.scenario import Scenario
from mcsim.sweep.executors import DaskExecutor, Executor, LocalPool
from mcsim.sweep.outcome import COMPLETE, CORRUPT, FAILED, INCOMPLETE, OK, Task, state, why_incomplete
from mcsim.sweep.progress import Progress
from mcsim.sweep.spec import Run, SweepSpec
from mcsim.sweep.store import KEYS_PER_QUERY, Store
from mcsim.sweep.workload_spec import JOB_COUNT, WorkloadRun, unfinished
from mcsim.util import package_data

KEY_FORMAT = "mcsim.sweep-key/1"  # bump when what the key hashes changes
WORKLOAD_KEY_FORMAT = "mcsim.sweep-workload-key/1"  # ... of a workload's run


def versions() -> dict[str, str]:
    """What, besides the Scenario, decides a run's numbers: mcsim's version and the C++ build key.
    An environment in which the C++ models cannot be loaded (a cache folder that cannot be written,
    no compiler) is one McsimError line here, before any worker starts."""
    return {"mcsim": mcsim.__version__, **build_versions(package_data.source_dir())}


def _topology_digest(sc: Scenario) -> str | None:
    """sha256 of the topology file a Scenario names (None for a graph: it is in the Scenario's JSON)."""
    if isinstance(sc.topology, GraphTopology):
        return None
    return _topology_file_digest(sc.topology)


def _topology_file_digest(text: str) -> str:
    """sha256 of the topology file that a name from topologies/ or a path names."""
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


def workload_key(work: WorkloadRun, versions: dict[str, str]) -> str:
    """The store key of one run of a sweep over a workload (sha256 hex): as :func:`run_key`, with the
    workload's canonical JSON in place of the Scenario's, and its Chakra traces' content."""
    what = {
        "format": WORKLOAD_KEY_FORMAT,
        "workload": canonical_json(work.data, "workload"),
        "topology_sha256": _topology_file_digest(work.workload.topology),
        "traces_sha256": work.trace_digests(),
        **versions,
    }
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()


def key_of(run: Run, versions: dict[str, str]) -> str:
    """The store key of a run of any sweep: :func:`run_key` of its Scenario, or :func:`workload_key`."""
    if run.workload is not None:
        return workload_key(run.workload, versions)
    assert run.scenario is not None  # a run has its Scenario or its workload
    return run_key(run.scenario, versions)


def task_of(run: Run, versions: dict[str, str]) -> Task:
    """The Task that runs ``run``: its key, label and Scenario's dict (or its workload's data)."""
    if run.workload is not None:
        return Task(key=key_of(run, versions), label=run.label, scenario=None, workload=run.workload.data)
    assert run.scenario is not None
    return Task(key=key_of(run, versions), label=run.label, scenario=run.scenario.to_dict())


def _cost(run: Run) -> Any:
    """What orders the runs to do, longest first: a Scenario's closed-form packet estimate (a workload's
    runs have none: 0, they keep the spec's order)."""
    return 0 if run.scenario is None else run.scenario.estimate()["packets"]


def stored_json(task: Task) -> str:
    """What the store's scenario column holds of a run: its Scenario's JSON, or ``{"workload": data}``."""
    what = task.scenario if task.workload is None else {"workload": task.workload}
    return json.dumps(what, sort_keys=True, separators=(",", ":"))


MISSING = "missing"  # a run that the store does not hold


@dataclass(frozen=True, slots=True)
class Plan:
    """What a sweep will do: every run with its key and task, and what the store already holds."""

    spec: SweepSpec
    runs: list[Run]
    tasks: list[Task]  # one per run, in expansion order
    stored: dict[str, str]  # key -> OK, INCOMPLETE, FAILED or CORRUPT, for the runs already in the store
    corrupt: dict[str, str]  # key -> which column of its row is corrupt (mcsim.sweep.store.corrupt_text)
    todo: list[Task]  # the runs to execute now, the longest (estimated) first
    versions: dict[str, str]

    def status_of(self, task: Task) -> str:
        """OK, INCOMPLETE, FAILED or CORRUPT (stored) or MISSING."""
        return self.stored.get(task.key, MISSING)


def _distinct(spec: SweepSpec, seen: dict[str, str], key: str, label: str) -> None:
    """A spec's axes are distinct, but two spellings of one value give one Scenario: one line."""
    if key in seen:
        what = "Scenario" if spec.workload is None else "workload"
        raise McsimError(
            f"sweep {spec.name!r}: runs {seen[key]!r} and {label!r} are the same {what}; remove one of the values"
        )
    seen[key] = label


def _wanted(retry_failed: bool) -> set[str]:
    """The stored states (and MISSING) that a sweep runs."""
    return {MISSING, CORRUPT, FAILED} if retry_failed else {MISSING, CORRUPT}


def plan(spec: SweepSpec, store: Store, *, retry_failed: bool = False, runs: list[Run] | None = None) -> Plan:
    """Expand ``spec`` (every Scenario checked: a bad run is one McsimError line, before anything
    runs; ``runs``: its expansion, if already made), key every run, and find what ``store`` lacks
    (missing or corrupt runs; failed ones too with ``retry_failed``). Records the runs as members
    of the sweep."""
    runs = spec.runs() if runs is None else runs
    vers = versions()
    tasks = [task_of(r, vers) for r in runs]
    seen: dict[str, str] = {}
    for task in tasks:
        _distinct(spec, seen, task.key, task.label)
    store.add_members(spec.name, [(t.key, t.label, r.params) for t, r in zip(tasks, runs, strict=True)])
    states = store.states(t.key for t in tasks)
    stored = {key: what for key, (what, _) in states.items()}
    corrupt = {key: str(why) for key, (what, why) in states.items() if what == CORRUPT}
    wanted = _wanted(retry_failed)
    # the longest runs first (by the closed-form packet estimate), so that no worker is left with a
    # long run alone at the end while the others idle; equal estimates keep the spec's order
    cost = {t.key: _cost(r) for t, r in zip(tasks, runs, strict=True)}
    todo = sorted((t for t in tasks if stored.get(t.key, MISSING) in wanted), key=lambda t: -cost[t.key])
    return Plan(spec=spec, runs=runs, tasks=tasks, stored=stored, corrupt=corrupt, todo=todo, versions=vers)


@dataclass(frozen=True, slots=True)
class SweepReport:
    """How a sweep went: counts over all its runs, after this call."""

    name: str
    store: Path
    total: int
    reused: int  # runs that were in the store already (ok, incomplete, or failed and not retried)
    ran: int  # runs executed by this call
    ok: int  # runs stored ok and complete (every rank finished)
    incomplete: list[str]  # labels of the runs stored ok in which some rank never finished
    failed: list[str]  # labels of the runs whose stored status is failed (or that are not stored intact)
    keys: list[str]  # every run's store key, in expansion order
    params: list[dict[str, Any]]  # every run's axis values, in expansion order
    corrupt_rerun: int = 0  # runs whose stored row was corrupt, run again and replaced by this call

    @property
    def all_ok(self) -> bool:
        """Every run ended complete: none failed, none incomplete."""
        return not self.failed and not self.incomplete

    def rows(self) -> list[dict[str, Any]]:
        """The sweep's runs as stored, in expansion order: label, status (ok, incomplete: stored ok but some rank
        or job never finished, failed), error, the axis values, then the metrics (Result.record() plus wall_s,
        peak_rss_b; none for a failed run)."""
        with Store(self.store, create=False) as db:
            stored = {r["key"]: r for r in db.rows(self.name, arrays=False)}
        out = []
        for key, params in zip(self.keys, self.params, strict=True):
            r = stored[key]
            status = state(OK, r["metrics"]) if r["status"] == OK else r["status"]
            head = {"label": r["label"], "status": status, "error": r["error"]}
            out.append({**head, **params, **(r["metrics"] or {})})
        return out

    def timed_rows(self) -> tuple[list[dict[str, Any]], list[str]]:
        """(the rows of :meth:`rows` that have a time, in spec order; ``"<label>: <why not>"`` of each
        that has none, as :func:`why_no_time` says it)."""
        rows = self.rows()
        return [r for r in rows if has_time(r)], [f"{r['label']}: {why_no_time(r)}" for r in rows if not has_time(r)]

    def line(self) -> str:
        """``sweep 'x': 4 runs, 2 ok, 2 incomplete, 0 failed (4 run now, 0 from the store 's.sqlite')``,
        then the incomplete and failed runs' labels (at most SHOWN of each)."""
        corrupt = f", {self.corrupt_rerun} of them over a corrupt row" if self.corrupt_rerun else ""
        text = (
            f"sweep {self.name!r}: {self.total} runs, {self.ok} ok, {len(self.incomplete)} incomplete, "
            f"{len(self.failed)} failed ({self.ran} run now{corrupt}, {self.reused} from the store {str(self.store)!r})"
        )
        for what, labels in (("incomplete", self.incomplete), ("failed", self.failed)):
            if labels:
                text += f"; {what}: " + "; ".join(labels[:SHOWN]) + ("; ..." if len(labels) > SHOWN else "")
        if not self.all_ok:
            text += f" (see: mcsim sweep show {self.store})"
        return text


def _built(runs: Iterator[Run], n: int) -> list[Any]:
    """The next ``n`` runs (fewer at the end), each built as it is reached; a bad one's McsimError ends the list
    as its last item, after the runs built before it."""
    out: list[Any] = []
    for _ in range(n):
        try:
            out.append(next(runs))
        except StopIteration:
            break
        except McsimError as exc:
            out.append(exc)
            break
    return out


SHOWN = 5  # a report's line names at most this many incomplete (and failed) runs


def has_time(row: dict[str, Any]) -> bool:
    """A row of :meth:`SweepReport.rows`: the run ended and every rank had its whole output."""
    return bool(row["status"] == OK and row.get(COMPLETE) is True)


def why_no_time(row: dict[str, Any]) -> str:
    """A row without a time: ``FAILED: <first line>``, ``CORRUPT: <which column>`` or
    ``INCOMPLETE: n of P ranks did not finish`` (a workload's run: ``INCOMPLETE: job 'a': step 3 (AG F1): ...``,
    each job's why; a row stored before jobs said why: ``job 'a' has a step that never ended``)."""
    if row["status"] not in (OK, INCOMPLETE):
        return f"{str(row['status']).upper()}: {str(row['error']).splitlines()[0]}"
    if row.get(JOB_COUNT) is not None:  # its jobs, each with why (a row stored before they said why: which)
        return f"INCOMPLETE: {why_incomplete(row) or unfinished(row)}"
    return f"INCOMPLETE: {row.get('unfinished_ranks')} of {row.get('ranks')} ranks did not finish"


# the characters a default store's file name keeps as they are: Unicode letters and digits, and these
NAME_KEEPS = "._-"
NAME_MAX_B = 255  # a file name's limit in bytes on Linux file systems (NAME_MAX)


def _escaped(char: str) -> str:
    return char if char.isalnum() or char in NAME_KEEPS else "".join(f"%{b:02X}" for b in char.encode())


def default_store(spec: SweepSpec) -> Path:
    """Where a sweep's results go unless told: ``<spec name>.sqlite`` in the current folder. Letters
    and digits of any script, ``.``, ``_`` and ``-`` are kept; any other character (a space, ``/``,
    ``%``, a combining accent) is written as ``%XX`` of its UTF-8 bytes, so distinct names give
    distinct files ("a b" -> ``a%20b.sqlite``, "é" -> ``é.sqlite``, "日本" -> ``日本.sqlite``).
    A name whose file name would pass NAME_MAX_B bytes is one McsimError line."""
    name = "".join(_escaped(c) for c in spec.name) + ".sqlite"
    size_b = len(name.encode())
    if size_b > NAME_MAX_B:
        raise McsimError(
            f"sweep {spec.name[:40]!r}...: its default store file name would be {size_b} bytes, more than a "
            f"file name may have ({NAME_MAX_B}); give --store PATH (or store= in Python), or a shorter name"
        )
    return Path(name)


def execute(
    the_plan: Plan,
    store: Store,
    executor: Executor,
    *,
    progress_stream: TextIO | None = None,
    progress: bool = True,
) -> SweepReport:
    """Run ``the_plan.todo`` on ``executor``; store each run as it ends (over its row if that was
    corrupt); report on the whole sweep."""
    scenario_json = {t.key: stored_json(t) for t in the_plan.todo}
    done_before = len(the_plan.tasks) - len(the_plan.todo)
    stream = progress_stream if progress_stream is not None else sys.stderr
    ran = 0
    if the_plan.todo:
        todo = {t.key for t in the_plan.todo}
        before = [the_plan.status_of(t) for t in the_plan.tasks if t.key not in todo]
        with Progress(
            len(the_plan.tasks),
            stored=done_before,
            stored_incomplete=before.count(INCOMPLETE),
            stored_failed=before.count(FAILED),
            stream=stream if progress else io.StringIO(),
        ) as bar:
            for outcome in executor.run(the_plan.todo, on_start=bar.started):
                over = outcome.key in the_plan.corrupt
                store.put(outcome, scenario_json[outcome.key], the_plan.versions, over_corrupt=over)
                ran += 1
                bar.finished(outcome)
    status = store.status(t.key for t in the_plan.tasks)
    labels = {what: [t.label for t in the_plan.tasks if status.get(t.key) == what] for what in (OK, INCOMPLETE)}
    return SweepReport(
        name=the_plan.spec.name,
        store=store.path,
        total=len(the_plan.tasks),
        reused=done_before,
        ran=ran,
        ok=len(labels[OK]),
        incomplete=labels[INCOMPLETE],
        failed=[t.label for t in the_plan.tasks if status.get(t.key) not in (OK, INCOMPLETE)],  # failed, or lost
        keys=[t.key for t in the_plan.tasks],
        params=[r.params for r in the_plan.runs],
        corrupt_rerun=sum(1 for t in the_plan.todo if t.key in the_plan.corrupt),
    )


def executor(*, client: Any = None, workers: int | None = None, time_limit_s: float | None = None) -> Executor:
    """A DaskExecutor on ``client`` if given, else a LocalPool of ``workers`` processes."""
    if client is not None:
        return DaskExecutor(client, time_limit_s=time_limit_s)
    return LocalPool(workers=workers, time_limit_s=time_limit_s)


def run_sweep(
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


class DryRun:
    """``--dry-run``: a spec's runs listed as they are expanded and keyed (:meth:`rows`, a generator:
    the first rows come before the last run is built), each with its state in the store. Reads the
    store (None: none exists yet) and writes nothing. After the rows: :meth:`line` and :attr:`corrupt`."""

    def __init__(self, spec: SweepSpec, store: Store | None, *, retry_failed: bool = False) -> None:
        spec.check_size()
        self.spec, self.store, self.retry_failed = spec, store, retry_failed
        self.counts: Counter[str] = Counter()
        self.corrupt: list[str] = []  # the one line of each corrupt row (Store.corrupt_line)

    def rows(self) -> Iterator[dict[str, Any]]:
        """One row per run: index, label, state (missing, ok, incomplete, failed, corrupt), key (12 hex)."""
        vers = versions()
        seen: dict[str, str] = {}
        runs = self.spec.iter_runs()
        size = 1  # the first run is listed as soon as it is built, then chunks double up to one query's keys
        while chunk := _built(runs, size):
            size = min(2 * size, KEYS_PER_QUERY)
            bad = chunk.pop() if isinstance(chunk[-1], McsimError) else None
            keys = [key_of(r, vers) for r in chunk]
            for r, key in zip(chunk, keys, strict=True):
                _distinct(self.spec, seen, key, r.label)
            states = self.store.states(keys) if self.store is not None else {}
            for r, key in zip(chunk, keys, strict=True):
                what, why = states.get(key, (MISSING, None))
                self.counts[what] += 1
                if what == CORRUPT and self.store is not None:
                    self.corrupt.append(f"{self.store.corrupt_line(key, r.label, why)}; a run replaces it")
                yield {"run": r.index, "label": r.label, "status": what, "key": key[:12]}
            if bad is not None:  # the runs before it are listed; a bad run is still one line
                raise bad

    def line(self, store_path: Path) -> str:
        """``sweep 'x': 6 runs: 4 stored ok, 0 stored incomplete, 0 stored failed, 1 stored corrupt,
        2 to run (store 'x.sqlite')``."""
        c = self.counts
        todo = sum(c[what] for what in _wanted(self.retry_failed))
        stored = ", ".join(f"{c[what]} stored {what}" for what in (OK, INCOMPLETE, FAILED, CORRUPT))
        return f"sweep {self.spec.name!r}: {c.total()} runs: {stored}, {todo} to run (store {str(store_path)!r})"
