"""The engine without root: real framed scripts run by ``sh`` on this machine, behind a fake transport that can
refuse, hang, raise or time out; small checks defined here. Covers overlaps (no host waits for another),
step cleanup, host timeouts, abort, a step that raises, and the pure evaluation's error findings.
"""

from __future__ import annotations

import gc
import os
import shlex
import subprocess
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import pytest

from preflight.batch import Probe, ProbeOutput
from preflight.checks.base import ActiveCheck, Check, EvalContext, Facts, Overlap, Step, StepOutcome
from preflight.engine import Engine, RunOptions, settled_heap
from preflight.inventory import ClusterSpec, Host, Inventory
from preflight.model import Finding, Status
from preflight.transport.base import Execution, OutputWatcher, Transport, TransportError
from preflight.transport.local import LocalTransport


@dataclass
class Behaviour:
    """How one fake host behaves."""

    refuse: bool = False  # connect raises TransportError("refused")
    hang_connect: bool = False  # connect blocks until the transport is closed
    raise_on_script: int | None = None  # the n-th script (0: the gather) raises RuntimeError
    scripts: list[tuple[float, str]] = field(default_factory=list)  # (wall-clock start, script) of every run
    closed: threading.Event = field(default_factory=threading.Event)


class FakeTransport:
    """Runs each script with ``sh`` here (LocalTransport), after the behaviour's faults."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour

    def connect(self) -> None:
        if self.behaviour.refuse:
            raise TransportError("refused", "connection refused")
        if self.behaviour.hang_connect:
            self.behaviour.closed.wait(30)
            raise TransportError("timeout", "closed while connecting")

    def run_script(self, script: str, timeout: float, on_stdout: OutputWatcher | None = None) -> Execution:
        number = len(self.behaviour.scripts)
        self.behaviour.scripts.append((time.time(), script))
        if self.behaviour.raise_on_script == number:
            raise RuntimeError("channel dropped")
        if on_stdout is None:
            return LocalTransport().run_script(script, timeout, on_stdout)
        return _streamed(script, timeout, on_stdout)

    def close(self) -> None:
        self.behaviour.closed.set()


def inventory(*names: str) -> Inventory:
    return Inventory(hosts=[Host(n, n) for n in names], cluster=ClusterSpec(master=names[0]), params={})


def _streamed(script: str, timeout: float, on_stdout: OutputWatcher) -> Execution:
    """Run ``script`` with ``sh``, handing stdout to ``on_stdout`` as it comes (as SSHTransport does)."""
    start = time.monotonic()
    proc = subprocess.Popen(["sh", "-s"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(script.encode())
    proc.stdin.close()
    out = bytearray()
    while chunk := os.read(proc.stdout.fileno(), 65536):
        out += chunk
        on_stdout(chunk)
    status = proc.wait(timeout)
    return Execution(bytes(out), b"", status, False, time.monotonic() - start)


def engine_for(checks: Sequence[Check], behaviours: Mapping[str, Behaviour], **options: float) -> Engine:
    return Engine(inventory(*behaviours), checks, RunOptions(**options),  # type: ignore[arg-type]
                  transport_factory=lambda host: FakeTransport(behaviours[host.name]))


class NameCheck(Check):
    """Each host echoes its name; passes when it is its own, fails otherwise."""

    family: ClassVar[str] = "name"
    summary: ClassVar[str] = "echo the host name"

    def __init__(self, command: str = "echo {name}") -> None:
        self.command = command

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [Probe("name", self.command.format(name=shlex.quote(host.name)), timeout=5)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        if outputs["name"].stdout.startswith("garbage"):
            raise ValueError("unreadable")
        return {"name": outputs["name"].stdout.strip()}

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        return [Finding("name.echo", host, Status.PASS if f["name"] == host else Status.FAIL, f["name"])
                for host, f in facts.items()]


def statuses(findings: Sequence[Finding], check: str) -> dict[str | None, str]:
    return {f.host: f.status.value for f in findings if f.check == check}


def test_every_reachable_host_is_gathered_and_judged_and_a_refused_one_is_an_error() -> None:
    hosts = {"a": Behaviour(), "b": Behaviour(refuse=True), "c": Behaviour()}
    report = engine_for([NameCheck()], hosts).run()
    assert statuses(report.findings, "name.echo") == {"a": "pass", "c": "pass"}
    assert statuses(report.findings, "ssh.connect") == {"a": "pass", "b": "error", "c": "pass"}
    refused = next(f for f in report.findings if f.check == "ssh.connect" and f.host == "b")
    assert refused.observed == "refused" and "sshd" in (refused.remedy or "")
    assert [h.reachable for h in report.hosts] == [True, False, True]
    assert all(b.closed.is_set() for b in hosts.values()), "every session is closed"


def test_without_keep_outputs_a_host_keeps_its_facts_not_its_raw_outputs_and_the_findings_are_the_same() -> None:
    """`run` without --record drops each host's outputs once parsed (memory at 10,000 hosts); nothing judged
    later reads them, so the report is the same as with them kept."""
    def run(keep: bool) -> tuple[Engine, list[tuple[str, str | None, Status]]]:
        engine = engine_for([NameCheck()], {"a": Behaviour(), "b": Behaviour()}, keep_outputs=keep)
        return engine, [(f.check, f.host, f.status) for f in engine.run().findings]

    (kept, kept_findings), (dropped, dropped_findings) = run(True), run(False)
    assert dropped_findings == kept_findings
    assert ("name.echo", "b", Status.PASS) in dropped_findings
    assert kept.gathered["a"].outputs["name"]["name"].stdout == "a\n"
    assert dropped.gathered["a"].outputs == {}
    assert dropped.facts()[0]["name"] == {"a": {"name": "a"}, "b": {"name": "b"}}


class _Cyclic:
    """An object in a reference cycle with itself: only the cyclic garbage collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_settled_heap_collects_garbage_made_inside_and_what_was_frozen_once_it_ends() -> None:
    def garbage() -> weakref.ref[_Cyclic]:
        return weakref.ref(_Cyclic())

    alive = _Cyclic()
    alive_ref = weakref.ref(alive)
    with settled_heap():
        made_inside = garbage()
        gc.collect()
        assert made_inside() is None
        del alive
        gc.collect()
        assert alive_ref() is not None, "alive on entry: out of the collector's sight until the end"
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert alive_ref() is None


