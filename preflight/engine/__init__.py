"""The engine: gather every host's probes in one round trip each, concurrently, run the active checks'
steps, then judge. It orchestrates and delegates:

- ``planning``: a host's probes (unique keys, sudo, duplicates once);
- ``sessions``: the transports, kept open for the active phase, closed or aborted once;
- ``gathering``: one host's gather and its ``ssh.*`` findings (``host_findings``);
- ``overlaps``: active work done during the gather; ``steps``: active work after it;
- ``evaluation``: pure parse, judge and report.

``replay`` judges hosts gathered elsewhere (``preflight judge``: facts files) on the same path: each host parsed
as a gather's, then the same evaluation and report.

It owns all I/O. Checks only declare probes and judge facts; a host that cannot be reached, or does
not finish in time, becomes an ``error`` finding while every other host is still checked.
"""

from __future__ import annotations

import gc
import queue
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import datetime, timezone
from types import FrameType

from preflight.checks.base import ActiveCheck, Check, EvalContext, StepOutcome, applies
from preflight.engine import evaluation
from preflight.engine.gathering import Gatherer
from preflight.engine.options import HostGather, Replay, RunOptions, TransportFactory, ssh_transport_factory
from preflight.engine.overlaps import Overlaps, plan_overlaps
from preflight.engine.planning import dedupe
from preflight.engine.sessions import Sessions
from preflight.engine.steps import run_step
from preflight.inventory import Inventory
from preflight.model import Finding, Report
from preflight.transport.base import Batching

__all__ = ["Engine", "HostGather", "Replay", "RunOptions", "TransportFactory", "dedupe", "settled_heap",
           "ssh_transport_factory"]


