"""firewall: ufw, firewalld, iptables and nftables on every host, and whether they block training traffic.

What is installed and active is read with ``iptables -S`` / ``ip6tables -S`` (and ``iptables-legacy -S``
when legacy tables are loaded next to nf_tables ones), ``nft -a list ruleset``, ``ufw status verbose``
and ``firewall-cmd --state`` / ``--list-all``. A tool that is missing is a fact, not an error;
listing rules needs root (CAP_NET_ADMIN): rules unreadable for want of it are a ``skip`` saying how to read
them (root, ``--sudo``), since nothing is known to be wrong; unreadable for another reason, an ``error``.

The rules are then *evaluated*, not grepped: for a new TCP connection (a SYN, conntrack state NEW,
no packet mark) from every other host of the cluster, on every path between them (the peer's
address in a subnet this host has an address in, arriving on that interface), to

- the master port (``cluster.master_port``) on the master host,
- HCCL's host ports on npu clusters (``HCCL_IF_BASE_PORT``, default 60000, 16 ports or 32 on newer
  CANN; ``HCCL_HOST_SOCKET_PORT_RANGE`` when set),
- the ephemeral range (``net.ipv4.ip_local_port_range``) where NCCL, gloo and torch's workers listen,

the verdict of every base chain on the input path (iptables' INPUT; nftables chains hooked at
prerouting, input or ingress) is worked out with rule order, jumps, gotos, returns, policies, sets
and verdict maps. A condition preflight cannot decide (an interface when several are possible, an
ipset, a rate limit, an unknown match) is followed both ways. A port that every path from some
peer drops or rejects is blocked: ``fail`` (the master port on a non-master host, and a small part
of the ephemeral range, only ``warn``); one that only some paths or undecided conditions drop is
``warn``. Findings name the rule (as ``iptables -S`` / ``nft`` print it), the ports and the peers.
With iptables on the nf_tables backend, its tables also show in ``nft list ruleset``: they are
judged once, as iptables rules.

The parsers, the rule model, the simulator and the remedies live in ``preflight.firewall``; this
module declares the probes and builds the findings.

>>> [probe.key for probe in FirewallCheck().probes(Host(name="n1", address="n1"), ClusterSpec(master="n1"))][:5]
['iptables', 'ip6tables', 'iptables_legacy', 'ip6tables_legacy', 'nft']
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from preflight.checks.base import *
from preflight.firewall.addresses import parse_addresses
from preflight.firewall.analysis import Evaluator, analyze, grade, group
from preflight.firewall.firewalld import describe_firewalld, parse_firewalld
from preflight.firewall.iptables import NO_LEGACY_TABLE, describe_iptables, parse_iptables
from preflight.firewall.nftables import describe_nft, parse_nft
from preflight.firewall.remedy import cluster_networks, drift_remedies, group_remedy, legacy_remedy
from preflight.firewall.rulesets import TOOLS, active_managers, build_rulesets, input_filters
from preflight.firewall.sentences import group_text
from preflight.firewall.targets import parse_port_range, targets_for
from preflight.firewall.topology import Topology
from preflight.firewall.ufw import describe_ufw, parse_ufw
from preflight.interfaces import ADDRS_COMMAND
from preflight.ports import format_port_list, merge_ranges

# --- probes ----------------------------------------------------------------------------------

_PATH = 'PATH="$PATH:/usr/sbin:/sbin:/usr/local/sbin"; export PATH\n'


def _missing(tool: str) -> str:
    return f'command -v {tool} >/dev/null 2>&1 || {{ echo "{tool}: not installed" >&2; exit 127; }}\n'


# The version line, then the filter table. A legacy filter table that is not loaded is not listed:
# listing it would load the kernel module and create the table (a probe must not change the host);
# /proc/net/ip_tables_names is unreadable to non-root users, who then get iptables' own refusal.
_IPTABLES = _PATH + _missing("TOOL") + r"""v=$(TOOL -V 2>&1); echo "$v"
case "$v" in
  *nf_tables*) ;;
  *) if [ ! -e /proc/net/NAMES ] || { [ -r /proc/net/NAMES ] && ! has_filter; }; then
       echo "NO_LEGACY_TABLE"; exit 0; fi ;;