def test_a_host_past_its_timeout_keeps_the_others_and_says_what_it_did_not_finish() -> None:
    hosts = {"a": Behaviour(), "slow": Behaviour()}
    check = NameCheck("if [ {name} = slow ]; then sleep 5; fi; echo {name}")
    report = engine_for([check], hosts, host_timeout=1.5).run()
    assert statuses(report.findings, "ssh.session") == {"slow": "error"}
    assert statuses(report.findings, "name.gather") == {"slow": "error"}
    assert statuses(report.findings, "name.echo") == {"a": "pass"}


def test_a_parser_or_evaluator_that_raises_is_an_error_finding_not_the_end_of_the_run() -> None:
    class Crashing(NameCheck):
        family = "crash"

        def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
            raise KeyError("boom")

    report = engine_for([NameCheck("echo garbage"), Crashing()], {"a": Behaviour(), "b": Behaviour()}).run()
    assert statuses(report.findings, "name.parse") == {"a": "error", "b": "error"}
    assert statuses(report.findings, "crash.internal") == {None: "error"}
    assert "KeyError" in next(f.message for f in report.findings if f.check == "crash.internal")


class PortTest(ActiveCheck):
    """An active check: during the gather ``a`` serves and every other host is a client; then one step whose
    background never ends by itself on ``b`` (so its cleanup runs there only)."""

    family: ClassVar[str] = "port"
    summary: ClassVar[str] = "overlap and a step"

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return []

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        return {}

    def overlap(self, ctx: EvalContext, window: float) -> Overlap | None:
        clients = {h.name: [Probe("connect", "date +%s.%N")] for h in ctx.hosts if h.name != "a"}
        return Overlap("a", [Probe("serve", "date +%s.%N; echo READY; sleep 0.3", timeout=5)], "READY", clients)

    def steps(self, facts: Mapping[str, Facts], ctx: EvalContext, done: Sequence[StepOutcome] = ()) -> list[Step]:
        background = {"a": [Probe("listen", "echo up; sleep 0.1", timeout=5)],
                      "b": [Probe("listen", "echo up; sleep 20.123", timeout=25)]}
        foreground = {"c": [Probe("client", "echo hello", timeout=5)]}
        cleanup = {h: [Probe("stop", "pkill -f 'sleep 20[.]123'; echo stopped")] for h in ("a", "b")}
        # LocalTransport hands stdout over at the end: "up" is seen only from a listener that ended.
        return [Step(background, foreground, timeout=25, cleanup=cleanup, ready="up", ready_timeout=1.0)]

    def judge(self, facts: Mapping[str, Facts], outcomes: Sequence[StepOutcome], ctx: EvalContext) -> list[Finding]:
        return [Finding("port.outcomes", None, Status.PASS, str(len(outcomes)))]


