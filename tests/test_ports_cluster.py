"""ports (and sysctl.port_range) end to end: real reserved-port sysctls, real listeners, real CANN installs.

A 4-node npu cluster: CANN 8.0.0 on node1-3 (16 HCCL ports), 8.5.0 on node4 (32 ports), the HCCL
ports reserved on each node in its own network namespace. Each test breaks one thing on one node
and checks that exactly that node is blamed; everything is put back afterwards.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from cli_runner import by_host
from conftest import cluster_fixture
from netns_cluster import NetnsCluster

pytestmark = pytest.mark.cluster

NODES = ("node1", "node2", "node3", "node4")
RESERVED = "net.ipv4.ip_local_reserved_ports"
PORT_RANGE = "net.ipv4.ip_local_port_range"
HEALTHY_RESERVED = {"node1": "60000-60015", "node2": "60000-60015", "node3": "60000-60015", "node4": "60000-60031"}
CANN = {"node1": "8.0.0", "node2": "8.0.0", "node3": "8.0.0", "node4": "8.5.0"}

# A stray process holding a port; it renames itself so the finding can be checked for its name.
LISTENER = r"""
import socket, sys, time
open("/proc/self/comm", "w").write("pfholder")
address, port = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET)
s.bind((address, port))
s.listen()
print("ready", flush=True)
time.sleep(120)
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=4, name="pfport", subnet=5)


def sysctl_get(cluster: NetnsCluster, node: str, key: str) -> str:
    return cluster.exec(node, ["sysctl", "-n", key]).stdout.strip()


@pytest.fixture(scope="module")
def npu(cluster: NetnsCluster) -> Iterator[NetnsCluster]:
    """The healthy npu state: CANN installed per node and the HCCL ports reserved."""
    saved = {n: sysctl_get(cluster, n, RESERVED) for n in NODES}
    try:
        for node in NODES:
            info = cluster.ascend_root(node) / "ascend-toolkit" / "latest" / "x86_64-linux"
            info.mkdir(parents=True, exist_ok=True)
            (info / "ascend_toolkit_install.info").write_text(
                f"package_name=Ascend-cann-toolkit\nversion={CANN[node]}\narch=x86_64\nos=linux\n")
            cluster.sysctl(node, RESERVED, HEALTHY_RESERVED[node])
        yield cluster
    finally:
        for node in NODES:
            shutil.rmtree(cluster.ascend_root(node) / "ascend-toolkit", ignore_errors=True)
            cluster.sysctl(node, RESERVED, saved[node])


@pytest.fixture
def hosts_file(npu: NetnsCluster, tmp_path: Path) -> Path:
    return npu.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"accelerator": "npu", "devices_per_host": 8})


@contextmanager
def changed_sysctl(cluster: NetnsCluster, node: str, key: str, value: str) -> Iterator[None]:
    saved = sysctl_get(cluster, node, key)
    cluster.sysctl(node, key, value)
    try:
        yield
    finally:
        cluster.sysctl(node, key, saved)


