"""Terminal report: verdict, a hosts x check-families matrix (identical rows folded), an all_reduce busbw
hosts x hosts matrix (when the report has pair figures), then problems.

Reads only the report model. Rows with identical results are folded into one ClusterShell range
(``node[01-63]``) and the worst rows come first, so 200 hosts still fit an 80-column terminal.
"""

from __future__ import annotations

import re
import textwrap
from collections import defaultdict
from dataclasses import replace

from ClusterShell.NodeSet import NodeSet
from rich.console import Console
from rich.table import Table
from rich.text import Text

from preflight.model import Finding, Report, Status
from preflight.redact import for_output

STYLE = {Status.PASS: "green", Status.WARN: "yellow", Status.FAIL: "bold red", Status.ERROR: "bold magenta",
         Status.SKIP: "dim"}
MARK = {Status.PASS: "ok", Status.WARN: "warn", Status.FAIL: "FAIL", Status.ERROR: "ERROR", Status.SKIP: "-"}


def fold(names: list[str]) -> str:
    """Fold host names into ClusterShell ranges.

    >>> fold(["node1", "node2", "node3", "gpu7"])
    'gpu7,node[1-3]'
    """
    try:
        return str(NodeSet.fromlist(names))
    except Exception:
        return ",".join(names)


def hosts_text(count: int) -> str:
    """``1 host``, ``2 hosts``.

    >>> hosts_text(1), hosts_text(0)
    ('1 host', '0 hosts')
    """
    return f"{count} host{'' if count == 1 else 's'}"


def families(report: Report) -> list[str]:
    seen: dict[str, None] = {"ssh": None}
    for ident in report.checks:  # the checks' own order first
        seen.setdefault(ident.split(".", 1)[0], None)
    present = {finding.check.split(".", 1)[0] for finding in report.findings}
    for family in sorted(present):
        seen.setdefault(family, None)
    return [family for family in seen if family in present or family == "ssh"]


def matrix(report: Report) -> Table:
    """The hosts x check-families table in one piece (see ``matrices`` for a width limit)."""
    return matrices(report)[0]


def matrices(report: Report, width: int | None = None) -> list[Table]:
    """The hosts x check-families matrix, split into several tables (each with the hosts column) when all
    families side by side would be wider than ``width``; identical rows folded, worst rows first."""
    columns = families(report)
    cells: dict[str, dict[str, Status]] = defaultdict(dict)
    for finding in report.findings:
        if finding.host is None:
            continue
        family = finding.check.split(".", 1)[0]
        current = cells[finding.host].get(family)
        cells[finding.host][family] = Status.worst([finding.status] + ([current] if current else []))
    rows: dict[tuple[Status | None, ...], list[str]] = defaultdict(list)
    for host in report.hosts:
        rows[tuple(cells[host.name].get(f) for f in columns)].append(host.name)
    ranked = sorted(rows.items(), key=lambda kv: (-max((s.rank for s in kv[0] if s), default=0), kv[1][0]))
    # Keep at least a whole host name readable; other columns need max(header, "ERROR") plus " │ ".
    longest = max((len(name) for names in rows.values() for name in names), default=5)
    hosts_width = min(longest, 24)
    groups: list[list[int]] = [[]]
    used = hosts_width
    for index, column in enumerate(columns):
        need = max(len(column), 5) + 3
        if width is not None and groups[-1] and used + need > width:
            groups.append([])
            used = hosts_width
        groups[-1].append(index)
        used += need
    tables = []
    for number, group in enumerate(groups, 1):
        title = "hosts x checks" + (f" ({number}/{len(groups)})" if len(groups) > 1 else "")
        table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
        table.add_column("hosts", overflow="fold", min_width=hosts_width)
        for index in group:
            table.add_column(columns[index], justify="center", overflow="fold")
        for statuses, names in ranked:
            label = fold(names) + (f" ({len(names)})" if len(names) > 1 else "")
            table.add_row(label, *[Text(MARK[s], style=STYLE[s]) if s else Text("")
                                   for s in (statuses[i] for i in group)])
        tables.append(table)
    return tables


