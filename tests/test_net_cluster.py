"""net checks end to end: real /etc/hosts files, interfaces, MTUs and login environments in a namespace cluster.

Each case breaks one thing on one node (or all), runs ``preflight run --checks <net ids>`` over SSH and
asserts exactly which host gets which status; the state is always restored.
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
from cli_runner import by_host, not_passing
from conftest import cluster_fixture
from netns_cluster import NetnsCluster

pytestmark = pytest.mark.cluster

IDS = ("net.hostname", "net.master_resolution", "net.address_family", "net.interface", "net.mtu")
NODES = ("node1", "node2", "node3", "node4")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=4, name="pfnet", subnet=6)


def run_net(hosts: Path, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    """``preflight run --json`` limited to this module's check ids (not net.reachability)."""
    proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json",
                           "--report-dir", str(tmp_path / "report"), "--checks", ",".join(IDS)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode in (0, 1, 4), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def etc_hosts(cluster: NetnsCluster, override: dict[str, str] | None = None, own_loopback: str | None = None) -> str:
    """The cluster's /etc/hosts text; ``override`` maps names to other addresses; ``own_loopback`` is
    a node whose own line becomes Debian's ``127.0.1.1 <name>``."""
    lines = ["127.0.0.1 localhost"]
    if own_loopback:
        lines.append(f"127.0.1.1 {own_loopback}")
    lines.append("::1 localhost ip6-localhost ip6-loopback")
    for node in cluster.nodes:
        if node.name != own_loopback:
            lines.append(f"{(override or {}).get(node.name, node.address)} {node.name}")
    return "\n".join(lines) + "\n"


def with_host_env(path: Path, env_by_host: dict[str, dict[str, str]]) -> Path:
    """Give hosts of a written hosts.yaml their own ``env:``."""
    doc = yaml.safe_load(path.read_text())
    for entry in doc["hosts"]:
        if entry["name"] in env_by_host:
            entry["env"] = env_by_host[entry["name"]]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_healthy_cluster_has_no_false_positive(cluster: NetnsCluster, tmp_path: Path) -> None:
    for accelerator in ("cpu", "gpu"):
        hosts = cluster.write_hosts_yaml(tmp_path / f"{accelerator}.yaml", cluster={"accelerator": accelerator})
        code, report = run_net(hosts, tmp_path / accelerator)
        assert code == 0 and not_passing(report) == set(), not_passing(report)
        for check in IDS:
            assert set(by_host(report, check)) == set(NODES), check
    mtu = by_host(report, "net.mtu")
    assert all(f["observed"] == "eth0 mtu 1500" for f in mtu.values())
    assert "NCCL's own choice" in by_host(report, "net.interface")["node2"]["message"]
    assert by_host(report, "net.hostname")["node3"]["observed"] == "node3 -> 10.213.6.13"


def test_hostname_mapped_to_127_0_1_1_fails_on_that_host_only(cluster: NetnsCluster, tmp_path: Path) -> None:
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml")
    cluster.set_etc_file("node3", "hosts", etc_hosts(cluster, own_loopback="node3"))
    try:
        code, report = run_net(hosts, tmp_path)
    finally:
        cluster.set_etc_file("node3", "hosts", etc_hosts(cluster))
    assert code == 1
    assert not_passing(report) == {("net.hostname", "node3", "fail")}
    bad = by_host(report, "net.hostname")["node3"]
    assert bad["observed"] == "node3 -> 127.0.1.1" and "127.0.1.1" in bad["message"]
    assert "'10.213.6.13 node3' >> /etc/hosts" in bad["remedy"]


def test_master_resolving_elsewhere_fails_on_that_host_only(cluster: NetnsCluster, tmp_path: Path) -> None:
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml")
    cluster.set_etc_file("node4", "hosts", etc_hosts(cluster, override={"node1": "10.213.6.99"}))
    try:
        code, report = run_net(hosts, tmp_path)
    finally:
        cluster.set_etc_file("node4", "hosts", etc_hosts(cluster))
    assert code == 1
    assert not_passing(report) == {("net.master_resolution", "node4", "fail")}
    bad = by_host(report, "net.master_resolution")["node4"]
    assert bad["observed"] == "node1 -> 10.213.6.99" and bad["expected"] == "10.213.6.11"


