"""History on the namespace cluster (issue 42): a node whose somaxconn is toggled on alternate runs is reported
as flapping by ``preflight history``, with its lemon score; its steady neighbour is neither; under
``--drain-after 3/5`` a node failing 4 of 5 runs is recommended, a toggled one never, and a hard fault (a GPU
lost, a fatal Xid; simulated nvidia-smi and a real kernel log, tests/gpu_sim.py) at its first fail, its Xids
said new or seen before."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runner import preflight
from conftest import cluster_fixture
from gpu_sim import XID_LOG, fake_kernel_log, healthy_state, install, real_kernel_log, uninstall, write_state
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


# A kernel log without Xid (the first two lines of gpud's real dmesg -T) and one with a benign Xid (gpud#1174's
# verbatim NVLink5 Xid 145 Nonfatal: the catalog says IGNORE).
CLEAN_LOG = "".join(XID_LOG.read_text().splitlines(keepends=True)[:2])
BENIGN_LOG = ("NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008 "
              "0x00000001 0x00000000 0x00100000 0x00000004)\n")


def test_a_hard_fault_is_recommended_at_once(cluster: NetnsCluster, tmp_path: Path) -> None:
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"accelerator": "gpu", "devices_per_host": 2})
    store = tmp_path / "history.sqlite"
    (tmp_path / "clean.log").write_text(CLEAN_LOG)
    (tmp_path / "benign.log").write_text(BENIGN_LOG)

    def run(i: int) -> tuple[int, dict[str, Any]]:
        done = preflight("run", "--hosts", hosts, "--checks", "gpu.devices,gpu.xid", "--json", "--report-dir",
                         tmp_path / f"r{i}", "--history", store, "--drain-after", "3/5")
        assert "history not" not in done.stderr, done.stderr
        return done.returncode, json.loads(done.stdout)

    def failing(report: dict[str, Any]) -> set[tuple[str, str]]:
        return {(f["check"], f["host"]) for f in report["findings"] if f["status"] == "fail"}

    try:
        for k, node in enumerate(("node1", "node2"), start=1):
            install(cluster, node, healthy_state(2, node=k))
        fake_kernel_log(cluster, "node1", tmp_path / "benign.log")  # passes: never a reason to drain
        fake_kernel_log(cluster, "node2", tmp_path / "clean.log")
        code, report = run(0)
        assert (code, failing(report)) == (0, set()), report["findings"]

        lost = healthy_state(2, node=2)
        lost["gpus"].pop()  # node2's GPU 1 is gone: nvidia-smi lists one
        write_state(cluster, "node2", lost)
        code, report = run(1)  # the first fail of node2, 1 of 2 runs: a hard fault does not wait for 3
        assert code == 1 and failing(report) == {("gpu.devices.count", "node2")}
        drain = report["drain"]
        assert (drain["hard"], drain["held"], drain["recommend_drain"]) == (["node2"], [], ["node2"])
        notes = [f["message"] for f in report["findings"] if f["check"] == "preflight.drain_policy"]
        assert notes == ["preflight.drain_policy: node2: drained at once, a hard fault (gpu.devices.count) "
                         "(--drain-after 3/5)"]

        write_state(cluster, "node2", healthy_state(2, node=2))
        fake_kernel_log(cluster, "node2", XID_LOG)  # five Xid 119 (GSP RPC timeout): reset the GPU
        for i in (2, 3):  # new in the first run that reads them, seen before in the next: a hard fault in both
            code, report = run(i)
            assert code == 1 and failing(report) == {("gpu.xid.errors", "node2")}
            assert (report["drain"]["hard"], report["drain"]["recommend_drain"]) == (["node2"], ["node2"])
            xid = {f["host"]: f for f in report["findings"] if f["check"] == "gpu.xid.errors"}
            said = "new: Xid 119 on 0000:9b:00 x5" if i == 2 else "seen before, nothing new: Xid 119 on 0000:9b:00 x5"
            assert said in xid["node2"]["message"], xid["node2"]["message"]
            assert xid["node1"]["status"] == "pass" and "Xid 145" in xid["node1"]["message"]
            assert "seen before, nothing new: Xid 145 Nonfatal on 0018:01:00 x1" in xid["node1"]["message"]
    finally:
        for node in ("node1", "node2"):
            uninstall(cluster, node)
            real_kernel_log(cluster, node)
