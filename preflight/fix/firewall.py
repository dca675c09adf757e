"""The ``firewall.rules`` findings' changes: an ACCEPT for exactly the job's ports (the master port on the master,
HCCL's host ports on npu clusters) from the cluster's hosts, placed before the rule that drops them.

The rules are not re-read from the finding's words: the firewall check's own analysis runs again on the host's
facts (``ctx.other_facts["firewall"]``): which rule drops which of those ports for which peers, in which tool,
table and chain. The first such rule (in the order a packet meets them) gets an ACCEPT right before it, for the
ports it drops and the peers it drops them for; the analysis then runs on the rules *with* that ACCEPT, until the
job's ports pass or no rule is left that fix may open. So a DROP behind another DROP is opened too, and no ACCEPT
is added that the first one already makes useless.

The sources: the training subnet (the network of this host's interface the peers arrive on) when every peer
the rule drops is in it, else the peers' addresses. The tool: ufw when ufw owns the rule (its chains, or the
INPUT policy it sets), firewalld when firewalld does (its table or chains; in the zone the rule's chain belongs
to, else the training interface's zone), else the rule's own tool (iptables, ip6tables, the legacy ones, nft).
The ephemeral range is never opened (only printed, with the check's remedy): it is most of the port space.

>>> VERIFY
('firewall.rules', 'net.reachability')
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from preflight.context import EvalContext, Facts
from preflight.firewall.addresses import IPNetwork
from preflight.firewall.analysis import Evaluator, Issue, analyze, grade, group
from preflight.firewall.model import AddrIn, PortIn, ProtoIs, Rule, RuleSet
from preflight.firewall.remedy import cluster_networks, group_remedy
from preflight.firewall.rulesets import active_managers, build_rulesets
from preflight.firewall.sentences import group_text, rule_name
from preflight.firewall.targets import Target, targets_for
from preflight.firewall.topology import Topology
from preflight.fix.firewall_commands import Opening, chunks, commands, persistence
from preflight.fix.model import Change, Undo
from preflight.model import Finding, Status
from preflight.ports import Range, format_port_list, merge_ranges

VERIFY = ("firewall.rules", "net.reachability")
FACTS_KEY = "firewall"  # the firewall check's facts in ctx.other_facts
MAX_ROUNDS = 16  # ACCEPTs added one round at a time; a rule set that needs more is printed, not fixed


@dataclass
class Planned:
    """One opening and why: the rule it goes before, the ports (with what they are for) and the peers."""

    opening: Opening
    blocking: Rule
    labels: list[str]
    peers: list[str]


@dataclass
class _Drop:
    """A rule that drops some of the job's ports for some peers (collected from the issues of one round)."""

    rule: Rule
    ruleset: RuleSet
    ports: list[Range] = field(default_factory=list)
    peers: set[str] = field(default_factory=set)
    labels: list[str] = field(default_factory=list)


def _order(ruleset: RuleSet) -> dict[int, int]:
    """Rules of a ruleset in the order a packet meets them (jumps followed where they are), by id."""
    order: dict[int, int] = {}

    def walk(name: str, seen: frozenset[str]) -> None:
        chain = ruleset.chains.get(name)
        if chain is None or name in seen:
            return
        for rule in chain.rules:
            order.setdefault(id(rule), len(order))
            if rule.verdict in ("jump", "goto") and rule.target:
                walk(rule.target, seen | {name})
        if chain.policy is not None:
            order.setdefault(id(chain.policy), len(order))

    for base in ruleset.bases:
        walk(base, frozenset())
    return order


def _owner(rule: Rule, host_facts: Mapping[str, Any]) -> str:
    """The command that opens in front of ``rule``: ufw or firewalld when they own it, else the rule's tool."""
    active = active_managers(host_facts)
    catch_all = rule.policy or not any(isinstance(c, (PortIn, AddrIn)) for c in rule.conds)
    if rule.tool != "nft":
        if "ufw" in active and (rule.chain.startswith(("ufw-", "ufw6-")) or rule.policy):
            return "ufw"
        if "firewalld" in active and (rule.chain.startswith(("IN_", "INPUT_")) or
                                      (rule.chain == "INPUT" and catch_all)):
            return "firewalld"
        return rule.tool
    if "firewalld" in active and rule.table.split(" ")[-1] == "firewalld":
        return "firewalld"
    return "nft"


_ZONE_CHAIN = re.compile(r"(?:filter_)?IN_(.+?)(?:_(pre|log|deny|allow|post))?")


