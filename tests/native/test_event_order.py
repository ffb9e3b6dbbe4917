# SPDX-License-Identifier: GPL-2.0-only
"""The canonical same-time order makes results the same run to run, across processes and sweep workers.

The scenarios are the ones with the most events at one picosecond: multicast Allgathers whose ranks
run in lockstep (4 endpoints per rank, the artifact's protocol), with losses and repairs.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys

import numpy as np

from mcsim import FabricConfig, Scenario
from mcsim.sweep import SweepSpec, run_sweep

# every array of a collective's Result that a tie order could move
_CODE = """
import hashlib, sys
import numpy as np
from mcsim import FabricConfig, Scenario
sc = Scenario(topology="testbed-188", algorithm="mcast", bytes_per_rank="16KiB", endpoints=4,
              fabric=FabricConfig(loss=1e-3, seed=3, ecmp_seed=3))
r = sc.run()
h = hashlib.sha256()
for a in [r.finish_ps, *(r.rank[k] for k in sorted(r.rank)), *(r.nic[k] for k in sorted(r.nic)),
          *(r.fabric.ports[k] for k in sorted(r.fabric.ports))]:
    h.update(np.ascontiguousarray(a).tobytes())
print(h.hexdigest())
"""


def _digest_here() -> str:
    sc = Scenario(
        topology="testbed-188",
        algorithm="mcast",
        bytes_per_rank="16KiB",
        endpoints=4,
        fabric=FabricConfig(loss=1e-3, seed=3, ecmp_seed=3),
    )
    r = sc.run()
    h = hashlib.sha256()
    arrays = [r.finish_ps, *(r.rank[k] for k in sorted(r.rank)), *(r.nic[k] for k in sorted(r.nic))]
    arrays += [r.fabric.ports[k] for k in sorted(r.fabric.ports)]
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def test_a_tie_heavy_run_is_bit_identical_in_this_process_and_two_fresh_ones():
    here = _digest_here()
    assert _digest_here() == here  # run to run
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", _CODE], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == here


def test_one_and_two_sweep_workers_store_the_same_numbers(tmp_path):
    spec = SweepSpec(
        name="ties",
        base={"topology": "testbed-188", "algorithm": "mcast", "endpoints": 4},
        axes={"bytes_per_rank": ["4KiB", "16KiB"], "seed": [1, 2]},
    )
    one = run_sweep(spec, tmp_path / "one.sqlite", workers=1, progress=False).rows()
    two = run_sweep(spec, tmp_path / "two.sqlite", workers=2, progress=False).rows()
    assert len(one) == len(two) == 4

    def numbers(rows: list[dict]) -> list[dict]:
        # what was simulated, not how long the host took to simulate it
        return sorted(
            ({k: v for k, v in row.items() if "wall" not in k and "elapsed" not in k} for row in rows),
            key=repr,
        )

    assert numbers(one) == numbers(two)
