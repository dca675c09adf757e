"""``preflight history --html FILE``: the history summary (``preflight.history.view.summarize``'s document) as one
self-contained page, in the run report's style (inline CSS, no script, no external resource).

Per host, the worst lemon score first: its lemon score (a bar), the findings that flap with their statuses run by
run, and the timeline of its non-pass findings (every entry, not the terminal's last 10). Every value is escaped:
the observed values are node output (stored redacted).

>>> data = {"store": "h.sqlite", "since": None, "flap_changes": 3, "half_life_days": 7.0, "runs": 2, "hosts": [
...     {"host": "n<2>", "lemon": {"score": 0.5, "runs": 2, "failed_runs": 1},
...      "flapping": [], "timeline": [{"time": "2026-11-27T06:10:01Z", "run_id": "r1", "command": "node",
...                                    "finding": "sysctl.somaxconn", "status": "fail", "observed": "<64>"}]}]}
>>> page = render(data)
>>> "n&lt;2&gt;" in page and "&lt;64&gt;" in page and "<64>" not in page
True
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from preflight.delivery import write_atomic
from preflight.render.html import CSS, _e, lemon_bar, status_cell

EXTRA_CSS = """
td.left { text-align: left; } td.mono { font-family: monospace; text-align: left; white-space: pre-wrap; }
"""
_status, _lemon = status_cell, lemon_bar  # shared with the run report's history section


def _host(host: Mapping[str, Any]) -> list[str]:
    lemon = host["lemon"]
    out = [f'<h2 id="host-{_e(host["host"])}">{_e(host["host"])}</h2>',
           f'<p>lemon score <b>{float(lemon["score"]):.2f}</b>{_lemon(float(lemon["score"]))}'
           f'{int(lemon["failed_runs"])} of {int(lemon["runs"])} runs failed</p>']
    if host["flapping"]:
        out.append("<h3>Flapping</h3><table><tr><th>finding</th><th>changes</th><th colspan=\"99\">status per run, "
                   "oldest first</th></tr>")
        for flap in host["flapping"]:
            cells = "".join(_status(str(s)) for s in flap["statuses"])
            out.append(f'<tr><td class="left">{_e(flap["finding"])}</td><td>{int(flap["changes"])}</td>{cells}</tr>')
        out.append("</table>")
    if host["timeline"]:
        out.append("<h3>Timeline</h3><table><tr><th>time (UTC)</th><th>command</th><th>status</th><th>finding</th>"
                   "<th>observed</th></tr>")
        for entry in host["timeline"]:
            observed = "" if entry.get("observed") is None else entry["observed"]
            out.append(f'<tr><td class="mono">{_e(entry["time"])}</td><td>{_e(entry["command"])}</td>'
                       f'{_status(str(entry["status"]))}<td class="left">{_e(entry["finding"])}</td>'
                       f'<td class="mono">{_e(observed)}</td></tr>')
        out.append("</table>")
    else:
        out.append('<p class="muted">no warn, fail or error recorded</p>')
    return out


def render(data: Mapping[str, Any]) -> str:
    """The whole page as a string."""
    since = f" since {data['since']}" if data.get("since") else ""
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        f"<title>preflight history: {len(data['hosts'])} hosts</title>",
        f"<style>{CSS}{EXTRA_CSS}</style></head><body>",
        "<h1>preflight history</h1>",
        f'<p class="muted">{_e(data.get("store", ""))}: {int(data["runs"])} runs{_e(since)}; flapping: '
        f'{int(data["flap_changes"])}+ status changes; lemon score half-life {float(data["half_life_days"]):g} d</p>',
    ]
    if data["hosts"]:
        parts.append("<table><tr><th>host</th><th>lemon score</th><th>runs failed</th><th>flapping</th></tr>")
        for host in data["hosts"]:
            lemon = host["lemon"]
            flaps = ", ".join(str(f["finding"]) for f in host["flapping"])
            parts.append(f'<tr><td class="hosts"><a href="#host-{_e(host["host"])}">{_e(host["host"])}</a></td>'
                         f'<td>{float(lemon["score"]):.2f}{_lemon(float(lemon["score"]))}</td>'
                         f'<td>{int(lemon["failed_runs"])} of {int(lemon["runs"])}</td>'
                         f'<td class="left">{_e(flaps)}</td></tr>')
        parts.append("</table>")
        for host in data["hosts"]:
            parts.extend(_host(host))
    else:
        parts.append('<p class="muted">no runs recorded</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write(data: Mapping[str, Any], path: Path) -> Path:
    """Write the page to ``path`` atomically; the path."""
    return write_atomic(path, render(data))
