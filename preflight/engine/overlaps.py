"""Active work done during the gather (an ActiveCheck's ``overlap``): nobody waits for anybody. Every
client host's gather script is sent at once with its client probes at the end (they retry, bounded, until
the server is up); the server host's script runs the ``first`` checks' probes at its start, and the server
probes start on another channel of its connection as soon as those have ended.

>>> marker = _end_marker("N", "ports.listening/ss"); marker
b'@@PF-N END ports.listening/ss '
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from preflight.batch import Probe, ProbeOutput
from preflight.checks.base import ActiveCheck, Check, EvalContext, Overlap, StepOutcome
from preflight.engine.options import RunOptions
from preflight.engine.planning import OVERLAP
from preflight.engine.sessions import Sessions
from preflight.engine.steps import CLEANUP_GRACE, ReadyWatch
from preflight.inventory import Inventory
from preflight.transport.base import Transport


@dataclass
class Overlapping:
    """An overlap in flight: its server's run and readiness, and what its clients printed."""

    check: ActiveCheck
    plan: Overlap
    window: float
    watch: ReadyWatch | None = None
    server_run: Future[dict[str, ProbeOutput]] | None = None
    clients: dict[str, dict[str, ProbeOutput]] = field(default_factory=dict)
    started: threading.Event = field(default_factory=threading.Event)


def plan_overlaps(checks: Sequence[Check], inventory: Inventory, options: RunOptions) -> list[Overlapping]:
    """Each active check's overlap, planned from hosts.yaml (no facts exist yet)."""
    hosts = inventory.hosts
    waves = -(-len(hosts) // max(1, options.parallel))
    window = options.host_timeout * waves + 10.0  # the gather's bound: the server must outlast it
    names = {h.name for h in hosts}
    found = []
    for check in checks:
        if isinstance(check, ActiveCheck):
            params = {**check.params, **inventory.params.get(check.family, {})}
            plan = check.overlap(EvalContext(inventory.cluster, hosts, params), window)
            if plan is not None and plan.server in names:
                found.append(Overlapping(check, plan, window))
    return found


class Overlaps:
    """The overlaps of one run and the threads their servers run on."""

    def __init__(self, found: Sequence[Overlapping], sessions: Sessions) -> None:
        self.found = list(found)
        self.sessions = sessions
        self.servers = {o.plan.server for o in self.found}
        self._pool: ThreadPoolExecutor | None = None  # runs the server probes
        self._lock = threading.Lock()

    def client_probes(self, host: str) -> list[tuple[Overlapping, Probe]]:
        """The probes ``host`` runs as a client, at the end of its gather script (never waits)."""
        return [(overlap, Probe(f"{overlap.check.ident}/{OVERLAP}/{p.key}", p.command, p.timeout))
                for overlap in self.found for p in overlap.plan.clients.get(host, ())]

    def first_checks(self, host: str) -> frozenset[str]:
        """The checks whose probes run first on ``host`` because it serves an overlap after them."""
        return frozenset(ident for o in self.found if o.plan.server == host for ident in o.plan.first)

    @staticmethod
    def keep(host: str, clients: Sequence[tuple[Overlapping, Probe]], outputs: Mapping[str, ProbeOutput]) -> None:
        """File what ``host``'s client probes printed with their overlaps."""
        for overlap, probe in clients:
            overlap.clients.setdefault(host, {})[probe.key.rsplit("/", 1)[1]] = outputs[probe.key]

    def starter(self, host: str, transport: Transport, nonce: str,
                last_first: str | None) -> Callable[[bytes], None] | None:
        """What ``host``'s gather feeds its stdout to: it starts the server probes once the probe
        ``last_first`` has ended (at once when that is None). None when ``host`` serves nothing."""
        if host not in self.servers:
            return None
        if last_first is None:
            self.start_servers(host, transport)
            return None
        watch = ReadyWatch(_end_marker(nonce, last_first).decode())

        def feed(data: bytes) -> None:
            watch.feed(data)
            if watch.seen:
                self.start_servers(host, transport)
        return feed

    def start_servers(self, host: str, transport: Transport) -> None:
        """Start the server probes ``host`` serves on ``transport`` (once; returns at once)."""
        for overlap in self.found:
            if overlap.plan.server != host:
                continue
            with self._lock:
                if overlap.started.is_set():
                    continue
                overlap.started.set()
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(max_workers=max(1, len(self.found)))
                overlap.watch = watch = ReadyWatch(overlap.plan.ready)
                seconds = max((p.timeout for p in overlap.plan.server_probes), default=overlap.window) + 5
                overlap.server_run = self._pool.submit(self.sessions.run_with, transport,
                                                       overlap.plan.server_probes, seconds, watch.feed)
            overlap.server_run.add_done_callback(watch.ended)

    def finish(self) -> dict[str, StepOutcome]:
        """Stop the servers still running (after a short grace): check ident -> the overlap's outcome.

        An overlap whose server never said ready gives no outcome (its steps test everything again)."""
        outcomes = {}
        for overlap in self.found:
            run, watch = overlap.server_run, overlap.watch
            if run is None or watch is None:
                continue
            watch.event.wait(overlap.plan.ready_timeout)
            if not watch.seen:
                continue
            wait([run], timeout=CLEANUP_GRACE)
            if not run.done() and overlap.plan.cleanup:
                self.sessions.run_on(overlap.plan.server, overlap.plan.cleanup, 10.0)
            outcomes[overlap.check.ident] = StepOutcome({overlap.plan.server: run.result()}, dict(overlap.clients))
        return outcomes

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)


def _end_marker(nonce: str, key: str) -> bytes:
    """The line start the gather script prints once probe ``key`` has ended (see preflight.batch)."""
    return f"@@PF-{nonce} END {key} ".encode()
