"""``preflight fix``'s plan, pure: the checks' own evaluate fixtures (tests/fixtures/sysctl, ports, firewall) judged
by the checks, then planned (preflight.fix.policy) over the sysctl files of tests/fixtures/fix/state."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from preflight.checks import all_checks
from preflight.checks.base import ClusterSpec, EvalContext, Finding, Host, Status
from preflight.fix import policy
from preflight.fix.model import Plan
from preflight.fix.render import render_plan
from preflight.fix.sysctl import STATE_KEY, parse_state
from preflight.ports import SYSCTL_CONF, parse_port_list, uncovered

FIXTURES = Path(__file__).parent / "fixtures"
CHECKS = {c.ident: c for c in all_checks()}


def state(name: str) -> dict[str, Any]:
    """A host's fix.state facts from tests/fixtures/fix/state/<name>.json."""
    parsed: dict[str, Any] = json.loads((FIXTURES / "fix" / "state" / f"{name}.json").read_text())["state"]
    return parsed


def judged(*cases: tuple[str, str], states: Mapping[str, str] | None = None,
           extra: Mapping[str, Mapping[str, Any]] | None = None) -> tuple[list[Finding], EvalContext]:
    """The findings of each (check, evaluate fixture) as the check judges it, and the context the plan reads:
    every check's facts, and each host's sysctl files (``states``: host -> state fixture, default Debian 12)."""
    findings: list[Finding] = []
    facts: dict[str, dict[str, Any]] = {key: dict(value) for key, value in (extra or {}).items()}
    hosts: dict[str, Host] = {}
    cluster = ClusterSpec()
    for ident, name in cases:
        fixture = json.loads((FIXTURES / ident / "evaluate" / f"{name}.json").read_text())
        check = CHECKS[ident]
        env = fixture.get("env", {})
        for n in fixture["facts_by_host"]:
            hosts.setdefault(n, Host(name=n, address=n, env=env.get(n, {})))
        cluster = ClusterSpec(**{"master": next(iter(hosts)), **fixture.get("cluster", {})})
        other = {**fixture.get("other_facts", {}), **facts}
        ctx = EvalContext(cluster, list(hosts.values()), {**check.params, **fixture.get("params", {})}, other)
        findings += check.evaluate(fixture["facts_by_host"], ctx)
        facts.setdefault(check.ident, {}).update(fixture["facts_by_host"])
    facts[STATE_KEY] = {h: state((states or {}).get(h, "debian12_recorded")) for h in hosts}
    return findings, EvalContext(cluster, list(hosts.values()), {}, facts)


def plan_of(findings: list[Finding], ctx: EvalContext) -> Plan:
    return policy.plan(findings, ctx, run_id="r1", created="2025-01-01T00:00:00+00:00")


def changes(plan: Plan, host: str) -> list[Any]:
    found = plan.host(host)
    return list(found.changes) if found else []


@pytest.mark.parametrize("path", sorted((FIXTURES / "fix" / "state").glob("*.json")), ids=lambda p: p.stem)
def test_state_fixtures_parse(path: Path) -> None:
    fixture = json.loads(path.read_text())
    assert fixture["source"]
    assert parse_state(fixture["output"]) == fixture["state"]
    assert not fixture["state"]["unread"]


def test_low_somaxconn_on_one_host_is_written_and_loaded() -> None:
    findings, ctx = judged(("sysctl", "somaxconn_low_on_one_host"))
    plan = plan_of(findings, ctx)
    assert changes(plan, "n1") == []
    [change] = changes(plan, "n2")
    wrong = next(f for f in findings if f.host == "n2" and f.check == "sysctl.somaxconn")
    value = "1024"  # 2 x 512 ranks: the value the check's own remedy names
    assert f"net.core.somaxconn={value}" in (wrong.remedy or "")
    assert (change.kind, change.fixes, change.expect) == ("sysctl", ("sysctl.somaxconn",),
                                                          (("net.core.somaxconn", value),))
    assert change.commands == (("sysctl", "-p", SYSCTL_CONF),)
    [edit] = change.files
    assert (edit.path, edit.before) == (SYSCTL_CONF, None)
    assert edit.after.endswith(f"net.core.somaxconn = {value}\n")
    assert change.undo.files == ((SYSCTL_CONF, None),) and change.undo.values == (("net.core.somaxconn", "128"),)
    assert change.verify == ("sysctl.somaxconn",)
    text = render_plan(plan)
    assert "== n2 (1 host)" in text and "+net.core.somaxconn = 1024" in text and "$ sysctl -p " in text
    assert "== n1" not in text and "1 host with nothing to do" in text


