"""HTML report: one self-contained file (inline CSS and SVG, no script, no external resource).

Summary, the hosts x checks matrix (identical rows folded, worst first), the all_reduce busbw hosts x
hosts heatmap (slow pairs red), every problem with observed / expected / remedy, and the hosts' history when
the report has one (``extra["history"]``, docs/history.md). Every value from the report is escaped: node output
is untrusted.

>>> from preflight.model import Finding, HostResult, Report, Status
>>> r = Report([HostResult("n1", "n1", True)], [Finding("os.shm", "n1", Status.FAIL, "<b>x</b>")], ["os"], "", 0.0)
>>> page = render(r.redacted())
>>> "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page
True
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from preflight.delivery import write_atomic
from preflight.model import RedactedReport, Report, Status
from preflight.render import summary

COLOUR = {Status.PASS: "#2ca02c", Status.WARN: "#f0b400", Status.FAIL: "#d62728", Status.ERROR: "#9c27b0",
          Status.SKIP: "#c8c8c8"}
SLOW = "#d62728"  # failing busbw cells
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em; color: #222; background: #fff; }
h1 { font-size: 1.4em; margin: 0 0 .3em 0; } h2 { font-size: 1.15em; margin: 1.4em 0 .5em 0; }
.verdict { display: inline-block; padding: .1em .6em; border-radius: .3em; color: #fff; font-weight: bold; }
table { border-collapse: collapse; font-size: .9em; }
th, td { border: 1px solid #ddd; padding: .25em .6em; text-align: center; }
th { background: #f4f4f4; } td.hosts { text-align: left; font-family: monospace; }
td.st { color: #fff; font-weight: bold; min-width: 3.5em; }
.counts span { margin-right: 1.2em; }
.problem { border-left: .4em solid #ccc; padding: .3em .8em; margin: .6em 0; background: #fafafa; }
.problem .head { font-weight: bold; } .problem .msg { margin: .3em 0; white-space: pre-wrap; }
.problem dl { margin: .2em 0; display: grid; grid-template-columns: 6em auto; gap: .15em .5em; }
.problem dt { color: #666; } .problem dd { margin: 0; font-family: monospace; white-space: pre-wrap; }
.problem pre { margin: 0; white-space: pre-wrap; word-break: break-all; background: #eef; padding: .2em .4em; }
.legend span { display: inline-block; width: 1em; height: 1em; vertical-align: middle; margin: 0 .3em 0 1em; }
.muted { color: #777; } td.left { text-align: left; }
.lemon { display: inline-block; width: 10em; height: .8em; background: #eee; vertical-align: middle; margin: 0 .5em; }
.lemon span { display: block; height: 100%; }
"""


def _e(value: object) -> str:
    """Escape for HTML text and attribute values; control characters from node output are dropped."""
    return html.escape(_CONTROL.sub("", str(value)), quote=True)


def render(report: RedactedReport) -> str:
    """The whole page as a string (redacted)."""
    verdict = report.verdict()
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "img-src data:\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>preflight {_e(verdict.word)}: {summary.hosts_text(len(report.hosts))}</title>",
        f"<style>{CSS}</style></head><body>",
        _summary(report), _matrix(report), _heatmap(report), _problems(report), history_section(report),
        f'<p class="muted">preflight {_e(report.tool_version)} &middot; started {_e(report.started)}</p>',
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def write(report: RedactedReport, directory: Path) -> Path:
    """Write ``directory/report.html`` atomically; the path."""
    directory.mkdir(parents=True, exist_ok=True)
    return write_atomic(directory / "report.html", render(report))


def _summary(report: Report) -> str:
    verdict = report.verdict()
    counts = "".join(f'<span><b style="color:{COLOUR[Status(k)]}">{_e(k)}</b> {v}</span>'
                     for k, v in report.summary().items())
    unreachable = [h.name for h in report.hosts if not h.reachable]
    out = [f'<h1>preflight: <span class="verdict" id="verdict" style="background:{COLOUR[verdict.status]}">'
           f"{_e(verdict.word)}</span></h1>",
           f"<p>{summary.hosts_text(len(report.hosts))} &middot; "
           f"checks: {_e(', '.join(report.checks) or '-')} &middot; "
           f"{report.duration_s:.2f} s</p>",
           f'<p class="counts">{counts}</p>']
    if not report.complete:
        out.append('<p><b style="color:#d62728">INCOMPLETE: the run was interrupted</b></p>')
    if unreachable:
        out.append(f"<p>unreachable: {_e(summary.fold(unreachable))}</p>")
    return "\n".join(out)


