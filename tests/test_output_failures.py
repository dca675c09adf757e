"""Writing the verdict never crashes the hook (``preflight.delivery``, docs/exit-codes.md): a closed or full
stdout or stderr, a broken pipe, a report file that cannot be written is at most one line on stderr, and the
exit code stays the verdict's (an OK one becomes 4 when a requested file is missing); never 70, never the drain
code 1 for a usage error. Each case runs the real console entry point (``python -m preflight``) in a process
whose descriptors are closed (``>&-``), full (``>/dev/full``) or a pipe nobody reads (``| head``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from cli_runner import refusing_hosts

from preflight import exit_codes

ROOT = Path(__file__).resolve().parent.parent
RUN = ("run", "--checks", "os")  # this machine, no SSH: a fraction of a second
NODE = ("node", "--checks", "os")
NODE_FAILS = ("node", "--checks", "sysctl", "--set", "sysctl.min_somaxconn=2147483647")  # always exit 1
IO = int | None


def preflight(*args: str | Path, close: Sequence[int] = (), stdin: IO = subprocess.DEVNULL,
              stdout: IO = subprocess.PIPE, stderr: IO = subprocess.PIPE,
              cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m preflight ARGS`` with the descriptors in ``close`` closed in the child (``N>&-``)."""
    def closing() -> None:
        for fd in close:
            os.close(fd)

    return subprocess.run([sys.executable, "-m", "preflight", *map(str, args)], stdin=stdin, stdout=stdout,
                          stderr=stderr, text=True, timeout=120, check=False, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=closing if close else None)


