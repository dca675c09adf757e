"""The history store: SQLite from the standard library, one row per host x finding x run (docs/history.md).

Where: ``--history PATH``, else ``$PREFLIGHT_HISTORY``, else ``$XDG_STATE_HOME/preflight/history.sqlite``
(``~/.local/state/preflight/history.sqlite``). The schema is versioned (``meta.schema_version``): an older store
is migrated in place, a newer one is refused (:class:`HistoryError`), never rewritten. Writers open the store in
WAL mode with a busy timeout, and write one run in one short transaction: many prolog processes at once wait
their turn for milliseconds and lose no row.

>>> import tempfile
>>> from preflight.model import Finding, Report, Status
>>> report = Report([], [Finding("sysctl.somaxconn", "n1", Status.FAIL, "low", observed="64")], [],
...                 "2026-11-27T04:00:00+00:00", 0.1).redacted()
>>> path = Path(tempfile.mkdtemp()) / "history.sqlite"
>>> run_id = record(path, report, "node", now=1_800_000_000.0)
>>> [(r.host, r.finding, r.status, r.observed) for r in load(path)]
[('n1', 'sysctl.somaxconn', 'fail', '64')]
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from preflight.model import Event, RedactedReport

T = TypeVar("T")

SCHEMA_VERSION = 2
READABLE = 1  # the oldest schema version this preflight reads without writing first (1 lacks findings.events)
# MIGRATIONS[i] brings a store from schema version i to i + 1 (0: a new, empty file).
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, time TEXT NOT NULL, at REAL NOT NULL,"
        " command TEXT NOT NULL, verdict TEXT NOT NULL, exit_code INTEGER NOT NULL)",
        "CREATE TABLE IF NOT EXISTS findings (run_id TEXT NOT NULL REFERENCES runs(run_id), time TEXT NOT NULL,"
        " at REAL NOT NULL, command TEXT NOT NULL, host TEXT, finding TEXT NOT NULL, status TEXT NOT NULL,"
        " observed TEXT)",
        "CREATE INDEX IF NOT EXISTS findings_host_at ON findings (host, at)",
        "CREATE INDEX IF NOT EXISTS runs_at ON runs (at)",
    ),
    # 2: the events a finding counted (gpu.xid.errors, hccn.link.flaps), JSON: [{"key", "count", "last"}]
    # and an index to find a host's latest run of a finding at once (store.previous_events, every run with Xids)
    ("ALTER TABLE findings ADD COLUMN events TEXT",
     "CREATE INDEX IF NOT EXISTS findings_host_finding_at ON findings (host, finding, at)"),
)
DEFAULT_BUSY_S = 5.0  # run and judge: how long a writer waits for another's lock (node: within --timeout)


class HistoryError(Exception):
    """The store cannot be used: corrupt, newer than this preflight, locked too long, read-only, full."""


@dataclass(frozen=True)
class Row:
    """One finding of one host in one run, as stored."""

    run_id: str
    at: float  # seconds since the epoch (UTC)
    command: str
    host: str | None  # None: a finding about the cluster
    finding: str
    status: str
    observed: str | None


@dataclass(frozen=True)
class Run:
    """One recorded run."""

    run_id: str
    at: float
    command: str
    verdict: str
    exit_code: int


def default_path(environ: Mapping[str, str]) -> Path:
    """The store when no ``--history`` names one: ``$PREFLIGHT_HISTORY``, else the XDG state directory.

    >>> str(default_path({"XDG_STATE_HOME": "/var/state"}))
    '/var/state/preflight/history.sqlite'
    >>> str(default_path({"PREFLIGHT_HISTORY": "/x/h.sqlite", "XDG_STATE_HOME": "/var/state"}))
    '/x/h.sqlite'
    """
    if environ.get("PREFLIGHT_HISTORY"):
        return Path(environ["PREFLIGHT_HISTORY"])
    state = environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "preflight" / "history.sqlite"


class StoreBusy(HistoryError):
    """SQLite answered SQLITE_BUSY ("database is locked"): another connection holds what this one needs."""


def _busy(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` is SQLite's SQLITE_BUSY, which a retry may pass."""
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+; extended codes keep the primary in the low byte
    if isinstance(code, int):
        return code & 0xFF == 5  # SQLITE_BUSY
    return "database is locked" in str(exc)


@contextmanager
def _connect(path: Path, busy_s: float, write: bool) -> Iterator[sqlite3.Connection]:
    """A connection to the store, every SQLite or OS error turned into :class:`HistoryError`."""
    try:
        if write:
            path.parent.mkdir(parents=True, exist_ok=True)
        elif not path.exists():
            raise HistoryError(f"no history store at {path}")
        uri = f"{path.resolve().as_uri()}?mode={'rwc' if write else 'ro'}"
        with closing(sqlite3.connect(uri, uri=True, timeout=busy_s, isolation_level=None)) as conn:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_s * 1000)}")
            yield conn
    except sqlite3.Error as exc:
        error = StoreBusy if _busy(exc) else HistoryError
        raise error(f"history store {path}: {exc}") from None
    except OSError as exc:
        raise HistoryError(f"history store {path}: {exc}") from None


