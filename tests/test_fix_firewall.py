"""preflight.fix.firewall: the openings built from the firewall check's real fixtures, and what they do.

Each case takes an evaluate fixture of tests/fixtures/firewall (real ``iptables -S``, ``nft -a list ruleset``,
``ufw status verbose`` and ``firewall-cmd --list-all`` outputs, parsed), runs the check, builds the changes, and
then applies them *to the facts* the way the tool would list the rule afterwards (iptables -S and nft -a list
formats as recorded below; ufw's rule as its backend writes it; firewalld's rich rule in its zone's allow chain):
the check run again must no longer drop the job's ports. The commands themselves were also fed to the tools' own
parsers once (ufw 0.36.2's ``UFWCommandRule.parse``, firewalld 1.3.3's ``Rich_Rule``, which printed the rich rules
back unchanged); iptables and nftables run for real in tests/test_fix_firewall_cluster.py.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from preflight.checks.firewall import FirewallCheck
from preflight.context import EvalContext
from preflight.fix.firewall import VERIFY, firewall_changes, firewall_state
from preflight.fix.firewall_commands import HANDLE, handle_lookup, resolve_undo
from preflight.fix.model import Change
from preflight.inventory import ClusterSpec, Host
from preflight.model import Finding
from preflight.ports import parse_port_list

FIXTURES = Path(__file__).parent / "fixtures" / "firewall" / "evaluate"
CHECK = FirewallCheck()
RUN = "r1"


def load(name: str, facts: Mapping[str, Any] | None = None) -> tuple[list[Finding], EvalContext, dict[str, Any]]:
    fixture = json.loads((FIXTURES / f"{name}.json").read_text())
    by_host = copy.deepcopy(dict(facts if facts is not None else fixture["facts_by_host"]))
    env = fixture.get("env", {})
    hosts = [Host(name=n, address=n, env=env.get(n, {})) for n in by_host]
    cluster = ClusterSpec(**{"master": hosts[0].name, **fixture.get("cluster", {})})
    ctx = EvalContext(cluster, hosts, {**CHECK.params, **fixture.get("params", {})},
                      {**fixture.get("other_facts", {}), "firewall": by_host})
    return CHECK.evaluate(by_host, ctx), ctx, by_host


def changes(name: str, host: str) -> list[Change]:
    findings, ctx, _ = load(name)
    return firewall_changes(host, findings, ctx, RUN)


def words(change: Change) -> list[str]:
    return [" ".join(argv) for argv in change.commands]


def undo_words(change: Change) -> list[str]:
    return [" ".join(argv) for argv in change.undo.commands]


# --- applying a change to the facts, as the tool lists the rule afterwards ---------------------------------------

def _ipt_line(chain: str, spec: list[str]) -> list[str]:
    """``iptables -S`` lines of an ``-I`` spec (recorded: iptables v1.8.9 (nf_tables) prints a comma list of
    sources as one rule each, last first, ``-s`` first, ``-m tcp`` added, the comment quoted)."""
    value = dict(zip(spec[::1], spec[1:], strict=False))
    sources = value["-s"].split(",")
    ports = f"-m tcp --dport {value['--dport']}" if "--dport" in spec else \
        f"-m multiport --dports {value['--dports']}"
    return [f'-A {chain} -s {s if "/" in s else s + "/32"} -p tcp {ports} -m comment --comment "{value["--comment"]}" '
            "-j ACCEPT" for s in reversed(sources)]


def apply_to_facts(facts: dict[str, Any], change: Change) -> None:
    """Put the change's rules into one host's facts where the tool would show them."""
    handles = iter(range(1000, 2000))
    for argv in change.commands:
        if argv[0] in ("iptables", "ip6tables", "iptables-legacy", "ip6tables-legacy") and argv[1] == "-I":
            chain, position, spec = argv[2], int(argv[3]), list(argv[4:])
            tool = facts[argv[0].replace("-", "_")]
            lines = [i for i, line in enumerate(tool["rules"]) if line.split()[1] == chain]
            at = lines[position - 1] if position <= len(lines) else (lines[-1] + 1 if lines else len(tool["rules"]))
            tool["rules"][at:at] = _ipt_line(chain, spec)
        elif argv[0] == "nft":
            verb, family, table, chain = argv[1], argv[3], argv[4], argv[5]
            rule = " ".join(argv[8:] if verb == "insert" else argv[6:])
            rules = next(c for t in facts["nft"]["tables"] if (t["family"], t["name"]) == (family, table)
                         for c in t["chains"] if c["name"] == chain)["rules"]
            at = next(i for i, r in enumerate(rules) if r["handle"] == int(argv[7])) if verb == "insert" \
                else len(rules)
            rules.insert(at, {"text": rule, "handle": next(handles)})
        elif argv[0] == "ufw":  # ufw-user-input, first (insert 1) or last; ufw 0.36.2's format_rule
            spec = list(argv[3:] if argv[1] == "insert" else argv[1:])
            source, port = spec[spec.index("from") + 1], spec[spec.index("port") + 1]
            line = f"-A ufw-user-input -s {source} -p tcp -m tcp --dport {port} -j ACCEPT"
            lines = facts["iptables"]["rules"]
            at = next(i for i, r in enumerate(lines) if r.startswith("-A ufw-user-input "))
            lines.insert(at, line)
        elif argv[0] == "firewall-cmd" and "--permanent" not in argv:  # firewalld's nft backend: the zone's allow
            zone = next(a.split("=", 1)[1] for a in argv if a.startswith("--zone="))
            rich = next(a for a in argv if a.startswith("--add-rich-rule="))
            source = rich.split('source address="')[1].split('"')[0]
            port = rich.split('port port="')[1].split('"')[0]
            chains = next(t for t in facts["nft"]["tables"] if t["name"] == "firewalld")["chains"]
            allow = next(c for c in chains if c["name"] == f"filter_IN_{zone}_allow")
            allow["rules"].append({"text": f"ip saddr {source} tcp dport {port} ct state new,untracked accept",
                                   "handle": None})


def dropped(found: list[Finding], port: int) -> bool:
    """Whether the host's firewall.rules finding still says ``port`` is dropped or rejected."""
    lists = [] if found[0].status.value == "pass" else re.findall(r"tcp ([\d,-]+) \(", found[0].message)
    return any(low <= port <= high for text in lists for low, high in parse_port_list(text) or [])


