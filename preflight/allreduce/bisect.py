"""``--bisect``: the slow or hung host of a large cluster in O(log n) all_reduce runs (pure).

A "run" is one process group launched over a group of hosts (one rank per host, device 0). Round 0 runs one
all_reduce over every host. A group below what it should give (``slow``: under ``expected_fraction`` x its
expected busbw, or under ``fraction`` x the best group of its round), or whose collective did not finish within
its bound (``hung``), is split into halves, and the halves of every such group run together in the next round,
recursively. A group of three hosts or fewer is not split: each of its hosts becomes a suspect, and is named only
once confirmed, in a pair with a known-good partner (a host of a group that was fine), the partner as rank 0
(the confirm-before-blame rule of the pair test). Without a known rate, round 0 cannot be judged alone: it is
split once and the halves are compared with each other (the relative rule). When four or more groups of a round
are all slow, the cause is shared (the network, every node's setting) and the search stops there.

With switches known (hosts.yaml ``switch:``; preflight.allreduce.domains) the hosts run in switch order and a
group spanning switches is split at the switch boundary nearest its middle (groups stay whole switches as long
as they can; a spanning group of two or three hosts is split too), and a suspect's known-good partner is taken from
its own switch where one is free. A slow or hung group spanning switches whose every host proved fine elsewhere
points at the path between the switches (the uplink): a pair of known-good hosts, one from each side, runs once
more, and the path is named only when that pair is slow or hangs too. Without a known rate, round 0 spanning
switches is judged against its halves once they have run (``against_halves``).

One slow host among n costs 1 + 2 x (ceil(log2 n) - 1) group runs down to a pair of suspects, plus 2 confirming
pairs: 13 at 64 hosts (the acceptance bound is 2 x log2(n) + 4 = 16).

>>> halves(("a", "b", "c", "d", "e"))
(('a', 'b'), ('c', 'd', 'e'))
>>> r = GroupResult(Group(0, 0, ("a", "b", "c", "d"), 29600), busbw=0.5, size=4 << 20)
>>> verdict(r, expected=None, best=1.0, fraction=0.8, expected_fraction=0.4)
('slow', '0.5 GB/s below 0.8 x 1 GB/s, the best group of round 0')
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from preflight.allreduce import domains
from preflight.allreduce.expected import Expected, ratio_text
from preflight.allreduce.schedule import free_ports

MIN_SPLIT = 4  # a group this large or larger is split into halves; a smaller one's hosts are confirmed in pairs
SHARED_AT = 4  # this many groups of one round, all slow: a shared cause, the search stops
ARRIVED_KEY = "pf_arrived_"  # the worker's store key per rank (preflight/node/allreduce_worker.py)


@dataclass(frozen=True)
class Group:
    """One all_reduce run over ``hosts`` (rank i on hosts[i], rank 0 holds the store), on its own port."""

    index: int
    round: int
    hosts: tuple[str, ...]
    port: int
    suspect: str | None = None  # a confirming pair: the host under test (rank 1); rank 0 is its known-good partner
    uplink: str | None = None  # a confirming pair across switches: the path under test ("A <-> B")
    reference: bool = False  # within a node: the same devices on a known-good host, run beside them to compare
    again: bool = False  # within a node: a whole-node group slow in the first round, run once more before any split

    @property
    def searching(self) -> bool:
        """A group of the search itself, not a confirming pair (of a suspect host or of an uplink) nor a
        reference run (preflight.allreduce.bisect_devices)."""
        return self.suspect is None and self.uplink is None and not self.reference

    @property
    def label(self) -> str:
        """``node1..node4`` (or ``node3 with node1`` for a confirming pair)."""
        if self.suspect is not None:
            return f"{self.suspect} with {self.hosts[0]}"
        if self.uplink is not None:
            return f"{self.hosts[0]} with {self.hosts[1]} across {self.uplink}"
        return self.hosts[0] if len(self.hosts) == 1 else f"{self.hosts[0]}..{self.hosts[-1]}"


@dataclass(frozen=True)
class GroupResult:
    """A group's outcome: busbw at the largest size every rank measured, or why it did not finish."""

    group: Group
    busbw: float | None = None
    algbw: float | None = None
    size: int = 0
    correct: bool = True
    error: str | None = None
    missing: tuple[str, ...] = ()  # hosts whose rank never arrived at the rendezvous (or printed nothing)


