"""The hosts' sessions: opened by the gather, kept open for the active phases, closed once (or aborted).

``run_on`` runs probes as one script on a host's open session; a host without one, or a script that
raises, gives outputs that say why they did not run (never a made-up result).
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Sequence

from preflight.batch import Probe, ProbeOutput, build_script, new_nonce, parse_output
from preflight.engine.options import TransportFactory
from preflight.inventory import Host
from preflight.transport.base import Batching, OutputWatcher, Transport

NO_SESSION = ProbeOutput(stdout="", stderr="not run: the host did not finish in time", exit_status=None)


class Sessions:
    """Every transport of a run: those connecting or gathering (``live``), those kept open (``open``)."""

    def __init__(self, make: TransportFactory, batching: Batching | None = None) -> None:
        self.make = make
        self.batching = batching  # the transport runs each round of scripts as one command (srun)
        self._lock = threading.Lock()
        self._live: dict[str, Transport] = {}
        self._open: dict[str, Transport] = {}

    def start(self, host: Host) -> Transport:
        """A new transport for ``host``, tracked so that ``abort`` can close it while it connects."""
        transport = self.make(host)
        with self._lock:
            self._live[host.name] = transport
        return transport

    def settle(self, host: Host, transport: Transport, keep: bool) -> None:
        """The gather of ``host`` ended: keep its session for the active phase, or close it."""
        with self._lock:
            self._live.pop(host.name, None)
            if keep:
                self._open[host.name] = transport
        if not keep:
            _close(transport)

    def is_open(self, host: str) -> bool:
        with self._lock:
            return host in self._open

    def expect(self, hosts: Collection[str]) -> None:
        """Announce a round to a batching transport: the hosts among ``hosts`` that will run a script."""
        if self.batching is not None:
            with self._lock:
                running = [h for h in hosts if h in self._open]
            self.batching.expect(running)

    def run_on(self, host: str, probes: Sequence[Probe], timeout: float,
               on_stdout: OutputWatcher | None = None) -> dict[str, ProbeOutput]:
        """Run ``probes`` as one script on ``host``'s open session: key -> output."""
        with self._lock:
            transport = self._open.get(host)
        if transport is None:
            return dict.fromkeys([p.key for p in probes], NO_SESSION)
        return self.run_with(transport, probes, timeout, on_stdout)

    @staticmethod
    def run_with(transport: Transport, probes: Sequence[Probe], timeout: float,
                 on_stdout: OutputWatcher | None = None) -> dict[str, ProbeOutput]:
        """Run ``probes`` as one script on ``transport`` (another channel of a live connection too)."""
        keys = [p.key for p in probes]
        nonce = new_nonce()
        try:
            execution = transport.run_script(build_script(probes, nonce), timeout, on_stdout)
        except Exception as exc:
            failed = ProbeOutput(stdout="", stderr=f"not run: {type(exc).__name__}: {exc}", exit_status=None)
            return dict.fromkeys(keys, failed)
        return parse_output(execution.stdout, keys, nonce, execution.stderr)

    def abort(self) -> None:
        """Close every session, live or open (unblocks the threads waiting on them): Ctrl-C."""
        with self._lock:
            every = list(self._live.values()) + list(self._open.values())
            self._open.clear()
        self._stop_batching()
        for transport in every:
            _close(transport)

    def close(self) -> None:
        """Close the sessions kept open; idempotent."""
        with self._lock:
            opened = list(self._open.values())
            self._open.clear()
        self._stop_batching()
        for transport in opened:
            _close(transport)

    def _stop_batching(self) -> None:
        if self.batching is not None:
            self.batching.stop()


def _close(transport: Transport) -> None:
    try:
        transport.close()
    except Exception:
        pass