def after(name: str, host: str) -> tuple[list[Change], list[Finding]]:
    """The host's changes, and the check's findings once they are in the host's rules."""
    findings, ctx, facts = load(name)
    made = firewall_changes(host, findings, ctx, RUN)
    new = copy.deepcopy(facts)
    for change in made:
        if change.applicable:
            apply_to_facts(new[host], change)
    findings, _, _ = load(name, new)
    return made, [f for f in findings if f.host == host and f.check == "firewall.rules"]


# --- iptables ----------------------------------------------------------------------------------------------------

def test_iptables_drop_of_the_master_port_gets_an_accept_before_it() -> None:
    made, found = after("master_port_drop_on_master", "n1")
    assert [c.kind for c in made] == ["firewall"]
    change = made[0]
    assert words(change) == ["iptables -I INPUT 1 -p tcp -s 10.0.0.0/24 --dport 29500 -m comment --comment "
                             "preflight-fix:r1 -j ACCEPT"]
    assert undo_words(change) == ["iptables -D INPUT -p tcp -s 10.0.0.0/24 --dport 29500 -m comment --comment "
                                  "preflight-fix:r1 -j ACCEPT"]
    assert change.fixes == ("firewall.rules",) and change.verify == VERIFY == ("firewall.rules", "net.reachability")
    assert "before iptables rule `-A INPUT -p tcp -m tcp --dport 29500 -j DROP`" in change.summary
    assert "runtime only" in change.notes[0] and "never saves whole tables" in change.notes[0]
    assert [f.status.value for f in found] == ["pass"], found


