"""net.names end to end over SSH on a 3-node namespace cluster: each node's own /etc/hosts (its /etc/netns file).

Healthy: every node resolves every other to its address; then node2 lacks node3's line and node3 has a stale
address for node1: each named on its own host, with the /etc/hosts lines that fix it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import cluster_fixture
from netns_cluster import NetnsCluster

pytestmark = pytest.mark.cluster

NODES = ("node1", "node2", "node3")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=3, name="pfnames", subnet=200)


def run(cluster: NetnsCluster, tmp_path: Path, checks: str, *, cluster_spec: dict[str, Any] | None = None,
        setups: dict[str, list[str]] | None = None, env: dict[str, dict[str, str]] | None = None,
        ) -> tuple[int, dict[str, Any]]:
    """Exit code and JSON report of `preflight run --checks CHECKS` on the cluster."""
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", cluster=cluster_spec)
    doc = yaml.safe_load(hosts.read_text())
    for entry in doc["hosts"]:
        if setups and entry["name"] in setups:
            entry["setup"] = setups[entry["name"]]
        if env and entry["name"] in env:
            entry["env"] = env[entry["name"]]
    hosts.write_text(yaml.safe_dump(doc, sort_keys=False))
    proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json",
                           "--report-dir", str(tmp_path / "report"), "--checks", checks],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode in (0, 1, 4), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def by_host(report: dict[str, Any], check: str) -> dict[str, dict[str, Any]]:
    return {f["host"]: f for f in report["findings"] if f["check"] == check}


def statuses(report: dict[str, Any], check: str) -> dict[str, str]:
    return {host: f["status"] for host, f in by_host(report, check).items()}


def hosts_file(cluster: NetnsCluster, overrides: dict[str, str | None]) -> str:
    """/etc/hosts naming every node at its address, with ``overrides`` (name -> address, None: left out)."""
    lines = ["127.0.0.1\tlocalhost"]
    for node in cluster.nodes:
        address = overrides.get(node.name, node.address)
        if address is not None:
            lines.append(f"{address}\t{node.name}")
    return "\n".join(lines) + "\n"


def test_names_stale_or_missing_hosts_line_is_named_on_its_host(cluster: NetnsCluster, tmp_path: Path) -> None:
    for node in NODES:
        cluster.set_etc_file(node, "hosts", hosts_file(cluster, {}))
    try:
        code, report = run(cluster, tmp_path / "healthy", "net.names")
        assert code == 0 and statuses(report, "net.names") == dict.fromkeys(NODES, "pass")
        assert f"node2 -> {cluster.node('node2').address}" in by_host(report, "net.names")["node1"]["observed"]
        # node2: no line for node3; node3: a stale line for node1 (an address no node has).
        cluster.set_etc_file("node2", "hosts", hosts_file(cluster, {"node3": None}))
        cluster.set_etc_file("node3", "hosts", hosts_file(cluster, {"node1": "10.213.200.99"}))
        code, report = run(cluster, tmp_path / "fault", "net.names")
    finally:
        for node in NODES:
            cluster.set_etc_file(node, "hosts", hosts_file(cluster, {}))
    assert code == 1
    assert statuses(report, "net.names") == {"node1": "pass", "node2": "fail", "node3": "fail"}
    found = by_host(report, "net.names")
    assert "node3 does not resolve" in found["node2"]["observed"]
    assert f"node1 -> 10.213.200.99, not {cluster.node('node1').address}" in found["node3"]["observed"]
    assert f"{cluster.node('node1').address} node1" in found["node3"]["remedy"]
