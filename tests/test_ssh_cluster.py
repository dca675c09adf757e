"""The user's OpenSSH setup on real sshds: Include + Match, a 2-hop ProxyJump chain behind firewalls, a ProxyCommand
host, and 32 targets behind one stock-``MaxStartups`` bastion over one connection."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paramiko
import pytest
import yaml
from cli_runner import preflight
from conftest import cluster_fixture, hostname_session
from netns_cluster import NetnsCluster

from preflight.inventory import Host

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    """node1 -> node2 -> node3: node3 admits SSH only from node2, node2 only from node1; node4 is plain."""
    for cluster in cluster_fixture(tmp_path_factory, size=4, name="pfjump", subnet=170):
        for guarded, admitted in (("node3", "node2"), ("node2", "node1")):
            cluster.exec(guarded, ["iptables", "-A", "INPUT", "-p", "tcp", "--dport", "22", "!", "-s",
                                   cluster.node(admitted).address, "-j", "DROP"])
        yield cluster


@pytest.fixture(scope="module")
def bastion(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    """node1 is a bastion with a stock sshd MaxStartups (10:30:100), logging each login; 32 targets behind it."""
    for cluster in cluster_fixture(tmp_path_factory, size=33, name="pfbast", subnet=171):
        config = cluster.workdir / "node1" / "sshd_config"
        config.write_text(config.read_text().replace("MaxStartups 200", "MaxStartups 10:30:100")
                          .replace("LogLevel ERROR", "LogLevel INFO"))
        cluster.stop_sshd("node1")
        cluster.start_sshd("node1")
        yield cluster


def run_json(hosts: Path, tmp_path: Path, *extra: str) -> dict[str, Any]:
    proc = preflight("run", "--hosts", hosts, "--checks", "sysctl", "--json", "--report-dir", tmp_path / "r", *extra)
    assert proc.returncode in (0, 1, 4), proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def connect_status(report: dict[str, Any]) -> dict[str, str]:
    return {f["host"]: f["status"] for f in report["findings"] if f["check"] == "ssh.connect"}


def identity(cluster: NetnsCluster) -> str:
    return f"  User root\n  IdentityFile {cluster.client_key}\n  UserKnownHostsFile {cluster.known_hosts}\n"


def test_include_match_chain_and_proxy_command_by_name_alone(chain: NetnsCluster, tmp_path: Path) -> None:
    n = {node.name: node.address for node in chain.nodes}
    (tmp_path / "config.d").mkdir()
    (tmp_path / "config.d" / "cluster.conf").write_text(
        "Host hop1\n  HostName " + n["node1"] + "\n"
        "Host hop2\n  HostName " + n["node2"] + "\n  ProxyJump hop1\n"
        "Host deep\n  HostName " + n["node3"] + "\n"
        "Match originalhost deep\n  ProxyJump hop1,hop2\n"
        "Host piped\n  HostName " + n["node4"] + "\n"
        f"  ProxyCommand ssh -F /dev/null -i {chain.client_key} -o UserKnownHostsFile={chain.known_hosts} "
        f"-o BatchMode=yes -W %h:%p root@{n['node1']}\n"
        "Host *\n" + identity(chain))
    config = tmp_path / "ssh_config"
    config.write_text(f"Include {tmp_path}/config.d/*.conf\n")
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(yaml.safe_dump({"defaults": {"ssh_config": str(config)}, "hosts": ["hop1", "hop2", "deep",
                                                                                        "piped"]}))
    report = run_json(hosts, tmp_path)
    assert connect_status(report) == {"hop1": "pass", "hop2": "pass", "deep": "pass", "piped": "pass"}, report


def test_the_chain_is_needed(chain: NetnsCluster, tmp_path: Path) -> None:
    """Without the chain, node3 is out of reach: the firewall is what the test above went through."""
    hosts = chain.write_hosts_yaml(tmp_path / "hosts.yaml", nodes=[chain.node("node3")])
    report = run_json(hosts, tmp_path, "--connect-timeout", "1")
    assert connect_status(report) == {"node3": "error"}


def test_a_target_behind_a_jump_opens_its_channel_without_waiting_for_an_ack(chain: NetnsCluster) -> None:
    """sshd's host-key notice is answered (an SSH_MSG_IGNORE): through a hop, that is what ACKs it, so the
    target's CHANNEL_OPEN_CONFIRMATION is not held ~40 ms by its Nagle. The target's transport and the hop's
    each answered one notice."""
    hop, target = chain.node("node1"), chain.node("node2")
    host = Host("node2", target.address, identity_file=str(chain.client_key), known_hosts=str(chain.known_hosts),
                proxy_jump=f"root@{hop.address}:22")
    with hostname_session(host) as (transport, ssh):
        assert ssh.notices_answered >= 1  # type: ignore[attr-defined]
        channel = transport._sock  # the direct-tcpip channel over the hop
        assert isinstance(channel, paramiko.Channel)
        hop_transport = channel.get_transport()
        assert hop_transport.notices_answered >= 1  # type: ignore[attr-defined]


def test_32_targets_behind_one_stock_bastion_use_one_connection(bastion: NetnsCluster, tmp_path: Path) -> None:
    log = bastion.workdir / "node1" / "sshd.log"
    before = log.read_text().count("Accepted publickey")
    jump = bastion.node("node1").address
    hosts = bastion.write_hosts_yaml(tmp_path / "hosts.yaml", nodes=bastion.nodes[1:],
                                     extra_defaults={"proxy_jump": f"root@{jump}"})
    report = run_json(hosts, tmp_path, "--parallel", "64")
    statuses = connect_status(report)
    assert len(statuses) == 32 and set(statuses.values()) == {"pass"}, statuses
    assert log.read_text().count("Accepted publickey") - before == 1


def sign_host_key(cluster: NetnsCluster, node: str, ca: Path, principal: str) -> None:
    """Give ``node``'s sshd a host certificate signed by ``ca`` for ``principal`` and restart it."""
    key = cluster.workdir / node / "ssh_host_ed25519_key"
    subprocess.run(["ssh-keygen", "-q", "-s", str(ca), "-I", node, "-h", "-n", principal, "-V", "-5m:+1h",
                    f"{key}.pub"], check=True, capture_output=True)
    config = cluster.workdir / node / "sshd_config"
    text = config.read_text()
    if "HostCertificate" not in text:
        config.write_text(text + f"HostCertificate {key}-cert.pub\n")
    cluster.stop_sshd(node)
    cluster.start_sshd(node)


