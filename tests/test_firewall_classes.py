"""Grouping peers into classes (``Topology.peer_classes``) finds exactly what one path list per peer finds,
while the work per host is per class: the firewall check stays linear in the host count."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from preflight.context import EvalContext
from preflight.firewall.analysis import Evaluator, analyze, by_peer
from preflight.firewall.iptables_rules import compile_iptables
from preflight.firewall.targets import Target
from preflight.firewall.topology import Topology
from preflight.inventory import ClusterSpec, Host

RULES = [
    [],
    ["-A INPUT -p tcp --dport 29500 -j DROP"],
    ["-A INPUT -s 10.0.0.0/28 -p tcp --dport 29500 -j REJECT"],
    ["-A INPUT -s 10.0.1.7/32 -j DROP", "-A INPUT -i eth1 -p tcp --dport 40000:40100 -j DROP"],
]
TARGETS = [Target("master", "master port", ((29500, 29500),)),
           Target("ephemeral", "ephemeral range", ((32768, 60999),))]


def cluster(size: int) -> tuple[dict[str, Any], EvalContext]:
    """Hosts on 10.0.0.0/24 (eth0); every third also on 10.0.1.0/24 (eth1); every fifth only on a routed
    10.9.x.0/24 (no shared subnet: the fallback path); every fourth picks eth1 with NCCL_SOCKET_IFNAME."""
    facts: dict[str, Any] = {}
    hosts = []
    for i in range(1, size + 1):
        name = f"n{i}"
        if i % 5 == 0:
            addresses = [{"iface": "eth0", "address": f"10.9.{i}.1/24", "scope": "global"}]
        else:
            addresses = [{"iface": "eth0", "address": f"10.0.0.{i}/24", "scope": "global"}]
            if i % 3 == 0:
                addresses.append({"iface": "eth1", "address": f"10.0.1.{i}/24", "scope": "global"})
        facts[name] = {"addresses": addresses}
        env = {"NCCL_SOCKET_IFNAME": "eth1"} if i % 4 == 0 else {}
        hosts.append(Host(name=name, address=f"10.0.0.{i}" if i % 5 else f"10.9.{i}.1", env=env))
    return facts, EvalContext(ClusterSpec(master="n1"), hosts)


def summary(issues: list[Any]) -> set[tuple[Any, ...]]:
    return {(i.target.kind, i.blocked, tuple(i.ports), tuple(sorted(i.peers)), tuple(sorted(i.paths)),
             tuple(r.text for r in i.rules)) for i in issues}


@pytest.mark.parametrize("rules", RULES, ids=["none", "drop-master", "src-subnet", "src-host-and-iface"])
def test_classes_find_what_per_peer_paths_find(rules: list[str]) -> None:
    facts, ctx = cluster(31)
    topology = Topology(facts, ctx)
    evaluator = Evaluator([compile_iptables({"rules": rules}, "iptables", "ipv4")])
    for name in facts:
        per_peer = analyze(evaluator, TARGETS, by_peer(topology.paths(name)))
        grouped = analyze(evaluator, TARGETS, topology.peer_classes(name, evaluator.src_class, evaluator))
        assert summary(grouped) == summary(per_peer), name
    if rules:
        assert any(analyze(evaluator, TARGETS, by_peer(topology.paths(n))) for n in facts), "the rules drop something"


def test_classes_are_few_on_a_uniform_cluster() -> None:
    facts = {f"n{i}": {"addresses": [{"iface": "eth0", "address": f"10.1.{i // 250}.{i % 250 + 1}/16",
                                      "scope": "global"}]} for i in range(2000)}
    ctx = EvalContext(ClusterSpec(master="n0"), [Host(name=n, address=n) for n in facts])
    topology = Topology(facts, ctx)
    evaluator = Evaluator([compile_iptables({"rules": ["-A INPUT -p tcp --dport 29500 -j DROP"]}, "iptables",
                                            "ipv4")])
    counts = {len(topology.peer_classes(n, evaluator.src_class, evaluator)) for n in itertools.islice(facts, 50)}
    assert counts == {1}, "every peer looks the same to rules without source conditions: one class"
    [(paths, peers)] = topology.peer_classes("n7", evaluator.src_class, evaluator)
    assert len(list(peers)) == 1999 and "n7" not in set(peers)
