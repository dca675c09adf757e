"""Scale: the default checks on a 64-node namespace cluster; every host gets a result, within a minute."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import cluster_fixture
from netns_cluster import NetnsCluster

pytestmark = pytest.mark.cluster

SIZE = 64


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=SIZE, name="pfscale64", subnet=52)


def test_default_checks_on_64_hosts(cluster: NetnsCluster, tmp_path: Path) -> None:
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml")
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json",
                           "--report-dir", str(tmp_path / "report")], capture_output=True, text=True, timeout=120)
    seconds = time.monotonic() - start
    report = json.loads(proc.stdout)
    assert proc.returncode in (0, 1, 4), proc.stderr
    assert report["complete"] is True
    names = [n.name for n in cluster.nodes]
    assert [h["name"] for h in report["hosts"]] == names
    assert all(h["reachable"] for h in report["hosts"]), [h for h in report["hosts"] if not h["reachable"]]
    connect = {f["host"]: f["status"] for f in report["findings"] if f["check"] == "ssh.connect"}
    assert connect == dict.fromkeys(names, "pass")
    # Every host has a finding from every default family that ran (the hosts x checks matrix is full).
    families = {f["check"].split(".")[0] for f in report["findings"] if f["host"]} - {"ssh"}
    for family in families:
        covered = {f["host"] for f in report["findings"] if f["check"].split(".")[0] == family}
        assert covered >= set(names), (family, sorted(set(names) - covered))
    assert {"versions", "sysctl", "net"} <= families
    reach = {f["host"]: f["status"] for f in report["findings"] if f["check"].startswith("net.reachability")}
    assert set(reach) >= set(names) and "error" not in reach.values(), reach
    assert seconds < 60, seconds
