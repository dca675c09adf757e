"""``preflight diagnose`` end to end on a 3-node namespace cluster: each broken launch assumption is named.

Every case breaks one thing (the launch line, a listener, a firewall rule, /etc/hosts), runs the real
CLI with a real rendezvous dry run (torch on CPU, gloo) and asserts which host gets which status; the
state is always restored. Each case costs a torch import on the nodes plus the dry run's timeout.
"""

from __future__ import annotations

import json
import os
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

NODES = ("node1", "node2", "node3")
# The dry run's store / process-group timeout: it bounds a failing case; a healthy one ends as soon as every
# rank joined, so it gets room for the torch imports' skew on a loaded machine.
FAILING, HEALTHY = "8", "30"

HOLDER = r"""
import socket, sys, time
open("/proc/self/comm", "w").write("pfholder")
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen()
print("ready", flush=True)
time.sleep(120)
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=3, name="pfdiag", subnet=30)


@pytest.fixture(scope="module")
def hosts(cluster: NetnsCluster, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return cluster.write_hosts_yaml(tmp_path_factory.mktemp("pfdiag-hosts") / "hosts.yaml")


def diagnose(hosts: Path, tmp_path: Path, *launch: str, env: dict[str, str] | None = None,
             timeout: str = FAILING) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run([sys.executable, "-m", "preflight", "diagnose", "--hosts", str(hosts), "--json",
                           "--timeout", timeout, "--report-dir", str(tmp_path / "report"), "--", *launch],
                          capture_output=True, text=True, timeout=180, check=False,
                          env={**os.environ, **(env or {})})
    assert proc.returncode in (0, 1, 4), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def statuses(report: dict[str, Any], check: str) -> dict[str, str]:
    return {f["host"]: f["status"] for f in report["findings"] if f["check"] == check}


def bad(report: dict[str, Any]) -> set[tuple[str, str | None, str]]:
    return {(f["check"], f["host"], f["status"]) for f in report["findings"] if f["status"] not in ("pass", "skip")}


def joined(report: dict[str, Any]) -> list[str]:
    return [j["host"] for j in report["diagnose"]["joined"]]


def torchrun(port: int, *extra: str) -> list[str]:
    return ["torchrun", "--nnodes=3", "--nproc-per-node=1", f"--master-port={port}", *extra, "train.py", "--lr", "1"]


def etc_hosts(cluster: NetnsCluster, loopback: str | None = None) -> str:
    lines = ["127.0.0.1 localhost", "::1 localhost ip6-localhost ip6-loopback"]
    lines += [f"127.0.1.1 {n.name}" if n.name == loopback else f"{n.address} {n.name}" for n in cluster.nodes]
    return "\n".join(lines) + "\n"


@contextmanager
def holder(cluster: NetnsCluster, node: str, port: int) -> Iterator[int]:
    """A stray process listening on ``port`` inside the node's namespace; yields its pid."""
    proc = subprocess.Popen(["ip", "netns", "exec", cluster.node(node).netns, sys.executable, "-c", HOLDER,
                             str(port)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


@contextmanager
def iptables(cluster: NetnsCluster, node: str, rule: list[str]) -> Iterator[None]:
    cluster.exec(node, ["iptables", "-I", "INPUT", *rule])
    try:
        yield
    finally:
        cluster.exec(node, ["iptables", "-D", "INPUT", *rule], check=False)


def test_correct_launch_passes_the_dry_run(hosts: Path, tmp_path: Path) -> None:
    code, report = diagnose(hosts, tmp_path, *torchrun(29510, "--master-addr=node1"), timeout=HEALTHY)
    assert code == 0 and bad(report) == set(), bad(report)
    assert joined(report) == list(NODES) and report["diagnose"]["missing"] == []
    assert report["diagnose"]["corrected_launch"] is None
    for check in ("diagnose.master_addr", "diagnose.reachability", "diagnose.interface", "diagnose.rendezvous",
                  "diagnose.devices", "diagnose.hostname"):
        assert set(statuses(report, check).values()) == {"pass"}, check
    assert statuses(report, "diagnose.master_port") == {"node1": "pass", "node2": "skip", "node3": "skip"}
    assert statuses(report, "diagnose.launch") == {None: "pass"}
    assert by_host(report, "diagnose.master_addr")["node3"]["observed"] == "node1 -> 10.213.30.11"
    assert "all_reduce gave 6.0 as expected" in by_host(report, "diagnose.rendezvous")["node2"]["message"]


def test_torch_distributed_launch_with_underscore_spellings(hosts: Path, tmp_path: Path) -> None:
    """python -m torch.distributed.launch with --master_addr: the master is the host with that address."""
    code, report = diagnose(hosts, tmp_path, "python", "-m", "torch.distributed.launch", "--nnodes", "3",
                            "--nproc_per_node", "1", "--master_addr", "10.213.30.12", "--master_port", "29511",
                            "train.py", timeout=HEALTHY)
    assert code == 0 and bad(report) == set(), bad(report)
    assert report["diagnose"]["master"] == "node2"
    assert [(j["host"], j["rank"]) for j in report["diagnose"]["joined"]] == [("node2", 0), ("node1", 1),
                                                                              ("node3", 2)]


def test_deepspeed_hostfile_and_environment_launches(hosts: Path, tmp_path: Path) -> None:
    hostfile = tmp_path / "hostfile"
    hostfile.write_text("node3 slots=1\nnode1 slots=1\nnode2 slots=1\n")
    code, report = diagnose(hosts, tmp_path, "deepspeed", "--hostfile", str(hostfile), "--master_port", "29518",
                            "train.py", "--deepspeed_config", "ds.json", timeout=HEALTHY)
    assert code == 0 and bad(report) == set(), bad(report)
    assert report["diagnose"]["master"] == "node3" and joined(report) == ["node3", "node1", "node2"]
    environ = {"MASTER_ADDR": "10.213.30.11", "MASTER_PORT": "29519", "WORLD_SIZE": "3", "RANK": "0"}
    code, report = diagnose(hosts, tmp_path, env=environ, timeout=HEALTHY)  # no launch line: the environment
    assert code == 0 and bad(report) == set(), bad(report)
    assert report["diagnose"]["launch"]["launcher"] == "env" and joined(report) == list(NODES)


def test_wrong_master_addr_is_named_on_every_host(hosts: Path, tmp_path: Path) -> None:
    code, report = diagnose(hosts, tmp_path, *torchrun(29512, "--master-addr=10.213.30.99"))
    assert code == 1
    assert statuses(report, "diagnose.master_addr") == dict.fromkeys(NODES, "fail")
    node2 = by_host(report, "diagnose.master_addr")["node2"]
    assert "not an address of the master node1 (no host has it)" in node2["message"]
    fixed = "torchrun --nnodes=3 --nproc-per-node=1 --master-port=29512 --master-addr=10.213.30.11 train.py --lr 1"
    assert node2["remedy"] == fixed and report["diagnose"]["corrected_launch"] == fixed
    assert set(statuses(report, "diagnose.reachability").values()) == {"pass"}  # the port itself is fine
    assert statuses(report, "diagnose.rendezvous") == dict.fromkeys(NODES, "fail")
    assert joined(report) == []
    assert "stopped at connecting to the rendezvous store at 10.213.30.99:29512" in \
        by_host(report, "diagnose.rendezvous")["node3"]["message"]


def test_loopback_master_addr_with_two_nodes(cluster: NetnsCluster, tmp_path: Path) -> None:
    """torchrun's default MASTER_ADDR is 127.0.0.1: fine alone, fatal with a second node."""
    two = cluster.write_hosts_yaml(tmp_path / "two.yaml", nodes=cluster.nodes[:2])
    code, report = diagnose(two, tmp_path, "torchrun", "--nnodes=2", "--master-port=29513", "train.py")
    assert code == 1
    assert statuses(report, "diagnose.master_addr") == {"node1": "fail", "node2": "fail"}
    message = by_host(report, "diagnose.master_addr")["node2"]["message"]
    assert "MASTER_ADDR 127.0.0.1 is loopback with 2 nodes" in message
    assert by_host(report, "diagnose.master_addr")["node2"]["remedy"] == \
        "torchrun --nnodes=2 --master-port=29513 --master-addr=10.213.30.11 train.py"
    assert statuses(report, "diagnose.rendezvous")["node2"] == "fail" and "node2" not in joined(report)


def test_port_in_use_on_the_master(cluster: NetnsCluster, hosts: Path, tmp_path: Path) -> None:
    with holder(cluster, "node1", 29514) as pid:
        code, report = diagnose(hosts, tmp_path, *torchrun(29514, "--master-addr=node1"))
    assert code == 1
    port = by_host(report, "diagnose.master_port")["node1"]
    assert port["status"] == "fail" and f"pfholder (pid {pid})" in port["message"]
    assert port["remedy"].startswith("torchrun --nnodes=3 --nproc-per-node=1 --master-port=29500 ")
    assert statuses(report, "diagnose.master_addr") == dict.fromkeys(NODES, "pass")
    assert statuses(report, "diagnose.reachability") == {"node1": "skip"}
    rank0 = by_host(report, "diagnose.rendezvous")["node1"]
    assert rank0["status"] == "fail" and "EADDRINUSE" in rank0["message"]
    assert "no progress: still waiting" in by_host(report, "diagnose.rendezvous")["node2"]["message"]


@pytest.mark.parametrize(("target", "result"), [("DROP", "timeout"), ("REJECT", "refused")])
def test_firewall_on_the_master_port(cluster: NetnsCluster, hosts: Path, tmp_path: Path, target: str,
                                     result: str) -> None:
    rule = ["-p", "tcp", "--dport", "29515", "-j", target]
    if target == "REJECT":
        rule += ["--reject-with", "tcp-reset"]
    with iptables(cluster, "node1", rule):
        code, report = diagnose(hosts, tmp_path, *torchrun(29515, "--master-addr=node1"))
    assert code == 1
    assert statuses(report, "diagnose.reachability") == {"node1": "fail"}
    reach = by_host(report, "diagnose.reachability")["node1"]
    assert reach["observed"] == f"2/2 hosts: {result}"
    written = f"-A INPUT -p tcp -m tcp --dport 29515 -j {target}"
    assert f"the rule: `{written}" in reach["message"]  # named by the firewall check's rule model
    assert reach["remedy"].startswith(f"iptables -D INPUT -p tcp -m tcp --dport 29515 -j {target}")
    assert statuses(report, "diagnose.master_addr") == dict.fromkeys(NODES, "pass")
    assert "node2" not in joined(report) and "node3" not in joined(report)
    rendezvous = by_host(report, "diagnose.rendezvous")["node2"]
    assert "stopped at connecting to the rendezvous store" in rendezvous["message"]
    assert rendezvous["remedy"].startswith(f"iptables -D INPUT -p tcp -m tcp --dport 29515 -j {target}")
    assert report["diagnose"]["corrected_launch"] is None  # the launch line is right: the firewall is not


def test_missing_socket_interface(hosts: Path, tmp_path: Path) -> None:
    code, report = diagnose(hosts, tmp_path, "NCCL_SOCKET_IFNAME=nosuch0", *torchrun(29516, "--master-addr=node1"),
                            timeout=HEALTHY)
    assert code == 1
    assert statuses(report, "diagnose.interface") == dict.fromkeys(NODES, "fail")
    iface = by_host(report, "diagnose.interface")["node2"]
    assert "NCCL_SOCKET_IFNAME='nosuch0'" in iface["message"] and "matches no interface" in iface["message"]
    assert iface["remedy"].startswith("NCCL_SOCKET_IFNAME==eth0 torchrun --nnodes=3")
    assert {c for c, _, _ in bad(report)} == {"diagnose.interface"}  # gloo on CPU does not use NCCL's variable
    assert joined(report) == list(NODES)


def test_master_hostname_mapped_to_127_0_1_1(cluster: NetnsCluster, hosts: Path, tmp_path: Path) -> None:
    cluster.set_etc_file("node1", "hosts", etc_hosts(cluster, loopback="node1"))
    try:
        code, report = diagnose(hosts, tmp_path, *torchrun(29517, "--master-addr=node1"), timeout=HEALTHY)
    finally:
        cluster.set_etc_file("node1", "hosts", etc_hosts(cluster))
    assert code == 1
    assert statuses(report, "diagnose.master_addr") == {"node1": "fail", "node2": "pass", "node3": "pass"}
    master = by_host(report, "diagnose.master_addr")["node1"]
    assert "127.0.1.1" in master["message"] and "Debian" in master["message"]
    assert statuses(report, "diagnose.hostname") == {"node1": "fail", "node2": "pass", "node3": "pass"}
    assert "node1 resolves to 127.0.1.1 (loopback)" in by_host(report, "diagnose.hostname")["node1"]["message"]
    # the dry run says what gloo really does with it (rank 0 dials its peers, so it may well get through)
    assert set(statuses(report, "diagnose.rendezvous")) == set(NODES)
