"""``ufw status verbose`` -> facts (status, default incoming policy, rules), and those facts in one line.

>>> describe_ufw(parse_ufw(ProbeOutput("Status: active\\nDefault: deny (incoming), allow (outgoing)\\n")))
'ufw: active, default incoming deny, 0 rules'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.batch import ProbeOutput
from preflight.firewall.tool import settle, tool_facts


def parse_ufw(out: ProbeOutput) -> dict[str, Any]:
    """``ufw status verbose`` -> status, default incoming policy and the rules (columns joined by one space).

    >>> f = parse_ufw(ProbeOutput("Status: active\\nDefault: deny (incoming), allow (outgoing)\\n\\n"
    ...     "To                         Action      From\\n--                         ------      ----\\n"
    ...     "22/tcp                     ALLOW IN    Anywhere\\n"))
    >>> f["status"], f["default_incoming"], f["rules"]
    ('active', 'deny', ['22/tcp ALLOW IN Anywhere'])
    """
    facts = tool_facts(out)
    facts.update({"status": None, "default_incoming": None, "rules": []})
    if not facts["installed"]:
        return facts
    in_rules = False
    for line in out.stdout.splitlines():
        text = line.strip()
        if text.startswith("Status:"):
            facts["status"] = text.split(":", 1)[1].strip() or None
        elif text.startswith("Default:"):
            found = re.search(r"(\w+) \(incoming\)", text)
            facts["default_incoming"] = found[1] if found else None
        elif re.fullmatch(r"--+(\s+--+)*", text):
            in_rules = True
        elif in_rules and text:
            facts["rules"].append(" ".join(re.split(r"\s{2,}", text)))
    return settle(facts, out, facts["status"] in ("active", "inactive"))


def describe_ufw(ufw: Any) -> str:
    """One line for firewall.state."""
    if not isinstance(ufw, Mapping):
        return ""
    if not ufw.get("installed"):
        return "ufw: not installed"
    if not ufw.get("readable"):
        return f"ufw: unreadable ({ufw.get('error')})"
    if ufw.get("status") != "active":
        return f"ufw: {ufw.get('status')}"
    count = len(ufw.get("rules") or [])
    return f"ufw: active, default incoming {ufw.get('default_incoming')}, {count} rule{'s' if count != 1 else ''}"