def _zone(rule: Rule, host_facts: Mapping[str, Any], ifaces: Sequence[str]) -> tuple[str | None, int | None]:
    """firewalld's zone for the rich rule, and its priority: the zone whose chain holds ``rule`` (before its
    allow chain: a priority that puts the rich rule in the zone's pre chain), else the zone of the interface the
    peers arrive on, else the default zone."""
    match = _ZONE_CHAIN.fullmatch(rule.chain)
    if match and not match[1].startswith("policy_"):
        return match[1], (-32768 if match[2] in ("pre", "log", "deny") else None)
    firewalld = host_facts.get("firewalld")
    zones = [z for z in (firewalld.get("zones") or [] if isinstance(firewalld, Mapping) else [])
             if isinstance(z, Mapping) and z.get("name")]
    for zone in zones:
        if any(iface in (zone.get("interfaces") or []) for iface in ifaces):
            return str(zone["name"]), None
    default = next((z for z in zones if z.get("default")), zones[0] if zones else None)
    return (str(default["name"]) if default else None), None


def _sources(host: str, peers: Sequence[str], family: str, topology: Topology) -> tuple[list[str], list[str]]:
    """The sources to open for: the training subnet when it holds every peer's address, else the addresses;
    and the interfaces of this host the peers arrive on."""
    addresses: set[ipaddress.IPv4Address | ipaddress.IPv6Address] = set()
    ifaces: list[str] = []
    for peer in peers:
        for path in topology.peer_paths(host, peer):
            if path.family == family and path.src is not None:
                addresses.add(path.src)
                if path.iface and path.iface not in ifaces:
                    ifaces.append(path.iface)
    if not addresses:
        return [], ifaces
    networks: list[IPNetwork] = sorted({i.network for _, i in topology.addresses.get(host, [])
                                        if i.version == (4 if family == "ipv4" else 6)},
                                       key=lambda n: n.prefixlen, reverse=True)
    for network in networks:
        if all(a in network for a in addresses):
            return [str(network)], ifaces
    hosts = [ipaddress.ip_network(a) for a in sorted(addresses, key=lambda a: (a.version, int(a)))]
    collapsed: list[IPNetwork] = list(ipaddress.collapse_addresses(hosts))  # type: ignore[type-var]
    return [str(n) if n.prefixlen != n.max_prefixlen else str(n.network_address) for n in collapsed], ifaces


def _ufw_counts(host_facts: Mapping[str, Any]) -> dict[str, int]:
    """ufw's rules per family as ``ufw status`` lists them (its (v6) rules after the IPv4 ones)."""
    ufw = host_facts.get("ufw")
    rules = [str(r) for r in (ufw.get("rules") or [] if isinstance(ufw, Mapping) else [])]
    v6 = sum("(v6)" in r for r in rules)
    return {"ipv4": len(rules) - v6, "ipv6": v6}


def _collect(issues: Sequence[Issue], rulesets: Sequence[RuleSet], skipped: set[int]) -> list[_Drop]:
    """Per ruleset, the first rule a packet meets among those the issues name, with every port and peer it drops."""
    owner = {id(r): rs for rs in rulesets for ch in rs.chains.values()
             for r in [*ch.rules, *([ch.policy] if ch.policy else [])]}
    orders = {id(rs): _order(rs) for rs in rulesets}
    first: dict[int, Rule] = {}
    for issue in issues:
        for rule in issue.rules:
            ruleset = owner.get(id(rule))
            if ruleset is None or id(rule) in skipped:
                continue
            order = orders[id(ruleset)]
            held = first.get(id(ruleset))
            if held is None or order.get(id(rule), 1 << 30) < order.get(id(held), 1 << 30):
                first[id(ruleset)] = rule
    drops: list[_Drop] = []
    for rule in first.values():
        drop = _Drop(rule, owner[id(rule)])
        for issue in issues:
            if any(r is rule for r in issue.rules):
                drop.ports = merge_ranges([*drop.ports, *issue.ports])
                drop.peers |= {p for p in issue.peers if p}
                if issue.target.label not in drop.labels:
                    drop.labels.append(issue.target.label)
        drops.append(drop)
    return drops


