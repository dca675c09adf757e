"""Which of the job's ports the rules drop for which peers: evaluated once per distinct packet, graded,
and grouped into what one sentence of the report says.

>>> from preflight.firewall.iptables_rules import compile_iptables
>>> from preflight.firewall.targets import Target
>>> from preflight.firewall.topology import Path
>>> ruleset = compile_iptables({"rules": ["-A INPUT -p tcp --dport 60000:60015 -j DROP"]}, "iptables", "ipv4")
>>> targets = [Target("ephemeral", "ephemeral range", ((32768, 60999),))]
>>> issues = analyze(Evaluator([ruleset]), targets, by_peer({"n2": [Path("ipv4", None, None, None)]}))
>>> [(i.ports, i.blocked, sorted(i.peers)) for i in issues]
[([(60000, 60015)], True, ['n2'])]
>>> [(g.status.value, len(g.issues)) for g in group(grade(issues, targets, is_master=True))]
[('warn', 1)]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from preflight.firewall.addresses import IPAddress
from preflight.firewall.model import AddrIn, Packet, PortIn, Rule, RuleSet, all_conds
from preflight.firewall.simulate import Verdict, verdict
from preflight.firewall.targets import Target
from preflight.firewall.topology import Path
from preflight.model import Status
from preflight.ports import Range, merge_ranges

EPHEMERAL_FAIL_FRACTION = 0.01  # blocking >= 1% of the ephemeral range fails: a job opens many listeners


@dataclass
class Issue:
    """Ports of one target that some rules drop for some peers."""

    target: Target
    blocked: bool  # every path of the peer; else some path or an undecided condition
    rules: tuple[Rule, ...]
    ports: list[Range] = field(default_factory=list)
    peers: set[str] = field(default_factory=set)
    undecided: set[str] = field(default_factory=set)
    paths: set[str] = field(default_factory=set)  # "IPv6", "IPv4 via eth1": the paths hit when not all are


def _segments(ranges: Iterable[Range], cuts: Sequence[int]) -> list[Range]:
    """Split ``ranges`` where any rule's port match can change (``cuts``: first ports of new pieces)."""
    pieces: list[Range] = []
    for low, high in ranges:
        start = low
        for cut in cuts:
            if start < cut <= high:
                pieces.append((start, cut - 1))
                start = cut
        pieces.append((start, high))
    return pieces


class Evaluator:
    """The rulesets of one host, with caches: hosts with the same rules share one Evaluator.

    Packets that every rule treats alike (same answers for every address match, interface and port
    piece) share one evaluation, so a thousand peers are a handful of evaluations.
    """

    def __init__(self, rulesets: Sequence[RuleSet]) -> None:
        self.rulesets = list(rulesets)
        conds = [c for rs in rulesets for ch in rs.chains.values() for r in ch.rules for c in all_conds(r.conds)]
        ports = [r for c in conds if isinstance(c, PortIn) for r in c.ranges]
        self.cuts = sorted({edge for low, high in ports for edge in (low, high + 1)})
        self.src = [c for c in conds if isinstance(c, AddrIn) and c.field == "src"]
        self.dst = [c for c in conds if isinstance(c, AddrIn) and c.field == "dst"]
        self._vectors: dict[tuple[str, IPAddress | None], tuple[bool, ...] | None] = {}
        self._keys: dict[int, tuple[Path, tuple[Any, ...]]] = {}
        self._verdicts: dict[tuple[Any, ...], Verdict] = {}

    def _vector(self, field_: str, address: IPAddress | None) -> tuple[bool, ...] | None:
        if address is None:
            return None
        key = (field_, address)
        if key not in self._vectors:
            self._vectors[key] = tuple(c.contains(address) for c in (self.src if field_ == "src" else self.dst))
        return self._vectors[key]

    def src_class(self, address: IPAddress | None) -> tuple[bool, ...] | None:
        """Which source-address conditions of the rules ``address`` meets: peers alike here are alike to them."""
        return self._vector("src", address)

    def key(self, path: Path) -> tuple[Any, ...]:
        cached = self._keys.get(id(path))
        if cached is None or cached[0] is not path:
            cached = (path, (path.family, self._vector("src", path.src), self._vector("dst", path.dst), path.iface))
            self._keys[id(path)] = cached
        return cached[1]

    def verdict(self, path: Path, port: int) -> Verdict:
        key = (*self.key(path), port)
        if key not in self._verdicts:
            self._verdicts[key] = verdict(self.rulesets, Packet(path.family, port, path.src, path.dst, path.iface))
        return self._verdicts[key]


PeerClass = tuple[Sequence[Path], Iterable[str]]  # paths of one peer, and every peer whose paths look the same


def by_peer(paths: Mapping[str, Sequence[Path]]) -> list[PeerClass]:
    """One class per peer: peer -> its paths, as ``analyze`` takes them."""
    return [(peer_paths, (peer,)) for peer, peer_paths in paths.items()]


