"""npu checks end to end: simulated ``npu-smi`` (tests/sim) in each node's private /usr/local/Ascend.

Each case sets per-node simulator state (tests/ascend_sim.py), runs ``preflight run --checks npu`` over SSH
and asserts exactly which host gets which status; the simulators are removed again afterwards.
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
from ascend_sim import TORCH_NPU_SIM, healthy_state, install, install_toolkit, tools_dir, uninstall, uninstall_toolkit
from cli_runner import by_host, not_passing
from conftest import cluster_fixture
from netns_cluster import NetnsCluster

pytestmark = pytest.mark.cluster

NODES = ["node1", "node2", "node3", "node4"]
IDS = ("npu.smi", "npu.count", "npu.chip", "npu.health", "npu.processes")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=4, name="pfnpu", subnet=12)


@pytest.fixture
def clean(cluster: NetnsCluster) -> Iterator[NetnsCluster]:
    """The cluster with no simulated Ascend software, also after the test."""
    for node in NODES:
        uninstall(cluster, node)
    try:
        yield cluster
    finally:
        for node in NODES:
            uninstall(cluster, node)


def state(chip: str, node: int) -> dict[str, Any]:
    return healthy_state(chip, [f"192.168.{node}.{10 + i}" for i in range(8)])


def run(cluster: NetnsCluster, tmp_path: Path, accelerator: str = "npu",
        checks: str = ",".join(IDS)) -> tuple[int, dict[str, Any], Path]:
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml",
                                     cluster={"accelerator": accelerator, "devices_per_host": 8})
    record = tmp_path / "record"
    proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json", "--checks",
                           checks, "--report-dir", str(tmp_path / "report"), "--record", str(record)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode in (0, 1, 4), proc.stderr
    return proc.returncode, json.loads(proc.stdout), record


@pytest.mark.parametrize(("chip", "generation"), [("910B3", "A2"), ("910ProB", "910A")])
def test_healthy_cluster_passes(clean: NetnsCluster, tmp_path: Path, chip: str, generation: str) -> None:
    for index, node in enumerate(NODES):
        install(clean, node, state(chip, index))
    code, report, record = run(clean, tmp_path)
    assert code == 0, not_passing(report)
    assert not_passing(report) == set()
    for check in IDS:
        assert sorted(by_host(report, check)) == NODES, check
    assert "node2 has 910" in by_host(report, "npu.chip")["node2"]["message"]
    facts = json.loads((record / "npu" / "parse" / "node3.json").read_text())["facts"]
    assert (facts["chip"], facts["generation"], facts["total_count"]) == (chip, generation, 8)
    assert facts["tool"] == "/usr/local/Ascend/driver/tools/npu-smi", "found off PATH, in the driver's folder"


def test_each_fault_is_attributed_to_its_host(clean: NetnsCluster, tmp_path: Path) -> None:
    alarm = state("910B3", 0)
    alarm["devices"][3]["health"] = "Alarm"
    stale = state("910B3", 1)
    stale["devices"][5]["processes"] = [{"pid": 31337, "name": "python3", "memory_mb": 30933}]
    short = state("910B3", 2)
    short["devices"].pop(7)
    for node, node_state in zip(NODES, (alarm, stale, short, state("910B3", 3)), strict=True):
        install(clean, node, node_state)
    (tools_dir(clean, "node4") / "npu-smi").unlink()

    code, report, _ = run(clean, tmp_path)
    assert code == 1
    assert not_passing(report) == {("npu.health", "node1", "fail"), ("npu.processes", "node2", "fail"),
                                   ("npu.count", "node3", "fail"), ("npu.smi", "node4", "error")}
    health = by_host(report, "npu.health")["node1"]
    assert "device 3: Alarm" in health["message"] and health["device"] == 3
    procs = by_host(report, "npu.processes")["node2"]
    assert "pid 31337 (python3, 30933 MB) on device 5" in procs["message"] and "EJ0001" in procs["message"]
    assert procs["remedy"].endswith("kill 31337") and procs["device"] == 5
    count = by_host(report, "npu.count")["node3"]
    assert "node3 has 7 NPUs, devices_per_host is 8; missing device ids: 7" in count["message"]
    missing = [f for f in report["findings"] if f["host"] == "node4" and f["check"].startswith("npu.")]
    assert len(missing) == 1, "a host without npu-smi is reported once"
    assert "npu-smi not found on node4" in missing[0]["message"]
    assert "/usr/local/Ascend/driver/tools/npu-smi" in missing[0]["message"]


def test_driver_not_loaded_is_an_error(clean: NetnsCluster, tmp_path: Path) -> None:
    for index, node in enumerate(NODES):
        install(clean, node, state("910B3", index))
    (tools_dir(clean, "node2") / "sim_state.json").unlink()  # the simulator then fails like an unloaded driver
    code, report, _ = run(clean, tmp_path)
    assert code == 4
    assert not_passing(report) == {("npu.smi", "node2", "error")}
    assert "dcmi module initialize failed" in by_host(report, "npu.smi")["node2"]["message"]


def test_not_an_npu_cluster_is_one_skip(clean: NetnsCluster, tmp_path: Path) -> None:
    code, report, _ = run(clean, tmp_path, accelerator="gpu", checks="npu")  # the family's default checks
    assert code == 0
    npu = [f for f in report["findings"] if f["check"].startswith("npu.")]
    assert sorted((f["check"], f["host"], f["status"]) for f in npu) == [
        ("npu.devices", None, "skip"), ("npu.env", None, "skip"), ("npu.firmware", None, "skip")], \
        "npu.torch only when named"


def test_hccl_env_read_from_the_jobs_shell(clean: NetnsCluster, tmp_path: Path) -> None:
    """No HCCL variable: pass everywhere; then node2 copies HCCL_CONNECT_TIMEOUT=12000 (outside [120, 7200]),
    node3 another HCCL_IF_BASE_PORT, node4's setup: turns the whitelist on without a file."""
    hosts = clean.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"accelerator": "npu", "devices_per_host": 8})

    def run_hccl(out: Path) -> tuple[int, dict[str, Any]]:
        proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json", "--checks",
                               "hccl", "--report-dir", str(out)], capture_output=True, text=True, timeout=120,
                              check=False)
        assert proc.returncode in (0, 1, 4), proc.stderr
        return proc.returncode, json.loads(proc.stdout)

    code, report = run_hccl(tmp_path / "healthy")
    assert code == 0 and not_passing(report) == set(), not_passing(report)
    assert set(by_host(report, "hccl.env")) == set(NODES)
    doc = yaml.safe_load(hosts.read_text())
    doc["hosts"][1]["env"] = {"HCCL_CONNECT_TIMEOUT": "12000"}
    doc["hosts"][2]["env"] = {"HCCL_IF_BASE_PORT": "61000"}
    doc["hosts"][3]["setup"] = ["export HCCL_WHITELIST_DISABLE=0"]
    hosts.write_text(yaml.safe_dump(doc, sort_keys=False))
    code, report = run_hccl(tmp_path / "faults")
    assert code == 1
    assert not_passing(report) == {("hccl.env", "node2", "fail"), ("hccl.env", "node4", "fail"),
                                   ("hccl.env_consistency", "node3", "fail")}
    found = by_host(report, "hccl.env")
    assert found["node2"]["observed"] == "HCCL_CONNECT_TIMEOUT=12000 is outside [120, 7200] s"
    assert found["node2"]["remedy"].startswith("export HCCL_CONNECT_TIMEOUT=7200")
    assert "HCCL_WHITELIST_FILE is unset" in found["node4"]["observed"]
    assert by_host(report, "hccl.env_consistency")["node3"]["expected"] == "HCCL_IF_BASE_PORT unset"


