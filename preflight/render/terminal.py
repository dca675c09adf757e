"""Terminal report: verdict, a hosts x check-families matrix (identical rows folded), an all_reduce busbw
hosts x hosts matrix (when the report has pair figures), then problems.

Reads only the report model. Rows with identical results are folded into one ClusterShell range
(``node[01-63]``) and the worst rows come first, so 200 hosts still fit an 80-column terminal.
"""

from __future__ import annotations

import textwrap
from collections import defaultdict

from rich.console import Console
from rich.table import Table
from rich.text import Text

from preflight.model import RedactedReport, Report, Status
from preflight.render.summary import (
    MARK,
    STYLE,
    busbw_pairs,
    checks_text,
    families,
    fold,
    hosts_text,
    idle_families,
    idle_note,
    problems,
)

__all__ = ["MARK", "STYLE", "busbw_pairs", "families", "fold", "hosts_text", "matrices", "matrix", "problems",
           "render"]


def matrix(report: Report) -> Table:
    """The hosts x check-families table in one piece (see ``matrices`` for a width limit)."""
    return matrices(report)[0]


def matrices(report: Report, width: int | None = None) -> list[Table]:
    """The hosts x check-families matrix, split into several tables (each with the hosts column) when all
    families side by side would be wider than ``width``; identical rows folded, worst rows first. Families
    whose every finding is a skip (gpu and nccl on an npu cluster) are left out (``render`` names them)."""
    idle = idle_families(report)
    columns = [family for family in families(report) if family not in idle]
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


def render(report: RedactedReport, console: Console) -> None:
    verdict = report.verdict()
    counts = report.summary()
    head = Text()
    head.append(f"preflight {report.tool_version}: {hosts_text(len(report.hosts))}, {checks_text(report.checks)} "
                f"in {report.duration_s:.2f} s  ")
    head.append(verdict.word, style=STYLE[verdict.status])
    if not report.complete:
        head.append("  (INCOMPLETE: interrupted)", style="bold yellow")
    console.print(head)
    console.print("  ".join(f"{k} {v}" for k, v in counts.items()))
    cluster = report.extra.get("cluster") or {}
    if cluster.get("accelerator_reason"):
        console.print(Text(f"accelerator {cluster.get('accelerator')}: {cluster['accelerator_reason']}", style="dim"))
    if "paramiko" in cluster.get("ssh_config", ""):  # the fallback that misses Include: say so
        console.print(Text(f"ssh config: {cluster['ssh_config']}", style="yellow"))
    if note := idle_note(report):
        console.print(Text(note, style="dim"))
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