def test_host_certificate_through_cert_authority(chain: NetnsCluster, tmp_path: Path) -> None:
    """A known_hosts with only ``@cert-authority`` for the node: the system ssh client is chosen (and says why),
    accepts the certificate, and refuses one from another CA or for another name."""
    for name in ("ca", "other_ca"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / name)], check=True)
    node = chain.node("node4")
    known = tmp_path / "known_hosts"
    known.write_text(f"@cert-authority {node.address} {(tmp_path / 'ca.pub').read_text()}")
    hosts = chain.write_hosts_yaml(tmp_path / "hosts.yaml", nodes=[node], extra_defaults={"known_hosts": str(known)})
    sign_host_key(chain, "node4", tmp_path / "ca", node.address)
    for extra in ((), ("--transport", "openssh")):
        report = run_json(hosts, tmp_path, *extra)
        connect = [f for f in report["findings"] if f["check"] == "ssh.connect"]
        assert [f["status"] for f in connect] == ["pass"], connect
        assert "over the system ssh client (@cert-authority in" in connect[0]["message"]
    for ca, principal in (("other_ca", node.address), ("ca", "someone-else.example")):
        sign_host_key(chain, "node4", tmp_path / ca, principal)
        report = run_json(hosts, tmp_path, "--transport", "openssh")
        connect = [f for f in report["findings"] if f["check"] == "ssh.connect"]
        assert [(f["status"], f["observed"]) for f in connect] == [("error", "hostkey-unknown")], connect
