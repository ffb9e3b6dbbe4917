# SPDX-License-Identifier: GPL-2.0-only
"""Bad jobs through the API, one line each (issue 49): a job's steps, messages and sizes, and the generators
(fsdp_job, data_parallel_job, background_job): never a traceback, an overflow or unbounded work before the first
line. (Workload files, Chakra traces and the commands: test_bad_workload_input.py.)"""

import pytest

from mcsim.errors import McsimError
from mcsim.workloads.chakra import chakra_job
from mcsim.workloads.job import Collective, Compute, Job, Message, Transfer, job_of_graph
from mcsim.workloads.training import background_job, data_parallel_job, fsdp_job

H2 = (0, 1)
BIG = 2**70  # past int64 and the simulated clock
CLOCK = r"\(2\^62 ps = 53\.4 days, the simulated clock's limit\)"
STEPS = r"a job holds at most 250000 steps \(mcsim\.workloads\.job\.MAX_JOB_STEPS\)"
SIZE = r"\(2\^62 B, mcsim's largest size\)"
TRAINING = {"bytes_per_layer": 1 << 20, "forward_ps": 1, "backward_ps": 1}


def _job(*steps, hosts=H2):
    return Job(name="j", hosts=hosts, steps=steps)


def _c(**kw):
    return Compute(label="c", **kw)