def test_catch_all_reject_is_opened_for_the_master_port_only() -> None:
    made, found = after("centos7_catch_all_reject", "n1")
    assert words(made[0]) == ["iptables -I INPUT 5 -p tcp -s 10.0.0.0/24 --dport 29500 -m comment --comment "
                              "preflight-fix:r1 -j ACCEPT"], "right before the REJECT, the 5th rule of INPUT"
    assert made[1].kind == "print" and made[1].remedy == "iptables -I INPUT -s 10.0.0.0/24 -j ACCEPT"
    assert "ephemeral range" in made[1].summary and "never the ephemeral range" in made[1].summary
    assert not dropped(found, 29500), "the master port passes; the ephemeral range is left to the person"
    assert changes("centos7_catch_all_reject", "n2")[0].kind == "print", "nothing of the job's own ports on n2"


def test_policy_drop_gets_the_accept_at_the_end_of_the_chain() -> None:
    made, found = after("policy_drop_established_only", "n1")
    assert words(made[0])[0].startswith("iptables -I INPUT 3 -p tcp -s 10.0.0.0/24 --dport 29500 "), \
        "after the two rules INPUT has: before the policy, never a change of it"
    assert not dropped(found, 29500)
    assert not any("-P" in argv for c in made for argv in c.commands)


def test_ip6tables_and_legacy_tools_are_used_for_their_own_rules() -> None:
    assert words(changes("ipv6_paths_blocked", "n1")[0])[0].startswith(
        "ip6tables -I INPUT 1 -p tcp -s fd00::/64 --dport 29500 ")
    made, found = after("legacy_rules_next_to_nf_tables", "n1")
    assert words(made[0])[0].startswith("iptables-legacy -I INPUT 1 -p tcp -s 10.0.0.0/24 --dport 29500 ")
    assert [f.status.value for f in found] == ["pass"]


def test_nothing_when_nothing_is_wrong_and_only_printed_on_a_worker() -> None:
    assert changes("kube_proxy_rules_pass", "n1") == []
    worker = changes("master_port_reject_on_worker", "n2")
    assert [c.kind for c in worker] == ["print"], "the master port matters on the master only"
    assert worker[0].remedy == "iptables -D INPUT -p tcp -m tcp --dport 29500 -j REJECT --reject-with " \
                               "icmp-port-unreachable"


# --- nftables ----------------------------------------------------------------------------------------------------

def test_nft_drop_of_hccl_ports_gets_an_accept_before_its_handle() -> None:
    made, found = after("nft_hccl_ports_drop_npu", "n3")
    change = made[0]
    assert words(change) == ['nft insert rule inet t input position 2 ip saddr 10.0.0.0/24 tcp dport 60000-60015 '
                             'accept comment "preflight-fix:r1"']
    assert change.undo.commands == (("nft", "delete", "rule", "inet", "t", "input", "handle", HANDLE),)
    assert "HCCL host ports" in change.summary
    assert [f.status.value for f in found] == ["pass"], found


def test_nft_vmap_netdev_ingress_and_policy() -> None:
    made, found = after("nft_vmaps_and_sets", "n1")
    assert words(made[0])[0].startswith("nft insert rule inet t input position 2 ip saddr 10.0.0.0/24 tcp dport "
                                        "29500 accept")
    assert not dropped(found, 29500)
    made, found = after("nft_ingress_prerouting_dormant", "n1")
    assert words(made[0])[0].startswith("nft insert rule netdev ingress ingress position 2 ")
    assert [f.status.value for f in found] == ["pass"]
    made, found = after("real_nft_input_drop_debian11", "n1")
    assert words(made[0]) == ['nft add rule inet filter input ip saddr 10.0.0.0/24 tcp dport 29500 accept comment '
                              '"preflight-fix:r1"'], "a policy: appended, before the policy"
    assert not dropped(found, 29500)


