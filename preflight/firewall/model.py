"""The rules as something that can be run on a packet: a new TCP connection, three-valued conditions,
rules, chains and rulesets (each tool's rules compile to these).

>>> rule = Rule([PortIn([(29500, 29500)]), IfaceIs(["eth1"])], "drop", None, "-A INPUT -i eth1 --dport 29500 -j DROP",
...             "iptables", "filter", "INPUT")
>>> [rule.match(Packet("ipv4", 29500, None, None, iface)) for iface in ("eth1", "eth0", None)] == [YES, NO, MAYBE]
True
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field

from preflight.firewall.addresses import IPAddress, IPNetwork, virtual
from preflight.ports import Range, uncovered

NO, MAYBE, YES = 0, 1, 2  # a condition on a packet: three-valued


@dataclass(frozen=True)
class Packet:
    """A new TCP connection (SYN, conntrack NEW, no mark) as it arrives on this host."""

    family: str  # "ipv4" | "ipv6"
    dport: int
    src: IPAddress | None  # None: unknown
    dst: IPAddress | None
    iface: str | None


class Cond:
    """One match of a rule: YES, NO or MAYBE for a packet; ``label`` says what it is when undecided."""

    label = "a match preflight cannot evaluate"

    def test(self, pkt: Packet) -> int:
        raise NotImplementedError


@dataclass
class Const(Cond):
    value: int
    label: str = "a match preflight cannot evaluate"

    def test(self, pkt: Packet) -> int:
        return self.value


@dataclass
class Not(Cond):
    inner: Cond

    def __post_init__(self) -> None:
        self.label = self.inner.label

    def test(self, pkt: Packet) -> int:
        return 2 - self.inner.test(pkt)


@dataclass
class FamilyIn(Cond):
    """The packet's family ("ipv4" | "ipv6") is one of ``families``."""

    families: set[str]

    def test(self, pkt: Packet) -> int:
        return YES if pkt.family in self.families else NO


@dataclass
class PortIn(Cond):
    """Destination port in ``ranges`` (``unknown``: some element could not be read, e.g. a service name)."""

    ranges: list[Range]
    unknown: bool = False
    label: str = "a port list preflight cannot read"

    def test(self, pkt: Packet) -> int:
        if any(low <= pkt.dport <= high for low, high in self.ranges):
            return YES
        return MAYBE if self.unknown else NO


@dataclass
class SrcPortIn(Cond):
    """Source port: the client picks an ephemeral one, so only "any unprivileged port" or "privileged only"."""

    ranges: list[Range]
    unknown: bool = False
    label: str = "the source port"

    def test(self, pkt: Packet) -> int:
        if self.unknown:
            return MAYBE
        if uncovered((1024, 65535), self.ranges) == []:
            return YES
        if all(high < 1024 for _, high in self.ranges):
            return NO
        return MAYBE


_LOCAL_ONLY = [ipaddress.ip_network(n) for n in ("127.0.0.0/8", "224.0.0.0/4", "255.255.255.255/32", "::1/128",
                                                 "ff00::/8")]


@dataclass
class AddrIn(Cond):
    """Source or destination address in a list of networks/ranges (``unknown``: an ipset, a name...)."""

    field: str  # "src" | "dst"
    nets: list[IPNetwork]
    unknown: bool = False

    def __post_init__(self) -> None:
        self.label = "the source address" if self.field == "src" else "the destination address"

    def contains(self, address: IPAddress) -> bool:
        return any(address.version == net.version and address in net for net in self.nets)

    def test(self, pkt: Packet) -> int:
        address = pkt.src if self.field == "src" else pkt.dst
        if address is None:
            local = self.nets and all(any(net.version == loc.version and net.subnet_of(loc)  # type: ignore[arg-type]
                                          for loc in _LOCAL_ONLY) for net in self.nets)
            return NO if local and not self.unknown else MAYBE
        if self.contains(address):
            return YES
        return MAYBE if self.unknown else NO


@dataclass
class IfaceIs(Cond):
    """Input interface (``+`` / ``*`` at the end: a prefix)."""

    patterns: list[str]
    label: str = "the input interface"

    def test(self, pkt: Packet) -> int:
        def matches(pattern: str, name: str) -> bool:
            if pattern.endswith(("+", "*")):
                return name.startswith(pattern[:-1])
            return name == pattern

        if pkt.iface is not None:
            return YES if any(matches(p, pkt.iface) for p in self.patterns) else NO
        if all(virtual(p.rstrip("+*")) for p in self.patterns):
            return NO
        return MAYBE


@dataclass
class ProtoIs(Cond):
    protos: set[str]
    unknown: bool = False

    def test(self, pkt: Packet) -> int:
        if self.protos & {"tcp", "6", "all", "0"}:
            return YES
        return MAYBE if self.unknown else NO


@dataclass
class CtStateIs(Cond):
    states: set[str]

    def test(self, pkt: Packet) -> int:
        return YES if "new" in self.states else NO


@dataclass
class MarkIs(Cond):
    """Packet/conntrack mark compared with ``value`` under ``mask``: new connections carry no mark (0)."""

    value: int
    mask: int

    def test(self, pkt: Packet) -> int:
        return YES if (0 & self.mask) == self.value else NO


@dataclass
class And(Cond):
    """Every part holds (undecided: labelled as its last part)."""

    parts: list[Cond]

    def __post_init__(self) -> None:
        self.label = self.parts[-1].label

    def test(self, pkt: Packet) -> int:
        return min(part.test(pkt) for part in self.parts)


def all_conds(conds: Iterable[Cond]) -> Iterable[Cond]:
    """``conds`` and every condition inside them (under Not and And)."""
    for cond in conds:
        yield cond
        if isinstance(cond, Not):
            yield from all_conds([cond.inner])
        elif isinstance(cond, And):
            yield from all_conds(cond.parts)


@dataclass(eq=False)
class Rule:
    """One rule (or a chain policy) of one tool, with what is needed to name it and to undo it."""

    conds: list[Cond]
    verdict: str  # accept, drop, reject, return, jump, goto, queue, continue
    target: str | None
    text: str  # as the tool prints it
    tool: str  # iptables, ip6tables, iptables-legacy, ip6tables-legacy, nft
    table: str  # "filter" for iptables, "<family> <name>" for nft
    chain: str
    handle: int | None = None
    port_specific: bool = False  # matches on a destination port
    policy: bool = False

    def match(self, pkt: Packet) -> int:
        return min((cond.test(pkt) for cond in self.conds), default=YES)


@dataclass
class Chain:
    name: str
    rules: list[Rule] = field(default_factory=list)
    policy: Rule | None = None  # base chains: the rule standing for the policy (verdict accept or drop)
    device: str | None = None  # netdev ingress chains hook one device


@dataclass
class RuleSet:
    """The chains of one iptables tool or one nft table, and its base chains on the input path."""

    tool: str
    families: tuple[str, ...]
    chains: dict[str, Chain]
    bases: list[str]
    table: str
