# SPDX-License-Identifier: GPL-2.0-only
"""Instructions per packet-hop inside Simulator::Run, counted by callgrind, held against budgets committed beside
this file (benchmarks/instruction_budget.json): the packet engine's cost per hop, exact on one build.

Each case is one of benchmarks/result_hashes.py's scenarios, run in a child process under
``valgrind --tool=callgrind --toggle-collect='ns3::Simulator::Run*'``: only the instructions inside Run() count (no
Python, no setup). The child prints the run's packet-hops (every port's transmitted packets); the parent reads
callgrind's "Collected" line. The count repeats exactly for the same build and command line; another command line
or environment moves it by ~0.01 % (addresses and stack layout), well inside the 1 % a budget allows.

    python benchmarks/instruction_budget.py                 # every case: measured, budget, ratio
    python benchmarks/instruction_budget.py --only NAME     # one case (repeatable)
    python benchmarks/instruction_budget.py --check         # exit 1 if a case is outside its budget
    python benchmarks/instruction_budget.py --record        # write this toolchain's budgets (on purpose)
    python benchmarks/instruction_budget.py --keep DIR      # keep callgrind's output: callgrind_annotate DIR/...

A budget belongs to a toolchain (the C++ compiler, the C library, the ns3 wheel and valgrind: each changes the
count): the file holds one set per toolchain. A case passes when its instructions per hop are within
[1 - FASTER, 1 + SLOWER] of its budget. Above: the change made a packet's way dearer; find why (callgrind_annotate
on the case) or, when the extra work is the point of the change and its feature is on in that case, re-record.
Below by more than FASTER: the engine got cheaper; re-record so that the budget holds the gain. Record with
``--record`` after a deliberate change and commit the JSON with the change; the commit message says why.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUDGETS = HERE / "instruction_budget.json"
SLOWER = 0.01  # issue 52: a change that adds more than 1 % per hop to a case fails
FASTER = 0.02  # a gain beyond this is recorded, so that the budget holds it
# name: (what it covers, always on in the tests); the names are benchmarks/result_hashes.py's
CASES = {
    "ft4 ring 256KiB 400G": ("the credit fabric, RC rings; every feature off", True),
    "ft4 mcast 256KiB": ("the credit fabric, UD multicast with repair; every feature off", True),
    "ft4 ring AG beside Alltoall 400G pfc dcqcn": ("RoCE with PFC and DCQCN, a workload of two jobs", False),
    "ft4 mcast 1MiB pfc hpcc": ("RoCE with PFC and HPCC, multicast", False),
}
CHILD = """
import sys
sys.path.insert(0, {bench!r})
from result_hashes import SCENARIOS
result = SCENARIOS[sys.argv[1]]()
fabric = getattr(result, "fabric", None)
if fabric is None:  # a workload's jobs share one fabric
    fabric = result.jobs[0].fabric
print("HOPS", int(fabric.ports["tx_packets"].sum()))
"""
COLLECTED = re.compile(r"Collected : (\d+)")


def _first_line(*command: str) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=60)
    except OSError:
        return "none"
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0].strip() if lines else "none"


def toolchain() -> str:
    """What decides the count besides mcsim's sources: the compiler mcsim builds with (library.find_cxx), the C
    library, the ns3 wheel, valgrind (one line)."""
    from mcsim.native import library

    cxx = _first_line(str(library.find_cxx()), "--version")
    libc = " ".join(platform.libc_ver())
    return (
        f"{cxx}; {libc}; ns3 {library.find_ns3().version}; {_first_line('valgrind', '--version')}; {platform.machine()}"
    )


def measure(name: str, keep: Path | None = None) -> dict[str, int | float | str]:
    """One case under callgrind: its instructions inside Run(), its packet-hops and their ratio (the callgrind output
    kept in ``keep`` when given, for callgrind_annotate)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = str(keep / ("callgrind." + re.sub(r"\W+", "_", name) + ".out")) if keep else os.path.join(tmp, "cg.out")
        command = [
            "valgrind",
            "--tool=callgrind",
            "--toggle-collect=ns3::Simulator::Run*",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-c",
            CHILD.format(bench=str(HERE)),
            name,
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    collected = COLLECTED.findall(done.stderr)
    hops = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("HOPS ")]
    if done.returncode != 0 or not collected or not hops:
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        raise SystemExit(f"{name}: the run under callgrind failed (exit {done.returncode}): {tail[0]}")
    instructions, packet_hops = int(collected[-1]), int(hops[0])
    return {"case": name, "instructions": instructions, "hops": packet_hops, "per_hop": instructions / packet_hops}


def load_budgets(path: Path = BUDGETS) -> dict[str, dict[str, float]]:
    """The committed budgets: toolchain -> case -> instructions per packet-hop."""
    data = json.loads(path.read_text())
    budgets = data.get("budgets") if isinstance(data, dict) else None
    if not isinstance(budgets, dict) or not all(
        isinstance(v, dict) and all(isinstance(x, (int, float)) and x > 0 for x in v.values()) for v in budgets.values()
    ):
        raise SystemExit(f"{path}: not a budget file (expected {{'budgets': {{toolchain: {{case: per_hop}}}}}})")
    return budgets


def verdict(per_hop: float, budget: float | None) -> tuple[bool, str]:
    """Whether a measured cost per hop keeps its budget, and one line that says so."""
    if budget is None:
        return False, "no budget for this toolchain: record one (--record) and commit it"
    ratio = per_hop / budget
    if ratio > 1 + SLOWER:
        return False, f"{ratio:.4f} of its budget {budget:.1f}: more than {SLOWER:.0%} dearer per hop"
    if ratio < 1 - FASTER:
        return False, f"{ratio:.4f} of its budget {budget:.1f}: cheaper by more than {FASTER:.0%}: re-record (--record)"
    return True, f"{ratio:.4f} of its budget {budget:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], choices=sorted(CASES), help="one case (repeatable)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a case is outside its budget")
    parser.add_argument("--record", action="store_true", help="write the measured figures as this toolchain's budgets")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--keep", type=Path, help="keep each case's callgrind output in this folder")
    args = parser.parse_args()
    key = toolchain()
    budgets = load_budgets() if BUDGETS.exists() else {}
    mine = budgets.setdefault(key, {})
    print(f"toolchain: {key}", file=sys.stderr)
    failed = False
    for name in args.only or CASES:
        row = measure(name, args.keep)
        if args.record:
            mine[name] = round(float(row["per_hop"]), 1)
        ok, line = verdict(float(row["per_hop"]), mine.get(name))
        failed |= not ok
        if args.json:
            print(json.dumps({**row, "budget": mine.get(name), "ok": ok}), flush=True)
        else:
            print(
                f"{row['per_hop']:9.1f} instr/hop {row['instructions']:>14,} instr {row['hops']:>9,} hops  "
                f"{name}: {line}",
                flush=True,
            )
    if args.record:
        text = json.dumps({"budgets": {k: dict(sorted(v.items())) for k, v in sorted(budgets.items())}}, indent=2)
        BUDGETS.write_text(text + "\n")
        print(f"recorded in {BUDGETS}", file=sys.stderr)
        return 0
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())