def _matrix(report: Report) -> str:
    """The hosts x check-families table, identical rows folded, worst first; the families that did not apply
    (all skips) left out and named under it, as in the terminal."""
    idle = summary.idle_families(report)
    columns = [c for c in summary.families(report) if c not in idle]
    cells: dict[str, dict[str, Status]] = defaultdict(dict)
    for f in report.findings:
        if f.host is None:
            continue
        family = f.check.split(".", 1)[0]
        current = cells[f.host].get(family)
        cells[f.host][family] = Status.worst([f.status] + ([current] if current else []))
    rows: dict[tuple[Status | None, ...], list[str]] = defaultdict(list)
    for host in report.hosts:
        rows[tuple(cells[host.name].get(c) for c in columns)].append(host.name)
    ranked = sorted(rows.items(), key=lambda kv: (-max((s.rank for s in kv[0] if s), default=0), kv[1][0]))
    out = ['<h2>Hosts x checks</h2>', '<table id="matrix"><tr><th>hosts</th>'
           + "".join(f"<th>{_e(c)}</th>" for c in columns) + "</tr>"]
    for statuses, names in ranked:
        label = summary.fold(names) + (f" ({len(names)})" if len(names) > 1 else "")
        tds = "".join(f'<td class="st" style="background:{COLOUR[s]}">{_e(summary.MARK[s])}</td>' if s
                      else "<td></td>" for s in statuses)
        out.append(f'<tr><td class="hosts">{_e(label)}</td>{tds}</tr>')
    out.append("</table>")
    if note := summary.idle_note(report):
        out.append(f'<p class="muted">{_e(note)}</p>')
    return "\n".join(out)


def _green(value: float, top: float) -> str:
    """Lighter green for slower passing pairs, full green for the fastest."""
    share = max(0.0, min(1.0, value / top)) if top > 0 else 1.0
    mix = 0.55 * (1 - share)  # 0 = #2ca02c, up to 55% towards white
    r, g, b = (int(c + (255 - c) * mix) for c in (0x2C, 0xA0, 0x2C))
    return f"#{r:02x}{g:02x}{b:02x}"


HEATMAP_MAX_HOSTS = 96  # beyond, the heatmap shows the hosts in slow pairs first, then the rest up to the cap


def heatmap_hosts(order: list[str], pairs: dict[frozenset[str], tuple[float, Status]]) -> list[str]:
    """The hosts the heatmap draws: all up to ``HEATMAP_MAX_HOSTS``, else those in slow pairs, then the others
    in order, up to the cap (each drawn cell is one SVG element: the page stays bounded at any cluster size).

    >>> ok, slow = (1.0, Status.PASS), (0.1, Status.FAIL)
    >>> names = [f"n{i}" for i in range(200)]
    >>> drawn = heatmap_hosts(names, {frozenset(("n150", "n151")): slow, frozenset(("n0", "n1")): ok})
    >>> len(drawn), drawn[:3]
    (96, ['n0', 'n1', 'n2'])
    >>> "n150" in drawn and "n151" in drawn
    True
    """
    if len(order) <= HEATMAP_MAX_HOSTS:
        return order
    slow = {h for key, (_, status) in pairs.items() if status in (Status.FAIL, Status.ERROR) for h in key}
    keep = set(sorted(slow, key=order.index)[:HEATMAP_MAX_HOSTS])
    for host in order:
        if len(keep) >= HEATMAP_MAX_HOSTS:
            break
        keep.add(host)
    return [h for h in order if h in keep]


