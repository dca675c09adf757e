"""preflight fix's firewall openings, for real, on the namespace cluster's iptables and nftables.

An npu cluster (HCCL_IF_BASE_PORT=61000: HCCL's 16 host ports 61000-61015) whose master drops the master port and
the HCCL ports with iptables, a node that drops the HCCL ports with nftables, next to rules fix must leave alone (a
DROP of port 9999, a docker-like chain, an nft table of another program). The checks run as ``run`` runs them (in
process: the plan needs the facts), the changes are built, their commands run in the nodes (each argv as it is,
no shell), the checks run again, then the undo commands run and the rulesets must be byte for byte what they were.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import cluster_fixture
from netns_cluster import NetnsCluster

from preflight.app.run import RunRequest, prepare, run_cluster
from preflight.context import EvalContext
from preflight.fix.firewall import firewall_changes
from preflight.fix.firewall_commands import handle_lookup, resolve_undo
from preflight.fix.model import Change
from preflight.model import Finding

pytestmark = pytest.mark.cluster

NODES = ["node1", "node2", "node3"]
RUN = "20260101T000000Z-beef"
HCCL = {"HCCL_IF_BASE_PORT": "61000"}

OTHER_TABLE = """table ip other {
 chain forward_other {
  type filter hook forward priority 0; policy accept;
  tcp dport 8080 drop
 }
}
"""
NFT_DROPS = """table inet pffw {
 chain input {
  type filter hook input priority 0; policy accept;
  tcp dport 9999 drop
  tcp dport 61000-61015 drop
 }
}
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=3, name="pffxw", subnet=47)


def _reset(cluster: NetnsCluster) -> None:
    for node in cluster.nodes:
        for tool in ("iptables", "ip6tables"):
            for argv in (["-F"], ["-X"], ["-P", "INPUT", "ACCEPT"]):
                cluster.exec(node, [tool, *argv], check=False)
        cluster.exec(node, ["nft", "flush", "ruleset"])


@pytest.fixture
def blocked(cluster: NetnsCluster) -> Iterator[NetnsCluster]:
    """node1 (the master) drops 29500 and 61000-61015 with iptables, node2 61000-61015 with nftables; both also
    hold rules that are none of fix's business."""
    _reset(cluster)
    ipt = [["-A", "INPUT", "-p", "tcp", "--dport", "9999", "-j", "DROP"],
           ["-N", "DOCKER-LIKE"], ["-A", "DOCKER-LIKE", "-p", "tcp", "--dport", "8080", "-j", "DROP"],
           ["-A", "DOCKER-LIKE", "-j", "RETURN"], ["-A", "FORWARD", "-j", "DOCKER-LIKE"],
           ["-A", "INPUT", "-p", "tcp", "--dport", "29500", "-j", "DROP"],
           ["-A", "INPUT", "-p", "tcp", "--dport", "61000:61015", "-j", "DROP"]]
    for argv in ipt:
        cluster.exec("node1", ["iptables", *argv])
    cluster.exec("node1", ["nft", "-f", "-"], input=OTHER_TABLE)
    cluster.exec("node2", ["nft", "-f", "-"], input=NFT_DROPS + OTHER_TABLE)
    try:
        yield cluster
    finally:
        _reset(cluster)


def gather(cluster: NetnsCluster, tmp_path: Path) -> tuple[list[Finding], EvalContext]:
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"accelerator": "npu"},
                                     extra_defaults={"env": HCCL})
    request = RunRequest(hosts=hosts, checks=("firewall", "net.reachability"))
    engine = prepare(request)
    result = run_cluster(request, engine)
    ctx = EvalContext(engine.inventory.cluster, engine.inventory.hosts, {}, engine.facts()[0])
    return list(result.report.findings), ctx


def status(findings: list[Finding], check: str) -> dict[str, str]:
    return {f.host or "": f.status.value for f in findings if f.check == check}


def rulesets(cluster: NetnsCluster) -> dict[str, tuple[str, str, str]]:
    """Each node's rules (packet counters left out: the reachability probes hit the drops)."""
    def listed(node: str) -> str:
        listing = cluster.exec(node, ["nft", "-a", "list", "ruleset"]).stdout
        return re.sub(r"counter packets \d+ bytes \d+", "counter", listing)
    return {n: (cluster.exec(n, ["iptables", "-S"]).stdout, cluster.exec(n, ["ip6tables", "-S"]).stdout, listed(n))
            for n in NODES}


def plan(findings: list[Finding], ctx: EvalContext) -> dict[str, list[Change]]:
    return {n: [c for c in firewall_changes(n, findings, ctx, RUN) if c.applicable] for n in NODES}