@contextmanager
def listener(cluster: NetnsCluster, node: str, address: str, port: int) -> Iterator[int]:
    """A process listening on address:port inside the node's namespace; yields its pid."""
    proc = subprocess.Popen(["ip", "netns", "exec", cluster.node(node).netns, sys.executable, "-c", LISTENER,
                             address, str(port)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield proc.pid  # `ip netns exec` execs python in place: same pid
    finally:
        proc.kill()
        proc.wait()


@contextmanager
def without_ss(cluster: NetnsCluster, node: str) -> Iterator[None]:
    """Hide ss from the node's SSH sessions (a bind mount in its sshd's private mount namespace only)."""
    sshd = str(cluster._pids[node])
    cluster.exec(node, ["nsenter", "-t", sshd, "-m", "mount", "--bind", "/dev/null", "/usr/bin/ss"])
    try:
        yield
    finally:
        cluster.exec(node, ["nsenter", "-t", sshd, "-m", "umount", "/usr/bin/ss"])


def run_json(hosts: Path, tmp_path: Path, checks: str = "ports,sysctl") -> tuple[int, dict[str, Any]]:
    proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json",
                           "--report-dir", str(tmp_path / "report"), "--checks", checks],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode != 2, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def statuses(report: dict[str, Any], check: str) -> dict[str | None, str]:
    return {f["host"]: f["status"] for f in report["findings"] if f["check"] == check}


def problems(report: dict[str, Any]) -> set[tuple[str, str | None, str]]:
    return {(f["check"], f["host"], f["status"]) for f in report["findings"]
            if f["status"] in ("warn", "fail", "error")}


def test_healthy_npu_cluster_passes(hosts_file: Path, tmp_path: Path) -> None:
    code, report = run_json(hosts_file, tmp_path)
    assert code == 0, problems(report)
    assert problems(report) == set()
    all_pass = dict.fromkeys(NODES, "pass")
    assert statuses(report, "ports.reserved") == all_pass
    assert statuses(report, "ports.listening") == all_pass
    assert statuses(report, "sysctl.port_range") == all_pass
    reserved = by_host(report, "ports.reserved")
    assert reserved["node1"]["expected"] == "60000-60015 reserved" and "CANN 8.0.0" in reserved["node1"]["message"]
    assert reserved["node4"]["expected"] == "60000-60031 reserved"
    assert "32 ports for CANN 8.5.0" in reserved["node4"]["message"]
    assert by_host(report, "ports.listening")["node1"]["expected"] == (
        "master port 29500 free; HCCL ports 60000-60015 free")
    assert not any(f["check"].startswith("versions") for f in report["findings"]), "needed, not reported"


def test_missing_reservation_fails_on_that_host_alone(npu: NetnsCluster, hosts_file: Path, tmp_path: Path) -> None:
    with changed_sysctl(npu, "node3", RESERVED, "61000"):
        code, report = run_json(hosts_file, tmp_path)
    assert code == 1
    assert problems(report) == {("ports.reserved", "node3", "fail"), ("sysctl.port_range", "node3", "warn")}
    bad = by_host(report, "ports.reserved")["node3"]
    assert bad["observed"] == "61000" and bad["expected"] == "60000-60015 reserved"
    assert "60000-60015 missing" in bad["message"] and "16 ports for CANN 8.0.0" in bad["message"]
    # the kernel replaces the whole list: the remedy keeps what was reserved before
    assert bad["remedy"].startswith(f"sysctl -w {RESERVED}=60000-60015,61000 ")
    warn = by_host(report, "sysctl.port_range")["node3"]
    assert "HCCL ports 60000-60015" in warn["message"] and "32768-60999" in warn["message"]


def test_cann_85_host_needs_32_ports(npu: NetnsCluster, hosts_file: Path, tmp_path: Path) -> None:
    with changed_sysctl(npu, "node4", RESERVED, "60000-60015"):
        code, report = run_json(hosts_file, tmp_path, "ports")
    assert code == 1
    assert problems(report) == {("ports.reserved", "node4", "fail")}
    bad = by_host(report, "ports.reserved")["node4"]
    assert "60016-60031 missing" in bad["message"]
    assert "32 ports for CANN 8.5.0 (the docs say 32 from CANN 8.2.RC1 on)" in bad["message"]
    assert bad["expected"] == "60000-60031 reserved" and f"{RESERVED}=60000-60031 " in bad["remedy"]


def test_base_port_from_hosts_env(npu: NetnsCluster, tmp_path: Path) -> None:
    hosts = npu.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"accelerator": "npu", "devices_per_host": 8},
                                 extra_defaults={"env": {"HCCL_IF_BASE_PORT": "50000"}})
    code, report = run_json(hosts, tmp_path, "ports")
    assert code == 1
    assert statuses(report, "ports.reserved") == dict.fromkeys(NODES, "fail")
    assert statuses(report, "ports.listening") == dict.fromkeys(NODES, "pass")
    reserved = by_host(report, "ports.reserved")
    assert reserved["node2"]["expected"] == "50000-50015 reserved"
    assert reserved["node4"]["expected"] == "50000-50031 reserved"
    assert f"{RESERVED}=50000-50015,60000-60015 " in reserved["node2"]["remedy"]


def test_host_socket_port_range_from_hosts_env(npu: NetnsCluster, tmp_path: Path) -> None:
    """HCCL_HOST_SOCKET_PORT_RANGE overrides HCCL_IF_BASE_PORT from CANN 8.1.RC1 on (node4, 8.5.0), not before.

    (60100-60103 lies inside the default ephemeral range 32768-60999, so it needs the reservation.)"""
    hosts = npu.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"accelerator": "npu", "devices_per_host": 8},
                                 extra_defaults={"env": {"HCCL_HOST_SOCKET_PORT_RANGE": "60100-60103"}})
    code, report = run_json(hosts, tmp_path, "ports")
    assert problems(report) == {("ports.reserved", "node4", "fail")}
    bad = by_host(report, "ports.reserved")["node4"]
    assert "60100-60103 missing (HCCL_HOST_SOCKET_PORT_RANGE=60100-60103)" in bad["message"]
    assert "ignored before CANN 8.1.RC1" in by_host(report, "ports.reserved")["node1"]["message"]
    with changed_sysctl(npu, "node4", RESERVED, "60100-60103"):
        code, report = run_json(hosts, tmp_path, "ports")
        assert code == 0 and problems(report) == set()
        with listener(npu, "node4", "0.0.0.0", 60102):
            code, report = run_json(hosts, tmp_path, "ports")
    assert problems(report) == {("ports.listening", "node4", "fail")}
    assert by_host(report, "ports.listening")["node4"]["observed"].startswith("HCCL port 60102 is held by pfholder")