def test_mtu_mismatch_on_the_nccl_interface_fails_on_that_host_only(cluster: NetnsCluster, tmp_path: Path) -> None:
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"accelerator": "gpu"},
                                     extra_defaults={"env": {"NCCL_SOCKET_IFNAME": "eth0"}})
    cluster.exec("node2", ["ip", "link", "set", "dev", "eth0", "mtu", "1400"])
    try:
        code, report = run_net(hosts, tmp_path)
    finally:
        cluster.exec("node2", ["ip", "link", "set", "dev", "eth0", "mtu", "1500"])
    assert code == 1
    assert not_passing(report) == {("net.mtu", "node2", "fail")}
    bad = by_host(report, "net.mtu")["node2"]
    assert (bad["observed"], bad["expected"]) == ("eth0 mtu 1400", "mtu 1500")
    assert bad["remedy"].startswith("ip link set dev eth0 mtu 1500")
    assert "NCCL_SOCKET_IFNAME='eth0' (hosts.yaml env)" in by_host(report, "net.interface")["node1"]["message"]


def test_nccl_ifname_naming_a_missing_interface_fails_everywhere(cluster: NetnsCluster, tmp_path: Path) -> None:
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", extra_defaults={"env": {"NCCL_SOCKET_IFNAME": "ib0"}})
    code, report = run_net(hosts, tmp_path)
    assert code == 1
    assert not_passing(report) == {("net.interface", node, "fail") for node in NODES}
    bad = by_host(report, "net.interface")["node2"]
    assert "matches no interface" in bad["message"] and "eth0" in bad["message"]
    assert bad["remedy"].startswith("export NCCL_SOCKET_IFNAME==eth0")


def test_login_environment_is_read(cluster: NetnsCluster, tmp_path: Path) -> None:
    # Test nodes bind this file over root's ~/.bashrc (see NetnsCluster._spawn_sshd); bash runs it for ssh commands.
    shellrc = cluster.workdir / "node2" / "shellrc"
    assert shellrc.is_file() and Path("/root/.bashrc").is_file(), "the node's ~/.bashrc stand-in is missing"
    original = shellrc.read_text()
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml")
    with open(shellrc, "a") as rc:  # in place: the bind mount keeps the inode
        rc.write("export GLOO_SOCKET_IFNAME=eth0,ib0\n")
    try:
        code, report = run_net(hosts, tmp_path)
    finally:
        with open(shellrc, "w") as rc:
            rc.write(original)
    assert code == 1
    assert not_passing(report) == {("net.interface", "node2", "fail")}
    message = by_host(report, "net.interface")["node2"]["message"]
    assert "GLOO_SOCKET_IFNAME='eth0,ib0' (login environment): no interface ib0" in message


def test_interface_on_another_network_warns_on_that_host(cluster: NetnsCluster, tmp_path: Path) -> None:
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"accelerator": "gpu"},
                                     extra_defaults={"env": {"NCCL_SOCKET_IFNAME": "=eth0"}})
    with_host_env(hosts, {"node3": {"NCCL_SOCKET_IFNAME": "=ib0"}})
    cluster.exec("node3", ["ip", "link", "add", "ib0", "type", "veth", "peer", "name", "ib0p"])
    try:
        cluster.exec("node3", ["ip", "addr", "add", "192.168.77.13/24", "dev", "ib0"])
        cluster.exec("node3", ["ip", "link", "set", "dev", "ib0p", "up"])
        cluster.exec("node3", ["ip", "link", "set", "dev", "ib0", "up"])
        code, report = run_net(hosts, tmp_path)
    finally:
        cluster.exec("node3", ["ip", "link", "del", "ib0"], check=False)
    assert code == 0
    assert not_passing(report) == {("net.interface", "node3", "warn")}
    warned = by_host(report, "net.interface")["node3"]
    assert "ib0 (up, 192.168.77.13/24), not on the network of the master's eth0" in warned["message"]
    assert warned["remedy"].startswith("export NCCL_SOCKET_IFNAME==eth0")


def test_node_without_iproute2_reads_its_addresses_with_python(cluster: NetnsCluster, tmp_path: Path) -> None:
    """Container images often lack `ip` (a real GPU VM did: net.interface was an error there). node3 without it:
    preflight/node/addrs.py reads the same addresses, so every net finding still passes, and the same as before."""
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"accelerator": "gpu"})
    _, before = run_net(hosts, tmp_path / "with_ip")
    for path in ("/bin/ip", "/usr/bin/ip"):
        cluster.hide_binary("node3", path)
    try:
        code, report = run_net(hosts, tmp_path / "without_ip")
    finally:
        for path in ("/bin/ip", "/usr/bin/ip"):
            cluster.unhide_binary("node3", path)
    assert code == 0 and not_passing(report) == set(), not_passing(report)
    for check in ("net.interface", "net.mtu", "net.address_family"):
        assert by_host(report, check)["node3"]["observed"] == by_host(before, check)["node3"]["observed"], check
