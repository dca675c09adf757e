"""Which facts files belong to the run being judged: the same run id, and not older than ``--max-age``.

``preflight judge`` reads whatever lies in a folder, often a shared volume: a file left there by yesterday's
run (or by a pod of another Job) must not be judged as today's node. Two guards, both pure:

- the run id: ``node --facts --run-id ID`` (or ``PREFLIGHT_RUN_ID``) writes it into the file; ``judge`` takes
  ``--run-id ID`` (or the same variable), else the run id most files carry. A file of another run, or one
  without a run id when a run id is expected, is set aside with an ``error`` finding;
- the age: a file gathered longer ago than ``--max-age`` (default :data:`DEFAULT_MAX_AGE`; ``0`` switches the
  bound off), or at a time that cannot be read, is set aside the same way.

A file set aside is never judged: its host has no facts (``error``, exit 4 unless something fails).

>>> parse_age("90m"), parse_age("1h"), parse_age("45"), parse_age("2d"), parse_age("0")
(5400.0, 3600.0, 45.0, 172800.0, 0.0)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from preflight.model import Finding, Status

if TYPE_CHECKING:  # light at import: `judge`'s option default is read on every CLI start
    from preflight.facts_file import NodeFacts

FILE_ID = "facts.file"
DEFAULT_MAX_AGE = "1h"  # gathers of one run are minutes apart; a leftover of an earlier run is hours old
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$", re.IGNORECASE)


def parse_age(text: str) -> float:
    """``--max-age``: seconds, or a number with s, m, h or d; ValueError when malformed."""
    match = _AGE.match(text)
    if not match:
        raise ValueError(f"--max-age {text!r}: expected seconds or a number with s, m, h or d (30m, 1h, 2d)")
    return float(match[1]) * _UNITS[match[2].lower()]


def expected_run(loaded: Sequence[NodeFacts], run_id: str | None) -> str | None:
    """The run being judged: ``run_id`` when given, else the one most files carry (None: no file has one).

    >>> from preflight.facts_file import NodeFacts
    >>> files = [NodeFacts(f"{n}.json", None, None, "", 0, ((), ()), {}, r) for n, r in  # type: ignore[arg-type]
    ...          (("a", "r2"), ("b", "r2"), ("c", "r1"), ("d", None))]
    >>> expected_run(files, None), expected_run(files, "r1"), expected_run(files[3:], None)
    ('r2', 'r1', None)
    """
    if run_id:
        return run_id
    counts = Counter(f.run_id for f in loaded if f.run_id)
    return counts.most_common(1)[0][0] if counts else None


def set_aside(loaded: Sequence[NodeFacts], run_id: str | None, max_age_s: float, now: datetime
              ) -> tuple[list[NodeFacts], list[Finding]]:
    """The files to judge, and an ``error`` finding for each file set aside (another run, too old, no time)."""
    run = expected_run(loaded, run_id)
    kept: list[NodeFacts] = []
    problems: list[Finding] = []
    for facts in loaded:
        why = _not_current(facts, run, run_id is not None, max_age_s, now)
        if why is None:
            kept.append(facts)
            continue
        message, observed, remedy = why
        problems.append(Finding(FILE_ID, facts.host.name, Status.ERROR,
                                f"{FILE_ID}: {facts.path} {message}: not judged", observed=observed,
                                expected=_expected(run, max_age_s), remedy=remedy))
    return kept, problems


def _not_current(facts: NodeFacts, run: str | None, run_given: bool, max_age_s: float, now: datetime
                 ) -> tuple[str, str, str] | None:
    """Why ``facts`` is not of the run being judged: (message, observed, remedy), or None."""
    again = f"gather it again on {facts.host.name}: preflight node --facts FILE --run-id RUN"
    if run is not None and facts.run_id != run:
        whose = f"run {facts.run_id!r}" if facts.run_id else "no run id"
        said = "--run-id / PREFLIGHT_RUN_ID" if run_given else "most of the files"
        return (f"is of {whose}, not of run {run!r} ({said})", facts.run_id or "no run id", again)
    if max_age_s <= 0:
        return None
    try:
        gathered = datetime.fromisoformat(facts.gathered_at)
        age = (now - gathered).total_seconds()
    except (TypeError, ValueError):  # no time, an unreadable one, or one without a time zone
        return (f"has no readable gathering time ({facts.gathered_at or 'none'})", facts.gathered_at or "none",
                again)
    if age > max_age_s:
        return (f"was gathered {_span(age)} ago ({facts.gathered_at}), longer ago than --max-age {_span(max_age_s)}",
                facts.gathered_at, f"{again}  (or judge older files with --max-age)")
    return None


def _expected(run: str | None, max_age_s: float) -> str:
    parts = [f"run {run}"] if run else []
    if max_age_s > 0:
        parts.append(f"gathered within {_span(max_age_s)}")
    return ", ".join(parts) or "a current file"


def _span(seconds: float) -> str:
    """A duration for people.

    >>> _span(45), _span(5400), _span(3600), _span(200000)
    ('45 s', '90 min', '1 h', '2.3 days')
    """
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600 and seconds % 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.3g} h"
    return f"{seconds / 86400:.2g} days"
