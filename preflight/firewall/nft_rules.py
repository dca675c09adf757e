"""``nft list ruleset`` facts -> RuleSets: one per table with a base chain on the input path, each rule's
matches as conditions (through nft_matches) and its statements (counter, log, limit, vmap...) read or skipped.

>>> table = {"family": "inet", "name": "t", "sets": [], "chains": [{"name": "input", "hook": "input",
...          "policy": "drop", "rules": [{"text": "tcp dport 22 accept", "handle": 3}]}]}
>>> [(rs.table, rs.bases, rs.chains["input"].policy.text) for rs in compile_nft({"tables": [table]})]
[('inet t', ['input'], 'policy drop')]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from preflight.firewall.iptables_rules import IPT_VERDICTS
from preflight.firewall.model import MAYBE, Chain, Cond, Const, Rule, RuleSet
from preflight.firewall.nft_matches import NftContext, Token, selector_cond, value_items
from preflight.firewall.nftables import split_top

_OPS = {"==": "==", "eq": "==", "!=": "!=", "ne": "!=", "<": "<", "lt": "<", ">": ">", "gt": ">", "<=": "<=",
        "le": "<=", ">=": ">=", "ge": ">="}
_META_KEYS = {"iif", "iifname", "oif", "oifname", "mark", "pkttype", "l4proto", "nfproto", "protocol", "skuid",
              "skgid", "iiftype", "oiftype", "length", "priority", "random", "cpu", "cgroup", "nftrace"}
_LOG_OPTIONS = {"prefix", "level", "flags", "group", "snaplen", "queue-threshold"}
_NAT = {"masquerade", "snat", "dnat", "redirect", "tproxy", "dup", "fwd", "synproxy", "notrack"}


def nft_tokens(text: str) -> list[Token]:
    """Words of an nft rule; ``{ a, b }`` becomes a list of its elements, quotes and parentheses stay in words.

    >>> nft_tokens('iifname "eth 0" tcp dport { 22, 60000-60015 } ct state established,related accept')
    ['iifname', '"eth 0"', 'tcp', 'dport', ['22', '60000-60015'], 'ct', 'state', 'established,related', 'accept']
    """
    tokens: list[Token] = []
    index, current = 0, ""
    while index < len(text):
        char = text[index]
        if char == '"':
            end = text.find('"', index + 1)
            end = len(text) - 1 if end < 0 else end
            current += text[index:end + 1]
            index = end + 1
            continue
        if char in "({":
            closing = ")" if char == "(" else "}"
            depth, end = 0, index
            while end < len(text):
                if text[end] == char:
                    depth += 1
                elif text[end] == closing:
                    depth -= 1
                    if depth == 0:
                        break
                end += 1
            inner = text[index + 1:end]
            if char == "(":
                current += f"({inner})"
            else:
                if current:
                    tokens.append(current)
                    current = ""
                tokens.append([item.strip() for item in split_top(inner, ",") if item.strip()])
            index = end + 1
            continue
        if char.isspace():
            if current:
                tokens.append(current)
            current = ""
        else:
            current += char
        index += 1
    if current:
        tokens.append(current)
    return tokens


def _nft_verdict(words: Sequence[str]) -> tuple[str, str | None]:
    if not words:
        return "continue", None
    if words[0] in ("jump", "goto") and len(words) > 1:
        return words[0], words[1]
    return {"accept": "accept", "drop": "drop", "reject": "reject", "return": "return", "queue": "queue",
            "continue": "continue"}.get(words[0], "continue"), None


def compile_nft_rule(text: str, handle: int | None, ctx: NftContext) -> list[Rule]:
    """One nft rule as Rules (a verdict map gives one Rule per element).

    >>> import ipaddress
    >>> from preflight.firewall.model import Packet
    >>> ctx = NftContext("inet", "t", "input", {})
    >>> [r.verdict for r in compile_nft_rule("tcp dport vmap { 22 : accept, 29500 : drop }", 7, ctx)]
    ['accept', 'drop']
    >>> rule = compile_nft_rule("ip saddr != 10.0.0.0/8 tcp dport 29500 counter reject", 8, ctx)[0]
    >>> rule.match(Packet("ipv4", 29500, ipaddress.ip_address("10.0.0.2"), None, None))
    0
    """
    tokens = nft_tokens(text)
    conds: list[Cond] = []
    verdict, target = "continue", None
    port_specific = False
    vmaps: list[tuple[list[str], list[str]]] = []
    index = 0

    def word(at: int) -> str:
        token = tokens[at] if at < len(tokens) else ""
        return token if isinstance(token, str) else ""

    while index < len(tokens):
        token = tokens[index]
        if isinstance(token, list):
            index += 1
            continue
        if token in ("accept", "drop", "return", "continue"):
            verdict = token
            index += 1
            continue
        if token in ("reject", "queue"):
            verdict = token
            break
        if token in ("jump", "goto"):
            verdict, target = token, word(index + 1)
            index += 2
            continue
        if token == "counter":
            index += 1
            if word(index) == "name":
                index += 2
            while word(index) in ("packets", "bytes"):
                index += 2
            continue
        if token == "log":
            index += 1
            while word(index) in _LOG_OPTIONS:
                index += 2
            continue
        if token == "limit":
            conds.append(Const(MAYBE, "a rate limit"))
            index += 1
            while word(index) in ("rate", "over", "burst") or re.fullmatch(r"\d+(/\w+)?|packets|bytes|kbytes|mbytes",
                                                                          word(index)):
                index += 1
            continue
        if token == "quota":
            conds.append(Const(MAYBE, "a quota"))
            index += 1
            while word(index) and word(index) not in ("accept", "drop", "reject", "counter", "jump", "goto"):
                index += 1
            continue
        if token == "comment":
            index += 2
            continue
        if token in _NAT:
            break  # nat and other statements end what a filter evaluation needs
        if token in ("add", "update", "delete") and word(index + 1).startswith("@"):
            index += 3
            continue
        if token == "flow":
            index += 3
            continue
        if token == "xt":
            kind, name = word(index + 1), word(index + 2).strip('"')
            if kind == "match":
                conds.append(Const(MAYBE, f"the iptables match {name} (xt)"))
            elif name in IPT_VERDICTS:
                verdict = IPT_VERDICTS[name]
            index += 3
            continue
        # a selector: meta/ip/ip6/tcp/udp/th/ct/fib/... then [op] [& mask] value, or "set" (a statement)
        selector = [token]
        index += 1
        if token in _META_KEYS:
            selector = ["meta", token]
        elif token == "fib":
            while index < len(tokens) and word(index) not in ("oif", "oifname", "type") and word(index):
                selector.append(word(index))
                index += 1
            selector.append(word(index))
            index += 1
        elif token in ("meta", "ip", "ip6", "tcp", "udp", "udplite", "sctp", "dccp", "th", "ct", "icmp", "icmpv6",
                       "igmp", "esp", "ah", "comp", "ipcomp", "ether", "vlan", "arp", "gre"):
            selector.append(word(index))
            index += 1
        else:
            conds.append(Const(MAYBE, f"the match {token}"))
            continue
        if word(index) == ".":  # a concatenation: ip saddr . tcp dport @set
            while index < len(tokens) and not (word(index).startswith("@") or isinstance(tokens[index], list)):
                index += 1
            conds.append(Const(MAYBE, "a concatenated set lookup"))
            index += 1
            continue
        if word(index) == "set":
            index += 2
            continue
        mask = None
        if word(index) == "&":
            mask, index = word(index + 1), index + 2
        op = "=="
        if word(index) in _OPS:
            op, index = _OPS[word(index)], index + 1
        if word(index) == "vmap":
            value = tokens[index + 1] if index + 1 < len(tokens) else None
            elements, _ = value_items(value, ctx) if value is not None else ([], True)
            vmaps.append((selector, elements))
            index += 2
            continue
        value = tokens[index] if index < len(tokens) else None
        index += 1
        if word(index) == "/":  # tcp flags syn / fin,syn,rst,ack: the mask after the value
            mask, index = mask or word(index + 1), index + 2
        cond, is_port = selector_cond(selector, op, mask, value, ctx)
        if cond is not None:
            conds.append(cond)
        port_specific = port_specific or is_port
    table = f"{ctx.family} {ctx.table}"
    if not vmaps:
        return [Rule(conds, verdict, target, text, "nft", table, ctx.chain, handle, port_specific)]
    selector, elements = vmaps[-1]
    rules = []
    for element in elements:
        key, sep, action = element.rpartition(" : ")
        if not sep:
            continue
        cond, is_port = selector_cond(selector, "==", None, key.strip(), ctx)
        element_verdict, element_target = _nft_verdict(action.split())
        rules.append(Rule(conds + ([cond] if cond else []), element_verdict, element_target, text, "nft", table,
                          ctx.chain, handle, port_specific or is_port))
    return rules


_NFT_FAMILIES = {"ip": ("ipv4",), "ip6": ("ipv6",), "inet": ("ipv4", "ipv6"), "netdev": ("ipv4", "ipv6")}
_INPUT_HOOKS = ("prerouting", "input", "ingress")


def compile_nft(facts: Mapping[str, Any], skip: Iterable[str] = ()) -> list[RuleSet]:
    """One RuleSet per nft table that has a base chain on the input path (``skip``: "family name" tables)."""
    skipped = set(skip)
    rulesets: list[RuleSet] = []
    for table in facts.get("tables") or []:
        if not isinstance(table, Mapping):
            continue
        family, name = str(table.get("family")), str(table.get("name"))
        if family not in _NFT_FAMILIES or f"{family} {name}" in skipped or "dormant" in (table.get("flags") or []):
            continue
        sets = {str(s.get("name")): s for s in table.get("sets") or [] if isinstance(s, Mapping)}
        chains: dict[str, Chain] = {}
        bases: list[str] = []
        for raw in table.get("chains") or []:
            if not isinstance(raw, Mapping):
                continue
            chain_name = str(raw.get("name"))
            ctx = NftContext(family, name, chain_name, sets)
            chain = Chain(chain_name, device=raw.get("device"))
            for rule in raw.get("rules") or []:
                if isinstance(rule, Mapping):
                    handle = rule.get("handle")
                    chain.rules += compile_nft_rule(str(rule.get("text", "")),
                                                    handle if isinstance(handle, int) else None, ctx)
            if raw.get("hook") in _INPUT_HOOKS:
                policy = str(raw.get("policy") or "accept").lower()
                chain.policy = Rule([], "drop" if policy == "drop" else "accept", None, f"policy {policy}", "nft",
                                    f"{family} {name}", chain_name, policy=True)
                bases.append(chain_name)
            chains[chain_name] = chain
        if bases:
            rulesets.append(RuleSet("nft", _NFT_FAMILIES[family], chains, bases, f"{family} {name}"))
    return rulesets
