# SPDX-License-Identifier: GPL-2.0-only
"""The simulated clock's limit (mcsim.units.MAX_SIMULATED_PS, 2^62 ps): a run that would pass it
stops with one McsimError line, never a C++ abort, and the process runs on as before."""

import re

import numpy as np
import pytest

from mcsim import RcConfig, Scenario
from mcsim.cli import main
from mcsim.errors import McsimError
from mcsim.runs.scenario import scenario_of
from mcsim.units import MAX_SIMULATED_PS

# RC retrying for ever with the longest local ACK timeout (4.096 us x 2^31 = 2.4 h) at heavy loss:
# each lost tail costs 2.4 simulated hours, so some of these pass 53.4 days, and some finish before
FOREVER = RcConfig(retry_cnt=None, ack_timeout_exp=31)
LIMIT_LINE = (
    rf"^the simulated clock reached its limit, 2\^62 ps = 53.4 days \({MAX_SIMULATED_PS} ps\): at (\S+) ps "
    r"simulated an event was due at (\S+) ps, so the run stops; a run this long retries for ever"
)


def _lossy(loss: float, seed: int, size: str = "16KiB", algorithm: str = "ring") -> Scenario:
    return scenario_of(
        topology="fat-tree-k4", algorithm=algorithm, bytes_per_rank=size, ranks=4, loss=loss, seed=seed, rc=FOREVER
    )


@pytest.mark.parametrize("seed", range(1, 9))
@pytest.mark.parametrize("loss", [0.3, 0.5, 0.8])
@pytest.mark.parametrize("algorithm", ["ring", "mcast"])
def test_a_run_finishes_before_the_clock_limit_or_stops_at_it_with_one_line(algorithm, loss, seed):
    try:
        r = _lossy(loss, seed, algorithm=algorithm).run()
    except McsimError as exc:
        text = str(exc)
        assert "\n" not in text
        m = re.match(LIMIT_LINE, text)
        assert m, text
        now_ps, due_ps = float(m[1]), float(m[2])
        assert now_ps <= MAX_SIMULATED_PS < due_ps  # no event past the limit ran
        return
    assert r.complete  # retries for ever: every rank finished, within the clock
    assert 0 < int(r.finish_ps.max()) <= MAX_SIMULATED_PS


def test_the_limit_is_reached_and_the_process_runs_on_bit_for_bit():
    clean = Scenario(topology="fat-tree-k4", algorithm="ring", bytes_per_rank="16KiB", ranks=4)
    before = clean.run()
    with pytest.raises(McsimError, match=LIMIT_LINE):
        _lossy(0.8, 1, "4KiB").run()  # 4 KiB per rank at 80 % loss: past 53.4 days (checked here)
    after = clean.run()
    np.testing.assert_array_equal(before.finish_ps, after.finish_ps)
    np.testing.assert_array_equal(before.nic["tx_packets"], after.nic["tx_packets"])


def test_the_cli_says_it_in_one_line_and_exits_2(capsys):
    argv = ["allgather", "--topology", "fat-tree-k4", "--algorithm", "ring", "--ranks", "4", "--size", "4KiB"]
    argv += ["--loss", "0.8", "--retry-cnt", "forever", "--ack-timeout-exp", "31"]
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("mcsim: error: the simulated clock reached its limit, 2^62 ps = 53.4 days")
    assert not any("Traceback" in line or "NS_FATAL" in line for line in err)
