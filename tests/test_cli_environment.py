# SPDX-License-Identifier: GPL-2.0-only
"""Every command in an environment that cannot take its output, through the real command in a fresh process:
stdout closed (``>&-``), stdout on a full device (/dev/full), stdout in a locale that is not UTF-8, and Ctrl-C in
the first half second (while the command still imports). Each is one line on stderr and no traceback: exit 2 (a bad
environment), 130 (Ctrl-C); a reader of stdout that has gone stays 141 (tests/test_bad_input_commands.py)."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcsim import cli

HERE = Path(__file__).resolve().parent
IB_MAN = str(HERE / "topology" / "data" / "ibnetdiscover-man-example.topo")
FT4 = ["--topology", "fat-tree-k4", "--size", "4KiB"]
SWEEP = 'name = "tiny"\n[base]\ntopology = "fat-tree-k4"\nbytes_per_rank = "4KiB"\n'
LONG_SIZE = "1GiB"  # an Allgather of it on fat-tree-k4: 1.5e8 packets (Scenario.estimate()), ~35 s at 4 M/s
LONG_SWEEP = SWEEP.replace('"tiny"', '"long"').replace('"4KiB"', f'"{LONG_SIZE}"')
WORKLOAD = (
    'topology = "fat-tree-k4"\n[[jobs]]\nname = "NAME"\nranks = 4\nkind = "fsdp"\nlayers = 1\n'
    'bytes_per_layer = "4KiB"\nforward = "1us"\nbackward = "1us"\n'
)
TOPOLOGY = 'name = "NAME"\n[builder]\nname = "fat_tree"\nk = 4\nrate = "56.25Gbps"\ndelay = "100ns"\n'
SCRIPT = "print('a line from a script')\n"


def _files(tmp: Path, name: str = "a") -> None:
    """The files the commands read, in tmp (the job's and the topology's name: ``name``)."""
    (tmp / "tiny.toml").write_text(SWEEP)
    (tmp / "long.toml").write_text(LONG_SWEEP)
    (tmp / "workload.toml").write_text(WORKLOAD.replace("NAME", name), encoding="utf-8")
    (tmp / "topo.toml").write_text(TOPOLOGY.replace("NAME", name), encoding="utf-8")
    (tmp / "script.py").write_text(SCRIPT)


# every command, as a run that succeeds when stdout can take its output (cheap: a small run, a closed form)
COMMANDS = {
    "build": ["build"],
    "info": ["info"],
    "run": ["run", "script.py"],
    "allgather": ["allgather", *FT4],
    "broadcast": ["broadcast", *FT4],
    "reduce-scatter": ["reduce-scatter", *FT4],
    "allreduce": ["allreduce", *FT4],
    "alltoall": ["alltoall", *FT4],
    "reduce": ["reduce", *FT4],
    "stream": ["stream", "--size", "64KiB"],
    "topo-show": ["topo", "show", "fat-tree-k4"],
    "topo-draw": ["topo", "draw", "fat-tree-k4", "-o", "f.svg"],
    "topo-import": ["topo", "import", "ibnetdiscover", IB_MAN],
    "sweep": ["sweep", "tiny.toml", "--store", "s.sqlite", "--no-progress"],
    "sweep-show": ["sweep", "show", "s.sqlite"],
    "compare": ["compare", "--quick", "--only", "dpa-1/16"],
    "report": ["report", "--quick", "--figures", "dpa-threads", "-o", "r.html"],
    "workload": ["workload", "workload.toml"],
}
# what a command needs done first (sweep show: a store to show)
SETUP = {"sweep-show": ["sweep", "tiny.toml", "--store", "s.sqlite", "--no-progress"]}
MCSIM = [sys.executable, "-m", "mcsim"]
ENV = os.environ | {"MCSIM_PROGRESS": "0"}


def _setup(case: str, tmp: Path, name: str = "a") -> None:
    _files(tmp, name)
    if case in SETUP:
        subprocess.run([*MCSIM, *SETUP[case]], cwd=tmp, env=ENV, check=True, capture_output=True, timeout=300)


def _one_error_line(proc: subprocess.CompletedProcess[str], message: str) -> None:
    """Exit 2 and exactly one stderr line (after any progress lines "mcsim: ..." that are not errors), the error."""
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-3000:])
    # progress lines ("mcsim: sweep ...", "mcsim report: figure ...") may come first; one line is an error
    errors = [line for line in proc.stderr.splitlines() if not line.startswith("mcsim") or "error:" in line]
    assert len(errors) == 1, proc.stderr[-3000:]
    assert re.fullmatch(f"mcsim: error: {message}", errors[0]), errors[0]


@pytest.mark.parametrize("case", list(COMMANDS))
def test_a_closed_stdout_is_one_line_before_any_work(case, tmp_path):
    _setup(case, tmp_path)
    proc = subprocess.run(
        [*MCSIM, *COMMANDS[case]],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=ENV,
        timeout=300,
        preexec_fn=lambda: os.close(1),  # as the shell's >&-
    )
    _one_error_line(proc, r"stdout is closed \(>&-\); give the command somewhere to write, e.g\. >/dev/null")
    assert proc.stderr.count("\n") == 1  # refused before any work: not even a progress line


@pytest.mark.parametrize("case", list(COMMANDS))
def test_a_closed_stderr_is_one_line_on_stdout_before_any_work(case, tmp_path):
    _setup(case, tmp_path)
    proc = subprocess.run(
        [*MCSIM, *COMMANDS[case]],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=ENV,
        timeout=300,
        preexec_fn=lambda: os.close(2),  # as the shell's 2>&-
    )
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-3000:])
    assert proc.stdout == (
        "mcsim: error: stderr is closed (2>&-); give the command somewhere to write its errors and progress, "
        "e.g. 2>/dev/null\n"
    )


PRINTS = [case for case in COMMANDS if case != "sweep"]  # sweep writes its store and stderr only: it succeeds


@pytest.mark.parametrize("case", PRINTS)
def test_stdout_on_a_full_device_is_one_line(case, tmp_path):
    _setup(case, tmp_path)
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [*MCSIM, *COMMANDS[case]],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env=ENV,
            timeout=300,
        )
    _one_error_line(proc, r"cannot write to stdout \(No space left on device\)")


NAMED = {  # a command that prints a name from a file: the workload's job, the topology's name
    "workload": ["workload", "workload.toml"],
    "topo-show": ["topo", "show", "topo.toml"],
}


@pytest.mark.parametrize("case", list(NAMED))
@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_name_stdout_cannot_encode_is_one_line(case, encoding, tmp_path):
    _setup(case, tmp_path, name="\u5927\u89c4\u6a21-job")  # not in ASCII nor in Latin-1
    # the C locale without Python's UTF-8 mode: stdout is ASCII; a Latin-1 stdout as an ISO-8859-1 locale gives it
    env = ENV | {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    env.pop("PYTHONIOENCODING", None)
    if encoding == "latin-1":
        env["PYTHONIOENCODING"] = "latin-1"
    proc = subprocess.run([*MCSIM, *NAMED[case]], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    _one_error_line(
        proc,
        r"stdout's encoding, (ascii|latin-1), cannot write '\\u5927' \(U\+5927\); set PYTHONIOENCODING=utf-8 or a "
        r"UTF-8 locale \(e\.g\. LC_ALL=C\.UTF-8\)",
    )


EARLY_MS = (0, 50, 100, 200, 400)  # Ctrl-C this long after the process started: while it imports, or runs
# Python's own start-up, before any of mcsim's code runs (site: a .pth file such as an editable install's): tried again
STARTUP = ("init_import_site", "Error processing line")


PACKAGE_INIT = f"{os.sep}mcsim{os.sep}__init__.py"


def _in_python_start_up(err: str) -> bool:
    """The signal landed before any of mcsim's guarded code ran: site's start-up, or runpy before it imports mcsim
    (a traceback without a frame of mcsim's files), or while it runs the package's own few lines, which import
    nothing (test_importing_the_package_loads_no_other_module) and come before any guard (one such traceback in
    twelve runs of these tests under two busy loops: report-50, at ``__all__ = sorted(API)``)."""
    if any(mark in err for mark in STARTUP):
        return True
    files = re.findall(r'File "([^"]*)"', err)
    return "Traceback" in err and all(f"{os.sep}mcsim{os.sep}" not in f or f.endswith(PACKAGE_INIT) for f in files)


def _as_a_shell_starts_it() -> None:
    """In the child: SIGINT at its default and not blocked, as a user's shell starts a process (the test
    process's libraries may have changed both, and a child inherits them)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


ENDS_S = 30  # an interrupted command ends in a second or two; LONG's would run far longer


# the installed `mcsim` command: what pip's console script does (mcsim.cli:main, no mcsim.__main__)
CONSOLE_SCRIPT = [sys.executable, "-c", "import sys; from mcsim.cli import main; sys.exit(main())"]


def _interrupted(
    argv: list[str], after_ms: int, tmp: Path, mcsim: list[str] = MCSIM
) -> subprocess.CompletedProcess[str]:
    """The command, sent SIGINT ``after_ms`` after it started; again (later, from the fourth try: 50 ms more, then
    twice as much each time) while the signal lands in Python's own start-up (a loaded machine takes longer to get
    through it), before mcsim runs. A command still running ENDS_S after the signal is killed: site's start-up can
    lose the signal too (it printed "Error processing line" and ran the command), anything else fails the test."""
    for attempt in range(8):
        proc = subprocess.Popen(
            [*mcsim, *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp,
            preexec_fn=_as_a_shell_starts_it,
        )
        time.sleep((after_ms + (25 * 2 ** (attempt - 2) if attempt > 2 else 0)) / 1000)
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=ENDS_S)
        except subprocess.TimeoutExpired:  # the signal was lost: leave no long run behind
            proc.kill()
            out, err = proc.communicate()
        if not _in_python_start_up(err):
            break
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


# commands that take longer than the last moment, by construction (a command that has ended is not interrupted):
# allgather and sweep simulate LONG_SIZE per rank, more packets than any machine delivers in a second (1MiB and
# the tiny sweep took 0.7 s and 1.1 s here: a loaded machine could let them end before the signal, exit 0);
# compare and report simulate a dozen runs (18 s and 41 s here)
LONG = {
    "allgather": ["allgather", "--topology", "fat-tree-k4", "--size", LONG_SIZE],
    "sweep": ["sweep", "long.toml", "--store", "s.sqlite"],
    "compare": ["compare", "--quick", "--store", "c.sqlite"],
    "report": ["report", "--quick", "-o", "r.html", "--store", "c.sqlite"],
}


@pytest.mark.parametrize("after_ms", EARLY_MS)
@pytest.mark.parametrize("case", list(LONG))
def test_ctrl_c_in_the_first_half_second_is_one_line_and_130(case, after_ms, tmp_path):
    _files(tmp_path)
    _is_one_line_and_130(_interrupted(LONG[case], after_ms, tmp_path))


@pytest.mark.parametrize("after_ms", EARLY_MS)
def test_ctrl_c_in_the_first_half_second_of_the_console_script_too(after_ms, tmp_path):
    _is_one_line_and_130(_interrupted(LONG["allgather"], after_ms, tmp_path, CONSOLE_SCRIPT))


# the console script, with a Ctrl-C the moment xml.etree's C part imports pyexpat (networkx imports xml.etree): the
# import turns it into an ImportError (PyCapsule_Import), which ElementTree catches to fall back to its Python version
LOST_IN_AN_IMPORT = """import os, signal, sys
class Finder:
    def find_spec(self, name, path=None, target=None):
        if name == "pyexpat":
            open("fired", "w").close()
            os.kill(os.getpid(), signal.SIGINT)  # its KeyboardInterrupt comes at Python's next check: in this import
sys.meta_path.insert(0, Finder())
from mcsim.cli import main
sys.exit(main())
"""


def test_a_ctrl_c_that_a_library_import_would_lose_is_one_line_and_130(tmp_path):
    """The Ctrl-C that the suite once lost (sweep-100: exit 0, the sweep's own last line): held while the commands
    load, it comes after their imports, whatever they catch."""
    proc = subprocess.run(
        [sys.executable, "-c", LOST_IN_AN_IMPORT, *COMMANDS["topo-show"]],  # quick: a lost Ctrl-C would exit 0
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=ENV,
        timeout=300,
        preexec_fn=_as_a_shell_starts_it,
    )
    assert (tmp_path / "fired").exists()  # the signal came inside that import
    assert proc.returncode == 130, (proc.returncode, proc.stderr[-3000:])
    assert proc.stderr == "mcsim: interrupted\n"
    assert proc.stdout == ""


def test_a_ctrl_c_that_a_command_loses_later_is_one_line_and_130(monkeypatch, capsys):
    """In process: a command (here info) that calls code which swallows the KeyboardInterrupt, as a weakref callback
    does, and goes on to its end: main still says interrupted and returns 130."""

    def info_losing_a_ctrl_c(args: object) -> int:
        try:
            signal.raise_signal(signal.SIGINT)  # its handler runs before raise_signal returns
        except KeyboardInterrupt:
            pass
        print("the command's output")
        return 0

    monkeypatch.setattr(cli, "cmd_info", info_losing_a_ctrl_c)
    assert cli.main(["info"]) == 130
    out, err = capsys.readouterr()
    assert (out, err) == ("the command's output\n", "mcsim: interrupted\n")


def test_importing_the_package_loads_no_other_module():
    """mcsim/__init__.py runs before any Ctrl-C guard: it must import nothing that takes time (typing did)."""
    code = "import sys; before = set(sys.modules); import mcsim; print(sorted(set(sys.modules) - before))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['mcsim']"


# mcsim/__init__.py runs before any guard (python -m mcsim and the console script import the package first): it
# imports nothing slow (not even typing), so a Ctrl-C there is not a traceback either (issue 49)
def _is_one_line_and_130(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    # 130 (128 + SIGINT), or killed by SIGINT itself before Python installed its handler (a shell shows 130 too)
    assert proc.returncode in (130, -signal.SIGINT), (proc.returncode, proc.stderr[-3000:])
    lines = proc.stderr.splitlines()
    if proc.returncode == 130:
        assert lines[-1].startswith("mcsim: interrupted"), proc.stderr
        assert all(line.startswith("mcsim: ") for line in lines), proc.stderr
