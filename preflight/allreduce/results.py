"""A pair's measured figures and what they are judged against: its class reference and its floor.

>>> from preflight.allreduce.schedule import Pair
>>> r = PairResult(Pair(0, "intra", "a", 0, "a", 1, 29600), {1 << 18: 0.1, 1 << 20: 0.3}, {1 << 18: 0.1, 1 << 20: 0.3})
>>> r.size, r.figure, cut(r, 1 << 18).busbw, size_text(r.size), size_text(1 << 18)
(1048576, 0.3, {262144: 0.1}, '1 MiB', '262144 B')
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from preflight.allreduce.schedule import Pair
from preflight.findings import median

MiB = 1 << 20


@dataclass
class PairResult:
    """One pair's merged outcome: sizes (bytes -> busbw, algbw), correctness, or why it failed."""

    pair: Pair
    busbw: dict[int, float] = field(default_factory=dict)
    algbw: dict[int, float] = field(default_factory=dict)
    correct: bool = True
    error: str | None = None

    @property
    def size(self) -> int:
        return max(self.busbw, default=0)

    @property
    def figure(self) -> float:
        return self.busbw.get(self.size, 0.0)


def reference(results: Sequence[PairResult], size: int) -> float:
    """The healthy figure at ``size``: the median over endpoints (host, device) of each one's median pair.

    A plain median of pairs fails on small clusters: with 3 hosts a slow host is in 2 of the 3 pairs
    and would be the median itself. Each endpoint's own median keeps one slow partner from dragging a
    healthy endpoint down, so the reference stays at the healthy figure.
    """
    per_endpoint: dict[tuple[str, int], list[float]] = defaultdict(list)
    for r in results:
        if size in r.busbw:
            per_endpoint[(r.pair.host, r.pair.device)].append(r.busbw[size])
            per_endpoint[(r.pair.peer, r.pair.peer_device)].append(r.busbw[size])
    return median([median(v) for v in per_endpoint.values()]) if per_endpoint else 0.0


def floor_of(result: PairResult, floor_gbps: float, hardware: Mapping[int, tuple[float, str]] | None) -> float:
    """The pair's floor: ``floor_gbps`` when set, else its ``hardware`` floor (0: none)."""
    return floor_gbps if floor_gbps > 0 else (hardware or {}).get(result.pair.index, (0.0, ""))[0]


def below(result: PairResult, reference_gbps: float, fraction: float, floor_gbps: float) -> bool:
    """Slow: under ``fraction`` x the reference, or under the floor where there is one."""
    return result.figure < fraction * reference_gbps or (floor_gbps > 0 and result.figure < floor_gbps)


def cut(result: PairResult, size: int) -> PairResult:
    """``result`` at ``size`` only (which it measured)."""
    return PairResult(result.pair, {size: result.busbw[size]}, {size: result.algbw.get(size, result.busbw[size])},
                      result.correct, result.error)


def size_text(n: int) -> str:
    return f"{n / MiB:g} MiB" if n >= MiB else f"{n} B"
