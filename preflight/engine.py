"""The engine: gather every host's probes in one round trip each, concurrently, then evaluate.

It owns all I/O. Checks only declare probes and judge facts; a host that cannot be reached, or
does not finish in time, becomes an ``error`` finding while every other host is still checked.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timezone
from types import FrameType

from preflight import __version__
from preflight.batch import NOT_RUN, SUDO_CHECK, Probe, ProbeOutput, as_root, build_script, new_nonce, parse_output
from preflight.checks.base import ActiveCheck, Check, EvalContext, Facts, Step, StepOutcome
from preflight.inventory import Host, Inventory
from preflight.model import Finding, HostResult, Report, Status
from preflight.redact import redact_report
from preflight.transport.base import Transport, TransportError
from preflight.transport.local import LocalTransport
from preflight.transport.ssh import SSHTransport

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
    ) -> None:
        self.inventory = inventory
        self.checks = list(checks)
        self.options = options
        self.make_transport = transport_factory or ssh_transport_factory(options)
        self.on_host_done = on_host_done
        self.gathered: dict[str, HostGather] = {}
        self.outcomes: dict[str, list[StepOutcome]] = {}  # active check ident -> its steps' outcomes
        self.keep_open = any(isinstance(c, ActiveCheck) for c in self.checks)
        self._lock = threading.Lock()
        self._live: dict[str, Transport] = {}
        self._open: dict[str, Transport] = {}
        self._facts: tuple[dict[str, dict[str, Facts]], list[Finding]] | None = None
        self.started = datetime.now(timezone.utc)

    # --- gather ---------------------------------------------------------------------------------

    def plan(self, host: Host) -> list[tuple[Check, Probe]]:
        """Every probe for ``host``, with keys made unique as ``ident/key``."""
        cap = self.options.command_timeout
        planned = []
        for check in self.checks:
            for probe in check.probes(host, self.inventory.cluster):
                timeout = min(probe.timeout, cap) if cap else probe.timeout
                command = as_root(probe.command) if self.options.sudo and probe.root else probe.command
                planned.append((check, Probe(f"{check.ident}/{probe.key}", command, timeout)))
        return planned

    def gather_host(self, host: Host) -> HostGather:
        start = time.monotonic()
        transport = self.make_transport(host)
        with self._lock:
            self._live[host.name] = transport
        try:
            transport.connect()
            planned = self.plan(host)
            nonce = new_nonce()
            remaining = max(1.0, self.options.host_timeout - (time.monotonic() - start))
            sudo = [Probe(_SUDO_KEY, SUDO_CHECK, 5.0)] if self.options.sudo else []
            unique, same_as = dedupe([p for _, p in planned])
            script = build_script(sudo + unique, nonce)
            execution = transport.run_script(script, remaining)
            outputs = parse_output(execution.stdout, [p.key for p in sudo + unique], nonce, execution.stderr)
            outputs.update({key: outputs[first] for key, first in same_as.items()})
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
        with self._lock:
            live = list(self._live.values()) + list(self._open.values())
            self._open.clear()
        for transport in live:
            try:
                transport.close()
            except Exception:
                pass

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
            for check in self.checks:
                if not isinstance(check, ActiveCheck):
                    continue
                facts = self.facts()[0].get(check.ident, {})
                outcomes = self.outcomes.setdefault(check.ident, [])
                for step in check.steps(facts, self.context(check)):
                    outcomes.append(self.run_step(step))
        finally:
            self.close()

    def run_step(self, step: Step) -> StepOutcome:
        """Start background probes, then foreground ones, all concurrently; wait for all (bounded)."""
        jobs = [("background", host, probes) for host, probes in step.background.items()]
        jobs += [("foreground", host, probes) for host, probes in step.foreground.items()]
        results: dict[str, dict[str, dict[str, ProbeOutput]]] = {"background": {}, "foreground": {}}
        if not jobs:
            return StepOutcome({}, {})
        pool = ThreadPoolExecutor(max_workers=max(1, min(self.options.parallel, len(jobs))))
        try:
            futures = {pool.submit(self._run_on, host, probes, step.timeout): (role, host)
                       for role, host, probes in jobs}
            for future, (role, host) in futures.items():
                if role == "foreground":
                    results[role][host] = future.result()
            cleanups = [pool.submit(self._run_on, host, probes, 10.0) for host, probes in step.cleanup.items()]
            for future, (role, host) in futures.items():
                if role == "background":
                    results[role][host] = future.result()
            for cleanup in cleanups:
                cleanup.result()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            self.abort()
            raise
        pool.shutdown(wait=True)
        return StepOutcome(results["background"], results["foreground"])

    def _run_on(self, host: str, probes: Sequence[Probe], timeout: float) -> dict[str, ProbeOutput]:
        keys = [p.key for p in probes]
        transport = self._open.get(host)
        if transport is None:
            return {k: NOT_RUN for k in keys}
        nonce = new_nonce()
        try:
            execution = transport.run_script(build_script(probes, nonce), timeout)
        except Exception:
            return {k: NOT_RUN for k in keys}
        return parse_output(execution.stdout, keys, nonce, execution.stderr)

    def close(self) -> None:
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