def test_npu_env_and_torch_import_in_the_jobs_shell(clean: NetnsCluster, tmp_path: Path) -> None:
    """CANN on nodes 1-3 (the default setup: sources its set_env.sh), none on node4; node3's npu-smi lists 4 NPUs:
    npu.env fails on node4 only; the smoke import (npu.torch, through the simulated torch_npu) fails there with
    torch_npu's own ImportError, and on node3 with the device count."""
    for index, node in enumerate(NODES):
        devices = 4 if node == "node3" else 8
        install(clean, node, healthy_state("910B3", [f"192.168.{index}.{10 + i}" for i in range(devices)]))
        if node != "node4":
            install_toolkit(clean, node)
    hosts = clean.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"accelerator": "npu", "devices_per_host": 8},
                                   extra_defaults={"env": {"PYTHONPATH": str(TORCH_NPU_SIM)}})
    try:
        proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json", "--checks",
                               "npu.env,npu.torch", "--report-dir", str(tmp_path / "r"), "--record",
                               str(tmp_path / "record")], capture_output=True, text=True, timeout=180, check=False)
    finally:
        for node in NODES:
            uninstall_toolkit(clean, node)
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert not_passing(report) == {("npu.env", "node4", "fail"), ("npu.torch", "node4", "fail"),
                                   ("npu.torch", "node3", "fail")}
    env = by_host(report, "npu.env")
    assert "sourced /usr/local/Ascend/ascend-toolkit/set_env.sh" in env["node1"]["message"]
    assert "ASCEND_HOME_PATH unset" in env["node4"]["observed"] and "libhccl.so not found" in env["node4"]["observed"]
    torch = by_host(report, "npu.torch")
    assert torch["node4"]["observed"].startswith("ImportError: libhccl.so: cannot open shared object file")
    assert "set_env.sh" in torch["node4"]["remedy"]
    assert torch["node3"]["observed"] == "device_count 4" and torch["node1"]["message"].endswith("8 NPUs visible")


def test_npu_firmware_pairing_and_drift(clean: NetnsCluster, tmp_path: Path) -> None:
    """Board pages of every NPU (npu-smi info -t board): one firmware everywhere passes; node2 on another firmware
    warns (drift), node4 with one NPU left behind by an upgrade warns."""
    for index, node in enumerate(NODES):
        built = state("910B3", index)
        if node == "node2":
            built["firmware"] = "7.1.0.6.220"
        if node == "node4":
            built["devices"][5]["firmware"] = "7.1.0.6.220"
        install(clean, node, built)
    code, report, _ = run(clean, tmp_path, checks="npu.firmware")
    assert code == 0, not_passing(report)
    assert not_passing(report) == {("npu.firmware", "node2", "warn"), ("npu.firmware", "node4", "warn")}
    found = by_host(report, "npu.firmware")
    assert found["node1"]["message"] == ("npu.firmware: 8 NPUs on node1: firmware 7.1.0.7.220, driver 23.0.5, "
                                         "compatible")
    assert found["node2"]["observed"] == "7.1.0.6.220" and found["node2"]["expected"] == "7.1.0.7.220"
    assert "7.1.0.6.220 on NPU 5; 7.1.0.7.220 on NPU 0, 1, 2, 3, 4, 6, 7" in found["node4"]["message"]
