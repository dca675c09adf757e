"""The executor of ``fix --apply`` and ``fix --undo``, over transports the application hands in (:class:`Runner`).

Per host, on one session (a transport kept for the host's whole apply):

1. the lock: ``flock -n /run/lock/preflight-fix.lock`` taken and held on a channel of its own until the end
   (``scripts.holder``); a host another fix holds is refused at once, naming it;
2. the host now (``state``: files, values in /proc/sys, the rules, whether /proc/sys is read-only), read-only;
   per change: apply, already in force (nothing done: applying twice changes nothing), refused (not as planned)
   or a container's remedy printed;
3. the changes in order, the journal on the host written before each (intent) and after (done / failed), one
   syslog line each; a failed change is put back at once (the others stay);
4. a fresh connection (a new transport, never this session): when it fails, every change of the run on the host
   is rolled back through the still-open session, and the host is reported rolled back;
5. the lock released.

The rollout: one canary host first, alone (when it fails, nothing else is tried); then at most ``max_parallel``
hosts at once, none started once ``max_failures`` hosts failed (the rest: not attempted). A host lost mid-apply
(its script never came back) is reported with what the controller saw of it; the journal on the host is the true
one.

>>> HostResult("n1", "applied").failed, HostResult("n1", "rolled back").failed
(False, True)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace

from preflight.batch import Probe, ProbeOutput, build_script, new_nonce, parse_output
from preflight.fix import scripts, state
from preflight.fix.journal import Journal, UndoRecord, new_journal, read_journal, seen
from preflight.fix.model import Change, HostPlan, Plan
from preflight.transport.base import Transport, TransportError

FAILED = ("failed", "rolled back", "lost", "unreachable", "not attempted")
REFUSED = ("refused",)


@dataclass(frozen=True)
class Runner:
    """What the application hands in: ``session`` (host -> a new transport, kept for the host's whole apply),
    ``fresh`` (host -> a transport on a new connection, for the check after the change), ``keep`` (save the
    controller's copy of a journal), ``echo`` (a line for the user), and how."""

    session: Callable[[str], Transport]
    fresh: Callable[[str], Transport]
    keep: Callable[[Journal], None]
    echo: Callable[[str], None]
    sudo: bool = False
    timeout: float = 60.0  # one script's seconds (reading the host, applying, undoing)
    connect_timeout: float = 10.0
    controller: str = ""
    user: str = ""

    @property
    def hold(self) -> float:
        """How long the lock may be held at most: the whole apply, a rollback and the fresh connection."""
        return 4 * self.timeout + 2 * self.connect_timeout + 60


@dataclass
class HostResult:
    """What became of one host: ``status`` applied, nothing to do, container, refused, failed, rolled back, lost,
    unreachable, not attempted (apply); undone, partly undone, nothing to undo (undo)."""

    host: str
    status: str
    detail: list[str] = field(default_factory=list)
    journal: Journal | None = None

    @property
    def failed(self) -> bool:
        return self.status in FAILED or self.status == "partly undone" and any("failed" in d for d in self.detail)


class Refused(Exception):
    """The host is left alone on purpose (its lock is held, the user is not root)."""


def run_probes(transport: Transport, probes: Sequence[Probe], timeout: float, sudo: bool,
               ) -> tuple[dict[str, ProbeOutput], str, str]:
    """``probes`` as one framed script: key -> output, the raw stdout, the nonce; outputs that say why they did
    not run when the transport failed (never raises)."""
    nonce = new_nonce()
    wrapped = [replace(p, command=scripts.wrap(p.command, sudo)) for p in probes]
    try:
        execution = transport.run_script(build_script(wrapped, nonce), timeout)
    except Exception as exc:
        failed = ProbeOutput("", f"not run: {type(exc).__name__}: {exc}", None)
        return dict.fromkeys([p.key for p in probes], failed), "", nonce
    outputs = parse_output(execution.stdout, [p.key for p in probes], nonce, execution.stderr)
    return outputs, execution.stdout.decode("utf-8", "replace"), nonce


class Lock:
    """The host's fix lock, held by a probe on its own channel of the session until :meth:`release`."""

    def __init__(self, transport: Transport, run: str, runner: Runner) -> None:
        self.transport, self.run, self.runner = transport, run, runner
        owner = scripts.owner_line(run, runner.controller, runner.user)
        self._pool = ThreadPoolExecutor(max_workers=1)
        probe = Probe("hold", scripts.holder(run, owner), runner.hold)
        self.future: Future[tuple[dict[str, ProbeOutput], str, str]] = self._pool.submit(
            run_probes, transport, [probe], runner.hold + 10, runner.sudo)

    def holder_says(self) -> str:
        """What the holder printed when it ended already (busy, error), else ""."""
        if not self.future.done():
            return ""
        out = self.future.result()[0]["hold"]
        return (out.stdout.strip() or out.stderr.strip()).splitlines()[0] if (out.stdout or out.stderr) else ""

    def release(self, alive: bool = True) -> None:
        """Let the lock go (``alive`` False: the session is lost, its end frees the lock on the host)."""
        if alive and not self.future.done():
            run_probes(self.transport, [Probe("release", scripts.release(self.run), 10)], 15, self.runner.sudo)
            wait([self.future], timeout=5)
        self._pool.shutdown(wait=False)


def inspect(transport: Transport, changes: Sequence[Change], run: str, runner: Runner,
            journal: bool = False) -> state.Inspection:
    asked = state.probes(changes, run, journal)
    return state.parse(asked, run_probes(transport, asked.probes, runner.timeout, runner.sudo)[0])


def check_access(now: state.Inspection, lock: Lock, sudo: bool) -> None:
    """Refused unless this run holds the lock and runs as root."""
    if now.lock != "ours":
        said = lock.holder_says() or now.lock
        if said.startswith("busy"):
            line = said[4:].strip()
            raise Refused(f"another fix holds the host's lock ({state.LOCK}): {line or 'no owner written'}")
        raise Refused(f"could not take the host's lock {state.LOCK}: {said}")
    if now.uid != "0":
        why = "; ".join(now.problems) if now.uid == "" else f"uid {now.uid}"
        raise Refused(f"not root ({why}): " + ("sudo -n failed" if sudo else "run with --sudo"))


def fresh_connection(host: str, runner: Runner) -> str | None:
    """None when a new connection to ``host`` works, else why not."""
    transport = runner.fresh(host)
    try:
        transport.connect()
        out = run_probes(transport, [Probe("fresh", f"echo {scripts.FRESH}", 5)],
                         runner.connect_timeout + 10, False)[0]["fresh"]
        return None if out.stdout.strip() == scripts.FRESH else f"a new session did not answer ({out.stderr.strip()})"
    except TransportError as exc:
        return exc.message
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        try:
            transport.close()
        except Exception:
            pass


def _run_program(transport: Transport, journal: Journal, program: str, nonce: str,
                 runner: Runner) -> tuple[Journal, str]:
    """Run an apply or undo program: the journal the host wrote and "" — or what the controller saw of it and why
    the host's did not come back."""
    outputs, stdout, _ = run_probes(transport, [Probe("fix", program, runner.timeout)], runner.timeout + 10,
                                    runner.sudo)
    out = outputs["fix"]
    text = scripts.journal_text(out.stdout, nonce) if out.exit_status is not None else None
    if text is not None:
        try:
            return read_journal(text), ""
        except ValueError as exc:
            return seen(journal, stdout, nonce), f"the host's journal came back unreadable: {exc}"
    if f"{scripts.JOURNAL_FAILED} {nonce}" in stdout:
        return journal, f"could not write the journal on the host: {out.stderr.strip() or 'no reason given'}"
    why = out.stderr.strip() or f"exit status {out.exit_status}"
    return seen(journal, stdout, nonce), f"the host did not finish ({why})"


def rollback(transport: Transport, journal: Journal, runner: Runner, by: str,
             only: Sequence[int] | None = None) -> tuple[Journal, str]:
    """Put back the changes of ``journal`` still in force (``only``: those entries), through ``transport``."""
    entries = [e.change for i, e in enumerate(journal.entries) if e.in_force and (only is None or i in only)]
    now = inspect(transport, entries, journal.run, runner)
    steps = state.undo_steps(journal, now, only)
    if not steps:
        return journal, ""
    for step in steps:
        preset = None if step.acts else ("refused" if step.refused else "undone")
        journal = journal.with_entry(step.index, undo=UndoRecord(by, preset, None, step.refused + step.gone))
    nonce = new_nonce()
    outcome = "undone" if by == "undo" else "rolled back"
    return _run_program(transport, journal, scripts.undo_program(journal, steps, nonce, outcome), nonce, runner)


def apply_host(plan: Plan, host_plan: HostPlan, runner: Runner) -> HostResult:
    """Apply one host's changes (module docstring, steps 1-5)."""
    host, changes = host_plan.host, host_plan.applicable
    journal = new_journal(plan.run_id, host, changes, controller=runner.controller, user=runner.user,
                          policy=plan.policy, created=plan.created)
    transport = runner.session(host)
    lock: Lock | None = None
    result: HostResult | None = None
    try:
        transport.connect()
        lock = Lock(transport, plan.run_id, runner)
        now = inspect(transport, changes, plan.run_id, runner)
        check_access(now, lock, runner.sudo)
        result = _apply(transport, journal, state.apply_decisions(changes, now, plan.run_id), runner)
        return result
    except TransportError as exc:
        return HostResult(host, "unreachable", [exc.message])
    except Refused as exc:
        return HostResult(host, "refused", [str(exc)])
    finally:
        if lock is not None:
            lock.release(alive=result is None or result.status != "lost")
        _close(transport)


def _apply(transport: Transport, journal: Journal, decisions: Sequence[state.Decision], runner: Runner) -> HostResult:
    host = journal.host
    for index, decision in enumerate(decisions):
        if decision.action != "apply":
            journal = journal.with_entry(index, state=decision.action, note=decision.note)
    notes = [f"{e.change.summary}: {e.state}" + (f" ({e.note})" if e.note else "")
             for e in journal.entries if e.state != "planned"]
    if not any(d.action == "apply" for d in decisions):
        actions = {d.action for d in decisions}
        status = "refused" if "refused" in actions else "container" if "container" in actions else "nothing to do"
        return HostResult(host, status, notes, replace(journal, outcome="nothing to do"))
    runner.keep(replace(journal, outcome="applying"))  # the controller's copy says what is about to happen
    nonce = new_nonce()
    journal, lost = _run_program(transport, journal, scripts.apply_program(journal, decisions, nonce), nonce, runner)
    runner.keep(journal)
    if lost:
        return HostResult(host, "lost", [lost, *_states(journal)], journal)
    failed = [i for i, e in enumerate(journal.entries) if e.state == "failed"]
    detail = _states(journal)
    if failed:  # what the failed change wrote goes back; the changes before it stay
        journal, why = rollback(transport, journal, runner, "rollback", only=failed)
        runner.keep(journal)
        detail.append(f"the failed change was put back{': ' + why if why else ''}")
    broken = fresh_connection(host, runner)
    if broken is None:
        return HostResult(host, "failed" if failed else "applied", detail, journal)
    journal, why = rollback(transport, journal, runner, "rollback")
    runner.keep(journal)
    again = fresh_connection(host, runner)
    return HostResult(host, "rolled back", [
        f"a new SSH connection failed after the change ({broken}): every change rolled back"
        + (f" ({why})" if why else ""),
        "a new connection works again" if again is None else f"a new connection still fails: {again}",
        *_states(journal)], journal)


def _states(journal: Journal) -> list[str]:
    lines = []
    for entry in journal.entries:
        undo = f", {entry.undo.by}: {entry.undo.state}" if entry.undo is not None else ""
        lines.append(f"{entry.change.summary}: {entry.state}{undo}" + (f" ({entry.note})" if entry.note else ""))
    return lines


def _close(transport: Transport) -> None:
    try:
        transport.close()
    except Exception:
        pass


def undo_host(run: str, host: str, runner: Runner) -> HostResult:
    """Put back what ``run`` changed on ``host`` (its journal there), refusing what changed again since."""
    transport = runner.session(host)
    lock: Lock | None = None
    try:
        transport.connect()
        lock = Lock(transport, run, runner)
        first = inspect(transport, [], run, runner, journal=True)
        check_access(first, lock, runner.sudo)
        if first.journal is None:
            return HostResult(host, "nothing to undo", [f"no journal of run {run} on the host"])
        try:
            journal = read_journal(first.journal)
        except ValueError as exc:
            return HostResult(host, "failed", [f"the host's journal of run {run}: {exc}"])
        if not any(e.in_force for e in journal.entries):
            return HostResult(host, "nothing to undo", ["nothing of the run is in force"], journal)
        journal, lost = rollback(transport, journal, runner, "undo")
        runner.keep(journal)
        if lost:
            return HostResult(host, "failed", [lost, *_undone(journal)], journal)
        status = "undone" if journal.outcome == "undone" else "partly undone"
        return HostResult(host, status, _undone(journal), journal)
    except TransportError as exc:
        return HostResult(host, "unreachable", [exc.message])
    except Refused as exc:
        return HostResult(host, "refused", [str(exc)])
    finally:
        if lock is not None:
            lock.release()
        _close(transport)


def _undone(journal: Journal) -> list[str]:
    lines = []
    for entry in journal.entries:
        if entry.undo is None:
            continue
        lines.append(f"{entry.change.summary}: {entry.undo.state}")
        lines += [f"  left alone: {why}" for why in entry.undo.refused if "already" not in why]  # not the gone
    return lines


def rollout(hosts: Sequence[str], job: Callable[[str], HostResult], runner: Runner, max_parallel: int,
            max_failures: int | None, canary: bool = True) -> list[HostResult]:
    """``job`` on every host: the first alone when ``canary`` (its failure stops everything), then at most
    ``max_parallel`` at once; none started once ``max_failures`` failed. Results in ``hosts``' order."""
    results: dict[str, HostResult] = {}
    lock = threading.Lock()

    def done(result: HostResult) -> None:
        with lock:
            results[result.host] = result
        runner.echo(describe(result))

    pending = list(hosts)
    stop = ""
    if canary and pending:
        first = pending.pop(0)
        runner.echo(f"{first}: canary, applying first")
        done(job(first))
        if results[first].failed:
            stop = f"the canary {first} {results[first].status}"
    failures = sum(r.failed for r in results.values())
    with ThreadPoolExecutor(max_workers=max(1, max_parallel)) as pool:
        running: set[Future[HostResult]] = set()
        while pending and not stop:
            while pending and len(running) < max_parallel:
                running.add(pool.submit(job, pending.pop(0)))
            finished, running = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                done(future.result())
                failures += future.result().failed
            if max_failures is not None and failures >= max_failures:
                stop = f"{failures} host{'s' * (failures != 1)} failed (--max-failures {max_failures})"
        for future in running:
            done(future.result())
    for host in pending:
        done(HostResult(host, "not attempted", [f"stopped: {stop}"]))
    return [results[h] for h in hosts]


def describe(result: HostResult) -> str:
    """One host's result for the terminal: the status, then its details indented.

    >>> print(describe(HostResult("n1", "refused", ["another fix holds the host's lock"])))
    n1: refused
      another fix holds the host's lock
    """
    return "\n".join([f"{result.host}: {result.status}", *(f"  {line}" for line in result.detail)])


def applied_hosts(results: Iterable[HostResult]) -> list[str]:
    """The hosts where a change is now in force (what the verification re-checks)."""
    return [r.host for r in results if r.journal is not None and any(e.in_force for e in r.journal.entries)]
