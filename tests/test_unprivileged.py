"""A first run without root (issue 35.5): the firewall rules a user may not list are a `skip` saying how to read
them (root, --sudo), not an `error` that makes a laptop's first run ERROR (exit 4); `node` has --sudo.

"Without root" is the real thing as iptables and nft see it: the run is started with no capabilities
(``setpriv --bounding-set=-all``: what a non-root user, or a container without CAP_NET_ADMIN, has), so both
refuse to list the rules exactly as they refuse a user ("Permission denied (you must be root)",
"Operation not permitted (you must be root)").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from preflight import exit_codes

REPO = Path(__file__).resolve().parent.parent


def without_root(*args: str) -> tuple[int, dict[str, Any]]:
    """``preflight ARGS --json`` with every capability dropped, its children's too."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv (util-linux) to drop the capabilities")
    proc = subprocess.run(["setpriv", "--bounding-set=-all", "--inh-caps=-all", sys.executable, "-m", "preflight",
                           *args, "--json"], capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout.startswith("{"), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def rules(report: dict[str, Any]) -> dict[str, Any]:
    return next(f for f in report["findings"] if f["check"] == "firewall.rules")


@pytest.mark.parametrize("command", ["node", "run"])
def test_rules_unreadable_without_root_are_a_skip_with_the_way_to_read_them(command: str, tmp_path: Path) -> None:
    if not (shutil.which("iptables") or shutil.which("nft") or Path("/usr/sbin/iptables").exists()):
        pytest.skip("neither iptables nor nft here: nothing to refuse")
    where = ["--report-dir", str(tmp_path)] if command == "run" else []
    code, report = without_root(command, *where, "--checks", "firewall")
    found = rules(report)
    assert found["status"] == "skip", found
    assert "needs root" in found["message"] and "--sudo" in found["remedy"], found
    assert code == exit_codes.OK and report["verdict"] in ("pass", "warn", "skip"), report["findings"]


def test_node_sudo_runs_the_root_probes_under_sudo() -> None:
    if os.geteuid() != 0 or not shutil.which("sudo"):
        pytest.skip("needs root and sudo")
    proc = subprocess.run([sys.executable, "-m", "preflight", "node", "--checks", "firewall", "--sudo", "--json"],
                          capture_output=True, text=True, timeout=120, check=False)
    report = json.loads(proc.stdout)
    sudo = next(f for f in report["findings"] if f["check"] == "ssh.sudo")
    assert sudo["status"] == "pass" and sudo["observed"] == "root", sudo
    assert rules(report)["status"] in ("pass", "warn"), rules(report)