def test_hccl_ports_outside_the_ephemeral_range_need_no_reservation(npu: NetnsCluster, hosts_file: Path,
                                                                   tmp_path: Path) -> None:
    with changed_sysctl(npu, "node4", PORT_RANGE, "32768 59999"), changed_sysctl(npu, "node4", RESERVED, ""):
        code, report = run_json(hosts_file, tmp_path)
    assert code == 0 and problems(report) == set()
    passed = by_host(report, "ports.reserved")["node4"]
    assert "60000-60031 not reserved but outside net.ipv4.ip_local_port_range (32768-59999)" in passed["message"]


def test_master_port_listener_fails_naming_the_process(npu: NetnsCluster, hosts_file: Path,
                                                       tmp_path: Path) -> None:
    with listener(npu, "node1", "0.0.0.0", 29500) as pid:
        code, report = run_json(hosts_file, tmp_path, "ports")
    assert code == 1
    assert problems(report) == {("ports.listening", "node1", "fail")}
    bad = by_host(report, "ports.listening")["node1"]
    assert bad["observed"] == f"master port 29500 is held by pfholder (pid {pid}) on 0.0.0.0"
    assert bad["remedy"].startswith(f"kill {pid} ")


def test_hccl_port_listener_fails_on_that_host(npu: NetnsCluster, hosts_file: Path, tmp_path: Path) -> None:
    with listener(npu, "node2", "::", 60003), listener(npu, "node3", "127.0.0.1", 60020):
        code, report = run_json(hosts_file, tmp_path, "ports")
    assert code == 1
    # node3's 60020 is outside its 16 HCCL ports (CANN 8.0.0): no false positive there
    assert problems(report) == {("ports.listening", "node2", "fail")}
    bad = by_host(report, "ports.listening")["node2"]
    assert bad["observed"].startswith("HCCL port 60003 is held by pfholder (pid ")
    assert "HCCL_IF_BASE_PORT" in bad["remedy"]


def test_without_ss_the_listener_is_found_in_proc(npu: NetnsCluster, hosts_file: Path, tmp_path: Path) -> None:
    with without_ss(npu, "node4"), listener(npu, "node4", "::", 60031):
        code, report = run_json(hosts_file, tmp_path, "ports")
    assert shutil.which("ss") and Path("/usr/bin/ss").stat().st_size > 0, "ss untouched outside the node"
    assert code == 1
    assert problems(report) == {("ports.listening", "node4", "fail")}
    bad = by_host(report, "ports.listening")["node4"]
    assert "HCCL port 60031" in bad["observed"] and "ss not installed" in bad["observed"]
    assert bad["remedy"].startswith("ss -ltnp '( sport = :60031 )'")


def test_master_port_inside_the_ephemeral_range_warns(npu: NetnsCluster, hosts_file: Path,
                                                      tmp_path: Path) -> None:
    with changed_sysctl(npu, "node1", PORT_RANGE, "1024 65000"):
        code, report = run_json(hosts_file, tmp_path, "sysctl")
    assert code == 0, "a warning"
    assert problems(report) == {("sysctl.port_range", "node1", "warn")}
    warn = by_host(report, "sysctl.port_range")["node1"]
    assert warn["message"].startswith(f"sysctl.port_range: master port 29500 inside {PORT_RANGE} (1024-65000)")
    assert f"{RESERVED}=29500,60000-60015 " in warn["remedy"]
    assert statuses(report, "sysctl.somaxconn") == dict.fromkeys(NODES, "pass")


def test_process_names_are_read_only_when_a_job_port_is_held(npu: NetnsCluster) -> None:
    """``ss -p`` scans every process; the probe pays for it only when one of its ports is taken."""
    from preflight.checks.ports import listening_command, parse_ss

    def listeners(ports: list[int]) -> dict[int, list[str]]:
        out = npu.exec("node2", ["sh", "-c", listening_command(ports)])
        assert out.returncode == 0 and not out.stdout.startswith("=="), out.stdout
        return {item["port"]: [p["name"] for p in item["processes"]] for item in parse_ss(out.stdout)}

    with listener(npu, "node2", "0.0.0.0", 41000):
        free_job_ports = listeners([29500, 60000])
        held_job_port = listeners([41000])
    assert free_job_ports[41000] == [], "listed, without the cost of naming it"
    assert held_job_port[41000] == ["pfholder"]
    assert 22 in free_job_ports and 22 in held_job_port, "every listener is listed either way"


def test_only_hosts_with_a_job_port_list_their_sockets(cluster: NetnsCluster, tmp_path: Path) -> None:
    """On a cpu cluster only the master binds a job port; a listener on 29500 elsewhere is no one's concern."""
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"accelerator": "cpu", "devices_per_host": 1})
    with listener(cluster, "node3", "0.0.0.0", 29500):
        code, report = run_json(hosts, tmp_path, "ports")
    assert code == 0
    assert statuses(report, "ports.listening") == {"node1": "pass", "node2": "skip", "node3": "skip",
                                                   "node4": "skip"}
    assert statuses(report, "ports.reserved") == {None: "skip"}
