"""The probe runner (preflight.batch) run by a real ``sh -s``: framing, exit codes, timeouts, caps."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from preflight.batch import MAX_OUTPUT_BYTES, Probe, ProbeOutput, build_script, parse_output, print_line, read_line


def run(probes: list[Probe], nonce: str = "t3st") -> tuple[dict[str, ProbeOutput], float]:
    start = time.monotonic()
    proc = subprocess.run(["sh", "-s"], input=build_script(probes, nonce).encode(), capture_output=True, timeout=60)
    return parse_output(proc.stdout, [p.key for p in probes], nonce, proc.stderr), time.monotonic() - start


def test_streams_exit_codes_and_missing_newlines_stay_apart() -> None:
    out, _ = run([Probe("a", "printf 'no newline'; printf 'err' >&2; exit 3"),
                  Probe("b", "echo one; echo two >&2"),
                  Probe("c", "true")])
    assert out["a"] == ProbeOutput("no newline", "err", 3)
    assert out["b"] == ProbeOutput("one\n", "two\n", 0)
    assert out["c"] == ProbeOutput("", "", 0)


def test_a_probe_cannot_change_the_script_or_the_next_probe() -> None:
    out, _ = run([Probe("cd", "cd /; PF_M=forged; set -- x y; exit 0"),
                  Probe("after", 'pwd; echo "$#"; echo "$PF_M" | grep -c forged')])
    assert out["after"].stdout.splitlines()[:2] == [os.getcwd(), "0"]
    assert out["after"].stdout.splitlines()[2] == "0"


def test_printed_markers_without_the_nonce_are_just_output() -> None:
    fake = "@@PF-other END a 0\n@@PF- END a 0\n"
    out, _ = run([Probe("a", f"printf {fake!r}")])
    assert out["a"].stdout == fake and out["a"].exit_status == 0


def test_a_hung_probe_and_its_children_are_killed_and_the_next_probe_runs() -> None:
    marker = f"preflight-test-hang-{os.getpid()}"
    out, seconds = run([Probe("hang", f"sh -c 'sleep 300; : {marker}' & sleep 301; echo never", timeout=2),
                        Probe("after", "echo still here")])
    assert out["hang"].exit_status == 124 and out["hang"].timed_out and "never" not in out["hang"].stdout
    assert out["after"].stdout == "still here\n"
    assert 2 <= seconds < 6, seconds  # the timeout, plus at most the watchdog's 1 s tick and start-up
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
    assert left == "", left


def test_output_over_the_cap_is_cut_and_flagged() -> None:
    out, _ = run([Probe("big", f"head -c {MAX_OUTPUT_BYTES + 5000} /dev/zero | tr '\\0' x"),
                  Probe("small", "echo ok")])
    assert out["big"].truncated and len(out["big"].stdout) == MAX_OUTPUT_BYTES
    assert out["small"] == ProbeOutput("ok\n", "", 0)


def test_bytes_that_are_not_utf8_do_not_break_the_framing() -> None:
    out, _ = run([Probe("junk", "printf '\\377\\376\\n\\200'"), Probe("next", "echo fine")])
    assert out["junk"].exit_status == 0 and out["next"].stdout == "fine\n"


def test_unfinished_output_is_not_run() -> None:
    keys = ["a", "b"]
    partial = b"@@PF-n BEGIN a\nx\n\n@@PF-n END a 0\n@@PF-n BEGIN b\nhalf"
    out = parse_output(partial, keys, "n")
    assert out["a"].stdout == "x\n" and out["b"].exit_status is None


def test_read_line_reads_sysfs_and_string_sysctls_without_a_fork() -> None:
    command = read_line("/proc/sys/kernel/ostype") + ' && echo "$pf_v"; ' + print_line("/nonexistent") + " || echo none"
    assert subprocess.run(["sh", "-c", command], capture_output=True, text=True).stdout == "Linux\nnone\n"


def test_the_watchdog_times_probes_by_the_clock_not_by_its_turns(tmp_path: Path) -> None:
    """On a node at load 100 each ``sleep 1`` of the watchdog takes seconds: a probe's timeout is its clock time.
    Here every turn of the watchdog takes 3 s (a ``sleep`` on PATH that counts its calls): a probe with a 3 s
    timeout is killed on the watchdog's second turn, not its fourth (the turn count before /proc/uptime)."""
    turns = tmp_path / "turns"
    slow = tmp_path / "bin" / "sleep"
    slow.parent.mkdir()
    slow.write_text(f"#!/bin/sh\necho x >> {turns}\nexec /bin/sleep 3\n")
    slow.chmod(0o755)
    script = build_script([Probe("hang", "exec /bin/sleep 60", timeout=3)], "t3st")
    env = {**os.environ, "PATH": f"{slow.parent}:{os.environ['PATH']}"}
    proc = subprocess.run(["sh", "-s"], input=script.encode(), capture_output=True, timeout=60, env=env)
    out = parse_output(proc.stdout, ["hang"], "t3st", proc.stderr)
    assert out["hang"].exit_status == 124
    assert len(turns.read_text().splitlines()) <= 3, "the probe was killed after its timeout in turns, not seconds"
