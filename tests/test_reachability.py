"""net.reachability: planning and judging offline from recorded outputs, then real TCP on the namespace cluster."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import cluster_fixture
from netns_cluster import NetnsCluster

from preflight.batch import ProbeOutput
from preflight.checks.base import EvalContext, Facts, StepOutcome
from preflight.checks.net_reachability import ReachabilityCheck
from preflight.connect import parse_listeners, parse_results
from preflight.inventory import ClusterSpec, Host
from preflight.model import Status

CHECK = ReachabilityCheck()
OK_PYTHON = {"python": "3.11.7", "python_error": None}


def context(n: int, accelerator: str = "cpu", **params: Any) -> EvalContext:
    hosts = [Host(name=f"n{i}", address=f"10.0.0.{i}") for i in range(1, n + 1)]
    versions = {h.name: dict(OK_PYTHON) for h in hosts}
    return EvalContext(ClusterSpec(accelerator=accelerator, master="n1"), hosts,
                       {**CHECK.params, **params}, {"versions": versions})


def outcome(listeners: dict[str, list[dict[str, Any]]], results: dict[str, list[dict[str, Any]]]) -> StepOutcome:
    """Build a step outcome from what the listener and connector scripts print."""
    return StepOutcome(
        background={h: {"listen": ProbeOutput('{"ready": true}\n' + json.dumps({"listeners": e}) + "\n")}
                    for h, e in listeners.items()},
        foreground={h: {"connect": ProbeOutput(json.dumps({"results": r}) + "\n")} for h, r in results.items()})


def result(target: str, port: int, status: str) -> dict[str, Any]:
    return {"target": target, "address": "x", "port": port, "result": status, "ms": 1.0}


def test_plan_cpu_cluster_connects_everyone_to_the_master() -> None:
    ctx = context(4)
    facts: dict[str, Facts] = {h.name: {} for h in ctx.hosts}
    (step,) = CHECK.steps(facts, ctx)
    assert set(step.background) == {"n1"} and set(step.foreground) == {"n2", "n3", "n4"}
    assert "29500:3" in step.background["n1"][0].command
    assert "n1=10.0.0.1:29500" in step.foreground["n2"][0].command
    assert set(step.cleanup) == {"n1"}


def test_plan_npu_all_pairs_then_ring_for_large_clusters() -> None:
    small = context(3, "npu")
    plan, pattern = CHECK.pairs(small, [h.name for h in small.hosts])
    assert pattern == "every pair"
    hccl = {t.host: sources for t, sources in plan.items() if t.what == "HCCL base port"}
    assert hccl == {"n1": ["n2", "n3"], "n2": ["n1", "n3"], "n3": ["n1", "n2"]}
    large = context(40, "npu")
    plan, pattern = CHECK.pairs(large, [h.name for h in large.hosts])
    assert "ring" in pattern
    per_host = {t.host: s for t, s in plan.items() if t.what == "HCCL base port"}
    assert per_host["n1"] == ["n2", "n40"] and per_host["n7"] == ["n6", "n8"]
    assert sum(len(s) for s in plan.values()) == 39 + 80, "bounded: master from all, 2 ring peers each"


def test_hccl_port_and_address_come_from_the_host_env() -> None:
    hosts = [Host(name="a", address="1.1.1.1", env={"HCCL_IF_BASE_PORT": "61000", "HCCL_IF_IP": "2.2.2.2"}),
             Host(name="b", address="1.1.1.2")]
    ctx = EvalContext(ClusterSpec(accelerator="npu", master="a"), hosts, CHECK.params)
    targets = {(t.host, t.what): (t.address, t.port) for t in CHECK.targets(ctx, ["a", "b"])}
    assert targets[("a", "HCCL base port")] == ("2.2.2.2", 61000)
    assert targets[("b", "HCCL base port")] == ("1.1.1.2", 60000)


def test_judge_blames_the_target_when_nobody_gets_through() -> None:
    ctx = context(4)
    facts: dict[str, Facts] = {h.name: {} for h in ctx.hosts}
    done = outcome({"n1": [{"port": 29500, "expected": 3, "bound": True, "peers": []}]},
                   {h: [result("n1", 29500, "timeout")] for h in ("n2", "n3", "n4")})
    findings = CHECK.judge(facts, [done], ctx)
    assert {(f.host, f.status) for f in findings} == {("n1", Status.FAIL), ("n2", Status.PASS),
                                                      ("n3", Status.PASS), ("n4", Status.PASS)}
    bad = next(f for f in findings if f.status == Status.FAIL)
    assert "no host could connect to n1:29500" in bad.message and "DROP" in bad.message


def test_judge_names_a_single_blocked_pair() -> None:
    ctx = context(3)
    facts: dict[str, Facts] = {h.name: {} for h in ctx.hosts}
    done = outcome({"n1": [{"port": 29500, "expected": 2, "bound": True, "peers": ["10.0.0.2"]}]},
                   {"n2": [result("n1", 29500, "ok")], "n3": [result("n1", 29500, "refused")]})
    findings = CHECK.judge(facts, [done], ctx)
    bad = [f for f in findings if f.status == Status.FAIL]
    assert [(f.host, f.peer, f.observed) for f in bad] == [("n3", "n1", "refused")]
    assert {f.host for f in findings if f.status == Status.PASS} == {"n1", "n2"}


def test_judge_port_in_use_is_a_warning_not_a_false_pass() -> None:
    ctx = context(2)
    facts: dict[str, Facts] = {h.name: {} for h in ctx.hosts}
    done = outcome({"n1": [{"port": 29500, "expected": 1, "bound": False, "error": "EADDRINUSE", "peers": []}]},
                   {"n2": [result("n1", 29500, "ok")]})
    findings = CHECK.judge(facts, [done], ctx)
    assert [(f.host, f.status, f.observed) for f in findings] == [("n1", Status.WARN, "EADDRINUSE")]


def test_judge_host_without_python_is_an_error() -> None:
    ctx = context(2)
    ctx.other_facts["versions"]["n2"]["python_error"] = "sh: 1: python3: not found"
    facts: dict[str, Facts] = {h.name: {} for h in ctx.hosts}
    assert CHECK.steps(facts, ctx) == []
    findings = CHECK.judge(facts, [], ctx)
    assert [(f.host, f.status) for f in findings if f.status == Status.ERROR] == [("n2", Status.ERROR)]


def test_judge_a_lone_reachable_master_is_a_skip_that_says_why_not_silence() -> None:
    """The overlap's listener ran on the master, but every other host was unreachable: one skip that counts
    them (there used to be no net.reachability finding at all)."""
    ctx = context(3)
    facts: dict[str, Facts] = {"n1": {}}  # n2 and n3 unreachable: no facts
    listened = outcome({"n1": [{"port": 29500, "expected": 2, "bound": True, "peers": []}]}, {})
    for outcomes in ([listened], []):
        assert CHECK.steps(facts, ctx, done=outcomes) == []
        (skip,) = CHECK.judge(facts, outcomes, ctx)
        assert (skip.host, skip.status) == (None, Status.SKIP)
        assert skip.message.endswith("nothing to test (fewer than 2 hosts: 1 of 3 reachable with a working python)")
    (alone,) = CHECK.judge({"n1": {}}, [], context(1))
    assert alone.message.endswith("nothing to test (fewer than 2 hosts)")


@pytest.mark.parametrize("text", ["", "garbage\n", '{"results": 5}', '{"listeners": [1, "x"]}\n\xff', "[]"])
def test_parsers_never_raise(text: str) -> None:
    assert isinstance(parse_results(text), list) and isinstance(parse_listeners(text), list)


# --- on the namespace cluster -------------------------------------------------------------------

pytest_cluster = pytest.mark.cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=4, name="pfreach", subnet=7)


def run(cluster: NetnsCluster, tmp_path: Path, accelerator: str = "cpu") -> tuple[int, list[dict[str, Any]]]:
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"accelerator": accelerator})
    proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json",
                           "--checks", "net.reachability", "--report-dir", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode in (0, 1, 4), proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    return proc.returncode, [f for f in findings if f["check"] == "net.reachability"]


def iptables(cluster: NetnsCluster, node: str, *rule: str) -> None:
    cluster.exec(node, ["iptables", *rule])


def listening(cluster: NetnsCluster, port: int) -> list[str]:
    return [n.name for n in cluster.nodes
            if f":{port} " in cluster.exec(n, ["ss", "-Hltn"]).stdout]


@pytest_cluster
def test_healthy_cluster_reaches_everything_and_leaves_nothing_listening(cluster: NetnsCluster,
                                                                         tmp_path: Path) -> None:
    code, findings = run(cluster, tmp_path, "npu")
    assert code == 0
    assert {(f["host"], f["status"]) for f in findings} == {(f"node{i}", "pass") for i in range(1, 5)}
    assert listening(cluster, 29500) == [] and listening(cluster, 60000) == []


@pytest_cluster
def test_drop_on_the_masters_port_blames_the_master(cluster: NetnsCluster, tmp_path: Path) -> None:
    iptables(cluster, "node1", "-A", "INPUT", "-p", "tcp", "--dport", "29500", "-j", "DROP")
    try:
        code, findings = run(cluster, tmp_path)
    finally:
        iptables(cluster, "node1", "-F", "INPUT")
    assert code == 1
    bad = [f for f in findings if f["status"] == "fail"]
    assert [(f["host"], f["observed"]) for f in bad] == [("node1", "3/3 hosts: timeout")]
    assert listening(cluster, 29500) == []


@pytest_cluster
def test_reject_from_one_source_names_the_pair(cluster: NetnsCluster, tmp_path: Path) -> None:
    source = cluster.node("node3").address
    iptables(cluster, "node1", "-A", "INPUT", "-p", "tcp", "-s", source, "--dport", "29500", "-j", "REJECT")
    try:
        code, findings = run(cluster, tmp_path)
    finally:
        iptables(cluster, "node1", "-F", "INPUT")
    assert code == 1
    bad = [(f["host"], f.get("peer"), f["observed"]) for f in findings if f["status"] == "fail"]
    assert bad == [("node3", "node1", "refused")]


@pytest_cluster
def test_hccl_port_dropped_on_one_npu_host(cluster: NetnsCluster, tmp_path: Path) -> None:
    iptables(cluster, "node4", "-A", "INPUT", "-p", "tcp", "--dport", "60000:60015", "-j", "DROP")
    try:
        code, findings = run(cluster, tmp_path, "npu")
    finally:
        iptables(cluster, "node4", "-F", "INPUT")
    assert code == 1
    bad = [f for f in findings if f["status"] == "fail"]
    assert [(f["host"], f["observed"]) for f in bad] == [("node4", "3/3 hosts: timeout")]
    assert "node4:60000 (HCCL base port)" in bad[0]["message"]


def test_overlap_runs_the_master_port_test_inside_the_gather() -> None:
    ctx = context(4)
    plan = CHECK.overlap(ctx, window=70.0)
    assert plan is not None and plan.server == "n1" and set(plan.clients) == {"n2", "n3", "n4"}
    (listen,) = plan.server_probes
    assert "29500:3" in listen.command and " 70.0 " in listen.command and listen.timeout == 75.0
    connect = plan.clients["n2"][0].command
    assert "/dev/tcp/" in connect and "10.0.0.1" in connect and "29500" in connect and "n1=10.0.0.1:29500" in connect
    assert plan.ready == '{"ready": true}' and plan.cleanup[0].command.startswith("pkill -TERM -f ")
    assert CHECK.overlap(context(1), window=70.0) is None, "nobody to connect"


def test_steps_leave_out_what_the_overlap_covered() -> None:
    ctx = context(3, "npu")
    facts: dict[str, Facts] = {h.name: {} for h in ctx.hosts}
    covered = outcome({"n1": [{"port": 29500, "expected": 2, "bound": True, "peers": ["10.0.0.2", "10.0.0.3"]}]},
                      {h: [result("n1", 29500, "ok")] for h in ("n2", "n3")})
    (step,) = CHECK.steps(facts, ctx, done=[covered])
    assert not any("29500" in p.command for probes in step.background.values() for p in probes)
    assert all("60000:2" in p.command for probes in step.background.values() for p in probes)
    assert CHECK.steps(facts, context(3), done=[covered]) == [], "cpu: nothing left after the overlap"
    silent = outcome({"n1": []}, {})  # the overlap's listener reported nothing: the step tests the port again
    (again,) = CHECK.steps(facts, context(3), done=[silent])
    assert "29500:2" in again.background["n1"][0].command


def test_judge_merges_the_overlap_and_the_steps() -> None:
    ctx = context(2, "npu")
    facts: dict[str, Facts] = {h.name: {} for h in ctx.hosts}
    master = outcome({"n1": [{"port": 29500, "expected": 1, "bound": True, "peers": ["10.0.0.2"]}]},
                     {"n2": [result("n1", 29500, "ok")]})
    hccl = outcome({h: [{"port": 60000, "expected": 1, "bound": True, "peers": ["x"]}] for h in ("n1", "n2")},
                   {"n1": [result("n2", 60000, "ok")], "n2": [result("n1", 60000, "timeout")]})
    findings = CHECK.judge(facts, [master, hccl], ctx)
    assert [(f.host, f.status, f.peer) for f in findings if f.status != Status.PASS] == [("n2", Status.FAIL, "n1")]
    assert "all 3 connection tests involving n1" in next(f.message for f in findings if f.host == "n1")