def _transact(path: Path, busy_s: float, write: bool, work: Callable[[sqlite3.Connection], T]) -> T:
    """``work(connection)``, tried again on a fresh connection while SQLite answers SQLITE_BUSY and ``busy_s``
    lasts.

    The busy timeout waits out a lock another writer holds, but WAL mode also answers SQLITE_BUSY at once,
    without waiting, while the last connection to close cleans up the WAL and during recovery
    (https://www.sqlite.org/wal.html, "Sometimes Queries Return SQLITE_BUSY In WAL Mode"); sixteen prolog
    processes opening and closing one store meet that now and then. ``work`` is one whole transaction, so a
    retry never repeats half of one.
    """
    deadline = time.monotonic() + busy_s
    while True:
        try:
            with _connect(path, max(deadline - time.monotonic(), 0.0), write) as conn:
                return work(conn)
        except StoreBusy:
            if time.monotonic() >= deadline:
                raise
        time.sleep(random.uniform(0.005, 0.05))  # jittered: writers that met do not meet again in step


def schema_version(conn: sqlite3.Connection) -> int:
    """The store's schema version (0: no schema yet)."""
    has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
    if not has_meta:
        return 0
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Bring the store to :data:`SCHEMA_VERSION` inside the caller's write transaction; refuse a newer one."""
    version = schema_version(conn)
    if version > SCHEMA_VERSION:
        raise HistoryError(f"history store {path}: schema version {version} is newer than this preflight's "
                           f"({SCHEMA_VERSION}); not written (use a newer preflight or another --history)")
    for step in MIGRATIONS[version:]:
        for statement in step:
            conn.execute(statement)
    if version < SCHEMA_VERSION:
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).isoformat(timespec="seconds")


