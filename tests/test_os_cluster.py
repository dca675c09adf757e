"""os checks end to end over SSH on a namespace cluster.

The nodes share this machine's memory, disks and clock, but each node's sshd has its own mount
namespace and resource limits: a container-sized /dev/shm is a tmpfs mounted in one node's namespace,
a low locked-memory limit is set on one node's sshd (new sessions inherit it). Shared resources are
judged with thresholds from hosts.yaml (``checks: os: {...}``) to force a verdict on every host.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
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

IDS = ("os.shm", "os.memlock", "os.clock", "os.memory", "os.disk", "os.files")
NODES = ("node1", "node2", "node3")
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=3, name="pfos", subnet=8)


def hosts_yaml(cluster: NetnsCluster, path: Path, accelerator: str = "cpu",
               params: dict[str, Any] | None = None) -> Path:
    cluster.write_hosts_yaml(path, cluster={"accelerator": accelerator})
    if params:
        doc = yaml.safe_load(path.read_text())
        doc["checks"] = {"os": params}
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def run_os(hosts: Path, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json",
                           "--report-dir", str(tmp_path / "report"), "--checks", "os"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode in (0, 1, 4), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def statuses(report: dict[str, Any], check: str) -> dict[str, str]:
    return {f["host"]: f["status"] for f in report["findings"] if f["check"] == check}


def sshd_pid(cluster: NetnsCluster, node: str) -> int:
    """The node's listening sshd: new sessions fork from it, so they share its mounts and limits."""
    out = subprocess.run(["ip", "netns", "pids", cluster.node(node).netns], capture_output=True, text=True,
                         check=True).stdout.split()
    pids = [int(p) for p in out if b"sshd" in Path(f"/proc/{p}/cmdline").read_bytes()]
    assert pids, f"no sshd in {node}"
    return min(pids)


def memlock(pid: int) -> tuple[int, int]:
    return resource.prlimit(pid, resource.RLIMIT_MEMLOCK)


def nofile(pid: int) -> tuple[int, int]:
    return resource.prlimit(pid, resource.RLIMIT_NOFILE)


def test_healthy_cluster_has_no_false_positive(cluster: NetnsCluster, tmp_path: Path) -> None:
    code, report = run_os(hosts_yaml(cluster, tmp_path / "hosts.yaml"), tmp_path)
    bad = {(f["check"], f["host"], f["status"]) for f in report["findings"] if f["status"] in ("fail", "error")}
    assert code == 0 and bad == set()
    for check in ("os.shm", "os.clock", "os.disk", "os.files"):
        assert statuses(report, check) == dict.fromkeys(NODES, "pass"), check
    assert statuses(report, "os.time") == dict.fromkeys(NODES, "skip")  # no systemd, no chronyd: cannot tell
    assert statuses(report, "os.memlock") == dict.fromkeys(NODES, "skip")  # cpu cluster: no RDMA
    assert set(statuses(report, "os.memory")) == set(NODES)
    clock = [f for f in report["findings"] if f["check"] == "os.clock"]
    assert all(abs(float(f["observed"].split()[0])) <= 1.0 for f in clock)  # one kernel clock: no real skew


def test_container_shm_and_low_memlock_are_attributed_to_their_hosts(cluster: NetnsCluster, tmp_path: Path) -> None:
    shm_pid, lock_pid = sshd_pid(cluster, "node2"), sshd_pid(cluster, "node3")
    saved = {pid: memlock(pid) for pid in (sshd_pid(cluster, n) for n in NODES)}
    mounted = False
    try:
        for pid, (soft, hard) in saved.items():  # a reference the other hosts meet: at least 2 MiB
            if soft != resource.RLIM_INFINITY and soft < 2 * MIB:
                resource.prlimit(pid, resource.RLIMIT_MEMLOCK, (2 * MIB, max(hard, 2 * MIB)))
        resource.prlimit(lock_pid, resource.RLIMIT_MEMLOCK, (64 * 1024, memlock(lock_pid)[1]))
        subprocess.run(["nsenter", "-t", str(shm_pid), "-m", "mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs",
                        "/dev/shm"], check=True)
        mounted = True
        hosts = hosts_yaml(cluster, tmp_path / "hosts.yaml", accelerator="gpu", params={"min_memlock_mib": 1})
        code, report = run_os(hosts, tmp_path)
    finally:
        if mounted:
            subprocess.run(["nsenter", "-t", str(shm_pid), "-m", "umount", "/dev/shm"], check=True)
        for pid, limits in saved.items():
            resource.prlimit(pid, resource.RLIMIT_MEMLOCK, limits)
    assert code == 1
    assert statuses(report, "os.shm") == {"node1": "pass", "node2": "fail", "node3": "pass"}
    assert statuses(report, "os.memlock") == {"node1": "pass", "node2": "pass", "node3": "warn"}
    shm = next(f for f in report["findings"] if f["check"] == "os.shm" and f["host"] == "node2")
    assert shm["observed"].startswith("64 MiB") and "--shm-size=1g" in shm["remedy"]
    lock = next(f for f in report["findings"] if f["check"] == "os.memlock" and f["host"] == "node3")
    assert lock["observed"].startswith("64 KiB") and lock["expected"] == ">= 1 MiB"