def _heatmap(report: Report) -> str:
    pairs = summary.busbw_pairs(report)
    if not pairs:
        return ""
    present = {h for key in pairs for h in key}
    every = [h.name for h in report.hosts if h.name in present] + sorted(present - {h.name for h in report.hosts})
    order = heatmap_hosts(every, pairs)
    index = {h: i for i, h in enumerate(order)}
    n = len(order)
    cell = 46 if n <= 12 else 22 if n <= 40 else 10
    label = min(220, 12 + 7 * max(len(h) for h in order))
    size = label + n * cell
    top = max(v for v, _ in pairs.values())
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" id="heatmap" width="{size + 10}" height="{size + 10}" '
           f'viewBox="0 0 {size + 10} {size + 10}" font-family="monospace" font-size="12">',
           f'<rect x="{label}" y="{label}" width="{n * cell}" height="{n * cell}" fill="#eeeeee"/>']  # not measured
    for i, host in enumerate(order):
        y = label + i * cell + cell / 2 + 4
        svg.append(f'<text x="{label - 6}" y="{y:.0f}" text-anchor="end">{_e(host)}</text>')
        x = label + i * cell + cell / 2
        svg.append(f'<text transform="translate({x:.0f},{label - 6}) rotate(-60)">{_e(host)}</text>')
    for key, (busbw, status) in pairs.items():  # only measured pairs: O(pairs), not O(hosts^2)
        ends = sorted(key, key=lambda h: index.get(h, -1))
        if len(ends) != 2 or any(h not in index for h in ends):
            continue
        for host, other in (ends, ends[::-1]):
            i, j = index[host], index[other]
            x, y = label + j * cell, label + i * cell
            slow = status in (Status.FAIL, Status.ERROR)
            fill = SLOW if slow else _green(busbw, top)
            svg.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{fill}" stroke="#fff" '
                       f'class="{"slow" if slow else "ok"}" data-host="{_e(host)}" data-peer="{_e(other)}" '
                       f'data-busbw="{busbw:g}"><title>{_e(host)} &lt;-&gt; {_e(other)}: {busbw:.3g} GB/s '
                       f"({_e(status.value)})</title></rect>")
            if cell >= 40:
                svg.append(f'<text x="{x + cell / 2:.0f}" y="{y + cell / 2 + 4:.0f}" text-anchor="middle" '
                           f'fill="#fff" font-size="11">{busbw:.3g}</text>')
    svg.append("</svg>")
    if len(order) < len(every):
        svg.append(f'<p class="legend">{len(order)} of {len(every)} hosts drawn: those in slow pairs first '
                   f"(every pair is in report.json)</p>")
    slowest = sorted(pairs.items(), key=lambda kv: (kv[1][0], sorted(kv[0])))[:10]
    rows = "".join(f"<tr><td class=\"hosts\">{_e(' <-> '.join(sorted(k)))}</td><td>{v:.3g}</td>"
                   f'<td class="st" style="background:{COLOUR[s]}">{_e(s.value)}</td></tr>'
                   for k, (v, s) in slowest)
    legend = (f'<p class="legend">busbw GB/s, device 0 of each host pair:<span style="background:{SLOW}"></span>'
              f'slow (fail)<span style="background:{_green(top, top)}"></span>fastest'
              f'<span style="background:{_green(0, top)}"></span>slower, within limits</p>')
    return "\n".join(["<h2>all_reduce busbw (GB/s)</h2>", legend, "".join(svg),
                      f"<h3>{len(slowest)} slowest of {len(pairs)} host pairs</h3>",
                      f'<table id="slowest"><tr><th>pair</th><th>busbw GB/s</th><th>status</th></tr>{rows}</table>'])


def _problems(report: Report) -> str:
    found = summary.problems(report)
    if not found:
        return '<h2>Problems</h2><p id="problems" style="color:#2ca02c">No problems found.</p>'
    out = [f'<h2>Problems ({len(found)})</h2>', '<div id="problems">']
    for f, hosts in found:
        where = summary.fold(hosts) if hosts else "(cluster)"
        out.append(f'<div class="problem" style="border-left-color:{COLOUR[f.status]}">'
                   f'<div class="head"><span style="color:{COLOUR[f.status]}">[{_e(f.status.value)}]</span> '
                   f"{_e(f.check)} <span class=\"muted\">{_e(where)}</span></div>"
                   f'<div class="msg">{_e(f.message)}</div><dl>')
        if f.observed is not None or f.expected is not None:
            out.append(f"<dt>observed</dt><dd>{_e(f.observed or '-')}</dd>"
                       f"<dt>expected</dt><dd>{_e(f.expected or '-')}</dd>")
        if f.remedy:
            out.append(f"<dt>remedy</dt><dd><pre>{_e(f.remedy)}</pre></dd>")
        out.append("</dl></div>")
    out.append("</div>")
    return "\n".join(out)


def status_cell(status: str) -> str:
    """A status cell, coloured as in the matrix (an unknown word: grey).

    >>> status_cell("<b>")
    '<td class="st" style="background:#888">&lt;b&gt;</td>'
    """
    colour = COLOUR[Status(status)] if status in {s.value for s in Status} else "#888"
    return f'<td class="st" style="background:{colour}">{_e(status)}</td>'


def lemon_bar(score: float) -> str:
    """A lemon score (0 to 1) as a bar: green below 0.2, amber below 0.5, red from 0.5."""
    colour = COLOUR[Status.PASS] if score < 0.2 else COLOUR[Status.WARN] if score < 0.5 else COLOUR[Status.FAIL]
    width = max(0.0, min(1.0, score)) * 100
    return f'<span class="lemon"><span style="width:{width:.0f}%;background:{colour}"></span></span>'


