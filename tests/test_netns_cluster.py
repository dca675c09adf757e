"""Smoke test of the network-namespace SSH cluster, driven through the real OpenSSH client."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import require_cluster_support
from netns_cluster import ASCEND_MOUNTPOINT, NetnsCluster, Node

pytestmark = pytest.mark.cluster

NAME = "pfsmoke"
SUBNET = 250
SCRIPT = Path(__file__).resolve().parent / "netns_cluster.py"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    require_cluster_support()
    c = NetnsCluster(3, name=NAME, subnet=SUBNET, workdir=tmp_path_factory.mktemp(NAME))
    c.up()
    try:
        yield c
    finally:
        c.down()
        assert_gone(c)


def ssh(cluster: NetnsCluster, node: Node | str, command: str) -> subprocess.CompletedProcess[str]:
    """Run ``command`` on ``node`` with strict host key checking; never raises."""
    node = cluster.node(node) if isinstance(node, str) else node
    argv = ["ssh", "-F", "/dev/null", "-i", str(cluster.client_key), "-o", "IdentitiesOnly=yes",
            "-o", f"UserKnownHostsFile={cluster.known_hosts}", "-o", "GlobalKnownHostsFile=/dev/null",
            "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5",
            f"root@{node.address}", command]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)


def ssh_ok(cluster: NetnsCluster, node: Node | str, command: str) -> str:
    """Run ``command`` on ``node``, assert success, return stripped stdout."""
    proc = ssh(cluster, node, command)
    assert proc.returncode == 0, f"ssh {command!r} failed ({proc.returncode}): {proc.stderr}"
    return proc.stdout.strip()


def mounted_in_root_namespace(path: Path) -> bool:
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == str(path) for line in f)


def assert_gone(cluster: NetnsCluster) -> None:
    """No namespace, link, /etc/netns dir or sshd of ``cluster`` remains."""
    name = cluster.name
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True).stdout
    assert f"{name}-" not in netns, netns
    assert f"{name}-" not in links, links
    assert not list(Path("/etc/netns").glob(f"{name}-*"))
    sshds = subprocess.run(["pgrep", "-af", f"{cluster.workdir}/node"], capture_output=True, text=True, check=False)
    assert sshds.stdout == "", sshds.stdout


def test_each_node_has_its_own_hostname(cluster: NetnsCluster) -> None:
    for node in cluster.nodes:
        assert ssh_ok(cluster, node, "hostname; cat /etc/hostname").split() == [node.name, node.name]


def test_nodes_reach_each_other_by_name(cluster: NetnsCluster) -> None:
    probe = "import socket; socket.create_connection(('node2', 22), 3).close(); print('ok')"
    assert ssh_ok(cluster, "node1", f'{sys.executable} -c "{probe}"') == "ok"


def test_sysctl_is_per_node(cluster: NetnsCluster) -> None:
    key = "net.core.somaxconn"
    for node in cluster.nodes:
        assert ssh_ok(cluster, node, f"sysctl -n {key}") == "65535"
    cluster.sysctl("node2", key, "128")
    try:
        assert ssh_ok(cluster, "node2", f"sysctl -n {key}") == "128"
        assert ssh_ok(cluster, "node1", f"sysctl -n {key}") == "65535"
    finally:
        cluster.sysctl("node2", key, "65535")


def test_ascend_root_is_per_node_and_does_not_leak(cluster: NetnsCluster) -> None:
    marker = cluster.ascend_root("node1") / "driver-version.info"
    marker.write_text("smoke\n")
    try:
        assert ssh_ok(cluster, "node1", f"cat {ASCEND_MOUNTPOINT}/driver-version.info") == "smoke"
        assert ssh_ok(cluster, "node2", f"ls -A {ASCEND_MOUNTPOINT}") == ""
        assert not (ASCEND_MOUNTPOINT / marker.name).exists()
        assert not mounted_in_root_namespace(ASCEND_MOUNTPOINT)
    finally:
        marker.unlink()


def test_set_etc_file_reaches_new_sessions(cluster: NetnsCluster) -> None:
    hosts_file = Path("/etc/netns") / cluster.node("node1").netns / "hosts"
    original = hosts_file.read_text()
    inode = hosts_file.stat().st_ino
    assert "extrahost" not in ssh_ok(cluster, "node1", "cat /etc/hosts")
    cluster.set_etc_file("node1", "hosts", original + "10.213.250.99 extrahost\n")
    try:
        assert hosts_file.stat().st_ino == inode
        assert ssh_ok(cluster, "node1", "getent hosts extrahost").split() == ["10.213.250.99", "extrahost"]
        assert "extrahost" not in ssh_ok(cluster, "node2", "cat /etc/hosts")
        assert "extrahost" not in Path("/etc/hosts").read_text()
    finally:
        cluster.set_etc_file("node1", "hosts", original)
    assert "extrahost" not in ssh_ok(cluster, "node1", "cat /etc/hosts")


def test_stop_and_start_sshd(cluster: NetnsCluster) -> None:
    cluster.stop_sshd("node3")
    try:
        refused = ssh(cluster, "node3", "true")
        assert refused.returncode == 255
        assert "Connection refused" in refused.stderr
        assert ssh_ok(cluster, "node2", "hostname") == "node2"
    finally:
        cluster.start_sshd("node3")
    assert ssh_ok(cluster, "node3", "hostname") == "node3"


def test_rotated_host_key_is_refused_until_restored(cluster: NetnsCluster) -> None:
    cluster.rotate_host_key("node3")
    try:
        refused = ssh(cluster, "node3", "true")
        assert refused.returncode == 255
        assert "Host key verification failed" in refused.stderr
    finally:
        cluster.restore_host_key("node3")
    assert ssh_ok(cluster, "node3", "hostname") == "node3"


def test_hosts_yaml(cluster: NetnsCluster, tmp_path: Path) -> None:
    import yaml

    path = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", nodes=cluster.nodes[:2],
                                    cluster={"devices_per_host": 8}, extra_defaults={"connect_timeout": 3})
    doc = yaml.safe_load(path.read_text())
    assert doc["defaults"]["identity_file"] == str(cluster.client_key)
    assert doc["defaults"]["known_hosts"] == str(cluster.known_hosts)
    assert doc["defaults"]["connect_timeout"] == 3
    assert doc["cluster"] == {"accelerator": "cpu", "devices_per_host": 8}
    assert doc["hosts"] == [{"name": "node1", "address": "10.213.250.11"},
                            {"name": "node2", "address": "10.213.250.12"}]


def test_up_replaces_leftovers_of_another_run(cluster: NetnsCluster) -> None:
    """A second, smaller cluster with the same name takes over; the old object can still tear it down."""
    other = NetnsCluster(2, name=cluster.name, subnet=cluster.subnet, workdir=cluster.workdir).up()
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    assert sorted(line.split()[0] for line in netns.splitlines() if line.startswith(f"{NAME}-")) == [
        f"{NAME}-node1", f"{NAME}-node2"]
    assert ssh_ok(other, "node2", "hostname") == "node2"
    stale = subprocess.run(["pgrep", "-af", f"{cluster.workdir}/node3/"], capture_output=True, text=True, check=False)
    assert stale.stdout == ""


def test_down_removes_everything(cluster: NetnsCluster) -> None:
    cluster.down()
    assert_gone(cluster)
    cluster.down()  # idempotent


def test_script_up_and_down(tmp_path: Path) -> None:
    require_cluster_support()
    c = NetnsCluster(2, name="pfsmokecli", subnet=251, workdir=tmp_path)
    where = ["--name", c.name, "--workdir", str(tmp_path)]
    up = subprocess.run([sys.executable, str(SCRIPT), "up", "--size", "2", "--subnet", "251", *where],
                        capture_output=True, text=True, timeout=60, check=False)
    try:
        assert up.returncode == 0, up.stderr
        hosts = tmp_path / "hosts.yaml"
        assert f"preflight run --hosts {hosts}" in up.stdout
        assert hosts.exists()
        assert ssh_ok(c, "node2", "hostname") == "node2"
    finally:
        down = subprocess.run([sys.executable, str(SCRIPT), "down", *where],
                              capture_output=True, text=True, timeout=60, check=False)
    assert down.returncode == 0, down.stderr
    assert_gone(c)
