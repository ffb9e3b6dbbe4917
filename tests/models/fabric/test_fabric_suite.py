# SPDX-License-Identifier: GPL-2.0-only
"""The fabric's own C++ suite (fabric/test/fabric-test-suite.cc): a port's transmit time, a stream,
credit flow control under incast and under loss, and a port's trace sources, against closed forms; and
PfcPort alone, driven by hand (fabric/test/pfc-port-test.cc): its headroom, XOFF and XON thresholds, the
pause it puts on its peer, and its refresh times, against closed forms."""

from mcsim.native import runtime


def test_cxx_test_suite_passes(capfd):
    assert runtime.run_cxx_test_suite("mcsim-fabric") == 0
    assert "PASS mcsim-fabric" in capfd.readouterr().out
