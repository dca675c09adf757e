"""hccn.reachability: planning and judging offline from recorded outputs, then real runs on the namespace
cluster with the simulated hccn_tool (a device IP answers a ping when it is in the pinging node's
``reachable`` list)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from ascend_sim import healthy_state, install, simulated_cluster, uninstall, write_state
from conftest import cluster_fixture
from netns_cluster import NetnsCluster

from preflight.batch import ProbeOutput
from preflight.checks.base import EvalContext, Facts, StepOutcome
from preflight.checks.hccn_reachability import HccnReachabilityCheck, ping_result, ring_pairs
from preflight.inventory import ClusterSpec, Host
from preflight.model import Status

CHECK = HccnReachabilityCheck()
TOOL = "/usr/local/Ascend/driver/tools/hccn_tool"


def ip_of(host: int, dev: int) -> str:
    return f"192.168.{host}.{10 + dev}"


def context(n: int, accelerator: str = "npu", **params: Any) -> EvalContext:
    hosts = [Host(name=f"n{i}", address=f"10.0.0.{i}") for i in range(1, n + 1)]
    return EvalContext(ClusterSpec(accelerator=accelerator, master="n1", devices_per_host=2), hosts,
                       {**CHECK.params, **params})


def gathered(n: int, devices: int = 2) -> dict[str, Facts]:
    return {f"n{i}": {"tool": TOOL, "looked": None, "error": None,
                      "devices": {str(d): {"ip": ip_of(i, d), "error": None} for d in range(devices)}}
            for i in range(1, n + 1)}


PING_OK = ("device {d} PING {ip}\nrecv seq=0,time=0.067000ms\nrecv seq=1,time=0.057000ms\n"
           "recv seq=2,time=0.047000ms\n3 packets transmitted, 3 received, 0.00% packet loss")
PING_LOST = ("device {d} PING {ip}\nrecv time out seq=0\nrecv time out seq=1\nrecv time out seq=2\n"
             "3 packets transmitted, 0 received, 100.00% packet loss")


def pinged(ctx: EvalContext, facts: dict[str, Facts], dead: set[tuple[str, str, int]] | None = None,
           lossy: set[tuple[str, str, int]] | None = None) -> StepOutcome:
    """What every host's ping script prints for the plan; pairs in ``dead`` get no reply, ``lossy`` lose one."""
    dead, lossy = dead or set(), lossy or set()
    plan, _ = CHECK.plan(facts, ctx)
    text: dict[str, str] = {}
    for source, target, dev in plan:
        ip = ip_of(int(target[1:]), dev)
        if (source, target, dev) in dead:
            body, rc = PING_LOST.format(d=dev, ip=ip), 1
        elif (source, target, dev) in lossy:
            body, rc = PING_OK.format(d=dev, ip=ip).replace("3 received", "2 received"), 0
        else:
            body, rc = PING_OK.format(d=dev, ip=ip), 0
        text[source] = text.get(source, f"@@tool {TOOL}\n") + f"@@call {dev} {ip}\n{body}\n\n@@rc {dev} {rc}\n"
    return StepOutcome(background={}, foreground={h: {"ping": ProbeOutput(t)} for h, t in text.items()})


def statuses(findings: list[Any]) -> list[tuple[str | None, str, int | None, str | None]]:
    return sorted((f.host, f.status.value, f.device, f.peer) for f in findings if f.status != Status.PASS)


# --- offline ----------------------------------------------------------------------------------------


def test_ring_pairs_all_pairs_once_and_two_rings() -> None:
    hosts = [f"h{i}" for i in range(6)]
    every = ring_pairs(hosts, all_pairs=True)
    assert len(every) == 15 and len({frozenset(p) for p in every}) == 15
    rings = ring_pairs([f"h{i}" for i in range(40)], all_pairs=False)
    assert len(rings) == 40 + 20, "a ring of 40 plus 20 diameters (offset 20 pairs each host with one other)"
    sent: dict[str, int] = {}
    for source, _ in rings:
        sent[source] = sent.get(source, 0) + 1
    assert set(sent.values()) == {1, 2}, "at most two pings per device, whatever the cluster size"
    assert ring_pairs(["a"], True) == [] and ring_pairs(["a", "b"], False) == [("a", "b")]


def test_plan_uses_rings_beyond_all_pairs_max_hosts() -> None:
    facts = gathered(12)
    plan, pattern = CHECK.plan(facts, context(12))
    assert "two rings" in pattern and "6 ahead" in pattern and len(plan) == (12 + 6) * 2
    plan, pattern = CHECK.plan(facts, context(12, all_pairs_max_hosts=16))
    assert pattern == "every pair of same-position devices" and len(plan) == 66 * 2


