# SPDX-License-Identifier: GPL-2.0-only
"""What a workload run refuses at planning, before any C++ object exists, in one line with the user's words
(the job's name, the step's index and label): a step or a chain of steps past the simulated clock (a compute
step, a message, a collective at its rate, the steps one after another), and more queue pairs than a NIC has.
Each case through the API (run_jobs' check) and through `mcsim workload` in a fresh process (exit 2)."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from mcsim.errors import McsimError
from mcsim.runs.job_planning import MAX_QPS_PER_NIC, checked_run
from mcsim.runs.jobs import run_jobs
from mcsim.workloads.job import Collective, Compute, Job, Message, Transfer

HOSTS = (0, 1, 2, 3)
CLOCK = r"past 2\^62 ps = 53\.4 days, the simulated clock's limit"


def ag(label: str, size: str, after: tuple[int, ...] = (), algorithm: str = "ring") -> Collective:
    return Collective(label=label, collective="allgather", algorithm=algorithm, bytes_per_rank=size, after=after)


def chain(make, n: int) -> tuple:
    """n steps, each after the one before."""
    return tuple(make(i, (i - 1,) if i else ()) for i in range(n))


# (case, the job's steps, the rate, the one line)
CASES = [
    (
        "compute-step-past-the-clock",
        (Compute(label="F", duration_ps=2**62 + 1),),
        "100Gbps",
        # refused by Job itself (mcsim.workloads.job), before run_jobs' own check
        r"^job 'j': step 0 \(F\) lasts 4611686018427387905 ps; give an int 0\.\.4611686018427387904 \(2\^62 ps = "
        r"53\.4 days, the simulated clock's limit\), or one per rank$",
    ),
    (
        "compute-chain-past-the-clock",
        chain(lambda i, after: Compute(label=f"C{i}", duration_ps=2**61, after=after), 3),
        "100Gbps",
        rf"^job 'j': step 2 \(C2\): the steps up to it take at least 6\.918e\+06 s one after another \(compute, and "
        rf"each collective's and message's data at 100Gbps\), {CLOCK}; give the job fewer or shorter steps, or "
        r"raise the rate$",
    ),
    (
        "message-past-the-clock",
        (Transfer(label="send", messages=(Message(0, 1, "1MiB"),)),),
        "1bps",
        rf"^job 'j': step 0 \(send\): a message of 1048576 B from rank 0 to rank 1 takes at least 8\.389e\+06 s "
        rf"at 1bps, {CLOCK}; raise the rate or send fewer bytes$",
    ),
    (
        "message-chain-past-the-clock",
        chain(lambda i, after: Transfer(label=f"T{i}", messages=(Message(0, 1, "64KiB"),), after=after), 10),
        "1bps",
        rf"^job 'j': step 8 \(T8\): the steps up to it take at least 4\.719e\+06 s one after another \(compute, "
        rf"and each collective's and message's data at 1bps\), {CLOCK}; give the job fewer or shorter steps, or "
        r"raise the rate$",
    ),
    (
        "collective-past-the-clock-in-the-steps-words",
        (ag("AG F0", "16MiB"),),
        "1bps",
        r"^job 'j': step 0 \(AG F0\): each rank must move 50331648 B at 1bps \(rate='1bps', bytes_per_rank='16MiB'\): "
        rf"at least 4\.027e\+08 s, {CLOCK}; raise the rate or lower bytes_per_rank$",
    ),
    (
        "collective-chain-past-the-clock",
        chain(lambda i, after: ag(f"AG{i}", "64KiB", after), 4),
        "1bps",
        rf"^job 'j': step 2 \(AG2\): the steps up to it take at least 4\.719e\+06 s one after another \(compute, "
        rf"and each collective's and message's data at 1bps\), {CLOCK}; give the job fewer or shorter steps, or "
        r"raise the rate$",
    ),
    (
        "message-past-the-largest-infiniband-message",
        (Transfer(label="send", messages=(Message(0, 1, "1KiB"), Message(2, 3, "3GiB"))),),
        "100Gbps",
        r"^job 'j': step 0 \(send\): a message of 3221225472 B from rank 2 to rank 3 is more than 2147483648 B, the "
        r"largest InfiniBand message \(one RDMA WRITE\); send it as several messages$",
    ),
    (
        "queue-pairs-of-many-collective-steps",
        tuple(ag(f"AG {i}", "4KiB") for i in range(33000)),
        "100Gbps",
        rf"^job 'j': its steps need at least 66000 queue pairs on the NIC of host 0 \(rank 0: 66000 for its 33000 "
        rf"collective steps, 0 for the ranks its messages go to or come from\); a NIC has at most {MAX_QPS_PER_NIC} "
        r"\(the 16-bit QP number\); give the job fewer collective steps$",
    ),
    (
        "queue-pairs-of-alltoall-steps",
        tuple(
            Collective(label=f"A2A {i}", collective="alltoall", algorithm="pairwise", bytes_per_rank="4KiB")
            for i in range(11000)
        ),
        "100Gbps",
        r"^job 'j': its steps need at least 66000 queue pairs on the NIC of host 0 \(rank 0: 66000 for its 11000 "
        r"collective steps, 0 for the ranks its messages go to or come from\); a NIC has at most 65535 \(the 16-bit "
        r"QP number\); give the job fewer collective steps$",
    ),
    (
        "queue-pairs-of-mcast-steps-and-messages",
        (
            *(ag(f"AG {i}", "4KiB", algorithm="mcast") for i in range(21845)),
            Transfer(label="send", messages=(Message(0, 1, 8), Message(2, 0, 8))),
        ),
        "100Gbps",
        r"^job 'j': its steps need at least 65537 queue pairs on the NIC of host 0 \(rank 0: 65535 for its 21845 "
        r"collective steps, 2 for the ranks its messages go to or come from\); a NIC has at most 65535 \(the "
        r"16-bit QP number\); give the job fewer collective steps$",
    ),
]


@pytest.mark.parametrize(("steps", "rate", "line"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_workload_that_cannot_run_is_refused_at_planning(steps, rate, line):
    with pytest.raises(McsimError, match=line):
        job = Job(name="j", hosts=HOSTS, steps=steps)
        checked_run((job,), topology="fat-tree-k4", rate=rate)
    with pytest.raises(McsimError, match=line):  # run_jobs checks the same before any C++ object exists
        run_jobs([Job(name="j", hosts=HOSTS, steps=steps)], topology="fat-tree-k4", rate=rate)


def test_compute_units_past_a_32_bit_count_are_refused_in_the_users_words():
    """Not "ComputeUnits=... is refused by ns3::mcsim::Job" from C++ after the fabric is built."""
    # Job itself refuses it now (mcsim.workloads.job: MAX_COMPUTE_UNITS), before run_jobs
    line = (
        r"^job 'j': compute_units=1099511627776 must be 0\.\.4294967295 \(compute steps a rank runs at once, "
        r"0: no limit; a 32-bit count\)$"
    )
    with pytest.raises(McsimError, match=line):
        job = Job(name="j", hosts=HOSTS, steps=(Compute(label="F", duration_ps=1),), compute_units=2**40)
        run_jobs([job], topology="fat-tree-k4")


def test_the_queue_pair_limit_is_found_at_once():
    """A job of many collective steps is refused before each step's Scenario is made (it took 37 s): the
    ring's 2 QPs per step are enough to see it."""
    job = Job(name="j", hosts=HOSTS, steps=tuple(ag(f"AG {i}", f"{4 + i % 7}KiB") for i in range(40000)))
    started = time.process_time()
    with pytest.raises(McsimError, match=r"^job 'j': its steps need at least 80000 queue pairs"):
        checked_run((job,), topology="fat-tree-k4", rate="100Gbps")
    assert time.process_time() - started < 5  # CPU seconds: 40000 Scenarios take ~40


