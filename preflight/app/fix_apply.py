"""``preflight fix --apply`` and ``--undo``: the executor (``preflight.fix.apply``) over the engine's SSH transports,
the controller's copies of the journals, and the checks the changes touched run again (before -> after per host).

The controller's copies: ``$XDG_STATE_HOME/preflight/fix/<run>/<host>.json`` (default ``~/.local/state``), and
``<run>/run.json`` (when the run was applied, and its plan): ``--undo`` without a run takes the last one applied.
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from preflight import exit_codes
from preflight.app.cluster import load_cluster
from preflight.app.fix import FixRequest, gather
from preflight.app.selection import UsageError
from preflight.engine import ssh_transport_factory
from preflight.fix import apply as executor
from preflight.fix.journal import RUN_FILE, Journal, controller_root, valid_run
from preflight.fix.model import Plan
from preflight.inventory import Host
from preflight.model import Finding, Status
from preflight.transport.base import Transport

Echo = Callable[[str], None]
STILL_FAILING = (Status.FAIL, Status.ERROR)


@dataclass(frozen=True)
class Verified:
    """One fixed finding on one host, before and after (None: not reported then)."""

    host: str
    finding: str
    before: str | None
    after: str | None


@dataclass(frozen=True)
class Outcome:
    """What ``--apply`` or ``--undo`` did: the exit code (docs/exit-codes.md, "preflight fix"), every host's
    result, and the findings run again."""

    exit_code: int
    run_id: str
    hosts: tuple[executor.HostResult, ...] = ()
    verified: tuple[Verified, ...] = ()


def save_copy(root: Path, journal: Journal) -> Path:
    """Write the controller's copy of ``journal`` (``root/<run>/<host>.json``, by rename); its path."""
    if not valid_run(journal.run) or "/" in journal.host or journal.host in ("", ".", ".."):
        raise ValueError(f"cannot name a journal copy for run {journal.run!r}, host {journal.host!r}")
    folder = root / journal.run
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{journal.host}.json"
    tmp = path.with_suffix(f".json.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(journal.dumps(), encoding="utf-8")
    os.replace(tmp, path)
    return path


def save_run(root: Path, plan: Plan, applied: str) -> None:
    """Record, once, that ``plan`` was applied at ``applied`` (and the plan itself)."""
    folder = root / plan.run_id
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / RUN_FILE
    if not path.exists():
        path.write_text(json.dumps({"run": plan.run_id, "applied": applied, "plan": plan.to_dict()}, indent=1)
                        + "\n", encoding="utf-8")


def runs(root: Path) -> list[str]:
    """The runs this controller applied, oldest first (by when they were applied).

    >>> runs(Path("/nonexistent"))
    []
    """
    try:
        folders = [p for p in root.iterdir() if p.is_dir() and valid_run(p.name)]
    except OSError:
        return []

    def applied(folder: Path) -> tuple[str, str]:
        try:
            when = json.loads((folder / RUN_FILE).read_text(encoding="utf-8")).get("applied")
        except (OSError, ValueError, AttributeError):
            when = None
        return (when if isinstance(when, str) else "", folder.name)
    return [p.name for p in sorted(folders, key=applied)]


def _transports(request: FixRequest) -> tuple[dict[str, Host], Callable[[str], Transport], Callable[[str], Transport]]:
    """The hosts by name, the session factory, and a factory of fresh connections (each call a new factory: no
    shared ControlMaster or jump connection stands in for a new one)."""
    inventory = load_cluster(request.hosts, accelerator=request.accelerator)
    if request.transport == "slurm":
        raise UsageError("fix changes hosts over SSH: --transport slurm cannot apply or undo (use ssh or openssh)")
    hosts = {h.name: h for h in inventory.hosts}
    if request.transport == "openssh":
        hosts = {n: replace(h, openssh_reason=h.openssh_reason or "--transport openssh") for n, h in hosts.items()}
    sessions = ssh_transport_factory(request.options)

    def session(name: str) -> Transport:
        return sessions(hosts[name])

    def fresh(name: str) -> Transport:
        return ssh_transport_factory(request.options)(hosts[name])
    return hosts, session, fresh


def _runner(request: FixRequest, echo: Echo, root: Path) -> tuple[dict[str, Host], executor.Runner]:
    hosts, session, fresh = _transports(request)
    lock = threading.Lock()
    unsaved: list[str] = []

    def keep(journal: Journal) -> None:
        try:
            save_copy(root, journal)
        except (OSError, ValueError) as exc:
            with lock:
                if not unsaved:
                    echo(f"warning: the controller's copy of the journal was not written ({exc}); the hosts' own "
                         f"journals ({journal.host}: /var/lib/preflight/journal/{journal.run}.json) are kept")
                unsaved.append(journal.host)

    def say(text: str) -> None:
        with lock:
            echo(text)
    options = request.options
    try:
        user = getpass.getuser()
    except Exception:
        user = str(os.getuid())
    timeout = max(5.0, options.host_timeout)
    return hosts, executor.Runner(session, fresh, keep, say, options.sudo, timeout, options.connect_timeout,
                                  socket.gethostname(), user)


def apply_plan(request: FixRequest, plan: Plan, echo: Echo, before: Sequence[Finding] = ()) -> Outcome:
    """Apply ``plan``'s changes (canary, batches, stop after ``max_failures``), then run the checks they touched
    again and print them before -> after per host. ``before``: the findings the plan was made from."""
    root = controller_root(os.environ)
    hosts, runner = _runner(request, echo, root)
    unknown = [h.host for h in plan.applicable if h.host not in hosts]
    if unknown:
        raise UsageError(f"the plan names hosts that are not in the inventory: {', '.join(unknown)}")
    try:
        save_run(root, plan, datetime.now(timezone.utc).isoformat(timespec="seconds"))
    except OSError as exc:
        echo(f"warning: {root / plan.run_id}: {exc.strerror or exc} (the hosts' journals are written still)")
    by_host = {h.host: h for h in plan.applicable}
    echo(f"applying run {plan.run_id} on {len(by_host)} host{'s' * (len(by_host) != 1)}")
    started = time.monotonic()
    results = executor.rollout(list(by_host), lambda name: executor.apply_host(plan, by_host[name], runner), runner,
                               request.max_parallel, request.max_failures)
    echo(_tally(results, time.monotonic() - started))
    verified = verify(request, plan, results, before, echo)
    return Outcome(apply_code(results, verified), plan.run_id, tuple(results), tuple(verified))


def _tally(results: Sequence[executor.HostResult], seconds: float) -> str:
    """How many hosts ended how, and how long it took.

    >>> _tally([executor.HostResult("a", "applied"), executor.HostResult("b", "applied"),
    ...         executor.HostResult("c", "lost")], 2.04)
    '3 hosts in 2.0 s: 2 applied, 1 lost'
    """
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    return (f"{len(results)} host{'s' * (len(results) != 1)} in {seconds:.1f} s: "
            + ", ".join(f"{n} {status}" for status, n in counts.items()))


def verify(request: FixRequest, plan: Plan, results: Sequence[executor.HostResult], before: Sequence[Finding],
           echo: Echo) -> list[Verified]:
    """The findings the applied changes fix, run again (``Change.verify``): before -> after, per host."""
    changed = set(executor.applied_hosts(results))
    wanted = {h.host: sorted({i for c in h.applicable for i in (c.verify or c.fixes)}) for h in plan.applicable
              if h.host in changed}
    ids = sorted({i for found in wanted.values() for i in found})
    if not ids:
        return []
    echo(f"checking again: {', '.join(ids)}")
    after = _worst(gather(request, checks=ids).findings)
    then = _worst(before)
    fixes = {(h.host, i) for h in plan.applicable for c in h.applicable for i in c.fixes}
    rows = [Verified(host, i, then.get((host, i)) or ("fail" if not before and (host, i) in fixes else None),
                     after.get((host, i))) for host, found in wanted.items() for i in found]
    for host in wanted:
        echo(f"{host}:")
        for row in (r for r in rows if r.host == host):
            echo(f"  {row.finding}: {row.before or '-'} -> {row.after or 'not reported'}")
    return rows


def _worst(findings: Sequence[Finding]) -> dict[tuple[str, str], str]:
    order = list(Status)
    worst: dict[tuple[str, str], Status] = {}
    for f in findings:
        if f.host is None:
            continue
        key = (f.host, f.check)
        if key not in worst or order.index(f.status) > order.index(worst[key]):
            worst[key] = f.status
    return {k: v.value for k, v in worst.items()}


def apply_code(results: Sequence[executor.HostResult], verified: Sequence[Verified]) -> int:
    """4 a host could not be changed (failed, rolled back, lost, unreachable, not attempted), 5 refused on purpose,
    1 a fixed finding still failing (or a container's remedy to apply by hand), else 0.

    >>> apply_code([executor.HostResult("n1", "applied")], [Verified("n1", "sysctl.somaxconn", "fail", "pass")])
    0
    >>> apply_code([executor.HostResult("n1", "applied"), executor.HostResult("n2", "refused")], [])
    5
    """
    codes = [exit_codes.COULD_NOT_TELL if r.failed else exit_codes.REFUSED if r.status in executor.REFUSED
             else exit_codes.PROBLEMS if r.status == "container" else exit_codes.OK for r in results]
    codes += [exit_codes.PROBLEMS for v in verified if v.after in {s.value for s in STILL_FAILING}]
    return exit_codes.for_fix(*codes)


def last_run(root: Path) -> str:
    """The last run this controller applied; UsageError when there is none."""
    found = runs(root)
    if not found:
        raise UsageError(f"no fix run recorded in {root}: name the run (preflight fix --undo RUN)")
    return found[-1]


def undo_run(request: FixRequest, run_id: str | None, echo: Echo) -> Outcome:
    """Put back what run ``run_id`` (None: the last one this controller applied) changed on every host of the
    inventory that has its journal, refusing per file and value what changed again since."""
    root = controller_root(os.environ)
    run = run_id or last_run(root)
    if not valid_run(run):
        raise UsageError(f"not a run id: {run!r}")
    hosts, runner = _runner(request, echo, root)
    known = _journaled(root, run)
    names = [h for h in hosts if not known or h in known]
    echo(f"undoing run {run} on {len(names)} host{'s' * (len(names) != 1)}")
    started = time.monotonic()
    results = executor.rollout(names, lambda name: executor.undo_host(run, name, runner), runner,
                               request.max_parallel, None, canary=False)
    echo(_tally(results, time.monotonic() - started))
    codes = [exit_codes.COULD_NOT_TELL if r.failed or r.status == "unreachable" else
             exit_codes.REFUSED if r.status in ("refused", "partly undone") else exit_codes.OK for r in results]
    return Outcome(exit_codes.for_fix(*codes), run, tuple(results))


def _journaled(root: Path, run: str) -> Mapping[str, Path]:
    """The hosts this controller has a copy of the run's journal for (empty: ask every host)."""
    folder = root / run
    try:
        return {p.stem: p for p in folder.glob("*.json") if p.name != RUN_FILE}
    except OSError:
        return {}
