# SPDX-License-Identifier: GPL-2.0-only
"""Issue 49: physics that cannot work, fields a collective does not read, and the run functions' keyword names:
each refused before any C++ exists, one McsimError line with the bound it violates and its source."""

import math

import pytest

from mcsim.config.fabric import FabricConfig, Flow
from mcsim.config.rdma import RcConfig, RcOp
from mcsim.errors import McsimError
from mcsim.runs import assemble, flows, verbs
from mcsim.runs.stream import two_hosts
from mcsim.topology.physics import Link

LINK = Link(rate_bps=10**9)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: flows.simulate(two_hosts(LINK), [Flow(src=0, dst=1, size_b=1)], config=FabricConfig()),
            r"^simulate: config= is now called fabric= \(as Scenario calls it\); pass fabric=FabricConfig\(\.\.\.\)$",
        ),
        (
            lambda: flows.simulate(two_hosts(LINK), [Flow(src=0, dst=1, size_b=1)], fabrik=FabricConfig()),
            r"^simulate: unknown keyword fabrik=$",
        ),
        (
            lambda: verbs.run_verbs(
                two_hosts(LINK), rc_ops=[RcOp(src=0, dst=1, verb="write", size_b=1)], config=FabricConfig()
            ),
            r"^run_verbs: config= is now called fabric= \(as Scenario calls it\); pass fabric=FabricConfig\(\.\.\.\)$",
        ),
    ],
)
def test_the_run_functions_take_fabric_and_refuse_config_with_a_hint(monkeypatch, call, message):
    monkeypatch.setattr(assemble, "Simulation", None)  # a run would fail (simulate, run_verbs): the check comes first
    with pytest.raises(McsimError, match=message):
        call()


# ---------------------------------------------------------------------------------------------
# physics that cannot work: refused with the bound and its source, on every path that builds a run

CLOCK = r"must be <= 4611686018427387904 \(2\^62 ps = 53\.4 days, the simulated clock's limit\)$"
PBPS = r"must be <= 1000000000000000 \(1 Pbit/s, mcsim's largest rate\)$"
FT4 = {"topology": "fat-tree-k4"}
PFC = {"flow_control": "pfc"}
# fat-tree-k4 at 56G (FDR, 54.545 Gbit/s of data) and 100 ns: 2 x (4096 + 86) B frames + a 64 B PFC frame +
# 2 x ceil(100 ns x 54.545 Gbit/s / 8) = 2 x 682 B: 9792 B (PfcPort::ComputedHeadroom, fabric.md)
HEADROOM = (
    r"is less than what can still arrive at a PFC ingress once it pauses its peer on link 0-16 \(54\.545Gbps of "
    r"data, 100ns\): 2 x 4182 B frames \+ a 64 B PFC frame \+ a link delay of bytes each way = 9792 B \(fabric\.md, "
    r"\"Priority Flow Control\"\), so the lossless class would drop; give >= 9792, or 0 \(computed per link\)$"
)
HPCC = {"wire_format": "rocev2", "congestion_control": "hpcc"}  # an rdma table's keys


def _hpcc(**kw):
    """RdmaConfig's keywords of HPCC with these parameters."""
    from mcsim.config.congestion import HpccConfig

    return {"wire_format": "rocev2", "congestion": HpccConfig(**kw)}


def _scenario(**kw):
    from mcsim.runs.scenario import Scenario

    return lambda: Scenario(**FT4, **kw)


def _rdma(**kw):
    from mcsim.config.rdma import RdmaConfig

    return lambda: RdmaConfig(**kw)


def _verbs(rdma=None, fabric=None):
    from mcsim import topology
    from mcsim.config.rdma import RdmaConfig

    g = topology.resolve("fat-tree-k4")
    op = [RcOp(src=0, dst=15, verb="write", size_b=1)]
    return lambda: verbs.run_verbs(g, rc_ops=op, rdma=RdmaConfig(**(rdma or {})), fabric=FabricConfig(**(fabric or {})))


def _keyword(name, table):
    from mcsim.runs.keyword_tables import value_of

    return lambda: value_of(name, table)


