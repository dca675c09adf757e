"""Fleet memory in the application: a judged report appended to the history store after its verdict is decided
(``record``), and the store read back for ``preflight history`` (``summary``) and for the run report's history
section (``with_section``); docs/history.md.

Writing history never changes a verdict or an exit code: a store that is corrupt, full, locked too long,
read-only or of a newer schema is one warning line on stderr and nothing else.

>>> import tempfile
>>> from preflight.model import Finding, Report, Status
>>> report = Report([], [Finding("os.shm", "n1", Status.FAIL, "small")], [], "", 0.0).redacted()
>>> bad = Path(tempfile.mkdtemp()) / "h.sqlite"
>>> _ = bad.write_bytes(b"not a database" * 100)
>>> said = []
>>> record(report, "run", bad, warn=said.append)
>>> said[0].startswith("preflight: warning: history not recorded: history store ")
True
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from preflight.app.selection import UsageError
from preflight.history import events, policy, store, view
from preflight.history.analysis import FLAP_CHANGES
from preflight.model import RedactedReport, Report, Status

DEFAULT_BUSY_S = store.DEFAULT_BUSY_S  # run and judge: the longest wait for another writer's lock
MIN_WRITE_S = 0.05  # node: below this much time left before --timeout, the write is not tried


def where(path: Path | None, off: bool, environ: Mapping[str, str] | None = None) -> Path | None:
    """The store to write: None with ``--no-history``, else ``--history``'s path, else the default.

    >>> where(Path("h.sqlite"), False), where(Path("h.sqlite"), True)
    (PosixPath('h.sqlite'), None)
    """
    if off:
        return None
    return path or store.default_path(os.environ if environ is None else environ)


def _stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def record(report: RedactedReport, command: str, path: Path | None, busy_s: float = DEFAULT_BUSY_S,
           warn: Callable[[str], None] = _stderr) -> None:
    """Append the judged ``report`` to the store at ``path`` (None: history off). Never raises for the store:
    a store that cannot take it is one warning through ``warn``; the verdict is the caller's, unchanged."""
    if path is None:
        return
    if busy_s < MIN_WRITE_S:
        warn(f"preflight: warning: history not recorded: no time left within --timeout ({path})")
        return
    try:
        store.record(path, report, command, busy_s=busy_s)
    except store.HistoryError as exc:
        warn(f"preflight: warning: history not recorded: {exc}")


def summary(path: Path, hosts: Sequence[str], since: str | None, k: int = FLAP_CHANGES,
            now: float | None = None) -> dict[str, Any]:
    """``preflight history``'s document (``view.summarize``) of the store at ``path``; ValueError for a bad
    ``--since``, ``store.HistoryError`` for a store that cannot be read."""
    now = time.time() if now is None else now
    start = view.parse_since(since, now) if since else None
    data = view.summarize(store.load(path, hosts, start), now, start, k)
    return {"store": str(path), **data}


def check_policy(drain_after: str | None, path: Path | None) -> None:
    """``--drain-after`` checked before anything runs: UsageError when malformed, or without a history to count.

    >>> check_policy("3/5", Path("h.sqlite")), check_policy(None, None)
    (None, None)
    >>> check_policy("3/5", None)
    Traceback (most recent call last):
    preflight.app.selection.UsageError: --drain-after counts the runs in the history store: not with --no-history
    """
    if drain_after is None:
        return
    try:
        policy.parse(drain_after)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if path is None:
        raise UsageError("--drain-after counts the runs in the history store: not with --no-history")


def with_policy(report: Report, drain_after: str | None, path: Path | None, warn: Callable[[str], None] = _stderr,
                now: float | None = None) -> Report:
    """``report`` judged under ``--drain-after`` (``policy.apply``) with the failing hosts' earlier runs from the
    store at ``path`` (a store not there yet: no earlier runs). A store that cannot be read is a warning, and the
    report is left as without the policy: every fail acts at once."""
    if drain_after is None or path is None:
        return report
    failing = sorted({f.host for f in report.findings if f.host and f.status == Status.FAIL})
    try:
        earlier = store.load(path, failing) if failing and path.exists() else []
    except store.HistoryError as exc:
        warn(f"preflight: warning: --drain-after {drain_after}: the history cannot be read, every fail acts at "
             f"once: {exc}")
        return report
    return policy.apply(report, policy.parse(drain_after), earlier, time.time() if now is None else now)


def with_events(report: Report, path: Path | None, warn: Callable[[str], None] = _stderr) -> Report:
    """``report`` with what is new since each host's previous run (``events.annotate``) for the findings that count
    events (Xids, link downs), read from the store at ``path`` before this run is recorded. No store, no earlier
    run, or ``--no-history``: the report as it is; a store that cannot be read: a warning, the report as it is."""
    wanted = [(f.host, f.check) for f in report.findings if f.host and f.events]
    if path is None or not wanted or not path.exists():
        return report
    try:
        found = store.previous_events(path, wanted)
    except store.HistoryError as exc:
        warn(f"preflight: warning: history not read (what is new since the last run is not said): {exc}")
        return report
    return events.annotate(report, {key: (p.time, p.events) for key, p in found.items()})


def with_section(report: Report, path: Path | None, now: float | None = None) -> Report:
    """``report`` with ``extra["history"]`` (``view.for_report``): per host of this run, its lemon score and what
    flaps over the last 7 days of the store at ``path``, this run included (report.json and report.html show it).
    Unchanged with ``--no-history``, without a store, without earlier runs of these hosts, and for a store that
    cannot be read: no section, and no line of its own (the record after the verdict says the store is broken).

    >>> from preflight.model import Finding
    >>> with_section(Report([], [Finding("os.shm", "n1", Status.FAIL, "m")], [], "", 0.0), None).extra
    mappingproxy({})
    """
    hosts = sorted({f.host for f in report.findings if f.host})
    if path is None or not hosts or not path.exists():
        return report
    now = time.time() if now is None else now
    since = now - view.REPORT_WINDOW_S
    try:
        earlier = store.load_judged(path, hosts, since)  # the rows that can change a score or a flap
    except store.HistoryError:
        return report
    section = view.for_report(earlier, view.this_run(report, now), now, since)
    if section is None:
        return report
    return replace(report, extra={**report.extra, "history": {"store": str(path), **section}})