WORKLOAD = """topology = "fat-tree-k4"
rate = "{rate}"
[[jobs]]
name = "a"
ranks = 4
kind = "{kind}"
{keys}
"""
# (case, the file's rate, kind, keys, the one line)
FILE_CASES = [
    (
        "fsdp-at-1bps",
        "1bps",
        "fsdp",
        'layers = 1\nbytes_per_layer = "64MiB"\nforward = "1us"\nbackward = "1us"',
        rf"job 'a': step 0 \(AG F0\): each rank must move 50331648 B at 1bps \(rate='1bps', "
        rf"bytes_per_rank=16777216\): at least 4\.027e\+08 s, {CLOCK}; raise the rate or lower bytes_per_rank",
    ),
    (
        "background-permutation-at-1bps",
        "1bps",
        "background",
        'pattern = "permutation"\nload = 1\nbytes_per_peer = "1MiB"',
        rf"job 'a': step 0 \(perm 0\): a message of 1048576 B from rank 0 to rank \d takes at least 8\.389e\+06 s at "
        rf"1bps, {CLOCK}; raise the rate or send fewer bytes",
    ),
    (
        "background-alltoall-rounds-past-the-qp-limit",
        "100Gbps",
        "background",
        'pattern = "alltoall"\nload = 1\nbytes_per_peer = "4KiB"\nrounds = 11000',
        r"job 'a': its steps need at least 66000 queue pairs on the NIC of host 0 \(rank 0: 66000 for its 11000 "
        r"collective steps, 0 for the ranks its messages go to or come from\); a NIC has at most 65535 \(the "
        r"16-bit QP number\); give the job fewer collective steps",
    ),
]