def _physics_cases():
    from mcsim.config.congestion import DcqcnConfig, HpccConfig
    from mcsim.config.dpa import DpaConfig
    from mcsim.config.rdma import HostCpuConfig, RdmaConfig, UdStream
    from mcsim.units import MAX_SIMULATED_PS

    past = MAX_SIMULATED_PS + 1
    big = 10**15 + 1
    ft4 = None  # noqa: F841 (the topology comes from _scenario and _verbs)
    rows = [
        # a PFC headroom below one frame plus the round trip: the lossless class would drop
        (
            _scenario(fabric=FabricConfig(**PFC, pfc_headroom_b=9791)),
            rf"^Scenario: fabric\.pfc_headroom_b=9791 {HEADROOM}",
        ),
        (_verbs(fabric=dict(**PFC, pfc_headroom_b=1)), rf"^run_verbs: pfc_headroom_b=1 {HEADROOM}"),
        # a switch buffer that holds no headroom (XOFF computed from it): C++ threw after the fabric existed
        (
            _scenario(fabric=FabricConfig(**PFC, switch_buffer_b=9792)),
            r"^Scenario: a PFC ingress buffer of 9792 B does not hold its headroom of 9792 B on link 0-16 "
            r"\(fabric\.switch_buffer_b; XOFF is the buffer less the headroom when pfc_xoff_b=0\); raise "
            r"switch_buffer_b above 9792 or give pfc_xoff_b$",
        ),
        # an HPCC base RTT whose window holds less than one byte: its QPs sent nothing (an ACK timeout, then
        # the QP failed; with retry_cnt=None the run never ended)
        (
            _scenario(rdma=RdmaConfig(**_hpcc(base_rtt_ps=100))),
            r"^Scenario: rdma\.congestion\.base_rtt_ps=100 gives HPCC a window of less than 1 B at 54\.545Gbps "
            r"\(W_init = line rate x T: HPCC, SIGCOMM 2019; rdma\.md, \"HPCC\"\): its QPs would send nothing and no "
            r"RC transfer would complete; give >= 147 \(147ps\), or 0 \(the fabric's base RTT\)$",
        ),
        (_verbs(rdma=_hpcc(base_rtt_ps=146)), r"^run_verbs: congestion\.base_rtt_ps=146 gives HPCC a window"),
        # DCQCN's floor above the line rate: a cut would raise a QP's rate past its link
        (
            _scenario(rdma=RdmaConfig(congestion=DcqcnConfig(min_rate_bps=54_545_454_546))),
            r"^Scenario: rdma\.congestion\.min_rate_bps=54545454546 is above the hosts' line rate 54\.545Gbps: "
            r"DCQCN's rate cut would raise a QP past its link \(Rc = max\(min rate, cut\); rdma\.md, \"DCQCN\"\); "
            r"give <= 54545454545$",
        ),
        (
            _verbs(rdma=dict(congestion=DcqcnConfig(min_rate_bps=10**12))),
            r"^run_verbs: congestion\.min_rate_bps=1000000000000 is above the hosts' line rate",
        ),
        # an additive increase above the line rate: W_AI past W_init, the window's ceiling
        (
            _scenario(rdma=RdmaConfig(**_hpcc(rai_bps=54_545_454_546))),
            r"^Scenario: rdma\.congestion\.rai_bps=54545454546 is above the hosts' line rate 54\.545Gbps: "
            r"HPCC's additive increase W_AI = R_AI x T would pass its largest window W_init = line rate x T "
            r"\(HPCC, SIGCOMM 2019; rdma\.md, \"HPCC\"\); give <= 54545454545, or 0 \(the line rate / 2500\)$",
        ),
        (_keyword("rdma", {**HPCC, "hpcc_base_rtt_ps": past}), rf"^HpccConfig: base_rtt_ps={past} {CLOCK}"),
    ]
    # every time field past the simulated clock, every rate past 1 Pbit/s (signs and zeros: tests/models)
    for cls, name in (
        (DcqcnConfig, "alpha_timer_ps"),
        (DcqcnConfig, "rate_timer_ps"),
        (DcqcnConfig, "cnp_interval_ps"),
        (DcqcnConfig, "rate_reduce_period_ps"),
        (RdmaConfig, "send_latency_ps"),
        (RdmaConfig, "receive_latency_ps"),
    ):
        rows.append((lambda cls=cls, name=name: cls(**{name: past}), rf"^{cls.__name__}: {name}={past} {CLOCK}"))
    for cls, name in (
        (DcqcnConfig, "rai_bps"),
        (DcqcnConfig, "rhai_bps"),
        (DcqcnConfig, "min_rate_bps"),
        (HpccConfig, "rai_bps"),
    ):
        rows.append((lambda cls=cls, name=name: cls(**{name: big}), rf"^{cls.__name__}: {name}={big} {PBPS}"))
    rows += [
        (_keyword("rdma", {"send_latency_ps": past}), rf"^RdmaConfig: send_latency_ps={past} {CLOCK}"),
        (_keyword("fabric", {"switch_latency_ps": past}), rf"^FabricConfig: switch_latency_ps={past} {CLOCK}"),
        (lambda: FabricConfig(aggregation_rate_bps=big), rf"^FabricConfig: aggregation_rate_bps={big} {PBPS}"),
        (lambda: HostCpuConfig(completion_ps=past), rf"^HostCpuConfig: completion_ps={past} {CLOCK}"),
        (lambda: HostCpuConfig(memcpy_bps=big), rf"^HostCpuConfig: memcpy_bps={big} {PBPS}"),
        (lambda: HostCpuConfig(memcpy_bps=0), r"^HostCpuConfig: memcpy_bps=0 must be >= 1$"),
        (lambda: RcOp(src=0, dst=1, verb="read", size_b=1, start_ps=past), rf"^RcOp: start_ps={past} {CLOCK}"),
        (lambda: UdStream(src=0, dst=1, size_b=1, count=1, start_ps=past), rf"^UdStream: start_ps={past} {CLOCK}"),
        (lambda: DpaConfig(loopback_bps=big), rf"^DpaConfig: loopback_bps={big} {PBPS}"),
        (
            lambda: DpaConfig(clock_hz=1, staging_cycles=4_700_000),
            r"^DpaConfig: staging_cycles=4700000 at clock_hz=1 is 4\.7e\+06 s per completion, past 2\^62 ps = 53\.4 "
            r"days, the simulated clock's limit$",
        ),
        (
            lambda: DpaConfig(zero_copy_cycles=2**32),
            r"^DpaConfig: zero_copy_cycles=4294967296 must be 0\.\.4294967295 ",
        ),
        (lambda: DpaConfig(core_contention=math.inf), r"^DpaConfig: core_contention=inf must be finite \(the share "),
        (
            lambda: DpaConfig(core_contention=1e300),
            r"^DpaConfig: core_contention=1e\+300 and issue_share=0\.0625 make a completion take up to 2\.25e\+307 ps "
            r"\(every core busy, 16 threads on one\), past 2\^62 ps = 53\.4 days, the simulated clock's limit$",
        ),
        (lambda: DpaConfig(cores=4097), r"^DpaConfig: cores=4097 must be 1\.\.4096 \(Dpa's Cores and ThreadsPerCore "),
        (
            lambda: DpaConfig(issue_share=1e-12),
            r"^DpaConfig: issue_share=1e-12 must be >= 1e-09 \(Dpa's IssueShare checker\)$",
        ),
    ]
    return rows


