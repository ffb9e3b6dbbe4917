# SPDX-License-Identifier: GPL-2.0-only
"""Verify mode: real payload bytes end to end, every byte of every rank's output checked."""

import numpy as np
import pytest

from mcsim.config.fabric import Faults
from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario, scenario_of
from mcsim.runs.verify import Expected, expected_output, pattern, wrong_bytes

CASES = [("allgather", "ring"), ("allgather", "mcast"), ("broadcast", "mcast")]


@pytest.mark.parametrize(("collective", "algorithm"), CASES)
def test_every_byte_of_every_output_is_right(collective, algorithm):
    r = Scenario(
        topology="fat-tree-k4", collective=collective, algorithm=algorithm, bytes_per_rank="100000", verify=True
    ).run()
    assert r.complete and r.verified
    np.testing.assert_array_equal(r.wrong_bytes, np.zeros(16))


@pytest.mark.parametrize(("collective", "algorithm"), CASES)
def test_repair_and_retransmission_move_the_real_bytes(collective, algorithm):
    lossy = scenario_of(
        topology="fat-tree-k4",
        collective=collective,
        algorithm=algorithm,
        bytes_per_rank="64KiB",
        verify=True,
        loss=1e-3,
        seed=3,
    ).run()
    assert lossy.verified and lossy.fabric.drops_by_cause()["loss"] > 0
    dropped = Scenario(
        topology="fat-tree-k4",
        collective=collective,
        algorithm=algorithm,
        bytes_per_rank="64KiB",
        verify=True,
        faults=Faults(drops=[(0, 0, 0)]),
    ).run()
    assert dropped.verified and dropped.fabric.drops_by_cause()["chosen"] == 1
    if algorithm == "mcast":
        assert dropped.rank["repaired_chunks"].sum() > 0  # the lost chunk came back by RDMA READ


def test_a_receiver_that_overruns_still_ends_with_the_right_bytes():
    r = Scenario(
        topology="fat-tree-k4", rate="400Gbps", algorithm="mcast", bytes_per_rank="64KiB", roots=16, verify=True
    ).run()
    assert r.rank["receive_drops"].sum() > 0 and r.verified


def test_the_check_finds_a_single_wrong_byte():
    expected = expected_output("allgather", 4, 1000)
    outputs = [expected.copy() for _ in range(4)]
    outputs[2][1234] ^= 1
    np.testing.assert_array_equal(wrong_bytes(outputs, expected), [0, 0, 1, 0])


def test_the_pattern_tells_sources_and_places_apart():
    a, b = pattern(0, 8192), pattern(1, 8192)
    assert (a != b).any()
    assert (a[:4096] != a[4096:]).any(), "a chunk in the wrong place would show"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"collective": "reduce_scatter", "algorithm": "ring", "bytes_per_rank": "1022B"},
            r"^Scenario: bytes_per_rank='1022B' and ring_chunk='64KiB' must be whole numbers of 32-bit integers, "
            r"which the hosts sum in verify mode$",
        ),
        (
            {"collective": "allreduce", "algorithm": "ring", "ring_chunk": "1001B"},
            r"^Scenario: bytes_per_rank='1MiB' and ring_chunk='1001B' must be whole numbers of 32-bit integers",
        ),
        (
            {"overlap": "reduce_scatter", "overlap_algorithm": "innet"},
            r"^Scenario: verify=True checks one collective's outputs; an overlapped pair is not checked$",
        ),
        ({"bytes_per_rank": "8MiB"}, r"verify mode is for small runs"),
    ],
)
def test_bad_verify_is_one_line(kwargs, message):
    with pytest.raises(McsimError, match=message):
        Scenario(**({"topology": "fat-tree-k4", "verify": True} | kwargs))


@pytest.mark.parametrize(
    ("collective", "blocks"), [("allgather", 5), ("broadcast", 1), ("allreduce", 1), ("alltoall", 10)]
)
def test_the_expected_output_is_as_long_as_it_says(collective, blocks):
    e = Expected(collective, 5, 64)
    assert e.output_b == blocks * 64 == e.output(3).size


def test_a_pattern_from_an_offset_is_that_slice_of_the_whole():
    np.testing.assert_array_equal(pattern(3, 1000, start=1500), pattern(3, 4000)[1500:2500])
