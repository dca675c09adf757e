"""Command line: ``preflight run``, ``preflight bench allreduce``, ``preflight list-checks`` (more commands in
``preflight.commands``). Parses arguments and renders; the run itself is ``preflight.app``'s, the exit codes
are ``preflight.exit_codes``'s.
"""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from preflight import __version__, crash, delivery, exit_codes, recorder
from preflight import app as application
from preflight.checks import all_checks
from preflight.cli_options import (
    DrainAfterOption,
    HistoryOption,
    NoHistoryOption,
    PythonOption,
    SetupOption,
    split_items,
)
from preflight.commands import register_all
from preflight.model import Report, Status
from preflight.process_exit import exit_now
from preflight.render import console, json_report, summary
from preflight.render.outputs import ReportOutputs

if TYPE_CHECKING:  # rich is imported where a table is drawn: a `run --json` never loads it
    from rich.table import Table

# Help and usage errors in click's plain layout (rich_markup_mode=None): rich's options table cuts option
# names with "…" at 80 and even 100 columns (--connect-timeo…); click's never does, and wraps only the help.
app = typer.Typer(add_completion=True, no_args_is_help=True, rich_markup_mode=None,
                  context_settings={"max_content_width": 120},
                  help="Cluster preflight checks for distributed deep-learning training.")


def _show_version(value: bool) -> None:
    if value:
        print(__version__)
        raise typer.Exit(exit_codes.OK)


@app.callback()
def _main(version: Annotated[bool, typer.Option("--version", callback=_show_version, is_eager=True,
                                                help="print the version and exit")] = False) -> None:
    """Cluster preflight checks for distributed deep-learning training."""


# Options shared by `run` and `bench allreduce`.
HostsOption = Annotated[Path | None, typer.Option("--hosts", "-H", help="hosts.yaml; default: this machine")]
ParallelOption = Annotated[int, typer.Option(help="hosts gathered at once", min=1)]
ConnectTimeoutOption = Annotated[float, typer.Option(help="seconds to connect and authenticate", min=0.1)]
CommandTimeoutOption = Annotated[float | None, typer.Option(help="cap on each probe's seconds", min=0.1)]
HostTimeoutOption = Annotated[float, typer.Option(help="seconds for one host's whole gather", min=1)]
AcceptNewHostKeysOption = Annotated[bool, typer.Option(help="trust and record unknown host keys "
                                                        "(never changed ones)")]
JsonOption = Annotated[bool, typer.Option("--json", help="print the JSON report instead")]
ReportDirOption = Annotated[Path | None, typer.Option(help="where report.json goes "
                                                        "(default reports/<UTC time>/)")]
BisectOption = Annotated[bool, typer.Option("--bisect", help="allreduce: one all_reduce over all hosts, groups below "
                                            "expected split in halves, suspects confirmed in pairs: the bad host "
                                            "in O(log n) runs; with several devices per host, then each "
                                            "host's devices the same way: the bad device (docs/thresholds.md)")]
BISECT = {"allreduce": {"mode": "bisect"}}

def _fail_usage(message: str) -> typer.Exit:
    sys.stderr.write(f"preflight: {message}\n")  # unwrapped: scripts grep for FILE:LINE
    return typer.Exit(exit_codes.USAGE)