class Stamp(Check):
    """Prints when it ran, after ``delay`` seconds on ``slow_on``."""

    summary: ClassVar[str] = "print the time"

    def __init__(self, family: str, slow_on: str = "", delay: float = 0.0) -> None:
        self.family, self.slow_on, self.delay = family, slow_on, delay  # type: ignore[misc]

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        delay = self.delay if host.name == self.slow_on else 0.0
        return [Probe("at", f"sleep {delay}; date +%s.%N", timeout=10)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        return {"at": float(outputs["at"].stdout)}

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        return []


class FirstPortTest(PortTest):
    def overlap(self, ctx: EvalContext, window: float) -> Overlap | None:
        plan = super().overlap(ctx, window)
        assert plan is not None
        return Overlap(plan.server, plan.server_probes, plan.ready, plan.clients, first=("first",))


def test_overlap_nobody_waits_and_the_server_starts_with_the_gather_but_works_after_its_first_probes() -> None:
    hosts = {"a": Behaviour(), "b": Behaviour(), "c": Behaviour()}
    checks = [Stamp("slow", slow_on="a", delay=1.5), Stamp("first"), FirstPortTest()]  # "first" is planned last
    engine = engine_for(checks, hosts)
    engine.run()
    overlap, step = engine.outcomes["port"]
    served_at = float(overlap.background["a"]["serve"].stdout.split()[0])
    facts = engine.facts()[0]
    assert facts["first"]["a"]["at"] < served_at < facts["slow"]["a"]["at"], \
        "the server works after its first probes, while the rest of its gather still runs"
    serve_sent = next(at for at, script in hosts["a"].scripts if "echo READY" in script)
    assert serve_sent < facts["first"]["a"]["at"], "the server's start-up overlaps the first probes"
    gather_ended = facts["slow"]["a"]["at"]
    for client in ("b", "c"):
        assert hosts[client].scripts[0][0] < gather_ended, f"{client}'s gather waited for the server's"
        assert "date +%s.%N" in hosts[client].scripts[0][1], "the client probe is in the gather script"
    assert set(overlap.foreground) == {"b", "c"}


class SilentServerTest(FirstPortTest):
    """Its server says it waits for the go file itself but never does, never says ready, and never ends."""

    def overlap(self, ctx: EvalContext, window: float) -> Overlap | None:
        plan = super().overlap(ctx, window)
        assert plan is not None
        stop = [Probe("stop", "pkill -f 'sleep 30[.]321'; echo stopped")]
        return Overlap(plan.server, [Probe("serve", "sleep 30.321", timeout=40)], plan.ready, plan.clients, stop,
                       ready_timeout=1.0, first=("first",), waits_for_go=True)


def test_a_server_that_never_says_ready_is_stopped_and_its_go_file_removed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("preflight.engine.gathering.go_file", lambda nonce: str(tmp_path / f"go-{nonce}"))
    hosts = {"a": Behaviour(), "b": Behaviour()}
    engine = engine_for([Stamp("first"), SilentServerTest()], hosts)
    engine.run()
    assert [s for _, s in hosts["a"].scripts if "echo stopped" in s], "the silent server was stopped"
    assert list(tmp_path.iterdir()) == [], "no go file left behind"


def test_overlap_and_a_step_cleanup_only_where_a_listener_is_left() -> None:
    hosts = {"a": Behaviour(), "b": Behaviour(), "c": Behaviour()}
    engine = engine_for([PortTest()], hosts)
    report = engine.run()
    overlap, step = engine.outcomes["port"]
    assert set(overlap.foreground) == {"b", "c"}
    assert step.foreground["c"]["client"].stdout.strip() == "hello"
    cleanups = {name: [s for _, s in b.scripts if "echo stopped" in s] for name, b in hosts.items()}
    assert len(cleanups["b"]) == 1 and cleanups["a"] == [], "cleanup only where the listener did not end"
    assert step.background["b"]["listen"].exit_status != 0, "the left-over listener was stopped by the cleanup"
    assert step.background["a"]["listen"].exit_status == 0
    assert statuses(report.findings, "port.outcomes") == {None: "pass"}


def test_a_step_script_that_raises_is_reported_as_such_not_as_a_timeout() -> None:
    hosts = {"a": Behaviour(), "b": Behaviour(raise_on_script=1), "c": Behaviour()}
    engine = engine_for([PortTest()], hosts)
    engine.run()
    failed = engine.outcomes["port"][1].background["b"]["listen"]
    assert failed.exit_status is None and "RuntimeError: channel dropped" in failed.stderr
    assert "did not finish in time" not in failed.stderr


def test_abort_unblocks_a_hung_connect_and_the_partial_report_keeps_what_was_gathered() -> None:
    hosts = {"a": Behaviour(), "hung": Behaviour(hang_connect=True)}
    engine = engine_for([NameCheck()], hosts)

    def interrupt_after_first(gather: object) -> None:
        raise KeyboardInterrupt  # as Ctrl-C arrives in the main thread while "hung" still connects

    engine.on_host_done = interrupt_after_first
    assert engine.run_interruptible() is False
    assert hosts["hung"].closed.is_set(), "the hung session was closed by the abort"
    report = engine.report(complete=False)
    assert not report.complete and statuses(report.findings, "name.echo") == {"a": "pass"}
    hung = next(h for h in report.hosts if h.name == "hung")
    assert not hung.reachable and hung.error == "not checked (interrupted)"


@pytest.mark.parametrize("only", [("name",), ("name.echo",)])
def test_only_keeps_the_asked_findings_and_the_ssh_ones(only: tuple[str, ...]) -> None:
    class Other(NameCheck):
        family = "other"

    report = engine_for([NameCheck(), Other()], {"a": Behaviour()}, only=only).run()  # type: ignore[arg-type]
    assert {f.check for f in report.findings} == {"ssh.connect", "name.echo"}


class DeadClientsTest(PortTest):
    """Serves on ``a``: says ready, then never ends by itself, and its cleanup misses it (as a ``pkill`` pattern
    that does not match the interpreter a wrapper such as a pyenv shim started); no steps."""

    def overlap(self, ctx: EvalContext, window: float) -> Overlap | None:
        clients = {h.name: [Probe("connect", "echo connect-tried")] for h in ctx.hosts if h.name != "a"}
        return Overlap("a", [Probe("serve", "echo READY; sleep 30.456", timeout=40)], "READY", clients,
                       [Probe("stop", "echo missed")])

    def steps(self, facts: Mapping[str, Facts], ctx: EvalContext, done: Sequence[StepOutcome] = ()) -> list[Step]:
        return []


def test_a_server_whose_clients_are_all_unreachable_is_not_waited_for_and_nothing_outlives_the_run() -> None:
    """``a`` runs here (the real LocalTransport, as a ``localhost`` host does; it hands stdout over only at the
    end, so "ready" is never seen while the server runs); ``b`` and ``c`` refuse. Before: the engine waited the
    overlap's ready_timeout (10 s) for clients that could never connect, then left the server running for its
    whole window after the report (the process then waited for it at exit: 70 s with the defaults)."""
    transports: dict[str, Transport] = {"a": LocalTransport(), "b": FakeTransport(Behaviour(refuse=True)),
                                        "c": FakeTransport(Behaviour(refuse=True))}
    engine = Engine(inventory("a", "b", "c"), [DeadClientsTest()], RunOptions(),
                    transport_factory=lambda host: transports[host.name])
    try:
        start = time.monotonic()
        report = engine.run()
        assert time.monotonic() - start < 5.0, "the server was waited for though no client could connect"
        assert engine.outcomes["port"] == [], "no outcome from an overlap nobody connected to"
        (overlap,) = engine.overlaps.found
        assert overlap.server_run is not None and overlap.server_run.done(), "the server's thread outlived the run"
        left = subprocess.run(["pgrep", "-f", "sleep 30[.]456"], capture_output=True, check=False)
        assert left.returncode == 1, f"the server's process outlived the run: {left.stdout!r}"
        assert {h.name: h.reachable for h in report.hosts} == {"a": True, "b": False, "c": False}
    finally:
        subprocess.run(["pkill", "-f", "sleep 30[.]456"], check=False)


def test_a_client_sends_no_probe_for_a_server_already_known_unreachable() -> None:
    """With ``a`` (the server) refused before ``b``'s gather is built (one host at a time here), ``b``'s script
    holds no connect that would retry for a listener that never starts (10 s in net.reachability)."""
    hosts = {"a": Behaviour(refuse=True), "b": Behaviour()}
    engine = engine_for([DeadClientsTest()], hosts, parallel=1)
    engine.run()
    (gather,) = hosts["b"].scripts
    assert "connect-tried" not in gather[1]
    assert engine.outcomes["port"] == []
