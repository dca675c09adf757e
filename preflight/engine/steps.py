"""Running one step of an active check on the hosts' open sessions: background probes (listeners) first,
then, once they say they are ready, the foreground ones (clients); cleanup only where a listener is left.

>>> watch = ReadyWatch('"ready": true'); watch.feed(b'{"rea'); watch.feed(b'dy": true}'); watch.event.is_set()
True
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait

from preflight.batch import ProbeOutput
from preflight.checks.base import Step, StepOutcome
from preflight.engine.sessions import Sessions

CLEANUP_GRACE = 0.5  # seconds background probes get to end by themselves before a step's cleanup runs


class ReadyWatch:
    """Set ``event`` once ``marker`` shows up in the stdout chunks fed to it (a marker may span two chunks)."""

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


def run_step(step: Step, sessions: Sessions, parallel: int) -> StepOutcome:
    """Start background probes (and wait until they say ``step.ready``), then foreground ones; wait for all.

    Once the foreground has ended, background probes get ``CLEANUP_GRACE`` seconds to end by
    themselves; ``step.cleanup`` runs only on the hosts where they have not. On an interruption every
    session is aborted (so no thread waits on a node) and the interruption goes on.
    """
    if not step.background and not step.foreground:
        return StepOutcome({}, {})
    jobs = len(step.background) + len(step.foreground)
    # A batching transport holds a thread per host until its whole round ends: every script needs one.
    workers = jobs + len(step.cleanup) if sessions.batching else min(parallel, jobs)
    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    try:
        readiness = {host: ReadyWatch(step.ready) for host in step.background}
        sessions.expect(step.background)
        background = {host: pool.submit(sessions.run_on, host, probes, step.timeout,
                                        readiness[host].feed if step.ready else None)
                      for host, probes in step.background.items()}
        if step.ready:
            deadline = time.monotonic() + step.ready_timeout
            for host, future in background.items():
                future.add_done_callback(readiness[host].ended)
                readiness[host].event.wait(max(0.0, deadline - time.monotonic()))
        sessions.expect(step.foreground)
        foreground = {host: pool.submit(sessions.run_on, host, probes, step.timeout)
                      for host, probes in step.foreground.items()}
        front = {host: future.result() for host, future in foreground.items()}
        if background:
            wait(background.values(), timeout=CLEANUP_GRACE)
        stopping = {host: probes for host, probes in step.cleanup.items()
                    if host not in background or not background[host].done()}
        sessions.expect(stopping)
        cleanups = [pool.submit(sessions.run_on, host, probes, 10.0) for host, probes in stopping.items()]
        back = {host: future.result() for host, future in background.items()}
        for cleanup in cleanups:
            cleanup.result()
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        sessions.abort()
        raise
    pool.shutdown(wait=True)
    return StepOutcome(back, front)
