"""gpu.devices, gpu.fabric, gpu.pcie, gpu.xid, gpu.fabricmanager and nccl end to end on a 3-node gpu cluster
with simulated NVIDIA tools.

Each node gets the simulators (tests/gpu_sim.py: nvidia-smi, ibstat, ibv_devinfo) in its private
/usr/local/nvidia/bin; the rest is real node state: the locked-memory limit of the node's sshd (lowered with
prlimit, inherited by its sessions), /etc/nccl.conf (the node's /etc/netns file), the interfaces of its
network namespace and the env of hosts.yaml. This machine has no /dev/infiniband, so gpu.fabric.devices
fails on every node for real, and so does gpu.fabric.memlock while this machine's limit is not unlimited
(a container cannot raise it); the passing cases of both are covered by fixtures.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_runner import by_host, not_passing
from conftest import cluster_fixture
from gpu_sim import XID_LOG, bin_dir, fake_kernel_log, healthy_state, install, real_kernel_log, uninstall, write_state
from netns_cluster import NetnsCluster

pytestmark = pytest.mark.cluster

NODES = ["node1", "node2", "node3"]
GPUS = 2
# Real state of this machine, the same on every node: no /dev/infiniband, a memlock limit (unless unlimited).
MACHINE = {("gpu.fabric.devices", n, "fail") for n in NODES} | (
    set() if resource.getrlimit(resource.RLIMIT_MEMLOCK)[0] == resource.RLIM_INFINITY
    else {("gpu.fabric.memlock", n, "fail") for n in NODES}) | {
    ("gpu.fabricmanager.peermem", n, "skip") for n in NODES}  # no /sys/class/infiniband here either
ETC_NCCL = Path("/etc/nccl.conf")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    created = not ETC_NCCL.exists()
    if created:  # ip netns exec binds /etc/netns/<ns>/nccl.conf only over an existing /etc/nccl.conf
        ETC_NCCL.write_text("")
    try:
        yield from cluster_fixture(tmp_path_factory, size=3, name="pfgpu", subnet=100)
    finally:
        if created and ETC_NCCL.exists() and not ETC_NCCL.read_text().strip():
            ETC_NCCL.unlink()


def _memlock(cluster: NetnsCluster, node: str, value: str | None = None) -> str:
    """The node sshd's memlock limit ("soft:hard"), set to ``value`` first when given (its sessions inherit it)."""
    pid = str(cluster._pids[node])
    if value is not None:
        subprocess.run(["prlimit", "--pid", pid, f"--memlock={value}"], check=True)
    out = subprocess.run(["prlimit", "--pid", pid, "--memlock", "--raw", "--noheadings", "-o", "SOFT,HARD"],
                         check=True, capture_output=True, text=True).stdout.split()
    return f"{out[0]}:{out[1]}"


@pytest.fixture
def clean(cluster: NetnsCluster) -> Iterator[NetnsCluster]:
    """Healthy simulators and no nccl.conf on every node; the old state back afterwards."""
    for node in NODES:
        cluster.set_etc_file(node, "nccl.conf", "")  # first time: restarts the node's sshd (new bind mount)
    limits = {node: _memlock(cluster, node) for node in NODES}
    for k, node in enumerate(NODES, start=1):
        install(cluster, node, healthy_state(GPUS, node=k))
    try:
        yield cluster
    finally:
        for node in NODES:
            uninstall(cluster, node)
            real_kernel_log(cluster, node)
            cluster.unhide_binary(node, "/usr/bin/journalctl")
            cluster.set_etc_file(node, "nccl.conf", "")
            _memlock(cluster, node, limits[node])


def run(cluster: NetnsCluster, tmp_path: Path, accelerator: str = "gpu",
        env: dict[str, dict[str, str]] | None = None) -> tuple[int, dict[str, Any], Path]:
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={
        "accelerator": accelerator, "devices_per_host": GPUS, "master": "node1"})
    if env:
        doc = yaml.safe_load(hosts.read_text())
        for entry in doc["hosts"]:
            if entry["name"] in env:
                entry["env"] = env[entry["name"]]
        hosts.write_text(yaml.safe_dump(doc, sort_keys=False))
    record = tmp_path / "record"
    proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json",
                           "--checks", "gpu,nccl", "--report-dir", str(tmp_path / "report"), "--record", str(record)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode in (0, 1, 4), proc.stderr
    return proc.returncode, json.loads(proc.stdout), record