def _policy(drain: Mapping[str, Any]) -> str:
    """The drain policy in force (``--drain-after``) and what it decided, one line; empty without one."""
    if not drain.get("drain_after"):
        return ""
    parts = [f"drain policy in force: <b>--drain-after {_e(drain['drain_after'])}</b>"]
    for key, label in (("recommend_drain", "recommended for drain"), ("hard", "drained at once (hard fault)"),
                       ("held", "held back")):
        if drain.get(key):
            parts.append(f"{label}: {_e(summary.fold([str(h) for h in drain[key]]))}")
    return f'<p id="drain-policy">{" &middot; ".join(parts)}</p>'


def _events(report: Report) -> list[str]:
    """The events compared with each host's previous run (Xids, link downs): what is new since the last run."""
    rows = []
    for f in report.findings:
        if f.host is None or f.previous_run is None or not f.events:
            continue
        new = [f"{e.key} +{e.new} ({e.count} in all)" for e in f.events if e.new]
        what = "new: " + "; ".join(new) if new else "nothing new: " + "; ".join(f"{e.key} x{e.count}" for e in f.events)
        rows.append(f'<tr><td class="hosts">{_e(f.host)}</td><td class="left">{_e(f.check)}</td>'
                    f'{status_cell(f.status.value)}<td>{_e(f.previous_run)}</td><td class="left">{_e(what)}</td></tr>')
    if not rows:
        return []
    return ['<h3>Since the last run</h3><table id="history-events"><tr><th>host</th><th>finding</th><th>status</th>'
            "<th>previous run</th><th>events</th></tr>", *rows, "</table>"]


def history_section(report: Report) -> str:
    """The hosts' history (``extra["history"]``, made by the application from the history store): per host its
    lemon score (N of M runs failed), the findings that flap with their statuses, the drain policy in force, and
    the events new since the last run; empty without history (``--no-history``, no earlier runs, a broken store).

    >>> h = {"store": "h.sqlite", "runs": 3, "window_days": 7, "flap_changes": 2, "half_life_days": 7.0,
    ...      "hosts": [{"host": "n<1>", "lemon": {"score": 0.7, "runs": 3, "failed_runs": 2},
    ...                 "flapping": [{"finding": "os.shm", "changes": 2, "statuses": ["fail", "pass", "fail"]}]}]}
    >>> page = history_section(Report([], [], [], "", 0.0, extra={"history": h}))
    >>> "2 of 3" in page and "n&lt;1&gt;" in page and "<1>" not in page, history_section(Report([], [], [], "", 0.0))
    (True, '')
    """
    data = report.extra.get("history")
    if not isinstance(data, Mapping) or not data.get("hosts"):
        return ""
    hosts = [h for h in data["hosts"] if isinstance(h, Mapping)]
    notable = [h for h in hosts if h["lemon"]["failed_runs"] or h["flapping"]]
    out = ['<h2 id="history">History</h2>',
           f'<p class="muted">{_e(data.get("store", ""))}: {int(data["runs"])} runs of these hosts in the last '
           f'{float(data.get("window_days", 7)):g} days, this one included; flapping: {int(data["flap_changes"])}+ '
           f'status changes; lemon score: the share of runs failed, half-life {float(data["half_life_days"]):g} d '
           "(every entry: <code>preflight history HOST --since 7d</code>)</p>",
           _policy(report.extra.get("drain", {}))]
    if notable:
        out.append('<table id="history-hosts"><tr><th>host</th><th>lemon score</th><th>runs failed</th>'
                   "<th>flapping</th></tr>")
        for host in notable:
            lemon = host["lemon"]
            out.append(f'<tr><td class="hosts">{_e(host["host"])}</td>'
                       f'<td>{float(lemon["score"]):.2f}{lemon_bar(float(lemon["score"]))}</td>'
                       f'<td>{int(lemon["failed_runs"])} of {int(lemon["runs"])}</td>'
                       f'<td class="left">{_e(", ".join(str(f["finding"]) for f in host["flapping"]))}</td></tr>')
        out.append("</table>")
    quiet = [str(h["host"]) for h in hosts if h not in notable]
    if quiet:
        out.append(f'<p class="muted">no fail in these runs, nothing flapping: {_e(summary.fold(quiet))}</p>')
    flaps = [(host["host"], flap) for host in notable for flap in host["flapping"]]
    if flaps:
        out.append('<h3>Flapping</h3><table id="history-flapping"><tr><th>host</th><th>finding</th><th>changes</th>'
                   '<th colspan="99">status per run, oldest first (this run last)</th></tr>')
        out.extend(f'<tr><td class="hosts">{_e(host)}</td><td class="left">{_e(flap["finding"])}</td>'
                   f'<td>{int(flap["changes"])}</td>{"".join(status_cell(str(s)) for s in flap["statuses"])}</tr>'
                   for host, flap in flaps)
        out.append("</table>")
    out.extend(_events(report))
    return "\n".join(p for p in out if p)
