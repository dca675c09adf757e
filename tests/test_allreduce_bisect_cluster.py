"""--bisect on the namespace cluster (issue 41): gloo on CPU torch over 8 nodes and real OpenSSH. One slow node
(tc on its link) named; two slow nodes and a hung rank (a node dropping every TCP port but ssh) named; a healthy
cluster names nobody; a uniformly shaped cluster is flagged against its interface speed (veth reports no line
rate: the hosts.yaml declares 1 Gb/s, ``nic_gbps``, docs/thresholds.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from conftest import cluster_fixture
from netns_cluster import NetnsCluster

pytestmark = pytest.mark.cluster

# 2 shared cores run up to 8 ranks at once: groups of one round differ by up to ~2x from CPU contention alone, so
# fraction 0.3; the 20 Mbit shaping is ~50x slower than a healthy group here, far below either.
PARAMS = {"sizes_mib": [1], "warmup": 1, "iters": 3, "trials": 3, "budget_s": 3.0, "init_timeout_s": 8.0,
          "fraction": 0.3}
SHAPE = ["tbf", "rate", "20mbit", "burst", "32kbit", "latency", "400ms"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=8, name="pfbis", subnet=21)


def bisect(cluster: NetnsCluster, tmp_path: Path, nodes: int = 8, switches: Mapping[str, str] | None = None,
           timeout: int = 400, **params: Any) -> tuple[int, list[dict[str, Any]]]:
    """``run --bisect --json`` over the first ``nodes`` nodes (each given its ``switch:`` from ``switches``, when
    given): (exit code, the allreduce findings)."""
    import yaml

    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", nodes=cluster.nodes[:nodes])
    doc = yaml.safe_load(hosts.read_text())
    if switches:
        doc["hosts"] = [{**h, "switch": switches[h["name"]]} for h in doc["hosts"]]
    doc["checks"] = {"allreduce": {**PARAMS, **params}}
    hosts.write_text(yaml.safe_dump(doc, sort_keys=False))
    proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json", "--bisect",
                           "--report-dir", str(tmp_path / "r")], capture_output=True, text=True, timeout=timeout,
                          check=False)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return proc.returncode, [f for f in json.loads(proc.stdout)["findings"] if f["check"].startswith("allreduce.")]


def named(findings: list[dict[str, Any]]) -> set[str]:
    return {f["host"] for f in findings if f["status"] == "fail" and f["check"] == "allreduce.busbw" and f["host"]}


def shaped(cluster: NetnsCluster, names: list[str]) -> None:
    for name in names:
        cluster.exec(name, ["tc", "qdisc", "add", "dev", "eth0", "root", *SHAPE])


def unshaped(cluster: NetnsCluster, names: list[str]) -> None:
    for name in names:
        cluster.exec(name, ["tc", "qdisc", "del", "dev", "eth0", "root"], check=False)


def test_healthy_cluster_names_nobody(cluster: NetnsCluster, tmp_path: Path) -> None:
    code, findings = bisect(cluster, tmp_path, nic_gbps=1.0)
    assert code == 0 and named(findings) == set(), [f["message"] for f in findings if f["status"] != "pass"]
    root = [f for f in findings if f["check"] == "allreduce.bisect" and f["round"] == 0]
    assert len(root) == 1 and root[0]["group"] == [f"node{i}" for i in range(1, 9)] and root[0]["expected_gbps"] > 0


def test_one_slow_node_is_named(cluster: NetnsCluster, tmp_path: Path) -> None:
    shaped(cluster, ["node3"])
    try:
        code, findings = bisect(cluster, tmp_path)  # no line rate known: the relative rule
    finally:
        unshaped(cluster, ["node3"])
    assert code == 1 and named(findings) == {"node3"}, [f["message"] for f in findings if f["status"] != "pass"]
    runs = [f for f in findings if f["check"] == "allreduce.bisect"]
    assert len(runs) <= 2 * 3 + 4
    why = next(f for f in findings if f["host"] == "node3" and f["status"] == "fail")
    assert "named by --bisect" in why["message"] and "before: round 0" in why["message"]


def test_two_slow_nodes_and_a_hung_rank_are_named(cluster: NetnsCluster, tmp_path: Path) -> None:
    shaped(cluster, ["node2", "node7"])
    cluster.exec("node5", ["iptables", "-A", "INPUT", "-p", "tcp", "!", "--dport", "22", "-j", "DROP"])
    try:
        code, findings = bisect(cluster, tmp_path, nic_gbps=1.0)
    finally:
        cluster.exec("node5", ["iptables", "-F", "INPUT"])
        unshaped(cluster, ["node2", "node7"])
    assert code == 1 and named(findings) == {"node2", "node5", "node7"}, \
        [f["message"] for f in findings if f["status"] != "pass"]
    hung = next(f for f in findings if f["host"] == "node5" and f["status"] == "fail")
    assert "its rank never arrived" in hung["message"]


def test_uniformly_shaped_cluster_is_flagged_against_the_interface_speed(cluster: NetnsCluster,
                                                                         tmp_path: Path) -> None:
    every = [f"node{i}" for i in range(1, 5)]
    shaped(cluster, every)
    try:
        code, findings = bisect(cluster, tmp_path, nodes=4, nic_gbps=1.0)  # expected 0.11 GB/s; shaped: 0.0025
    finally:
        unshaped(cluster, every)
    assert code == 1 and named(findings) == set()
    shared = [f for f in findings if f["status"] == "fail" and f["host"] is None]
    assert len(shared) == 1 and "a cause the hosts share" in shared[0]["message"], \
        [f["message"] for f in findings if f["status"] != "pass"]
