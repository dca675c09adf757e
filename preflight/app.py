"""The application layer under every command: choose the checks, load the inventory, run the engine, save.

``cli`` and ``commands/*`` parse arguments and render; what a run *is* lives here, once:

- :func:`select_checks`: ``--checks``/``--skip`` -> the checks to run (with the families they need,
  transitively) and the finding ids to report;
- :func:`load_cluster`: hosts.yaml (or this machine) plus ``--rank-table`` -> an Inventory;
- :func:`run_cluster`: a :class:`RunRequest` -> the report (``complete`` False when interrupted);
- :func:`save`: report.json, report.html and the extra formats.

What the application hands back is redacted once, here (``Report.redacted()``): renderers and writers take
only a :class:`~preflight.model.RedactedReport`.

>>> chosen = select_checks(["sysctl"], [])
>>> [c.ident for c in chosen.checks], chosen.only
(['versions', 'sysctl'], ('sysctl',))
"""

from __future__ import annotations

import difflib
import json
import shutil
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path

from preflight import drain
from preflight.accelerator import CHOICES, Choice, detect_here
from preflight.checks import all_checks, known_params
from preflight.checks.base import Check, finding_ids
from preflight.delivery import write_file
from preflight.engine import Engine, RunOptions, settled_heap
from preflight.interpreter import with_interpreter
from preflight.inventory import Host, Inventory, InventoryError, load_inventory, local_inventory
from preflight.model import RedactedReport
from preflight.render import html as html_report
from preflight.render import json_report
from preflight.render.outputs import ReportOutputs


class UsageError(Exception):
    """Bad input found before anything ran (exit_codes.USAGE); the message names what and where."""


@dataclass(frozen=True)
class Interpreter:
    """The job's interpreter as the command line names it: ``--python``, ``--setup`` lines, and the
    environment they fall back to (``PREFLIGHT_PYTHON`` / ``PREFLIGHT_SETUP``)."""

    python: str | None = None
    setup: Sequence[str] = ()
    environ: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Selection:
    """The checks to run, the finding-id prefixes to report (empty: report all) and the finding ids to drop."""

    checks: list[Check]
    only: tuple[str, ...]
    dropped: tuple[str, ...] = ()  # `--skip ID` of a finding id: its check runs, these findings are left out


def known_items(checks: Sequence[Check]) -> set[str]:
    """Everything ``--checks``/``--skip`` accept: families, check idents and every declared finding id.

    >>> {"sysctl", "gpu.devices", "sysctl.somaxconn", "hccn.link.up"} <= known_items(all_checks())
    True
    """
    return {item for c in checks for item in (c.family, c.ident, *finding_ids(c))}


def unknown_item(item: str, known: Sequence[str] | set[str]) -> str:
    """The usage error for an item no check knows, with the closest known one.

    >>> unknown_item("sysctl.somaxcon", {"sysctl.somaxconn", "sysctl.port_range", "os"})
    "unknown check 'sysctl.somaxcon' (did you mean sysctl.somaxconn?)"
    >>> unknown_item("zzz", {"os"})
    "unknown check 'zzz' (see `preflight list-checks`)"
    """
    close = difflib.get_close_matches(item, sorted(known), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}?" if close else "see `preflight list-checks`"
    return f"unknown check {item!r} ({hint})"


def _asks_for(check: Check, item: str) -> bool:
    """Whether ``--checks item`` runs ``check``: a family runs its default checks only (``--checks npu`` is not the
    slow torch_npu import); a check named by its ident or one of its finding ids runs whatever its default.

    >>> from preflight.checks import all_checks
    >>> torch = next(c for c in all_checks() if c.ident == "npu.torch")
    >>> _asks_for(torch, "npu"), _asks_for(torch, "npu.torch")
    (False, True)
    """
    return check.selected_by(item) and (check.by_default or item != check.family or item == check.ident)


def select_checks(selected: Sequence[str], skipped: Sequence[str], scope: str | None = None) -> Selection:
    """``--checks`` / ``--skip`` items -> the checks to run, with every family they need (transitively), what to
    report and what to leave out. ``scope="node"``: only checks judged from one host.

    An item is a family, a check ident or a finding id (what the checks declare, ``finding_ids``); anything
    else is a UsageError with a did-you-mean, so a typo never silently selects nothing. ``--skip`` of a
    family or check ident drops the check; of a finding id, only that id's findings (the check still runs).

    >>> [c.ident for c in select_checks(["sysctl.somaxconn"], ["versions"]).checks]  # sysctl needs versions
    ['versions', 'sysctl']
    >>> chosen = select_checks(["sysctl"], ["sysctl.somaxconn"])
    >>> [c.ident for c in chosen.checks], chosen.dropped
    (['versions', 'sysctl'], ('sysctl.somaxconn',))
    """
    everything = all_checks()
    known = known_items(everything)
    unknown = [s for s in dict.fromkeys([*selected, *skipped]) if s not in known]
    if unknown:
        raise UsageError("; ".join(unknown_item(s, known) for s in unknown))
    pool = [c for c in everything if scope is None or c.scope == scope]
    if scope is not None:
        elsewhere = [s for s in selected if not any(c.selected_by(s) for c in pool)]
        if elsewhere:
            raise UsageError(f"{', '.join(elsewhere)}: not a node check (it needs the other hosts: "
                             "use `preflight run`)")
    whole = {c.family for c in everything} | {c.ident for c in everything}
    skip_checks = [s for s in skipped if s in whole]
    dropped = tuple(s for s in skipped if s not in whole)
    wanted = {c.ident for c in pool if not any(c.selected_by(s) for s in skip_checks)
              and ((not selected and c.by_default) or any(_asks_for(c, s) for s in selected))}
    if not wanted:
        asked = f"--checks {','.join(selected)} " if selected else ""
        raise UsageError(f"{asked}--skip {','.join(skipped)}: no check left to run")
    by_ident = {c.ident: c for c in pool}
    needed: set[str] = set()
    todo = [n for c in pool if c.ident in wanted for n in c.needs]
    while todo:  # transitive: what a needed check needs is gathered too
        ident = todo.pop()
        if ident in by_ident and ident not in needed | wanted:
            needed.add(ident)
            todo.extend(by_ident[ident].needs)
    chosen = [c for c in pool if c.ident in wanted | needed]
    # Families gathered only because another check needs their facts are not reported.
    only = tuple(selected) or (tuple(sorted(wanted)) if needed - wanted else ())
    return Selection(chosen, only, dropped)


