"""``preflight fix`` plans on the namespace cluster and changes nothing; ``--apply FILE`` refuses hosts that moved.

Three nodes, each with its own /etc/sysctl.d (a directory of /etc/netns/<ns>/ that ``ip netns exec`` binds over
/etc/sysctl.d when sshd starts): node2 and node3 with net.core.somaxconn and net.ipv4.tcp_max_syn_backlog at 64
(below the floor of 128: two identical plans, one block), node1, the master, with the master port 29500 inside
its ephemeral range and another reservation (8080) already there. The CLI runs for real, over SSH.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import preflight
from conftest import cluster_fixture
from netns_cluster import _NETNS_ETC, NetnsCluster

from preflight.fix.model import Plan
from preflight.ports import SYSCTL_CONF

pytestmark = pytest.mark.cluster

LOW = {"net.core.somaxconn": "64", "net.ipv4.tcp_max_syn_backlog": "64"}
MASTER = {"net.ipv4.ip_local_port_range": "1024\t65000", "net.ipv4.ip_local_reserved_ports": "8080"}
KEYS = [*LOW, *MASTER]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    for found in cluster_fixture(tmp_path_factory, size=3, name="pffix", subnet=48):
        for node in found.nodes:  # each node its own, empty /etc/sysctl.d, bound when its sshd starts
            (_NETNS_ETC / node.netns / "sysctl.d").mkdir(parents=True, exist_ok=True)
            found.stop_sshd(node)
            found.start_sshd(node)
        yield found


@pytest.fixture
def lowered(cluster: NetnsCluster) -> Iterator[NetnsCluster]:
    before = {n.name: values(cluster, n.name) for n in cluster.nodes}
    for name in ("node2", "node3"):
        for key, value in LOW.items():
            cluster.sysctl(name, key, value)
    for key, value in MASTER.items():
        cluster.sysctl("node1", key, value)
    try:
        yield cluster
    finally:
        for host, was in before.items():
            for key, value in was.items():
                cluster.sysctl(host, key, value)
        for node in cluster.nodes:
            (_NETNS_ETC / node.netns / "sysctl.d" / "90-preflight.conf").unlink(missing_ok=True)


def values(cluster: NetnsCluster, node: str) -> dict[str, str]:
    """The keys' values in force on ``node`` (its network namespace's)."""
    out = cluster.exec(node, ["sysctl", "-n", *KEYS]).stdout.splitlines()
    return dict(zip(KEYS, out, strict=True))


def sysctl_dir(cluster: NetnsCluster, node: str) -> list[str]:
    """What the node sees in /etc/sysctl.d (its own directory)."""
    return sorted(cluster.exec(node, ["ls", "-A", "/etc/sysctl.d"]).stdout.split())


def test_fix_prints_the_plan_and_changes_nothing(lowered: NetnsCluster, tmp_path: Path) -> None:
    hosts = lowered.write_hosts_yaml(tmp_path / "hosts.yaml")
    before = {n.name: (values(lowered, n.name), sysctl_dir(lowered, n.name)) for n in lowered.nodes}
    plan_file = tmp_path / "plan.json"
    done = preflight("fix", "--hosts", hosts, "--checks", "sysctl,ports", "--plan-out", plan_file)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "3 hosts to change" in out
    assert out.count("== node[2-3] (2 hosts)") == 1 and "== node2 " not in out  # identical plans, one block
    for line in ("1. sysctl: net.core.somaxconn 64 -> 128  [sysctl.somaxconn]",
                 "2. sysctl: net.ipv4.tcp_max_syn_backlog 64 -> 128  [sysctl.tcp_max_syn_backlog]",
                 "$ sysctl -p /etc/sysctl.d/90-preflight.conf", "--- /dev/null",
                 "+++ b/etc/sysctl.d/90-preflight.conf", "+net.core.somaxconn = 128",
                 "+net.ipv4.tcp_max_syn_backlog = 128", "== node1 (1 host)",
                 "reserved_ports: net.ipv4.ip_local_reserved_ports 8080 -> 8080,29500 (adds 29500)",
                 "+net.ipv4.ip_local_reserved_ports = 8080,29500", "Nothing was changed."):
        assert line in out, line
    assert f"plan saved: {plan_file}" in out
    after = {n.name: (values(lowered, n.name), sysctl_dir(lowered, n.name)) for n in lowered.nodes}
    assert after == before, "planning changed a node"
    assert all(not (_NETNS_ETC / n.netns / "sysctl.d" / "90-preflight.conf").exists() for n in lowered.nodes)

    plan = Plan.loads(plan_file.read_text())
    assert [h.host for h in plan.applicable] == ["node1", "node2", "node3"]
    node2 = plan.host("node2")
    assert node2 is not None and [c.expect for c in node2.applicable] == [
        (("net.core.somaxconn", "128"),), (("net.ipv4.tcp_max_syn_backlog", "128"),)]
    assert dict(node2.state).keys() == {"sysctl"}

    # Each host moves after the plan: a value raised, our file written by someone else, another value raised.
    lowered.sysctl("node2", "net.core.somaxconn", "4096")
    lowered.sysctl("node3", "net.ipv4.tcp_max_syn_backlog", "100")
    (_NETNS_ETC / "pffix-node1" / "sysctl.d" / "90-preflight.conf").write_text("net.core.somaxconn = 8192\n")
    moved = {n.name: values(lowered, n.name) for n in lowered.nodes}
    refused = preflight("fix", "--hosts", hosts, "--checks", "sysctl,ports", "--apply", plan_file, "--yes")
    assert refused.returncode == 5, refused.stdout + refused.stderr
    for line in ("refused node1: /etc/sysctl.d/90-preflight.conf changed since the plan (plan again)",
                 "refused node2: net.core.somaxconn was 64 when planned, is 4096 now (plan again)",
                 "refused node3: net.ipv4.tcp_max_syn_backlog was 64 when planned, is 100 now (plan again)",
                 "0 hosts to change"):
        assert line in refused.stdout, line
    assert {n.name: values(lowered, n.name) for n in lowered.nodes} == moved
    assert (_NETNS_ETC / "pffix-node1" / "sysctl.d" / "90-preflight.conf").read_text() == \
        "net.core.somaxconn = 8192\n"
    assert lowered.exec("node1", ["cat", SYSCTL_CONF]).stdout == "net.core.somaxconn = 8192\n"

