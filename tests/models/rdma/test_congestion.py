# SPDX-License-Identifier: GPL-2.0-only
"""Congestion control as a component (rdma.md, "Congestion control"): the C++ classes on their own against closed
forms (rdma/test/congestion-control-test-suite.cc); DcqcnConfig and HpccConfig own their fields and name each
attribute of their own C++ class once, and the NIC has none of them; the text interfaces' words translate in one
place and keep the canonical dict of stored runs; and a third congestion control written here, a C++ class
declared through cppyy and a config class, runs with no edit to mcsim: its completion time is its closed form."""

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar

import pytest

from mcsim.config import codec, congestion
from mcsim.config.congestion import DCQCN, HPCC, DcqcnConfig, HpccConfig, dcqcn_preset
from mcsim.config.ns3_attributes import attribute_of, sets
from mcsim.config.rdma import NIC, RcOp, RdmaConfig
from mcsim.errors import McsimError
from mcsim.native import runtime
from mcsim.runs.keyword_tables import config_of
from mcsim.runs.scenario import scenario_of
from mcsim.runs.stream import two_hosts
from mcsim.runs.verbs import run_verbs
from mcsim.sweep.spec import SweepSpec
from mcsim.topology.physics import Link


def test_cxx_test_suite_passes(capfd):
    """Dcqcn and Hpcc alone, told of CE marks, CNPs and ACKs by hand, against closed forms (C++)."""
    assert runtime.run_cxx_test_suite("mcsim-congestion") == 0
    assert "PASS mcsim-congestion" in capfd.readouterr().out


def test_each_config_owns_its_fields_and_names_each_attribute_of_its_class_once():
    assert not [f.name for f in dataclasses.fields(RdmaConfig) if f.name.startswith(("dcqcn", "hpcc"))]
    for cls, type_id, prefix in ((DcqcnConfig, DCQCN, "Dcqcn"), (HpccConfig, HPCC, "Hpcc")):
        assert cls.TYPE_ID == type_id
        attributes = [attribute_of(f) for f in dataclasses.fields(cls)]
        assert all(a is not None and a.type_ids == (type_id,) for a in attributes)
        names = [a.name for a in attributes if a is not None]
        assert len(set(names)) == len(names) and all(n.startswith(prefix) for n in names)
        assert not [f.name for f in dataclasses.fields(cls) if f.name.startswith(prefix.lower())]  # no dcqcn_g


def test_the_nic_has_no_attribute_of_a_congestion_control():
    ns = runtime.cppyy_ns()
    info = ns.TypeId.AttributeInformation()
    nic = ns.TypeId.LookupByName(NIC)
    for cls in (DcqcnConfig, HpccConfig):
        for f in dataclasses.fields(cls):
            name = attribute_of(f).name  # type: ignore[union-attr]
            assert not nic.LookupAttributeByName(name, info), f"the NIC still has {name}"
            assert ns.TypeId.LookupByName(cls.TYPE_ID).LookupAttributeByName(name, info)
    assert not nic.LookupAttributeByName("CongestionControl", info)  # no enum: a factory per stack
    parent = ns.TypeId.LookupByName("ns3::mcsim::CongestionControl")
    assert all(ns.TypeId.LookupByName(cls.TYPE_ID).IsChildOf(parent) for cls in (DcqcnConfig, HpccConfig))


def test_the_text_words_translate_in_one_place_and_keep_the_canonical_dict():
    # the canonical dict of stored runs keeps its keys (a run's key does not move) and reads back
    for cc in (None, DcqcnConfig(), dcqcn_preset("nvidia"), HpccConfig(eta=0.9)):
        data = codec.config_to_dict(RdmaConfig(congestion=cc))
        assert list(data)[1:16] == list(congestion.text_keys())
        assert data["congestion_control"] == congestion.kind_of(cc)
        assert codec.config_from_dict(RdmaConfig, data, "rdma").congestion == cc
    # an rdma table (a sweep spec's, a workload's [options]) as it was written before
    assert config_of("rdma", {"congestion_control": "dcqcn", "dcqcn_g": 0.5}).congestion == DcqcnConfig(g=0.5)
    assert config_of("rdma", {"hpcc_eta": 0.5}).congestion == HpccConfig(eta=0.5)  # its parameters name it
    assert config_of("rdma", {"congestion_control": "none", "dcqcn_g": 0.5}).congestion is None  # as before
    with pytest.raises(McsimError, match=r"^rdma: dcqcn_g, hpcc_eta set parameters of dcqcn and hpcc; give "):
        config_of("rdma", {"dcqcn_g": 0.5, "hpcc_eta": 0.5})
    with pytest.raises(McsimError, match=r"^rdma: 'dcqcn_gg' is not a congestion control key \(one of congestion_c"):
        config_of("rdma", {"dcqcn_gg": 0.5})
    with pytest.raises(McsimError, match=r"^DcqcnConfig: g=0 must be a number in \(0, 1\]$"):
        config_of("rdma", {"congestion_control": "dcqcn", "dcqcn_g": 0})
    # a sweep's axis over a parameter, as it was spelt
    spec = SweepSpec(
        name="x",
        base={"topology": "fat-tree-k4", "bytes_per_rank": "4KiB", "rdma": {"congestion_control": "dcqcn"}},
        axes={"rdma.dcqcn_g": [0.5, 0.25]},
    )
    assert [run.scenario.rdma.congestion for run in spec.runs()] == [DcqcnConfig(g=0.5), DcqcnConfig(g=0.25)]
    # the short name beside a config of its kind keeps the config's settings
    nvidia = RdmaConfig(congestion=dcqcn_preset("nvidia"))
    assert scenario_of(congestion_control="dcqcn", rdma=nvidia).rdma.congestion == dcqcn_preset("nvidia")
    assert scenario_of(congestion_control="hpcc").rdma.congestion == HpccConfig()
    with pytest.raises(McsimError, match=r"^Scenario: congestion_control='hpcc' and rdma\.congestion=DcqcnConfig"):
        scenario_of(congestion_control="hpcc", rdma=nvidia)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({"congestion_control": "dcqcn"}, "DcqcnConfig()"),
        ({"congestion_control": "hpcc", "hpcc_eta": 0.5}, "HpccConfig(eta=0.5)"),
        ({"dcqcn_g": 0.5}, "DcqcnConfig(g=0.5)"),
        ({"congestion_control": "none"}, "None"),
    ],
)
def test_the_old_keywords_of_rdmaconfig_are_one_line_with_the_new_spelling(old, new):
    given = ", ".join(f"{k}={v!r}" for k, v in old.items())
    with pytest.raises(McsimError) as err:
        RdmaConfig(mtu_b=2048, **old)
    assert str(err.value) == f"RdmaConfig: {given} is now spelt congestion={new} (mcsim.config.congestion)"
    assert RdmaConfig(mtu_b=2048).mtu_b == 2048 and dataclasses.replace(RdmaConfig(), mtu_b=1024).mtu_b == 1024