def test_steps_ping_same_position_peers_only() -> None:
    ctx = context(3)
    (step,) = CHECK.steps(gathered(3), ctx)
    assert step.background == {} and set(step.foreground) == {"n1", "n2", "n3"}, "circle: n1->n2->n3->n1"
    script = step.foreground["n1"][0].command
    for dev in (0, 1):
        assert f"pf_call {dev} {ip_of(2, dev)} -ping -g address {ip_of(2, dev)}" in script
    assert ip_of(3, 0) not in script and ip_of(2, 0) not in step.foreground["n2"][0].command
    assert CHECK.steps(gathered(3), context(3, "gpu")) == []


def test_steps_skip_devices_without_ip_and_hosts_without_tool() -> None:
    facts = gathered(3)
    facts["n2"]["devices"]["1"] = {"ip": None, "error": "no IP is configured on the device"}
    facts["n3"] = {"tool": None, "looked": ["PATH", TOOL], "error": None, "devices": {}}
    plan, _ = CHECK.plan(facts, context(3))
    assert plan == [("n1", "n2", 0)]
    findings = CHECK.judge(facts, [pinged(context(3), facts)], context(3))
    assert statuses(findings) == [("n2", "error", 1, None), ("n3", "error", None, None)]
    assert {f.host for f in findings if f.status == Status.PASS} == {"n1", "n2"}


def test_judge_healthy_passes_every_host_and_names_the_pattern() -> None:
    ctx, facts = context(4), gathered(4)
    findings = CHECK.judge(facts, [pinged(ctx, facts)], ctx)
    assert [(f.host, f.status) for f in findings] == [(f"n{i}", Status.PASS) for i in range(1, 5)]
    assert "every pair of same-position devices" in findings[0].message


def test_judge_names_a_failing_pair() -> None:
    ctx, facts = context(4), gathered(4)
    findings = CHECK.judge(facts, [pinged(ctx, facts, dead={("n2", "n3", 1)})], ctx)
    (bad,) = [f for f in findings if f.status != Status.PASS]
    assert (bad.host, bad.status, bad.device, bad.peer, bad.peer_device) == ("n2", Status.FAIL, 1, "n3", 1)
    assert ip_of(3, 1) in bad.message and bad.observed == "0/3 received"
    assert {f.host for f in findings if f.status == Status.PASS} == {"n1", "n3", "n4"}


def test_judge_blames_a_device_nobody_reaches_once() -> None:
    ctx, facts = context(4), gathered(4)
    plan, _ = CHECK.plan(facts, ctx)
    dead = {p for p in plan if p[2] == 0 and "n4" in p[:2]}
    assert len(dead) == 3
    findings = CHECK.judge(facts, [pinged(ctx, facts, dead=dead)], ctx)
    assert statuses(findings) == [("n4", "fail", 0, None)]
    assert "reaches none of its 3 peers" in next(f for f in findings if f.status == Status.FAIL).message


def test_judge_packet_loss_warns_and_missing_output_is_an_error() -> None:
    ctx, facts = context(3), gathered(3)
    findings = CHECK.judge(facts, [pinged(ctx, facts, lossy={("n1", "n2", 0)})], ctx)
    assert statuses(findings) == [("n1", "warn", 0, "n2")]
    findings = CHECK.judge(facts, [StepOutcome({}, {"n1": {"ping": ProbeOutput("")}})], ctx)
    assert {f.status for f in findings if f.host in ("n1", "n2")} == {Status.ERROR}


def test_judge_skips_non_npu_and_single_host() -> None:
    assert [(f.host, f.status) for f in CHECK.judge(gathered(2), [], context(2, "gpu"))] == [(None, Status.SKIP)]
    assert [(f.host, f.status) for f in CHECK.judge(gathered(1), [], context(1))] == [(None, Status.SKIP)]


def test_parse_ip_facts_and_errors() -> None:
    out = (f"@@tool {TOOL}\n@@call 0 ip\nipaddr:192.168.1.10\nnetmask:255.255.255.0\n\n@@rc 0 0\n"
           "@@call 1 ip\nGet ipconf failed, because no ip was preset there!\n\n@@rc 1 13\n"
           "@@call 2 ip\nipaddr:999.1.1.1\n\n@@rc 2 0\n@@call 3 ip\nhccn_tool is bus")
    facts = CHECK.parse({"ip": ProbeOutput(out)})
    assert facts["tool"] == TOOL and facts["devices"] == {
        "0": {"ip": "192.168.1.10", "error": None},
        "1": {"ip": None, "error": "no IP is configured on the device"},
        "2": {"ip": None, "error": "unrecognised output: ipaddr:999.1.1.1"},
        "3": {"ip": None, "error": "the call did not finish (no exit status)"}}
    missing = CHECK.parse({"ip": ProbeOutput(f"@@missing PATH {TOOL}\n")})
    assert missing["tool"] is None and missing["looked"] == ["PATH", TOOL]


