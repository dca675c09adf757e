"""``preflight fix --apply`` and ``--undo`` for real on the namespace cluster (the issue 40 acceptance).

Four npu nodes (HCCL_IF_BASE_PORT=61000: HCCL's ports 61000-61015; the master port 29500 on node1):

- node2 and node3: net.core.somaxconn and net.ipv4.tcp_max_syn_backlog at 64;
- node1 and node2: the ephemeral range 1024-65000, so the master port and HCCL's ports need reserving; node1 has
  another reservation (8080) that must stay;
- node1 drops the master port and HCCL's ports with iptables, node2 HCCL's ports with nftables (each next to a rule
  fix must leave alone);
- node4 is healthy.

The nodes share the machine's files, so each gets its own /etc/sysctl.d (a directory of /etc/netns/<ns>, bound when
its sshd starts), /var/lib/preflight and /run/lock (bound in its sshd's mount namespace) and a ``logger`` that
appends to a file of its own: what the CLI's scripts write over SSH lands there and nowhere else.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runner import preflight
from conftest import cluster_fixture
from netns_cluster import _NETNS_ETC, NetnsCluster

from preflight.fix.journal import Journal, read_journal
from preflight.fix.model import Change, Plan, Undo

pytestmark = pytest.mark.cluster

NODES = ["node1", "node2", "node3", "node4"]
HCCL = {"HCCL_IF_BASE_PORT": "61000"}
CHECKS = "sysctl,ports,firewall"
KEYS = ["net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog", "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_local_reserved_ports"]
LOW = {"net.core.somaxconn": "64", "net.ipv4.tcp_max_syn_backlog": "64"}
WIDE = {"net.ipv4.ip_local_port_range": "1024 65000"}
NFT_DROPS = """table inet pffxa {
 chain input {
  type filter hook input priority 0; policy accept;
  tcp dport 65100 drop
  tcp dport 61000-61015 drop
 }
}
"""
CREATED = Path("/run/preflight-test-fix-apply-created-var-lib-preflight")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    if not Path("/var/lib/preflight").exists():  # a mount point for each node's own directory
        Path("/var/lib/preflight").mkdir(parents=True)
        CREATED.touch()
    try:
        for found in cluster_fixture(tmp_path_factory, size=4, name="pffxa", subnet=49):
            for node in found.nodes:
                (_NETNS_ETC / node.netns / "sysctl.d").mkdir(parents=True, exist_ok=True)
                found.stop_sshd(node)
                found.start_sshd(node)
                own = found.workdir / f"{node.name}-own"
                for folder in ("var-lib-preflight", "lock"):
                    (own / folder).mkdir(parents=True, exist_ok=True)
                logger = own / "logger"
                logger.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> {own / 'syslog'}\n")
                logger.chmod(0o755)
                found.bind_over(node, own / "var-lib-preflight", "/var/lib/preflight")
                found.bind_over(node, own / "lock", "/run/lock")
                found.bind_over(node, logger, "/usr/bin/logger")
            yield found
    finally:
        if CREATED.exists():
            Path("/var/lib/preflight").rmdir()
            CREATED.unlink()


def own(cluster: NetnsCluster, node: str) -> Path:
    return cluster.workdir / f"{node}-own"


def reset(cluster: NetnsCluster) -> None:
    """Every node healthy and empty: the netns cluster's sysctls, no rules, no fix file, journal, lock or log."""
    for node in cluster.nodes:
        for key, value in {"net.core.somaxconn": "65535", "net.ipv4.tcp_max_syn_backlog": "65535",
                           "net.ipv4.ip_local_port_range": "32768 60999"}.items():
            cluster.sysctl(node, key, value)
        cluster.exec(node, ["sh", "-c", "echo > /proc/sys/net/ipv4/ip_local_reserved_ports"])
        for tool in ("iptables", "ip6tables"):
            for argv in (["-F"], ["-X"], ["-P", "INPUT", "ACCEPT"]):
                cluster.exec(node, [tool, *argv], check=False)
        cluster.exec(node, ["nft", "flush", "ruleset"])
        (_NETNS_ETC / node.netns / "sysctl.d" / "90-preflight.conf").unlink(missing_ok=True)
        folder = own(cluster, node.name)
        subprocess.run(["sh", "-c", f"rm -rf {folder}/var-lib-preflight/* {folder}/lock/* {folder}/syslog"],
                       check=True)


