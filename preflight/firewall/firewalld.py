"""``firewall-cmd --state`` then ``--list-all`` -> facts (state, zones), and those facts in one line.

>>> describe_firewalld(parse_firewalld(ProbeOutput("running\\npublic (active)\\n  target: default\\n"
...                                                "  services: ssh dhcpv6-client\\n  ports: \\n")))
'firewalld: running, zone public (target default, services ssh dhcpv6-client, ports -)'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.batch import ProbeOutput
from preflight.firewall.tool import settle, tool_facts

_ZONE_KEYS = ("target", "interfaces", "sources", "services", "ports")  # "key: value" lines of --list-all


def parse_firewalld(out: ProbeOutput) -> dict[str, Any]:
    """``firewall-cmd --state`` then ``--list-all`` -> state and the default zone.

    >>> f = parse_firewalld(ProbeOutput("running\\npublic (active)\\n  target: default\\n  services: ssh\\n"
    ...                                 "  ports: 9100/tcp\\n  rich rules: \\n"))
    >>> f["state"], f["zones"][0]["name"], f["zones"][0]["services"], f["zones"][0]["ports"]
    ('running', 'public', ['ssh'], ['9100/tcp'])
    """
    facts = tool_facts(out)
    facts.update({"state": None, "zones": []})
    if not facts["installed"]:
        return facts
    lines = out.stdout.splitlines()
    first = lines[0].strip() if lines else ""
    if first in ("running", "not running"):
        facts["state"] = first
        lines = lines[1:]
    elif re.search(r"^\s*(FirewallD is )?not running\s*$", out.stderr, re.M | re.I):
        facts["state"] = "not running"  # firewall-cmd --state writes this to stderr (exit 252)
    zone: dict[str, Any] | None = None
    in_rich = False
    for line in lines:
        header = re.fullmatch(r"(\S+)(?: \(([^)]*)\))?\s*", line)
        if header and not line.startswith((" ", "\t")):
            flags = [flag.strip() for flag in (header[2] or "").split(",")]
            zone = {"name": header[1], "active": "active" in flags, "default": "default" in flags,
                    "target": None, "interfaces": [], "sources": [], "services": [], "ports": [], "rich_rules": []}
            facts["zones"].append(zone)
            in_rich = False
            continue
        if zone is None:
            continue
        key, sep, value = line.strip().partition(":")
        if in_rich and line.strip().startswith("rule "):
            zone["rich_rules"].append(line.strip())
        elif sep and key in _ZONE_KEYS:
            zone[key] = value.strip() if key == "target" else value.split()
            in_rich = False
        elif sep and key == "rich rules":
            in_rich = True
            if value.strip().startswith("rule "):
                zone["rich_rules"].append(value.strip())
        elif sep:
            in_rich = False
    if facts["state"] == "not running" and out.exit_status not in (None, 0):
        facts["error"], facts["permission_denied"] = None, False  # a stopped firewalld is a state
    return settle(facts, out, facts["state"] is not None)


def describe_firewalld(firewalld: Any) -> str:
    """One line for firewall.state: the state and, when running, the default zone."""
    if not isinstance(firewalld, Mapping):
        return ""
    if not firewalld.get("installed"):
        return "firewalld: not installed"
    if firewalld.get("state") is None:
        return f"firewalld: unreadable ({firewalld.get('error')})"
    zones = firewalld.get("zones") or []
    if firewalld.get("state") != "running" or not zones:
        return f"firewalld: {firewalld.get('state')}"
    zone = zones[0]
    return (f"firewalld: running, zone {zone.get('name')} (target {zone.get('target')}, services "
            f"{' '.join(zone.get('services') or []) or '-'}, ports {' '.join(zone.get('ports') or []) or '-'})")