def test_two_keys_on_one_host_edit_the_file_in_turn() -> None:
    findings, ctx = judged(("sysctl", "stock_kernel_npu_cluster_warns"))
    first, second = changes(plan_of(findings, ctx), "n1")
    assert [c.expect[0] for c in (first, second)] == [("net.core.somaxconn", "65535"),
                                                      ("net.ipv4.tcp_max_syn_backlog", "65535")]
    assert second.files[0].before == first.files[0].after  # each edit starts where the last one left the file
    assert "net.core.somaxconn = 65535" in second.files[0].after
    text = render_plan(plan_of(findings, ctx))
    assert text.count("+++ b/etc/sysctl.d/90-preflight.conf") == 1  # one diff per file, from before the first


def test_identical_hosts_fold_into_one_block() -> None:
    findings, ctx = judged(("sysctl", "somaxconn_low_on_one_host"))
    facts = {**ctx.other_facts, "sysctl": {**ctx.other_facts["sysctl"], "n3": ctx.other_facts["sysctl"]["n2"]},
             STATE_KEY: {**ctx.other_facts[STATE_KEY], "n3": ctx.other_facts[STATE_KEY]["n2"]}}
    ctx = replace(ctx, hosts=[*ctx.hosts, Host("n3", "n3")], other_facts=facts)
    findings += [replace(f, host="n3") for f in findings if f.host == "n2"]
    text = render_plan(plan_of(findings, ctx))
    assert "== n[2-3] (2 hosts)" in text and text.count("+net.core.somaxconn = 1024") == 1


def test_a_later_file_that_wins_at_boot_is_named() -> None:
    findings, ctx = judged(("sysctl", "old_kernel_big_gpu_cluster_fails"), states={"n2": "gardener_k8s_node"})
    [change] = changes(plan_of(findings, ctx), "n2")
    assert change.expect[0][0] == "net.ipv4.tcp_max_syn_backlog"
    [note] = change.notes
    assert note.startswith("/etc/sysctl.d/99-k8s-general.conf sets net.ipv4.tcp_max_syn_backlog = 8096")
    [other] = changes(plan_of(findings, ctx), "n1")  # Debian's files set neither key
    assert other.notes == ()


def test_reserved_ports_are_merged_never_replaced() -> None:
    findings, ctx = judged(("ports", "npu_reservation_missing_on_one_host"))
    plan = plan_of(findings, ctx)
    for host in ("n3", "n4", "n5"):
        [change] = changes(plan, host)
        assert change.kind == "reserved_ports" and change.fixes == ("ports.reserved",)
        before = ctx.other_facts["ports"][host]["reserved_ports"]
        [(key, after)] = change.expect
        merged = parse_port_list(after) or []
        assert all(not uncovered(r, merged) for r in parse_port_list(before) or [])  # every reservation kept
        assert not uncovered((60000, 60031), merged)
        assert change.undo.values == ((key, before),)
    assert changes(plan, "n1") == changes(plan, "n2") == []


def test_one_reservation_answers_both_findings_and_keeps_the_other_one() -> None:
    """sysctl.port_range and ports.reserved on the same hosts (the sysctl fixture's ports read by both checks)."""
    sysctl_facts = json.loads((FIXTURES / "sysctl/evaluate/port_range_npu_hccl.json").read_text())["facts_by_host"]
    ports = {h: {"reserved_ports": f["ports"]["net.ipv4.ip_local_reserved_ports"]} for h, f in sysctl_facts.items()}
    findings, ctx = judged(("sysctl", "port_range_npu_hccl"))
    ports_check = CHECKS["ports"]
    findings += [f for f in ports_check.evaluate(ports, replace(ctx, params=dict(ports_check.params)))
                 if f.check == "ports.reserved"]
    plan = plan_of(findings, replace(ctx, other_facts={**ctx.other_facts, "ports": ports}))
    [n4] = changes(plan, "n4")  # 60000-60007 reserved already: kept, the rest added
    assert n4.fixes == ("sysctl.port_range", "ports.reserved")
    assert n4.expect == (("net.ipv4.ip_local_reserved_ports", "60000-60031"),)
    n6 = plan.host("n6")
    assert n6 is not None and [c.kind for c in n6.changes] == ["sysctl"]  # its reserved list is junk: told, no change
    assert "could not tell: ports.reserved: could not read net.ipv4.ip_local_reserved_ports" in n6.notes


