"""What one nft match (``selector [op] [& mask] value``) asks of a packet, as a condition.

>>> import ipaddress
>>> from preflight.firewall.model import Packet
>>> ctx = NftContext("inet", "t", "input", {"peers": {"elements": ["10.0.0.0/24"]}})
>>> cond, is_port = selector_cond(["ip", "saddr"], "==", None, "@peers", ctx)
>>> cond.test(Packet("ipv4", 29500, ipaddress.ip_address("10.0.0.7"), None, None)) == YES, is_port
(True, False)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from preflight.firewall.addresses import address_list
from preflight.firewall.model import (
    MAYBE,
    NO,
    YES,
    AddrIn,
    And,
    Cond,
    Const,
    CtStateIs,
    FamilyIn,
    IfaceIs,
    MarkIs,
    Not,
    PortIn,
    ProtoIs,
    SrcPortIn,
)
from preflight.ports import Range

_SERVICES = {"ssh": 22, "http": 80, "https": 443, "domain": 53, "bootps": 67, "bootpc": 68, "tftp": 69, "ntp": 123,
             "dhcpv6-client": 546, "dhcpv6-server": 547, "mdns": 5353, "ftp": 21, "telnet": 23, "smtp": 25,
             "submission": 587, "imap": 143, "imaps": 993, "pop3": 110, "pop3s": 995, "ldap": 389, "ldaps": 636,
             "kerberos": 88, "sunrpc": 111, "nfs": 2049, "microsoft-ds": 445, "netbios-ns": 137,
             "netbios-dgm": 138, "netbios-ssn": 139, "snmp": 161, "ipp": 631, "rsync": 873, "mysql": 3306,
             "postgresql": 5432, "http-alt": 8080, "websm": 9090, "ssdp": 1900, "openvpn": 1194}
_L4_OTHER = {"udp", "udplite", "sctp", "dccp", "icmp", "icmpv6", "igmp", "esp", "ah", "comp", "ipcomp", "gre"}

Token = str | list[str]  # a word of a rule, or the elements of an anonymous set { a, b }


@dataclass
class NftContext:
    """Where a rule stands: its table's family and name, its chain, and the table's named sets and maps."""

    family: str
    table: str
    chain: str
    sets: Mapping[str, Mapping[str, Any]]


def value_items(value: Token | None, ctx: NftContext) -> tuple[list[str], bool]:
    """The items of a value: a word, a comma word, ``{...}`` or ``@set`` (its elements); True if unresolvable."""
    if value is None:
        return [], True
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    unknown = False
    for item in items:
        if item.startswith("@"):
            nft_set = ctx.sets.get(item[1:])
            if nft_set is None:
                unknown = True
            else:
                out += [str(e) for e in nft_set.get("elements") or []]
        else:
            out += [part for part in item.split(",") if part] if not isinstance(value, list) else [item]
    return [re.split(r"\s+(?:timeout|expires|counter|comment)\b", item)[0].strip() for item in out], unknown


def _nft_ports(items: Iterable[str]) -> tuple[list[Range], bool]:
    ranges: list[Range] = []
    unknown = False
    for item in items:
        low, sep, high = item.partition("-")
        ends = []
        for text in (low, high) if sep else (low,):
            text = text.strip().strip('"')
            number = int(text) if text.isdigit() else _SERVICES.get(text)
            if number is None:
                unknown = True
                break
            ends.append(number)
        else:
            ranges.append((min(ends), max(ends)))
    return ranges, unknown


def _compare(op: str, ranges: list[Range], unknown: bool) -> tuple[list[Range], bool]:
    """``< 1024`` and friends as ranges."""
    if op in ("==", "!=") or not ranges or unknown:
        return ranges, unknown or op not in ("==", "!=")
    value = ranges[0][0]
    return {"<": [(0, value - 1)], "<=": [(0, value)], ">": [(value + 1, 65535)], ">=": [(value, 65535)]}[op], False


def selector_cond(selector: list[str], op: str, mask: str | None, value: Token | None,
                  ctx: NftContext) -> tuple[Cond | None, bool]:
    """The condition ``selector op value`` puts on the packet, and whether it is a dport match."""
    head = selector[0]
    key = selector[1] if len(selector) > 1 else ""
    items, unknown = value_items(value, ctx)
    cond: Cond | None
    is_port = False
    if head in _L4_OTHER:
        return Const(NO), False
    if head in ("tcp", "th") and key == "dport":
        ranges, bad = _compare(op, *_nft_ports(items))
        cond, is_port = PortIn(ranges, bad or unknown), True
        op = "==" if op in ("<", "<=", ">", ">=") else op
    elif head in ("tcp", "th") and key == "sport":
        ranges, bad = _nft_ports(items)
        cond = SrcPortIn(ranges, bad or unknown or op not in ("==", "!="))
    elif head == "tcp" and key == "flags":
        flags = {f for item in items for f in re.split(r"[|,\s]+", item) if f}
        if mask is not None:
            mask_flags = set(re.split(r"[|(),/\s]+", mask)) - {""}
            cond = Const(YES if ({"syn"} & mask_flags) == flags else NO)
        else:
            cond = Const(YES if "syn" in flags else NO)
    elif head == "tcp":
        cond = Const(MAYBE, f"the TCP header field {key}")
    elif head in ("ip", "ip6"):  # the header of one family: the packet is of that family, and then...
        family = FamilyIn({"ipv4" if head == "ip" else "ipv6"})
        header: Cond
        if key in ("saddr", "daddr"):
            nets, bad = address_list(items)
            header = AddrIn("src" if key == "saddr" else "dst", nets, bad or unknown or op not in ("==", "!="))
        elif key in ("protocol", "nexthdr"):
            header = ProtoIs({i.lower() for i in items}, unknown)
        else:
            return And([family, Const(MAYBE, f"the {head} header field {key}")]), False
        return And([family, Not(header) if op == "!=" else header]), False
    elif head == "meta" and key in ("iifname", "iif"):
        cond = IfaceIs([i.strip('"') for i in items]) if not unknown else Const(MAYBE, "the input interface")
    elif head == "meta" and key in ("oifname", "oif"):
        cond = None
    elif head == "meta" and key == "l4proto":
        cond = ProtoIs({i.lower() for i in items}, unknown)
    elif head == "meta" and key in ("nfproto", "protocol"):
        names = {i.lower() for i in items}
        cond = FamilyIn({"ipv4" for n in names if n in ("ipv4", "ip")}
                        | {"ipv6" for n in names if n in ("ipv6", "ip6")})
    elif head in ("meta", "ct") and key == "mark":
        try:
            cond = MarkIs(int(items[0], 0), int(mask, 0) if mask else 0xFFFFFFFF) if items else Const(MAYBE, "a mark")
        except ValueError:
            cond = Const(MAYBE, "a mark")
    elif head == "meta" and key == "pkttype":
        cond = Const(YES if {i.lower() for i in items} & {"host", "unicast"} else NO)
    elif head == "ct" and key == "state":
        states = {s.strip().lower() for i in items for s in i.split(",")}
        cond = CtStateIs(states) if mask is None else Const(YES if "new" in states else NO)
    elif head == "ct" and key == "status":
        cond = Const(NO)  # dnat, snat, assured, seen-reply...: none on a new incoming connection
    elif head == "ct" and key == "direction":
        cond = Const(YES if "original" in items else NO)
    elif head == "ct" and key == "helper":
        cond = Const(NO)
    elif head == "fib":
        result = selector[-1]
        values = {i.lower() for i in items}
        if result == "type":
            wanted = {"local", "unicast"} if "daddr" in selector else {"unicast"}
            cond = Const(YES if values & wanted else NO)
        elif result in ("oif", "oifname") and values == {"missing"}:
            cond = Const(NO)  # reverse path filter: a peer's address routes back
        else:
            cond = Const(MAYBE, "a route lookup (fib)")
    else:
        cond = Const(MAYBE, f"the match {' '.join(selector)}")
    if cond is not None and op == "!=":
        cond = Not(cond)
    return cond, is_port and op != "!="
