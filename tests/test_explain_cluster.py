"""``preflight explain DIR --report`` on a launch broken live on the namespace cluster (the path the recordings in
tests/fixtures/explain/recorded_netns/ came from, kept real): the master port dropped by iptables on node1."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import cluster_fixture
from explain_recorder import record
from netns_cluster import NetnsCluster

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=2, name="pfexp", subnet=38)


def test_blocked_master_port_recorded_and_confirmed(cluster: NetnsCluster, tmp_path: Path) -> None:
    out = tmp_path / "blocked_port"
    record(cluster, "blocked_port", out, tmp_path / "work")
    assert "timed out after 30000ms while trying to connect to (node1, 29531)" in \
        (out / "logs" / "node2" / "console.log").read_text()
    proc = subprocess.run([sys.executable, "-m", "preflight", "explain", str(out / "logs"), "--report",
                           str(out / "report.json"), "--json"], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    best = json.loads(proc.stdout)["matches"][0]
    assert (best["category"], best["host"], best["status"]) == ("master-unreachable", "node2", "confirmed")
    confirmed = {(e["check"], e["host"]) for e in best["evidence"] if e["status"] == "confirmed"}
    assert confirmed == {("firewall.rules", "node1"), ("net.reachability", "node2")}
