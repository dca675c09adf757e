"""``preflight node``: this machine's verdict, the checks that need no other host, without SSH.

What a scheduler hook asks (Slurm Prolog / HealthCheckProgram, a Kubernetes init container): parameters from
``--set family.key=value`` (typed like the defaults), the job's rank count (``--ranks`` or Slurm's variables),
the job's interpreter, and a hard wall-clock bound on the whole command (:class:`Deadline`: Slurm kills a prolog
that overruns MessageTimeout, 10 s by default).

>>> request = NodeRequest(checks=["sysctl"], settings=["sysctl.min_somaxconn=4096"], environ={})
>>> node_params(request)
{'sysctl': {'min_somaxconn': 4096}}
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from preflight import exit_codes
from preflight.app.cluster import Interpreter, load_cluster, node_name, this_host
from preflight.app.selection import Selection, UsageError, select_checks
from preflight.checks import known_params
from preflight.delivery import write_file
from preflight.engine import Engine, RunOptions
from preflight.inventory import ClusterSpec
from preflight.model import RedactedReport
from preflight.ranks import from_slurm
from preflight.render import json_report
from preflight.render.outputs import write_one
from preflight.transport.local import LocalTransport


@dataclass(frozen=True)
class NodeRequest:
    """One ``preflight node``: which checks, with which parameters, for which job."""

    checks: Sequence[str] = ()
    skip: Sequence[str] = ()
    settings: Sequence[str] = ()  # family.key=value items (PREFLIGHT_NODE_SET's, then --set's)
    accelerator: str = "auto"  # auto: what npu-smi / nvidia-smi show
    devices_per_host: int | None = None  # None: what they counted (1 on cpu)
    master_port: int | None = None
    ranks: int | None = None  # None: from Slurm's variables in environ
    hosts: Path | None = None  # hosts.yaml: this node's entry (interpreter, setup, env), the cluster, checks:
    name: str | None = None  # this node's name in hosts.yaml (default: Slurm's, else the host name)
    interpreter: Interpreter | None = None  # --python / --setup and the environment (over hosts.yaml's)
    sudo: bool = False
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    drain_after: str | None = None  # --drain-after (docs/history.md), counted in ``history``
    history: Path | None = None


def parse_settings(items: Sequence[str], known: Mapping[str, Mapping[str, object]]) -> dict[str, dict[str, Any]]:
    """``family.key=value`` items -> the ``checks:`` parameter mapping, typed like the defaults.

    >>> parse_settings(["sysctl.min_somaxconn=4096"], {"sysctl": {"min_somaxconn": 65535}})
    {'sysctl': {'min_somaxconn': 4096}}
    """
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        name, sep, text = item.partition("=")
        family, dot, key = name.strip().partition(".")
        if not sep or not dot or not key:
            raise UsageError(f"--set {item!r}: expected family.key=value (e.g. sysctl.min_somaxconn=4096)")
        if family not in known or key not in known[family]:
            raise UsageError(f"--set {item!r}: unknown parameter {name!r} (see `preflight list-checks`)")
        try:
            value = yaml.safe_load(text) if text.strip() else ""
        except yaml.YAMLError as exc:
            raise UsageError(f"--set {item!r}: bad value: {exc}") from None
        default = known[family][key]
        if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if isinstance(default, str) and not isinstance(value, str):
            value = text.strip()
        if default is not None and (not isinstance(value, type(default))
                                    or isinstance(value, bool) != isinstance(default, bool)):
            raise UsageError(f"--set {item!r}: {name} must be {type(default).__name__}")
        out.setdefault(family, {})[key] = value
    return out


def node_params(request: NodeRequest) -> dict[str, dict[str, Any]]:
    """The request's ``--set`` items, checked against every check's parameters (a usage error else)."""
    return parse_settings(request.settings, known_params())


def node_checks(selected: Sequence[str], skipped: Sequence[str]) -> Selection:
    """The node-scope checks to run (plus the families they need), the ids to report and those to leave out.

    >>> chosen = node_checks(["sysctl"], ["sysctl.port_range"])
    >>> sorted(c.ident for c in chosen.checks), chosen.only, chosen.dropped
    (['sysctl', 'versions'], ('sysctl',), ('sysctl.port_range',))
    """
    return select_checks(selected, skipped, scope="node")


def job_ranks(cluster: ClusterSpec, ranks: int | None, environ: Mapping[str, str]) -> ClusterSpec:
    """``cluster`` with the job's rank count: ``--ranks``, else Slurm's variables, else unknown (0: the
    rendezvous thresholds then judge against their floor only). The checks get it as data, never the environment.

    >>> c = job_ranks(ClusterSpec(devices_per_host=8), None, {"SLURM_JOB_NUM_NODES": "64"})
    >>> c.ranks, c.ranks_reason
    (512, 'SLURM_JOB_NUM_NODES=64 x 8 devices')
    >>> job_ranks(ClusterSpec(), 16, {"SLURM_NTASKS": "4"}).ranks_reason, job_ranks(ClusterSpec(), None, {}).ranks
    ('--ranks 16', 0)
    """
    if ranks is not None:
        return replace(cluster, ranks=ranks, ranks_reason=f"--ranks {ranks}")
    found = from_slurm(environ, cluster.devices_per_host)
    if found is None:
        return replace(cluster, ranks=0, ranks_reason="unknown: no --ranks and no Slurm job")
    return replace(cluster, ranks=found.count, ranks_reason=found.why)


def run_node(request: NodeRequest, seconds: float) -> RedactedReport:
    """Run the node checks on this machine through the local transport, within ``seconds`` (a little is left to
    judge and print), and return the report; UsageError before anything runs."""
    chosen = node_checks(request.checks, request.skip)
    params = node_params(request)
    if request.drain_after is not None:
        from preflight.app.history import check_policy

        check_policy(request.drain_after, request.history)
    inventory = load_cluster(request.hosts, accelerator=request.accelerator, interpreter=request.interpreter)
    if request.hosts:
        here = this_host(inventory, node_name(request.environ, request.name), request.hosts)
        inventory = replace(inventory, hosts=[here])
    cluster = inventory.cluster
    if request.master_port is not None:
        cluster = replace(cluster, master_port=request.master_port)
    if request.devices_per_host is not None:
        cluster = replace(cluster, devices_per_host=request.devices_per_host)
    cluster = job_ranks(cluster, request.ranks, request.environ)
    merged = {family: {**inventory.params.get(family, {}), **values} for family, values in params.items()}
    inventory = replace(inventory, cluster=cluster, params={**inventory.params, **merged})
    budget = max(1.0, seconds - 0.5)  # leave time to judge and print before the hard bound
    options = RunOptions(parallel=1, host_timeout=budget, command_timeout=budget, only=chosen.only,
                         drop=chosen.dropped, sudo=request.sudo)
    engine = Engine(inventory, chosen.checks, options, transport_factory=lambda host: LocalTransport())
    report = engine.run()
    if request.history is not None and any(f.events for f in report.findings):
        from preflight.app.history import with_events

        report = with_events(report, request.history)
    if request.drain_after is not None:
        from preflight import drain
        from preflight.app.history import with_policy

        report = with_policy(drain.apply(report, None)[0], request.drain_after, request.history)
    return report.redacted()


def save(report: RedactedReport, report_dir: Path | None, prometheus: Path | None) -> None:
    """``--report-dir`` (report.json) and ``--prometheus`` (a textfile, atomic): one not written is one line on
    stderr and an OK verdict's exit 4 (``delivery``), never an exception."""
    if report_dir:
        write_file(f"report.json in {report_dir}", partial(json_report.write, report, report_dir))
    if prometheus:
        write_file(f"the prometheus report {prometheus}", partial(write_one, "prometheus", report, prometheus))


