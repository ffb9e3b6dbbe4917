# SPDX-License-Identifier: GPL-2.0-only
"""Shared fixtures: a private copy of ns3_modules/, a private build cache, topology files, a sweep
worker that crashes on request."""

import json
import shutil
import sys
import textwrap
from pathlib import Path

import networkx as nx
import pytest

from mcsim import topology

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def module_sources(tmp_path_factory) -> Path:
    """A copy of ns3_modules/ that a test module may edit (restore what you change)."""
    dst = tmp_path_factory.mktemp("src") / "ns3_modules"
    shutil.copytree(REPO / "mcsim" / "ns3_modules", dst)
    return dst


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory) -> Path:
    """A build cache private to one test module."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def star(tmp_path):
    """star(hosts) -> the path of a topology file: hosts hosts on one switch, 100 Gbit/s links."""

    def make(hosts: int) -> str:
        path = tmp_path / f"star-{hosts}.toml"
        path.write_text(
            f'name = "star-{hosts}"\ndescription = "{hosts} hosts on one switch"\n[builder]\nname = "leaf_spine"\n'
            f'leaves = 1\nspines = 0\nhosts_per_leaf = {hosts}\nrate = "100Gbps"\nencoding = "none"\ndelay = "100ns"\n'
        )
        return str(path)

    return make


@pytest.fixture
def star_graph():
    """star_graph(hosts) -> the graph of star(hosts), for a Scenario (no file needed)."""

    def make(hosts: int) -> nx.Graph:
        g = topology.leaf_spine(1, 0, hosts, rate_bps=100 * 10**9, delay_ps=100_000)
        g.graph.update(name=f"star-{hosts}", description=f"{hosts} hosts on one switch")
        return g

    return make


# what a wrapped sweep worker does on a task of the given label (worker_command's default actions)
WORKER_ACTIONS = {"abort": "abort", "exit": "exit", "raise": "raise", "hang": "hang"}


@pytest.fixture
def worker_command(tmp_path):
    """worker_command(simulates=True, actions=WORKER_ACTIONS) -> a sweep worker command that runs the
    real worker, but prints to stdout before every run (the protocol must survive it) and, on a task
    whose label is a key of ``actions``, aborts, exits, raises or hangs. ``simulates`` False: it skips
    loading the runtime (faster to start), for tests whose tasks never simulate."""

    def make(simulates: bool = True, actions: dict[str, str] | None = None) -> list[str]:
        script = tmp_path / f"wrapped_worker_{len(list(tmp_path.glob('wrapped_worker_*')))}.py"
        skip_load = "" if simulates else "from mcsim.native import runtime\nruntime.load = lambda: None\n"
        script.write_text(
            skip_load
            + f"ACTIONS = {json.dumps(WORKER_ACTIONS if actions is None else actions)}\n"
            + textwrap.dedent(
                """
                import os, sys, time
                from mcsim.sweep import worker

                real = worker.run_task

                def run_task(task):
                    print("noise on stdout from Python")
                    os.write(1, b"noise on file descriptor 1\\n")
                    action = ACTIONS.get(task.label)
                    if action == "abort":
                        print("about to abort", file=sys.stderr, flush=True)
                        os.abort()
                    if action == "exit":
                        print("about to exit", file=sys.stderr, flush=True)
                        os._exit(3)
                    if action == "raise":
                        raise RuntimeError("a bug in the run")
                    if action == "hang":
                        print("about to hang", file=sys.stderr, flush=True)
                        time.sleep(600)
                    return real(task)

                worker.run_task = run_task
                sys.exit(worker.main())
                """
            )
        )
        return [sys.executable, str(script)]

    return make