def test_healthy_cluster_passes(clean: NetnsCluster, tmp_path: Path) -> None:
    code, report, record = run(clean, tmp_path)
    assert code == 1  # only because of this machine's real state
    assert not_passing(report) == MACHINE
    for check in ("gpu.devices.smi", "gpu.devices.count", "gpu.devices.driver", "gpu.devices.ecc",
                  "gpu.devices.rows", "gpu.devices.persistence", "gpu.devices.processes", "gpu.devices.nvlink",
                  "gpu.fabric.ports", "gpu.fabric.link_layer", "gpu.fabric.rate", "gpu.fabric.memlock",
                  "gpu.pcie.link", "gpu.xid.errors", "gpu.fabricmanager.state", "nccl.socket_ifname", "nccl.ib_hca",
                  "nccl.debug", "nccl.conf", "nccl.visible_devices"):
        assert sorted(by_host(report, check)) == NODES, check
    assert "no /dev/infiniband" in by_host(report, "gpu.fabric.devices")["node2"]["message"]
    facts = json.loads((record / "gpu.devices" / "parse" / "node3.json").read_text())["facts"]
    assert facts["tool"] == "/usr/local/nvidia/bin/nvidia-smi", "found off PATH, in the toolkit's folder"
    assert facts["gpus"][1]["uuid"] == "GPU-00000003-0000-4000-8000-000000000001"
    assert facts["topology"]["rows"]["GPU0"]["GPU1"] == "NV18"
    assert facts["topology"]["nics"] == {"NIC0": "mlx5_0", "NIC1": "mlx5_1"}
    fabric = json.loads((record / "gpu.fabric" / "parse" / "node1.json").read_text())["facts"]
    assert [ca["name"] for ca in fabric["cas"]] == ["mlx5_0", "mlx5_1"]
    assert fabric["dev_files"] is None and fabric["sys_devices"] is None


def test_each_fault_is_named_on_its_host(clean: NetnsCluster, tmp_path: Path) -> None:
    short = healthy_state(GPUS, node=1)
    short["gpus"].pop()
    short["hcas"][1]["ports"][0].update(state="Down", physical="Polling")
    short["gpus"][0]["fabric"] = ["In Progress", "N/A"]  # nvidia-fabricmanager has not registered it: error 802
    short["gpus"][0]["pcie"] = {"width_current": 8}  # x8 now: warns (the idle gen 1 of every GPU is not judged)
    ecc = healthy_state(GPUS, node=2)
    ecc["gpus"][1]["ecc_volatile"] = 3
    ecc["gpus"][0]["nvlinks"] = [26.562] * 17 + [None]  # link 17 <inactive>; the other H100s have 18 up
    drift = healthy_state(GPUS, node=3, driver="580.95.05")
    drift["gpus"][1]["pcie"] = {"gen_max": 3}  # trained at gen3 though GPU and slot support gen5
    for node, state in zip(NODES, (short, ecc, drift), strict=True):
        write_state(clean, node, state)
    hard = _memlock(clean, "node2").split(":")[1]
    _memlock(clean, "node2", f"65536:{hard}")  # a lower soft limit (it can be raised again up to the hard one)
    clean.set_etc_file("node3", "nccl.conf", "# left from a debug session\nNCCL_P2P_DISABLE=1\n")
    fake_kernel_log(clean, "node2", XID_LOG)  # a real dmesg -T with Xid 119 (GSP RPC timeout)
    fake_kernel_log(clean, "node3", None)  # dmesg refused (dmesg_restrict) and no journalctl: not read, not failed
    clean.hide_binary("node3", "/usr/bin/journalctl")
    code, report, _ = run(clean, tmp_path, env={"node3": {"NCCL_SOCKET_IFNAME": "ib", "NCCL_IB_HCA": "=mlx5_7"}})
    assert code == 1
    assert not_passing(report) == MACHINE | {
        ("gpu.devices.count", "node1", "fail"), ("gpu.fabric.ports", "node1", "fail"),
        ("gpu.pcie.link", "node1", "warn"), ("gpu.pcie.link", "node3", "fail"),
        ("gpu.xid.errors", "node2", "fail"), ("gpu.xid.errors", "node3", "skip"),
        ("gpu.fabricmanager.state", "node1", "fail"),
        ("gpu.devices.ecc", "node2", "fail"), ("gpu.fabric.memlock", "node2", "fail"),
        ("gpu.devices.nvlink", "node2", "fail"),
        ("gpu.devices.driver", "node3", "warn"), ("nccl.socket_ifname", "node3", "fail"),
        ("nccl.ib_hca", "node3", "fail"), ("nccl.debug", "node3", "warn"), ("nccl.conf", "node3", "warn")}
    assert "node1 has 1 GPUs, devices_per_host is 2" in by_host(report, "gpu.devices.count")["node1"]["message"]
    assert "mlx5_1 port 1: Down" in by_host(report, "gpu.fabric.ports")["node1"]["message"]
    ecc_finding = by_host(report, "gpu.devices.ecc")["node2"]
    assert "GPU 1: 3 uncorrected" in ecc_finding["message"] and ecc_finding["device"] == 1
    nvlink = by_host(report, "gpu.devices.nvlink")["node2"]
    assert "GPU 0: 17 of 18 NVLinks up (down: 17)" in nvlink["message"] and nvlink["device"] == 0
    assert f"65536 bytes (hard {hard})" in by_host(report, "gpu.fabric.memlock")["node2"]["message"]
    assert "580.95.05" in by_host(report, "gpu.devices.driver")["node3"]["message"]
    assert "00000000:18:00.0: In Progress" in by_host(report, "gpu.fabricmanager.state")["node1"]["message"]
    xid = by_host(report, "gpu.xid.errors")
    assert "Xid 119 (GSP RPC Timeout) x5 on 0000:9b:00 over 5m55s" in xid["node2"]["message"]
    assert "read kernel buffer failed" in xid["node3"]["message"] and "--sudo" in xid["node3"]["remedy"]
    assert "00000000:18:00.0: x8 (GPU supports x16)" in by_host(report, "gpu.pcie.link")["node1"]["message"]
    pcie = by_host(report, "gpu.pcie.link")
    assert "00000000:28:00.0: gen3 max (GPU and slot support gen5)" in pcie["node3"]["message"]
    ifname = by_host(report, "nccl.socket_ifname")["node3"]
    assert "selects no interface (there are eth0, lo)" in ifname["message"] and "=eth0" in ifname["remedy"]
    assert "names mlx5_7" in by_host(report, "nccl.ib_hca")["node3"]["message"]
    assert "NCCL_P2P_DISABLE='1' (/etc/nccl.conf)" in by_host(report, "nccl.debug")["node3"]["message"]