def busbw_pairs(report: Report) -> dict[frozenset[str], tuple[float, Status]]:
    """Inter-host device-0 all_reduce pairs of the report: {host, peer} -> (lowest busbw, worst status);
    a pair that fell below the baseline (``baseline.busbw``) counts as failing too.

    >>> f = Finding("allreduce.pair", "a", Status.PASS, "m", peer="b", device=0, peer_device=0, busbw_gbps=2.5)
    >>> busbw_pairs(Report([], [f], [], "", 0.0))[frozenset(("a", "b"))]
    (2.5, <Status.PASS: 'pass'>)
    """
    pairs: dict[frozenset[str], tuple[float, Status]] = {}
    for f in report.findings:
        if (not f.check.startswith(("allreduce.", "baseline.busbw")) or f.busbw_gbps is None or f.host is None
                or f.peer is None or f.host == f.peer or f.device != f.peer_device or f.device not in (0, None)):
            continue
        key = frozenset((f.host, f.peer))
        old = pairs.get(key)
        pairs[key] = (f.busbw_gbps, f.status) if old is None else \
            (min(old[0], f.busbw_gbps), Status.worst([old[1], f.status]))
    return pairs


def busbw_matrix(report: Report, console: Console) -> Table | list[Text] | None:
    """The hosts x hosts busbw table; the 10 slowest pairs as lines when the table is wider than the console;
    None when the report has no pair figures."""
    pairs = busbw_pairs(report)
    if not pairs:
        return None
    present = {h for key in pairs for h in key}
    order = [h.name for h in report.hosts if h.name in present]
    order += sorted(present - set(order))
    table = Table(title="all_reduce busbw (GB/s)", title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("hosts")
    for host in order:
        table.add_column(host, justify="right")
    for host in order:
        cells = []
        for other in order:
            found = pairs.get(frozenset((host, other))) if other != host else None
            cells.append(Text("-", style="dim") if found is None else Text(f"{found[0]:.3g}", style=_bad(found[1])))
        table.add_row(host, *cells)
    if console.measure(table, options=console.options.update_width(1 << 20)).maximum <= console.width:
        return table
    slowest = sorted(pairs.items(), key=lambda kv: (kv[1][0], sorted(kv[0])))[:10]
    lines = [Text(f"all_reduce busbw (GB/s): {len(slowest)} slowest of {len(pairs)} host pairs", style="italic")]
    for key, (busbw, status) in slowest:
        a, b = sorted(key, key=lambda h: (order.index(h), h))
        failing = status in (Status.FAIL, Status.ERROR)
        lines.append(Text(f"{a} - {b}  busbw {busbw:.3g} GB/s ({'fail' if failing else 'ok'})", style=_bad(status)))
    return lines


def _bad(status: Status) -> str:
    return "bold red" if status in (Status.FAIL, Status.ERROR) else "green"


def problems(report: Report) -> list[tuple[Finding, list[str]]]:
    """Non-passing findings grouped by what they say, worst first: (example finding, hosts). Findings of one
    cause on several devices (the same text but for the device number and its addresses) are one problem
    whose message names the devices (report.json keeps each finding)."""
    groups: dict[tuple[object, ...], list[Finding]] = defaultdict(list)
    for finding in report.findings:
        if finding.status in (Status.WARN, Status.FAIL, Status.ERROR):
            key = (finding.check, finding.status, finding.observed, finding.expected, finding.remedy,
                   finding.message if finding.host is None else None)
            groups[key].append(finding)
    folded: dict[tuple[object, ...], list[list[Finding]]] = defaultdict(list)
    for members in groups.values():
        first = members[0]
        cause: tuple[object, ...] = (id(members),)
        if all(f.device is not None for f in members):
            cause = (first.check, first.status, tuple(sorted({f.host or "" for f in members})),
                     *(_masked(t) for t in (first.message, first.observed, first.expected, first.remedy)))
        folded[cause].append(members)
    found = []
    for parts in folded.values():
        members = [f for part in parts for f in part]
        example = members[0]
        devices = sorted({f.device for f in members if f.device is not None})
        if len(parts) > 1 and len(devices) > 1:
            example = replace(example, message=f"{example.message} (the same on devices {int_ranges(devices)}; "
                                               f"shown for device {example.device})")
        found.append((example, [f.host for f in members if f.host]))
    found.sort(key=lambda item: (-item[0].status.rank, item[0].check))
    return found


_DEVICE_NUMBER = re.compile(r"(?<![\w-])(device|-i|NPU|GPU)( ?)(\d+)\b")
_ADDRESS = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b|\b[0-9a-f]*:[0-9a-f:]+:[0-9a-f]+\b")


def _masked(text: str | None) -> str:
    """``text`` without its device numbers and addresses: what findings of one cause on several devices share.

    >>> _masked("device 3 (10.0.0.3): hccn_tool -i 3 -ping -g address 10.0.1.3")
    'device # (IP): hccn_tool -i # -ping -g address IP'
    """
    return _ADDRESS.sub("IP", _DEVICE_NUMBER.sub(lambda m: f"{m[1]}{m[2]}#", text or ""))


def int_ranges(numbers: list[int]) -> str:
    """``[0, 1, 2, 3, 5]`` -> ``0-3,5``.

    >>> int_ranges([0, 1, 2, 3, 5]), int_ranges([7])
    ('0-3,5', '7')
    """
    spans: list[list[int]] = []
    for n in sorted(set(numbers)):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ",".join(f"{a}-{b}" if a != b else f"{a}" for a, b in spans)


def render(report: Report, console: Console) -> None:
    report = for_output(report)
    verdict = report.verdict()
    counts = report.summary()
    head = Text()
    head.append(f"preflight {report.tool_version}: {hosts_text(len(report.hosts))}, {', '.join(report.checks)} "
                f"in {report.duration_s:.2f} s  ")
    head.append(verdict.value.upper(), style=STYLE[verdict])
    if not report.complete:
        head.append("  (INCOMPLETE: interrupted)", style="bold yellow")
    console.print(head)
    console.print("  ".join(f"{k} {v}" for k, v in counts.items()))
    cluster = report.extra.get("cluster") or {}
    if cluster.get("accelerator_reason"):
        console.print(Text(f"accelerator {cluster.get('accelerator')}: {cluster['accelerator_reason']}", style="dim"))
    if "paramiko" in cluster.get("ssh_config", ""):  # the fallback that misses Include: say so
        console.print(Text(f"ssh config: {cluster['ssh_config']}", style="yellow"))
    console.print()
    for number, table in enumerate(matrices(report, console.width)):
        if number:
            console.print()
        console.print(table)
    pair_view = busbw_matrix(report, console)
    if isinstance(pair_view, Table):
        console.print()
        console.print(pair_view)
    elif pair_view:
        console.print()
        for line in pair_view:
            console.print(line)
    found = problems(report)
    if not found:
        console.print("\nNo problems found.", style="green")
        return
    console.print(f"\nProblems ({len(found)}):", style="bold")
    for finding, hosts in found:
        line = Text()
        line.append(f"[{finding.status.value}] ", style=STYLE[finding.status])
        line.append(f"{finding.check} ", style="bold")
        line.append(fold(hosts) if hosts else "(cluster)")
        console.print(line)
        _detail(console, finding.message)
        if finding.observed is not None or finding.expected is not None:
            _detail(console, f"observed: {finding.observed or '-'}   expected: {finding.expected or '-'}")
        if finding.remedy:
            _detail(console, f"remedy:   {finding.remedy}", "cyan", wrap=False)


def _detail(console: Console, text: str, style: str = "", wrap: bool = True) -> None:
    """Print a detail line indented by four spaces, wrapped lines included, without trailing blanks.
    ``wrap=False`` for commands to paste (remedies): printed whole on one line, never broken inside a quote."""
    if not wrap:
        console.print(Text("    " + text, style=style), soft_wrap=True)
        return
    width = max(40, console.width - 4)
    wrapped = textwrap.fill(text, width=width, initial_indent="    ", subsequent_indent="    ",
                            break_on_hyphens=False, break_long_words=True)  # never wider than the console
    console.print(Text(wrapped, style=style), soft_wrap=True)
