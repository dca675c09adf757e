"""Which device pairs run all_reduce together, and in which rounds.

Inter-host pairs come from one of three patterns (``host_rounds``):

- ``all``: the round-robin circle method: n hosts need n-1 rounds (n when n is odd: one host sits
  out each round), every host is in at most one pair per round and every host pair meets once;
- ``ring``: each host with its two ring neighbours (n pairs in 2 rounds, 3 when n is odd);
- ``matchings``: k rounds of the circle method over a shuffled host order: k random perfect
  matchings that never repeat a pair (k partners per host).

Device k of a host talks to device k of its partner. Intra-host pairs (every two devices of one
host) use the circle method over the devices, on all hosts at once.

>>> circle_rounds(4)
[[(0, 3), (1, 2)], [(0, 2), (3, 1)], [(0, 1), (2, 3)]]
>>> [len(r) for r in circle_rounds(3)]
[1, 1, 1]
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass


def circle_rounds(n: int) -> list[list[tuple[int, int]]]:
    """Rounds of disjoint pairs of ``range(n)`` covering every pair once (a bye when n is odd)."""
    if n < 2:
        return []
    size = n + n % 2  # index n is the bye
    ring = list(range(size))
    rounds: list[list[tuple[int, int]]] = []
    for _ in range(size - 1):
        pairs = [(ring[i], ring[size - 1 - i]) for i in range(size // 2)]
        rounds.append([(a, b) for a, b in pairs if a < n and b < n])
        ring = [ring[0], ring[-1], *ring[1:-1]]
    return rounds


def ring_rounds(n: int) -> list[list[tuple[int, int]]]:
    """Rounds of disjoint pairs covering the ring edges (i, i+1 mod n) once each.

    >>> ring_rounds(4)
    [[(0, 1), (2, 3)], [(1, 2), (3, 0)]]
    >>> ring_rounds(5)
    [[(0, 1), (2, 3)], [(1, 2), (3, 4)], [(4, 0)]]
    >>> ring_rounds(2), ring_rounds(1)
    ([[(0, 1)]], [])
    """
    if n < 2:
        return []
    if n == 2:
        return [[(0, 1)]]
    edges = [(i, (i + 1) % n) for i in range(n)]
    body = n - n % 2  # with n odd, the closing edge (n-1, 0) touches both rounds' hosts: a round of its own
    rounds = [edges[0:body:2], edges[1:body:2]]
    if n % 2:
        rounds.append([edges[n - 1]])
    return rounds


def matching_rounds(n: int, k: int, seed: int) -> list[list[tuple[int, int]]]:
    """k random perfect matchings of ``range(n)`` (a bye when n is odd) with no pair repeated.

    >>> rounds = matching_rounds(6, 2, seed=1)
    >>> len(rounds), [len(r) for r in rounds]
    (2, [3, 3])
    >>> len({frozenset(p) for r in rounds for p in r})
    6
    """
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return [[(order[a], order[b]) for a, b in meeting] for meeting in circle_rounds(n)[:max(0, k)]]


PATTERNS = ("all", "ring", "matchings")


def host_rounds(n: int, pattern: str, k: int = 3, seed: int = 0) -> list[list[tuple[int, int]]]:
    """The inter-host rounds of ``pattern`` (one of PATTERNS) over ``range(n)``.

    >>> [len(host_rounds(8, p)) for p in PATTERNS]
    [7, 2, 3]
    """
    if pattern == "ring":
        return ring_rounds(n)
    if pattern == "matchings":
        return matching_rounds(n, k, seed)
    return circle_rounds(n)


@dataclass(frozen=True)
class Pair:
    """Two ranks that run all_reduce together; rank 0 (the rendezvous master) is ``host``/``device``."""

    index: int
    kind: str  # "inter" or "intra"
    host: str
    device: int
    peer: str
    peer_device: int
    port: int
    link: str = ""  # intra pairs: the link class (preflight.allreduce.topology: NV12, PIX, HCCS, ...)

    @property
    def group(self) -> str:
        """What the pair is compared with: "inter", or the intra pair's link class."""
        return self.link or self.kind

    @property
    def label(self) -> str:
        """``node1:0<->node2:0``"""
        return f"{self.host}:{self.device}<->{self.peer}:{self.peer_device}"


def plan(hosts: Sequence[str], devices: int, base_port: int, avoid: Sequence[int] = (), pattern: str = "all",
         k: int = 3, seed: int = 0, link: Callable[[str, int, int], str | None] | None = None) -> list[list[Pair]]:
    """Rounds of pairs: the inter-host rounds of ``pattern``, then the intra-host rounds (when devices > 1).

    Every pair gets its own port, counting up from ``base_port`` and skipping ``avoid``. ``link(host, i, j)``:
    the class of an intra pair, None for a pair the library refuses (not planned; see topology.py).

    >>> [[p.label for p in r] for r in plan(["a", "b", "c"], 1, 29600)]
    [['b:0<->c:0'], ['a:0<->c:0'], ['a:0<->b:0']]
    >>> [p.label for p in plan(["a"], 2, 29600)[0]]
    ['a:0<->a:1']
    """
    ports = free_ports(base_port, set(avoid))
    rounds: list[list[Pair]] = []
    index = 0
    for meeting in host_rounds(len(hosts), pattern, k, seed):
        current = []
        for a, b in meeting:
            for k in range(devices):
                current.append(Pair(index, "inter", hosts[a], k, hosts[b], k, next(ports)))
                index += 1
        rounds.append(current)
    for meeting in circle_rounds(devices):
        current = []
        for host in hosts:
            for i, j in meeting:
                cls = link(host, min(i, j), max(i, j)) if link else ""
                if cls is None:
                    continue
                current.append(Pair(index, "intra", host, min(i, j), host, max(i, j), next(ports), cls))
                index += 1
        rounds.append(current)
    return [r for r in rounds if r]


def free_ports(base: int, avoid: set[int]) -> Iterator[int]:
    port = base
    while True:
        if port not in avoid:
            yield port
        port += 1

