"""``--bisect`` within a node (pure): the slow or hung device of a host, by halving the host's devices.

With more than one device per host, once the search across hosts (preflight.allreduce.bisect) is over, every host
runs one all_reduce over all its devices (k ranks on one host, rank i on its i-th device), every host at once: one
round. A member of these groups is a unit ``host/device`` (``unit``), so the search reuses bisect's Group, Search,
halves and merge. A whole-node group slow in that round runs once more (``Group.again``) with only the other such
groups beside it, judged also against the best fine run of the same devices before: on a loaded host one run can
fall far below another host's (contention), and one that is normal the second time is a ``warn`` (normal again),
never split. A host group still slow, or hung, is split into halves of its devices run together, recursively; a
group of three devices or fewer (``bisect.MIN_SPLIT``) makes each of its devices a suspect, named only once
confirmed in a pair with a known-good device of the same host (one of a group that was fine), the good device as
rank 0: confirm before blame. A confirming pair that is slow (not hung) runs once more in the next round
(``CONFIRM_RUNS``): on a loaded box one run of a healthy pair can fall below its reference, two in a row rarely
do; the device is named only when both are slow.

A whole-node group runs at its slowest link (NVLink pairs beside PCIe and cross-socket ones: ``nvidia-smi topo
-m``), and its halves at theirs, so a group is never compared with another set of devices: only with the same
devices, of the same link classes (``signature``), on other hosts of the same round. A half or a confirming pair
of a flagged host has no such company (healthy hosts are not split), so the same devices of a known-good host (a
host whose whole group was fine) run beside it in the same round (``reference`` groups; other devices on other
hosts, no extra round). A group is ``slow`` under ``expected_fraction`` x its expected busbw (the lowest of its
device pairs' link classes, where a rate is known: preflight.allreduce.floor) or under ``fraction`` x the best of
the same devices in its round; without either (one host, no rate) it is ``unjudged`` and not split. When every
whole-node group of the first round, ``bisect.SHARED_AT`` or more, is slow, the cause is shared and the search stops
(a few slow hosts slow again when run once more are searched, each on its own).

One slow device among k on one host costs 2 + 2 x (ceil(log2 k) - 1) group rounds' runs on that host down to a
pair, plus 2 confirming pairs and the slow one's second run: at k = 8, 2 + 4 + 2 + 1 = 9 runs on it in 6 rounds
(+ one reference run per device set beside each, on another host); a healthy cluster costs 1 round (2 when
contention slows a host's group once).

>>> unit("node1", 3), split("node1/3")
('node1/3', ('node1', 3))
>>> links = lambda host, i, j: "NV2" if i // 2 == j // 2 else "SYS"
>>> s = Search()
>>> [g.hosts for g in next_groups({"a": 4, "b": 4}, s, links, 29600)]
[('a/0', 'a/1', 'a/2', 'a/3'), ('b/0', 'b/1', 'b/2', 'b/3')]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from preflight.allreduce.bisect import (
    MIN_SPLIT,
    SHARED_AT,
    Group,
    GroupResult,
    Judged,
    Search,
    halved,
    halves,
    verdict,
)
from preflight.allreduce.expected import Expected, ratio_text
from preflight.allreduce.schedule import free_ports

CONFIRM_RUNS = 2  # a device slow with a known-good device is paired once more before it is named (a hang: once)
Link = Callable[[str, int, int], "str | None"]  # (host, device i, device j) -> link class (None: not allowed)
Expect = Callable[[str, Sequence[int], int], "Expected | None"]  # (host, devices, bytes) -> expected busbw


def unit(host: str, device: int) -> str:
    """A member of a within-node group: one device of one host."""
    return f"{host}/{device}"


def split(member: str) -> tuple[str, int]:
    """``host/device`` -> (host, device)."""
    host, _, device = member.rpartition("/")
    return host, int(device)


def host_of(members: Sequence[str]) -> str:
    """The host of a within-node group (every member is on it)."""
    return split(members[0])[0]


def devices(members: Sequence[str]) -> tuple[int, ...]:
    """The devices of a within-node group, in rank order.

    >>> devices(("a/2", "a/0"))
    (2, 0)
    """
    return tuple(split(m)[1] for m in members)


def describe(members: Sequence[str]) -> str:
    """``node2 devices 0-3`` (``node2 devices 2,0`` for a confirming pair: rank order) for a report line.

    >>> describe(("n1/0", "n1/1", "n1/2", "n1/3")), describe(("n1/1", "n1/3"))
    ('n1 devices 0-3', 'n1 devices 1,3')
    """
    devs = devices(members)
    run = len(devs) > 2 and list(devs) == list(range(devs[0], devs[0] + len(devs)))
    return f"{host_of(members)} devices " + (f"{devs[0]}-{devs[-1]}" if run else ",".join(map(str, devs)))


def signature(host: str, devs: Sequence[int], link: Link) -> tuple[str, ...]:
    """The link classes between every two of ``devs`` on ``host`` (sorted devices): groups are compared only
    with groups of the same devices and the same signature.

    >>> signature("a", (2, 0, 1), lambda h, i, j: "NV2" if i // 2 == j // 2 else "SYS")
    ('NV2', 'SYS', 'SYS')
    """
    ordered = sorted(devs)
    return tuple(str(link(host, a, b)) for i, a in enumerate(ordered) for b in ordered[i + 1:])


def key(members: Sequence[str], link: Link) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """What a group is compared by: its devices (as a set) and their link classes."""
    return tuple(sorted(devices(members))), signature(host_of(members), devices(members), link)


def next_groups(counts: Mapping[str, int], search: Search, link: Link, base_port: int, avoid: Sequence[int] = (),
                start: int = 0, offset: int = 0) -> list[Group]:
    """The next round's groups (none: the search is over). ``counts``: host -> its devices, in hosts.yaml order;
    ``start``: the group runs before this search (their ports are not reused); ``offset``: the rounds before it
    (the report numbers rounds on from the search across hosts).

    >>> links = lambda host, i, j: "NV2" if i // 2 == j // 2 else "SYS"
    >>> s = Search()
    >>> r0 = next_groups({"a": 4, "b": 4}, s, links, 29600)
    >>> s.rounds.append([Judged(GroupResult(r0[0], busbw=1.0), "ok", ""),
    ...                  Judged(GroupResult(r0[1], busbw=0.2), "slow", "")])
    >>> again = next_groups({"a": 4, "b": 4}, s, links, 29600)
    >>> [(g.hosts, g.again) for g in again]
    [(('b/0', 'b/1', 'b/2', 'b/3'), True)]
    >>> s.rounds.append([Judged(GroupResult(again[0], busbw=0.2), "slow", "")])
    >>> [(g.hosts, g.reference) for g in next_groups({"a": 4, "b": 4}, s, links, 29600)]
    [(('b/0', 'b/1'), False), (('b/2', 'b/3'), False), (('a/0', 'a/1'), True), (('a/2', 'a/3'), True)]
    """
    ports = free_ports(base_port, set(avoid))
    index = start + sum(len(r) for r in search.rounds)
    for _ in range(index):
        next(ports)
    number = offset + len(search.rounds)
    if not search.rounds:
        wholes = [tuple(unit(h, d) for d in range(n)) for h, n in counts.items() if n >= 2]
        return [Group(index + i, number, members, next(ports)) for i, members in enumerate(wholes)]
    last = search.rounds[-1]
    searched = [j for j in last if j.result.group.searching]
    flagged = [j for j in searched if j.verdict in ("slow", "hung")]
    if len(search.rounds) == 1 and len(searched) >= SHARED_AT and len(flagged) == len(searched) \
            and all(j.verdict == "slow" for j in flagged):  # every whole-node group: not the re-runs or halves
        search.shared = True
        return []
    rerun = [j for j in flagged if j.verdict == "slow" and len(search.rounds) == 1]  # the whole-node round
    groups = [Group(index + i, number, j.result.group.hosts, next(ports), again=True) for i, j in enumerate(rerun)]
    groups += halved([j for j in flagged if j not in rerun], search, lambda j: len(j.result.group.hosts) >= MIN_SPLIT,
                     halves, index + len(groups), number, ports)
    index += len(groups)
    for again in (str(j.result.group.suspect) for j in last if j.result.group.suspect is not None
                  and j.verdict == "slow" and confirmations(search, str(j.result.group.suspect)) < CONFIRM_RUNS):
        if again not in search.suspects:
            search.suspects.append(again)  # slow once with a known-good device: once more before it is named
    busy = {m for g in groups for m in g.hosts}
    partners = [m for m in search.good if m not in busy]
    waiting = []
    for suspect in search.suspects:
        host, device = split(suspect)
        partner = next((p for p in partners if split(p)[0] == host and link(host, split(p)[1], device) is not None),
                       None)
        if partner is None:
            waiting.append(suspect)  # a partner frees up next round; with nothing to run, none ever will
            continue
        partners.remove(partner)
        groups.append(Group(index, number, (partner, suspect), next(ports), suspect=suspect))
        index += 1
    search.suspects = waiting
    for members in references([g for g in groups if not g.again], list(counts), search, link):
        groups.append(Group(index, number, members, next(ports), reference=True))
        index += 1
    return groups


def confirmations(search: Search, suspect: str) -> int:
    """How many confirming pairs ``suspect`` has run in so far."""
    return sum(1 for r in search.rounds for j in r if j.result.group.suspect == suspect)


def references(groups: Sequence[Group], hosts: Sequence[str], search: Search, link: Link) -> list[tuple[str, ...]]:
    """The same devices as every group of ``groups`` (once per device set), each on a known-good host (its whole
    group fine in the first round; the first in order whose links match and whose devices are free this round).
    A set no such host can run goes without (judged against its expected busbw only)."""
    fine = [host_of(j.result.group.hosts) for j in (search.rounds[0] if search.rounds else [])
            if j.verdict == "ok" and j.result.group.searching]
    fine += [host_of(j.result.group.hosts) for r in search.rounds[1:2] for j in r
             if j.verdict == "ok" and j.result.group.again]
    flagged = {host_of(g.hosts) for g in groups}
    busy: dict[str, set[int]] = {}
    done: set[tuple[tuple[int, ...], tuple[str, ...]]] = set()
    out = []
    for group in groups:
        wanted = key(group.hosts, link)
        if wanted in done:
            continue
        devs = devices(group.hosts)
        host = next((h for h in hosts if h in fine and h not in flagged and not busy.get(h, set()) & set(devs)
                     and signature(h, devs, link) == wanted[1]), None)
        if host is None:
            continue
        done.add(wanted)
        busy.setdefault(host, set()).update(devs)
        out.append(tuple(unit(host, d) for d in devs))
    return out


def judge_round(results: Sequence[GroupResult], expect: Expect, link: Link, fraction: float,
                expected_fraction: float, earlier: Sequence[Sequence[Judged]] = ()) -> list[Judged]:
    """Every group of one round, each against its expected busbw and against the best of the same devices (same
    link classes) on the other hosts of the round; a group run again (``Group.again``) also against the same
    devices' fine runs in ``earlier`` rounds (it runs with fewer groups beside it than they did).

    >>> links = lambda host, i, j: "NV2" if i // 2 == j // 2 else "SYS"
    >>> none = lambda host, devs, size: None
    >>> rs = [GroupResult(Group(i, 0, tuple(f"{h}/{d}" for d in range(4)), 1), busbw=b)
    ...       for i, (h, b) in enumerate((("a", 1.0), ("b", 0.95), ("c", 0.3)))]
    >>> [(j.verdict, j.why) for j in judge_round(rs, none, links, 0.8, 0.4)][1:]
    [('ok', '0.95 GB/s, no line rate known'), ('slow', '0.3 GB/s below 0.8 x 1 GB/s, the best run of the same \
devices (same links) on another host in round 0')]
    >>> judge_round(rs[:1], none, links, 0.8, 0.4)[0].verdict
    'unjudged'
    """
    figures: dict[tuple[tuple[int, ...], tuple[str, ...]], list[float]] = {}
    for r in results:
        if r.busbw is not None and r.error is None:
            figures.setdefault(key(r.group.hosts, link), []).append(r.busbw)
    before: dict[tuple[tuple[int, ...], tuple[str, ...]], tuple[float, int]] = {}
    for j in (j for r in earlier for j in r if j.verdict == "ok" and j.result.group.searching):
        if j.result.busbw is not None:
            k = key(j.result.group.hosts, link)
            before[k] = max(before.get(k, (0.0, 0)), (j.result.busbw, j.result.group.round))
    judged = []
    for r in results:
        peers = figures.get(key(r.group.hosts, link), [])
        best = max(peers) if len(peers) >= 2 else None
        seen = r.group.round
        if r.group.again and key(r.group.hosts, link) in before:
            earlier_best, earlier_round = before[key(r.group.hosts, link)]
            if best is None or earlier_best > best:
                best, seen = earlier_best, earlier_round
        exp = expect(host_of(r.group.hosts), devices(r.group.hosts), r.size) if r.busbw is not None else None
        figure = r.busbw
        if figure is None or r.error is not None or (exp is not None and figure < exp.floor(expected_fraction)):
            v, why = verdict(r, exp, None, fraction, expected_fraction)  # hung, or below its expected busbw
        elif best is not None and figure < fraction * best:
            v, why = "slow", f"{figure:.3g} GB/s below {fraction:g} x {best:.3g} GB/s, the best run of the same " \
                             f"devices (same links) on another host in round {seen}"
        elif exp is None and best is None:
            v, why = "unjudged", f"{figure:.3g} GB/s; no line rate known and no other host ran these devices " \
                                 "with the same links: not judged"
        else:
            v, why = "ok", f"{figure:.3g} GB/s, {ratio_text(figure, exp)}"
        judged.append(Judged(r, v, why, exp))
    return judged


def run_limit(counts: Mapping[str, int]) -> int:
    """The most rounds the search may take: 2 x ceil(log2 k) + 6 for the largest host's k devices (the first slow
    group's second run; the last: a slow confirming pair's second run).

    >>> run_limit({"a": 8}), run_limit({})
    (12, 0)
    """
    most = max(counts.values(), default=0)
    return 2 * max(1, (most - 1).bit_length()) + 6 if most >= 2 else 0