def _insert(drop: _Drop, opening: Opening, weights: dict[int, int]) -> int:
    """Put the opening's ACCEPT into the simulated chain before the dropping rule; the iptables rule number it
    gets (each earlier rule counted as the rules it stands for: a comma list of sources is one rule each)."""
    chain = drop.ruleset.chains[drop.rule.chain]
    if drop.rule.policy:
        index = len(chain.rules)
    else:
        index = next(i for i, r in enumerate(chain.rules) if r is drop.rule or (
            r.handle is not None and r.handle == drop.rule.handle and r.text == drop.rule.text))
    nets = [ipaddress.ip_network(s, strict=False) for s in opening.sources]
    accept = Rule([ProtoIs({"tcp"}), AddrIn("src", nets), PortIn(list(opening.ports))], "accept", None,
                  f"preflight fix: accept tcp {format_port_list(opening.ports)} from {', '.join(opening.sources)}",
                  drop.rule.tool, drop.rule.table, drop.rule.chain, port_specific=True)
    position = 1 + sum(weights.get(id(r), 1) for r in chain.rules[:index])
    chain.rules.insert(index, accept)
    weights[id(accept)] = len(opening.sources) * len(chunks(opening.ports)) if opening.manager not in (
        "nft", "ufw", "firewalld") else 1
    return position


@dataclass
class Openings:
    """What fix opens on one host, and the host's rules with those openings in (to judge what is left)."""

    planned: list[Planned]
    rulesets: list[RuleSet]
    targets: list[Target]
    topology: Topology | None


def plan_openings(host: str, facts: Mapping[str, Facts], ctx: EvalContext) -> Openings:
    """The openings that let the job's ports (master port on the master, HCCL's ports) past every rule that drops
    them on ``host``, in the order to add them."""
    host_facts = facts.get(host)
    if not isinstance(host_facts, Mapping):
        return Openings([], [], [], None)
    rulesets, _ = build_rulesets(host_facts)
    targets, _ = targets_for(host, host_facts, ctx)
    topology = Topology(facts, ctx)
    found = Openings([], rulesets, targets, topology)
    wanted = [t for t in targets if t.ranges and (t.kind == "hccl" or (t.kind == "master"
                                                                      and ctx.cluster.master == host))]
    if not rulesets or not wanted:
        return found
    planned = found.planned
    skipped: set[int] = set()
    weights: dict[int, int] = {}
    ufw = _ufw_counts(host_facts)
    for _ in range(MAX_ROUNDS):
        evaluator = Evaluator(rulesets)
        issues = analyze(evaluator, wanted, topology.peer_classes(host, evaluator.src_class, evaluator))
        drops = _collect(issues, rulesets, skipped)
        if not drops:
            break
        for drop in drops:
            added = False
            for family in drop.ruleset.families:
                peers = sorted(drop.peers)
                sources, ifaces = _sources(host, peers, family, topology)
                opening = _opening(drop.rule, family, sources, drop.ports, host_facts, ifaces, ufw)
                if opening is None:
                    continue
                position = _insert(drop, opening, weights)
                if opening.manager not in ("nft", "ufw", "firewalld"):
                    opening = Opening(**{**opening.__dict__, "position": position})
                planned.append(Planned(opening, drop.rule, drop.labels, peers))
                added = True
            if not added:
                skipped.add(id(drop.rule))
    return found


def _opening(rule: Rule, family: str, sources: Sequence[str], ports: Sequence[Range], host_facts: Mapping[str, Any],
             ifaces: Sequence[str], ufw: dict[str, int]) -> Opening | None:
    """The opening for ``rule`` in ``family`` (None: no source known, or a rule fix does not open in front of)."""
    if not sources:
        return None
    manager = _owner(rule, host_facts)
    base = Opening(manager, family, tuple(sources), tuple(ports), rule.table, rule.chain)
    if manager == "ufw":
        position = 1 if family == "ipv4" else ufw["ipv4"] + 1
        planned_position = position if ufw[family] else None
        ufw[family] += len(sources) * len(chunks(ports))
        return Opening(**{**base.__dict__, "ufw_position": planned_position})
    if manager == "firewalld":
        zone, priority = _zone(rule, host_facts, ifaces)
        return Opening(**{**base.__dict__, "zone": zone, "priority": priority})
    if manager == "nft":
        if not rule.policy and rule.handle is None:
            return None
        family_name = rule.table.split(" ")[0]
        if (family_name == "ip" and family != "ipv4") or (family_name == "ip6" and family != "ipv6"):
            return None
        return Opening(**{**base.__dict__, "handle": None if rule.policy else rule.handle})
    return base


def _summary(planned: Planned) -> str:
    opening = planned.opening
    peers = ", ".join(planned.peers[:5]) + (" and more" if len(planned.peers) > 5 else "")
    where = {"ufw": " with ufw", "firewalld": f" with firewalld in zone {opening.zone}" if opening.zone
             else " with firewalld in the default zone"}.get(opening.manager, "")
    return (f"open tcp {format_port_list(opening.ports)} ({'; '.join(planned.labels)}) from "
            f"{', '.join(opening.sources)} ({peers}) before {rule_name(planned.blocking)}{where}")


