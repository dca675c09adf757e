"""Active work done during the gather (an ActiveCheck's ``overlap``): nobody waits for anybody. Every
client host's gather script is sent at once with its client probes at the end (they retry, bounded, until
the server is up). On the server host the server probes start at once, on another channel of the same
connection, but hold back until the *go file* exists: the server's own gather script creates it right
after the ``first`` checks' probes (so ``ports.listening`` never sees our listener), and the server
probes' start-up (a login shell, an interpreter) overlaps those probes instead of following them.

>>> go_file("N")
'/tmp/preflight-go-N'
>>> wait_for_go(1.0)[:41]
'pf_i=0; while [ ! -e "$PREFLIGHT_GO" ] &&'
"""

from __future__ import annotations

import shlex
import threading
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
    go: str | None = None  # the go file its server waits for, when the gather creates one


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
        self._lost: set[str] = set()  # hosts whose gather already failed (unreachable)

    def lost(self, host: str) -> None:
        """``host`` turned out unreachable: no client probe sent from now on waits for a server on it."""
        with self._lock:
            self._lost.add(host)

    def client_probes(self, host: str) -> list[tuple[Overlapping, Probe]]:
        """The probes ``host`` runs as a client, at the end of its gather script (never waits). None for an
        overlap whose server is already known unreachable: its connect would retry for a listener that never
        starts (``steps`` plans nothing towards such a host either)."""
        with self._lock:
            lost = set(self._lost)
        return [(overlap, Probe(f"{overlap.check.ident}/{OVERLAP}/{p.key}", p.command, p.timeout))
                for overlap in self.found if overlap.plan.server not in lost
                for p in overlap.plan.clients.get(host, ())]

    def first_checks(self, host: str) -> frozenset[str]:
        """The checks whose probes run first on ``host`` because it serves an overlap after them."""
        return frozenset(ident for o in self.found if o.plan.server == host for ident in o.plan.first)

    @staticmethod
    def keep(host: str, clients: Sequence[tuple[Overlapping, Probe]], outputs: Mapping[str, ProbeOutput]) -> None:
        """File what ``host``'s client probes printed with their overlaps."""
        for overlap, probe in clients:
            overlap.clients.setdefault(host, {})[probe.key.rsplit("/", 1)[1]] = outputs[probe.key]

    def go_probe(self, host: str, path: str) -> Probe | None:
        """The probe ``host``'s gather runs right after its ``first`` probes when it serves an overlap: it
        creates the go file ``path`` that releases the server probes. None when ``host`` serves nothing."""
        if host not in self.servers:
            return None
        return Probe(GO_KEY, ": > " + shlex.quote(path), timeout=5.0)

    def start_servers(self, host: str, transport: Transport, go: str | None = None) -> None:
        """Start the server probes ``host`` serves on ``transport`` (once; returns at once). With ``go``, each
        server probe runs with ``PREFLIGHT_GO`` set to it and waits for that file to exist before it starts
        (itself when the overlap's ``waits_for_go``, else behind a shell loop)."""
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
                probes = list(overlap.plan.server_probes)
                overlap.go = go
                if go is not None:
                    gate = f"PREFLIGHT_GO={shlex.quote(go)}; export PREFLIGHT_GO; "
                    if not overlap.plan.waits_for_go:
                        gate += wait_for_go(overlap.window)
                    probes = [Probe(p.key, gate + p.command, p.timeout) for p in probes]
                    seconds += overlap.window
                overlap.server_run = self._pool.submit(self.sessions.run_with, transport, probes, seconds,
                                                       watch.feed)
            overlap.server_run.add_done_callback(watch.ended)

    def finish(self) -> dict[str, StepOutcome]:
        """Stop the servers still running (after a short grace): check ident -> the overlap's outcome.

        An overlap whose server never said ready gives no outcome (its steps test everything again); nor does
        one none of whose clients ran its probes (every client unreachable or timed out): its server is not
        waited for, only stopped."""
        outcomes = {}
        for overlap in self.found:
            run, watch = overlap.server_run, overlap.watch
            if run is None or watch is None:
                continue
            connected = _any_client_ran(overlap)
            if connected:
                watch.event.wait(overlap.plan.ready_timeout)
            if not watch.seen or not connected:  # stop it (it may wait for a go file never made), and tidy up
                leftovers = [] if run.done() else list(overlap.plan.cleanup)
                if overlap.go is not None:
                    leftovers.append(Probe("go", "rm -f " + shlex.quote(overlap.go), 5.0))
                if leftovers:
                    self.sessions.run_on(overlap.plan.server, leftovers, 10.0)
                continue
            wait([run], timeout=CLEANUP_GRACE)
            if not run.done() and overlap.plan.cleanup:
                self.sessions.run_on(overlap.plan.server, overlap.plan.cleanup, 10.0)
            outcomes[overlap.check.ident] = StepOutcome({overlap.plan.server: run.result()}, dict(overlap.clients))
        return outcomes

    def close(self) -> None:
        """Let the server runs end (call once their sessions are closed, which ends them), bounded by
        ``CLOSE_WAIT``: no server thread outlives the run."""
        if self._pool is not None:
            wait([o.server_run for o in self.found if o.server_run is not None], timeout=CLOSE_WAIT)
            self._pool.shutdown(wait=False)
            self._pool = None


CLOSE_WAIT = 5.0  # seconds close() gives server runs to end once their sessions are closed


def _any_client_ran(overlap: Overlapping) -> bool:
    """Whether any client's probes ran (a host unreachable or timed out before them never connects)."""
    return any(out.exit_status is not None for outs in overlap.clients.values() for out in outs.values())


GO_KEY = "overlap.go/create"  # the gather probe that releases the server probes (its output is not kept)


def go_file(nonce: str) -> str:
    """Where the server's gather signals "first probes done" (per run: the gather's random nonce)."""
    return f"/tmp/preflight-go-{nonce}"


def wait_for_go(seconds: float) -> str:
    """Shell lines that wait (bounded) for ``$PREFLIGHT_GO`` to exist, then remove it."""
    tries = max(1, int(seconds / 0.05))
    return (f'pf_i=0; while [ ! -e "$PREFLIGHT_GO" ] && [ "$pf_i" -lt {tries} ]; do sleep 0.05; '
            'pf_i=$((pf_i + 1)); done; rm -f "$PREFLIGHT_GO"; ')