def _flow_cases():
    from mcsim import topology
    from mcsim.units import MAX_SIMULATED_PS

    g = topology.resolve("fat-tree-k4")
    past = MAX_SIMULATED_PS + 1
    return [
        (
            lambda: flows.simulate(g, [Flow(src=0, dst=1, size_b=1)], fabric=FabricConfig(**PFC, pfc_headroom_b=9)),
            r"^simulate: pfc_headroom_b=9 is less than what can still arrive at a PFC ingress once it pauses its peer "
            r"on link 0-16 \(54\.545Gbps of data, 100ns\): 2 x 4170 B frames",
        ),
        (
            lambda: flows.simulate(g, [Flow(src=0, dst=1, size_b=1, start_ps=past)]),
            rf"^flow 0: start_ps={past} {CLOCK}",
        ),
    ]


@pytest.mark.parametrize(("make", "message"), [*_physics_cases(), *_flow_cases()])
def test_physics_that_cannot_work_is_one_line_before_the_run(monkeypatch, make, message):
    monkeypatch.setattr(assemble, "Simulation", None)  # a run would fail (simulate, run_verbs): the check comes first
    with pytest.raises(McsimError, match=message) as info:
        make()
    assert "\n" not in str(info.value)


def test_the_bounds_themselves_are_accepted():
    from mcsim.config.congestion import DcqcnConfig
    from mcsim.config.rdma import RdmaConfig
    from mcsim.runs.scenario import Scenario
    from mcsim.units import MAX_SIMULATED_PS

    Scenario(**FT4, fabric=FabricConfig(**PFC, pfc_headroom_b=9792, switch_buffer_b=9793))
    Scenario(**FT4, rdma=RdmaConfig(**_hpcc(base_rtt_ps=147, rai_bps=54_545_454_545)))
    RdmaConfig(send_latency_ps=MAX_SIMULATED_PS)
    DcqcnConfig(rate_timer_ps=MAX_SIMULATED_PS, rai_bps=10**15)