def _print(host: str, summary: str, remedy: str, check: str = "firewall.rules") -> Change:
    return Change(host, (check,), "print", summary, remedy=remedy)


def firewall_changes(host: str, findings: Sequence[Finding], ctx: EvalContext, run_id: str = "") -> list[Change]:
    """The host's failing or warning firewall.rules finding -> the openings (kind "firewall"), then what they leave
    dropped (kind "print", with the check's remedy for it: the ephemeral range, a rule on a port fix does not
    open); the host's other firewall.* findings (firewall.state) printed with their remedies; [] when nothing is
    wrong."""
    mine = [f for f in findings if f.host == host and f.status in (Status.FAIL, Status.WARN)]
    others = [_print(host, f.message, f.remedy or "", f.check) for f in mine if f.check != "firewall.rules"]
    wrong = [f for f in mine if f.check == "firewall.rules"]
    if not wrong:
        return others
    facts = ctx.other_facts.get(FACTS_KEY, {})
    host_facts = facts.get(host)
    if not isinstance(host_facts, Mapping):
        return [_print(host, f"{f.message} (the firewall facts were not gathered: not planned)", f.remedy or "")
                for f in wrong] + others
    found = plan_openings(host, facts, ctx)
    changes: list[Change] = []
    for planned in found.planned:
        apply, undo = commands(planned.opening, run_id)
        notes = [persistence(planned.opening.manager)]
        if planned.opening.manager == "firewalld" and planned.opening.priority:
            notes.append(f"priority {planned.opening.priority}: ahead of the zone's deny rules (firewalld 0.7 or "
                         "later)")
        changes.append(Change(host, ("firewall.rules",), "firewall", _summary(planned), commands=tuple(apply),
                              verify=VERIFY, undo=Undo(commands=tuple(undo)), notes=tuple(notes)))
    if found.topology is None:
        return changes + others
    evaluator = Evaluator(found.rulesets)
    issues = analyze(evaluator, found.targets, found.topology.peer_classes(host, evaluator.src_class, evaluator))
    groups = group(grade(issues, found.targets, ctx.cluster.master == host))
    if groups:
        networks = cluster_networks(facts, ctx, found.topology.addresses)
        peers = found.topology.peers(host)
        remedy = " && ".join(dict.fromkeys(group_remedy(g, host_facts, networks) for g in groups))
        left = "; ".join(group_text(g, peers) for g in groups)
        opened = "after the openings above, " if changes else ""
        changes.append(_print(host, f"{opened}{left}: fix opens only the master port and HCCL's ports, never "
                                    "the ephemeral range or other ports (printed, not applied)", remedy))
    if not changes:  # the analysis found nothing the finding says (facts it was judged with are missing here)
        changes = [_print(host, f.message, f.remedy or "") for f in wrong]
    return changes + others


def _chain_rules(host_facts: Mapping[str, Any], planned: Planned) -> Any:
    """The rules of the chain (or ufw's rule list, firewalld's zones) an opening goes into, as the facts hold them."""
    opening, rule = planned.opening, planned.blocking
    if opening.manager in ("ufw", "firewalld"):
        tool = host_facts.get(opening.manager)
        return tool.get("rules" if opening.manager == "ufw" else "zones") if isinstance(tool, Mapping) else None
    if rule.tool == "nft":
        nft = host_facts.get("nft")
        for table in (nft.get("tables") or [] if isinstance(nft, Mapping) else []):
            if isinstance(table, Mapping) and f"{table.get('family')} {table.get('name')}" == rule.table:
                return [c.get("rules") for c in table.get("chains") or []
                        if isinstance(c, Mapping) and c.get("name") == rule.chain]
        return None
    tool = host_facts.get(rule.tool.replace("-", "_"))
    lines = tool.get("rules") or [] if isinstance(tool, Mapping) else []
    return [line for line in lines if isinstance(line, str) and line.split()[1:2] == [rule.chain]]


def firewall_state(host: str, ctx: EvalContext) -> Any:
    """What the host's firewall changes depend on (JSON-able, no counters): the openings as planned (positions,
    handles, sources, zones) and the rules of the chains they go into, so ``--apply FILE`` refuses a host whose
    rules moved there."""
    facts = ctx.other_facts.get(FACTS_KEY, {})
    host_facts = facts.get(host)
    if not isinstance(host_facts, Mapping):
        return None
    found = plan_openings(host, facts, ctx)
    return [{**p.opening.__dict__, "sources": list(p.opening.sources), "ports": [list(r) for r in p.opening.ports],
             "rules": _chain_rules(host_facts, p)} for p in found.planned]