@pytest.mark.parametrize("text", ["", "garbage\n", "@@call x y\n", "@@rc 1 2\n\xff", "@@call 0 ip\n@@call 0 ip\n"])
def test_parsers_never_raise(text: str) -> None:
    assert isinstance(CHECK.parse({"ip": ProbeOutput(text, "", 1)}), dict)
    assert ping_result(text, 1)[0].startswith("error")


# --- on the namespace cluster -------------------------------------------------------------------------

DEVICES = 4


def node_state(k: int, unreachable: set[str] | None = None) -> dict[str, Any]:
    """Node k's simulator state: every other node's device IPs answer, except ``unreachable``."""
    unreachable = unreachable or set()
    state = healthy_state("910B3", [ip_of(k, d) for d in range(DEVICES)])
    state["reachable"] = [ip_of(j, d) for j in range(1, 5) for d in range(DEVICES)
                          if j != k and ip_of(j, d) not in unreachable]
    return state


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from simulated_cluster(cluster_fixture, tmp_path_factory, 4, "pfhreach", 15, node_state)


def run(cluster: NetnsCluster, tmp_path: Path, **params: Any) -> tuple[int, list[dict[str, Any]]]:
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"accelerator": "npu",
                                                                         "devices_per_host": DEVICES})
    if params:
        doc = yaml.safe_load(hosts.read_text())
        doc["checks"] = {"hccn": params}
        hosts.write_text(yaml.safe_dump(doc, sort_keys=False))
    proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json",
                           "--checks", "hccn.reachability", "--report-dir", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode in (0, 1, 4), proc.stderr
    return proc.returncode, [f for f in json.loads(proc.stdout)["findings"] if f["check"] == "hccn.reachability"]


def restore(cluster: NetnsCluster) -> None:
    for k in range(1, 5):
        write_state(cluster, f"node{k}", node_state(k))


def bad(findings: list[dict[str, Any]]) -> list[tuple[str, str, Any, Any, Any]]:
    return sorted((f["host"], f["status"], f.get("device"), f.get("peer"), f.get("peer_device"))
                  for f in findings if f["status"] != "pass")


@pytest.mark.cluster
def test_cluster_healthy_every_pair_then_two_rings(cluster: NetnsCluster, tmp_path: Path) -> None:
    code, findings = run(cluster, tmp_path)
    assert code == 0, bad(findings)
    assert sorted((f["host"], f["status"]) for f in findings) == [(f"node{i}", "pass") for i in range(1, 5)]
    assert "every pair of same-position devices" in findings[0]["message"]
    code, findings = run(cluster, tmp_path, all_pairs_max_hosts=2)
    assert code == 0 and "two rings" in findings[0]["message"]


@pytest.mark.cluster
def test_cluster_unreachable_pair_is_named(cluster: NetnsCluster, tmp_path: Path) -> None:
    write_state(cluster, "node2", node_state(2, {ip_of(3, 1)}))
    write_state(cluster, "node3", node_state(3, {ip_of(2, 1)}))
    try:
        code, findings = run(cluster, tmp_path)
    finally:
        restore(cluster)
    assert code == 1
    assert bad(findings) == [("node2", "fail", 1, "node3", 1)]
    assert {f["host"] for f in findings if f["status"] == "pass"} == {"node1", "node3", "node4"}


@pytest.mark.cluster
def test_cluster_isolated_device_is_blamed_once(cluster: NetnsCluster, tmp_path: Path) -> None:
    dead = ip_of(4, 0)
    for k in range(1, 4):
        write_state(cluster, f"node{k}", node_state(k, {dead}))
    isolated = node_state(4)
    isolated["devices"][0]["link"] = "DOWN"
    write_state(cluster, "node4", isolated)
    try:
        code, findings = run(cluster, tmp_path)
    finally:
        restore(cluster)
    assert code == 1
    assert bad(findings) == [("node4", "fail", 0, None, None)]


@pytest.mark.cluster
def test_cluster_missing_tool_and_missing_ip(cluster: NetnsCluster, tmp_path: Path) -> None:
    uninstall(cluster, "node3")
    no_ip = node_state(1)
    no_ip["devices"][2]["ip"] = None
    write_state(cluster, "node1", no_ip)
    try:
        code, findings = run(cluster, tmp_path)
    finally:
        install(cluster, "node3", node_state(3))
        restore(cluster)
    assert code == 4
    assert bad(findings) == [("node1", "error", 2, None, None), ("node3", "error", None, None, None)]
    assert {f["host"] for f in findings if f["status"] == "pass"} == {"node1", "node2", "node4"}