# ---------------------------------------------------------------------------------------------
# the run functions' arguments of a wrong type (a traceback, or passed on to C++, before issue 49)


def _sim(flows=None, **kw):
    from mcsim import topology

    return lambda: flows_module_simulate(topology.resolve("fat-tree-k4"), flows, **kw)


def flows_module_simulate(g, flow_list, **kw):
    return flows.simulate(g, [Flow(src=0, dst=1, size_b=10)] if flow_list is None else flow_list, **kw)


def _rv(**kw):
    from mcsim import topology

    kw.setdefault("rc_ops", [RcOp(verb="write", src=0, dst=1, size_b=10)])
    return lambda: verbs.run_verbs(topology.resolve("fat-tree-k4"), **kw)


def _wrong_type_cases():
    from mcsim.config.fabric import Faults
    from mcsim.config.rdma import UdStream

    hosts = r"must be a list of hosts \(hosts are 0\.\.15\)$"
    return [
        (lambda: Flow(src="0", dst=1, size_b=10), r"^Flow: src='0' must be an integer$"),
        (lambda: Flow(src=0, dst=1.5, size_b=10), r"^Flow: dst=1\.5 must be an integer or None$"),
        (lambda: Flow(src=0, dst=1, size_b=1.5), r"^Flow: size_b=1\.5 must be an integer$"),
        (lambda: Flow(src=0, dst=1, size_b=10, flow_id=None), r"^Flow: flow_id=None must be an integer$"),
        (lambda: Flow(src=0, dst=1, size_b=10, flow_id=-1), r"^Flow: flow_id=-1 must be >= 0$"),
        (lambda: Flow(src=0, dst=1, size_b=10, flow_id=2**32), r"^Flow: flow_id=4294967296 must be <= 4294967295 "),
        (
            lambda: Flow(src=0, dst=1, size_b=2**70),
            r"^Flow: size_b=1180591620717411303424 must be <= 4611686018427387904 ",
        ),
        (
            lambda: UdStream(src=0, dst=1, size_b=1, count=2**32),
            r"^UdStream: count=4294967296 must be <= 4294967295 \(uint32 in C\+\+\)$",
        ),
        (
            lambda: RcOp(verb="send", src=0, dst=1, size_b=2**31 + 1),
            r"^RcOp: size_b=2147483649 must be <= 2147483648 \(2 GiB: the largest InfiniBand message\)$",
        ),
        (lambda: Faults(drops=3), r"^Faults: drops=3 must be a list of \(node, port, index\) entries$"),
        (lambda: Faults(link_down="0 16"), r"^Faults: link_down='0 16' must be a list of \(u, v, down_ps, up_ps\) "),
        (
            _sim(groups="01"),
            r"^simulate: groups='01' must be a list of groups, each a list of hosts, e\.g\. \[\[0, 1, 2\]\]$",
        ),
        (_sim(groups=[[0, "x"]]), rf"^simulate: groups\[0\]=\[0, 'x'\] {hosts}"),
        (_sim(groups=[[0, 99]]), rf"^simulate: groups\[0\]=\[0, 99\] {hosts}"),
        (_sim(groups=[[0, 1, 0]]), r"^simulate: groups\[0\]=\[0, 1, 0\] names a host twice$"),
        (_sim(flows="ab"), r"^simulate: flows='ab' must be a list of Flow$"),
        (_sim(fabric="x"), r"^simulate: fabric='x' must be a FabricConfig or None$"),
        (_sim(faults="x"), r"^simulate: faults='x' must be a Faults or None$"),
        (_sim(queue_trace="x"), r"^simulate: queue_trace='x' must be a QueueTraceConfig or None$"),
        (_rv(groups="01"), r"^run_verbs: groups='01' must be a list of groups"),
        (_rv(rc_ops="ab"), r"^run_verbs: rc_ops='ab' must be a list of RcOp$"),
        (_rv(ud_streams=[1]), r"^run_verbs: ud_streams=\[1\] must be a list of UdStream$"),
        (_rv(rdma="x"), r"^run_verbs: rdma='x' must be a RdmaConfig or None$"),
        (_rv(fabric="x"), r"^run_verbs: fabric='x' must be a FabricConfig or None$"),
        (_rv(rdma=_rdma(rq_depth=10**6)()), r"^run_verbs: rdma\.rq_depth=1000000 must be 1\.\.32768 \(a ConnectX "),
        (_rdma(rq_depth=8.5), r"^RdmaConfig: rq_depth=8\.5 must be an integer$"),
        (_rdma(region_b=4096.5), r"^RdmaConfig: region_b=4096\.5 must be an integer$"),
        (lambda: RcConfig(ack_interval=1.5), r"^RcConfig: ack_interval=1\.5 must be an integer$"),
    ]