# `nft -a list chain inet t input` after the insert, recorded on this box (nftables v1.0.6, in a fresh network
# namespace: unshare -n): the rule comes back as nft_rule wrote it, with its handle.
NFT_LISTING = """table inet t {
\tchain input { # handle 1
\t\ttype filter hook input priority filter; policy accept;
\t\ttcp dport 9999 drop # handle 2
\t\tip saddr 10.0.0.0/24 tcp dport { 29500, 60000-60015 } accept comment "preflight-fix:r1" # handle 5
\t\ttcp dport 60000-60015 drop # handle 3
\t}
}
"""


def test_nft_undo_takes_the_handle_the_rule_got() -> None:
    undo = (("nft", "delete", "rule", "inet", "t", "input", "handle", HANDLE),)
    lookup = handle_lookup(undo[0])
    assert lookup == ("nft", "-a", "list", "chain", "inet", "t", "input")
    assert resolve_undo(undo, {lookup: NFT_LISTING}, RUN) == (
        [("nft", "delete", "rule", "inet", "t", "input", "handle", "5")], [])
    assert resolve_undo(undo, {lookup: NFT_LISTING}, "r2")[0] == [], "another run's rule is never taken"


# --- ufw and firewalld -------------------------------------------------------------------------------------------

def test_ufw_owns_its_rules() -> None:
    made, found = after("ufw_default_deny", "n1")
    change = made[0]
    assert words(change) == ["ufw insert 1 allow proto tcp from 10.213.4.0/24 to any port 29500 comment "
                             "preflight-fix:r1"]
    assert undo_words(change) == ["ufw delete allow proto tcp from 10.213.4.0/24 to any port 29500 comment "
                                  "preflight-fix:r1"]
    assert "survives a reboot" in change.notes[0]
    assert not dropped(found, 29500)
    assert not any(w in ("enable", "disable", "default", "reload") for c in made for a in c.commands for w in a)


def test_firewalld_rich_rule_in_the_training_interface_zone() -> None:
    made, found = after("firewalld_public_zone", "n1")
    change = made[0]
    rule = 'rule family="ipv4" source address="10.1.0.0/24" port port="29500" protocol="tcp" accept'
    assert change.commands == (("firewall-cmd", "--zone=public", f"--add-rich-rule={rule}"),
                               ("firewall-cmd", "--permanent", "--zone=public", f"--add-rich-rule={rule}"))
    assert change.undo.commands == (("firewall-cmd", "--permanent", "--zone=public", f"--remove-rich-rule={rule}"),
                                    ("firewall-cmd", "--zone=public", f"--remove-rich-rule={rule}"))
    assert "with firewalld in zone public" in change.summary
    assert not any("--reload" in a for c in made for argv in c.commands for a in argv)
    assert not dropped(found, 29500)


# --- what fix never does, and the state a saved plan is checked against -------------------------------------------

@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_never_a_policy_a_reload_or_a_whole_table(path: Path) -> None:
    findings, ctx, facts = load(path.stem)
    for host in facts:
        for change in firewall_changes(host, findings, ctx, RUN):
            for argv in change.commands + change.undo.commands:
                assert not {"-P", "--policy", "-F", "--flush", "flush", "--reload", "enable", "disable",
                            "--set-default-zone", "--set-target", "default"} & set(argv), argv
                assert not argv[0].endswith("-save") and "ruleset" not in argv, argv
            if change.applicable:
                assert change.undo.commands and change.verify == VERIFY


