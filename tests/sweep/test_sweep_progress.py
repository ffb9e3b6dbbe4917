# SPDX-License-Identifier: GPL-2.0-only
"""Sweep progress: one plain line per finished run off a terminal (counts, ETA), a tqdm bar on one."""

import io

import pytest

from mcsim.errors import McsimError
from mcsim.sweep import progress
from mcsim.sweep.outcome import FAILED, OK, Outcome, Task
from mcsim.sweep.progress import Progress, eta_text


def outcome(
    label: str, status: str = OK, wall_s: float = 2.1, error: str | None = None, metrics: dict | None = None
) -> Outcome:
    return Outcome(
        key=label,
        label=label,
        status=status,
        error=error,
        metrics=metrics,
        arrays=None,
        wall_s=wall_s,
        peak_rss_b=None,
        host="h",
        started="",
        ended="",
    )


def task(label: str) -> Task:
    return Task(key=label, label=label, scenario={})


class Clock:
    """A stand-in for time.monotonic that the test moves by hand."""

    def __init__(self) -> None:
        self.now_s = 1000.0

    def __call__(self) -> float:
        return self.now_s


@pytest.fixture
def clock(monkeypatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(progress, "monotonic", c)
    return c


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    "seconds, text",
    [
        (None, "?"),
        (0, "0s"),
        (0.4, "0s"),
        (45, "45s"),
        (59.6, "1m00s"),
        (100, "1m40s"),
        (3599, "59m59s"),
        (7500, "2h05m"),
    ],
)
def test_eta_text(seconds, text):
    assert eta_text(seconds) == text


INCOMPLETE_METRICS = {"complete": False, "unfinished_ranks": 6, "ranks": 16}


def test_plain_lines_count_runs_and_give_the_eta(clock):
    out = io.StringIO()
    with Progress(6, stored=2, stream=out, stored_incomplete=1) as p:
        for label in ("rate=56Gbps algorithm=ring", "b", "c"):
            p.started(task(label))
        clock.now_s += 10
        p.finished(outcome("rate=56Gbps algorithm=ring", metrics={"complete": True}))
        clock.now_s += 10
        p.finished(outcome("b", FAILED, 0.4, "worker process died (signal 6, SIGABRT) while running it\nabort\ntail"))
        p.started(task("d"))
        clock.now_s += 30
        p.finished(outcome("c", wall_s=61, metrics=INCOMPLETE_METRICS))
        p.finished(outcome("d"))
    # 2 stored count as done (1 ok, 1 incomplete); the ETA uses this session's runs only: 10 s per
    # run x 3 left, x 2 left, then 50 s / 3 runs x 1 left
    assert out.getvalue().splitlines() == [
        "[3/6] ok rate=56Gbps algorithm=ring 2.1 s | ok 2, incomplete 1, failed 0, running 2, ETA 30s",
        "[4/6] FAILED b 0.4 s: worker process died (signal 6, SIGABRT) while running it"
        " | ok 2, incomplete 1, failed 1, running 1, ETA 20s",
        "[5/6] INCOMPLETE c 61.0 s: 6 of 16 ranks did not finish | ok 2, incomplete 2, failed 1, running 1, ETA 17s",
        "[6/6] ok d 2.1 s | ok 3, incomplete 2, failed 1, running 0, ETA 0s",
    ]
    assert (p.done, p.ok, p.incomplete, p.failed, p.running) == (6, 3, 2, 1, 0)


def test_the_eta_is_unknown_until_a_run_of_this_session_finishes(clock):
    p = Progress(4, stored=3, stream=io.StringIO())
    clock.now_s += 100
    assert p.eta_s() is None
    assert Progress(3, stored=3, stream=io.StringIO()).eta_s() == 0.0


def test_a_terminal_gets_a_tqdm_bar_that_closes(clock):
    out = FakeTerminal()
    with Progress(3, stored=1, stream=out) as p:
        p.started(task("a"))
        p.started(task("b"))
        p.finished(outcome("a", FAILED, error="passed its time limit of 30 s"))
        p.finished(outcome("b", metrics=INCOMPLETE_METRICS))
        assert p._bar is not None
    assert p._bar is None
    text = out.getvalue()
    assert "FAILED a 2.1 s: passed its time limit of 30 s" in text
    assert "INCOMPLETE b 2.1 s: 6 of 16 ranks did not finish" in text
    assert "3/3" in text and "ok 1, incomplete 1, failed 1, running 0" in text
    assert "[3/3]" not in text  # not the plain lines


@pytest.mark.parametrize(
    "total, stored, kw, match",
    [
        (-1, 0, {}, r"Progress: total=-1 must be >= 0"),
        (2, 3, {}, r"Progress: stored=3 must be 0..2"),
        (3, 2, {"stored_incomplete": 3}, r"Progress: stored_incomplete=3 must be 0..2"),
        (3, 2, {"stored_incomplete": 1, "stored_failed": 2}, r"Progress: stored_failed=2 must be 0..1"),
    ],
)
def test_bad_counts_are_one_error_line(total, stored, kw, match):
    with pytest.raises(McsimError, match=match):
        Progress(total, stored, stream=io.StringIO(), **kw)
