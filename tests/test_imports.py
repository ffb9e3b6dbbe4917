# SPDX-License-Identifier: GPL-2.0-only
"""Layering: mcsim's modules import each other without a cycle, physics is a leaf, config/, topology/, util/
and routing/ reach neither the C ABI (native/) nor a run (runs/), native/ reaches no run and runs/ nothing
above them (sweep/, reference/, report/, the CLI).

The imports are read from the source files with ``ast`` (nothing is imported): every ``import`` and
``from ... import`` statement, at module level or inside a function, including relative ones.
"""

import ast
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

PACKAGE_DIR = Path(__file__).resolve().parent.parent / "mcsim"
PHYSICS_MAY_IMPORT = {"mcsim.errors", "mcsim.units"}
C_LOADERS = {"ctypes", "cppyy"}  # what loads C++ into the process
NATIVE_AND_RUNS = ("mcsim.native", "mcsim.runs")  # the only caller of the C ABI; the runs built through it
ABOVE_RUNS = ("mcsim.sweep", "mcsim.reference", "mcsim.report", "mcsim.cli")  # what plans many runs, or a command


def _module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(package: str, node: ast.Import | ast.ImportFrom, known: set[str]) -> set[str]:
    """The modules of ``known`` that one import statement in a module of ``package`` imports."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in known}
    source = node.module or ""
    if node.level:  # relative: the module's package, one level up per extra dot
        parts = package.split(".")
        base = ".".join(parts[: len(parts) - node.level + 1])
        source = f"{base}.{source}" if source else base
    found = {f"{source}.{alias.name}" for alias in node.names if f"{source}.{alias.name}" in known}
    if len(found) < len(node.names) and source in known:  # names that are not submodules come from source
        found.add(source)
    return found


def import_graph(root: Path) -> nx.DiGraph:
    """Module -> the modules of the same package it imports, from every .py file under ``root``."""
    return _graph(root, lambda tree: [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)])


def _graph(root: Path, imports_of) -> nx.DiGraph:
    """Module -> the modules of the same package that ``imports_of(tree)``, a module's import statements, import."""
    files = {_module_name(root, path): path for path in sorted(root.rglob("*.py"))}
    known = set(files)
    graph = nx.DiGraph()
    graph.add_nodes_from(known)
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in imports_of(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            graph.add_edges_from((name, target) for target in _imported(package, node, known) if target != name)
    return graph


def _is_type_checking(node: ast.stmt) -> bool:
    """``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``): imports for type checkers, never run."""
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _run_imports(body: list[ast.stmt], module_level: bool) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of ``body`` that run (none under ``if TYPE_CHECKING``); ``module_level``: those that
    run when the module is imported (none inside a function or class body)."""
    found: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif _is_type_checking(node):
            found += _run_imports(node.orelse, module_level)  # type: ignore[attr-defined]
        elif module_level and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    found += _run_imports([child], module_level)
                elif isinstance(child, ast.excepthandler):
                    found += _run_imports(child.body, module_level)
    return found


def run_import_graph(root: Path, *, module_level: bool) -> nx.DiGraph:
    """import_graph of the imports that run: without type checkers' (``if TYPE_CHECKING``); ``module_level``: only
    those importing a module runs (none inside a function)."""
    return _graph(root, lambda tree: _run_imports(tree.body, module_level))


def cycles(graph: nx.DiGraph) -> list[str]:
    """Every import cycle, as "a -> b -> a", each starting at its smallest module name."""
    found = []
    for cycle in nx.simple_cycles(graph):
        start = cycle.index(min(cycle))
        ring = cycle[start:] + cycle[:start]
        found.append(" -> ".join([*ring, ring[0]]))
    return sorted(found)


def test_mcsim_has_no_import_cycle():
    graph = import_graph(PACKAGE_DIR)
    assert graph.number_of_edges() > 20, "the walk found the package's imports"
    found = cycles(graph)
    assert not found, f"import cycles among mcsim modules: {'; '.join(found)}"


def test_physics_imports_only_errors_and_units():
    assert set(import_graph(PACKAGE_DIR).successors("mcsim.topology.physics")) <= PHYSICS_MAY_IMPORT


def _package_modules(graph: nx.DiGraph, package: str) -> set[str]:
    """``package`` and every module inside it (importing one runs the package's __init__ too)."""
    return {name for name in graph if name == package or name.startswith(f"{package}.")}


def _inside(name: str, packages: tuple[str, ...]) -> bool:
    """Whether module ``name`` is one of ``packages`` or inside one."""
    return any(name == package or name.startswith(f"{package}.") for package in packages)


def _reach(graph: nx.DiGraph, package: str) -> set[str]:
    """``package``'s modules and every module they import, directly or through others."""
    own = _package_modules(graph, package)
    return own | {target for name in own for target in nx.descendants(graph, name)}


def _external_imports(path: Path) -> set[str]:
    """The top-level names of every module one file imports (``ctypes``, ``numpy``, ``mcsim``, ...)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.partition(".")[0])
    return found


def _module_path(name: str) -> Path:
    path = PACKAGE_DIR.parent.joinpath(*name.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


@pytest.mark.parametrize(
    "module",
    [
        "mcsim.topology",
        "mcsim.topology.physics",
        "mcsim.routing",
        "mcsim.routing.routes",
        "mcsim.routing.layout",
        "mcsim.routing.subnet_manager",
    ],
)
def test_planning_modules_do_not_reach_the_fabric_or_the_stream(module):
    reach = nx.descendants(import_graph(PACKAGE_DIR), module)
    assert not {name for name in reach if _inside(name, NATIVE_AND_RUNS)}, f"{module} reaches {sorted(reach)}"


@pytest.mark.parametrize("package", ["mcsim.config", "mcsim.topology", "mcsim.util", "mcsim.routing"])
def test_config_topology_util_and_routing_load_no_c_abi_nor_any_run(package):
    graph = import_graph(PACKAGE_DIR)
    reach = _reach(graph, package)
    assert len(_package_modules(graph, package)) > 3, f"the walk found {package}'s modules"
    reached = sorted(name for name in reach if _inside(name, NATIVE_AND_RUNS))
    assert not reached, f"{package} reaches {reached}"
    c_loaders = {name: found for name in sorted(reach) if (found := _external_imports(_module_path(name)) & C_LOADERS)}
    assert not c_loaders, f"{package} reaches modules that import a C loader: {c_loaders}"


CONFIG_MODULES = (
    "mcsim.config.fabric",
    "mcsim.config.rdma",
    "mcsim.config.dpa",
    "mcsim.config.collectives",
    "mcsim.config.codec",
    "mcsim.config.faults_file",
)


def test_the_configs_import_in_a_fresh_process_without_ctypes_cppyy_or_any_run_module():
    # numpy itself imports ctypes when it can, so the child blocks both C loaders outright (an import of
    # either raises ImportError) rather than looking for them afterwards
    code = (
        "import sys\n"
        "sys.modules['ctypes'] = sys.modules['cppyy'] = None\n"
        f"import {', '.join(CONFIG_MODULES)}\n"
        "import mcsim\n"
        "print(mcsim.__file__)\n"
        "print(' '.join(sorted(name for name in sys.modules if name.startswith('mcsim'))))\n"
    )
    root = str(PACKAGE_DIR.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    where, names = done.stdout.splitlines()
    assert Path(where) == PACKAGE_DIR / "__init__.py", f"the child imported another mcsim: {where}"
    loaded = set(names.split())
    assert set(CONFIG_MODULES) <= loaded
    run = sorted(name for name in loaded if _inside(name, NATIVE_AND_RUNS))  # what only a run loads
    assert not run, f"importing mcsim.config loads {run}"


def test_results_are_plain_data_that_read_back_without_the_fabric_or_ns3():
    reach = nx.descendants(import_graph(PACKAGE_DIR), "mcsim.result")
    assert not {name for name in reach if _inside(name, NATIVE_AND_RUNS)}, sorted(reach)


GROUND = {"mcsim.errors", "mcsim.units", "mcsim.bounds"}  # the floor every room stands on


def test_results_import_only_the_ground_and_the_configs_no_result():
    # a result names no routing type (result.Tree is what it keeps of a multicast tree) and the configs
    # take NEVER from the ground, not from a result
    graph = import_graph(PACKAGE_DIR)
    assert set(graph.successors("mcsim.result")) <= GROUND, sorted(graph.successors("mcsim.result"))
    importers = sorted(name for name in _package_modules(graph, "mcsim.config") if graph.has_edge(name, "mcsim.result"))
    assert not importers, f"config modules import mcsim.result: {importers}"


def test_workloads_draw_without_the_report():
    # a workload's timeline figure takes the shared plotting helpers from mcsim.util.plots
    reached = sorted(
        name for name in _reach(import_graph(PACKAGE_DIR), "mcsim.workloads") if _inside(name, ("mcsim.report",))
    )
    assert not reached, f"mcsim.workloads reaches {reached}"


def test_compare_and_report_bound_their_workers_without_the_sweeps_worker_pool():
    # the limit on local worker processes is the machine's (mcsim.util.machine), not the pool's
    graph = import_graph(PACKAGE_DIR)
    for package in ("mcsim.reference", "mcsim.report"):
        pool = sorted(
            name for name in _package_modules(graph, package) if graph.has_edge(name, "mcsim.sweep.executors")
        )
        assert not pool, f"{package} imports mcsim.sweep.executors: {pool}"


@pytest.mark.parametrize(
    ("package", "above"), [("mcsim.native", ("mcsim.runs", *ABOVE_RUNS)), ("mcsim.runs", ABOVE_RUNS)]
)
def test_native_reaches_no_run_and_runs_nothing_above_them(package, above):
    graph = import_graph(PACKAGE_DIR)
    assert len(_package_modules(graph, package)) > 5, f"the walk found {package}'s modules"
    reached = sorted(name for name in _reach(graph, package) if _inside(name, above))
    assert not reached, f"{package} reaches {reached}"


@pytest.mark.parametrize("module", ["mcsim.topology.builders", "mcsim.topology.rules", "mcsim.topology.files"])
def test_topology_takes_its_link_physics_from_physics(module):
    # the builders make link attributes, the rules check them, the files parse encodings
    assert "mcsim.topology.physics" in set(import_graph(PACKAGE_DIR).successors(module))


def test_the_walk_finds_function_level_and_relative_imports(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.sub.c import thing\n    return thing\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text("from ..a import x\nimport os\n")
    (pkg / "d.py").write_text("from . import a\nimport pkg.sub\n")
    graph = import_graph(pkg)
    assert set(graph.edges) == {
        ("pkg.a", "pkg.b"),
        ("pkg.b", "pkg.sub.c"),
        ("pkg.sub.c", "pkg.a"),
        ("pkg.d", "pkg.a"),
        ("pkg.d", "pkg.sub"),
    }
    assert cycles(graph) == ["pkg.a -> pkg.b -> pkg.sub.c -> pkg.a"]


MAX_IMPORT_CHAIN = 20  # modules one after another that importing the deepest loads, at most


def test_the_longest_module_level_import_chain_is_at_most_20():
    # a chain of imports that run when a module is imported (a command's heavy dependency imported in its own body
    # is not in it); each extra floor is one more module a newcomer reads to follow a name
    chain = nx.dag_longest_path(run_import_graph(PACKAGE_DIR, module_level=True))
    assert len(chain) > 5, "the walk found the package's chains"
    assert len(chain) <= MAX_IMPORT_CHAIN, f"{len(chain)} modules: {' -> '.join(chain)}"


@pytest.mark.parametrize("package", ["mcsim.workloads", "mcsim.sweep", "mcsim.reference", "mcsim.report"])
def test_what_plans_or_shows_runs_reaches_native_only_through_runs(package):
    # runs/assemble is the one run skeleton (and the C++ build a run loads): nothing above it calls native/ itself
    graph = import_graph(PACKAGE_DIR)
    direct = sorted(
        f"{name} -> {target}"
        for name in _package_modules(graph, package)
        for target in graph.successors(name)
        if _inside(target, ("mcsim.native",))
    )
    assert not direct, f"{package} imports native/ itself: {direct}"


# what builds and runs a simulation: its Simulation, its fabric, its RDMA stack, its teams and jobs
SKELETON = ("mcsim.native.simulation", "mcsim.native.fabric", "mcsim.native.rdma", "mcsim.native.collectives")
SKELETON_WRITERS = {
    "mcsim.runs.assemble",  # the one run skeleton: collectives, jobs, verbs and raw flows build on it
    "mcsim.runs.dpa",  # saturate: a completion processor alone, no fabric
}


def test_one_place_writes_the_run_skeleton():
    graph = import_graph(PACKAGE_DIR)
    writers = {
        name
        for name in graph
        if not _inside(name, ("mcsim.native",)) and any(graph.has_edge(name, part) for part in SKELETON)
    }
    assert writers == SKELETON_WRITERS, sorted(writers)


def test_workloads_are_data_that_reach_no_native_module():
    # jobs, generators, workload files, Chakra traces and the timeline figure: a run of jobs is mcsim.runs.jobs
    graph = run_import_graph(PACKAGE_DIR, module_level=False)
    data = _package_modules(graph, "mcsim.workloads")  # `mcsim workload` is mcsim.runs.job_commands
    assert len(data) > 5, "the walk found the workloads' modules"
    reached = sorted(
        f"{name} reaches {target}"
        for name in data
        for target in nx.descendants(graph, name)
        if _inside(target, ("mcsim.native",))
    )
    assert not reached, reached[:5]


def test_the_long_chain_walk_skips_function_bodies_and_type_checking(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import b\nfrom pkg import c\n"
    )
    (pkg / "b.py").write_text("def f():\n    from pkg import c\n")
    (pkg / "c.py").write_text("try:\n    from pkg import d\nexcept ImportError:\n    pass\n")
    (pkg / "d.py").write_text("")
    assert set(run_import_graph(pkg, module_level=True).edges) == {("pkg.a", "pkg.c"), ("pkg.c", "pkg.d")}
    assert set(run_import_graph(pkg, module_level=False).edges) == {
        ("pkg.a", "pkg.c"),
        ("pkg.b", "pkg.c"),
        ("pkg.c", "pkg.d"),
    }