def test_openings_apply_verify_and_undo_exactly(blocked: NetnsCluster, tmp_path: Path) -> None:
    cluster = blocked
    before = rulesets(cluster)
    findings, ctx = gather(cluster, tmp_path)
    assert status(findings, "firewall.rules") == {"node1": "fail", "node2": "fail", "node3": "pass"}
    assert "fail" in status(findings, "net.reachability").values()

    changes = plan(findings, ctx)
    subnet = "10.213.47.0/24"
    tail = ["-m", "comment", "--comment", f"preflight-fix:{RUN}", "-j", "ACCEPT"]
    assert [list(argv) for c in changes["node1"] for argv in c.commands] == [
        ["iptables", "-I", "INPUT", "2", "-p", "tcp", "-s", subnet, "--dport", "29500", *tail],
        ["iptables", "-I", "INPUT", "4", "-p", "tcp", "-s", subnet, "--dport", "61000:61015", *tail]]
    assert [list(argv) for c in changes["node2"] for argv in c.commands] == [
        ["nft", "insert", "rule", "inet", "pffw", "input", "position", "3", "ip", "saddr", subnet, "tcp", "dport",
         "61000-61015", "accept", "comment", f'"preflight-fix:{RUN}"']]
    assert changes["node3"] == []
    assert rulesets(cluster) == before, "planning changes nothing"

    undo: dict[str, list[tuple[str, ...]]] = {}
    for node in NODES:  # apply: each argv as it is, in the node (the executor's framed script quotes each word)
        for change in changes[node]:
            for argv in change.commands:
                cluster.exec(node, list(argv))
        commands = [argv for change in reversed(changes[node]) for argv in change.undo.commands]
        listings = {lookup: cluster.exec(node, list(lookup)).stdout
                    for argv in commands if (lookup := handle_lookup(argv)) is not None}
        undo[node], missing = resolve_undo(commands, listings, RUN)
        assert missing == []
    applied = rulesets(cluster)
    assert '"preflight-fix:' in applied["node1"][0] and "preflight-fix:" in applied["node2"][2]

    findings, ctx = gather(cluster, tmp_path)
    assert status(findings, "firewall.rules") == dict.fromkeys(NODES, "pass")
    assert set(status(findings, "net.reachability").values()) == {"pass"}, \
        [f.message for f in findings if f.check == "net.reachability" and f.status.value != "pass"]
    assert plan(findings, ctx) == dict.fromkeys(NODES, []), "applying twice changes nothing"
    assert "-A INPUT -p tcp -m tcp --dport 9999 -j DROP" in applied["node1"][0], "other rules untouched"

    for node in NODES:
        for argv in undo[node]:
            cluster.exec(node, list(argv))
    assert rulesets(cluster) == before, "undo takes out exactly the rules added"
    findings, _ = gather(cluster, tmp_path)
    assert status(findings, "firewall.rules") == {"node1": "fail", "node2": "fail", "node3": "pass"}


def test_policy_drop_gets_the_job_ports_only(cluster: NetnsCluster, tmp_path: Path) -> None:
    """iptables INPUT policy DROP (SSH let in), nft chain policy drop: the ACCEPT for the master port and HCCL's
    ports goes at the chain's end (before the policy, never a change of it); the ephemeral range is printed."""
    _reset(cluster)
    try:
        for rule in (["-A", "INPUT", "-p", "tcp", "--dport", "22", "-j", "ACCEPT"],
                     ["-A", "INPUT", "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"],
                     ["-P", "INPUT", "DROP"]):
            cluster.exec("node1", ["iptables", *rule])
        cluster.exec("node2", ["nft", "-f", "-"], input="table inet pol {\n chain input {\n  type filter hook input "
                     "priority 0; policy drop;\n  tcp dport 22 accept\n  ct state established,related accept\n"
                     " }\n}\n")
        before = rulesets(cluster)
        findings, ctx = gather(cluster, tmp_path)
        made = {n: firewall_changes(n, findings, ctx, RUN) for n in NODES}
        node1 = [c for c in made["node1"] if c.applicable]
        assert [argv[:4] for c in node1 for argv in c.commands] == [("iptables", "-I", "INPUT", "3")]
        assert any(c.kind == "print" and "ephemeral range" in c.summary for c in made["node1"])
        assert [argv[:6] for c in made["node2"] if c.applicable for argv in c.commands] == [
            ("nft", "add", "rule", "inet", "pol", "input")]
        for node in ("node1", "node2"):
            for change in made[node]:
                for argv in change.commands:
                    cluster.exec(node, list(argv))
        findings, _ = gather(cluster, tmp_path)
        rules = {f.host: f.message for f in findings if f.check == "firewall.rules"}
        assert "29500 (master port)" not in rules["node1"] and "61000-61015 (HCCL" not in rules["node1"]
        assert "61000-61015 (HCCL" not in rules["node2"] and "ephemeral range" in rules["node2"]
        for node in ("node1", "node2"):
            commands = [argv for change in reversed(made[node]) for argv in change.undo.commands]
            listings = {lookup: cluster.exec(node, list(lookup)).stdout
                        for argv in commands if (lookup := handle_lookup(argv)) is not None}
            for argv in resolve_undo(commands, listings, RUN)[0]:
                cluster.exec(node, list(argv))
        assert rulesets(cluster) == before
    finally:
        _reset(cluster)
