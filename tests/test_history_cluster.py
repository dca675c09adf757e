"""History on the namespace cluster (issue 42): a node whose somaxconn is toggled on alternate runs is reported
as flapping by ``preflight history``, with its lemon score; its steady neighbour is neither."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import preflight
from conftest import cluster_fixture
from netns_cluster import NetnsCluster

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=2, name="pfhist", subnet=142)


def test_toggled_somaxconn_flaps(cluster: NetnsCluster, tmp_path: Path) -> None:
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml")
    store = tmp_path / "history.sqlite"
    codes = []
    try:
        for i in range(5):
            cluster.sysctl("node2", "net.core.somaxconn", "64" if i % 2 == 0 else "65535")
            done = preflight("run", "--hosts", hosts, "--checks", "sysctl", "--json", "--report-dir",
                             tmp_path / f"r{i}", "--history", store)
            assert "history not recorded" not in done.stderr, done.stderr
            report = json.loads(done.stdout)
            somaxconn = {f["host"]: f["status"] for f in report["findings"] if f["check"] == "sysctl.somaxconn"}
            assert somaxconn == {"node1": "pass", "node2": "fail" if i % 2 == 0 else "pass"}, somaxconn
            codes.append(done.returncode)
    finally:
        cluster.sysctl("node2", "net.core.somaxconn", "65535")
    assert codes == [1, 0, 1, 0, 1]

    done = preflight("history", "--history", store, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["runs"] == 5
    by_host = {h["host"]: h for h in data["hosts"]}
    assert [h["host"] for h in data["hosts"]] == ["node2", "node1"]  # the lemon first
    node2, node1 = by_host["node2"], by_host["node1"]
    assert node2["flapping"] == [{"finding": "sysctl.somaxconn", "changes": 4,
                                  "statuses": ["fail", "pass", "fail", "pass", "fail"]}]
    assert (node2["lemon"]["runs"], node2["lemon"]["failed_runs"]) == (5, 3) and node2["lemon"]["score"] > 0.5
    assert [(e["finding"], e["status"], e["observed"]) for e in node2["timeline"]] == [
        ("sysctl.somaxconn", "fail", "64")] * 3
    assert node1["flapping"] == [] and node1["lemon"]["score"] == 0.0 and node1["lemon"]["runs"] == 5

    terminal = preflight("history", "node2", "--history", store, "--since", "1h")
    assert terminal.returncode == 0, terminal.stderr
    assert "FLAPPING sysctl.somaxconn: fail pass fail pass fail (4 changes)" in terminal.stdout
    assert "node1" not in terminal.stdout


@pytest.mark.parametrize(("pattern", "codes", "drained", "flapping"), [
    ("FFPFF", [6, 6, 0, 1, 1], ["node2"], []),  # 4 of 5 runs under 3/5: recommended for drain
    ("FPFPF", [6, 0, 6, 0, 6], [], ["sysctl.somaxconn"]),  # toggled: flapping, held, never drained
], ids=["4-of-5", "flapping"])
def test_drain_after(cluster: NetnsCluster, tmp_path: Path, pattern: str, codes: list[int], drained: list[str],
                     flapping: list[str]) -> None:
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml")
    store = tmp_path / "history.sqlite"
    got, last = [], {}
    try:
        for i, mark in enumerate(pattern):
            cluster.sysctl("node2", "net.core.somaxconn", "64" if mark == "F" else "65535")
            done = preflight("run", "--hosts", hosts, "--checks", "sysctl", "--json", "--report-dir",
                             tmp_path / f"r{i}", "--history", store, "--drain-after", "3/5")
            last = json.loads(done.stdout)
            got.append(done.returncode)
    finally:
        cluster.sysctl("node2", "net.core.somaxconn", "65535")
    assert got == codes
    drain = last["drain"]
    assert drain["drain_after"] == "3/5" and drain["recommend_drain"] == drained
    assert [f["finding"] for f in drain["flapping"]] == flapping and drain["hard"] == []
    notes = [f["message"] for f in last["findings"] if f["check"] == "preflight.drain_policy"]
    assert len(notes) == 1 and "--drain-after 3/5" in notes[0] and notes[0].count("node2") == 1
