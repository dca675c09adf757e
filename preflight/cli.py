"""Command line: ``preflight run``, ``preflight bench allreduce``, ``preflight list-checks``.

Exit codes: 0 no fail/error finding; 1 a fail or error finding; 2 usage or configuration error;
130 interrupted (the partial report is still written, marked incomplete).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from preflight import __version__, drain, recorder
from preflight.checks import all_checks, known_params
from preflight.commands import register_all
from preflight.engine import Engine, HostGather, RunOptions
from preflight.inventory import InventoryError, load_inventory, local_inventory
from preflight.model import Report, Status
from preflight.render import html as html_report
from preflight.render import json_report, terminal
from preflight.render.outputs import ReportOutputs
from preflight.transport import slurm as slurm_transport

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_SUSPECT = drain.EXIT_SUSPECT  # --max-unhealthy passed: suspect the check or infrastructure, drain nothing

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Cluster preflight checks for distributed deep-learning training.")


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

def _split(values: list[str] | None) -> list[str]:
    return [item.strip() for value in values or [] for item in value.split(",") if item.strip()]


def _fail_usage(message: str) -> typer.Exit:
    sys.stderr.write(f"preflight: {message}\n")  # unwrapped: scripts grep for FILE:LINE
    return typer.Exit(EXIT_USAGE)


@app.command()
def run(
    hosts: HostsOption = None,
    checks: Annotated[list[str] | None, typer.Option("--checks", "-c", help="only these check families "
                                                        "or ids (comma separated)")] = None,
    skip: Annotated[list[str] | None, typer.Option("--skip", help="skip these check families")] = None,
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
    transport: Annotated[str, typer.Option(help="ssh | slurm (one srun inside the allocation) | auto (slurm "
                                           "when --hosts slurm inside an allocation)")] = "auto",
    max_unhealthy: Annotated[str | None, typer.Option(help="N hosts or P%: past it, suspect the check, not the "
                                                      f"nodes: exit {EXIT_SUSPECT}, recommend no drain")] = None,
) -> None:
    """Check every host of the cluster (or this machine) and report."""
    try:
        extras = ReportOutputs.build(junit=junit, prometheus=prometheus, markdown=markdown, baseline=baseline,
                                     baseline_threshold=baseline_threshold)
    except json_report.ReportFormatError as exc:
        raise _fail_usage(f"--baseline: {exc}") from None
    report = _run(hosts, checks, skip, parallel, connect_timeout, command_timeout, host_timeout,
                  accept_new_host_keys, json_out, report_dir, record, rank_table, sudo=sudo,
                  outputs=extras, transport=transport, max_unhealthy=max_unhealthy)
    raise typer.Exit(EXIT_SUSPECT if report.extra.get("drain", {}).get("tripped") else report.exit_code())


def _run(hosts: Path | None, checks: list[str] | None, skip: list[str] | None, parallel: int,
         connect_timeout: float, command_timeout: float | None, host_timeout: float, accept_new_host_keys: bool,
         json_out: bool, report_dir: Path | None, record: Path | None, rank_table: Path | None,
         sudo: bool = False, outputs: ReportOutputs | None = None, transport: str = "auto",
         max_unhealthy: str | None = None) -> Report:
    """Gather, judge, write report.json and print the report (terminal or JSON); the report for the caller.

    Exits itself on usage errors (2) and on interruption (130, after writing the partial report).
    """
    try:
        inventory = load_inventory(hosts, known_params()) if hosts else local_inventory()
        if max_unhealthy is not None:
            drain.parse_limit(max_unhealthy)
        use_slurm = slurm_transport.choose(transport, str(hosts) if hosts else None)
    except (InventoryError, ValueError) as exc:
        raise _fail_usage(str(exc)) from None
    if rank_table:
        try:
            table = json.loads(rank_table.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise _fail_usage(f"{rank_table}: cannot read the rank table: {exc}") from None
        hccn = {**inventory.params.get("hccn", {}), "rank_table": table}
        inventory = replace(inventory, params={**inventory.params, "hccn": hccn})
    selected = _split(checks)
    skipped = set(_split(skip))
    families = {c.family for c in all_checks()}
    unknown = [s for s in [*selected, *skipped] if s.split(".")[0] not in families]
    if unknown:
        raise _fail_usage(f"unknown check {', '.join(unknown)} (see `preflight list-checks`)")
    wanted = {c.ident for c in all_checks() if not any(c.selected_by(s) for s in skipped)
              and ((not selected and c.by_default) or any(c.selected_by(s) for s in selected))}
    needed = {n for c in all_checks() if c.ident in wanted for n in c.needs}
    chosen = [c for c in all_checks() if c.ident in wanted | needed]
    # Families gathered only because another check needs their facts are not reported.
    only = tuple(selected) or (tuple(sorted(wanted)) if needed - wanted else ())
    options = RunOptions(parallel=parallel, connect_timeout=connect_timeout, command_timeout=command_timeout,
                         host_timeout=host_timeout, accept_new_host_keys=accept_new_host_keys, only=only,
                         sudo=sudo)
    factory, batch = None, None
    if use_slurm:  # one srun for every host per round: the gather, then each round of the active checks
        factory, batch = slurm_transport.slurm_transport_factory(inventory.hosts)
        options = replace(options, parallel=max(1, len(inventory.hosts)))
    out = Console(markup=False, highlight=False)
    err = Console(stderr=True, markup=False, highlight=False)
    live = err.is_terminal and not json_out
    progress = Progress(TextColumn("checking"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[status]}"), TimeElapsedColumn(), console=err, transient=True,
                        disable=not live)
    task = progress.add_task("hosts", total=len(inventory.hosts), status="")
    problems: list[str] = []
    waiting = {h.name for h in inventory.hosts}

    def host_done(gather: HostGather) -> None:
        waiting.discard(gather.host.name)
        if any(f.status in (Status.FAIL, Status.ERROR) for f in gather.findings):
            problems.append(gather.host.name)
        if not live:  # no progress line to draw: folding the waiting hosts would cost O(hosts) per host
            return
        still = terminal.fold(sorted(waiting))
        still = still if len(still) <= 40 else still[:37] + "..."
        progress.update(task, advance=1, status=f"unreachable {len(problems)}  waiting for {still or '-'}")

    engine = Engine(inventory, chosen, options, transport_factory=factory, on_host_done=host_done, batching=batch)
    complete = engine.run_interruptible(gathering=progress)
    report = engine.report(complete=complete)
    report = drain.apply(report, max_unhealthy)[0]
    if outputs:
        report = outputs.with_baseline(report)
    if record:
        recorder.record(engine, record)
    directory = report_dir or json_report.new_report_dir()
    path = json_report.write(report, directory)
    html_report.write(report, directory)  # always next to report.json
    if outputs:
        outputs.write(report)
    if json_out:
        sys.stdout.write(json_report.dumps(report))
    else:
        terminal.render(report, out)
        out.print(f"\nreport: {path}")
    if not complete:
        err.print(f"preflight: interrupted; partial report written to {path}, marked incomplete", style="yellow")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)  # worker threads may still sit in a connect; the report is already safe
    return report



bench = typer.Typer(add_completion=False, no_args_is_help=True,
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
) -> None:
    """Run the allreduce check (same as `run --checks allreduce`), then print every pair's figures.

    Example: preflight bench allreduce --hosts hosts.yaml
    """
    report = _run(hosts, ["allreduce"], None, parallel, connect_timeout, command_timeout, host_timeout,
                  accept_new_host_keys, json_out, report_dir, None, None)
    if not json_out:
        Console(markup=False, highlight=False).print(pairs_table(report))
    raise typer.Exit(report.exit_code())


def pairs_table(report: Report) -> Table:
    """Every all_reduce pair finding with figures: host, device, peer, peer device, bytes, algbw, busbw, status."""
    table = Table(title="all_reduce pairs", title_justify="left", show_edge=False, pad_edge=False)
    for name in ("host", "dev", "peer", "peer dev", "bytes", "algbw GB/s", "busbw GB/s", "status"):
        table.add_column(name, justify="right" if name not in ("host", "peer", "status") else "left",
                         overflow="fold")
    rows = [f for f in report.findings if f.check.startswith("allreduce.") and f.busbw_gbps is not None
            and f.peer is not None]
    for f in sorted(rows, key=lambda f: (str(f.host), f.device or 0, str(f.peer), f.peer_device or 0)):
        table.add_row(str(f.host), _opt(f.device), str(f.peer), _opt(f.peer_device),
                      "-" if f.bytes is None else str(f.bytes), _opt(f.algbw_gbps), _opt(f.busbw_gbps),
                      Text(f.status.value, style=terminal.STYLE[f.status]))
    return table


def _opt(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


@app.command("list-checks")
def list_checks() -> None:
    """List the check families with one line each."""
    for check in all_checks():
        params = ", ".join(f"{k}={v!r}" for k, v in check.params.items())
        note = "" if check.by_default else "  (only with --checks)"
        print(f"{check.ident:<18} {check.summary}{note}" + (f"  [params: {params}]" if params else ""))


@app.command()
def version() -> None:
    """Print the version."""
    print(__version__)


register_all(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