FILE_CASES.append(
    (
        "innet-steps-past-the-switches-aggregation-buffers",
        "100Gbps",
        "fsdp",
        'layers = 600\nbytes_per_layer = "4KiB"\nforward = "1us"\nbackward = "1us"\nreduce_scatter = "innet"',
        r"workload: its in-network steps' aggregation trees \(each step its own\): aggregation_buffer_b=4194304 holds "
        r"0 slots of 4096 B for each of the 1200 aggregation trees of switch 16; it needs >= 2 \(raise it to >= "
        r"9830400\), or give fewer in-network steps",
    )
)


@pytest.mark.parametrize(("rate", "kind", "keys", "line"), [c[1:] for c in FILE_CASES], ids=[c[0] for c in FILE_CASES])
def test_the_workload_command_refuses_it_in_one_line(tmp_path, rate, kind, keys, line):
    (tmp_path / "w.toml").write_text(WORKLOAD.format(rate=rate, kind=kind, keys=keys))
    p = subprocess.run(
        [sys.executable, "-m", "mcsim", "workload", "w.toml"], capture_output=True, text=True, cwd=tmp_path
    )
    assert p.returncode == 2 and p.stdout == ""
    assert re.fullmatch(f"mcsim: error: {line}\n", p.stderr), p.stderr


STEP_KINDS = [
    ("allgather", "ring", {}),
    ("allgather", "mcast", {}),
    ("allgather", "mcast", {"endpoints": 4}),
    ("allgather", "mcast", {"barriers": 2}),
    ("broadcast", "mcast", {"barriers": 1}),
    ("allgather", "recursive_doubling", {}),
    ("allgather", "bruck", {}),
    ("broadcast", "chain", {}),
    ("broadcast", "binomial", {}),
    ("reduce", "binomial", {}),
    ("reduce", "chain", {}),
    ("reduce_scatter", "ring", {}),
    ("reduce_scatter", "innet", {}),
    ("allreduce", "ring", {}),
    ("allreduce", "halving_doubling", {}),
    ("allreduce", "tree", {}),
    ("allreduce", "innet", {}),
    ("alltoall", "pairwise", {}),
    ("alltoall", "all_at_once", {}),
]


