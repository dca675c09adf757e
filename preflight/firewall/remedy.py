"""Commands that undo what blocks the job: delete a rule, or open the cluster's network (or the ports) in
front of a policy or a catch-all rule, through ufw or firewalld when they own the rules.

>>> drift_remedies(["ufw"], [])
['ufw disable  # or set it up the same way on every host']
>>> legacy_remedy("iptables-legacy")
'iptables-legacy-save > /root/iptables-legacy.rules  # then load them with iptables-nft-restore and flush \
the legacy tables'
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from typing import Any

from preflight.context import EvalContext
from preflight.findings import Facts
from preflight.firewall.addresses import Interface, IPAddress, as_ip, global_addresses
from preflight.firewall.analysis import Group
from preflight.firewall.model import AddrIn, PortIn, Rule, all_conds
from preflight.firewall.rulesets import active_managers
from preflight.ports import format_port_list, merge_ranges

_STOP = {"ufw": "ufw disable", "firewalld": "systemctl disable --now firewalld"}
_SHOW = {"ufw": "ufw status verbose", "firewalld": "firewall-cmd --list-all"}


def cluster_networks(facts: Mapping[str, Facts], ctx: EvalContext,
                     parsed: Mapping[str, list[tuple[str, Interface]]] | None = None) -> dict[int, str]:
    """IP version -> the network of the hosts' addresses (a subnet all are in, else the smallest covering
    prefix), for remedies; a placeholder when the addresses are unknown. ``parsed``: each host's
    :func:`global_addresses` when already parsed (``Topology.addresses``)."""
    networks: dict[int, str] = {}
    by_host = {host: parsed[host] if parsed is not None and host in parsed else global_addresses(facts[host])
               for host in facts}
    for version, bits in ((4, 32), (6, 128)):
        addresses = [a for h in ctx.hosts for a in [as_ip(h.address)] if a is not None and a.version == version]
        found = [iface for host in by_host for _, iface in by_host[host] if iface.version == version]
        if len(addresses) < len(ctx.hosts) or not addresses:
            firsts: dict[str, IPAddress] = {}
            for host in by_host:
                for _, iface in by_host[host]:
                    if iface.version == version:
                        firsts.setdefault(host, iface.ip)
            addresses = list(firsts.values())
        name = "IPv6 " if version == 6 else ""
        networks[version] = f"<cluster {name}network>"
        if not addresses:
            continue
        for subnet in sorted({i.network for i in found}, key=lambda n: n.prefixlen, reverse=True):
            if all(a in subnet for a in addresses):
                networks[version] = str(subnet)
                break
        else:
            low, high = int(min(addresses)), int(max(addresses))
            networks[version] = str(ipaddress.ip_network((low, bits - (low ^ high).bit_length()), strict=False))
    return networks


def _catch_all(rule: Rule) -> bool:
    """A policy, or a rule that matches no port and no source: removing it would open everything."""
    return rule.policy or not any(isinstance(c, (PortIn, AddrIn)) for c in all_conds(rule.conds))


def group_remedy(group: Group, facts: Mapping[str, Any], networks: Mapping[int, str]) -> str:
    """Commands that let the cluster's connections past the group's rules (``networks``: IP version -> network).

    A rule that names a port or a source is deleted; a policy or a catch-all rule gets an accept rule in
    front of it, for the group's ports only unless the ephemeral range (any port) is blocked.
    """
    ports = format_port_list(merge_ranges(r for _, i in group.issues for r in i.ports))
    everything = any(i.target.kind == "ephemeral" for _, i in group.issues)
    manager = active_managers(facts)
    commands = []
    for rule in group.rules:
        widen = everything or not rule.port_specific
        ipv6 = rule.tool.startswith("ip6") or rule.table.startswith("ip6 ")
        network = networks[6 if ipv6 else 4]
        if rule.chain.startswith(("ufw-", "ufw6-")) or ("ufw" in manager and rule.tool != "nft" and rule.policy):
            commands.append(f"ufw insert 1 allow from {network}" if widen
                            else f"ufw insert 1 allow proto tcp from {network} to any port {ports.replace('-', ':')}")
        elif rule.table.endswith(" firewalld") or ("firewalld" in manager and rule.tool == "nft" and rule.policy):
            commands.append(f"firewall-cmd --permanent --zone=trusted --add-source={network} && firewall-cmd --reload"
                            if widen else f"firewall-cmd --permanent --add-port={ports}/tcp && firewall-cmd --reload")
        elif rule.tool != "nft":
            if _catch_all(rule):
                spec = f"-s {network} -j ACCEPT" if widen else \
                    f"-p tcp -m multiport --dports {ports.replace('-', ':')} -j ACCEPT"
                commands.append(f"{rule.tool} -I {rule.chain} {spec}")
            else:
                commands.append(f"{rule.tool} -D {rule.text[3:]}")
        else:
            family, _, table = rule.table.partition(" ")
            if _catch_all(rule):
                match = (f"{'ip6' if ipv6 else 'ip'} saddr {network}" if widen
                         else f"tcp dport {{ {ports.replace(',', ', ')} }}")
                commands.append(f"nft insert rule {family} {table} {rule.chain} {match} accept")
            elif rule.handle is not None:
                commands.append(f"nft delete rule {family} {table} {rule.chain} handle {rule.handle}")
            else:
                commands.append(f"nft -a list chain {family} {table} {rule.chain}  # then: nft delete rule {family} "
                                f"{table} {rule.chain} handle <handle of `{rule.text}`>")
    return " && ".join(dict.fromkeys(commands))


def legacy_remedy(tool: str) -> str:
    """Move ``tool``'s (iptables-legacy, ip6tables-legacy) rules over to the nf_tables backend."""
    return (f"{tool}-save > /root/{tool}.rules  # then load them with "
            f"{tool.replace('-legacy', '-nft')}-restore and flush the legacy tables")


def drift_remedies(here: Sequence[str], there: Sequence[str]) -> list[str]:
    """Managers active ``here`` but not on most hosts (``there``): stop them; the other way round: copy them."""
    return ([_STOP[m] + "  # or set it up the same way on every host" for m in here if m not in there]
            + [_SHOW[m] + "  # on a host where it is active, then apply the same here" for m in there
               if m not in here])
