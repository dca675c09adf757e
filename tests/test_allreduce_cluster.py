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
    assert proc.returncode in (0, 1, 4), proc.stderr
    findings = [f for f in json.loads(proc.stdout)["findings"] if f["check"].startswith("allreduce.")]
    return proc.returncode, findings, time.monotonic() - start


def bad(findings: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    return sorted((f["check"], f["host"], f.get("peer")) for f in findings if f["status"] not in ("pass", "skip"))


def test_healthy_cluster_passes_three_times(cluster: NetnsCluster, tmp_path: Path) -> None:
    for attempt in range(3):
        code, findings, _ = run(cluster, tmp_path / str(attempt))
        # On this loaded box a pair may be slow once while other pairs run; measured again alone it is
        # normal: that is the documented warn ("slow once, normal alone"), never a fail.
        transient = [f for f in findings if f["status"] == "warn" and "normal alone" in f["message"]]
        assert bad([f for f in findings if f not in transient]) == [], \
            [f["message"] for f in findings if f["status"] != "pass"]
        assert code == 0
        passes = {(f["check"], f["host"]) for f in findings if f["status"] == "pass" and f["check"] != "allreduce.pair"}
        assert passes == {(c, f"node{i}") for c in ("allreduce.busbw", "allreduce.correct", "allreduce.run")
                          for i in range(1, 5)}
        pairs = [f for f in findings if f["check"] == "allreduce.pair"] + transient
        assert len({frozenset((f["host"], f["peer"])) for f in pairs}) == len(pairs) == 6
        assert all(f["status"] in ("pass", "warn") and f["busbw_gbps"] > 0 and f["algbw_gbps"] > 0 and f["bytes"] > 0
                   for f in pairs)


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
    fails = [f for f in findings if f["status"] == "fail"]
    assert code == (1 if fails else 4), "an error and no fail: could not tell (4); 1 only with a fail"
    errors = [f for f in findings if f["status"] == "error"]
    assert [(f["check"], {f["host"], f["peer"]}) for f in errors] == \
        [("allreduce.run", {"node2", "node4"})], [f["message"] for f in errors]
    assert "did not complete" in errors[0]["message"]
    assert seconds < 90
    # The other five pairs completed and carry their figures (on 2 shared cores a pair may still come out
    # slow against the median: that is judged by allreduce.busbw, not an error).
    measured = {frozenset((f["host"], f["peer"])) for f in findings
                if f.get("busbw_gbps") is not None and f.get("peer")}
    all_pairs = {frozenset((f"node{a}", f"node{b}")) for a in range(1, 5) for b in range(a + 1, 5)}
    assert measured == all_pairs - {frozenset(("node2", "node4"))}


def test_two_slots_per_host_run_intra_and_inter_pairs(cluster: NetnsCluster, tmp_path: Path) -> None:
    code, findings, _ = run(cluster, tmp_path, nodes=2, devices=2)
    assert code == 0 and bad(findings) == [], [f["message"] for f in findings]
    busbw = [f for f in findings if f["check"] == "allreduce.busbw"]
    assert sorted(f["host"] for f in busbw) == ["node1", "node2"]
    # per host: 2 inter pairs (slot k <-> slot k) + 1 intra pair (slot 0 <-> slot 1)
    assert all(f["message"].startswith(f"allreduce.busbw: 3 pairs of {f['host']} ok") for f in busbw)
    assert all("every local device pair" in f["message"] for f in busbw)


def test_bench_allreduce_lists_every_pair(cluster: NetnsCluster, tmp_path: Path) -> None:
    import yaml

    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", nodes=cluster.nodes[:4])
    doc = yaml.safe_load(hosts.read_text())
    doc["checks"] = {"allreduce": PARAMS}
    hosts.write_text(yaml.safe_dump(doc, sort_keys=False))
    proc = subprocess.run([sys.executable, "-m", "preflight", "bench", "allreduce", "--hosts", str(hosts),
                           "--report-dir", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = proc.stdout[proc.stdout.index("all_reduce pairs"):]
    rows = [line.replace("│", " ").split() for line in table.splitlines()[3:] if "│" in line]
    assert {frozenset((r[0], r[2])) for r in rows} == {frozenset((f"node{a}", f"node{b}"))
                                                      for a in range(1, 5) for b in range(a + 1, 5)}
    assert len(rows) == 6 and all(r[1] == r[3] == "0" and r[-1] == "pass" for r in rows), table
    assert all(int(r[4]) > 0 and float(r[5]) > 0 and float(r[6]) > 0 for r in rows), table
    assert "all_reduce busbw (GB/s)" in proc.stdout  # the hosts x hosts matrix of the terminal report
