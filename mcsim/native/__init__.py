# SPDX-License-Identifier: GPL-2.0-only
"""The only caller of mcsim's C ABI: building and loading the library (library, runtime, cling_pch),
its signatures and handles (abi), attributes as text (attributes), bulk arrays and counters (arrays),
one run's lifecycle (simulation, run_control), and one binding per C++ module (fabric, rdma,
processors, collectives, dpa). Nothing outside this package calls ``lib.mcsim_*``.
"""