@dataclass(frozen=True)
class Judged:
    """A result with its verdict (``ok``, ``slow``, ``hung``, ``unjudged``), why, and its expected busbw."""

    result: GroupResult
    verdict: str
    why: str
    expected: Expected | None = None


@dataclass
class Search:
    """The search so far: every round's judged groups, what is known good, and what is left to run."""

    rounds: list[list[Judged]] = field(default_factory=list)
    suspects: list[str] = field(default_factory=list)  # waiting for a known-good partner
    shared: bool = False  # stopped: every group of a round of SHARED_AT or more was slow
    labels: Mapping[str, str] = field(default_factory=dict)  # host -> switch (hosts.yaml ``switch:``); {}: none

    @property
    def good(self) -> list[str]:
        """Hosts of the search groups that were fine, in order of first sight."""
        seen: dict[str, None] = {}
        for judged in (j for r in self.rounds for j in r):
            if judged.verdict == "ok" and judged.result.group.searching:
                seen.update(dict.fromkeys(judged.result.group.hosts))
        return list(seen)

    @property
    def cleared(self) -> set[str]:
        """Known-good hosts and suspects their known-good partner cleared."""
        return set(self.good) | {str(j.result.group.suspect) for r in self.rounds for j in r
                                 if j.result.group.suspect is not None and j.verdict == "ok"}


