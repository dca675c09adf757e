"""The firewall check against real iptables and nftables rules inside the namespace cluster's nodes.

Every node is its own network namespace, so rules added there filter only that node's traffic and
only that node's ``iptables -S`` / ``nft list ruleset`` show them. Each test sets rules, runs the
real CLI over SSH, and restores an empty ruleset (also when it fails).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import cluster_fixture
from netns_cluster import NetnsCluster

pytestmark = pytest.mark.cluster

NODES = ["node1", "node2", "node3", "node4"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=4, name="pffw", subnet=4)


def _reset(cluster: NetnsCluster) -> None:
    """No rules anywhere: flushed chains, ACCEPT policies, no nft tables, no CANN toolkit."""
    for node in cluster.nodes:
        for tool in ("iptables", "ip6tables"):
            cluster.exec(node, [tool, "-F"], check=False)
            cluster.exec(node, [tool, "-X"], check=False)
            cluster.exec(node, [tool, "-P", "INPUT", "ACCEPT"], check=False)
        cluster.exec(node, ["nft", "flush", "ruleset"])
        shutil.rmtree(cluster.ascend_root(node) / "ascend-toolkit", ignore_errors=True)


@pytest.fixture
def clean(cluster: NetnsCluster) -> Iterator[NetnsCluster]:
    """The cluster with empty rulesets, restored after the test whatever happens."""
    _reset(cluster)
    try:
        yield cluster
    finally:
        _reset(cluster)


def run(cluster: NetnsCluster, tmp_path: Path, accelerator: str = "cpu",
        env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    hosts = cluster.write_hosts_yaml(tmp_path / f"hosts-{accelerator}.yaml", cluster={"accelerator": accelerator},
                                     extra_defaults={"env": env} if env else None)
    proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json", "--checks",
                           "firewall", "--report-dir", str(tmp_path / f"report-{accelerator}")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode in (0, 1, 4), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def by_host(report: dict[str, Any], check: str) -> dict[str, dict[str, Any]]:
    found = {f["host"]: f for f in report["findings"] if f["check"] == check}
    assert sorted(found) == NODES, f"one {check} finding per host"
    return found


def statuses(report: dict[str, Any], check: str = "firewall.rules") -> dict[str, str]:
    return {host: f["status"] for host, f in by_host(report, check).items()}


def nft(cluster: NetnsCluster, node: str, ruleset: str) -> None:
    cluster.exec(node, ["nft", "-f", "-"], input=ruleset)


def test_healthy_cluster_has_no_false_positive(clean: NetnsCluster, tmp_path: Path) -> None:
    for accelerator in ("cpu", "npu"):
        code, report = run(clean, tmp_path, accelerator)
        assert code == 0
        assert statuses(report) == dict.fromkeys(NODES, "pass")
        assert statuses(report, "firewall.state") == dict.fromkeys(NODES, "pass")
        rules = by_host(report, "firewall.rules")
        assert "nothing drops or rejects tcp 29500 (master port)" in rules["node1"]["message"]
        assert "29500" not in rules["node2"]["message"], "the master port is judged on the master only"
        state = by_host(report, "firewall.state")["node3"]["message"]
        assert "iptables" in state and "INPUT policy ACCEPT, 0 rules" in state and "nftables" in state
        assert ("60000-60015 (HCCL host ports" in rules["node4"]["message"]) == (accelerator == "npu")
    assert not any(f["check"].startswith("versions") for f in report["findings"]), "needed, not reported"


def test_drop_reject_and_nft_table_are_attributed_to_their_hosts(clean: NetnsCluster, tmp_path: Path) -> None:
    cluster = clean
    cluster.exec("node1", ["iptables", "-A", "INPUT", "-p", "tcp", "--dport", "29500", "-j", "DROP"])
    cluster.exec("node2", ["iptables", "-A", "INPUT", "-p", "tcp", "--dport", "29500", "-j", "REJECT"])
    nft(cluster, "node3", "table inet pffw {\n chain input {\n  type filter hook input priority 0; policy accept;\n"
                          "  tcp dport 60000-60015 drop\n }\n}\n")

    code, report = run(cluster, tmp_path, "cpu")
    assert code == 1
    assert statuses(report) == {"node1": "fail", "node2": "warn", "node3": "warn", "node4": "pass"}
    rules = by_host(report, "firewall.rules")
    node1 = rules["node1"]
    assert "tcp 29500 (master port) is dropped by iptables rule `-A INPUT -p tcp -m tcp --dport 29500 -j DROP`" \
        in node1["message"]
    assert "tcp dport 29500" not in node1["message"], "iptables-nft's rule is reported once, as iptables shows it"
    assert node1["remedy"] == "iptables -D INPUT -p tcp -m tcp --dport 29500 -j DROP"
    node2 = rules["node2"]
    assert "is rejected by iptables rule `-A INPUT -p tcp -m tcp --dport 29500 -j REJECT --reject-with " \
           "icmp-port-unreachable`" in node2["message"]
    assert "node1 is the master" in node2["message"]
    node3 = rules["node3"]
    assert "tcp 60000-60015 (ephemeral range 32768-60999" in node3["message"]
    assert "nft rule `tcp dport 60000-60015 drop` (table inet pffw, chain input)" in node3["message"]
    assert "only some listeners" in node3["message"]

    code, report = run(cluster, tmp_path, "npu")
    assert statuses(report) == {"node1": "fail", "node2": "warn", "node3": "fail", "node4": "pass"}
    node3 = by_host(report, "firewall.rules")["node3"]
    assert "tcp 60000-60015 (HCCL host ports, HCCL_IF_BASE_PORT=60000 by default" in node3["message"]
    assert node3["remedy"].startswith("nft delete rule inet pffw input handle ")

    for node in ("node1", "node3"):  # the remedies work as printed
        cluster.exec(node, ["sh", "-c", rules[node]["remedy"] if node == "node1" else node3["remedy"]])
    code, report = run(cluster, tmp_path, "npu")
    assert statuses(report) == {"node1": "pass", "node2": "warn", "node3": "pass", "node4": "pass"}


def test_rule_order_conntrack_sources_and_ipv6(clean: NetnsCluster, tmp_path: Path) -> None:
    cluster = clean
    subnet = f"{cluster.node('node1').address.rsplit('.', 1)[0]}.0/24"
    # node1: an ACCEPT for the cluster's subnet before the DROP wins.
    cluster.exec("node1", ["iptables", "-A", "INPUT", "-s", subnet, "-p", "tcp", "--dport", "29500", "-j", "ACCEPT"])
    cluster.exec("node1", ["iptables", "-A", "INPUT", "-p", "tcp", "--dport", "29500", "-j", "DROP"])
    # node2: every connection from node3 is dropped.
    cluster.exec("node2", ["iptables", "-A", "INPUT", "-s", cluster.node("node3").address, "-j", "DROP"])
    # node3: IPv6 dropped by default, but the hosts have no IPv6 address in common: nothing to block.
    cluster.exec("node3", ["ip6tables", "-P", "INPUT", "DROP"])
    # node4: policy DROP; ESTABLISHED,RELATED does not let new connections in, SSH does.
    cluster.exec("node4", ["iptables", "-A", "INPUT", "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED",
                           "-j", "ACCEPT"])
    cluster.exec("node4", ["iptables", "-A", "INPUT", "-p", "tcp", "--dport", "22", "-j", "ACCEPT"])
    cluster.exec("node4", ["iptables", "-P", "INPUT", "DROP"])

    code, report = run(cluster, tmp_path)
    assert code == 1
    assert statuses(report) == {"node1": "pass", "node2": "fail", "node3": "pass", "node4": "fail"}
    rules = by_host(report, "firewall.rules")
    assert "apply to other traffic only: `-A INPUT -p tcp -m tcp --dport 29500 -j DROP`" in rules["node1"]["message"]
    node2 = rules["node2"]
    assert f"`-A INPUT -s {cluster.node('node3').address}/32 -j DROP` for connections from node3" in node2["message"]
    assert node2["remedy"] == f"iptables -D INPUT -s {cluster.node('node3').address}/32 -j DROP"
    node4 = rules["node4"]
    assert "tcp 32768-60999 (ephemeral range 32768-60999, where NCCL, gloo and torch workers listen) is dropped " \
           "by iptables policy `-P INPUT DROP`" in node4["message"]
    assert node4["remedy"] == f"iptables -I INPUT -s {subnet} -j ACCEPT"
    assert "ip6tables 1.8" in by_host(report, "firewall.state")["node3"]["message"]

    cluster.exec("node4", ["sh", "-c", node4["remedy"]])
    code, report = run(cluster, tmp_path)
    assert statuses(report)["node4"] == "pass"


def test_hccl_ports_follow_cann_and_env(clean: NetnsCluster, tmp_path: Path) -> None:
    cluster = clean
    for node, version in (("node2", "8.5.0"), ("node3", "8.0.0")):
        info = cluster.ascend_root(node) / "ascend-toolkit" / "latest" / "x86_64-linux"
        info.mkdir(parents=True)
        (info / "ascend_toolkit_install.info").write_text(f"package_name=Ascend-cann-toolkit\nversion={version}\n")
    for node in ("node2", "node3", "node4"):
        nft(cluster, node, "table ip pffw {\n chain input {\n  type filter hook input priority 0;\n"
                           "  tcp dport { 60020, 61002 } counter reject\n }\n}\n")

    code, report = run(cluster, tmp_path, "npu")
    assert statuses(report) == {"node1": "pass", "node2": "fail", "node3": "warn", "node4": "warn"}
    rules = by_host(report, "firewall.rules")
    assert "tcp 60020 (HCCL host ports, HCCL_IF_BASE_PORT=60000 by default; 32 ports for CANN 8.5.0" \
        in rules["node2"]["message"]
    assert "tcp 60020 (ephemeral range" in rules["node3"]["message"], "16 HCCL ports up to CANN 8.0"

    code, report = run(cluster, tmp_path, "npu", env={"HCCL_HOST_SOCKET_PORT_RANGE": "61000-61003"})
    # node3's CANN 8.0.0 predates HCCL_HOST_SOCKET_PORT_RANGE (8.1.RC1): its HCCL stays on 60000-60015, and
    # 60020 is only part of the ephemeral range there (warn); node4 has no CANN found: the variable is honoured.
    assert statuses(report) == {"node1": "pass", "node2": "fail", "node3": "warn", "node4": "fail"}
    message = by_host(report, "firewall.rules")["node4"]["message"]
    assert "tcp 61002 (HCCL host ports, HCCL_HOST_SOCKET_PORT_RANGE=61000-61003) is rejected by nft rule " \
           "`tcp dport { 60020, 61002 } counter reject` (table ip pffw, chain input)" in message