# --- a third congestion control, written outside mcsim --------------------------------------------------------

RATE_CAP = "mcsim_toy_cc::RateCap"
RATE_CAP_CXX = """
namespace mcsim_toy_cc {
/** Every QP at a fixed rate, at most its line rate: the smallest congestion control. */
class RateCap : public ns3::mcsim::CongestionControl {
  public:
    static ns3::TypeId GetTypeId() {
        static ns3::TypeId tid = ns3::TypeId("mcsim_toy_cc::RateCap")
            .SetParent<ns3::mcsim::CongestionControl>()
            .SetGroupName("McsimTest")
            .AddConstructor<RateCap>()
            .AddAttribute("CapBps", "The rate every QP is paced to, in bit/s.", ns3::UintegerValue(1000000000),
                          ns3::MakeUintegerAccessor(&RateCap::m_capBps), ns3::MakeUintegerChecker<uint64_t>(1));
        return tid;
    }
  private:
    void DoStart() override { m_rateBps = m_capBps < m_lineBps ? m_capBps : m_lineBps; }
    uint64_t m_capBps = 0;
};
}
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class RateCapConfig:
    """The config of the C++ RateCap: its TYPE_ID and its one attribute."""

    TYPE_ID: ClassVar[str] = RATE_CAP
    cap_bps: int = field(default=10**9, metadata=sets(RATE_CAP, "CapBps"))


def _declare_rate_cap() -> None:
    cppyy = runtime.cppyy_module()
    if not hasattr(cppyy.gbl, "mcsim_toy_cc"):
        cppyy.include("ns3/uinteger.h")
        cppyy.cppdef(RATE_CAP_CXX)
    cppyy.gbl.mcsim_toy_cc.RateCap.GetTypeId()  # registers the TypeId (ns-3's NS_OBJECT_ENSURE_REGISTERED)


def test_a_third_congestion_control_runs_with_no_edit_to_mcsim():
    # one RC WRITE on a 100 Gbit/s link, its QP paced to 25 Gbit/s: every packet but the last leaves one
    # serialization at the cap after the one before; the last then crosses at the line rate, and its ACK comes back
    _declare_rate_cap()
    link = Link(rate_bps=100 * 10**9, delay_ps=100_000)
    cap_bps, size_b, mtu = 25 * 10**9, 1 << 20, 4096
    cfg = RdmaConfig(congestion=RateCapConfig(cap_bps=cap_bps))
    r = run_verbs(two_hosts(link), rc_ops=[RcOp(verb="write", src=0, dst=1, size_b=size_b)], rdma=cfg)
    ib_base, reth, aeth = 26, 16, 4  # LRH 8 + BTH 12 + ICRC 4 + VCRC 2; RETH on the first packet; AETH
    packets = size_b // mtu
    wire = [mtu + ib_base + (reth if i == 0 else 0) for i in range(packets)]
    paced_ps = sum(w * 8 * 10**12 // cap_bps for w in wire[:-1])
    expected = cfg.send_latency_ps + paced_ps + link.tx_ps(wire[-1]) + link.tx_ps(ib_base + aeth) + 2 * link.delay_ps
    assert int(r.rc_done_ps[0]) == pytest.approx(expected, abs=packets)  # LineTime rounds each gap up, <= 1 ps
    plain = run_verbs(two_hosts(link), rc_ops=[RcOp(verb="write", src=0, dst=1, size_b=size_b)])
    assert int(plain.rc_done_ps[0]) < expected / 3  # the line rate, 4 x the cap