def test_state_follows_the_rules_the_openings_go_into() -> None:
    findings, ctx, facts = load("master_port_drop_on_master")
    state = firewall_state("n1", ctx)
    assert state[0]["position"] == 1 and state[0]["rules"] == ["-A INPUT -p tcp -m tcp --dport 29500 -j DROP"]
    moved = copy.deepcopy(facts)
    moved["n1"]["iptables"]["rules"].insert(0, "-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT")
    _, ctx2, _ = load("master_port_drop_on_master", moved)
    assert firewall_state("n1", ctx2) != state
    assert firewall_state("n2", ctx) == []


def _variation(rules: list[str], nft_tables: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """master_port_drop_on_master's facts with n1's iptables rules (and nft tables) replaced: a hand-written
    variation of the real fixture, in iptables -S's and nft -a list's own formats."""
    facts = json.loads((FIXTURES / "master_port_drop_on_master.json").read_text())["facts_by_host"]
    facts["n1"]["iptables"]["rules"] = rules
    if nft_tables is not None:
        facts["n1"]["nft"]["tables"] = nft_tables
    return dict(facts)


def test_one_accept_before_the_first_of_two_drops_and_inside_a_jumped_to_chain() -> None:
    facts = _variation(["-A INPUT -p tcp -m tcp --dport 9999 -j DROP",
                        "-A INPUT -p tcp -m set --match-set banned src -m tcp --dport 29500 -j DROP",
                        "-A INPUT -j GUARD", "-A GUARD -p tcp -m tcp --dport 29500 -j DROP",
                        "-A INPUT -p tcp -m tcp --dport 29500 -j DROP"])
    findings, ctx, _ = load("master_port_drop_on_master", facts)
    before = [f for f in findings if f.host == "n1" and f.check == "firewall.rules"]
    assert dropped(before, 29500)
    made = firewall_changes("n1", findings, ctx, RUN)
    assert [words(c)[0].split(" -p ")[0] for c in made] == ["iptables -I INPUT 2"], \
        "before the ipset rule (undecided), which the later drops then never see; 9999 left alone"
    facts = _variation(["-A INPUT -j GUARD", "-A GUARD -p tcp -m tcp --dport 22 -j ACCEPT",
                        "-A GUARD -p tcp -m tcp --dport 29500 -j DROP"])
    findings, ctx, _ = load("master_port_drop_on_master", facts)
    assert [words(c)[0].split(" -p ")[0] for c in firewall_changes("n1", findings, ctx, RUN)] == \
        ["iptables -I GUARD 2"]


def test_a_drop_in_iptables_and_one_in_an_nft_table_are_both_opened() -> None:
    table = {"family": "inet", "name": "t", "flags": [], "sets": [], "chains": [
        {"name": "input", "type": "filter", "hook": "input", "priority": "0", "policy": "accept", "device": None,
         "rules": [{"text": "tcp dport 29500 drop", "handle": 4}]}]}
    facts = _variation(["-A INPUT -p tcp -m tcp --dport 29500 -j DROP"], [table])
    findings, ctx, _ = load("master_port_drop_on_master", facts)
    made = firewall_changes("n1", findings, ctx, RUN)
    assert sorted(words(c)[0].split(" ip saddr")[0].split(" -p ")[0] for c in made) == [
        "iptables -I INPUT 1", "nft insert rule inet t input position 4"]
    new = copy.deepcopy(facts)
    for change in made:
        apply_to_facts(new["n1"], change)
    findings, _, _ = load("master_port_drop_on_master", new)
    assert [f.status.value for f in findings if f.host == "n1" and f.check == "firewall.rules"] == ["pass"]


def test_firewall_state_findings_are_printed_with_their_remedy() -> None:
    findings, ctx, _ = load("manager_drift")
    drift = [f for f in findings if f.check == "firewall.state" and f.status.value == "warn"]
    assert drift
    made = firewall_changes(drift[0].host or "", findings, ctx, RUN)
    printed = [c for c in made if c.fixes == ("firewall.state",)]
    assert [(c.kind, c.remedy) for c in printed] == [("print", drift[0].remedy)]
