"""Active work done during the gather (an ActiveCheck's ``overlap``): the server host is gathered first and
starts its server probes on the session it keeps open; every client host's gather script gets the client
probes appended once the server said it is ready, so the clients need no session of their own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from preflight.batch import Probe, ProbeOutput
from preflight.checks.base import ActiveCheck, Check, EvalContext, Overlap, StepOutcome
from preflight.engine.options import RunOptions
from preflight.engine.planning import OVERLAP
from preflight.engine.sessions import Sessions
from preflight.engine.steps import CLEANUP_GRACE, ReadyWatch
from preflight.inventory import Inventory


@dataclass
class Overlapping:
    """An overlap in flight: the gate its clients wait on, whether its server said ready, what came back."""

    check: ActiveCheck
    plan: Overlap
    window: float
    gate: threading.Event = field(default_factory=threading.Event)
    ready: bool = False
    server_run: Future[dict[str, ProbeOutput]] | None = None
    clients: dict[str, dict[str, ProbeOutput]] = field(default_factory=dict)


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

    def client_probes(self, host: str, deadline: float) -> list[tuple[Overlapping, Probe]]:
        """The probes ``host`` runs as a client, once each server is up (waiting until ``deadline`` at most)."""
        probes = []
        for overlap in self.found:
            wanted = overlap.plan.clients.get(host)
            if not wanted:
                continue
            overlap.gate.wait(max(0.0, deadline - time.monotonic()))
            if overlap.ready:
                probes += [(overlap, Probe(f"{overlap.check.ident}/{OVERLAP}/{p.key}", p.command, p.timeout))
                           for p in wanted]
        return probes

    @staticmethod
    def keep(host: str, clients: Sequence[tuple[Overlapping, Probe]], outputs: Mapping[str, ProbeOutput]) -> None:
        """File what ``host``'s client probes printed with their overlaps."""
        for overlap, probe in clients:
            overlap.clients.setdefault(host, {})[probe.key.rsplit("/", 1)[1]] = outputs[probe.key]

    def start_servers(self, host: str) -> None:
        """Start the server probes ``host`` serves on its open session; open each gate once they say ready."""
        for overlap in self.found:
            if overlap.plan.server != host:
                continue
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=max(1, len(self.found)))
            watch = ReadyWatch(overlap.plan.ready)
            seconds = max((p.timeout for p in overlap.plan.server_probes), default=overlap.window) + 5
            overlap.server_run = self._pool.submit(self.sessions.run_on, host, overlap.plan.server_probes, seconds,
                                                   watch.feed)
            overlap.server_run.add_done_callback(watch.ended)
            watch.event.wait(overlap.plan.ready_timeout)
            overlap.ready = watch.seen
            overlap.gate.set()

    def release(self, host: str) -> None:
        """``host``'s gather is over: its clients stop waiting (already set once the server said ready)."""
        for overlap in self.found:
            if overlap.plan.server == host:
                overlap.gate.set()

    def finish(self) -> dict[str, StepOutcome]:
        """Stop the servers still running (after a short grace): check ident -> the overlap's outcome."""
        outcomes = {}
        for overlap in self.found:
            run = overlap.server_run
            if run is None or not overlap.ready:
                continue
            wait([run], timeout=CLEANUP_GRACE)
            if not run.done() and overlap.plan.cleanup:
                self.sessions.run_on(overlap.plan.server, overlap.plan.cleanup, 10.0)
            outcomes[overlap.check.ident] = StepOutcome({overlap.plan.server: run.result()}, dict(overlap.clients))
        return outcomes

    def abort(self) -> None:
        for overlap in self.found:
            overlap.gate.set()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)