@pytest.fixture
def broken(cluster: NetnsCluster, tmp_path: Path) -> Iterator[NetnsCluster]:
    """The cluster of the module docstring; put back whole afterwards."""
    reset(cluster)
    for node in ("node2", "node3"):
        for key, value in LOW.items():
            cluster.sysctl(node, key, value)
    for node in ("node1", "node2"):
        for key, value in WIDE.items():
            cluster.sysctl(node, key, value)
    cluster.sysctl("node1", "net.ipv4.ip_local_reserved_ports", "8080")
    for rule in (["-A", "INPUT", "-p", "tcp", "--dport", "65100", "-j", "DROP"],
                 ["-A", "INPUT", "-p", "tcp", "--dport", "29500", "-j", "DROP"],
                 ["-A", "INPUT", "-p", "tcp", "--dport", "61000:61015", "-j", "DROP"]):
        cluster.exec("node1", ["iptables", *rule])
    cluster.exec("node2", ["nft", "-f", "-"], input=NFT_DROPS)
    try:
        yield cluster
    finally:
        for each in cluster.nodes:
            subprocess.run(["ip", "link", "set", cluster._veth(each), "up"], check=False)
        reset(cluster)


def hosts_yaml(cluster: NetnsCluster, tmp_path: Path) -> Path:
    return cluster.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"accelerator": "npu"},
                                    extra_defaults={"env": HCCL})


