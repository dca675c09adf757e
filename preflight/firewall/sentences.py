"""The sentences of firewall.rules findings: which ports are dropped or rejected, by which rules, for whom.

>>> from preflight.firewall.model import Rule
>>> rule_name(Rule([], "drop", None, "tcp dport 29500 drop", "nft", "inet filter", "input"))
'nft rule `tcp dport 29500 drop` (table inet filter, chain input)'
"""

from __future__ import annotations

from preflight.firewall.analysis import Group
from preflight.firewall.model import Rule
from preflight.model import Status
from preflight.ports import format_port_list


def rule_name(rule: Rule) -> str:
    """A rule or policy as the report names it: the tool, its text, and where an nft one stands."""
    where = "" if rule.tool != "nft" else f" (table {rule.table}, chain {rule.chain})"
    if rule.policy and rule.tool != "nft":
        return f"{rule.tool} policy `{rule.text}`"
    if rule.policy:
        return f"nft chain policy `{rule.text}`{where}"
    return f"{rule.tool} rule `{rule.text}`{where}"


def group_text(group: Group, all_peers: set[str]) -> str:
    """One sentence for a group: the ports, dropped or rejected (or maybe), by which rules, from whom, why."""
    ports = " and ".join(f"tcp {format_port_list(i.ports)} ({i.target.label})" for _, i in group.issues)
    rejected = any(r.verdict == "reject" for r in group.rules)
    verb = ("are" if len(group.issues) > 1 else "is") + (" rejected" if rejected else " dropped")
    if not group.blocked:
        verb = "may be " + verb.split()[-1]
    rules = ", ".join(rule_name(r) for r in group.rules)
    peers = sorted(p for p in group.peers if p)
    who = ""
    if peers and set(peers) != {p for p in all_peers if p}:
        who = f" for connections from {', '.join(peers[:5])}{' and more' if len(peers) > 5 else ''}"
    why = ""
    if group.undecided:
        why = f" (depending on {', '.join(sorted(group.undecided))}, which preflight cannot decide)"
    elif not group.blocked:
        hit = sorted({p for _, i in group.issues for p in i.paths})
        why = f" (only on some of the paths between the hosts: {', '.join(hit)})"
    text = f"{ports} {verb} by {rules}{who}{why}"
    if any(i.target.kind == "ephemeral" and s == Status.WARN and i.blocked for s, i in group.issues):
        text += ": a small part of the ephemeral range, so only some listeners are hit"
    return text
