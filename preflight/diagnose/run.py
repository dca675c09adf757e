"""Run ``preflight diagnose``: the launch line -> a plan -> the engine (net, ports, firewall, diagnose) -> the report.

>>> from preflight.inventory import parse_inventory
>>> inv = parse_inventory("hosts:\\n  - name: n1\\n    address: 10.0.0.1\\n  - name: n2\\n    address: 10.0.0.2\\n")
>>> inventory, plan = prepare(inv, ["NCCL_SOCKET_IFNAME=eth0", "torchrun", "--nnodes=2", "--master-addr=10.0.0.2",
...                                 "--master-port=29600", "t.py"], {})
>>> inventory.cluster.master, inventory.cluster.master_port, inventory.hosts[0].env
('n2', 29600, {'NCCL_SOCKET_IFNAME': 'eth0'})
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from preflight.checks.firewall import FirewallCheck
from preflight.checks.net import NetCheck
from preflight.checks.npu import NpuCheck
from preflight.checks.ports import PortsCheck
from preflight.delivery import write_file
from preflight.diagnose.check import DiagnoseCheck, Plan, make_plan
from preflight.diagnose.launch import DEEPSPEED_HOSTFILE, ENV_VARS, Launch, parse_hostfile, parse_launch
from preflight.engine import Engine, RunOptions
from preflight.inventory import Inventory
from preflight.model import RedactedReport, Status
from preflight.render import json_report, terminal

COLUMNS = ("ssh", "launch", "master_addr", "master_port", "reachability", "hostname", "interface", "devices",
           "rendezvous")
LABELS = ("ssh", "launch", "addr", "port", "reach", "name", "iface", "dev", "rdzv")


def read_launch(argv: Sequence[str], environ: Mapping[str, str]) -> Launch:
    """Parse the launch line and, for deepspeed, read its hostfile (a missing one is a launch problem)."""
    launch = parse_launch(argv, environ)
    if launch.launcher == "deepspeed":
        path = launch.options.get("hostfile", DEEPSPEED_HOSTFILE)
        try:
            launch.hostfile_hosts = parse_hostfile(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            if "hostfile" in launch.options:
                why = getattr(exc, "strerror", None) or exc
                launch.problems.append(f"hostfile {path} cannot be read ({why}): deepspeed falls back to this "
                                       "machine alone")
            launch.hostfile_hosts = []
    return launch


def prepare(inventory: Inventory, argv: Sequence[str], environ: Mapping[str, str],
            timeout: float = 10.0) -> tuple[Inventory, Plan]:
    """The inventory as the launch sees it (master, port, the launch's environment on every host) and the plan."""
    launch = read_launch(argv, environ)
    plan = make_plan(launch, inventory.hosts, inventory.cluster, timeout)
    cluster = replace(inventory.cluster, master=plan.master, master_port=plan.port or inventory.cluster.master_port)
    extra = {k: v for k, v in launch.env.items() if k not in ENV_VARS}
    hosts = [replace(h, env={**h.env, **extra}) for h in inventory.hosts]
    return replace(inventory, hosts=hosts, cluster=cluster), plan


def diagnose(inventory: Inventory, plan: Plan, options: RunOptions) -> tuple[RedactedReport, dict[str, Any]]:
    """Gather, run the port test and the dry run, judge; the report (diagnose findings only) and the summary."""
    check = DiagnoseCheck(plan)
    engine = Engine(inventory, [NetCheck(), PortsCheck(), FirewallCheck(), NpuCheck(), check],
                    replace(options, only=("diagnose",)))
    report = engine.report(complete=engine.run_interruptible())
    facts = engine.facts()[0].get(check.ident, {})
    summary = check.summary_of(facts, engine.outcomes.get(check.ident, []))
    combined = check.corrected_launch(facts, engine.outcomes.get(check.ident, []), engine.context(check))
    summary["launch"] = {"launcher": plan.launch.launcher, "argv": plan.launch.argv,
                         "master_addr": plan.master_addr, "master_port": plan.port_text,
                         "nnodes": list(plan.launch.nnodes) if plan.launch.nnodes else None,
                         "nproc_per_node": plan.launch.nproc_per_node, "rdzv_backend": plan.launch.rdzv_backend}
    summary["corrected_launch"] = combined
    if engine.stopped_by is not None:
        summary["interrupted_by"] = signal.Signals(engine.stopped_by).name
    return replace(report, extra={**report.extra, "diagnose": summary}).redacted(), summary


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


def write_and_print(report: RedactedReport, directory: Path, json_out: bool) -> Path | None:
    """report.json in ``directory`` (a directory that cannot be written: one line on stderr, ``delivery``'s exit
    rule, None), then the report on stdout."""
    path = write_file(f"report.json in {directory}", lambda: json_report.write(report, directory))
    if json_out:
        sys.stdout.write(json_report.dumps(report))
    else:
        console = Console(markup=False, highlight=False)
        render(report, console)
        console.print(f"\nreport: {path or 'not written'}", soft_wrap=True)
    return path


def environ() -> dict[str, str]:
    """The caller's environment (MASTER_ADDR, ... in env mode)."""
    return dict(os.environ)
