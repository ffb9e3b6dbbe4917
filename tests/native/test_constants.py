# SPDX-License-Identifier: GPL-2.0-only
"""The constants Python and C++ share are equal: every one mcsim.config declares (config loads no C++)
is the value the library exports (capi::Constants, mcsim_constants), and the library exports no
other. A constant changed on one side only fails here."""

from mcsim.config import fabric, rdma
from mcsim.native import runtime

# name -> the Python declaration (the module that declares it)
DECLARED = {
    "FABRIC_HEADER_BYTES": fabric.FABRIC_HEADER_BYTES,
    "GROUP_FLAG": fabric.GROUP_FLAG,
    "AGGREGATION_ROOT": fabric.AGGREGATION_ROOT,
    "NO_GROUP": rdma.NO_GROUP,
    "RETRY_FOREVER": rdma.RETRY_FOREVER,
    "INT_HEADER_B": rdma.INT_HEADER_B,
}


def test_every_declared_constant_is_the_librarys():
    exported = runtime.shared_constants()
    assert set(exported) == set(DECLARED), "a constant declared on one side only"
    differ = {name: (value, exported[name]) for name, value in DECLARED.items() if exported[name] != value}
    assert not differ, f"(Python, C++) differ: {differ}"