@app.command()
def run(
    hosts: HostsOption = None,
    checks: Annotated[list[str] | None, typer.Option("--checks", "-c", help="only these check families "
                                                        "or ids (comma separated)")] = None,
    skip: Annotated[list[str] | None, typer.Option("--skip", help="skip these check families, checks or finding "
                                                   "ids (an id: only its findings)")] = None,
    parallel: ParallelOption = 64,
    connect_timeout: ConnectTimeoutOption = 10.0,
    command_timeout: CommandTimeoutOption = None,
    host_timeout: HostTimeoutOption = 60.0,
    accept_new_host_keys: AcceptNewHostKeysOption = False,
    json_out: JsonOption = False,
    report_dir: ReportDirOption = None,
    junit: Annotated[Path | None, typer.Option(help="also write a JUnit XML report here")] = None,
    prometheus: Annotated[Path | None, typer.Option(help="also write a Prometheus textfile here")] = None,
    markdown: Annotated[Path | None, typer.Option(help="also write a Markdown summary here")] = None,
    baseline: Annotated[Path | None, typer.Option(help="compare busbw and versions with this known-good "
                                                  "report.json (see `preflight baseline save`)")] = None,
    baseline_threshold: Annotated[float, typer.Option(help="busbw drop vs the baseline that fails (0.05 = 5%)",
                                                      min=0.0, max=1.0)] = 0.05,
    record: Annotated[Path | None, typer.Option(help="also write parse fixtures of every probe here")] = None,
    rank_table: Annotated[Path | None, typer.Option(help="Ascend rank table to check against the device "
                                                    "IPs (hccn.rank_table)")] = None,
    sudo: Annotated[bool, typer.Option("--sudo", help="run the probes that need root (firewall rules) under "
                                       "`sudo -n`; never asks for a password")] = False,
    accelerator: Annotated[str, typer.Option(help="npu | gpu | cpu | auto (hosts.yaml's; without --hosts: "
                                             "what npu-smi / nvidia-smi show)")] = "auto",
    transport: Annotated[str, typer.Option(help="ssh | openssh (the system ssh client, ControlMaster) | "
                                           "slurm (one srun inside the allocation) | auto (slurm when --hosts "
                                           "slurm inside an allocation)")] = "auto",
    max_unhealthy: Annotated[str | None, typer.Option(help="N hosts or P%: past it, suspect the check, not the "
                                                      f"nodes: exit {exit_codes.SUSPECT}, recommend no drain")] = None,
    python: PythonOption = None,
    setup: SetupOption = None,
    bisect: BisectOption = False,
    history: HistoryOption = None,
    no_history: NoHistoryOption = False,
    drain_after: DrainAfterOption = None,
) -> None:
    """Check every host of the cluster (or this machine) and report."""
    try:
        extras = ReportOutputs.build(junit=junit, prometheus=prometheus, markdown=markdown, baseline=baseline,
                                     baseline_threshold=baseline_threshold)
    except json_report.ReportFormatError as exc:
        raise _fail_usage(f"--baseline: {exc}") from None
    options = application.RunOptions(parallel=parallel, connect_timeout=connect_timeout,
                                     command_timeout=command_timeout, host_timeout=host_timeout,
                                     accept_new_host_keys=accept_new_host_keys, sudo=sudo)
    selected = split_items(checks)
    if bisect and selected and "allreduce" not in selected:
        selected = [*selected, "allreduce"]
    request = application.RunRequest(hosts=hosts, checks=selected or (["allreduce"] if bisect else selected),
                                     skip=split_items(skip),
                                     options=options, rank_table=rank_table, accelerator=accelerator,
                                     transport=transport, max_unhealthy=max_unhealthy, outputs=extras,
                                     interpreter=application.Interpreter(python, setup or [], os.environ),
                                     params=BISECT if bisect else {}, drain_after=drain_after,
                                     history=_history_store(history, no_history))
    report = run_and_show(request, json_out, report_dir, record)
    from preflight.app import history as history_app  # after the verdict, never changing it (docs/history.md)

    history_app.record(report.redacted(), "run", history_app.where(history, no_history))
    raise typer.Exit(exit_codes.for_report(report))


def _history_store(path: Path | None, off: bool) -> Path | None:
    from preflight.app import history as history_app  # the store: --drain-after and the events since the last run

    return history_app.where(path, off)