def test_unused_down_ports_pass_and_a_named_one_fails(clean: NetnsCluster, tmp_path: Path) -> None:
    """Every host's mlx5_0 has a second port, Down (no cable): unused, not failed; named by NCCL_IB_HCA, failed."""
    for k, node in enumerate(NODES, start=1):
        state = healthy_state(GPUS, node=k)
        state["hcas"][0]["ports"].append({"port": 2, "state": "Down", "physical": "Disabled", "rate": 10,
                                          "link_layer": "InfiniBand", "lid": 0, "sm_lid": 0})
        write_state(clean, node, state)
    code, report, _ = run(clean, tmp_path)
    assert not_passing(report) == MACHINE
    assert "(down on every host: unused: mlx5_0 port 2: Down)" in by_host(report, "gpu.fabric.ports")["node3"][
        "message"]
    code, report, _ = run(clean, tmp_path, env={"node2": {"NCCL_IB_HCA": "=mlx5_0:2,mlx5_1:1"},
                                                "node3": {"NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1"}})
    assert not_passing(report) == MACHINE | {("gpu.fabric.ports", "node2", "fail")}
    failed = by_host(report, "gpu.fabric.ports")["node2"]
    assert "(mlx5_0 port 2: Down; named by NCCL_IB_HCA==mlx5_0:2,mlx5_1:1)" in failed["message"]


def test_driver_down_and_missing_tool_are_errors(clean: NetnsCluster, tmp_path: Path) -> None:
    down = healthy_state(GPUS, node=2)
    down["error"] = "driver"
    write_state(clean, "node2", down)
    (bin_dir(clean, "node3") / "nvidia-smi").unlink()
    code, report, _ = run(clean, tmp_path)
    assert code == 1
    assert not_passing(report) == MACHINE | {("gpu.devices.smi", "node2", "error"),
                                                       ("gpu.devices.smi", "node3", "error"),
                                                       ("gpu.pcie.link", "node2", "skip"),
                                                       ("gpu.pcie.link", "node3", "skip"),
                                                       ("gpu.fabricmanager.state", "node2", "skip"),
                                                       ("gpu.fabricmanager.state", "node3", "skip")}
    assert "couldn't communicate with the NVIDIA driver" in by_host(report, "gpu.devices.smi")["node2"]["message"]
    missing = [f for f in report["findings"] if f["host"] == "node3" and f["check"].startswith("gpu.devices")]
    assert by_host(report, "gpu.pcie.link")["node2"]["status"] == "skip", "the driver fault is reported once"
    assert by_host(report, "gpu.pcie.link")["node3"]["status"] == "skip"
    assert len(missing) == 1 and "nvidia-smi not found on node3" in missing[0]["message"]


def test_not_a_gpu_cluster_is_one_skip_each(clean: NetnsCluster, tmp_path: Path) -> None:
    code, report, _ = run(clean, tmp_path, accelerator="cpu")
    assert code == 0
    assert sorted((f["check"], f["host"], f["status"]) for f in report["findings"] if f["check"] != "ssh.connect") \
        == [("gpu.devices", None, "skip"), ("gpu.fabric", None, "skip"), ("gpu.fabricmanager", None, "skip"),
           ("gpu.pcie", None, "skip"),
           ("gpu.xid", None, "skip"), ("nccl", None, "skip")]