def halves(hosts: Sequence[str], labels: Mapping[str, str] | None = None
           ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The two halves of a group: at the switch boundary nearest the middle when the group spans switches,
    else in the middle, the second one larger when the count is odd.

    >>> halves(("a1", "b1", "b2", "b3"), {"a1": "A", "b1": "B", "b2": "B", "b3": "B"})
    (('a1',), ('b1', 'b2', 'b3'))
    """
    middle = domains.cut(hosts, labels or {})
    return tuple(hosts[:middle]), tuple(hosts[middle:])


def uplinks(search: Search) -> list[tuple[Judged, tuple[str, ...], tuple[str, ...]]]:
    """Slow or hung search groups spanning switches whose every host proved fine elsewhere (in a group that was
    fine, or with a known-good partner), with the halves they were cut into: each points at the path between its
    halves. The fewest switches first; a group spanning every switch of one already listed is left out (that
    path explains it). None without labels.

    >>> lab = {"a1": "A", "a2": "A", "b1": "B", "b2": "B"}
    >>> top = Judged(GroupResult(Group(0, 0, ("a1", "a2", "b1", "b2"), 1), busbw=0.01), "slow", "")
    >>> ok = [Judged(GroupResult(Group(i, 1, h, 1), busbw=1.0), "ok", "") for i, h in ((1, ("a1", "a2")),
    ...       (2, ("b1", "b2")))]
    >>> [(j.result.group.index, a, b) for j, a, b in uplinks(Search([[top], ok], labels=lab))]
    [(0, ('a1', 'a2'), ('b1', 'b2'))]
    """
    if not search.labels:
        return []
    cleared = search.cleared
    flagged = [j for r in search.rounds for j in r if j.result.group.searching and j.verdict in ("slow", "hung")
               and len(domains.spanned(j.result.group.hosts, search.labels)) > 1
               and all(h in cleared for h in j.result.group.hosts)]
    flagged.sort(key=lambda j: (len(domains.spanned(j.result.group.hosts, search.labels)),
                                len(j.result.group.hosts)))
    found: list[tuple[Judged, tuple[str, ...], tuple[str, ...]]] = []
    for judged in flagged:
        switches = set(domains.spanned(judged.result.group.hosts, search.labels))
        if any(set(domains.spanned(j.result.group.hosts, search.labels)) <= switches for j, _, _ in found):
            continue
        found.append((judged, *halves(judged.result.group.hosts, search.labels)))
    return found


def against_halves(search: Search, fraction: float) -> None:
    """With switches known and no rate: round 0 (``unjudged``, nothing to compare with) spanning switches is judged
    once its halves have run: ``slow`` when it gave under ``fraction`` / 2 x the slower of its two halves, both
    fine (busbw does not shrink with the ring's length, so a whole this far below its halves is the path between
    them). Without labels nothing changes.

    >>> lab = {"a1": "A", "a2": "A", "b1": "B", "b2": "B"}
    >>> top = Judged(GroupResult(Group(0, 0, ("a1", "a2", "b1", "b2"), 1), busbw=0.01), "unjudged", "")
    >>> ok = [Judged(GroupResult(Group(i, 1, h, 1), busbw=1.0), "ok", "") for i, h in ((1, ("a1", "a2")),
    ...       (2, ("b1", "b2")))]
    >>> s = Search([[top], ok], labels=lab)
    >>> against_halves(s, 0.8)
    >>> s.rounds[0][0].verdict, s.rounds[0][0].why
    ('slow', '0.01 GB/s below 0.4 x 1 GB/s, the slower of its halves (A | B)')
    """
    if not search.labels or len(search.rounds) < 2:
        return
    for i, judged in enumerate(search.rounds[0]):
        group, figure = judged.result.group, judged.result.busbw
        if judged.verdict != "unjudged" or figure is None or len(domains.spanned(group.hosts, search.labels)) < 2:
            continue
        parts = [j for j in search.rounds[1] if j.result.group.searching and set(j.result.group.hosts) <= set(
            group.hosts)]
        figures = [j.result.busbw for j in parts if j.verdict == "ok" and j.result.busbw is not None]
        if len(parts) == len(figures) == 2 and figure < fraction / 2 * min(figures):
            side, other = halves(group.hosts, search.labels)
            why = f"{figure:.3g} GB/s below {fraction / 2:g} x {min(figures):.3g} GB/s, the slower of its halves " \
                  f"({domains.path(side, other, search.labels).replace(' <-> ', ' | ')})"
            search.rounds[0][i] = Judged(judged.result, "slow", why, judged.expected)


def verdict(result: GroupResult, expected: Expected | None, best: float | None, fraction: float,
            expected_fraction: float) -> tuple[str, str]:
    """``ok``, ``slow``, ``hung`` or ``unjudged`` (nothing to compare with), and why.

    >>> g = GroupResult(Group(1, 1, ("a", "b"), 1), busbw=0.01, size=1 << 20)
    >>> verdict(g, Expected(0.11, "x"), best=0.012, fraction=0.5, expected_fraction=0.4)
    ('slow', '0.01 GB/s below 0.4 x expected 0.11 GB/s (x)')
    >>> verdict(GroupResult(Group(1, 1, ("a", "b"), 1), error="timeout", missing=("b",)), None, None, 0.5, 0.4)
    ('hung', 'did not finish: timeout; never arrived: b')
    """
    if result.error is not None or result.busbw is None:
        gone = f"; never arrived: {', '.join(result.missing)}" if result.missing else ""
        return "hung", f"did not finish: {result.error or 'no size measured'}{gone}"
    figure = result.busbw
    if expected is not None and figure < expected.floor(expected_fraction):
        return "slow", f"{figure:.3g} GB/s below {expected_fraction:g} x expected {expected.gbps:.3g} GB/s " \
                       f"({expected.how})"
    if best is not None and best > 0 and figure < fraction * best:
        return "slow", f"{figure:.3g} GB/s below {fraction:g} x {best:.3g} GB/s, the best group of round " \
                       f"{result.group.round}"
    if expected is None and (best is None or best == figure) and len(result.group.hosts) > 2 \
            and result.group.round == 0:
        return "unjudged", f"{figure:.3g} GB/s; no line rate known and nothing to compare with: split once"
    return "ok", f"{figure:.3g} GB/s, {ratio_text(figure, expected)}"


def judge_round(results: Sequence[GroupResult], expect: Callable[[Sequence[str]], Expected | None],
                fraction: float, expected_fraction: float, reference: float | None = None) -> list[Judged]:
    """Every group of one round judged; search groups against the best of the round, confirming pairs against
    ``reference`` (the median of the groups found fine before)."""
    search = [r.busbw for r in results if r.group.searching and r.busbw is not None and r.error is None]
    best = max(search) if len(search) > 1 else None
    judged = []
    for r in results:
        exp = expect(r.group.hosts)
        against = best if r.group.searching else reference
        v, why = verdict(r, exp, against, fraction, expected_fraction)
        judged.append(Judged(r, v, why, exp))
    return judged


def halved(flagged: Sequence[Judged], search: Search, splits: Callable[[Judged], bool],
           halve: Callable[[tuple[str, ...]], tuple[tuple[str, ...], tuple[str, ...]]], index: int, number: int,
           ports: Iterator[int]) -> list[Group]:
    """The next round's halves of the flagged groups ``splits`` says to split (numbered from ``index``); every member
    of a group not split, and a half of one member, joins ``search.suspects`` (each once).

    >>> s = Search()
    >>> r = [Judged(GroupResult(Group(0, 0, ("a", "b", "c", "d"), 1)), "slow", ""),
    ...      Judged(GroupResult(Group(1, 0, ("e", "f"), 2)), "slow", "")]
    >>> [g.hosts for g in halved(r, s, lambda j: len(j.result.group.hosts) >= 4, halves, 2, 1, iter([3, 4]))]
    [('a', 'b'), ('c', 'd')]
    >>> s.suspects
    ['e', 'f']
    """
    parts: list[tuple[str, ...]] = []
    for judged in flagged:
        members = judged.result.group.hosts
        if splits(judged):
            parts += [h for h in halve(members) if h]
        else:
            search.suspects += [m for m in members if m not in search.suspects]
    groups: list[Group] = []
    for part in parts:
        if len(part) >= 2:
            groups.append(Group(index + len(groups), number, part, next(ports)))
        else:
            search.suspects += [m for m in part if m not in search.suspects]
    return groups


def next_groups(hosts: Sequence[str], search: Search, base_port: int, avoid: Sequence[int] = ()) -> list[Group]:
    """The groups of the next round (none: the search is over), from the rounds judged so far.

    >>> s = Search()
    >>> [g.hosts for g in next_groups(["a", "b", "c", "d"], s, 29600)]
    [('a', 'b', 'c', 'd')]
    >>> r0 = GroupResult(Group(0, 0, ("a", "b", "c", "d"), 29600), busbw=0.01, size=1)
    >>> s.rounds.append([Judged(r0, "slow", "")])
    >>> [g.hosts for g in next_groups(["a", "b", "c", "d"], s, 29600)]
    [('a', 'b'), ('c', 'd')]
    >>> s.rounds.append([Judged(GroupResult(Group(1, 1, ("a", "b"), 29601), busbw=1.0), "ok", ""),
    ...                  Judged(GroupResult(Group(2, 1, ("c", "d"), 29602), busbw=0.01), "slow", "")])
    >>> [(g.hosts, g.suspect) for g in next_groups(["a", "b", "c", "d"], s, 29600)]
    [(('a', 'c'), 'c'), (('b', 'd'), 'd')]
    """
    ports = free_ports(base_port, set(avoid))
    index = sum(len(r) for r in search.rounds)
    for _ in range(index):
        next(ports)
    number = len(search.rounds)
    if not search.rounds:
        everyone = tuple(domains.order(hosts, search.labels))
        return [Group(0, 0, everyone, next(ports))] if len(hosts) >= 2 else []
    last = search.rounds[-1]
    flagged = [j for j in last if j.result.group.searching and j.verdict != "ok"]
    searched = [j for j in last if j.result.group.searching]
    if len(searched) >= SHARED_AT and len(flagged) == len(searched) and all(j.verdict == "slow" for j in flagged):
        search.shared = True
        return []
    def splits(judged: Judged) -> bool:
        members = judged.result.group.hosts
        spans = len(domains.spanned(members, search.labels)) > 1
        return len(members) >= MIN_SPLIT or (judged.verdict == "unjudged" and len(members) >= 2) or spans

    groups = halved(flagged, search, splits, lambda members: halves(members, search.labels), index, number, ports)
    index += len(groups)
    busy = {h for g in groups for h in g.hosts}
    partners = [h for h in search.good if h not in busy]
    waiting = []
    for suspect in search.suspects:
        if partners:
            own = [p for p in partners if search.labels.get(p) == search.labels.get(suspect)]  # not over the uplink
            partner = (own or partners)[0]
            partners.remove(partner)
            groups.append(Group(index, number, (partner, suspect), next(ports), suspect=suspect))
            index += 1
        else:
            waiting.append(suspect)  # a partner frees up next round; with nothing to run, none ever will
    search.suspects = waiting
    if not groups:
        groups = _uplink_pairs(search, index, number, ports)
    return groups


def _uplink_pairs(search: Search, index: int, number: int, ports: Iterator[int]) -> list[Group]:
    """Once nothing else is left to run: a known-good host from each side of every path ``uplinks`` points at,
    in one pair (each path once)."""
    tried = {j.result.group.uplink for r in search.rounds for j in r if j.result.group.uplink is not None}
    good = search.good
    groups: list[Group] = []
    for _, side, other in uplinks(search):
        name = domains.path(side, other, search.labels)
        busy = {h for g in groups for h in g.hosts}  # one rank per host in a round
        first = next((h for h in good if h in side and h not in busy), None)
        second = next((h for h in good if h in other and h not in busy), None)
        if name in tried or first is None or second is None:
            continue
        tried.add(name)
        groups.append(Group(index, number, (first, second), next(ports), uplink=name))
        index += 1
    return groups


def merge(groups: Sequence[Group], lines: Sequence[Mapping[str, Any]], timeout: float) -> list[GroupResult]:
    """Join every rank's line to its group: the figure every rank measured, or the error and who never arrived.

    >>> g = Group(5, 0, ("a", "b", "c"), 29600)
    >>> ok = [{"pair": 5, "rank": r, "sizes": [{"bytes": 4, "busbw_gbps": 1.0 + r, "algbw_gbps": 1.0,
    ...        "correct": True}], "error": None} for r in range(3)]
    >>> merge([g], ok, 30)[0].busbw
    1.0
    >>> hung = [{"pair": 5, "rank": 0, "error": "DistStoreError: timeout", "arrived": True, "seen": [0, 2]},
    ...         {"pair": 5, "rank": 2, "error": "DistStoreError: timeout", "arrived": True, "seen": [0, 2]}]
    >>> merge([g], hung, 30)[0].missing
    ('b',)
    """
    by_group: dict[int, dict[int, Mapping[str, Any]]] = {}
    for line in lines:
        rank = line.get("rank")
        if isinstance(rank, int) and not isinstance(rank, bool):
            by_group.setdefault(int(line["pair"]), {})[rank] = line
    return [_merge_one(g, by_group.get(g.index, {}), timeout) for g in groups]


def _merge_one(group: Group, ranks: Mapping[int, Mapping[str, Any]], timeout: float) -> GroupResult:
    world = len(group.hosts)
    errors = [f"rank {r} ({group.hosts[r]}): {line['error']}" for r, line in sorted(ranks.items())
              if line.get("error") and 0 <= r < world]
    silent = [r for r in range(world) if r not in ranks]
    if silent:
        errors.append(f"rank {'/'.join(map(str, silent))} printed nothing (killed after the {timeout:g} s bound)")
    if errors:
        return GroupResult(group, error="; ".join(errors)[:400], missing=tuple(group.hosts[r] for r in
                                                                                 _missing(ranks, world, silent)))
    sizes: dict[int, list[Mapping[str, Any]]] = {}
    for line in ranks.values():
        for entry in line.get("sizes") or []:
            if isinstance(entry, dict) and isinstance(entry.get("bytes"), int):
                sizes.setdefault(int(entry["bytes"]), []).append(entry)
    common = [s for s, entries in sizes.items() if len(entries) == world
              and all(_number(e.get("busbw_gbps")) for e in entries)]
    if not common:
        return GroupResult(group, error="no size measured within the budget")
    size = max(common)
    entries = sizes[size]
    return GroupResult(group, busbw=min(float(e["busbw_gbps"]) for e in entries),
                       algbw=min(float(e.get("algbw_gbps") or 0.0) for e in entries), size=size,
                       correct=all(e.get("correct") is True for line in ranks.values()
                                   for e in line.get("sizes") or [] if isinstance(e, dict)))


def _missing(ranks: Mapping[int, Mapping[str, Any]], world: int, silent: Sequence[int]) -> list[int]:
    """The ranks that never arrived at the rendezvous: silent ones, those that never reached the store, those
    the store's view lacks; rank 0 alone when three or more ranks all failed to reach its store."""
    unreached = [r for r, line in ranks.items() if line.get("arrived") is False and 0 < r < world]
    if world >= 3 and len(unreached) == world - 1:
        return [0]
    seen = next((line.get("seen") for r, line in sorted(ranks.items()) if isinstance(line.get("seen"), list)), None)
    gone = set(silent) | set(unreached)
    if seen is not None:
        gone |= {r for r in range(world) if r not in seen}
    return sorted(gone)


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value and value > 0