def run_and_show(request: application.RunRequest, json_out: bool, report_dir: Path | None,
                 record: Path | None = None) -> Report:
    """Run the request with a progress line, save every output, print the report; the report.

    Exits itself on usage errors (2) and on interruption (130, after writing the partial report).
    """
    # Raw outputs outlive their parsing only for --record (memory at thousands of hosts).
    request = replace(request, options=replace(request.options, keep_outputs=record is not None))
    try:
        engine = application.prepare(request)
    except application.UsageError as exc:
        raise _fail_usage(str(exc)) from None
    bar, engine.on_host_done = console.progress([h.name for h in engine.inventory.hosts], enabled=not json_out)
    result = application.run_cluster(request, engine, gathering=bar)
    if record:
        delivery.write_file(f"the fixtures in {record}", lambda: recorder.record(result.engine, record))
    path = application.save(result.report, report_dir, request.outputs)
    console.show(result.report, path, json_out)
    if not result.complete:
        console.exit_interrupted(path, exit_codes.interrupted(result.engine.stopped_by))
    return result.report


bench = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                    help="Benchmarks between the hosts, reported per device pair.")
app.add_typer(bench, name="bench")


@bench.command("allreduce")
def bench_allreduce(
    hosts: HostsOption = None,
    parallel: ParallelOption = 64,
    connect_timeout: ConnectTimeoutOption = 10.0,
    command_timeout: CommandTimeoutOption = None,
    host_timeout: HostTimeoutOption = 60.0,
    accept_new_host_keys: AcceptNewHostKeysOption = False,
    json_out: JsonOption = False,
    report_dir: ReportDirOption = None,
    bisect: BisectOption = False,
) -> None:
    """Run the allreduce check (same as `run --checks allreduce`), then print every pair's figures.

    Example: preflight bench allreduce --hosts hosts.yaml
    """
    options = application.RunOptions(parallel=parallel, connect_timeout=connect_timeout,
                                     command_timeout=command_timeout, host_timeout=host_timeout,
                                     accept_new_host_keys=accept_new_host_keys)
    report = run_and_show(application.RunRequest(hosts=hosts, checks=["allreduce"], options=options,
                                                 params=BISECT if bisect else {}), json_out, report_dir)
    if not json_out and bisect:
        from rich.console import Console

        Console(markup=False, highlight=False).print(rounds_table(report))
    elif not json_out:
        table = pairs_table(report)
        if table.row_count:
            from rich.console import Console

            Console(markup=False, highlight=False).print(table)
        else:  # e.g. no torch on the nodes: say why there are no figures instead of an empty table
            why = [f.message for f in report.findings if f.check == "allreduce.run" and f.status != Status.PASS]
            sys.stderr.write("preflight: no all_reduce pair was measured" + (f": {why[0]}" if why else "") + "\n")
    raise typer.Exit(exit_codes.for_report(report))


