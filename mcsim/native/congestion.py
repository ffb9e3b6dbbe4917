# SPDX-License-Identifier: GPL-2.0-only
"""Congestion controls' binding: a congestion control config (DcqcnConfig, HpccConfig, or one written outside
mcsim with its TYPE_ID) -> the ns-3 ObjectFactory of which every NIC of an RdmaStack makes one object per QP
(RdmaStack::SetCongestionControl; rdma.md, "Congestion control").

The configs are frozen data in mcsim.config.congestion; mcsim.native.rdma.build_stack hands the factory over.
"""

from __future__ import annotations

import dataclasses

from mcsim.config.congestion import CongestionConfig, HpccConfig, is_congestion_config
from mcsim.config.rdma import RdmaConfig, hpcc_base_rtt_ps
from mcsim.errors import McsimError
from mcsim.native import abi
from mcsim.native.attributes import factory_of
from mcsim.native.fabric import BuiltFabric


def for_fabric(cc: CongestionConfig, fab: BuiltFabric, rdma: RdmaConfig) -> CongestionConfig:
    """The config as the run uses it on this fabric: HPCC's base RTT, if 0, the fabric's (hpcc_base_rtt_ps)."""
    if isinstance(cc, HpccConfig) and cc.base_rtt_ps == 0:
        return dataclasses.replace(cc, base_rtt_ps=hpcc_base_rtt_ps(fab.layout, fab.config, rdma))
    return cc


def congestion_factory(cc: CongestionConfig) -> abi.Factory:
    """The ns-3 ObjectFactory of a congestion control config: its TYPE_ID with the attributes its fields set
    (mcsim.config.ns3_attributes; through mcsim.native.attributes.make_factory)."""
    if not is_congestion_config(cc):
        raise McsimError(f"congestion={cc!r} is not a congestion control config (a TYPE_ID naming its C++ class)")
    return factory_of(cc, cc.TYPE_ID)