class Deadline:
    """A hard wall-clock bound on a whole command: once ``seconds`` have passed, ``expire()`` (the command's
    last word) runs and the process exits ``code`` at once (``os._exit``), whatever still runs: a probe stuck in
    an uninterruptible read must not hold a prolog. Slow is not bad: the default code is 4, never a drain.

    ``settled()`` holds the bound off while the answer is written; after it, or ``cancel()``, the bound is gone.

    >>> with Deadline(60, lambda: None) as bound:
    ...     0 < bound.left() <= 60
    True
    """

    def __init__(self, seconds: float, expire: Callable[[], None], code: int = exit_codes.COULD_NOT_TELL) -> None:
        self.seconds, self.expire, self.code = seconds, expire, code
        self.began = time.monotonic()
        self._lock = threading.Lock()
        self._over = False  # answered (or cancelled): the timer does nothing any more
        self._timer = threading.Timer(seconds, self._stop)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()

    def left(self) -> float:
        """Seconds left before the bound."""
        return self.seconds - (time.monotonic() - self.began)

    def cancel(self) -> None:
        with self._lock:
            self._over = True
            self._timer.cancel()

    @contextmanager
    def settled(self) -> Iterator[None]:
        """The answer is being written: the bound waits for it, then is gone."""
        with self._lock:
            self._over = True
            self._timer.cancel()
            yield

    def _stop(self) -> None:
        with self._lock:
            if self._over:
                return
            self.expire()
            os._exit(self.code)