def pairs_table(report: Report) -> Table:
    """Every all_reduce pair finding with figures: host, device, peer, peer device, bytes, algbw, busbw, status."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="all_reduce pairs", title_justify="left", show_edge=False, pad_edge=False)
    for name in ("host", "dev", "peer", "peer dev", "bytes", "algbw GB/s", "busbw GB/s", "status"):
        table.add_column(name, justify="right" if name not in ("host", "peer", "status") else "left",
                         overflow="fold")
    rows = [f for f in report.findings if f.check.startswith("allreduce.") and f.busbw_gbps is not None
            and f.peer is not None]
    for f in sorted(rows, key=lambda f: (str(f.host), f.device or 0, str(f.peer), f.peer_device or 0)):
        table.add_row(str(f.host), _opt(f.device), str(f.peer), _opt(f.peer_device),
                      "-" if f.bytes is None else str(f.bytes), _opt(f.algbw_gbps), _opt(f.busbw_gbps),
                      Text(f.status.value, style=summary.STYLE[f.status]))
    return table


def rounds_table(report: Report) -> Table:
    """--bisect's search: every group run, round by round: its hosts (and their switches when hosts.yaml names
    them), or within a node its host and devices (``node2 devices 0-3``), busbw, expected, verdict."""
    import re

    from rich.table import Table
    from rich.text import Text

    from preflight.allreduce.bisect_devices import describe

    table = Table(title="all_reduce bisection", title_justify="left", show_edge=False, pad_edge=False)
    for name in ("round", "hosts", "busbw GB/s", "expected GB/s", "verdict"):
        table.add_column(name, justify="right" if "GB/s" in name or name == "round" else "left", overflow="fold")
    rows = [f for f in report.findings if f.check == "allreduce.bisect" and f.group is not None]
    for f in sorted(rows, key=lambda f: (f.round or 0, f.group or ())):
        verdict = f.message.split(": ", 3)[-1]
        where = re.search(r"\((?:\d+ hosts|confirming [^,)]+), (switch(?:es)? [^)]+)\)", f.message)
        members = list(f.group or ())
        within = bool(members) and "/" in members[0]  # a within-node group: host/device (bisect_devices)
        role = re.search(r"\((reference|confirming device \d+)|devices, (run again) after", f.message) \
            if within else None
        hosts = describe(members) + (f" ({role[1] or role[2]})" if role else "") if within else \
            summary.fold(members) + (f" ({where[1]})" if where else "")
        table.add_row(str(f.round), hosts, _opt(f.busbw_gbps),
                      _opt(f.expected_gbps), Text(verdict, style=summary.STYLE[f.status]))
    return table


def _opt(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


@app.command("list-checks")
def list_checks(markdown: Annotated[bool, typer.Option(
        "--markdown", help="print docs/checks.md: every check, its finding ids and parameters")] = False) -> None:
    """List the check families with one line each."""
    if markdown:
        from preflight.catalog import checks_markdown

        print(checks_markdown(), end="")
        return
    for check in all_checks():
        params = ", ".join(f"{k}={v!r}" for k, v in check.params.items())
        note = "" if check.by_default else "  (only with --checks)"
        print(f"{check.ident:<18} {check.summary}{note}" + (f"  [params: {params}]" if params else ""))


@app.command()
def version() -> None:
    """Print the version."""
    print(__version__)


register_all(app)


def command_name(info: typer.models.CommandInfo) -> str:
    """The name a registered command answers to: its own, else its function's as typer derives it.

    >>> sorted(command_name(c) for c in app.registered_commands)[:3]
    ['diagnose', 'diff', 'explain']
    """
    return info.name or typer.main.get_command_name(info.callback.__name__ if info.callback else "")


def for_argv(argv: Sequence[str]) -> typer.Typer:
    """``app`` with only the command that ``argv`` names, when it names one: typer turns every command's
    signature into click options before it parses anything (~12 ms for all of them, ~3 for ``run``), and
    a scheduler prolog runs ``preflight run`` on every job. Anything else (``--help``, ``--version``, no
    command, a mistyped one, shell completion) gets the whole app, so help and errors stay the same.

    >>> [c.callback.__name__ for c in for_argv(["run", "--hosts", "h.yaml"]).registered_commands]
    ['run']
    >>> for_argv(["--help"]) is app, for_argv(["bench", "allreduce"]).registered_groups[0].name
    (True, 'bench')
    """
    name = argv[0] if argv else ""
    commands = [c for c in app.registered_commands if command_name(c) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if not commands and not groups:
        return app
    trimmed = copy.copy(app)
    trimmed.registered_commands, trimmed.registered_groups = commands, groups
    return trimmed


def main() -> None:
    """Run the command line: a crash is one line on stderr and exit 70, the traceback in a log file."""
    try:
        for_argv(sys.argv[1:])()
    except Exception as exc:  # SystemExit (typer.Exit) and KeyboardInterrupt pass through
        sys.stderr.write(crash.report(exc) + "\n")
        sys.exit(exit_codes.INTERNAL)


def console_main() -> NoReturn:
    """The console entry point (``preflight``, ``python -m preflight``): ``main``, then an exit without the
    interpreter's teardown (``process_exit``: ~30-40 ms a run). Output that cannot be delivered is
    ``delivery``'s: one line on stderr, the verdict's code kept (an OK one is 4 when a report file is missing)."""
    delivery.guard_streams()  # a closed or full stdout/stderr, a broken pipe: never a crash, never another code
    try:
        main()
    except SystemExit as done:  # how typer ends every command
        exit_now(delivery.exit_code(done.code))
    exit_now(delivery.exit_code(exit_codes.OK))


if __name__ == "__main__":
    console_main()
