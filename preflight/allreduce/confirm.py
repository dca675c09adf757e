"""Confirm before blame: a pair slow in its round is measured again alone, and one still slow alone beside a pair of
its class that was fine in the rounds (its control), run alone right after it.

The class reference comes from the rounds, another moment than the run alone: on hosts whose load changes (other
jobs, a shared CI box) a healthy pair can be slow in its round and again alone. The control, run at nearly the same
moment, is as slow then; a slow link is not excused by it, a busy moment is.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from preflight.allreduce.results import PairResult, below, cut, floor_of, reference, size_text
from preflight.allreduce.schedule import Pair

Excused = tuple[PairResult, PairResult, PairResult]  # (first, alone, the known-good pair of its class right after)


def alone_slow(first: PairResult, again: PairResult, measured: Sequence[PairResult], fraction: float,
               floor_gbps: float, hardware: Mapping[int, tuple[float, str]] | None = None) -> bool:
    """Whether ``first``'s run alone (``again``) gave a figure and it is still below the class reference from the
    rounds (or the floor), read at the size ``first`` was judged at. False for a run that gave no figure."""
    if again.error is not None or not again.busbw:
        return False
    alone = alone_at(first, again)
    ref = reference([o for o in measured if o.pair.group == first.pair.group], alone.size)
    return below(alone, ref, fraction, floor_of(first, floor_gbps, hardware))


def confirm(slow: Sequence[PairResult], measured: Sequence[PairResult], remeasured: Mapping[int, PairResult] | None,
            fraction: float, floor_gbps: float, hardware: Mapping[int, tuple[float, str]] | None = None,
            controls: Mapping[int, PairResult] | None = None,
            ) -> tuple[list[PairResult], list[tuple[PairResult, PairResult]], list[Excused], list[PairResult]]:
    """Slow pairs measured again alone: (those still slow, (first, alone) of those that recovered, (first, alone,
    control) of those a known-good pair excused, those left unconfirmed).

    A pair whose second run failed stays slow: only a clean second figure at or above the class reference
    clears it. The alone figure is read at the size the pair was found slow at (the same reference: the
    class's figure at that size from the rounds), or at its largest size when the alone run did not get
    there; a larger size would be judged against the few pairs of the rounds that reached it.
    A pair still slow alone is blamed only when it is also below ``fraction`` x its control (``controls``: a pair
    of its class that was fine in the rounds, run alone right after it; preflight.allreduce.confirm): the
    reference is from the rounds, another moment, and a box or network slow at the moment of the alone run
    slows the control as much. A control that gave no figure (or none at a size both ran) keeps the verdict.
    A pair not measured again (past ``confirm_max``) stays slow only when it shares a host that is confirmed
    slow with two or more partners (that host explains it; a host paired once with a bad one does not);
    otherwise it is left unconfirmed, never blamed. With no confirmation phase at all (``remeasured`` None:
    ``confirm_max`` 0) every slow pair stays slow."""
    if remeasured is None:
        return list(slow), [], [], []
    still: list[PairResult] = []
    recovered: list[tuple[PairResult, PairResult]] = []
    excused: list[Excused] = []
    waiting: list[PairResult] = []
    for r in slow:
        again = remeasured.get(r.pair.index)
        if again is None:
            waiting.append(r)
        elif again.error is not None or not again.busbw:
            still.append(r)
        elif not alone_slow(r, again, measured, fraction, floor_gbps, hardware):
            recovered.append((r, alone_at(r, again)))
        else:
            both = beside(alone_at(r, again), again, (controls or {}).get(r.pair.index))
            (excused.append((r, *both)) if both is not None and both[0].figure >= fraction * both[1].figure
             else still.append(r))
    partners: dict[str, set[str]] = {}
    for r in still:
        partners.setdefault(r.pair.host, set()).add(r.pair.peer)
        partners.setdefault(r.pair.peer, set()).add(r.pair.host)
    blamed = {h for h, others in partners.items() if len(others) >= 2}  # slow, confirmed, with 2+ partners
    unconfirmed = [r for r in waiting if not {r.pair.host, r.pair.peer} & blamed]
    still += [r for r in waiting if {r.pair.host, r.pair.peer} & blamed]
    return still, recovered, excused, unconfirmed


def beside(alone: PairResult, again: PairResult, control: PairResult | None) -> tuple[PairResult, PairResult] | None:
    """The pair's run alone and its control's, at one size both ran (the judged size where the control has it, else
    their largest common one); None without a control figure.

    >>> from preflight.allreduce.schedule import Pair
    >>> p, q = Pair(0, "intra", "a", 0, "a", 1, 29600), Pair(1, "intra", "b", 0, "b", 1, 29601)
    >>> again = PairResult(p, {1 << 18: 0.1, 1 << 20: 0.3}, {1 << 18: 0.1, 1 << 20: 0.3})
    >>> mine, theirs = beside(alone_at(PairResult(p, {1 << 18: 0.1}), again), again,
    ...                        PairResult(q, {1 << 20: 0.35}, {1 << 20: 0.35}))
    >>> mine.busbw, theirs.busbw
    ({1048576: 0.3}, {1048576: 0.35})
    >>> beside(again, again, PairResult(q, error="timed out")) is None
    True
    """
    if control is None or control.error is not None:
        return None
    common = set(again.busbw) & set(control.busbw)
    if not common:
        return None
    size = alone.size if alone.size in common else max(common)
    return cut(again, size), cut(control, size)


def alone_at(first: PairResult, again: PairResult) -> PairResult:
    """``again`` (the pair measured alone) cut to the size ``first`` was judged at, when it measured it.

    >>> from preflight.allreduce.schedule import Pair
    >>> p = Pair(0, "intra", "a", 0, "a", 1, 29600)
    >>> first = PairResult(p, {1 << 18: 0.1}, {1 << 18: 0.1})
    >>> alone_at(first, PairResult(p, {1 << 18: 0.4, 1 << 20: 0.9}, {1 << 18: 0.4, 1 << 20: 0.9})).busbw
    {262144: 0.4}
    """
    return cut(again, first.size if first.size in again.busbw else again.size)


def alone_text(first: PairResult, again: PairResult | None, control: PairResult | None = None) -> str:
    """What the pair's run alone gave, for a pair that stays slow ("" when it was not measured again), and the
    control's run right after it (see :func:`confirm`).

    >>> from preflight.allreduce.schedule import Pair
    >>> p = Pair(0, "intra", "a", 0, "a", 1, 29600)
    >>> alone_text(PairResult(p, {1 << 18: 0.1}), PairResult(p, {1 << 18: 0.12}, {1 << 18: 0.12}))
    '; alone: 0.12 GB/s at 262144 B'
    >>> alone_text(PairResult(p, {1 << 18: 0.1}), PairResult(p, error="rank 1 (a): timed out"))
    '; alone: did not complete (rank 1 (a): timed out)'
    """
    if again is None:
        return ""
    if again.error is not None or not again.busbw:
        return f"; alone: did not complete ({(again.error or 'no size measured')[:200]})"
    alone = alone_at(first, again)
    text = f"; alone: {alone.figure:.3g} GB/s at {size_text(alone.size)}"
    both = beside(alone, again, control)
    if control is not None:
        text += (f", {control.pair.label} right after: {both[1].figure:.3g} GB/s at {size_text(both[1].size)}"
                 if both is not None else f", {control.pair.label} right after: no figure to compare")
    return text


def control_pair(first: PairResult, measured: Sequence[PairResult], slow_ids: set[int]) -> Pair | None:
    """The pair that runs alone right after ``first`` (still slow alone) as its control: one of its class that was fine
    in the rounds, whose hosts were in the fewest slow pairs of the class (a host with a fault of its own would slow
    the control too), then the nearest to the class reference; None when the class has no such pair.

    >>> from preflight.allreduce.schedule import Pair
    >>> hccs = [PairResult(Pair(i, "intra", h, 0, h, 1, 29600 + i, "HCCS"), {1 << 18: f}, {1 << 18: f})
    ...         for i, (h, f) in enumerate([("a", 0.1), ("b", 0.9), ("c", 0.3), ("d", 0.35)])]
    >>> control_pair(hccs[0], hccs, {0}).label
    'd:0<->d:1'
    >>> control_pair(hccs[0], hccs[:1], {0}) is None
    True
    """
    group = [o for o in measured if o.pair.group == first.pair.group and o.correct]
    ref = reference(group, first.size)
    slow_hosts = [h for o in group if o.pair.index in slow_ids for h in {o.pair.host, o.pair.peer}]

    def rank(o: PairResult) -> tuple[int, float, int]:
        at = o.busbw.get(first.size, 0.0)
        near = abs(math.log(at / ref)) if at > 0 and ref > 0 else math.inf
        return sum(slow_hosts.count(h) for h in {o.pair.host, o.pair.peer}), near, o.pair.index

    fine = [o for o in group if o.pair.index not in slow_ids]
    return min(fine, key=rank).pair if fine else None


@dataclass
class Confirmations:
    """The confirmation runs replayed from the outcomes after the rounds: each slow pair's run alone (slow pair index
    -> result), each control's run (slow pair index -> the control's result), and what runs next (one step each)."""

    remeasured: dict[int, PairResult] = field(default_factory=dict)
    controls: dict[int, PairResult] = field(default_factory=dict)
    next: list[Pair] = field(default_factory=list)


def replay(again: Sequence[PairResult], runs: int, read: Callable[[int, Pair], PairResult],
           still_slow: Callable[[PairResult, PairResult], bool],
           control_for: Callable[[PairResult], Pair | None]) -> Confirmations:
    """Walk the ``runs`` confirmation runs in the order they ran: each pair of ``again`` alone, then, when it is still
    slow alone (``still_slow(first, alone)``) and its class has a control (``control_for``), that control alone.
    ``read(k, pair)``: run k's result for ``pair``. The next steps: the pending control and the next pair alone.

    >>> from preflight.allreduce.schedule import Pair
    >>> a, b, c = (Pair(i, "inter", f"h{i}", 0, f"h{i + 1}", 0, 29600 + i) for i in range(3))
    >>> slow = [PairResult(a, {8: 0.1}), PairResult(b, {8: 0.2})]
    >>> def go(n, slow_alone):
    ...     return replay(slow, n, lambda k, p: PairResult(p, {8: 0.1}), lambda f, r: f.pair in slow_alone,
    ...                   lambda f: c)
    >>> [p.index for p in go(0, {a}).next], [p.index for p in go(1, {a}).next], go(1, {a}).remeasured.keys()
    ([0], [2, 1], dict_keys([0]))
    >>> done = go(3, {a})
    >>> sorted(done.remeasured), sorted(done.controls), done.controls[0].pair.index, done.next
    ([0, 1], [0], 2, [])
    """
    done = Confirmations()
    taken = 0
    for k, first in enumerate(again):
        if taken == runs:
            done.next = [first.pair]
            break
        alone = done.remeasured[first.pair.index] = read(taken, first.pair)
        taken += 1
        control = control_for(first) if still_slow(first, alone) else None
        if control is None:
            continue
        if taken == runs:
            done.next = [control] + [r.pair for r in again[k + 1:k + 2]]
            break
        done.controls[first.pair.index] = read(taken, control)
        taken += 1
    return done
