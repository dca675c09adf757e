"""allreduce on the namespace cluster: gloo on CPU torch between 4 nodes, healthy, throttled, firewalled."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import cluster_fixture
from netns_cluster import NetnsCluster

pytestmark = pytest.mark.cluster

# 2 cores run 4 ranks at once here: CPU contention makes healthy pairs differ by up to ~30%, so the test
# uses fraction 0.5 (the 50 Mbit throttle is ~100x slower, far below either).
PARAMS = {"sizes_mib": [1, 4], "warmup": 1, "iters": 3, "trials": 5, "budget_s": 3.0,
          "init_timeout_s": 6.0, "fraction": 0.5}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=4, name="pfar", subnet=17)


def run(cluster: NetnsCluster, tmp_path: Path, nodes: int = 4, devices: int = 1,
        **params: Any) -> tuple[int, list[dict[str, Any]], float]:
    import yaml

    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", nodes=cluster.nodes[:nodes],
                                     cluster={"devices_per_host": devices})
    doc = yaml.safe_load(hosts.read_text())
    doc["checks"] = {"allreduce": {**PARAMS, **params}}
    hosts.write_text(yaml.safe_dump(doc, sort_keys=False))
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json",
                           "--checks", "allreduce", "--report-dir", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    findings = [f for f in json.loads(proc.stdout)["findings"] if f["check"].startswith("allreduce.")]
    return proc.returncode, findings, time.monotonic() - start


def bad(findings: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    return sorted((f["check"], f["host"], f.get("peer")) for f in findings if f["status"] not in ("pass", "skip"))


def test_healthy_cluster_passes_three_times(cluster: NetnsCluster, tmp_path: Path) -> None:
    for attempt in range(3):
        code, findings, _ = run(cluster, tmp_path / str(attempt))
        assert bad(findings) == [], [f["message"] for f in findings if f["status"] != "pass"]
        assert code == 0
        passes = {(f["check"], f["host"]) for f in findings if f["status"] == "pass"}
        assert passes == {(c, f"node{i}") for c in ("allreduce.busbw", "allreduce.correct", "allreduce.run")
                          for i in range(1, 5)}


def test_throttled_host_is_the_suspect(cluster: NetnsCluster, tmp_path: Path) -> None:
    cluster.exec("node3", ["tc", "qdisc", "add", "dev", "eth0", "root", "tbf", "rate", "50mbit",
                           "burst", "32kbit", "latency", "400ms"])
    try:
        code, findings, seconds = run(cluster, tmp_path)
    finally:
        cluster.exec("node3", ["tc", "qdisc", "del", "dev", "eth0", "root"])
    assert code == 1
    fails = [f for f in findings if f["status"] == "fail"]
    assert {f["host"] for f in fails} == {"node3"}, [f["message"] for f in fails]
    suspect = [f for f in fails if f.get("peer") is None]
    assert len(suspect) == 1 and "slow with every partner" in suspect[0]["message"]
    assert sorted(f["peer"] for f in fails if f.get("peer")) == ["node1", "node2", "node4"]
    assert all("caused by suspect host node3" in f["message"] and "GB/s" in f["observed"]
               for f in fails if f.get("peer"))
    assert not [f for f in findings if f["status"] == "error"]


def test_blocked_pair_is_an_error_and_the_others_complete(cluster: NetnsCluster, tmp_path: Path) -> None:
    source = cluster.node("node4").address
    cluster.exec("node2", ["iptables", "-A", "INPUT", "-p", "tcp", "-s", source, "-j", "DROP"])
    try:
        code, findings, seconds = run(cluster, tmp_path)
    finally:
        cluster.exec("node2", ["iptables", "-F", "INPUT"])
    assert code == 1
    errors = [f for f in findings if f["status"] not in ("pass", "skip")]
    assert [(f["check"], f["status"], {f["host"], f["peer"]}) for f in errors] == \
        [("allreduce.run", "error", {"node2", "node4"})], [f["message"] for f in errors]
    assert "did not complete" in errors[0]["message"]
    assert seconds < 90
    busbw = {f["host"] for f in findings if f["check"] == "allreduce.busbw" and f["status"] == "pass"}
    assert busbw == {"node1", "node2", "node3", "node4"}


def test_two_slots_per_host_run_intra_and_inter_pairs(cluster: NetnsCluster, tmp_path: Path) -> None:
    code, findings, _ = run(cluster, tmp_path, nodes=2, devices=2)
    assert code == 0 and bad(findings) == [], [f["message"] for f in findings]
    busbw = [f for f in findings if f["check"] == "allreduce.busbw"]
    assert sorted(f["host"] for f in busbw) == ["node1", "node2"]
    # per host: 2 inter pairs (slot k <-> slot k) + 1 intra pair (slot 0 <-> slot 1)
    assert all(f["message"].startswith(f"allreduce.busbw: 3 pairs of {f['host']} ok") for f in busbw)
    assert all("every local device pair" in f["message"] for f in busbw)
