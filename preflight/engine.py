"""The engine: gather every host's probes in one round trip each, concurrently, then evaluate.

It owns all I/O. Checks only declare probes and judge facts; a host that cannot be reached, or
does not finish in time, becomes an ``error`` finding while every other host is still checked.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timezone
from types import FrameType

from preflight import __version__
from preflight.batch import NOT_RUN, SUDO_CHECK, Probe, ProbeOutput, as_root, build_script, new_nonce, parse_output
from preflight.checks.base import (
    ActiveCheck,
    Check,
    EvalContext,
    Facts,
    Overlap,
    Step,
    StepOutcome,
    accelerator_skip,
    applies,
    planned_probes,
)
from preflight.inventory import Host, Inventory
from preflight.model import Finding, HostResult, Report, Status
from preflight.redact import redact_report
from preflight.transport.base import Batching, OutputWatcher, Transport, TransportError
from preflight.transport.local import LocalTransport

TransportFactory = Callable[[Host], Transport]


@dataclass(frozen=True)
class RunOptions:
    parallel: int = 64
    connect_timeout: float = 10.0
    command_timeout: float | None = None  # caps every probe's own timeout
    host_timeout: float = 60.0  # bounds one host's whole gather, connect included
    accept_new_host_keys: bool = False
    only: Sequence[str] = ()  # finding-id prefixes to keep (families or dotted ids)
    sudo: bool = False  # run probes marked root=True under `sudo -n` (never waits for a password)


@dataclass
class HostGather:
    """What came back from one host."""

    host: Host
    result: HostResult
    outputs: dict[str, dict[str, ProbeOutput]] = field(default_factory=dict)  # check ident -> probe key -> output
    findings: list[Finding] = field(default_factory=list)


def ssh_transport_factory(options: RunOptions) -> TransportFactory:
    # paramiko (~85 ms of imports) only when a run may use SSH: `preflight node` never does. Imported here, once,
    # not in the worker threads that call make().
    from preflight.transport.ssh import SSHTransport

    def make(host: Host) -> Transport:
        if host.address in ("localhost", "local") and host.proxy_jump is None and host.port == 22 \
                and host.identity_file is None:
            return LocalTransport()
        return SSHTransport(host, options.connect_timeout, options.accept_new_host_keys)
    return make


class Engine:
    def __init__(
        self,
        inventory: Inventory,
        checks: Sequence[Check],
        options: RunOptions = RunOptions(),
        transport_factory: TransportFactory | None = None,
        on_host_done: Callable[[HostGather], None] | None = None,
        batching: Batching | None = None,
    ) -> None:
        self.inventory = inventory
        self.checks = list(checks)
        self.options = options
        self.make_transport = transport_factory or ssh_transport_factory(options)
        self.on_host_done = on_host_done
        self.batching = batching  # the transport runs each round of scripts as one command (srun)
        self.gathered: dict[str, HostGather] = {}
        self.outcomes: dict[str, list[StepOutcome]] = {}  # active check ident -> its steps' outcomes
        self.keep_open = any(isinstance(c, ActiveCheck) for c in self.checks)
        self._lock = threading.Lock()
        self._live: dict[str, Transport] = {}
        self._open: dict[str, Transport] = {}
        self._facts: tuple[dict[str, dict[str, Facts]], list[Finding]] | None = None
        self._overlaps: list[_Overlapping] = []
        self._servers: ThreadPoolExecutor | None = None  # runs the overlaps' server probes
        self.started = datetime.now(timezone.utc)

    # --- gather ---------------------------------------------------------------------------------

    def plan(self, host: Host) -> list[tuple[Check, Probe]]:
        """Every probe for ``host``, with keys made unique as ``ident/key``."""
        cap = self.options.command_timeout
        planned = []
        for check in self.checks:
            for probe in planned_probes(check, host, self.inventory.cluster):
                timeout = min(probe.timeout, cap) if cap else probe.timeout
                command = as_root(probe.command) if self.options.sudo and probe.root else probe.command
                planned.append((check, Probe(f"{check.ident}/{probe.key}", command, timeout)))
        return planned

    def gather_host(self, host: Host) -> HostGather:
        serving = [o for o in self._overlaps if o.plan.server == host.name]
        try:
            return self._gather_host(host, serving)
        finally:
            for overlap in serving:
                overlap.gate.set()  # already set once the server said ready; else its clients go on without it

    def _gather_host(self, host: Host, serving: Sequence[_Overlapping]) -> HostGather:
        start = time.monotonic()
        transport = self.make_transport(host)
        with self._lock:
            self._live[host.name] = transport
        try:
            transport.connect()
            clients = self._client_probes(host, start)
            planned = self.plan(host)
            nonce = new_nonce()
            remaining = max(1.0, self.options.host_timeout - (time.monotonic() - start))
            sudo = [Probe(_SUDO_KEY, SUDO_CHECK, 5.0)] if self.options.sudo else []
            unique, same_as = dedupe([p for _, p in planned] + [p for _, p in clients])
            script = build_script(sudo + unique, nonce, sent_at=time.time())  # os.clock's reference
            execution = transport.run_script(script, remaining)
            outputs = parse_output(execution.stdout, [p.key for p in sudo + unique], nonce, execution.stderr)
            outputs.update({key: outputs[first] for key, first in same_as.items()})
            for overlap, probe in clients:
                overlap.clients.setdefault(host.name, {})[probe.key.rsplit("/", 1)[1]] = outputs[probe.key]
        except TransportError as exc:
            transport.close()
            return self._unreachable(host, start, exc.kind, exc.message)
        except Exception as exc:  # a transport bug or a dropped connection must not end the run
            transport.close()
            return self._unreachable(host, start, "ssh", f"{type(exc).__name__}: {exc}")
        except BaseException:
            transport.close()
            raise
        finally:
            with self._lock:
                self._live.pop(host.name, None)
        if self.keep_open and not execution.timed_out:
            with self._lock:
                self._open[host.name] = transport  # reused by the active phase, closed by close()
            for overlap in serving:
                self._start_server(overlap)
        else:
            transport.close()
        seconds = time.monotonic() - start
        gather = HostGather(host, HostResult(host.name, host.address, True, seconds),
                            outputs={check.ident: {} for check in self.checks})
        for check, probe in planned:
            gather.outputs.setdefault(check.ident, {})[probe.key.split("/", 1)[1]] = outputs[probe.key]
        if execution.timed_out:
            unfinished = sorted({c.ident for c, p in planned if outputs[p.key].exit_status is None})
            gather.findings.append(Finding(
                "ssh.session", host.name, Status.ERROR,
                f"ssh.session: {host.name} did not finish within {self.options.host_timeout:g} s; "
                f"checks not completed: {', '.join(unfinished) or 'none'}",
                observed=f"{seconds:.1f} s", expected=f"< {self.options.host_timeout:g} s"))
        else:
            gather.findings.append(Finding("ssh.connect", host.name, Status.PASS,
                                           f"ssh.connect: ran {len(planned)} probes in {seconds:.2f} s",
                                           observed=f"{seconds:.2f} s"))
        if self.options.sudo:
            gather.findings.append(_sudo_finding(host, outputs[_SUDO_KEY]))
        return gather

    def _unreachable(self, host: Host, start: float, kind: str, message: str) -> HostGather:
        seconds = time.monotonic() - start
        result = HostResult(host.name, host.address, False, seconds, error=kind)
        remedy = {
            "hostkey-unknown": f"ssh-keyscan -p {host.port} {host.address} >> ~/.ssh/known_hosts "
                               "(after checking the fingerprint)",
            "hostkey-changed": f"ssh-keygen -R {host.address}  # only if the node was really reinstalled",
            "refused": "systemctl start sshd  (on the node)",
            "auth": f"ssh-copy-id -p {host.port} {host.user}@{host.address}",
        }.get(kind)
        finding = Finding("ssh.connect", host.name, Status.ERROR, f"ssh.connect: {message}",
                          observed=kind, expected="connected", remedy=remedy)
        return HostGather(host, result, findings=[finding])

    def gather(self) -> None:
        """Gather every host, at most ``parallel`` at once; results land in ``self.gathered``."""
        hosts = list(self.inventory.hosts)
        self._overlaps = self._plan_overlaps()
        servers = {o.plan.server for o in self._overlaps}
        hosts.sort(key=lambda h: h.name not in servers)  # servers first: their clients wait for them
        pool = ThreadPoolExecutor(max_workers=max(1, min(self.options.parallel, len(hosts))))
        pending: set[Future[HostGather]] = {pool.submit(self.gather_host, h) for h in hosts}
        try:
            while pending:
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in done:
                    gather = future.result()
                    self.gathered[gather.host.name] = gather
                    if self.on_host_done:
                        self.on_host_done(gather)
        except BaseException:
            # Ctrl-C: stop queued hosts, close live connections so workers unblock, don't wait for them.
            pool.shutdown(wait=False, cancel_futures=True)
            self.abort()
            raise
        pool.shutdown(wait=True)

    def abort(self) -> None:
        """Close every live connection (unblocks workers) — used on Ctrl-C."""
        for overlap in self._overlaps:
            overlap.gate.set()
        if self.batching is not None:
            self.batching.stop()
        with self._lock:
            live = list(self._live.values()) + list(self._open.values())
            self._open.clear()
        for transport in live:
            try:
                transport.close()
            except Exception:
                pass

    # --- overlaps: active work done during the gather ------------------------------------------

    def _plan_overlaps(self) -> list[_Overlapping]:
        """Each active check's overlap, planned from hosts.yaml; none unless sessions stay open."""
        if not self.keep_open or self.batching is not None:  # one srun per round: no server to gate clients on
            return []
        hosts = self.inventory.hosts
        waves = -(-len(hosts) // max(1, self.options.parallel))
        window = self.options.host_timeout * waves + 10.0  # the gather's bound: the server must outlast it
        found = []
        names = {h.name for h in hosts}
        for check in self.checks:
            if isinstance(check, ActiveCheck):
                params = {**check.params, **self.inventory.params.get(check.family, {})}
                plan = check.overlap(EvalContext(self.inventory.cluster, hosts, params), window)
                if plan is not None and plan.server in names:
                    found.append(_Overlapping(check, plan, window))
        return found

    def _client_probes(self, host: Host, start: float) -> list[tuple[_Overlapping, Probe]]:
        """The overlap probes ``host`` runs as a client, once each server is up (bounded by the host's time)."""
        found = []
        for overlap in self._overlaps:
            probes = overlap.plan.clients.get(host.name)
            if not probes:
                continue
            overlap.gate.wait(max(0.0, self.options.host_timeout - (time.monotonic() - start)))
            if overlap.ready:
                found += [(overlap, Probe(f"{overlap.check.ident}/{_OVERLAP}/{p.key}", p.command, p.timeout))
                          for p in probes]
        return found

    def _start_server(self, overlap: _Overlapping) -> None:
        """Start the server probes on the server's open session; open the gate once they say ready."""
        if self._servers is None:
            self._servers = ThreadPoolExecutor(max_workers=max(1, len(self._overlaps)))
        watch = _ReadyWatch(overlap.plan.ready)
        seconds = max((p.timeout for p in overlap.plan.server_probes), default=overlap.window) + 5
        overlap.server_run = self._servers.submit(self._run_on, overlap.plan.server, overlap.plan.server_probes,
                                                  seconds, watch.feed)
        overlap.server_run.add_done_callback(watch.ended)
        watch.event.wait(overlap.plan.ready_timeout)
        overlap.ready = watch.seen
        overlap.gate.set()

    def _finish_overlaps(self) -> None:
        """Stop the servers still running (after a short grace) and file each overlap as its check's first outcome."""
        for overlap in self._overlaps:
            run = overlap.server_run
            if run is None or not overlap.ready:
                continue
            wait([run], timeout=CLEANUP_GRACE)
            if not run.done() and overlap.plan.cleanup:
                self._run_on(overlap.plan.server, overlap.plan.cleanup, 10.0)
            self.outcomes.setdefault(overlap.check.ident, []).append(
                StepOutcome({overlap.plan.server: run.result()}, dict(overlap.clients)))

    # --- evaluate -------------------------------------------------------------------------------

    def facts(self) -> tuple[dict[str, dict[str, Facts]], list[Finding]]:
        """Parse every gathered output (pure, once): check ident -> host -> facts, plus gather problems."""
        if self._facts is not None:
            return self._facts
        findings: list[Finding] = []
        facts_by_check: dict[str, dict[str, Facts]] = {}
        for check in self.checks:
            facts: dict[str, Facts] = facts_by_check.setdefault(check.ident, {})
            for name, gather in self.gathered.items():
                outputs = gather.outputs.get(check.ident)
                if outputs is None:
                    continue  # unreachable: ssh.connect already says so
                if any(o.exit_status is None for o in outputs.values()):
                    findings.append(Finding(f"{check.family}.gather", name, Status.ERROR,
                                            f"{check.family}.gather: {check.ident} not gathered: the host timed out"))
                    continue
                parsed = _safe_parse(check, outputs)
                if "parse_error" in parsed:
                    findings.append(Finding(f"{check.family}.parse", name, Status.ERROR,
                                            f"{check.family}.parse: could not parse {check.ident}: "
                                            f"{parsed['parse_error']}"))
                    continue
                facts[name] = parsed
        self._facts = (facts_by_check, findings)
        return self._facts

    def context(self, check: Check) -> EvalContext:
        params = {**check.params, **self.inventory.params.get(check.family, {})}
        return EvalContext(self.inventory.cluster, self.inventory.hosts, params, self.facts()[0])

    # --- active phase ---------------------------------------------------------------------------

    def activate(self) -> None:
        """Run every active check's steps on the connections kept open by the gather."""
        try:
            self._finish_overlaps()
            for check in self.checks:
                if not isinstance(check, ActiveCheck) or not applies(check, self.inventory.cluster):
                    continue
                facts = self.facts()[0].get(check.ident, {})
                outcomes = self.outcomes.setdefault(check.ident, [])
                for step in check.steps(facts, self.context(check), done=tuple(outcomes)):
                    outcomes.append(self.run_step(step))
        finally:
            self.close()

    def run_step(self, step: Step) -> StepOutcome:
        """Start background probes (and wait until they say ``step.ready``), then foreground ones; wait for all.

        Once the foreground has ended, background probes get ``CLEANUP_GRACE`` seconds to end by
        themselves; ``step.cleanup`` runs only on the hosts where they have not.
        """
        if not step.background and not step.foreground:
            return StepOutcome({}, {})
        results: dict[str, dict[str, dict[str, ProbeOutput]]] = {"background": {}, "foreground": {}}
        jobs = len(step.background) + len(step.foreground)
        # A batching transport holds a thread per host until its whole round ends: every script needs one.
        workers = jobs + len(step.cleanup) if self.batching else min(self.options.parallel, jobs)
        pool = ThreadPoolExecutor(max_workers=max(1, workers))
        try:
            readiness = {host: _ReadyWatch(step.ready) for host in step.background}
            self._expect(step.background)
            background = {host: pool.submit(self._run_on, host, probes, step.timeout,
                                            readiness[host].feed if step.ready else None)
                          for host, probes in step.background.items()}
            if step.ready:
                deadline = time.monotonic() + step.ready_timeout
                for host, future in background.items():
                    future.add_done_callback(readiness[host].ended)
                    readiness[host].event.wait(max(0.0, deadline - time.monotonic()))
            self._expect(step.foreground)
            foreground = {host: pool.submit(self._run_on, host, probes, step.timeout)
                          for host, probes in step.foreground.items()}
            for host, future in foreground.items():
                results["foreground"][host] = future.result()
            if background:
                wait(background.values(), timeout=CLEANUP_GRACE)
            stopping = {host: probes for host, probes in step.cleanup.items()
                        if host not in background or not background[host].done()}
            self._expect(stopping)
            cleanups = [pool.submit(self._run_on, host, probes, 10.0) for host, probes in stopping.items()]
            for host, future in background.items():
                results["background"][host] = future.result()
            for cleanup in cleanups:
                cleanup.result()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            self.abort()
            raise
        pool.shutdown(wait=True)
        return StepOutcome(results["background"], results["foreground"])

    def _expect(self, hosts: Collection[str]) -> None:
        """Announce a round to a batching transport: the hosts among ``hosts`` that will run a script."""
        if self.batching is not None:
            with self._lock:
                running = [h for h in hosts if h in self._open]
            self.batching.expect(running)

    def _run_on(self, host: str, probes: Sequence[Probe], timeout: float,
                on_stdout: OutputWatcher | None = None) -> dict[str, ProbeOutput]:
        keys = [p.key for p in probes]
        transport = self._open.get(host)
        if transport is None:
            return {k: NOT_RUN for k in keys}
        nonce = new_nonce()
        try:
            execution = transport.run_script(build_script(probes, nonce), timeout, on_stdout)
        except Exception:
            return {k: NOT_RUN for k in keys}
        return parse_output(execution.stdout, keys, nonce, execution.stderr)

    def close(self) -> None:
        if self.batching is not None:
            self.batching.stop()
        if self._servers is not None:
            self._servers.shutdown(wait=False)
        with self._lock:
            opened = list(self._open.values())
            self._open.clear()
        for transport in opened:
            try:
                transport.close()
            except Exception:
                pass

    # --- evaluate -------------------------------------------------------------------------------

    def evaluate(self) -> list[Finding]:
        findings: list[Finding] = []
        for gather in self.gathered.values():
            findings += gather.findings
        facts_by_check, problems = self.facts()
        findings += problems
        for check in self.checks:
            skipped = accelerator_skip(check, self.inventory.cluster)
            if skipped is not None:  # not for this cluster's accelerator: one skip, or nothing
                findings += skipped
                continue
            ctx = self.context(check)
            facts = facts_by_check.get(check.ident, {})
            try:
                if isinstance(check, ActiveCheck):
                    findings += check.judge(facts, self.outcomes.get(check.ident, []), ctx)
                else:
                    findings += check.evaluate(facts, ctx)
            except Exception as exc:
                findings.append(Finding(f"{check.family}.internal", None, Status.ERROR,
                                        f"{check.family}.internal: {check.ident} crashed: "
                                        f"{type(exc).__name__}: {exc}"))
        if self.options.only:
            findings = [f for f in findings if f.check.startswith("ssh.") or _selected(f.check, self.options.only)]
        order = {h.name: i for i, h in enumerate(self.inventory.hosts)}
        return sorted(findings, key=lambda f: (order.get(f.host or "", -1), f.check))

    def report(self, complete: bool = True) -> Report:
        hosts = [self.gathered[h.name].result if h.name in self.gathered
                 else HostResult(h.name, h.address, False, 0.0, error="not checked (interrupted)")
                 for h in self.inventory.hosts]
        report = Report(
            hosts=hosts,
            findings=self.evaluate(),
            checks=[c.ident for c in self.checks],
            started=self.started.isoformat(timespec="seconds"),
            duration_s=(datetime.now(timezone.utc) - self.started).total_seconds(),
            complete=complete,
            tool_version=__version__,
            extra={"cluster": {
                "accelerator": self.inventory.cluster.accelerator,
                "devices_per_host": self.inventory.cluster.devices_per_host,
                "master": self.inventory.cluster.master,
                "master_port": self.inventory.cluster.master_port,
            }},
        )
        return redact_report(report, [h.env for h in self.inventory.hosts])  # the one place: every output

    def run(self) -> Report:
        self.gather()
        self.activate()
        return self.report()

    def run_interruptible(self, gathering: AbstractContextManager[object] | None = None) -> bool:
        """Gather (inside ``gathering``, e.g. a progress bar) and run the active phases, SIGTERM acting as
        Ctrl-C; the sessions are closed either way. True when it ran to the end, False when interrupted
        (``report(complete=False)`` then holds what was gathered). Call from the main thread.
        """
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            with gathering or nullcontext():
                self.gather()
            self.activate()
            return True
        except KeyboardInterrupt:
            return False
        finally:
            self.close()
            signal.signal(signal.SIGTERM, previous)


_SUDO_KEY = "ssh/sudo"


_OVERLAP = "overlap"  # middle part of an overlap client probe's key: ident/overlap/key


@dataclass
class _Overlapping:
    """An overlap in flight: the gate its clients wait on, whether its server said ready, what came back."""

    check: ActiveCheck
    plan: Overlap
    window: float
    gate: threading.Event = field(default_factory=threading.Event)
    ready: bool = False
    server_run: Future[dict[str, ProbeOutput]] | None = None
    clients: dict[str, dict[str, ProbeOutput]] = field(default_factory=dict)


CLEANUP_GRACE = 0.5  # seconds background probes get to end by themselves before a step's cleanup runs


class _ReadyWatch:
    """Set ``event`` once ``marker`` shows up in the stdout chunks fed to it (a marker may span two chunks).

    >>> watch = _ReadyWatch('"ready": true'); watch.feed(b'{"rea'); watch.feed(b'dy": true}'); watch.event.is_set()
    True
    """

    def __init__(self, marker: str | None) -> None:
        self.marker = (marker or "").encode()
        self.tail = b""
        self.seen = False  # the marker showed up (event is also set when the script ended without it)
        self.event = threading.Event()

    def feed(self, data: bytes) -> None:
        if self.event.is_set():
            return
        text = self.tail + data
        if self.marker in text:
            self.seen = True
            self.event.set()
        self.tail = text[-len(self.marker):] if self.marker else b""

    def ended(self, _: Future[dict[str, ProbeOutput]]) -> None:
        """A background script that ended will not say it is ready: stop waiting for it."""
        self.event.set()


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _sudo_finding(host: Host, output: ProbeOutput) -> Finding:
    """``ssh.sudo``: pass when root probes can run (already root, or passwordless ``sudo -n``), else error.

    >>> _sudo_finding(Host("n1", "n1", user="bob"), ProbeOutput("", "sudo: a password is required", 1)).status.value
    'error'
    """
    how = output.stdout.strip().splitlines()[-1:] if output.ok else []
    if how in (["root"], ["sudo"]):
        return Finding("ssh.sudo", host.name, Status.PASS,
                       f"ssh.sudo: root probes run {'as root' if how == ['root'] else 'under sudo -n'}",
                       observed=how[0])
    reason = " ".join(output.stderr.split())[:200] or f"exit status {output.exit_status}"
    if "password" in output.stderr.lower():
        reason = f"sudo asks {host.user} for a password ({reason}); preflight never types one"
    elif output.exit_status == 127 or "not found" in output.stderr:
        reason = f"sudo is not installed ({reason})"
    elif output.timed_out:
        reason = "sudo -n did not answer in time"
    return Finding("ssh.sudo", host.name, Status.ERROR,
                   f"ssh.sudo: cannot run root probes on {host.name}: {reason}; those checks see what "
                   f"{host.user} may see",
                   observed=reason, expected="passwordless sudo -n (or user root)",
                   remedy=f"echo '{host.user} ALL=(root) NOPASSWD: ALL' | sudo tee /etc/sudoers.d/preflight "
                          "&& sudo chmod 440 /etc/sudoers.d/preflight  # or narrower: the probe commands only")


def dedupe(probes: Sequence[Probe]) -> tuple[list[Probe], dict[str, str]]:
    """Probes with the same command and timeout run once: the unique ones, and key -> key that runs for it.

    >>> unique, same_as = dedupe([Probe("a/x", "ip -o addr show", 5), Probe("b/y", "ip -o addr show", 5)])
    >>> [p.key for p in unique], same_as
    (['a/x'], {'b/y': 'a/x'})
    """
    first: dict[tuple[str, int], Probe] = {}
    same_as: dict[str, str] = {}
    for probe in probes:
        kept = first.setdefault((probe.command, probe.seconds), probe)
        if kept is not probe:
            same_as[probe.key] = kept.key
    return list(first.values()), same_as


def _safe_parse(check: Check, outputs: dict[str, ProbeOutput]) -> Facts:
    try:
        return check.parse(outputs)
    except Exception as exc:  # parsers must not raise; if one does, keep the run going
        return {"parse_error": f"{type(exc).__name__}: {exc}"}


def _selected(check_id: str, only: Sequence[str]) -> bool:
    return any(check_id == item or check_id.startswith(item + ".") for item in only)
