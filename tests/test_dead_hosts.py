"""A dead host costs its connect timeout, not a minute (issue 35): the real CLI, no namespace cluster.

This machine is the one reachable host (``localhost``: the local transport), next to a host whose SSH port
refuses and one whose name does not resolve. Its ``python:`` is a wrapper that ``exec``s the interpreter, as a
pyenv shim does, so the listener's command line is not the one ``net.reachability``'s ``pkill`` looks for.
Before: report.json said ~10 s (the engine waited for a listener nobody could connect to) and the process
exited ~70 s after it started (the listener ran out its window, and the exit waited for its thread).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import yaml
from cli_runner import closed_port, preflight


def test_a_run_with_dead_hosts_ends_with_its_report_and_does_not_wait_for_them(tmp_path: Path) -> None:
    shim = tmp_path / "python3"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    shim.chmod(0o755)
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(yaml.safe_dump({
        "defaults": {"python": str(shim)},
        "cluster": {"accelerator": "cpu", "devices_per_host": 1, "master_port": closed_port()},
        "hosts": [{"name": "here", "address": "localhost"},
                  {"name": "refused", "address": "127.0.0.1", "port": closed_port()},
                  {"name": "ghost", "address": "nohost.invalid"}]}))
    start = time.monotonic()
    proc = preflight("run", "--hosts", hosts, "--checks", "net.reachability", "--connect-timeout", "2",
                     "--json", "--report-dir", tmp_path / "report", timeout=45)
    wall = time.monotonic() - start
    assert proc.returncode == 4, proc.stderr  # the two dead hosts are ssh.connect errors; nothing failed
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    errors = {f["host"] for f in report["findings"] if f["check"] == "ssh.connect" and f["status"] == "error"}
    assert errors == {"refused", "ghost"}
    # Bounds that tell the old waits from none on a loaded box (before: ~10 s in the report, ~60 s more to exit).
    assert report["duration_s"] < 8.0, "the run waited for hosts already known unreachable"
    assert wall - report["duration_s"] < 30.0, \
        f"the process outlived its report: {wall:.1f} s wall, report.json says {report['duration_s']} s"
    (skip,) = [f for f in report["findings"] if f["check"] == "net.reachability"]
    assert skip["status"] == "skip" and skip["host"] is None
    assert skip["message"].endswith("nothing to test (fewer than 2 hosts: 1 of 3 reachable with a working python)")
