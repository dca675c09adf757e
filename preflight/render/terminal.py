"""Terminal report: verdict, a hosts x check-families matrix (identical rows folded), then problems.

Reads only the report model. Rows with identical results are folded into one ClusterShell range
(``node[01-63]``) and the worst rows come first, so 200 hosts still fit an 80-column terminal.
"""

from __future__ import annotations

import textwrap
from collections import defaultdict

from ClusterShell.NodeSet import NodeSet
from rich.console import Console
from rich.table import Table
from rich.text import Text

from preflight.model import Finding, Report, Status

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


def families(report: Report) -> list[str]:
    seen: dict[str, None] = {"ssh": None}
    for ident in report.checks:  # the checks' own order first
        seen.setdefault(ident.split(".", 1)[0], None)
    present = {finding.check.split(".", 1)[0] for finding in report.findings}
    for family in sorted(present):
        seen.setdefault(family, None)
    return [family for family in seen if family in present or family == "ssh"]


def matrix(report: Report) -> Table:
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
    table = Table(title="hosts x checks", title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("hosts", overflow="fold")
    for column in columns:
        table.add_column(column, justify="center")
    ranked = sorted(rows.items(), key=lambda kv: (-max((s.rank for s in kv[0] if s), default=0), kv[1][0]))
    for statuses, names in ranked:
        label = fold(names) + (f" ({len(names)})" if len(names) > 1 else "")
        table.add_row(label, *[Text(MARK[s], style=STYLE[s]) if s else Text("") for s in statuses])
    return table


def problems(report: Report) -> list[tuple[Finding, list[str]]]:
    """Non-passing findings grouped by what they say, worst first: (example finding, hosts)."""
    groups: dict[tuple[object, ...], list[Finding]] = defaultdict(list)
    for finding in report.findings:
        if finding.status in (Status.WARN, Status.FAIL, Status.ERROR):
            key = (finding.check, finding.status, finding.observed, finding.expected, finding.remedy,
                   finding.message if finding.host is None else None)
            groups[key].append(finding)
    ordered = sorted(groups.values(), key=lambda fs: (-fs[0].status.rank, fs[0].check))
    return [(fs[0], [f.host for f in fs if f.host]) for fs in ordered]


def render(report: Report, console: Console) -> None:
    verdict = report.verdict()
    counts = report.summary()
    head = Text()
    head.append(f"preflight {report.tool_version}: {len(report.hosts)} hosts, {', '.join(report.checks)} "
                f"in {report.duration_s:.2f} s  ")
    head.append(verdict.value.upper(), style=STYLE[verdict])
    if not report.complete:
        head.append("  (INCOMPLETE: interrupted)", style="bold yellow")
    console.print(head)
    console.print("  ".join(f"{k} {v}" for k, v in counts.items()))
    console.print()
    console.print(matrix(report))
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
            _detail(console, f"remedy:   {finding.remedy}", "cyan")


def _detail(console: Console, text: str, style: str = "") -> None:
    """Print a detail line indented by four spaces, wrapped lines included, without trailing blanks."""
    width = max(40, console.width - 4)
    wrapped = textwrap.fill(text, width=width, initial_indent="    ", subsequent_indent="    ",
                            break_on_hyphens=False, break_long_words=False)
    console.print(Text(wrapped, style=style), soft_wrap=True)
