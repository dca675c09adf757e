"""``preflight run``: a :class:`RunRequest` -> the engine over every host -> the report, redacted once
(``finish``), and its files (``save``).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from preflight import drain
from preflight.app.cluster import Interpreter, load_cluster
from preflight.app.selection import UsageError, select_checks
from preflight.checks.base import Check
from preflight.delivery import write_file
from preflight.engine import Engine, RunOptions, settled_heap
from preflight.model import RedactedReport, Report
from preflight.render import html as html_report
from preflight.render import json_report
from preflight.render.outputs import ReportOutputs


@dataclass(frozen=True)
class RunRequest:
    """One ``preflight run``: where, what, how (everything but the rendering)."""

    hosts: Path | None = None
    checks: Sequence[str] = ()
    skip: Sequence[str] = ()
    options: RunOptions = field(default_factory=RunOptions)
    rank_table: Path | None = None
    accelerator: str = "auto"  # npu | gpu | cpu | auto (hosts.yaml's; on this machine: detected)
    transport: str = "auto"  # ssh | openssh | slurm | auto
    max_unhealthy: str | None = None
    outputs: ReportOutputs | None = None  # the baseline to compare with (its files are written by save)
    interpreter: Interpreter | None = None  # --python / --setup (and PREFLIGHT_PYTHON / PREFLIGHT_SETUP)
    # Checks outside the registry run beside the selected ones (``preflight fix``'s read-only state probe)
    extra_checks: Sequence[Check] = ()
    # Check parameters set on the command line, over hosts.yaml's (``--bisect``: allreduce's mode)
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    drain_after: str | None = None  # --drain-after N/M | Nx/DURATION (docs/history.md): counted in ``history``
    history: Path | None = None  # the history store (None: --no-history)


@dataclass(frozen=True)
class RunResult:
    report: RedactedReport
    complete: bool
    engine: Engine  # what was gathered, for --record; ``stopped_by``: the signal that interrupted it


def prepare(request: RunRequest) -> Engine:
    """Validate the request and build the engine (its ``on_host_done`` is the caller's to set); UsageError
    before anything runs."""
    from preflight.transport import slurm as slurm_transport

    inventory = load_cluster(request.hosts, request.rank_table, request.accelerator, request.interpreter)
    if request.params:
        inventory = replace(inventory, params={**inventory.params, **{
            family: {**inventory.params.get(family, {}), **values} for family, values in request.params.items()}})
    if request.drain_after is not None:
        from preflight.app.history import check_policy

        check_policy(request.drain_after, request.history)
    try:
        if request.max_unhealthy is not None:
            drain.parse_limit(request.max_unhealthy)
        use_slurm = slurm_transport.choose(request.transport, str(request.hosts) if request.hosts else None)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    selection = select_checks(request.checks, request.skip)
    options = replace(request.options, only=selection.only, drop=selection.dropped)
    factory, batch = None, None
    if request.transport == "openssh":  # every host over the system ssh client (preflight.transport.openssh)
        if shutil.which("ssh") is None:
            raise UsageError("--transport openssh: no `ssh` client on PATH")
        inventory = replace(inventory, hosts=[replace(h, openssh_reason=h.openssh_reason or "--transport openssh")
                                              for h in inventory.hosts])
    if use_slurm:  # one srun for every host per round: the gather, then each round of the active checks
        factory, batch = slurm_transport.slurm_transport_factory(inventory.hosts)
        options = replace(options, parallel=max(1, len(inventory.hosts)))
    return Engine(inventory, [*selection.checks, *request.extra_checks], options, transport_factory=factory,
                  batching=batch)


def run_cluster(request: RunRequest, engine: Engine | None = None,
                gathering: AbstractContextManager[object] | None = None) -> RunResult:
    """Run the request (on ``engine`` when :func:`prepare` built one already) and judge it; never raises on
    an interruption: the result is then marked incomplete and holds what was gathered."""
    engine = engine or prepare(request)
    complete = engine.run_interruptible(gathering=gathering)
    return RunResult(finish(engine.report(complete=complete), request.max_unhealthy, request.outputs,
                            request.drain_after, request.history), complete, engine)


def finish(report: Report, max_unhealthy: str | None, outputs: ReportOutputs | None,
           drain_after: str | None = None, history: Path | None = None) -> RedactedReport:
    """The judged report as the application hands it back: ``--max-unhealthy`` applied, what is new since each
    host's previous run (Xids, link downs: ``history``'s earlier runs), then ``--drain-after``
    (the failing hosts' earlier runs read from ``history``), the hosts' history section (``extra["history"]``: lemon
    score and flapping over the store's last 7 days), the baseline compared, and redacted, once
    (``RedactedReport``: what every renderer and writer takes)."""
    report = drain.apply(report, max_unhealthy)[0]
    if history is not None and any(f.events for f in report.findings):
        from preflight.app.history import with_events  # sqlite3: only when a finding counted events

        report = with_events(report, history)
    if drain_after is not None:
        from preflight.app.history import with_policy  # sqlite3: only when a policy is asked for

        report = with_policy(report, drain_after, history)
    if history is not None and history.exists():
        from preflight.app.history import with_section  # report.json / report.html's history section

        report = with_section(report, history)
    if outputs:
        report = outputs.with_baseline(report)
    return report.redacted()


@settled_heap()
def save(report: RedactedReport, directory: Path | None, outputs: ReportOutputs | None = None) -> Path | None:
    """Write report.json and report.html (in ``directory`` or a new ``reports/<UTC time>/``) and the extra
    formats. The path of report.json; None when it could not be written (one line on
    stderr per output not written, never an exception: ``delivery.write_file``)."""
    where = f"report.json in {directory}" if directory else "report.json"
    path = write_file(where, lambda: json_report.write(report, directory or json_report.new_report_dir()))
    if path:  # report.html always next to report.json; not a second line about the same directory
        write_file(f"report.html in {path.parent}", lambda: html_report.write(report, path.parent))
    if outputs:
        outputs.write(report)
    return path
