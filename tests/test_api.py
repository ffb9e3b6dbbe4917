# SPDX-License-Identifier: GPL-2.0-only
"""The public API is importable from ``mcsim``, and ``import mcsim`` stays cheap."""

import importlib
import subprocess
import sys

import pytest

import mcsim


def _loaded_after(code: str) -> set[str]:
    """The heavy modules loaded by a fresh interpreter after running ``code``."""
    heavy = ("numpy", "networkx", "cppyy", "mcsim.native.runtime")
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_import_mcsim_loads_neither_numpy_networkx_nor_ns3():
    assert _loaded_after("import mcsim") == set()


def test_planning_from_mcsim_does_not_load_ns3():
    loaded = _loaded_after("from mcsim import Scenario\nScenario(topology='fat-tree-k4').estimate()")
    assert "networkx" in loaded  # the scenario really was planned
    assert "cppyy" not in loaded


@pytest.mark.parametrize("name", mcsim.__all__)
def test_every_public_name_is_its_modules_object(name):
    assert getattr(mcsim, name) is getattr(importlib.import_module(mcsim.API[name]), name)
    assert name in dir(mcsim)


def test_the_issue_s_import_line_works():
    from mcsim import FabricConfig, Faults, RcConfig, RdmaConfig, Result, Scenario  # noqa: F401

    assert Scenario.__module__ == "mcsim.runs.scenario" and Result.__module__ == "mcsim.result"


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match=r"module 'mcsim' has no attribute 'Scenari'"):
        mcsim.Scenari  # noqa: B018


@pytest.mark.parametrize("name", ["simulate", "run_verbs"])
def test_the_run_functions_name_the_fabric_s_settings_as_scenario_does(name):
    import dataclasses
    import inspect

    params = inspect.signature(getattr(mcsim, name)).parameters
    assert "fabric" in params and "config" not in params  # one name, fabric= (issue 49); config= refused with a hint
    assert "fabric" in {f.name for f in dataclasses.fields(mcsim.Scenario)}
