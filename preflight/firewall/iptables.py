"""``iptables -V; iptables -S`` (ip6tables, iptables-legacy alike) -> facts, and those facts in one line.

>>> facts = parse_iptables(ProbeOutput("iptables v1.8.9 (nf_tables)\\n-P INPUT DROP\\n-A INPUT -j ACCEPT\\n"))
>>> describe_iptables(facts, "iptables")
'iptables 1.8.9 (nf_tables): INPUT policy DROP, 1 rule'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.batch import ProbeOutput
from preflight.firewall.tool import tool_facts

_IPT_VERSION = re.compile(r"^(?:ip6?tables(?:-legacy|-nft)?) v(\S+)(?: \(([\w-]+)\))?")
# What the probe prints instead of listing a legacy filter table that is not loaded.
NO_LEGACY_TABLE = "# preflight: no legacy filter table loaded"


def parse_iptables(out: ProbeOutput) -> dict[str, Any]:
    """``iptables -V; iptables -S`` -> version, backend, chain policies, user chains and ``-A`` rules.

    >>> f = parse_iptables(ProbeOutput("iptables v1.8.9 (nf_tables)\\n-P INPUT DROP\\n-A INPUT -j ACCEPT\\n"))
    >>> f["backend"], f["policies"], f["rules"], f["readable"]
    ('nf_tables', {'INPUT': 'DROP'}, ['-A INPUT -j ACCEPT'], True)
    """
    facts = tool_facts(out)
    facts.update({"version": None, "backend": None, "policies": {}, "chains": [], "rules": [], "notes": []})
    if not facts["installed"]:
        return facts
    unloaded = False
    junk: list[str] = []
    for line in out.stdout.splitlines() + [ln for ln in out.stderr.splitlines() if ln.startswith("#")]:
        text = line.strip()
        version = _IPT_VERSION.match(text)
        if version:
            facts["version"], facts["backend"] = version[1], version[2] or "legacy"
        elif text.startswith("-P "):
            parts = text.split()
            if len(parts) == 3:
                facts["policies"][parts[1]] = parts[2]
        elif text.startswith("-N ") and len(text.split()) == 2:
            facts["chains"].append(text.split()[1])
        elif text.startswith("-A "):
            facts["rules"].append(text)
        elif text == NO_LEGACY_TABLE:
            unloaded = True
        elif text.startswith("#"):
            facts["notes"].append(text.lstrip("# ").strip())
        elif text:
            junk.append(text)
    if facts["error"] is None:
        if facts["policies"] or unloaded:
            facts["readable"] = True
            if unloaded:
                facts["notes"].append("filter table not loaded: no rules")
        else:
            facts["error"] = f"unrecognized output: {junk[0][:100]!r}" if junk else "no rules listed"
    return facts


def describe_iptables(tool: Any, name: str) -> str:
    """One line for firewall.state (``name``: iptables, ip6tables, iptables-legacy, ip6tables-legacy).

    A legacy tool that is not installed says nothing: it is only looked for next to nf_tables ones.
    """
    if not isinstance(tool, Mapping):
        return ""
    if not tool.get("installed"):
        return f"{name}: not installed" if "legacy" not in name else ""
    version = f" {tool.get('version')}" if tool.get("version") else ""
    backend = f" ({tool.get('backend')})" if tool.get("backend") else ""
    if not tool.get("readable"):
        return f"{name}{version}{backend}: unreadable ({tool.get('error')})"
    rules = tool.get("rules") or []
    policy = (tool.get("policies") or {}).get("INPUT", "ACCEPT")
    return f"{name}{version}{backend}: INPUT policy {policy}, {len(rules)} rule{'s' if len(rules) != 1 else ''}"
