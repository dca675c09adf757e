"""``preflight node``: the checks that need no other host, on this machine, without SSH.

Made for scheduler hooks (Slurm Prolog / HealthCheckProgram, a Kubernetes init container): one line
on stdout, the exit code is the verdict, and ``--timeout`` is a hard wall-clock bound (Slurm kills a
prolog that overruns MessageTimeout, 10 s by default).

Example::

    $ preflight node --timeout 8
    preflight node gpu07: FAIL in 0.42 s (pass 21 warn 1 fail 1 error 0 skip 6): sysctl.somaxconn: ...

``--facts FILE`` instead gathers everything ``run`` would send this host (no verdict) for ``preflight judge``
(``preflight.app.facts``). The verdict itself, ``--set``, the ranks and the time bound are ``preflight.app.node``'s.

Parameters come from ``--set family.key=value`` (repeatable) or the environment variable
``PREFLIGHT_NODE_SET`` (the same items separated by spaces), e.g.
``PREFLIGHT_NODE_SET="sysctl.min_somaxconn=4096"``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, TextIO

import typer

from preflight import exit_codes
from preflight.app import Interpreter, UsageError, node_name
from preflight.app import node as node_app
from preflight.cli_options import (
    DrainAfterOption,
    HistoryOption,
    NoHistoryOption,
    PythonOption,
    SetupOption,
    split_items,
)
from preflight.model import RedactedReport, Status
from preflight.render import json_report

ENV_SET = "PREFLIGHT_NODE_SET"


def verdict_line(report: RedactedReport, host: str) -> str:
    """The one line a prolog log or a drain reason can hold: verdict, counts and the first problem."""
    counts = report.summary()
    verdict = report.verdict()
    word = "OK" if verdict.exit_code == exit_codes.OK else verdict.word
    line = (f"preflight node {host}: {word} in {report.duration_s:.2f} s ("
            + " ".join(f"{k} {v}" for k, v in counts.items()) + ")")
    problems = [f for f in report.findings if f.status in (Status.FAIL, Status.ERROR)]
    problems.sort(key=lambda f: -f.status.rank)  # a fail first: the verdict's kind
    if problems:
        first = " ".join(problems[0].message.split())
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        line += f": {first[:200]}{more}"
    policy = [f.message.split(": ", 1)[-1] for f in report.findings if f.check == "preflight.drain_policy"]
    if policy:  # --drain-after: the policy in force and what it decided, with the verdict
        line += f" [{policy[0]}]"
    return line


def _say(out: TextIO, text: str) -> None:
    out.write(text)
    out.flush()


def write_facts(target: str, timeout: float, hosts: str | None, name: str | None, checks: list[str] | None,
                skip: list[str] | None, accelerator: str, devices_per_host: int | None, master_port: int | None,
                interpreter: Interpreter, run_id: str | None) -> None:
    """``node --facts``: gather as ``run`` would, write the facts file (atomic) or print it; exit 0, 2 or 4."""
    from preflight.app import facts as facts_app  # only --facts writes a facts file (preflight.facts_file)

    request = facts_app.FactsRequest(hosts=Path(hosts) if hosts else None, name=name, checks=split_items(checks),
                                     skip=split_items(skip), accelerator=accelerator, devices_per_host=devices_per_host,
                                     master_port=master_port, timeout=max(1.0, timeout - 0.5),
                                     interpreter=interpreter, run_id=run_id)

    def late() -> None:
        _say(sys.stderr, f"preflight node --facts: not finished within {timeout:g} s; nothing written\n")

    with node_app.Deadline(timeout, late):
        try:
            facts_app.write_facts(request, target)
        except UsageError as exc:
            sys.stderr.write(f"preflight: {exc}\n")
            raise typer.Exit(exit_codes.USAGE) from None
        except (OSError, RuntimeError) as exc:
            sys.stderr.write(f"preflight: cannot write the facts of this node to {target}: {exc}\n")
            raise typer.Exit(exit_codes.COULD_NOT_TELL) from None
    raise typer.Exit(exit_codes.OK)


def _store(path: Path | None, off: bool) -> Path | None:
    from preflight.app import history as history_app

    return history_app.where(path, off)


def record_history(report: RedactedReport, path: Path | None, off: bool, left: float) -> None:
    """The verdict, already printed, appended to the history store within what is left of ``--timeout`` (the
    lock wait bounded by it); a store that cannot take it is a warning, the exit code stays the verdict's."""
    from preflight.app import history as history_app  # sqlite3: imported only once a verdict is to be recorded

    target = history_app.where(path, off)
    if target is not None:
        history_app.record(report, "node", target, busy_s=min(history_app.DEFAULT_BUSY_S, left - 0.2))


