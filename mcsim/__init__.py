# SPDX-License-Identifier: GPL-2.0-only
"""mcsim: a packet-level simulator of collective communication, a Python frontend over ns-3.

Python plans a run and reads its results; C++ models in ns3_modules/ simulate every packet. Only
mcsim.runtime touches cppyy, and only when a simulation is built.
"""

__version__ = "0.1.0"
