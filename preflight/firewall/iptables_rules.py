"""``iptables -S`` facts -> a RuleSet: each ``-A`` line's matches as conditions, ``-P INPUT`` as the policy.

>>> ruleset = compile_iptables({"policies": {"INPUT": "DROP"}, "rules": ["-A INPUT -p tcp --dport 22 -j ACCEPT"]},
...                            "iptables", "ipv4")
>>> [(rule.verdict, rule.port_specific) for rule in ruleset.chains["INPUT"].rules], ruleset.chains["INPUT"].policy.text
([('accept', True)], '-P INPUT DROP')
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.firewall.addresses import address_list
from preflight.firewall.model import (
    MAYBE,
    NO,
    YES,
    AddrIn,
    Chain,
    Cond,
    Const,
    CtStateIs,
    IfaceIs,
    MarkIs,
    Not,
    PortIn,
    ProtoIs,
    Rule,
    RuleSet,
    SrcPortIn,
)
from preflight.ports import Range

# iptables -j targets that decide; any other non-chain target (LOG, MARK, CT...) lets the packet go on.
IPT_VERDICTS = {"ACCEPT": "accept", "DROP": "drop", "REJECT": "reject", "RETURN": "return", "QUEUE": "queue",
                "NFQUEUE": "queue", "TARPIT": "drop"}
_RECENT = {"--set", "--update", "--rcheck", "--remove", "--seconds", "--hitcount", "--name", "--mask", "--rsource",
           "--rdest", "--reap", "--rttl"}


def _ipt_ports(text: str) -> list[Range] | None:
    """``22``, ``1024:65535``, ``:1023``, ``60000:60015,70`` -> ranges (None if unreadable)."""
    ranges: list[Range] = []
    for item in text.split(","):
        low, sep, high = item.partition(":")
        try:
            start = int(low) if low else 0
            end = (int(high) if high else 65535) if sep else start
        except ValueError:
            return None
        ranges.append((min(start, end), max(start, end)))
    return ranges


def _ipt_cond(option: str, args: list[str], module: str | None) -> tuple[Cond | None, bool]:
    """The condition of one iptables match option (None: no condition) and whether it is a dport match."""
    value = args[0] if args else ""
    if option in ("-s", "--source", "--src", "-d", "--destination", "--dst"):
        nets, unknown = address_list(value.split(","))
        return AddrIn("src" if option in ("-s", "--source", "--src") else "dst", nets, unknown), False
    if option in ("--src-range", "--dst-range"):
        nets, unknown = address_list([value])
        return AddrIn("src" if option == "--src-range" else "dst", nets, unknown), False
    if option in ("-p", "--protocol"):
        return ProtoIs({value.lower()}), False
    if option in ("-i", "--in-interface"):
        return IfaceIs([value]), False
    if option in ("-o", "--out-interface", "--comment", "--icmp-type", "--icmpv6-type", "--limit-iface-in",
                  "--limit-iface-out", "--log-prefix"):
        return None, False
    if option in ("-f", "--fragment"):
        return Const(NO), False
    if option in ("--dport", "--destination-port", "--dports", "--destination-ports"):
        ranges = _ipt_ports(value)
        return (PortIn(ranges) if ranges is not None else PortIn([], True)), True
    if option in ("--ports",):
        ranges = _ipt_ports(value)
        return (PortIn(ranges or [], True, "the source port")), True
    if option in ("--sport", "--source-port", "--sports", "--source-ports"):
        ranges = _ipt_ports(value)
        return (SrcPortIn(ranges) if ranges is not None else SrcPortIn([], True)), False
    if option in ("--state", "--ctstate"):
        return CtStateIs({state.lower() for state in value.split(",")}), False
    if option == "--syn":
        return Const(YES), False
    if option == "--tcp-flags" and len(args) == 2:
        examined, wanted = ({f.upper() for f in a.split(",")} for a in args)
        every = {"FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR"}
        examined = every if "ALL" in examined else examined - {"NONE"}
        wanted = every if "ALL" in wanted else wanted - {"NONE"}
        return Const(YES if ({"SYN"} & examined) == wanted else NO), False
    if option in ("--dst-type", "--src-type"):
        types = {t.upper() for t in value.split(",")}
        if option == "--dst-type":
            return Const(YES if types & {"LOCAL", "UNICAST"} else NO), False
        return Const(YES if "UNICAST" in types else NO), False
    if option == "--mark":
        mark, _, bits = value.partition("/")
        try:
            return MarkIs(int(mark, 0), int(bits, 0) if bits else 0xFFFFFFFF), False
        except ValueError:
            return Const(MAYBE, "a mark"), False
    if option == "--pkt-type":
        return Const(YES if value.lower() in ("unicast", "host") else NO), False
    if option == "--match-set":
        return Const(MAYBE, f"membership of ipset {value}"), False
    if option in ("--limit", "--limit-burst", "--hashlimit-upto", "--hashlimit-above", "--connlimit-above"):
        return Const(MAYBE, "a rate or connection limit"), False
    if option in _RECENT:
        return Const(MAYBE, "the recent list"), False
    if option in ("--invert", "--loose", "--validmark", "--accept-local") and module == "rpfilter":
        return None, False
    return Const(MAYBE, f"the match {option}{' (' + module + ')' if module else ''}"), False


# -m modules whose options _ipt_cond reads (or knows to leave undecided).
_KNOWN_MODULES = ("tcp", "udp", "comment", "multiport", "state", "conntrack", "addrtype", "mark", "connmark",
                  "pkttype", "icmp", "icmp6", "iprange", "set", "limit", "hashlimit", "recent", "connlimit", "physdev")
_IPT_WORD = re.compile(r'"((?:[^"\\]|\\.)*)"|(\S+)')


def _ipt_split(line: str) -> list[str]:
    """Words of an ``iptables -S`` line: it double-quotes arguments with spaces (``--comment "a b"``)."""
    return [quoted.replace('\\"', '"') if quoted or plain is None else plain
            for quoted, plain in ((m[1], m[2]) for m in _IPT_WORD.finditer(line))]


def compile_iptables_rule(line: str, tool: str, user_chains: set[str]) -> Rule | None:
    """One ``-A CHAIN ...`` line of ``iptables -S`` as a Rule.

    >>> import ipaddress
    >>> from preflight.firewall.model import Packet
    >>> rule = compile_iptables_rule("-A INPUT -s 10.0.0.0/8 -p tcp -m tcp --dport 29500 -j DROP", "iptables", set())
    >>> peer = ipaddress.ip_address("10.1.2.3")
    >>> rule.verdict, rule.port_specific, rule.match(Packet("ipv4", 29500, peer, None, None)) == YES
    ('drop', True, True)
    """
    tokens = _ipt_split(line)
    if len(tokens) < 2 or tokens[0] != "-A":
        return None
    chain = tokens[1]
    conds: list[Cond] = []
    labels: set[str] = set()
    verdict, target, port_specific = "continue", None, False
    module: str | None = None
    negate = False
    index = 2
    while index < len(tokens):
        token = tokens[index]
        if token == "!":
            negate, index = True, index + 1
            continue
        if token in ("-j", "--jump", "-g", "--goto"):
            name = tokens[index + 1] if index + 1 < len(tokens) else ""
            if token in ("-g", "--goto"):
                verdict, target = "goto", name
            elif name in IPT_VERDICTS:
                verdict = IPT_VERDICTS[name]
            elif name in user_chains:
                verdict, target = "jump", name
            break
        args: list[str] = []
        index += 1
        while index < len(tokens) and not tokens[index].startswith("-") and tokens[index] != "!":
            args.append(tokens[index])
            index += 1
        if token in ("-m", "--match"):
            module = args[0] if args else None
            if module == "rpfilter":
                inverted = "--invert" in tokens[index:index + 4]
                conds.append(Const(NO if inverted else YES))
            elif module not in _KNOWN_MODULES and not any(t.startswith("--") for t in tokens[index:index + 1]):
                conds.append(Const(MAYBE, f"the match -m {module}"))
            continue
        cond, is_port = _ipt_cond(token, args, module)
        if module == "physdev" and token.startswith("--physdev"):
            cond = Const(MAYBE, "the bridge port (physdev)")
        if cond is not None:
            if cond.label in labels and isinstance(cond, Const) and cond.value == MAYBE:
                negate = False
                continue
            labels.add(cond.label)
            conds.append(Not(cond) if negate else cond)
            port_specific = port_specific or (is_port and not negate)
        negate = False
    return Rule(conds, verdict, target, line, tool, "filter", chain, port_specific=port_specific)


def compile_iptables(facts: Mapping[str, Any], tool: str, family: str) -> RuleSet:
    """The filter table of one iptables tool; its base chain is INPUT (policy as ``-P INPUT ...``)."""
    lines = [line for line in facts.get("rules") or [] if isinstance(line, str)]
    user_chains = {str(c) for c in facts.get("chains") or []}
    user_chains |= {line.split()[1] for line in lines if len(line.split()) > 1}
    chains: dict[str, Chain] = {}
    for line in lines:
        rule = compile_iptables_rule(line, tool, user_chains)
        if rule is not None:
            chains.setdefault(rule.chain, Chain(rule.chain)).rules.append(rule)
    policies = facts.get("policies")
    policy = str(policies.get("INPUT", "ACCEPT") if isinstance(policies, Mapping) else "ACCEPT").upper()
    base = chains.setdefault("INPUT", Chain("INPUT"))
    base.policy = Rule([], "accept" if policy == "ACCEPT" else "drop", None, f"-P INPUT {policy}", tool, "filter",
                       "INPUT", policy=True)
    return RuleSet(tool, (family,), chains, ["INPUT"], "filter")