def register(app: typer.Typer) -> None:
    """Add ``preflight node`` to the CLI."""

    @app.command()
    def node(
        checks: Annotated[list[str] | None, typer.Option("--checks", "-c", help="only these node checks "
                                                          "(families or ids, comma separated)")] = None,
        skip: Annotated[list[str] | None, typer.Option("--skip", help="skip these checks or finding ids")] = None,
        settings: Annotated[list[str] | None, typer.Option("--set", help="check parameter family.key=value "
                                                           f"(repeatable; also ${ENV_SET})")] = None,
        accelerator: Annotated[str, typer.Option(help="npu | gpu | cpu | auto (npu-smi / nvidia-smi that work)")
                               ] = "auto",
        devices_per_host: Annotated[int | None, typer.Option(help="devices this node should have (default: what "
                                                             "npu-smi / nvidia-smi count)", min=0)] = None,
        master_port: Annotated[int | None, typer.Option(help="the job's master port (default: hosts.yaml's, "
                                                        "else 29500)", min=1, max=65535)] = None,
        ranks: Annotated[int | None, typer.Option(help="the job's rank count (world size), for the listen-queue "
                                                  "thresholds (default: from Slurm's SLURM_JOB_NUM_NODES / "
                                                  "SLURM_NTASKS; without them only the floor applies)", min=1)
                         ] = None,
        timeout: Annotated[float, typer.Option(help="hard bound on the whole run, seconds", min=1)] = 8.0,
        json_out: Annotated[bool, typer.Option("--json", help="print the JSON report instead")] = False,
        report_dir: Annotated[str | None, typer.Option(help="also write report.json here")] = None,
        prometheus: Annotated[str | None, typer.Option(help="also write a Prometheus textfile here (atomic; the "
                                                       "metric names of `run --prometheus`), e.g. for "
                                                       "node_exporter's textfile collector")] = None,
        facts: Annotated[str | None, typer.Option(help="gather what `run` would (all checks, not only the node "
                                                  "ones) and write the raw outputs here ('-': stdout) for "
                                                  "`preflight judge`; no verdict, exit 0 once written")] = None,
        hosts: Annotated[str | None, typer.Option("--hosts", "-H", help="hosts.yaml: this node's entry (the job's "
                                                  "python:, setup:, env:), the cluster section and checks:")] = None,
        name: Annotated[str | None, typer.Option(envvar="PREFLIGHT_NODE_NAME", help="with --hosts: this node's "
                                                 "name in hosts.yaml (default: $SLURMD_NODENAME, else the host "
                                                 "name)")] = None,
        python: PythonOption = None,
        setup: SetupOption = None,
        sudo: Annotated[bool, typer.Option("--sudo", help="run the probes that need root (firewall rules) under "
                                           "`sudo -n`; never asks for a password")] = False,
        run_id: Annotated[str | None, typer.Option(envvar="PREFLIGHT_RUN_ID", help="with --facts: the run these "
                                                   "facts are for, written into the file (`judge --run-id` takes "
                                                   "only that run's files)")] = None,
        history: HistoryOption = None,
        no_history: NoHistoryOption = False,
        drain_after: DrainAfterOption = None,
    ) -> None:
        """Check this machine alone (no SSH): one-line verdict; exit 0 ok, 1 fail, 4 could not tell, 2 usage.

        Example: preflight node --timeout 8 --set sysctl.min_somaxconn=4096
        """
        interpreter = Interpreter(python, setup or [], os.environ)
        if facts is not None:
            write_facts(facts, timeout, hosts, name, checks, skip, accelerator, devices_per_host, master_port,
                        interpreter, run_id)
        host = node_name(os.environ)  # Slurm's name for it, in a prolog

        def late() -> None:  # the wall-clock bound: whatever is still running, answer now
            _say(sys.stdout, f"preflight node {host}: ERROR timeout: not finished within {timeout:g} s\n")

        items = os.environ.get(ENV_SET, "").split() + list(settings or [])
        request = node_app.NodeRequest(
            checks=split_items(checks), skip=split_items(skip), settings=items, accelerator=accelerator,
            devices_per_host=devices_per_host, master_port=master_port, ranks=ranks,
            hosts=Path(hosts) if hosts else None, name=name, interpreter=interpreter, sudo=sudo,
            environ=os.environ, drain_after=drain_after, history=_store(history, no_history))
        with node_app.Deadline(timeout, late) as deadline:  # slow is not bad: never drain a node for it (exit 4)
            try:
                report = node_app.run_node(request, deadline.left())
            except UsageError as exc:
                sys.stderr.write(f"preflight: {exc}\n")
                raise typer.Exit(exit_codes.USAGE) from None
            with deadline.settled():
                # Not written: one line on stderr, and an OK verdict exits 4 (delivery.exit_code), never 70.
                node_app.save(report, Path(report_dir) if report_dir else None,
                              Path(prometheus) if prometheus else None)
                _say(sys.stdout, json_report.dumps(report) if json_out else verdict_line(report, host) + "\n")
                record_history(report, history, no_history, deadline.left())
        raise typer.Exit(exit_codes.for_report(report))