def test_containers_get_their_remedy_printed() -> None:
    findings, ctx = judged(("sysctl", "somaxconn_low_on_one_host"))
    container = {"n2": {"engine": "docker", "evidence": ["/.dockerenv"], "proc_sys_ro": True}}
    sysctl = CHECKS["sysctl"]
    facts = json.loads((FIXTURES / "sysctl/evaluate/somaxconn_low_on_one_host.json").read_text())
    ctx = replace(ctx, other_facts={**ctx.other_facts, "os.container": container})
    findings = sysctl.evaluate(facts["facts_by_host"], replace(ctx, params=dict(sysctl.params),
                                                              cluster=replace(ctx.cluster, ranks=512)))
    [change] = changes(plan_of(findings, ctx), "n2")
    assert change.kind == "print" and "docker run --sysctl net.core.somaxconn=" in change.remedy


def test_never_lower_than_in_force_and_unread_files_print_only() -> None:
    findings, ctx = judged(("sysctl", "somaxconn_low_on_one_host"))
    wrong = next(f for f in findings if f.status is Status.FAIL)
    lower = replace(wrong, remedy="sysctl -w net.core.somaxconn=64 && echo ...")
    [change] = changes(plan_of([lower], ctx), "n2")
    assert change.kind == "print"
    unread = replace(ctx, other_facts={**ctx.other_facts, STATE_KEY: {"n2": {"files": None, "error": "x"}}})
    n2 = plan_of([wrong], unread).host("n2")
    assert n2 is not None and [c.kind for c in n2.changes] == ["print"]
    assert "could not read the sysctl configuration files of n2" in n2.notes[0]


def test_other_findings_are_printed_with_their_remedy() -> None:
    findings, ctx = judged(("ports", "cpu_master_port_held"))
    [change] = changes(plan_of(findings, ctx), "c1")
    wrong = next(f for f in findings if f.status is Status.FAIL)
    assert (change.kind, change.fixes, change.remedy) == ("print", ("ports.listening",), wrong.remedy)
    assert not change.applicable and plan_of(findings, ctx).applicable == ()


@pytest.mark.parametrize("path", sorted((FIXTURES / "firewall" / "evaluate").glob("*.json")), ids=lambda p: p.stem)
def test_firewall_findings_go_to_the_firewall_builder(path: Path) -> None:
    findings, ctx = judged(("firewall", path.stem))
    plan = plan_of(findings, ctx)
    for host_plan in plan.hosts:
        for change in host_plan.changes:
            assert change.kind in ("firewall", "print"), change
            if change.kind == "firewall":
                assert all(fix.startswith("firewall.") for fix in change.fixes)
    wrong = {(f.host or "", f.check) for f in findings if f.status in (Status.FAIL, Status.WARN)}
    answered = {(h.host, fix) for h in plan.hosts for c in h.changes for fix in c.fixes}
    assert wrong <= answered, "every fail and warn is answered: changed, or its remedy printed"


def test_plan_is_pure_and_its_json_round_trips() -> None:
    findings, ctx = judged(("sysctl", "stock_kernel_npu_cluster_warns"),
                           ("ports", "npu_reservation_missing_on_one_host"))
    before = copy.deepcopy(ctx.other_facts)
    plan = plan_of(findings, ctx)
    assert plan_of(findings, ctx) == plan and ctx.other_facts == before
    assert Plan.loads(plan.dumps()) == plan
    edited = json.loads(plan.dumps())
    edited["hosts"][0]["state"]["sysctl"] = "0" * 64
    with pytest.raises(ValueError, match="fingerprint does not match"):
        Plan.from_dict(edited)


def test_a_host_changed_since_the_plan_is_refused() -> None:
    findings, ctx = judged(("sysctl", "somaxconn_low_on_one_host"))
    plan = plan_of(findings, ctx)
    assert policy.stale(plan, ctx) == {}
    raised = copy.deepcopy(dict(ctx.other_facts))
    raised["sysctl"]["n2"]["values"]["net.core.somaxconn"] = "4096"
    assert policy.stale(plan, replace(ctx, other_facts=raised)) == {
        "n2": "net.core.somaxconn was 128 when planned, is 4096 now"}
    edited = copy.deepcopy(dict(ctx.other_facts))
    edited[STATE_KEY]["n2"]["files"][SYSCTL_CONF] = "net.core.somaxconn = 2048\n"
    assert policy.stale(plan, replace(ctx, other_facts=edited)) == {
        "n2": f"{SYSCTL_CONF} changed since the plan"}
    gone = {**ctx.other_facts, "sysctl": {}, STATE_KEY: {}}
    assert "could not be read again" in policy.stale(plan, replace(ctx, other_facts=gone))["n2"]
