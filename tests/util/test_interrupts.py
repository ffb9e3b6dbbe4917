# SPDX-License-Identifier: GPL-2.0-only
"""interrupt_held: a Ctrl-C during the block is raised once when it ends, the block runs to its end, the handler is
put back; where SIGINT is ignored or the thread is not the main one, the block runs as it is. interrupts_noted: a
Ctrl-C is raised at once and noted, also when the block loses its KeyboardInterrupt."""

import signal
import threading

import pytest

from mcsim.util.interrupts import interrupt_held, interrupts_noted


def test_a_ctrl_c_in_the_block_is_raised_once_at_its_end():
    before = signal.getsignal(signal.SIGINT)
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with interrupt_held():
            signal.raise_signal(signal.SIGINT)
            signal.raise_signal(signal.SIGINT)
            steps.append("after the Ctrl-C")  # Python ran its handler before this line: it only recorded them
    assert steps == ["after the Ctrl-C"]
    assert signal.getsignal(signal.SIGINT) is before


def test_a_block_without_a_ctrl_c_ends_as_it_would_and_puts_the_handler_back():
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(ValueError, match="its own error"):
        with interrupt_held():
            assert signal.getsignal(signal.SIGINT) is not before  # held meanwhile
            raise ValueError("its own error")
    assert signal.getsignal(signal.SIGINT) is before


def test_an_ignored_ctrl_c_stays_ignored():
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupt_held():
            signal.raise_signal(signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)


def test_outside_the_main_thread_the_block_runs_as_it_is():
    seen = []

    def block() -> None:
        with interrupt_held():
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=block)
    thread.start()
    thread.join()
    assert seen == [signal.getsignal(signal.SIGINT)]


def test_a_noted_ctrl_c_is_raised_at_once_and_noted():
    with pytest.raises(KeyboardInterrupt):
        with interrupts_noted() as came:
            signal.raise_signal(signal.SIGINT)
            pytest.fail("not raised at once")
    assert len(came) == 1
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_ctrl_c_that_the_block_loses_is_still_noted():
    with interrupts_noted() as came:
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:  # as a weakref callback, or an import through PyCapsule_Import, does
            pass
    assert len(came) == 1


def test_a_block_without_a_ctrl_c_notes_none():
    with interrupts_noted() as came:
        pass
    assert came == []
