"""Events since the last run (docs/history.md): what a finding counted now (``Finding.events``: the Xids of the
kernel log since boot, a port's link down counter) against what it counted in the host's previous run.

Per kind of event (its key): ``new`` = the count now less the count then; all of them when the kind was not
there before; all of them when the count did not grow but the newest one was logged at another time (the log or
the counter started again: a reboot, a driver reload, a wrapped kernel log); else 0, "seen before". The status
is never changed here: a fatal Xid still fails, whether new or seen before (it stays in the log until a reboot,
and the GPU is not known to be fixed); what changes is the message, which says which events are new.

>>> from preflight.model import Event
>>> before = (Event("Xid 13 on 0000:9b:00", 1, "Thu Nov 26 22:00:00 2026"),)
>>> now = (Event("Xid 79 on 0000:3b:00", 2, "Fri Nov 27 06:20:00 2026"), before[0])
>>> [e.new for e in compare(now, before)]
[2, 0]
>>> for part in sentence(compare(now, before), "2026-11-27T06:10:01+00:00").split("; "): print(part)
since the last run (2026-11-27 06:10:01 UTC): new: Xid 79 on 0000:3b:00 x2
seen before, nothing new: Xid 13 on 0000:9b:00 x1
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from preflight.model import Event, Finding, Report

FINDINGS = ("gpu.xid.errors", "hccn.link.flaps")  # the finding ids that count events (Finding.events)


def new_count(now: Event, before: Event | None) -> int:
    """How many of ``now.count`` came after the run that saw ``before``.

    >>> new_count(Event("k", 7, "t2"), Event("k", 4, "t1")), new_count(Event("k", 4, "t1"), Event("k", 4, "t1"))
    (3, 0)
    >>> new_count(Event("k", 2, "t9"), Event("k", 5, "t1")), new_count(Event("k", 2, None), None)  # restarted; first
    (2, 2)
    """
    if before is None or now.count > before.count:
        return now.count - (before.count if before else 0)
    if now.last and before.last and now.last != before.last:
        return now.count
    return 0


def compare(now: Sequence[Event], before: Sequence[Event]) -> tuple[Event, ...]:
    """``now``, each event with ``new`` filled in against ``before`` (the same keys' counts in the previous run)."""
    earlier = {e.key: e for e in before}
    return tuple(replace(e, new=new_count(e, earlier.get(e.key))) for e in now)


def _when(iso: str) -> str:
    """'2026-11-27T06:10:01+00:00' -> '2026-11-27 06:10:01 UTC' (the store's times are UTC)."""
    return iso[:19].replace("T", " ") + " UTC" if len(iso) >= 19 else iso


def _item(event: Event) -> str:
    """``Xid 79 on 0000:3b:00 x2`` for an Xid; ``device 3 link down +3 (7 in all)`` for a counter."""
    if event.key.startswith("Xid "):
        shown = event.new if event.new else event.count
        more = f" ({event.count} since boot)" if event.new and event.new != event.count else ""
        return f"{event.key} x{shown}{more}"
    if event.new:
        return f"{event.key} +{event.new} ({event.count} in all)"
    return f"{event.key} count {event.count}"


def sentence(events: Sequence[Event], previous: str) -> str:
    """What is new since the run at ``previous`` (ISO time), and what was seen before; "" when nothing was counted
    (every count 0)."""
    counted = [e for e in events if e.count]
    if not counted:
        return ""
    new = [_item(e) for e in counted if e.new]
    old = [_item(e) for e in counted if not e.new]
    parts = ([f"new: {', '.join(new)}"] if new else []) + (
        [f"seen before, nothing new: {', '.join(old)}"] if old else [])
    return f"since the last run ({_when(previous)}): " + "; ".join(parts)


def annotate(report: Report, previous: Mapping[tuple[str, str], tuple[str, Sequence[Event]]]) -> Report:
    """``report`` with each finding that counted events compared with ``previous`` ((host, finding) -> the previous
    run's time and events): ``events[].new``, ``previous_run`` and a sentence after the message. Statuses are
    left as they are."""
    findings: list[Finding] = []
    for f in report.findings:
        seen = previous.get((f.host, f.check)) if f.host and f.events is not None else None
        if seen is None or f.events is None:
            findings.append(f)
            continue
        when, before = seen
        events = compare(f.events, before)
        said = sentence(events, when)
        findings.append(replace(f, events=events, previous_run=when,
                                message=f"{f.message.rstrip('.')}; {said}" if said else f.message))
    return replace(report, findings=findings)
