"""The terminal report of ``preflight diagnose``: verdict, hosts x diagnose ids, problems with their fixes, then
the dry run in brief and the corrected launch line (``extra["diagnose"]``)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from preflight.model import RedactedReport, Status
from preflight.render import json_report, terminal

COLUMNS = ("ssh", "launch", "master_addr", "master_port", "reachability", "hostname", "interface", "devices",
           "rendezvous")
LABELS = ("ssh", "launch", "addr", "port", "reach", "name", "iface", "dev", "rdzv")


def render(report: RedactedReport, console: Console) -> None:
    """Verdict, hosts x diagnose ids, problems with their fixes, then the dry run in brief."""
    summary: Mapping[str, Any] = report.extra.get("diagnose", {})
    verdict = report.verdict()
    head = Text(f"preflight diagnose: {len(report.hosts)} hosts, store at {summary.get('master_addr')}:"
                f"{summary.get('master_port')} (master {summary.get('master')}) in {report.duration_s:.2f} s  ")
    head.append(verdict.word, style=terminal.STYLE[verdict.status])
    if not report.complete:
        head.append("  (INCOMPLETE: interrupted)", style="bold yellow")
    console.print(head)
    console.print(_matrix(report))
    found = terminal.problems(report)
    if found:
        console.print(f"\nProblems ({len(found)}):", style="bold")
    for finding, hosts in found:
        line = Text()
        line.append(f"[{finding.status.value}] ", style=terminal.STYLE[finding.status])
        line.append(f"{finding.check} ", style="bold")
        line.append(terminal.fold(hosts) if hosts else "(cluster)")
        console.print(line)
        console.print(Text("    " + finding.message))
        if finding.observed is not None or finding.expected is not None:
            console.print(Text(f"    observed: {finding.observed or '-'}   expected: {finding.expected or '-'}"))
    console.print()
    joined = summary.get("joined") or []
    missing = summary.get("missing") or []
    if not summary.get("ran"):
        console.print("dry run: not run", style="yellow")
    else:
        names = ", ".join(f"{j['host']} (rank {j['rank']})" for j in joined) or "none"
        style = "green" if not missing else "bold red"
        console.print(Text(f"dry run: {len(joined)}/{summary.get('world_size')} ranks joined: {names}", style=style))
        for miss in missing:
            rank = "no rank" if miss.get("rank") is None else f"rank {miss['rank']}"
            error = f": {miss['error']}" if miss.get("error") else ""
            console.print(Text(f"  {miss['host']} ({rank}) stopped at {miss['stopped_at']}{error}"))
    if summary.get("corrected_launch"):
        console.print(Text(f"corrected launch: {summary['corrected_launch']}", style="cyan"))


def _matrix(report: RedactedReport) -> Table:
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("host", no_wrap=True)
    for label in LABELS:
        table.add_column(label, justify="center", no_wrap=True)
    cells: dict[str, dict[str, Status]] = {}
    for finding in report.findings:
        family, _, name = finding.check.partition(".")
        key = finding.host or "(cluster)"
        if family == "ssh":
            name = "ssh"
        if name in COLUMNS:
            row = cells.setdefault(key, {})
            row[name] = Status.worst([finding.status, *([row[name]] if name in row else [])])
    for host in ["(cluster)", *[h.name for h in report.hosts]]:
        row = cells.get(host, {})
        if not row:
            continue
        table.add_row(host, *[Text(terminal.MARK[row[c]], style=terminal.STYLE[row[c]]) if c in row else Text("")
                              for c in COLUMNS])
    return table


def show(report: RedactedReport, path: Path | None, json_out: bool) -> None:
    """The JSON report on stdout, or the terminal report followed by where report.json is (``path`` None: it
    could not be written, stderr said why)."""
    if json_out:
        sys.stdout.write(json_report.dumps(report))
        return
    console = Console(markup=False, highlight=False)
    render(report, console)
    console.print(f"\nreport: {path or 'not written'}", soft_wrap=True)
