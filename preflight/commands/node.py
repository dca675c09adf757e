"""``preflight node``: the checks that need no other host, on this machine, without SSH.

Made for scheduler hooks (Slurm Prolog / HealthCheckProgram, a Kubernetes init container): one line
on stdout, the exit code is the verdict, and ``--timeout`` is a hard wall-clock bound (Slurm kills a
prolog that overruns MessageTimeout, 10 s by default).

Example::

    $ preflight node --timeout 8
    preflight node gpu07: FAIL in 0.42 s (pass 21 warn 1 fail 1 error 0 skip 6): sysctl.somaxconn: ...

``--facts FILE`` instead gathers everything ``run`` would send this host (no verdict) for ``preflight judge``
(``preflight.collect``).

Parameters come from ``--set family.key=value`` (repeatable) or the environment variable
``PREFLIGHT_NODE_SET`` (the same items separated by spaces), e.g.
``PREFLIGHT_NODE_SET="sysctl.min_somaxconn=4096"``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer

from preflight import exit_codes
from preflight.cli_options import PythonOption, SetupOption

if TYPE_CHECKING:
    from collections.abc import Mapping

    from preflight.app import Interpreter, Selection
    from preflight.inventory import ClusterSpec
    from preflight.model import RedactedReport

ENV_SET = "PREFLIGHT_NODE_SET"


class NodeUsageError(Exception):
    """A bad ``--set`` item or check name (exit 2)."""


def parse_settings(items: list[str], known: dict[str, dict[str, object]]) -> dict[str, dict[str, Any]]:
    """``family.key=value`` items -> the ``checks:`` parameter mapping, typed like the defaults.

    >>> parse_settings(["sysctl.min_somaxconn=4096"], {"sysctl": {"min_somaxconn": 65535}})
    {'sysctl': {'min_somaxconn': 4096}}
    """
    import yaml

    out: dict[str, dict[str, Any]] = {}
    for item in items:
        name, sep, text = item.partition("=")
        family, dot, key = name.strip().partition(".")
        if not sep or not dot or not key:
            raise NodeUsageError(f"--set {item!r}: expected family.key=value (e.g. sysctl.min_somaxconn=4096)")
        if family not in known or key not in known[family]:
            raise NodeUsageError(f"--set {item!r}: unknown parameter {name!r} (see `preflight list-checks`)")
        try:
            value = yaml.safe_load(text) if text.strip() else ""
        except yaml.YAMLError as exc:
            raise NodeUsageError(f"--set {item!r}: bad value: {exc}") from None
        default = known[family][key]
        if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if isinstance(default, str) and not isinstance(value, str):
            value = text.strip()
        if default is not None and (not isinstance(value, type(default))
                                    or isinstance(value, bool) != isinstance(default, bool)):
            raise NodeUsageError(f"--set {item!r}: {name} must be {type(default).__name__}")
        out.setdefault(family, {})[key] = value
    return out


def node_checks(selected: list[str], skipped: list[str]) -> Selection:
    """The node-scope checks to run (plus the families they need), the ids to report and those to leave out
    (``preflight.app.select_checks``, scope "node").

    >>> chosen = node_checks(["sysctl"], ["sysctl.port_range"])
    >>> sorted(c.ident for c in chosen.checks), chosen.only, chosen.dropped
    (['sysctl', 'versions'], ('sysctl',), ('sysctl.port_range',))
    """
    from preflight.app import UsageError, select_checks

    try:
        return select_checks(selected, skipped, scope="node")
    except UsageError as exc:
        raise NodeUsageError(str(exc)) from None


def verdict_line(report: RedactedReport, host: str) -> str:
    """The one line a prolog log or a drain reason can hold: verdict, counts and the first problem."""
    from preflight.model import Status

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
    return line


def job_ranks(cluster: ClusterSpec, ranks: int | None, environ: Mapping[str, str]) -> ClusterSpec:
    """``cluster`` with the job's rank count: ``--ranks``, else Slurm's variables, else unknown (0: the
    rendezvous thresholds then judge against their floor only). The checks get it as data, never the environment.

    >>> from preflight.inventory import ClusterSpec
    >>> c = job_ranks(ClusterSpec(devices_per_host=8), None, {"SLURM_JOB_NUM_NODES": "64"})
    >>> c.ranks, c.ranks_reason
    (512, 'SLURM_JOB_NUM_NODES=64 x 8 devices')
    >>> job_ranks(ClusterSpec(), 16, {"SLURM_NTASKS": "4"}).ranks_reason, job_ranks(ClusterSpec(), None, {}).ranks
    ('--ranks 16', 0)
    """
    from dataclasses import replace

    from preflight.ranks import from_slurm

    if ranks is not None:
        return replace(cluster, ranks=ranks, ranks_reason=f"--ranks {ranks}")
    found = from_slurm(environ, cluster.devices_per_host)
    if found is None:
        return replace(cluster, ranks=0, ranks_reason="unknown: no --ranks and no Slurm job")
    return replace(cluster, ranks=found.count, ranks_reason=found.why)


def run_node(selected: list[str], skipped: list[str], settings: list[str], accelerator: str,
             devices_per_host: int | None, master_port: int | None, timeout: float, ranks: int | None = None,
             environ: Mapping[str, str] | None = None, hosts: str | None = None, name: str | None = None,
             interpreter: Interpreter | None = None, sudo: bool = False) -> RedactedReport:
    """Run the node checks on this machine through the local transport and return the report.

    ``accelerator`` auto asks npu-smi / nvidia-smi; ``devices_per_host`` None takes what they counted (1 on cpu).
    ``ranks``: the job's rank count (None: from Slurm's variables in ``environ``, default this process's).
    ``hosts``: hosts.yaml, whose entry for this node (``name``, default Slurm's or the host name) gives the job's
    interpreter, setup and env, and whose cluster section and ``checks:`` apply (``--set`` over them).
    ``interpreter``: ``--python`` / ``--setup`` and the environment (over hosts.yaml's).
    """
    from dataclasses import replace
    from pathlib import Path

    from preflight.app import UsageError, load_cluster, this_host
    from preflight.checks import known_params
    from preflight.engine import Engine, RunOptions
    from preflight.transport.local import LocalTransport

    environ = os.environ if environ is None else environ
    chosen = node_checks(selected, skipped)
    params = parse_settings(settings, known_params())
    try:
        inventory = load_cluster(Path(hosts) if hosts else None, accelerator=accelerator, interpreter=interpreter)
        if hosts:
            here = name or environ.get("SLURMD_NODENAME") or os.uname().nodename
            inventory = replace(inventory, hosts=[this_host(inventory, here, Path(hosts))])
    except UsageError as exc:
        raise NodeUsageError(str(exc)) from None
    cluster = inventory.cluster if master_port is None else replace(inventory.cluster, master_port=master_port)
    if devices_per_host is not None:
        cluster = replace(cluster, devices_per_host=devices_per_host)
    cluster = job_ranks(cluster, ranks, environ)
    merged = {family: {**inventory.params.get(family, {}), **values} for family, values in params.items()}
    inventory = replace(inventory, cluster=cluster, params={**inventory.params, **merged})
    budget = max(1.0, timeout - 0.5)  # leave time to judge and print before the hard bound
    options = RunOptions(parallel=1, host_timeout=budget, command_timeout=budget, only=chosen.only,
                         drop=chosen.dropped, sudo=sudo)
    engine = Engine(inventory, chosen.checks, options, transport_factory=lambda host: LocalTransport())
    return engine.run().redacted()


def write_facts(target: str, hosts: str | None, name: str | None, checks: list[str] | None,
                skip: list[str] | None, accelerator: str, devices_per_host: int | None, timeout: float,
                master_port: int | None = None, interpreter: Interpreter | None = None,
                run_id: str | None = None) -> None:
    """``node --facts``: gather as ``run`` would, write the facts file (atomic) or print it; exit 0, 2 or 4."""
    from pathlib import Path

    from preflight.app import UsageError
    from preflight.collect import FactsRequest, gather_here, write_atomic
    from preflight.facts_file import to_text

    def hard_stop() -> None:
        sys.stderr.write(f"preflight node --facts: not finished within {timeout:g} s; nothing written\n")
        sys.stderr.flush()
        os._exit(exit_codes.COULD_NOT_TELL)

    timer = threading.Timer(timeout, hard_stop)
    timer.daemon = True
    timer.start()
    request = FactsRequest(hosts=Path(hosts) if hosts else None, name=name,
                           checks=[i.strip() for v in checks or [] for i in v.split(",") if i.strip()],
                           skip=[i.strip() for v in skip or [] for i in v.split(",") if i.strip()],
                           accelerator=accelerator, devices_per_host=devices_per_host, master_port=master_port,
                           timeout=max(1.0, timeout - 0.5), interpreter=interpreter, run_id=run_id)
    try:
        doc = gather_here(request)
        write_atomic(to_text(doc), target)
    except UsageError as exc:
        timer.cancel()
        sys.stderr.write(f"preflight: {exc}\n")
        raise typer.Exit(exit_codes.USAGE) from None
    except (OSError, RuntimeError) as exc:
        timer.cancel()
        sys.stderr.write(f"preflight: cannot write the facts of this node to {target}: {exc}\n")
        raise typer.Exit(exit_codes.COULD_NOT_TELL) from None
    timer.cancel()
    raise typer.Exit(exit_codes.OK)


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
    ) -> None:
        """Check this machine alone (no SSH): one-line verdict; exit 0 ok, 1 fail, 4 could not tell, 2 usage.

        Example: preflight node --timeout 8 --set sysctl.min_somaxconn=4096
        """
        from preflight.app import Interpreter

        interpreter = Interpreter(python, setup or [], os.environ)
        if facts is not None:
            write_facts(facts, hosts, name, checks, skip, accelerator, devices_per_host, timeout, master_port,
                        interpreter, run_id)
        start = time.monotonic()
        host = os.environ.get("SLURMD_NODENAME") or os.uname().nodename  # Slurm's name for it, in a prolog
        lock = threading.Lock()

        def hard_stop() -> None:  # the wall-clock bound: whatever is still running, answer now
            with lock:
                sys.stdout.write(f"preflight node {host}: ERROR timeout: not finished within {timeout:g} s\n")
                sys.stdout.flush()
                os._exit(exit_codes.COULD_NOT_TELL)  # slow is not bad: never drain a node for it

        timer = threading.Timer(max(0.0, timeout - (time.monotonic() - start)), hard_stop)
        timer.daemon = True
        timer.start()
        split = [i.strip() for v in checks or [] for i in v.split(",") if i.strip()]
        skipped = [i.strip() for v in skip or [] for i in v.split(",") if i.strip()]
        items = os.environ.get(ENV_SET, "").split() + list(settings or [])
        try:
            report = run_node(split, skipped, items, accelerator, devices_per_host, master_port,
                              timeout - (time.monotonic() - start), ranks, hosts=hosts, name=name,
                              interpreter=interpreter, sudo=sudo)
        except NodeUsageError as exc:
            timer.cancel()
            sys.stderr.write(f"preflight: {exc}\n")
            raise typer.Exit(exit_codes.USAGE) from None
        with lock:
            timer.cancel()
            from functools import partial
            from pathlib import Path

            from preflight.delivery import write_file
            from preflight.render import json_report
            from preflight.render.outputs import write_one

            # Not written: one line on stderr, and an OK verdict exits 4 (delivery.exit_code), never 70.
            if report_dir:
                write_file(f"report.json in {report_dir}", partial(json_report.write, report, Path(report_dir)))
            if prometheus:
                write_file(f"the prometheus report {prometheus}",
                           partial(write_one, "prometheus", report, Path(prometheus)))
            if json_out:
                sys.stdout.write(json_report.dumps(report))
            else:
                sys.stdout.write(verdict_line(report, host) + "\n")
            sys.stdout.flush()
        raise typer.Exit(exit_codes.for_report(report))