@pytest.mark.parametrize("ranks", [4, 16])
@pytest.mark.parametrize(
    ("collective", "algorithm", "options"), STEP_KINDS, ids=[f"{c}-{a}-{o}" for c, a, o in STEP_KINDS]
)
def test_team_qps_counts_the_queue_pairs_a_step_gives_each_nic(monkeypatch, ranks, collective, algorithm, options):
    """check_qps' count per collective step is what C++ builds: each rank's NIC's QPs after the job is set up
    (read instead of running it), one step of each kind."""
    from mcsim.native import runtime
    from mcsim.native.simulation import Simulation
    from mcsim.runs.job_planning import team_qps

    step = Collective(label="S", collective=collective, algorithm=algorithm, bytes_per_rank="4KiB")
    job = Job(name="j", hosts=tuple(range(ranks)), steps=(step,))
    counted = {}

    def count_instead_of_running(sim):
        stack = runtime.cppyy_object(sim.stack)
        counted["qps"] = [int(stack.GetNic(h).GetNQps()) for h in job.hosts]

    monkeypatch.setattr(Simulation, "run", count_instead_of_running)
    run_jobs([job], topology="fat-tree-k4", **options)  # set up, counted, never run (its job: incomplete)
    _, plan = checked_run((job,), topology="fat-tree-k4", rate=None, **options)
    want = team_qps(plan.specs[0, 0][0])
    assert counted["qps"] == [want] * ranks


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "Nic::AddQp: at most 65535 QPs per NIC",
            "its host's NIC would hold more than 65535 queue pairs (the 16-bit "
            "QP number); give the job fewer collective steps",
        ),
        ("CollectiveTeam: a host appears twice", "a host appears twice"),
        (
            "Job: message 3 has 0 bytes; give 1 .. the region's 4096",
            "message 3 has 0 bytes; give 1 .. the region's 4096",
        ),
    ],
)
def test_a_setup_error_from_cpp_reaches_the_user_without_internal_names(text, words):
    """The fallback for what planning does not catch (run_jobs prefixes the job and the step)."""
    from mcsim.runs.jobs import users_words

    assert users_words(text) == words


def bcast(**kw) -> Job:
    step = Collective(label="B", collective="broadcast", algorithm="binomial", bytes_per_rank="4KiB")
    return Job(name="j", hosts=HOSTS, **kw, steps=(step,))


# (case, run_jobs' options, the one line)
OPTION_CASES = [
    ("root-past-the-steps-ranks", {"root": 7}, r"^job 'j': step 0 \(B\): root=7 must be 0\.\.3 \(a rank\)$"),
    (
        "a-misspelt-option-is-no-type-error",
        {"aggregation_trees": 64},
        r"^run_jobs: unknown run option 'aggregation_trees'; choose one of barriers, batch, ",
    ),
    (
        "an-options-range-without-scenarios-name",
        {"endpoints": 20000},
        r"^workload: endpoints=20000 must be 1\.\.16383: each endpoint is one UD QP per rank in a multicast group",
    ),
]


@pytest.mark.parametrize(("options", "line"), [c[1:] for c in OPTION_CASES], ids=[c[0] for c in OPTION_CASES])
def test_a_bad_run_option_is_one_line_in_the_users_words(options, line):
    with pytest.raises(McsimError, match=line):
        run_jobs([bcast()], topology="fat-tree-k4", rate=None, **options)


def test_root_is_checked_against_each_steps_ranks_not_two():
    """root=3 on a 4-rank Broadcast is a rank (it was refused: 'Scenario: root=3 must be 0..1')."""
    _, plan = checked_run((bcast(),), topology="fat-tree-k4", rate=None, root=3)
    assert plan.specs[0, 0][0].root == 3


LONG = "L" * 300  # a label as a trace may give it (a node named with megabytes): messages show 117 + "..."
SHOWN = "L" * 117 + r"\.\.\."


