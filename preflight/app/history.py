"""Fleet memory in the application: a judged report appended to the history store after its verdict is decided
(``record``), and the store read back for ``preflight history`` (``summary``); docs/history.md.

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
from pathlib import Path
from typing import Any

from preflight.history import store, view
from preflight.history.analysis import FLAP_CHANGES
from preflight.model import RedactedReport

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
