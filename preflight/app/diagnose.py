"""``preflight diagnose``: one launch line -> a plan -> the engine (the registry's net, ports, firewall and npu
checks, whose facts the diagnose check reads, and the diagnose check itself) -> the report, diagnose's findings
and its summary (the dry run in brief, the corrected launch line).

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from preflight.app.cluster import load_cluster
from preflight.checks import all_checks
from preflight.delivery import write_file
from preflight.diagnose.check import DiagnoseCheck, Plan, make_plan
from preflight.diagnose.launch import DEEPSPEED_HOSTFILE, ENV_VARS, Launch, parse_hostfile, parse_launch
from preflight.engine import Engine, RunOptions
from preflight.inventory import Inventory
from preflight.model import RedactedReport
from preflight.render import json_report


@dataclass(frozen=True)
class DiagnoseRequest:
    """One ``preflight diagnose``: the hosts, the launch line (empty: MASTER_ADDR... from ``environ``), how long."""

    hosts: Path | None = None
    launch: Sequence[str] = ()
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    timeout: float = 10.0  # the dry run's store and process group timeouts
    options: RunOptions = field(default_factory=RunOptions)


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


def diagnose(request: DiagnoseRequest) -> RedactedReport:
    """Gather, run the port test and the dry run, judge: the report of the diagnose findings, its summary under
    ``extra["diagnose"]`` (``interrupted_by`` when a signal cut it short); UsageError before anything runs."""
    inventory, plan = prepare(load_cluster(request.hosts), request.launch, request.environ, request.timeout)
    check = DiagnoseCheck(plan)
    registry = {c.ident: c for c in all_checks()}
    engine = Engine(inventory, [*(registry[ident] for ident in check.needs), check],
                    replace(request.options, only=("diagnose",)))
    report = engine.report(complete=engine.run_interruptible())
    facts = engine.facts()[0].get(check.ident, {})
    outcomes = engine.outcomes.get(check.ident, [])
    summary = check.summary_of(facts, outcomes)
    summary["launch"] = {"launcher": plan.launch.launcher, "argv": plan.launch.argv,
                         "master_addr": plan.master_addr, "master_port": plan.port_text,
                         "nnodes": list(plan.launch.nnodes) if plan.launch.nnodes else None,
                         "nproc_per_node": plan.launch.nproc_per_node, "rdzv_backend": plan.launch.rdzv_backend}
    summary["corrected_launch"] = check.corrected_launch(facts, outcomes, engine.context(check))
    if engine.stopped_by is not None:
        summary["interrupted_by"] = signal.Signals(engine.stopped_by).name
    return replace(report, extra={**report.extra, "diagnose": summary}).redacted()


def save(report: RedactedReport, directory: Path | None) -> Path | None:
    """report.json in ``directory`` (default: a new ``reports/<UTC time>/``); a directory that cannot be written
    is one line on stderr and ``delivery``'s exit rule: None."""
    where = directory or json_report.new_report_dir()
    return write_file(f"report.json in {where}", lambda: json_report.write(report, where))