def compute_chain(n: int) -> tuple:
    return tuple(Compute(label="C", duration_ps=1, after=(i - 1,) if i else ()) for i in range(n))


# (case, the jobs, the one line): a step's words as the user gave them, the steps of all jobs bounded together
API_CASES = [
    (
        "a-long-label-in-a-steps-scenario-error",
        [Job(name="j", hosts=HOSTS, steps=(ag(LONG, "4KiB", algorithm="nope"),))],
        rf"^job 'j': step 0 \({SHOWN}\): unknown algorithm for allgather 'nope'; choose one of ",
    ),
    (
        "a-long-label-on-a-message-past-the-largest",
        [Job(name="j", hosts=HOSTS, steps=(Transfer(label=LONG, messages=(Message(0, 1, 2**31 + 1),)),))],
        rf"^job 'j': step 0 \({SHOWN}\): a message of 2147483649 B from rank 0 to rank 1 is more than ",
    ),
    (
        "a-long-label-on-a-step-past-the-clock",
        [
            Job(
                name="j",
                hosts=HOSTS,
                steps=(Compute(label="C", duration_ps=2**62), Compute(label=LONG, duration_ps=2**62, after=(0,))),
            )
        ],
        rf"^job 'j': step 1 \({SHOWN}\): the steps up to it take at least 9\.223e\+06 s one after another",
    ),
    (
        "an-algorithm-not-a-string",
        [Job(name="c", hosts=HOSTS, steps=(ag("AG", "4KiB", algorithm=5),))],
        r"^job 'c': step 0 \(AG\): algorithm=5 must be a string$",
    ),
    (
        "an-algorithm-a-list-is-no-type-error",
        [Job(name="c", hosts=HOSTS, steps=(ag("AG", "4KiB", algorithm=["ring"]),))],
        r"^job 'c': step 0 \(AG\): algorithm=\['ring'\] must be a string$",
    ),
    (
        "a-collective-a-dict-is-no-type-error",
        [Job(name="c", hosts=HOSTS, steps=(Collective(label="X", collective={}, algorithm="ring", bytes_per_rank=4),))],
        r"^job 'c': step 0 \(X\): collective=\{\} must be a string$",
    ),
    (
        "the-steps-of-all-jobs-together",
        [
            Job(name="a", hosts=(0, 1), steps=compute_chain(130_000)),
            Job(name="b", hosts=(2, 3), steps=compute_chain(130_000)),
        ],
        r"^run_jobs: the jobs hold 260000 steps together; a run's jobs hold at most 250000 together, as a job's "
        r"\(mcsim\.workloads\.job\.MAX_JOB_STEPS\); run fewer or smaller jobs$",
    ),
]


@pytest.mark.parametrize(("jobs", "line"), [c[1:] for c in API_CASES], ids=[c[0] for c in API_CASES])
def test_the_api_says_a_steps_fault_in_its_words(jobs, line):
    with pytest.raises(McsimError, match=line):
        run_jobs(jobs, topology="fat-tree-k4", rate="100Gbps")


def test_the_runs_root_is_a_broadcasts_and_leaves_an_allgather_step_alone():
    """root=3 reaches the Broadcast step; the Allgather step beside it, which has no root, runs as it does without
    one (a Scenario refuses a root on an Allgather: the run with a root was refused whole)."""
    steps = (
        Collective(label="B", collective="broadcast", algorithm="binomial", bytes_per_rank="4KiB"),
        ag("AG", "4KiB", after=(0,)),
    )
    _, plan = checked_run((Job(name="j", hosts=HOSTS, steps=steps),), topology="fat-tree-k4", rate=None, root=3)
    assert (plan.specs[0, 0][0].root, plan.specs[0, 1][0].root) == (3, 0)
    _, alone = checked_run((Job(name="j", hosts=HOSTS, steps=(ag("AG", "4KiB"),)),), topology="fat-tree-k4", rate=None)
    assert plan.specs[0, 1][0] == alone.specs[0, 0][0]