def test_thresholds_from_hosts_yaml_judge_every_host(cluster: NetnsCluster, tmp_path: Path) -> None:
    params = {"warn_disk_free_gib": 1 << 30, "min_mem_available_mib": 1 << 40, "min_shm_mib": 1 << 30}
    code, report = run_os(hosts_yaml(cluster, tmp_path / "hosts.yaml", params=params), tmp_path)
    assert code == 1
    assert statuses(report, "os.disk") == dict.fromkeys(NODES, "warn")
    assert statuses(report, "os.memory") == dict.fromkeys(NODES, "fail")
    assert statuses(report, "os.shm") == dict.fromkeys(NODES, "warn")  # cpu: a small /dev/shm only warns
    assert statuses(report, "os.clock") == dict.fromkeys(NODES, "pass")
    memory = [f for f in report["findings"] if f["check"] == "os.memory"]
    assert all(f["host"] in f["message"] and f["remedy"] for f in memory)


def test_open_files_limit_of_the_jobs_shell(cluster: NetnsCluster, tmp_path: Path) -> None:
    """node2: a low soft limit (its sshd's) that the job's setup: raises: fail without the line, pass with it;
    node3: a setup: line that lowers the hard limit too (as a site profile can), which no job can raise."""
    pid = sshd_pid(cluster, "node2")
    saved = nofile(pid)
    hosts = hosts_yaml(cluster, tmp_path / "hosts.yaml")
    doc = yaml.safe_load(hosts.read_text())
    doc["hosts"][2]["setup"] = ["ulimit -n 512"]
    hosts.write_text(yaml.safe_dump(doc, sort_keys=False))
    try:
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (512, saved[1]))  # the soft limit only: it can be restored
        code, report = run_os(hosts, tmp_path / "plain")
        doc["hosts"][1]["setup"] = ['ulimit -n "$(ulimit -Hn)"']  # node2: what goodfire-ai/spd PR #957 adds
        hosts.write_text(yaml.safe_dump(doc, sort_keys=False))
        raised_code, raised = run_os(hosts, tmp_path / "raised")
    finally:
        resource.prlimit(pid, resource.RLIMIT_NOFILE, saved)
    assert code == raised_code == 1
    assert statuses(report, "os.files") == {"node1": "pass", "node2": "fail", "node3": "fail"}
    assert statuses(raised, "os.files") == {"node1": "pass", "node2": "pass", "node3": "fail"}
    found = {f["host"]: f for f in report["findings"] if f["check"] == "os.files"}
    hard = "unlimited" if saved[1] == resource.RLIM_INFINITY else saved[1]
    assert found["node2"]["observed"] == f"soft 512, hard {hard}" and found["node2"]["expected"] == "soft >= 1024"
    assert found["node2"]["remedy"].startswith('ulimit -n "$(ulimit -Hn)"')
    assert "limits.d" in found["node3"]["remedy"] and "hard limit 512" in found["node3"]["message"]


def start_chronyd(cluster: NetnsCluster, node: str, config: str) -> None:
    """A real chronyd in the node's network and mount namespaces; -x: it never touches the (shared) clock."""
    script = ('mkdir -p /run/chrony && mount -t tmpfs -o size=1m tmpfs /run/chrony && '
              'printf "%s\\n" "$PF_CONF" > /run/chrony/test.conf && chronyd -x -u root -f /run/chrony/test.conf')
    subprocess.run(["nsenter", "-t", str(sshd_pid(cluster, node)), "-m", "-n", "sh", "-c", script], check=True,
                   env={**os.environ, "PF_CONF": config})


def stop_chronyd(cluster: NetnsCluster, node: str) -> None:
    script = ('[ -f /run/chrony/chronyd.pid ] && kill "$(cat /run/chrony/chronyd.pid)"; '
              "while [ -f /run/chrony/chronyd.pid ]; do sleep 0.1; done; umount /run/chrony; rmdir /run/chrony || true")
    subprocess.run(["nsenter", "-t", str(sshd_pid(cluster, node)), "-m", "-n", "sh", "-c", script], check=False,
                   timeout=30)


@pytest.mark.skipif(shutil.which("chronyd") is None, reason="chrony is not installed (.ci/run installs it)")
def test_time_sync_read_from_a_real_chronyd(cluster: NetnsCluster, tmp_path: Path) -> None:
    """node2: chronyd on its local reference (synchronised); node3: chronyd whose only server never answers
    (192.0.2.1, TEST-NET-1: Not synchronised); node1: no chronyd (cannot tell)."""
    started = []
    try:
        for node, config in (("node2", "local stratum 8\nport 0"), ("node3", "server 192.0.2.1 iburst\nport 0")):
            start_chronyd(cluster, node, config)
            started.append(node)
        code, report = run_os(hosts_yaml(cluster, tmp_path / "hosts.yaml"), tmp_path)
    finally:
        for node in started:
            stop_chronyd(cluster, node)
    assert code == 0  # a warning alone does not fail the run
    assert statuses(report, "os.time") == {"node1": "skip", "node2": "pass", "node3": "warn"}
    found = {f["host"]: f for f in report["findings"] if f["check"] == "os.time"}
    assert "Not synchronised" in found["node3"]["observed"] and "chronyd" in found["node3"]["remedy"]
    assert found["node2"]["observed"].startswith("chronyc: Normal, stratum 8")
    assert "506 Cannot talk to daemon" in found["node1"]["observed"]
