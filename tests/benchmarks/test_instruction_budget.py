# SPDX-License-Identifier: GPL-2.0-only
"""The packet engine's instruction budget (issue 52): instructions per packet-hop inside Simulator::Run, counted by
callgrind, within 1 % above and 2 % below the budgets committed in benchmarks/instruction_budget.json for this
toolchain. To change a budget on purpose: ``python benchmarks/instruction_budget.py --record`` and commit the JSON
with the change that moved it (its docstring says when that is right)."""

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "instruction_budget.py"
_spec = importlib.util.spec_from_file_location("instruction_budget", SCRIPT)
budget = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(budget)

needs_valgrind = pytest.mark.skipif(
    shutil.which("valgrind") is None, reason="valgrind is not installed (.ci/run installs Debian's)"
)
CASES = [pytest.param(name, marks=() if always else pytest.mark.slow) for name, (_, always) in budget.CASES.items()]


@needs_valgrind
@pytest.mark.parametrize("case", CASES)
def test_instructions_per_hop_keep_their_budget(case):
    budgets = budget.load_budgets()
    key = budget.toolchain()
    assert key in budgets, f"no budgets for this toolchain ({key}): benchmarks/instruction_budget.py --record"
    row = budget.measure(case)
    assert row["hops"] > 0
    ok, line = budget.verdict(float(row["per_hop"]), budgets[key].get(case))
    assert ok, f"{case}: {row['per_hop']:.1f} instructions per hop, {line}"


def test_every_case_has_a_budget_and_is_a_result_hash_scenario():
    import sys

    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from result_hashes import SCENARIOS
    finally:
        sys.path.remove(str(SCRIPT.parent))
    assert set(budget.CASES) <= set(SCENARIOS)
    budgets = budget.load_budgets()
    assert budgets and all(set(cases) == set(budget.CASES) for cases in budgets.values())
    assert any(always for _, always in budget.CASES.values())


@pytest.mark.parametrize(
    ("per_hop", "ok", "words"),
    [
        (1000.0, True, "1.0000 of its budget"),
        (1009.9, True, "1.0099"),
        (1010.1, False, "dearer per hop"),
        (980.1, True, "0.9801"),
        (979.9, False, "re-record"),
    ],
)
def test_a_budget_allows_one_percent_dearer_and_two_percent_cheaper(per_hop, ok, words):
    got, line = budget.verdict(per_hop, 1000.0)
    assert got is ok and words in line


def test_a_case_without_a_budget_fails_and_says_how_to_record():
    ok, line = budget.verdict(1000.0, None)
    assert not ok and "--record" in line


@pytest.mark.parametrize(
    "text",
    ['{"budgets": {"gcc": {"ring": -1}}}', '{"budgets": []}', "[]", '{"budgets": {"gcc": {"ring": "x"}}}'],
)
def test_a_foreign_budget_file_is_one_line(tmp_path, text):
    path = tmp_path / "b.json"
    path.write_text(text)
    with pytest.raises(SystemExit, match="not a budget file"):
        budget.load_budgets(path)


def test_the_toolchain_names_compiler_libc_wheel_and_valgrind():
    key = budget.toolchain()
    assert "ns3 3.44" in key and key.count(";") == 4
    assert json.dumps(key)  # one line, plain text