@pytest.mark.parametrize(("make", "message"), _wrong_type_cases())
def test_the_run_functions_arguments_of_a_wrong_type_are_one_line(monkeypatch, make, message):
    monkeypatch.setattr(assemble, "Simulation", None)  # a run would fail (simulate, run_verbs): the check comes first
    with pytest.raises(McsimError, match=message) as info:
        make()
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------------------------------------
# the same checks through the commands that read text files (a sweep spec, a workload file): one line, exit 2

SWEEP = 'name = "x"\n[base]\ntopology = "fat-tree-k4"\nbytes_per_rank = "4KiB"\n'
WORKLOAD = 'topology = "fat-tree-k4"\n{options}\n[[jobs]]\nname = "a"\nranks = 4\nkind = "background"\nload = 1\n'


@pytest.mark.parametrize(
    ("command", "text", "message"),
    [
        (
            ["sweep", "@", "--dry-run", "--store", "s.sqlite"],
            SWEEP + '[base.fabric]\nflow_control = "pfc"\npfc_headroom_b = 1000\n',
            r"sweep 'x' run 0 \(\): Scenario: fabric\.pfc_headroom_b=1000 is less than what can still arrive",
        ),
        (
            ["sweep", "@", "--dry-run", "--store", "s.sqlite"],
            SWEEP + '[base.rdma]\nwire_format = "rocev2"\ncongestion_control = "hpcc"\nhpcc_base_rtt_ps = 100\n',
            r"sweep 'x' run 0 \(\): Scenario: rdma\.congestion\.base_rtt_ps=100 gives HPCC a window of less than 1 B",
        ),
        (
            ["workload", "@"],
            WORKLOAD.format(options="[options.rdma]\nsend_latency_ps = 9223372036854775807"),
            r"w\.toml: \[options\] rdma: RdmaConfig: send_latency_ps=9223372036854775807 must be <= "
            r"4611686018427387904 \(2\^62 ps",
        ),
        (
            ["workload", "@"],
            WORKLOAD.format(options='[options.fabric]\nflow_control = "pfc"\npfc_headroom_b = 10'),
            # the workload file's name once mcsim.workloads.workload_file says it (wt-a), Scenario's before
            r"(?:Scenario|w\.toml): fabric\.pfc_headroom_b=10 is less than what can still arrive at a PFC ingress",
        ),
    ],
)
def test_the_commands_that_read_files_refuse_the_same_physics(tmp_path, command, text, message):
    import os
    import re
    import subprocess
    import sys

    (tmp_path / "w.toml").write_text(text)
    argv = ["w.toml" if a == "@" else a for a in command]
    run = subprocess.run(
        [sys.executable, "-m", "mcsim", *argv],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ),
        timeout=120,
    )
    lines = run.stderr.splitlines()
    assert run.returncode == 2 and len(lines) == 1, run.stderr
    assert re.match(rf"^mcsim: error: {message}", lines[0]), lines[0]
