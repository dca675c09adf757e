"""A host's facts -> its rulesets (each iptables tool, each nft table, judged once), and which firewall
managers are active there.

>>> facts = {"iptables": {"installed": True, "readable": True, "backend": "nf_tables", "policies": {"INPUT": "DROP"}},
...          "nft": {"installed": True, "readable": True, "tables": [{"family": "ip", "name": "filter", "chains": [
...              {"name": "INPUT", "hook": "input", "policy": "drop", "rules": []}]}]},
...          "ip6tables": {"installed": True, "readable": False, "error": "timed out"}}
>>> rulesets, unreadable = build_rulesets(facts)
>>> [(rs.tool, rs.table) for rs in rulesets], unreadable
([('iptables', 'filter')], ['ip6tables: timed out'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from preflight.firewall.iptables_rules import compile_iptables
from preflight.firewall.model import Rule, RuleSet
from preflight.firewall.nft_rules import compile_nft

# The iptables tools: facts key and family (the key with "-" for "_" is the command).
TOOLS = (("iptables", "ipv4"), ("ip6tables", "ipv6"), ("iptables_legacy", "ipv4"), ("ip6tables_legacy", "ipv6"))


def build_rulesets(facts: Mapping[str, Any]) -> tuple[list[RuleSet], list[str]]:
    """Every readable ruleset of a host, and "tool: error" for the ones that could not be read.

    iptables on nf_tables shows its tables in ``nft list ruleset`` too: they are judged as iptables rules.
    """
    rulesets: list[RuleSet] = []
    unreadable: list[str] = []
    shown_by_iptables: set[str] = set()
    for key, family in TOOLS:
        tool = facts.get(key)
        if not isinstance(tool, Mapping) or not tool.get("installed"):
            continue
        name = key.replace("_", "-")
        if not tool.get("readable"):
            unreadable.append(f"{name}: {tool.get('error') or 'unreadable'}")
            continue
        rulesets.append(compile_iptables(tool, name, family))
        if tool.get("backend") == "nf_tables":
            shown_by_iptables.add("ip filter" if family == "ipv4" else "ip6 filter")
    nft = facts.get("nft")
    if isinstance(nft, Mapping) and nft.get("installed"):
        if nft.get("readable"):
            rulesets += compile_nft(nft, shown_by_iptables)  # iptables-nft always uses the tables named filter
        else:
            unreadable.append(f"nft: {nft.get('error') or 'unreadable'}")
    return rulesets, unreadable


def active_managers(facts: Mapping[str, Any]) -> list[str]:
    """The firewall managers active on a host: "ufw", "firewalld"."""
    active = []
    ufw = facts.get("ufw")
    if isinstance(ufw, Mapping) and ufw.get("status") == "active":
        active.append("ufw")
    firewalld = facts.get("firewalld")
    if isinstance(firewalld, Mapping) and firewalld.get("state") == "running":
        active.append("firewalld")
    return active


def input_filters(rulesets: Sequence[RuleSet]) -> list[Rule]:
    """Drop/reject rules and non-accept policies on the input path."""
    found: list[Rule] = []
    for rs in rulesets:
        for chain in rs.chains.values():
            found += [r for r in chain.rules if r.verdict in ("drop", "reject", "queue")]
            if chain.policy is not None and chain.policy.verdict == "drop":
                found.append(chain.policy)
    return found