API = {
    "compute-past-int64": (
        lambda: _job(_c(duration_ps=BIG)),
        rf"^job 'j': step 0 \(c\) lasts {BIG} ps; give an int "
        rf"0\.\.4611686018427387904 {CLOCK}, or one per rank$",
    ),
    "compute-per-rank-past-the-clock": (
        lambda: _job(_c(duration_ps=(1, 2**62 + 1))),
        rf"^job 'j': step 0 \(c\) lasts \(1, 4611686018427387905\) ps; give an int 0\.\.4611686018427387904 {CLOCK}",
    ),
    "message-past-the-largest-size": (
        lambda: _job(Transfer(label="t", messages=(Message(0, 1, BIG),))),
        rf"^job 'j': step 0 \(t\): a message's nbytes={BIG} is more than 4194304TiB {SIZE}$",
    ),
    "collective-past-the-largest-size": (
        lambda: _job(Collective(label="g", collective="allgather", algorithm="ring", bytes_per_rank=BIG)),
        rf"^job 'j': step 0 \(g\): bytes_per_rank={BIG} is more than 4194304TiB {SIZE}$",
    ),
    "hosts-a-string": (
        lambda: _job(_c(duration_ps=1), hosts="01"),
        r"^job 'j': hosts='01' must be a tuple of host numbers \(integers >= 0\), e\.g\. \(0, 1, 2, 3\)$",
    ),
    "hosts-of-lists": (
        lambda: _job(_c(duration_ps=1), hosts=([0], [1])),
        r"^job 'j': hosts=\(\[0\], \[1\]\) must be a tuple of host numbers \(integers >= 0\)",
    ),
    "label-and-durations-cut": (
        lambda: _job(Compute(label="x" * 10**6, duration_ps=(1, -1) * 500), hosts=tuple(range(1000))),
        r"^job 'j': step 0 \(x{117}\.\.\.\) lasts \(1, -1, [-1, ]+\.\.\. ps; give an int ",
    ),
    "hosts-a-set": (lambda: _job(_c(duration_ps=1), hosts={0, 1}), r"^job 'j': hosts=\{0, 1\} must be a tuple of host"),
    "hosts-negative": (lambda: _job(_c(duration_ps=1), hosts=(0, -1)), r"^job 'j': hosts=\(0, -1\) must be a tuple"),
    "generator-hosts-a-string": (
        lambda: fsdp_job("f", "0123", layers=1, **TRAINING),
        r"^job 'f': hosts='0123' must be a tuple of host numbers",
    ),
    "compute-units-past-uint32": (
        lambda: Job(name="j", hosts=H2, steps=(_c(duration_ps=1),), compute_units=2**32),
        r"^job 'j': compute_units=4294967296 must be 0\.\.4294967295 \(compute steps a rank runs at once, 0: no limit; "
        r"a 32-bit count\)$",
    ),
    "after-an-int": (
        lambda: _job(_c(duration_ps=1), _c(duration_ps=1, after=0)),
        r"^job 'j': step 1 \(c\): after=0 must be a tuple of the indices of the steps it waits for, e\.g\. \(0,\)$",
    ),
    "graph-not-a-dict": (
        lambda: job_of_graph("j", H2, [_c(duration_ps=1)]),
        r"^job 'j': nodes=\[Compute\(.*must be a dict \{key: \(step, \(keys it waits for\)\)\}$",
    ),
    "graph-deps-a-string": (
        lambda: job_of_graph("j", H2, {"a": (_c(duration_ps=1), ()), "bc": (_c(duration_ps=1), "a")}),
        r"^job 'j': step 'bc' waits for 'a', a string; give a tuple of keys, e\.g\. \('a',\)$",
    ),
    "graph-node-not-a-pair": (
        lambda: job_of_graph("j", H2, {"a": _c(duration_ps=1)}),
        r"^job 'j': step 'a' is Compute\(.*; give \(step, \(the keys it waits for, \.\.\.\)\)$",
    ),
    "job-of-too-many-steps": (
        lambda: _job(*(_c(duration_ps=1),) * 250_001),
        rf"^job 'j': holds 250001 steps; {STEPS}$",
    ),
    "job-of-too-many-messages": (
        lambda: _job(Transfer(label="t", messages=(Message(0, 1, 1),) * 1_000_001)),
        r"^job 'j': holds 1000001 messages; a job holds at most 1000000 messages \(mcsim\.workloads\.job\.MAX_JOB_M",
    ),
    "fsdp-layers-1e8": (
        lambda: fsdp_job("f", H2, layers=10**8, **TRAINING),
        rf"^job 'f': layers=100000000 makes 500000000 steps \(5 per layer\); {STEPS}$",
    ),
    "data-parallel-layers-1e8": (
        lambda: data_parallel_job("d", H2, layers=10**8, **TRAINING),
        rf"^job 'd': layers=100000000 makes 300000000 steps \(2 per layer and 1 per bucket\); {STEPS}$",
    ),
    "fsdp-forward-past-the-clock": (
        lambda: fsdp_job("f", H2, layers=1, bytes_per_layer=8, forward_ps=BIG, backward_ps=1),
        rf"^job 'f': forward_ps={BIG} must be 0\.\.4611686018427387904 {CLOCK}$",
    ),
    "fsdp-bytes-past-the-largest-size": (
        lambda: fsdp_job("f", H2, layers=1, bytes_per_layer=BIG, forward_ps=1, backward_ps=1),
        rf"^job 'f': bytes_per_layer={BIG} must be 1\.\.4611686018427387904 {SIZE}$",
    ),
    "data-parallel-bucket-past-the-largest-size": (
        lambda: data_parallel_job(
            "d", H2, layers=4, bytes_per_layer=2**61, forward_ps=1, backward_ps=1, bucket_layers=4
        ),
        rf"^job 'd': step 8 \(AR 3-0\): bytes_per_rank=9223372036854775808 is more than 4194304TiB {SIZE}$",
    ),
    "background-rounds-1e9": (
        lambda: background_job("b", H2, load=1, rounds=10**9, data_rate_bps=10**11),
        rf"^job 'b': rounds=1000000000 makes 2000000000 steps \(2 steps a round\); {STEPS}$",
    ),
    "background-permutation-messages": (
        lambda: background_job(
            "b", tuple(range(64)), load=1, rounds=100_000, data_rate_bps=10**11, pattern="permutation"
        ),
        r"^job 'b': rounds=100000 makes 6400000 messages \(2 steps and 64 messages a round\); a job holds at most "
        r"1000000 messages",
    ),
    "background-long-duration": (
        lambda: background_job("b", H2, load=1, bytes_per_peer=1, duration_ps=2**62, data_rate_bps=10**11),
        rf"^job 'b': duration_ps=4611686018427387904 makes 115292150460684698 steps \(57646075230342349 rounds of 80 "
        rf"ps\); {STEPS}$",
    ),
    "background-load-1e-300": (
        lambda: background_job("b", H2, load=1e-300, rounds=1, data_rate_bps=10**11),
        rf"^job 'b': load=1e-300 makes each idle gap 8\.39e\+307 ps, more than 4611686018427387904 {CLOCK}; "
        r"give load >= 1\.82e-11$",
    ),
    "background-load-denormal": (
        lambda: background_job("b", H2, load=5e-324, rounds=1, data_rate_bps=10**11),
        r"^job 'b': load=5e-324 makes each idle gap inf ps, more than 4611686018427387904",
    ),
    "background-load-1e-12": (
        lambda: background_job("b", H2, load=1e-12, rounds=1, data_rate_bps=10**11),
        r"^job 'b': load=1e-12 makes each idle gap 8\.39e\+19 ps, more than 4611686018427387904",
    ),
    "background-rate-0": (
        lambda: background_job("b", H2, load=1, rounds=1, data_rate_bps=0),
        r"^job 'b': data_rate_bps=0 must be 1\.\.1000000000000000 \(1 Pbit/s, mcsim's largest rate\)$",
    ),
    "chakra-traces-a-string": (
        lambda: chakra_job("c", H2, "ab"),
        r"^job 'c': traces='ab' must be a list of trace files, one per rank$",
    ),
}


@pytest.mark.parametrize("case", list(API))
def test_a_bad_api_call_is_one_line(case):
    make, message = API[case]
    with pytest.raises(McsimError, match=message) as err:
        make()
    assert "\n" not in str(err.value)


def test_a_round_of_no_time_does_not_divide_by_zero():
    # 1 B at 1 Pbit/s is 0.008 ps: a round's bound is 0 ps; a duration counts such rounds as 1 ps each
    job = background_job("b", H2, load=1, bytes_per_peer=1, duration_ps=3, data_rate_bps=10**15)
    assert len(job.steps) == 6