def load_cluster(hosts: Path | None, rank_table: Path | None = None, accelerator: str = "auto",
                 interpreter: Interpreter | None = None) -> Inventory:
    """hosts.yaml (None: this machine) with ``--accelerator``, ``--rank-table`` and the job's interpreter folded in.

    ``accelerator``: npu | gpu | cpu overrides hosts.yaml; ``auto`` keeps hosts.yaml's, and on this machine
    (no hosts file) asks npu-smi / nvidia-smi (``preflight.accelerator``). The report says which and why.
    ``interpreter``: ``--python`` / ``--setup`` and the environment they fall back to
    (``preflight.interpreter``: flag over environment over hosts.yaml), for every host.
    """
    try:
        inventory = load_inventory(hosts, known_params()) if hosts else local_inventory()
    except InventoryError as exc:
        raise UsageError(str(exc)) from None
    if interpreter is not None:
        inventory = replace(inventory, hosts=[with_interpreter(h, interpreter.python, interpreter.setup,
                                                               interpreter.environ) for h in inventory.hosts])
    if accelerator not in CHOICES:
        raise UsageError(f"--accelerator must be one of {', '.join(CHOICES)}, not {accelerator!r}")
    if accelerator != "auto":
        choice = Choice(accelerator, f"--accelerator {accelerator}")
    elif hosts is None:
        choice = detect_here()
    else:
        choice = Choice(inventory.cluster.accelerator, inventory.cluster.accelerator_reason)
    cluster = replace(inventory.cluster, accelerator=choice.accelerator, accelerator_reason=choice.reason)
    if hosts is None and choice.devices:  # this machine: expect what the tool counted (--devices-per-host: node)
        cluster = replace(cluster, devices_per_host=choice.devices)
    inventory = replace(inventory, cluster=cluster)
    if rank_table is None:
        return inventory
    try:
        table = json.loads(rank_table.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{rank_table}: cannot read the rank table: {exc}") from None
    hccn = {**inventory.params.get("hccn", {}), "rank_table": table}
    return replace(inventory, params={**inventory.params, "hccn": hccn})


def this_host(inventory: Inventory, name: str, hosts: Path) -> Host:
    """This machine's entry in hosts.yaml (``node --hosts``): by name or address, else by short name.

    >>> from preflight.inventory import ClusterSpec, Host
    >>> this_host(Inventory([Host("gpu01.example", "10.0.0.1")], ClusterSpec()), "gpu01", Path("h.yaml")).address
    '10.0.0.1'
    """
    for host in inventory.hosts:
        if name in (host.name, host.address):
            return host
    short = name.split(".")[0]
    for host in inventory.hosts:
        if short == host.name.split(".")[0]:
            return host
    raise UsageError(f"{name!r} is not a host of {hosts} (give this node's name there with --name)")


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


@dataclass(frozen=True)
class RunResult:
    report: RedactedReport
    complete: bool
    engine: Engine  # what was gathered, for --record


def prepare(request: RunRequest) -> Engine:
    """Validate the request and build the engine (its ``on_host_done`` is the caller's to set); UsageError
    before anything runs."""
    from preflight.transport import slurm as slurm_transport

    inventory = load_cluster(request.hosts, request.rank_table, request.accelerator, request.interpreter)
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
    return Engine(inventory, selection.checks, options, transport_factory=factory, batching=batch)


def run_cluster(request: RunRequest, engine: Engine | None = None,
                gathering: AbstractContextManager[object] | None = None) -> RunResult:
    """Run the request (on ``engine`` when :func:`prepare` built one already) and judge it; never raises on
    an interruption: the result is then marked incomplete and holds what was gathered."""
    engine = engine or prepare(request)
    complete = engine.run_interruptible(gathering=gathering)
    report = drain.apply(engine.report(complete=complete), request.max_unhealthy)[0]
    if request.outputs:
        report = request.outputs.with_baseline(report)
    return RunResult(report.redacted(), complete, engine)


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
