"""``nft --version; nft -a list ruleset`` -> facts (tables, chains with hooks and policies, rules with handles,
sets), and those facts in one line.

>>> facts = parse_nft(ProbeOutput("nftables v1.0.6 (Lester Gooch #5)\\ntable inet t { # handle 1\\n"
...     "\\tchain input { # handle 1\\n\\t\\ttype filter hook input priority filter; policy drop;\\n\\t}\\n}\\n"))
>>> facts["tables"][0]["chains"][0]["hook"], describe_nft(facts)
('input', 'nftables 1.0.6: tables inet t')
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.batch import ProbeOutput
from preflight.firewall.tool import tool_facts

_MANAGED = re.compile(r"table (\w+) (\S+) is managed by iptables-nft")


def _split_comment(line: str) -> tuple[str, str]:
    """Code and comment of an nft line (``#`` outside double quotes starts the comment)."""
    quoted = False
    for index, char in enumerate(line):
        if char == '"':
            quoted = not quoted
        elif char == "#" and not quoted:
            return line[:index], line[index + 1:]
    return line, ""


_NFT_OBJECTS = ("table", "chain", "set", "map", "flowtable", "counter", "quota", "ct", "limit", "secmark",
                "synproxy", "tunnel")


def parse_nft_ruleset(text: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Tables of ``nft [-a] list ruleset``: chains (hook, priority, policy, rules with handles) and sets.

    >>> tables, problems = parse_nft_ruleset('table inet t { # handle 1\\n\\tchain input { # handle 1\\n'
    ...     '\\t\\ttype filter hook input priority filter; policy drop;\\n'
    ...     '\\t\\ttcp dport 22 counter packets 3 bytes 180 accept # handle 2\\n\\t}\\n}\\n')
    >>> tables[0]["chains"][0]["policy"], tables[0]["chains"][0]["rules"], problems
    ('drop', [{'text': 'tcp dport 22 counter accept', 'handle': 2}], [])
    """
    tables: list[dict[str, Any]] = []
    problems: list[str] = []
    stack: list[tuple[str, dict[str, Any] | None]] = []
    pending = ""
    for raw in text.splitlines():
        code, comment = _split_comment(raw)
        handle_match = re.search(r"\bhandle (\d+)", comment)
        handle = int(handle_match[1]) if handle_match else None
        line = f"{pending} {code.strip()}".strip() if pending else code.strip()
        if not line:
            continue
        words = line.split()
        if line.count("{") > line.count("}") and not (line.endswith("{") and words[0] in _NFT_OBJECTS):
            pending = line  # a set's elements (or an anonymous set) continue on the next line
            continue
        pending = ""
        kind, obj = stack[-1] if stack else ("top", None)
        if line.startswith("}"):
            if stack:
                stack.pop()
            else:
                problems.append("unbalanced '}'")
            continue
        if line.endswith("{"):
            words = line[:-1].split()
            if kind == "top" and words[0] == "table" and len(words) in (2, 3):
                family, name = (words[1], words[2]) if len(words) == 3 else ("ip", words[1])
                table: dict[str, Any] = {"family": family, "name": name, "flags": [], "chains": [], "sets": []}
                tables.append(table)
                stack.append(("table", table))
            elif kind == "table" and obj is not None and words[0] == "chain" and len(words) == 2:
                chain: dict[str, Any] = {"name": words[1], "type": None, "hook": None, "priority": None,
                                         "policy": None, "device": None, "rules": []}
                obj["chains"].append(chain)
                stack.append(("chain", chain))
            elif kind == "table" and obj is not None and words[0] in ("set", "map") and len(words) == 2:
                nft_set: dict[str, Any] = {"name": words[1], "kind": words[0], "type": None, "flags": [],
                                           "elements": []}
                obj["sets"].append(nft_set)
                stack.append(("set", nft_set))
            else:
                if kind == "top":
                    problems.append(f"unexpected block: {line[:80]}")
                stack.append(("other", None))
            continue
        if kind == "chain" and obj is not None:
            _chain_line(obj, line, handle)
        elif kind == "set" and obj is not None:
            _set_line(obj, line)
        elif kind == "table" and obj is not None and words[0] == "flags":
            obj["flags"] = _flags(words[1:])
        elif kind == "top":
            problems.append(f"unexpected line: {line[:80]}")
    if pending or stack:
        problems.append("truncated: a block is not closed")
    return tables, problems


def _chain_line(chain: dict[str, Any], line: str, handle: int | None) -> None:
    words = line.split()
    if words[0] == "type" or (words[0] == "policy" and line.rstrip().endswith(";")):
        for part in line.split(";"):
            tokens = part.split()
            for index, token in enumerate(tokens[:-1]):
                if token in ("type", "hook", "policy", "device") and index == tokens.index(token):
                    chain[token] = tokens[index + 1].strip('"')
            if "priority" in tokens:
                chain["priority"] = " ".join(tokens[tokens.index("priority") + 1:])
    elif words[0] in ("comment", "devices"):
        return
    else:
        text = re.sub(r"\bcounter packets \d+ bytes \d+", "counter", " ".join(words))
        chain["rules"].append({"text": text, "handle": handle})


def _set_line(nft_set: dict[str, Any], line: str) -> None:
    words = line.split()
    if words[0] in ("type", "typeof"):
        nft_set["type"] = " ".join(words[1:])
    elif words[0] == "flags":
        nft_set["flags"] = _flags(words[1:])
    elif words[0] == "elements":
        inner = line[line.find("{") + 1: line.rfind("}")] if "{" in line else " ".join(words[2:])
        nft_set["elements"] = [item.strip() for item in split_top(inner, ",") if item.strip()]


def _flags(words: list[str]) -> list[str]:
    """``flags interval, timeout`` after its first word -> ["interval", "timeout"]."""
    return [flag.strip() for flag in " ".join(words).split(",") if flag.strip()]


def split_top(text: str, sep: str) -> list[str]:
    """Split on ``sep`` outside braces, parentheses and quotes.

    >>> split_top('10.0.0.1, { a, b }, "c,d"', ",")
    ['10.0.0.1', ' { a, b }', ' "c,d"']
    """
    parts, depth, quoted, current = [], 0, False, ""
    for char in text:
        if char == '"':
            quoted = not quoted
        elif not quoted and char in "{(":
            depth += 1
        elif not quoted and char in "})":
            depth -= 1
        if char == sep and depth == 0 and not quoted:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def parse_nft(out: ProbeOutput) -> dict[str, Any]:
    """``nft --version; nft -a list ruleset`` -> version, tables, and which tables iptables-nft manages."""
    facts = tool_facts(out)
    facts.update({"version": None, "tables": [], "iptables_nft_tables": [], "problems": []})
    if not facts["installed"]:
        return facts
    lines = out.stdout.splitlines()
    if lines and lines[0].startswith("nftables v"):
        facts["version"] = lines[0].split()[1].lstrip("v")
        lines = lines[1:]
    tables, problems = parse_nft_ruleset("\n".join(lines))
    facts["tables"], facts["problems"] = tables, problems
    managed = {f"{m[1]} {m[2]}" for m in _MANAGED.finditer(out.stdout + "\n" + out.stderr)}
    facts["iptables_nft_tables"] = sorted(managed)
    if facts["error"] is None:
        if any(p.startswith("truncated") for p in problems):
            facts["error"] = "the listing is cut off (a block is not closed)"
        elif problems and not tables:
            facts["error"] = f"unrecognized output: {problems[0]}"
        else:
            facts["readable"] = True
    return facts


def describe_nft(nft: Any) -> str:
    """One line for firewall.state: the version and the tables (those iptables-nft manages marked)."""
    if not isinstance(nft, Mapping):
        return ""
    if not nft.get("installed"):
        return "nftables: not installed"
    version = f" {nft.get('version')}" if nft.get("version") else ""
    if not nft.get("readable"):
        return f"nftables{version}: unreadable ({nft.get('error')})"
    managed = set(nft.get("iptables_nft_tables") or [])
    tables = [f"{t.get('family')} {t.get('name')}" + (" (iptables-nft)" if f"{t.get('family')} {t.get('name')}"
                                                       in managed else "") for t in nft.get("tables") or []]
    return f"nftables{version}: " + (f"tables {', '.join(tables)}" if tables else "no tables")