esac
TOOL -S
"""
# Legacy tables loaded next to nf_tables ones (both filter): nothing printed when there are none.
# The /proc test comes first: it costs no fork, and on most hosts it already ends the probe.
_LEGACY = _PATH + r"""[ -r /proc/net/NAMES ] && has_filter || exit 0
case "$(TOOL -V 2>/dev/null)" in *nf_tables*) ;; *) exit 0 ;; esac
command -v TOOL-legacy >/dev/null 2>&1 || exit 0
TOOL-legacy -V; TOOL-legacy -S
"""


# Whether a legacy filter table is loaded (the table list read with builtins: `grep -qx filter` without a fork).
_HAS_FILTER = ('has_filter() { while IFS= read -r t || [ -n "$t" ]; do [ "$t" != filter ] || return 0; t=; '
               'done </proc/net/NAMES; return 1; }\n')


def _for(template: str, tool: str) -> str:
    """A probe template for iptables or ip6tables (constants only: nothing from hosts.yaml)."""
    names = "ip6_tables_names" if tool == "ip6tables" else "ip_tables_names"
    return (_HAS_FILTER + template).replace("TOOL", tool).replace("NAMES", names).replace(
        "NO_LEGACY_TABLE", NO_LEGACY_TABLE)


_NFT = _PATH + _missing("nft") + "nft --version; nft -a list ruleset\n"
_UFW = _PATH + _missing("ufw") + "ufw status verbose\n"
_FIREWALLD = _PATH + _missing("firewall-cmd") + (
    "firewall-cmd --state; rc=$?; [ $rc -eq 0 ] || exit $rc\nfirewall-cmd --list-all\n")
_PORT_RANGE = "cat /proc/sys/net/ipv4/ip_local_port_range"  # numeric sysctl: not read_line

_MISSING_OUTPUT = ProbeOutput("", "not run", None)
# Rules unreadable for want of root: how to read them (preflight run or node, locally or over SSH).
READ_AS_ROOT = ("run as root, or add --sudo (probes under `sudo -n`: a NOPASSWD sudoers rule for iptables/nft); "
                "over SSH: user: root in hosts.yaml, or --sudo")


class FirewallCheck(Check):
    ids = ("firewall.state", "firewall.rules")
    order = 40
    summary = ("ufw, firewalld, iptables and nftables state; no rule drops or rejects the master port, HCCL's "
               "ports or the ephemeral range from the other hosts")
    needs = ("versions",)  # the CANN version decides how many HCCL ports there are

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [
            Probe("iptables", _for(_IPTABLES, "iptables"), timeout=10, root=True),
            Probe("ip6tables", _for(_IPTABLES, "ip6tables"), timeout=10, root=True),
            Probe("iptables_legacy", _for(_LEGACY, "iptables"), timeout=10, root=True),
            Probe("ip6tables_legacy", _for(_LEGACY, "ip6tables"), timeout=10, root=True),
            Probe("nft", _NFT, timeout=10, root=True),
            Probe("ufw", _UFW, timeout=10, root=True),
            Probe("firewalld", _FIREWALLD, timeout=15, root=True),
            Probe("addresses", ADDRS_COMMAND, timeout=5),
            Probe("port_range", _PORT_RANGE, timeout=5),
        ]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        def out(key: str) -> ProbeOutput:
            return outputs.get(key, _MISSING_OUTPUT)

        facts: Facts = {
            "iptables": parse_iptables(out("iptables")),
            "ip6tables": parse_iptables(out("ip6tables")),
            "iptables_legacy": None,
            "ip6tables_legacy": None,
            "nft": parse_nft(out("nft")),
            "ufw": parse_ufw(out("ufw")),
            "firewalld": parse_firewalld(out("firewalld")),
            "addresses": parse_addresses(out("addresses")),
            "ephemeral": parse_port_range(out("port_range").stdout) if out("port_range").ok else None,
        }
        for key in ("iptables_legacy", "ip6tables_legacy"):
            # The probe prints nothing (and succeeds) when no legacy table is loaded next to nf_tables ones.
            legacy = outputs.get(key)
            if legacy is not None and (legacy.stdout.strip() or legacy.exit_status != 0):
                facts[key] = parse_iptables(legacy)
        return facts

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        findings: list[Finding] = []
        signatures = {name: ",".join(active_managers(f)) or "none" for name, f in facts.items()}
        common, strict = majority(signatures)
        topology = Topology(facts, ctx)
        networks = cluster_networks(facts, ctx, topology.addresses)
        evaluators: dict[str, tuple[Evaluator, list[str]]] = {}
        for name in facts:
            findings.append(self._state(name, facts[name], signatures, common if strict else None))
            key = json.dumps([facts[name].get(k) for k, _ in TOOLS] + [facts[name].get("nft")], sort_keys=True,
                             default=str)
            if key not in evaluators:
                rulesets, unreadable = build_rulesets(facts[name])
                evaluators[key] = (Evaluator(rulesets), unreadable)
            findings.append(self._rules(name, facts[name], ctx, networks, topology, *evaluators[key]))
        return findings

    # --- firewall.state

    def _state(self, name: str, facts: Mapping[str, Any], signatures: Mapping[str, str],
               common: str | None) -> Finding:
        check = "firewall.state"
        parts = [describe_iptables(facts.get(key), key.replace("_", "-")) for key, _ in TOOLS]
        parts += [describe_nft(facts.get("nft")), describe_ufw(facts.get("ufw")),
                  describe_firewalld(facts.get("firewalld"))]
        summary = "; ".join(p for p in parts if p)
        observed = signatures[name] if signatures[name] != "none" else "no firewall manager active"
        # A manager whose answer could not be read (an unknown layout, a time-out) is not known to be off: saying
        # "none active" would be a pass on nothing. (Unreadable for want of root stays a note: see firewall.rules.)
        unread = [f"{key}: {tool.get('error')}" for key in ("ufw", "firewalld")
                  if isinstance(tool := facts.get(key), Mapping) and tool.get("installed") and tool.get("error")
                  and not tool.get("permission_denied")]
        if unread:
            return finding(check, name, Status.ERROR, f"could not read {'; '.join(unread)} ({summary})",
                           observed="; ".join(unread), expected="ufw / firewalld state readable")
        problems: list[str] = []
        remedies: list[str] = []
        for key in ("iptables_legacy", "ip6tables_legacy"):
            legacy = facts.get(key)
            if isinstance(legacy, Mapping) and legacy.get("readable") and (
                    legacy.get("rules") or any(p != "ACCEPT" for p in (legacy.get("policies") or {}).values())):
                tool = key.replace("_", "-")
                problems.append(f"{tool} rules are loaded next to the nf_tables ones: both apply, and "
                                f"`{tool.replace('-legacy', '')} -S` shows only the nf_tables set")
                remedies.append(legacy_remedy(tool))
        if common is not None and signatures[name] != common:
            here = [m for m in signatures[name].split(",") if m != "none"]
            there = [m for m in common.split(",") if m != "none"]
            mine = f"{', '.join(here)} is active here" if here else "no firewall manager is active here"
            theirs = f"{', '.join(there)} is active on most hosts" if there else "most hosts run none"
            problems.append(f"{mine} while {theirs}: the hosts' firewalls are set up differently")
            remedies += drift_remedies(here, there)
        if problems:
            return finding(check, name, Status.WARN, f"{'; '.join(problems)} ({summary})",
                           observed=observed, expected=common or "one firewall setup", remedy=" && ".join(remedies))
        return finding(check, name, Status.PASS, f"{summary}", observed=observed)

    # --- firewall.rules

    def _rules(self, name: str, host_facts: Facts, ctx: EvalContext, networks: Mapping[int, str], topology: Topology,
               evaluator: Evaluator, unreadable: list[str]) -> Finding:
        check = "firewall.rules"
        rulesets = evaluator.rulesets
        installed = [k for k in ("iptables", "ip6tables", "nft")
                     if isinstance(host_facts.get(k), Mapping) and host_facts[k].get("installed")]
        if not installed:
            # A container image or a minimal VM: nothing here can list rules, and nothing is known to be wrong
            # (ufw and firewalld need one of them; net.reachability tests the ports for real).
            # No install is suggested: a training image needs no firewall tool, and the node's own rules are read
            # by running preflight on the node itself.
            return finding(check, name, Status.SKIP,
                           "not judged: the firewall rules were not read: neither iptables nor nft is "
                           "installed here (a rule set by a container runtime, kube-proxy or the host would not be "
                           "seen); net.reachability tests the ports themselves",
                           observed="no iptables, no nft", expected="rules readable",
                           remedy="preflight run --checks net.reachability  # tests the ports for real; to read the "
                                  "rules, run preflight on the node itself (outside the container)")
        targets, notes = targets_for(name, host_facts, ctx)
        classes = topology.peer_classes(name, evaluator.src_class, evaluator) if rulesets else []
        issues = analyze(evaluator, targets, classes) if rulesets else []
        is_master = ctx.cluster.master == name
        groups = group(grade(issues, targets, is_master))
        shown = [t for t in targets if t.ranges and (t.kind != "master" or is_master)]
        checked = ", ".join(f"tcp {format_port_list(t.ranges)} ({t.label})" for t in shown)
        expected = f"tcp {format_port_list(merge_ranges(r for t in shown for r in t.ranges))} open to the other hosts"
        if groups:
            status = Status.worst([g.status for g in groups])
            peers = topology.peers(name)
            texts = [group_text(g, peers) for g in groups]
            if unreadable:
                texts.append(f"and could not read {'; '.join(unreadable)}")
            tail = (": the other ranks' connections are refused or time out and init_process_group fails or hangs"
                    if status == Status.FAIL else "")
            rules_seen = list(dict.fromkeys(r.text for g in groups for r in g.rules))
            return finding(check, name, status, f"{'; '.join(texts)}{tail}",
                           observed=" | ".join(rules_seen), expected=expected,
                           remedy=" && ".join(dict.fromkeys(group_remedy(g, host_facts, networks) for g in groups)))
        if unreadable:
            blocked = [tool for k in ("iptables", "ip6tables", "nft", "iptables_legacy", "ip6tables_legacy")
                       if isinstance(tool := host_facts.get(k), Mapping) and tool.get("installed")
                       and not tool.get("readable")]
            # Not root: nothing is known about the rules, and nothing is wrong with the node for it. An output that
            # could not be read for another reason (garbage, a time-out) next to a refusal is still an error.
            if blocked and all(tool.get("permission_denied") for tool in blocked):
                return finding(check, name, Status.SKIP,
                               "not judged: listing the firewall rules needs root (CAP_NET_ADMIN): "
                               f"{'; '.join(unreadable)}", observed="; ".join(unreadable), expected="rules readable",
                               remedy=READ_AS_ROOT)
            return finding(check, name, Status.ERROR,
                           f"could not read the firewall rules: {'; '.join(unreadable)}",
                           observed="; ".join(unreadable), expected="rules readable")
        others = input_filters(rulesets)
        extra = ""
        if others:
            listed = ", ".join(f"`{r.text}`" for r in others[:3]) + (", ..." if len(others) > 3 else "")
            extra = f"; {len(others)} drop/reject rule(s) or policies apply to other traffic only: {listed}"
        note = f" ({'; '.join(notes)})" if notes else ""
        return finding(check, name, Status.PASS,
                       f"nothing drops or rejects {checked} from the other hosts{note}{extra}",
                       observed="no blocking rule", expected=expected)