@pytest.fixture(scope="module")
def verdict(tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    """The exit code of ``run`` and ``node`` here when every output can be written: what must not change."""
    where = tmp_path_factory.mktemp("verdict")
    codes = {"run": preflight(*RUN, "--report-dir", where / "run").returncode,
             "node": preflight(*NODE).returncode}
    assert set(codes.values()) <= {exit_codes.OK, exit_codes.PROBLEMS, exit_codes.COULD_NOT_TELL}, codes
    return codes


def missing_file(code: int) -> int:
    """The exit code when a requested file was not written: 4 instead of 0, any other verdict kept."""
    return exit_codes.COULD_NOT_TELL if code == exit_codes.OK else code


def one_line(stderr: str, *words: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1 and all(w in lines[0] for w in words), stderr
    assert "internal error" not in stderr and "Traceback" not in stderr
    return lines[0]


# An output file that cannot be written: one line, and 4 where the verdict was 0.

def test_an_unwritable_report_dir_is_one_line_not_a_crash(verdict: dict[str, int]) -> None:
    done = preflight(*RUN, "--report-dir", "/proc/nope")
    assert done.returncode == missing_file(verdict["run"]), done.stderr
    one_line(done.stderr, "cannot write report.json in /proc/nope", "No such file or directory")
    assert "report: not written" in done.stdout


def test_an_unwritable_junit_file_is_not_an_ok(verdict: dict[str, int], tmp_path: Path) -> None:
    done = preflight(*RUN, "--report-dir", tmp_path / "r", "--junit", "/proc/j.xml")
    assert done.returncode == missing_file(verdict["run"]), done.stderr
    one_line(done.stderr, "cannot write the junit report /proc/j.xml")
    assert (tmp_path / "r" / "report.json").is_file() and (tmp_path / "r" / "report.html").is_file()


@pytest.mark.parametrize("option", [("--prometheus", "/proc/x.prom"), ("--report-dir", "/proc/nope")])
def test_node_with_an_unwritable_file_is_not_an_ok(verdict: dict[str, int], option: tuple[str, str]) -> None:
    done = preflight(*NODE, *option)
    assert done.returncode == missing_file(verdict["node"]), done.stderr
    one_line(done.stderr, "cannot write", option[1])
    assert done.stdout.startswith("preflight node "), "the verdict line still comes"


def test_a_missing_file_never_hides_a_fail() -> None:
    done = preflight(*NODE_FAILS, "--prometheus", "/proc/x.prom")
    assert done.returncode == exit_codes.PROBLEMS, done.stderr
    one_line(done.stderr, "cannot write the prometheus report /proc/x.prom")


# A closed or full stdout: one line on stderr, the verdict's code.

@pytest.mark.parametrize("command", ["node", "run --json", "explain"])
def test_a_closed_stdout_keeps_the_verdict(verdict: dict[str, int], tmp_path: Path, command: str) -> None:
    args: dict[str, tuple[str | Path, ...]] = {
        "node": NODE, "run --json": (*RUN, "--json", "--report-dir", tmp_path / "r"),
        "explain": ("explain", tmp_path / "x.log")}
    (tmp_path / "x.log").write_text("x\n")
    done = preflight(*args[command], close=[1], stdout=subprocess.DEVNULL)
    expected = {"node": verdict["node"], "run --json": verdict["run"], "explain": exit_codes.OK}[command]
    assert done.returncode == expected, done.stderr
    one_line(done.stderr, "cannot write to stdout (closed)", "the exit code is still the verdict")
    if command == "run --json":
        assert (tmp_path / "r" / "report.json").is_file()


def test_explain_with_stdin_closed_reads_nothing_and_says_so() -> None:
    done = preflight("explain", close=[0], stdin=None)
    assert done.returncode == exit_codes.OK, done.stderr
    assert done.stdout.startswith("unknown: no known failure signature")
    one_line(done.stderr, "<stdin>: the file is empty")


@pytest.mark.parametrize("args", [NODE, NODE_FAILS], ids=["node", "node-that-fails"])
def test_a_full_stdout_keeps_the_verdict(verdict: dict[str, int], args: tuple[str, ...]) -> None:
    with open("/dev/full", "w") as full:
        done = preflight(*args, stdout=full.fileno())
    assert done.returncode == (verdict["node"] if args == NODE else exit_codes.PROBLEMS), done.stderr
    one_line(done.stderr, "cannot write to stdout (No space left on device)")


def test_stdout_and_stderr_both_full_still_give_the_verdict(verdict: dict[str, int], tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        done = preflight(*RUN, "--report-dir", tmp_path / "r", stdout=full.fileno(), stderr=subprocess.STDOUT)
    assert done.returncode == verdict["run"]


# A broken pipe (`preflight run | head -1`): silent, the verdict's code.

@pytest.mark.parametrize("json_out", [False, True], ids=["terminal", "json"])
def test_a_reader_that_went_away_changes_nothing(verdict: dict[str, int], tmp_path: Path, json_out: bool) -> None:
    args = [*RUN, "--report-dir", tmp_path / "r", *(["--json"] if json_out else [])]
    proc = subprocess.Popen([sys.executable, "-m", "preflight", *map(str, args)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None
    proc.stdout.close()  # before it writes a byte: every write meets the closed pipe, as after `head -1` ends
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == verdict["run"], err
    assert err == "", "a reader that stops reading is not an error worth a line"


# A usage error with stderr closed: still 2, never the drain code.

@pytest.mark.parametrize("command", ["node", "run"])
def test_a_usage_error_with_stderr_closed_is_still_2(command: str) -> None:
    done = preflight(command, "--checks", "bogus", close=[2], stderr=subprocess.DEVNULL)
    assert done.returncode == exit_codes.USAGE


def test_nothing_open_at_all_still_gives_the_verdict(verdict: dict[str, int], tmp_path: Path) -> None:
    done = preflight(*RUN, "--report-dir", tmp_path / "r", close=[0, 1, 2], stdin=None,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert done.returncode == verdict["run"]
    assert (tmp_path / "r" / "report.json").is_file()


def test_diagnose_with_an_unwritable_report_dir_keeps_its_verdict(tmp_path: Path) -> None:
    """`diagnose --report-dir /proc/nope` crashed with 70; now one line, and its verdict (the hosts are a closed
    port: could not tell, 4) stands."""
    hosts = refusing_hosts(tmp_path)
    launch = ("--", "torchrun", "--nnodes=1", "--nproc-per-node=1", "train.py")
    fine = preflight("diagnose", "--hosts", hosts, "--timeout", "3", "--report-dir", tmp_path / "r", *launch)
    done = preflight("diagnose", "--hosts", hosts, "--timeout", "3", "--report-dir", "/proc/nope", *launch)
    assert fine.returncode in (exit_codes.PROBLEMS, exit_codes.COULD_NOT_TELL), fine.stderr
    assert done.returncode == missing_file(fine.returncode), done.stderr
    one_line(done.stderr, "cannot write report.json in /proc/nope")
    assert "report: not written" in done.stdout
