"""Pure functions over stored rows (``store.Row``): a host's timeline, what flaps, the lemon score.

**Flapping** (docs/history.md): a finding of a host whose status changed ``k`` or more times between consecutive
runs within the window (default ``k`` = :data:`FLAP_CHANGES`, 3: fail, pass, fail, pass). A run where the
finding was skipped or absent changes nothing.

**Lemon score**: the share of a host's runs in which it had a ``fail``, each run weighted by
``0.5 ** (age / half_life)`` (default half-life :data:`HALF_LIFE_S`, 7 days): 1.0 fails every run, 0.0 never;
last week's fail counts twice as much as the fail of the week before.

>>> from preflight.history.store import Row
>>> rows = [Row(f"r{i}", 86400.0 * i, "run", "n1", "sysctl.somaxconn", s, None)
...         for i, s in enumerate(["fail", "pass", "fail", "pass"])]
>>> [(f.host, f.finding, f.changes) for f in flapping(rows)]
[('n1', 'sysctl.somaxconn', 3)]
>>> round(lemon_scores(rows, now=86400.0 * 3)["n1"].score, 3)  # fails on days 0 and 2: older, under 0.5
0.475
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from preflight.history.store import Row
from preflight.model import Status

FLAP_CHANGES = 3  # k: status changes within the window that make a finding flapping
HALF_LIFE_S = 7 * 86400.0  # the lemon score's half-life: a run a week old weighs half as much as one now
QUIET = ("pass", "skip")  # statuses a timeline leaves out


@dataclass(frozen=True)
class Flap:
    """A finding of a host that changed status ``changes`` times; ``statuses``: one per run, oldest first."""

    host: str
    finding: str
    changes: int
    statuses: tuple[str, ...]


@dataclass(frozen=True)
class Lemon:
    """A host's lemon score and the runs it counts."""

    host: str
    score: float
    runs: int
    failed_runs: int


def per_run(rows: Iterable[Row]) -> dict[tuple[str, str], list[tuple[float, str, str]]]:
    """(host, finding) -> [(time, run id, worst status in that run)], oldest first; cluster rows left out.

    >>> per_run([Row("r1", 1.0, "run", "n1", "a", "pass", None), Row("r1", 1.0, "run", "n1", "a", "fail", None)])
    {('n1', 'a'): [(1.0, 'r1', 'fail')]}
    """
    worst: dict[tuple[str, str, str], tuple[float, str]] = {}
    for row in rows:
        if row.host is None:
            continue
        key = (row.host, row.finding, row.run_id)
        seen = worst.get(key)
        if seen is None or Status(row.status).rank > Status(seen[1]).rank:
            worst[key] = (row.at, row.status)
    out: dict[tuple[str, str], list[tuple[float, str, str]]] = defaultdict(list)
    for (host, finding, run_id), (at, status) in worst.items():
        out[(host, finding)].append((at, run_id, status))
    return {key: sorted(value) for key, value in out.items()}


def changes(statuses: Sequence[str]) -> int:
    """How many times a status sequence changed, skips left out.

    >>> changes(["fail", "pass", "skip", "pass", "fail"]), changes([]), changes(["warn", "warn"])
    (2, 0, 0)
    """
    judged = [s for s in statuses if s != "skip"]
    return sum(1 for a, b in zip(judged, judged[1:], strict=False) if a != b)


def flapping(rows: Iterable[Row], k: int = FLAP_CHANGES) -> list[Flap]:
    """The (host, finding) pairs whose status changed ``k`` times or more, most changes first.

    >>> rows = [Row(f"r{i}", float(i), "node", "n2", "os.shm", s, None) for i, s in enumerate(["fail", "pass"])]
    >>> flapping(rows), [f.changes for f in flapping(rows, k=1)]
    ([], [1])
    """
    found = []
    for (host, finding), seq in per_run(rows).items():
        statuses = tuple(s for _, _, s in seq)
        count = changes(statuses)
        if count >= k:
            found.append(Flap(host, finding, count, statuses))
    return sorted(found, key=lambda f: (-f.changes, f.host, f.finding))


def lemon_scores(rows: Iterable[Row], now: float, half_life_s: float = HALF_LIFE_S) -> dict[str, Lemon]:
    """Every host's lemon score: its runs (any row of it) weighted by age, the share with a ``fail``.

    >>> rows = [Row("r1", 0.0, "run", "n1", "a", "fail", None), Row("r2", 10.0, "run", "n1", "a", "pass", None)]
    >>> lemon = lemon_scores(rows, now=10.0, half_life_s=10.0)["n1"]
    >>> round(lemon.score, 3), lemon.runs, lemon.failed_runs
    (0.333, 2, 1)
    """
    runs: dict[str, dict[str, tuple[float, bool]]] = defaultdict(dict)
    for row in rows:
        if row.host is None:
            continue
        at, failed = runs[row.host].get(row.run_id, (row.at, False))
        runs[row.host][row.run_id] = (at, failed or row.status == "fail")
    out = {}
    for host, seen in runs.items():
        weights = [(0.5 ** (max(0.0, now - at) / half_life_s), failed) for at, failed in seen.values()]
        total = sum(w for w, _ in weights)
        bad = sum(w for w, failed in weights if failed)
        out[host] = Lemon(host, bad / total if total else 0.0, len(seen), sum(1 for _, f in weights if f))
    return out


def timeline(rows: Iterable[Row], host: str) -> list[Row]:
    """The rows of ``host`` that are not quiet (warn, fail, error), oldest first.

    >>> rows = [Row("r1", 2.0, "run", "n1", "a", "warn", "1"), Row("r1", 1.0, "run", "n1", "b", "pass", None)]
    >>> [(r.finding, r.status) for r in timeline(rows, "n1")]
    [('a', 'warn')]
    """
    return sorted((r for r in rows if r.host == host and r.status not in QUIET), key=lambda r: r.at)
