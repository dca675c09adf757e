"""Which device pairs run all_reduce together, and in which rounds.

Inter-host pairs come from the round-robin circle method: n hosts need n-1 rounds (n when n is
odd: one host sits out each round), every host is in at most one pair per round and every host
pair meets exactly once. Device k of a host talks to device k of its partner. Intra-host pairs
(every two devices of one host) use the same method over the devices, on all hosts at once.

>>> circle_rounds(4)
[[(0, 3), (1, 2)], [(0, 2), (3, 1)], [(0, 1), (2, 3)]]
>>> [len(r) for r in circle_rounds(3)]
[1, 1, 1]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
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

    @property
    def label(self) -> str:
        """``node1:0<->node2:0``"""
        return f"{self.host}:{self.device}<->{self.peer}:{self.peer_device}"


def plan(hosts: Sequence[str], devices: int, base_port: int, avoid: Sequence[int] = ()) -> list[list[Pair]]:
    """Rounds of pairs: the inter-host rounds, then the intra-host rounds (only when devices > 1).

    Every pair gets its own port, counting up from ``base_port`` and skipping ``avoid``.

    >>> [[p.label for p in r] for r in plan(["a", "b", "c"], 1, 29600)]
    [['b:0<->c:0'], ['a:0<->c:0'], ['a:0<->b:0']]
    >>> [p.label for p in plan(["a"], 2, 29600)[0]]
    ['a:0<->a:1']
    """
    ports = _ports(base_port, set(avoid))
    rounds: list[list[Pair]] = []
    index = 0
    for meeting in circle_rounds(len(hosts)):
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
                current.append(Pair(index, "intra", host, min(i, j), host, max(i, j), next(ports)))
                index += 1
        rounds.append(current)
    return [r for r in rounds if r]


def _ports(base: int, avoid: set[int]) -> Iterator[int]:
    port = base
    while True:
        if port not in avoid:
            yield port
        port += 1

