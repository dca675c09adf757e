"""``preflight history``'s views: ``--since``, the summary per host (the JSON) and its terminal text.

>>> from preflight.history.store import Row
>>> rows = [Row(f"r{i}", 60.0 * i, "run", "n2", "sysctl.somaxconn", s, "64" if s == "fail" else "65535")
...         for i, s in enumerate(["fail", "pass", "fail", "pass"])]
>>> data = summarize(rows, now=240.0)
>>> [(h["host"], h["lemon"]["failed_runs"], [f["finding"] for f in h["flapping"]]) for h in data["hosts"]]
[('n2', 2, ['sysctl.somaxconn'])]
>>> print(text(data, "h.sqlite").splitlines()[1])
n2  lemon 0.50 (2 of 4 runs failed)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from preflight.history.analysis import FLAP_CHANGES, HALF_LIFE_S, flapping, lemon_scores, timeline
from preflight.history.store import Row
from preflight.model import Report

_SPAN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0}
SHOWN = 10  # timeline entries a host shows in the terminal (--json: all)
REPORT_WINDOW_S = 7 * 86400.0  # the runs a report's history section counts: the last 7 days (= --since 7d)
THIS_RUN = "this run"  # the run id of a report's own rows before it is recorded


def parse_since(text: str, now: float) -> float:
    """``--since``: a duration back from ``now`` (90m, 12h, 7d, 2w) or a date / time (ISO 8601, UTC unless
    it says otherwise) -> seconds since the epoch; ValueError when it is neither.

    >>> parse_since("2d", now=86400.0 * 10) / 86400, parse_since("1970-01-02", now=0.0)
    (8.0, 86400.0)
    """
    match = _SPAN.match(text)
    if match:
        return now - float(match[1]) * _UNITS[match[2].lower()]
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"--since {text!r}: expected a duration (90m, 12h, 7d, 2w) or a date "
                         "(2026-11-20, 2026-11-20T08:00)") from None
    return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).timestamp()


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def summarize(rows: Sequence[Row], now: float, since: float | None = None, k: int = FLAP_CHANGES,
              half_life_s: float = HALF_LIFE_S) -> dict[str, Any]:
    """Per host: the lemon score, what flaps, the timeline of its non-pass findings (the ``--json`` document);
    hosts with the highest lemon score first."""
    lemons = lemon_scores(rows, now, half_life_s)
    flaps = flapping(rows, k)
    hosts = []
    for host, lemon in sorted(lemons.items(), key=lambda item: (-item[1].score, item[0])):
        hosts.append({
            "host": host,
            "lemon": {"score": round(lemon.score, 4), "runs": lemon.runs, "failed_runs": lemon.failed_runs},
            "flapping": [{"finding": f.finding, "changes": f.changes, "statuses": list(f.statuses)}
                         for f in flaps if f.host == host],
            "timeline": [{"time": _iso(r.at), "run_id": r.run_id, "command": r.command, "finding": r.finding,
                          "status": r.status, "observed": r.observed} for r in timeline(rows, host)],
        })
    return {"since": _iso(since) if since is not None else None, "flap_changes": k,
            "half_life_days": half_life_s / 86400.0, "runs": len({r.run_id for r in rows}), "hosts": hosts}


def text(data: dict[str, Any], where: str) -> str:
    """The terminal view of :func:`summarize`'s document."""
    since = f" since {data['since']}" if data["since"] else ""
    lines = [f"history {where}: {data['runs']} runs{since}; flapping: {data['flap_changes']}+ status changes, "
             f"lemon score half-life {data['half_life_days']:g} d"]
    for host in data["hosts"]:
        lemon = host["lemon"]
        lines.append(f"{host['host']}  lemon {lemon['score']:.2f} ({lemon['failed_runs']} of {lemon['runs']} "
                     "runs failed)")
        for flap in host["flapping"]:
            lines.append(f"  FLAPPING {flap['finding']}: {' '.join(flap['statuses'])} ({flap['changes']} changes)")
        entries = host["timeline"]
        if len(entries) > SHOWN:
            lines.append(f"  ... {len(entries) - SHOWN} earlier (--json: all)")
        for entry in entries[-SHOWN:]:
            observed = f"  observed {entry['observed']}" if entry["observed"] else ""
            lines.append(f"  {entry['time']}  {entry['command']:<5} {entry['status']:<5} {entry['finding']}"
                         f"{observed}")
    if not data["hosts"]:
        lines.append("no runs recorded" + (" for these hosts" if data["runs"] == 0 else ""))
    return "\n".join(lines) + "\n"


def this_run(report: Report, now: float) -> list[Row]:
    """The report's findings about hosts as the rows the store will hold once the run is recorded.

    >>> from preflight.model import Finding, Status
    >>> this_run(Report([], [Finding("os.shm", "n1", Status.FAIL, "m")], [], "", 0.0), now=5.0)
    [Row(run_id='this run', at=5.0, command='run', host='n1', finding='os.shm', status='fail', observed=None)]
    """
    return [Row(THIS_RUN, now, "run", f.host, f.check, f.status.value, f.observed) for f in report.findings if f.host]


def for_report(earlier: Sequence[Row], current: Sequence[Row], now: float, since: float,
               k: int = FLAP_CHANGES) -> dict[str, Any] | None:
    """A run report's ``history`` section: :func:`summarize` of the earlier runs and this one (``current``), the
    timelines left out (``preflight history`` shows them); None when no earlier run has these hosts.

    >>> earlier = [Row(f"r{i}", float(i), "node", "n1", "os.shm", s, None) for i, s in enumerate(["fail", "pass"])]
    >>> data = for_report(earlier, [Row(THIS_RUN, 9.0, "run", "n1", "os.shm", "fail", None)], now=9.0, since=0.0,
    ...                   k=2)
    >>> data["runs"], data["hosts"][0]["lemon"]["failed_runs"], data["hosts"][0]["flapping"][0]["statuses"]
    (3, 2, ['fail', 'pass', 'fail'])
    >>> for_report([], [Row(THIS_RUN, 9.0, "run", "n1", "os.shm", "fail", None)], now=9.0, since=0.0) is None
    True
    """
    if not earlier:
        return None
    data = summarize([*earlier, *current], now, since, k)
    for host in data["hosts"]:
        del host["timeline"]
    return {**data, "window_days": round((now - since) / 86400.0, 3)}