# Objects made before the garbage collector looks at the youngest generation (Python's default: 700).
YOUNG_COLLECTION_EVERY = 50_000


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect the youngest generation every ``YOUNG_COLLECTION_EVERY`` allocations while inside.

    A run makes objects that live to its end (outputs, facts, findings): with the default threshold the
    collector moves and rescans them over and over, ~10 % of the controller's CPU at 10,000 hosts and more
    beyond (bench/fake_scale.py). Cycles are still collected, in larger batches.

    >>> with fewer_collections():
    ...     gc.get_threshold()[0]
    50000
    """
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], YOUNG_COLLECTION_EVERY), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


@contextmanager
def settled_heap() -> Iterator[None]:
    """Judge and write a run with what was alive on entry out of the collector's sight (``gc.freeze``), and
    the youngest generation collected as in :func:`fewer_collections`.

    What the gather built (facts, findings) is most of a large run's heap and lives to its end: a full
    collection while judging or writing the report would walk all of it again for nothing (~0.05 ms a host
    at 20,000 hosts, bench/fake_scale.py). Garbage made inside is still collected; an object alive on entry
    that dies inside is collected after exit, when ``gc.unfreeze`` hands it back. Objects someone else froze
    are left alone: then nothing is frozen here.

    >>> with settled_heap():
    ...     gc.get_freeze_count() > 0
    True
    >>> gc.get_freeze_count()
    0
    """
    freeze = gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    try:
        with fewer_collections():
            yield
    finally:
        if freeze:
            gc.unfreeze()

FOLLOWUP_ROUNDS = 64  # at most this many batches of followups per check (each planned from the last)


class Engine:
    """One run over ``inventory``: ``run()`` (or ``run_interruptible()`` then ``report()``)."""

    def __init__(
        self,
        inventory: Inventory,
        checks: Sequence[Check],
        options: RunOptions | None = None,
        transport_factory: TransportFactory | None = None,
        on_host_done: Callable[[HostGather], None] | None = None,
        batching: Batching | None = None,
    ) -> None:
        self.inventory = inventory
        self.checks = list(checks)
        self.options = options = options or RunOptions()
        self.on_host_done = on_host_done
        self.sessions = Sessions(transport_factory or ssh_transport_factory(options), batching)
        self.gathered: dict[str, HostGather] = {}
        self.outcomes: dict[str, list[StepOutcome]] = {}  # active check ident -> its steps' outcomes
        self.keep_open = not options.passive and any(isinstance(c, ActiveCheck) for c in self.checks)
        # One srun per round (batching) cannot hold clients back until a server listens: no overlaps then.
        overlapping = self.keep_open and batching is None
        self.overlaps = Overlaps(plan_overlaps(self.checks, inventory, options) if overlapping else [], self.sessions)
        # Each host's outputs are parsed as it finishes (overlapping the other hosts' gathers), not all at the end.
        self._parsed: tuple[evaluation.FactsByCheck, list[Finding]] = ({c.ident: {} for c in self.checks}, [])
        self.stopped_by: int | None = None  # the signal that interrupted run_interruptible (SIGINT / SIGTERM)
        self.started = datetime.now(timezone.utc)

    @fewer_collections()
    def gather(self) -> None:
        """Gather every host, at most ``parallel`` at once (overlap servers first); results land in ``gathered``."""
        hosts = sorted(self.inventory.hosts, key=lambda h: h.name not in self.overlaps.servers)
        gatherer = Gatherer(self.checks, self.inventory, self.options, self.sessions, self.overlaps, self.keep_open)
        pool = ThreadPoolExecutor(max_workers=max(1, min(self.options.parallel, len(hosts))))
        finished: queue.SimpleQueue[Future[HostGather]] = queue.SimpleQueue()  # O(1) per host, any count
        try:
            for host in hosts:
                pool.submit(gatherer.gather, host).add_done_callback(finished.put)
            for _ in hosts:
                while True:
                    try:
                        future = finished.get(timeout=0.5)  # a timeout lets Ctrl-C in
                        break
                    except queue.Empty:
                        continue
                gather = future.result()
                self.gathered[gather.host.name] = gather
                evaluation.add_host_facts(self.checks, gather, *self._parsed)
                if self.on_host_done:
                    self.on_host_done(gather)
                if not self.options.keep_outputs:
                    gather.outputs.clear()  # parsed above: the report is judged from the facts
        except BaseException:
            # Ctrl-C: stop queued hosts, close live connections so workers unblock, don't wait for them.
            pool.shutdown(wait=False, cancel_futures=True)
            self.abort()
            raise
        pool.shutdown(wait=True)

    def activate(self) -> None:
        """Run every active check's steps on the sessions kept open by the gather, then close them."""
        try:
            for ident, outcome in self.overlaps.finish().items():
                self.outcomes.setdefault(ident, []).append(outcome)
            for check in self.checks if not self.options.passive else ():
                if not isinstance(check, ActiveCheck) or not applies(check, self.inventory.cluster):
                    continue
                facts = self.facts()[0].get(check.ident, {})
                outcomes = self.outcomes.setdefault(check.ident, [])
                for step in check.steps(facts, self.context(check), done=tuple(outcomes)):
                    outcomes.append(run_step(step, self.sessions, self.options.parallel))
                for _ in range(FOLLOWUP_ROUNDS):  # a check may plan from what its followups measured (--bisect)
                    followups = check.followups(facts, self.context(check), tuple(outcomes))
                    if not followups:
                        break
                    for step in followups:
                        outcomes.append(run_step(step, self.sessions, self.options.parallel))
        finally:
            self.close()

    def facts(self) -> tuple[evaluation.FactsByCheck, list[Finding]]:
        """Every gathered output parsed (once, as its host finished): check ident -> host -> facts, plus gather
        problems."""
        return self._parsed

    def context(self, check: Check) -> EvalContext:
        return evaluation.context(check, self.inventory, self.facts()[0])

    def abort(self) -> None:
        """Close every live connection (unblocks workers) — used on Ctrl-C."""
        self.sessions.abort()

    def close(self) -> None:
        self.sessions.close()
        self.overlaps.close()

    @settled_heap()
    def report(self, complete: bool = True) -> Report:
        return self._report(complete, self.started.isoformat(timespec="seconds"))

    def replay(self, replay: Replay) -> Report:
        """Judge hosts gathered elsewhere (``Replay``) as this engine's own gather: each host parsed as
        :meth:`gather` parses it, then :meth:`report`'s evaluation, with the replay's own findings."""
        self.started = replay.since
        for gather in replay.gathered:
            self.gathered[gather.host.name] = gather
            evaluation.add_host_facts(self.checks, gather, *self._parsed)
        with settled_heap():
            return self._report(True, replay.started, replay.inputs, replay.stand_ins)

    def _report(self, complete: bool, started: str, inputs: Sequence[Finding] = (),
                stand_ins: Sequence[Finding] = ()) -> Report:
        outcomes = None if self.options.passive else self.outcomes  # passive: the active checks are not judged
        judged = evaluation.evaluate(self.checks, self.inventory, self.gathered, self.facts(), outcomes,
                                     self.options.only, self.options.drop, inputs, stand_ins)
        return evaluation.build_report(self.inventory, self.checks, self.gathered, judged, started=started,
                                       duration_s=(datetime.now(timezone.utc) - self.started).total_seconds(),
                                       complete=complete)

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
        except Terminated:
            self.stopped_by = signal.SIGTERM
            return False
        except KeyboardInterrupt:
            self.stopped_by = signal.SIGINT
            return False
        finally:
            self.close()
            signal.signal(signal.SIGTERM, previous)


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C (the partial report is kept) but told apart for the exit code (143)."""


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise Terminated