def record(path: Path, report: RedactedReport, command: str, busy_s: float = DEFAULT_BUSY_S,
           now: float | None = None, run_id: str | None = None) -> str:
    """Append ``report`` (already judged, redacted) to the store at ``path``: one runs row and one findings row
    per finding, in one transaction. The run id; :class:`HistoryError` when the store cannot take it."""
    at = time.time() if now is None else now
    run_id = run_id or uuid.uuid4().hex
    stamp = _iso(at)
    verdict = report.verdict()
    rows = [(run_id, stamp, at, command, f.host, f.check, f.status.value, f.observed, _events_json(f.events))
            for f in report.findings]

    def write(conn: sqlite3.Connection) -> None:
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        if str(mode).lower() != "wal":
            conn.execute("PRAGMA journal_mode = WAL")  # persistent: set once per store, by its first writer
        conn.execute("PRAGMA synchronous = NORMAL")  # WAL: durable across a crash of the process, fsync at checkpoint
        conn.execute("BEGIN IMMEDIATE")
        try:
            _migrate(conn, path)
            conn.execute("INSERT INTO runs (run_id, time, at, command, verdict, exit_code) VALUES (?, ?, ?, ?, ?, ?)",
                         (run_id, stamp, at, command, verdict.value, verdict.exit_code))
            conn.executemany("INSERT INTO findings (run_id, time, at, command, host, finding, status, observed,"
                             " events) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    _transact(path, busy_s, True, write)
    return run_id


def _checked(conn: sqlite3.Connection, path: Path) -> int:
    """The store's schema version when this preflight reads it (:data:`READABLE` to :data:`SCHEMA_VERSION`)."""
    version = schema_version(conn)
    if not READABLE <= version <= SCHEMA_VERSION:
        raise HistoryError(f"history store {path}: schema version {version}, this preflight reads "
                           f"{READABLE} to {SCHEMA_VERSION}" + (" (write to it once to migrate it)"
                                                                if version < SCHEMA_VERSION else ""))
    return version


def _events_json(events: Sequence[Event] | None) -> str | None:
    """A finding's events as stored (``new`` left out: it is this run's comparison, not an observation).

    >>> _events_json([Event("Xid 79 on 0000:3b:00", 2, None, new=2)])
    '[{"key": "Xid 79 on 0000:3b:00", "count": 2, "last": null}]'
    """
    if events is None:
        return None
    return json.dumps([{"key": e.key, "count": e.count, "last": e.last} for e in events])


def _events(text: str | None) -> tuple[Event, ...]:
    """Stored events back; an unreadable value is no events (never an exception).

    >>> _events('[{"key": "device 0 link down", "count": 7, "last": null}]'), _events("garbage")
    ((Event(key='device 0 link down', count=7, last=None, new=None),), ())
    """
    try:
        data = json.loads(text or "[]")
        return tuple(Event.from_dict(e) for e in data)
    except (ValueError, TypeError, KeyError, AttributeError):
        return ()


@dataclass(frozen=True)
class Previous:
    """A host's finding in its previous run that counted events: when, and what it counted."""

    run_id: str
    time: str
    at: float
    events: tuple[Event, ...]


def previous_events(path: Path, wanted: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Previous]:
    """(host, finding) -> the events that finding counted in the host's latest recorded run that has them (its
    rows of that run merged); pairs never recorded with events are left out. A store of schema version 1 has
    none."""
    def read(conn: sqlite3.Connection) -> dict[tuple[str, str], Previous]:
        out: dict[tuple[str, str], Previous] = {}
        if _checked(conn, path) < 2:
            return out
        for host, finding in sorted(set(wanted)):  # each a walk down findings_host_finding_at, not a scan
            latest = conn.execute("SELECT at FROM findings WHERE host = ? AND finding = ? AND events IS NOT NULL"
                                  " ORDER BY at DESC LIMIT 1", (host, finding)).fetchone()
            if latest is None:
                continue
            rows = conn.execute("SELECT run_id, time, events FROM findings WHERE host = ? AND finding = ? AND at = ?"
                                " AND events IS NOT NULL ORDER BY rowid", (host, finding, latest[0])).fetchall()
            merged = tuple(e for row in rows for e in _events(row[2]))
            out[(host, finding)] = Previous(str(rows[0][0]), str(rows[0][1]), float(latest[0]), merged)
        return out

    return _transact(path, DEFAULT_BUSY_S, False, read)


def load(path: Path, hosts: Sequence[str] = (), since: float | None = None) -> list[Row]:
    """The stored rows of ``hosts`` (every host when empty) from ``since`` on, oldest first."""
    where, args = _filter(hosts, since)

    def read(conn: sqlite3.Connection) -> list[Any]:
        _checked(conn, path)
        return conn.execute("SELECT run_id, at, command, host, finding, status, observed FROM findings"
                                 f"{where} ORDER BY at, rowid", args).fetchall()

    found = _transact(path, DEFAULT_BUSY_S, False, read)
    return [Row(str(r[0]), float(r[1]), str(r[2]), r[3], str(r[4]), str(r[5]), r[6]) for r in found]


def load_judged(path: Path, hosts: Sequence[str], since: float | None = None) -> list[Row]:
    """What the lemon scores and flapping of ``hosts`` need, without the rows that cannot change them: every row of
    a (host, finding) that was not ``pass`` or ``skip`` in the window, and one ``pass`` row (finding ``""``) per host
    and run, which counts the run; oldest first. ``analysis`` gives the same scores and flaps as over :func:`load`'s
    rows (a finding only ever pass or skip changes nothing), from a few rows instead of every finding of every run
    (a run report's history section of 64 hosts x 100 runs x 61 findings, one finding failing now and then:
    0.8 to 2.5 s instead of 5 to 10 s with its analysis, on a 2-core box at a load average of 10 to 50)."""
    where, args = _filter(hosts, since)
    where = (where + " AND" if where else " WHERE") + " host IS NOT NULL"
    columns = "run_id, at, command, host, finding, status, observed"

    def read(conn: sqlite3.Connection) -> list[Any]:
        _checked(conn, path)
        noisy = conn.execute(f"SELECT DISTINCT host, finding FROM findings{where} AND status NOT IN ('pass', 'skip')",
                             args).fetchall()
        start = ([since], " AND at >= ?") if since is not None else ([], "")
        found = [r for host, finding in noisy for r in conn.execute(  # each a walk down findings_host_finding_at
            f"SELECT {columns} FROM findings WHERE host = ? AND finding = ?{start[1]}", [host, finding, *start[0]]
        ).fetchall()]
        found += conn.execute(f"SELECT run_id, MIN(at), MIN(command), host, '', 'pass', NULL FROM findings{where}"
                              " GROUP BY run_id, host", args).fetchall()
        return found

    found = _transact(path, DEFAULT_BUSY_S, False, read)
    rows = [Row(str(r[0]), float(r[1]), str(r[2]), r[3], str(r[4]), str(r[5]), r[6]) for r in found]
    return sorted(rows, key=lambda r: r.at)


def runs(path: Path, since: float | None = None) -> list[Run]:
    """The recorded runs from ``since`` on, oldest first."""
    where, args = _filter((), since)

    def read(conn: sqlite3.Connection) -> list[Any]:
        _checked(conn, path)
        return conn.execute(f"SELECT run_id, at, command, verdict, exit_code FROM runs{where} ORDER BY at",
                                 args).fetchall()

    found = _transact(path, DEFAULT_BUSY_S, False, read)
    return [Run(str(r[0]), float(r[1]), str(r[2]), str(r[3]), int(r[4])) for r in found]


def _filter(hosts: Sequence[str], since: float | None) -> tuple[str, list[object]]:
    """A WHERE clause (parameters, never pasted values) for hosts and a start time.

    >>> _filter(["n1", "n2"], 5.0)
    (' WHERE host IN (?, ?) AND at >= ?', ['n1', 'n2', 5.0])
    """
    clauses: list[str] = []
    args: list[object] = []
    if hosts:
        clauses.append(f"host IN ({', '.join('?' for _ in hosts)})")
        args.extend(hosts)
    if since is not None:
        clauses.append("at >= ?")
        args.append(since)
    return (" WHERE " + " AND ".join(clauses) if clauses else "", args)