def fix(tmp_path: Path, hosts: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return preflight("fix", "--hosts", hosts, "--checks", CHECKS, "--accelerator", "npu", *args,
                     env={"XDG_STATE_HOME": str(tmp_path / "state")}, timeout=300)


def run_report(tmp_path: Path, hosts: Path, name: str) -> dict[str, Any]:
    done = preflight("run", "--hosts", hosts, "--checks", CHECKS, "--json", "--report-dir", tmp_path / name)
    assert done.returncode in (0, 1, 4), done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def statuses(report: dict[str, Any]) -> dict[tuple[str, str], str]:
    """(finding id, host) -> status of the sysctl, ports and firewall findings."""
    return {(f["check"], f["host"]): f["status"] for f in report["findings"]
            if f["check"].split(".")[0] in ("sysctl", "ports", "firewall")}


def not_green(report: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {k: v for k, v in statuses(report).items() if v not in ("pass", "skip")}


def snapshot(cluster: NetnsCluster) -> dict[str, tuple[Any, ...]]:
    """Per node what fix may touch: the values, our file, the iptables and nft rules."""
    found = {}
    for node in cluster.nodes:
        values = cluster.exec(node, ["sysctl", "-n", *KEYS]).stdout
        conf = _NETNS_ETC / node.netns / "sysctl.d" / "90-preflight.conf"
        found[node.name] = (values, conf.read_text() if conf.exists() else None,
                            cluster.exec(node, ["iptables", "-S"]).stdout,
                            cluster.exec(node, ["nft", "list", "ruleset"]).stdout)
    return found


def without_empty_tables(found: tuple[Any, ...]) -> tuple[Any, ...]:
    """A node's snapshot less the empty ``table ip filter`` that iptables-nft leaves behind once the test's own
    injected iptables rule (on a node that had none) is deleted again: no rule in it, policy accept.

    >>> without_empty_tables(("v", None, "", "table ip filter {\\n\\tchain INPUT {\\n\\t\\ttype filter hook input "
    ...                       "priority filter; policy accept;\\n\\t}\\n}\\n"))
    ('v', None, '', '')
    """
    empty = re.compile(r"table ip filter \{\n(\tchain \w+ \{\n\t\ttype filter hook \w+ priority filter; "
                       r"policy accept;\n\t\}\n\n?)+\}\n")
    return (*found[:3], empty.sub("", found[3]))


def host_journal(cluster: NetnsCluster, node: str) -> Journal | None:
    folder = own(cluster, node) / "var-lib-preflight" / "journal"
    files = sorted(folder.glob("*.json")) if folder.exists() else []
    assert len(files) <= 1
    return read_journal(files[0].read_text()) if files else None


def controller_copy(tmp_path: Path, run: str, node: str) -> Journal | None:
    path = tmp_path / "state" / "preflight" / "fix" / run / f"{node}.json"
    return read_journal(path.read_text()) if path.exists() else None


def value(cluster: NetnsCluster, node: str, key: str) -> str:
    return " ".join(cluster.exec(node, ["sysctl", "-n", key]).stdout.split())


def journal_is_true(cluster: NetnsCluster, node: str, journal: Journal) -> None:
    """Every change the journal says is done is in force on the node; every one it says was not reached is not."""
    for entry in journal.entries:
        for key, want in entry.change.expect:
            now = value(cluster, node, key)
            if entry.state == "done" and entry.undo is None:
                assert now == " ".join(want.split()), f"{node}: {key} is {now}, journal says {want} is done"
            elif entry.state == "planned":
                assert now != " ".join(want.split()), f"{node}: {key} is {now}, journal says not applied"


def test_apply_fixes_a_second_apply_changes_nothing_and_undo_restores(broken: NetnsCluster, tmp_path: Path) -> None:
    cluster = broken
    hosts = hosts_yaml(cluster, tmp_path)
    original = snapshot(cluster)
    first = run_report(tmp_path, hosts, "before")
    assert not_green(first), "the broken cluster has findings"

    planned = fix(tmp_path, hosts)
    assert planned.returncode == 1, planned.stdout + planned.stderr
    assert "Nothing was changed." in planned.stdout
    assert snapshot(cluster) == original, "planning changed a node"
    assert all(host_journal(cluster, n) is None for n in NODES)

    started = time.monotonic()
    applied = fix(tmp_path, hosts, "--apply", "--yes")
    seconds = time.monotonic() - started
    out = applied.stdout
    assert applied.returncode == 0, out + applied.stderr
    applying = out.split("applying run")[1].split("checking again")[0]
    assert "canary" in out and "node1: applied" in out
    assert not [line for line in applying.splitlines() if line.startswith("node4")], "node4 had nothing to do"
    print(f"fix --apply on 4 hosts (3 changed): {seconds:.1f} s in all\n{out}")
    after = run_report(tmp_path, hosts, "after")
    assert not_green(after) == {}, [f["message"] for f in after["findings"] if f["status"] not in ("pass", "skip")]
    assert "8080" in value(cluster, "node1", "net.ipv4.ip_local_reserved_ports").split(",")[0], "kept 8080"
    run = out.split("applying run ")[1].split()[0]
    for node in ("node1", "node2", "node3"):
        on_host = host_journal(cluster, node)
        assert on_host is not None and on_host.outcome == "applied" and on_host.run == run
        assert {e.state for e in on_host.entries} == {"done"}
        assert controller_copy(tmp_path, run, node) == on_host
        journal_is_true(cluster, node, on_host)
        log = (own(cluster, node) / "syslog").read_text().splitlines()
        assert len(log) == len(on_host.entries) and all(f"run={run} " in line for line in log)
        assert (own(cluster, node) / "lock" / "preflight-fix.lock").read_text() == ""
    assert host_journal(cluster, "node4") is None
    fixed = snapshot(cluster)

    again = fix(tmp_path, hosts, "--apply", "--yes")
    assert again.returncode == 0, again.stdout + again.stderr
    assert snapshot(cluster) == fixed, "a second apply changed something"

    undone = fix(tmp_path, hosts, "--undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert snapshot(cluster) == original, "undo did not restore every value, file and rule"
    assert statuses(run_report(tmp_path, hosts, "undone")) == statuses(first), "the original findings are back"
    for node in ("node1", "node2", "node3"):
        on_host = host_journal(cluster, node)
        assert on_host is not None and on_host.outcome == "undone"
        assert {e.undo.state for e in on_host.entries if e.undo} == {"undone"}


def test_a_host_lost_mid_apply_is_an_error_and_its_journal_tells_the_truth(broken: NetnsCluster,
                                                                            tmp_path: Path) -> None:
    cluster = broken
    hosts = hosts_yaml(cluster, tmp_path)
    journals = own(cluster, "node3") / "var-lib-preflight" / "journal"
    proc = subprocess.Popen([sys.executable, "-m", "preflight", "fix", "--hosts", str(hosts), "--checks", CHECKS,
                             "--accelerator", "npu", "--apply", "--yes", "--max-parallel", "1", "--max-failures", "3",
                             "--host-timeout", "8", "--connect-timeout", "3"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")})
    deadline = time.monotonic() + 240
    while not (journals.exists() and any(journals.iterdir())):  # node3's script has begun: its packets stop
        assert proc.poll() is None and time.monotonic() < deadline, "node3 was never reached"
        time.sleep(0.005)
    subprocess.run(["ip", "link", "set", cluster._veth(cluster.node("node3")), "down"], check=True)
    out, err = proc.communicate(timeout=300)
    subprocess.run(["ip", "link", "set", cluster._veth(cluster.node("node3")), "up"], check=True)
    assert proc.returncode == 4, out + err
    assert "node3: lost" in out, out
    assert "node1: applied" in out and "node2: applied" in out
    assert value(cluster, "node1", "net.ipv4.ip_local_reserved_ports").count("29500") == 1  # the master's port
    assert "61000" in value(cluster, "node2", "net.ipv4.ip_local_reserved_ports")  # HCCL's, on every npu node
    assert value(cluster, "node2", "net.core.somaxconn") != "64"
    run = out.split("applying run ")[1].split()[0]
    on_host = host_journal(cluster, "node3")
    assert on_host is not None
    journal_is_true(cluster, "node3", on_host)  # the host's journal is the true one
    copy = controller_copy(tmp_path, run, "node3")
    assert copy is not None and copy.complete is False
    order = ["planned", "intent", "done"]
    for mine, theirs in zip(copy.entries, on_host.entries, strict=True):  # the controller saw no more than happened
        assert order.index(mine.state) <= order.index(theirs.state)
    print(f"node3 lost: the host's journal says {on_host.outcome} {[e.state for e in on_host.entries]}, "
          f"the controller saw {[e.state for e in copy.entries]}")

    undone = fix(tmp_path, hosts, "--undo", "--yes")  # node3 is back: its own journal drives its undo
    assert undone.returncode == 0, undone.stdout + undone.stderr
    for node in ("node2", "node3"):
        assert value(cluster, node, "net.core.somaxconn") == "64"


def test_a_change_that_breaks_ssh_is_rolled_back(broken: NetnsCluster, tmp_path: Path) -> None:
    """The test injects into node2's saved plan a rule that drops new SSH connections (its undo deletes it): the
    fresh connection after node2's changes fails, and every change of the run on node2 is rolled back."""
    cluster = broken
    hosts = hosts_yaml(cluster, tmp_path)
    plan_file = tmp_path / "plan.json"
    planned = fix(tmp_path, hosts, "--plan-out", plan_file)
    assert planned.returncode == 1, planned.stdout + planned.stderr
    spec = ("INPUT", "-p", "tcp", "--dport", "22", "--syn", "-j", "DROP")
    cut = Change("node2", ("firewall.rules",), "firewall", "drops new SSH connections (injected by the test)",
                 commands=(("iptables", "-I", *spec[:1], "1", *spec[1:]),),
                 undo=Undo(commands=(("iptables", "-D", *spec),)))
    data = json.loads(plan_file.read_text())
    node2 = next(h for h in data["hosts"] if h["host"] == "node2")
    node2["changes"].append(cut.to_dict())
    plan_file.write_text(json.dumps(data))
    assert Plan.loads(plan_file.read_text()).host("node2") is not None
    before2 = snapshot(cluster)["node2"]

    done = fix(tmp_path, hosts, "--apply", plan_file, "--yes", "--connect-timeout", "3", "--max-failures", "2")
    out = done.stdout
    assert done.returncode == 4, out + done.stderr
    assert "node2: rolled back" in out and "a new connection works again" in out, out
    assert without_empty_tables(snapshot(cluster)["node2"]) == before2, "node2 is as it was"
    assert "--dport 22" not in cluster.exec("node2", ["iptables", "-S"]).stdout
    assert "node1: applied" in out and "node3: applied" in out
    assert value(cluster, "node3", "net.core.somaxconn") != "64"
    on_host = host_journal(cluster, "node2")
    assert on_host is not None and on_host.outcome == "rolled back"
    assert {(e.state, e.undo.by, e.undo.state) for e in on_host.entries if e.undo} == {("done", "rollback",
                                                                                        "undone")}
    assert len(on_host.entries) == sum(1 for e in on_host.entries if e.undo)


def test_a_read_only_proc_sys_gets_the_containers_remedy_and_nothing_half_done(broken: NetnsCluster,
                                                                                tmp_path: Path) -> None:
    """node3's /proc/sys read-only, as runc mounts it in a container: its sysctls are not set and its file is not
    written; the remedy printed is the container's; the other hosts are fixed."""
    cluster = broken
    hosts = hosts_yaml(cluster, tmp_path)
    before3 = snapshot(cluster)["node3"]
    cluster.read_only_proc_sys("node3")
    try:
        done = fix(tmp_path, hosts, "--apply", "--yes")
    finally:
        cluster.unhide_binary("node3", "/proc/sys")
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "node3: container" in out and "is read-only here (a container?)" in out, out
    assert "docker run --sysctl" in out or "securityContext" in out, out
    assert snapshot(cluster)["node3"] == before3, "node3 is as it was: nothing half done"
    assert "node1: applied" in out and "node2: applied" in out
    assert value(cluster, "node2", "net.core.somaxconn") != "64"