def analyze(evaluator: Evaluator, targets: Sequence[Target], classes: Iterable[PeerClass]) -> list[Issue]:
    """Every (target ports, rules) that drop connections from some peer, grouped for the report.

    ``classes``: peers grouped by paths the rules cannot tell apart (``Topology.peer_classes``): the work is
    per class, and a class's peers are listed only when some rule drops their connections."""
    alike: dict[tuple[Any, ...], tuple[Sequence[Path], list[Iterable[str]]]] = {}
    for peer_paths, peers in classes:
        key = tuple(evaluator.key(p) for p in peer_paths)
        alike.setdefault(key, (peer_paths, []))[1].append(peers)
    issues: dict[tuple[Any, ...], Issue] = {}
    for target in targets:
        for low, high in _segments(target.ranges, evaluator.cuts):
            for peer_paths, groups in alike.values():
                outcomes = [evaluator.verdict(p, low) for p in peer_paths]
                blocked = all(o.definite for o in outcomes)
                rules = tuple(dict.fromkeys(r for o in outcomes for r in (o.definite if blocked else o.possible)))
                if not rules:
                    continue
                peers = tuple(peer for group in groups for peer in group)
                undecided = set() if blocked else {u for o in outcomes if o.possible for u in o.undecided}
                issue = issues.setdefault((target.kind, blocked, tuple(id(r) for r in rules), peers),
                                          Issue(target, blocked, rules))
                issue.ports = merge_ranges([*issue.ports, (low, high)])
                issue.peers.update(peers)
                issue.undecided |= undecided
                if not blocked:
                    issue.paths |= {("IPv6" if p.family == "ipv6" else "IPv4") + (f" via {p.iface}" if p.iface else "")
                                    for p, o in zip(peer_paths, outcomes, strict=True) if o.possible}
    merged: dict[tuple[Any, ...], Issue] = {}
    for issue in issues.values():  # peers with different paths but the same story: one issue
        story = (issue.target.kind, issue.blocked, tuple(id(r) for r in issue.rules), tuple(issue.ports))
        if story in merged:
            merged[story].peers |= issue.peers
            merged[story].undecided |= issue.undecided
            merged[story].paths |= issue.paths
        else:
            merged[story] = issue
    return list(merged.values())


def _size(ranges: Iterable[Range]) -> int:
    return sum(high - low + 1 for low, high in ranges)


def grade(issues: Sequence[Issue], targets: Sequence[Target], is_master: bool) -> list[tuple[Status, Issue]]:
    """Each issue with its status: blocked is ``fail``, but a small part of the ephemeral range only ``warn``;
    undecided or only on some paths is ``warn``. The master port of a host that is not the master is left
    out unless a rule names the port (then ``warn``)."""
    graded: list[tuple[Status, Issue]] = []
    ephemeral_size = _size(r for t in targets if t.kind == "ephemeral" for r in t.ranges) or 1
    blocking = [i for i in issues if i.target.kind == "ephemeral" and i.blocked]
    blocked_ephemeral: Counter[str] = Counter()
    if len(blocking) == 1:
        blocked_ephemeral["any"] = _size(blocking[0].ports)
    for issue in blocking if len(blocking) > 1 else []:
        for peer in issue.peers:
            blocked_ephemeral[peer] += _size(issue.ports)
    ephemeral_fails = max(blocked_ephemeral.values(), default=0) / ephemeral_size >= EPHEMERAL_FAIL_FRACTION
    for issue in issues:
        kind = issue.target.kind
        if kind == "master" and not is_master:
            if any(r.port_specific for r in issue.rules):
                graded.append((Status.WARN, issue))
            continue
        if issue.blocked and (kind != "ephemeral" or ephemeral_fails):
            graded.append((Status.FAIL, issue))
        else:
            graded.append((Status.WARN, issue))
    return graded


@dataclass
class Group:
    """Issues with the same verdict, rules, certainty and peers: one sentence and one remedy in the report."""

    status: Status
    blocked: bool
    rules: tuple[Rule, ...]
    peers: frozenset[str]
    undecided: frozenset[str]
    issues: list[tuple[Status, Issue]] = field(default_factory=list)


def group(graded: Sequence[tuple[Status, Issue]]) -> list[Group]:
    """Issues with the same story together, by target (master, hccl, ephemeral) and then worst first."""
    kinds = ["master", "hccl", "ephemeral"]
    groups: dict[tuple[Any, ...], Group] = {}
    for status, issue in sorted(graded, key=lambda item: kinds.index(item[1].target.kind)):
        key = (status, issue.blocked, tuple(id(r) for r in issue.rules), frozenset(issue.peers),
               frozenset(issue.undecided))
        found = groups.setdefault(key, Group(status, issue.blocked, issue.rules, frozenset(issue.peers),
                                             frozenset(issue.undecided)))
        found.issues.append((status, issue))
    return sorted(groups.values(), key=lambda g: -g.status.rank)
