"""``exit_now``: the process ends as ``sys.exit`` would end it (code, output, atexit handlers, threads), minus
the interpreter's teardown. Each case runs in a real Python process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import preflight

BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout to a pipe: block-buffered


def run(body: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run ``body`` after ``from preflight.process_exit import exit_now`` in a new interpreter, output piped."""
    code = "import atexit, sys, threading, time\nfrom preflight.process_exit import exit_now\n" + body
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False,
                          cwd=tmp_path, env=BUFFERED)


@pytest.mark.parametrize(("code", "status"), [(None, 0), (0, 0), (1, 1), (4, 4), (70, 70), (256, 0), (-1, 255)])
def test_the_code_and_the_buffered_output_arrive(tmp_path: Path, code: int | None, status: int) -> None:
    done = run(f"print('report' * 1000, end='')\nsys.stderr.write('note')\nexit_now({code!r})\n", tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (status, "report" * 1000, "note")


def test_atexit_handlers_run_once_and_in_order(tmp_path: Path) -> None:
    done = run("atexit.register(print, 'first registered, runs last')\n"
               "atexit.register(lambda: open('ran', 'a').write('x'))\n"
               "atexit.register(print, 'last registered, runs first')\n"
               "exit_now(1)\n", tmp_path)
    assert done.returncode == 1
    assert done.stdout.splitlines() == ["last registered, runs first", "first registered, runs last"]
    assert (tmp_path / "ran").read_text() == "x"


def test_a_running_thread_is_waited_for(tmp_path: Path) -> None:
    done = run("def late():\n    time.sleep(0.3)\n    open('done', 'w').write('yes')\n"
               "threading.Thread(target=late).start()\nexit_now(3)\n", tmp_path)
    assert done.returncode == 3 and (tmp_path / "done").read_text() == "yes"


def test_a_message_is_printed_as_sys_exit_prints_it(tmp_path: Path) -> None:
    fast, usual = run("exit_now('no hosts')\n", tmp_path), run("sys.exit('no hosts')\n", tmp_path)
    assert (fast.returncode, fast.stderr) == (usual.returncode, usual.stderr) == (1, "no hosts\n")


def test_a_closed_stdout_ends_as_it_does_without_it(tmp_path: Path) -> None:
    body = "print('x' * 100)\n{}(0)\n"  # smaller than the buffer: the flush at exit meets the closed pipe
    ends = []
    for exit_call in ("exit_now", "sys.exit"):
        code = "import sys\nfrom preflight.process_exit import exit_now\n" + body.format(exit_call)
        reader = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=BUFFERED)
        assert reader.stdout is not None and reader.stderr is not None
        reader.stdout.close()  # like `preflight run | head -0`
        err = reader.stderr.read().decode()
        ends.append((reader.wait(timeout=60), err))
    assert ends[0] == ends[1] and ends[0][0] == 120 and "BrokenPipeError" in ends[0][1]


def test_the_console_entry_point_exits_with_the_verdict() -> None:
    """`python -m preflight` goes through console_main: usage errors are still 2, with their message."""
    usage = preflight("run", "--no-such-option")
    assert usage.returncode == 2 and "No such option" in usage.stderr
    listed = preflight("list-checks")
    assert listed.returncode == 0 and "sysctl" in listed.stdout
