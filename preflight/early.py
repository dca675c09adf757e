"""Connect while the rest of preflight starts: for ``preflight run --hosts FILE`` the SSH handshakes begin
before the CLI, the checks and the engine are imported (~0.15 s of a run's start on a busy node).

:func:`start` reads only what a connection needs from the command line (``--hosts``, ``--connect-timeout``,
``--accept-new-host-keys``, ``--parallel``, ``--transport``) and hosts.yaml, and connects every host in
background threads. The engine's transport factory then :func:`take`s the started transport of a host whose
connection settings are unchanged; its ``connect()`` waits for the handshake already under way and raises
what it raised, so a failure is reported exactly once and a dead host still costs one ``--connect-timeout``.
Anything unusual (another command, ``--help``, no hosts file, a file that does not load, the slurm or a
local transport) starts nothing: the run then connects as it always did.

>>> _wanted(["run", "--hosts", "h.yaml", "--connect-timeout=3", "--accept-new-host-keys"])
('h.yaml', 3.0, True, 64)
>>> _wanted(["run", "--help", "--hosts", "h.yaml"]) is None, _wanted(["diagnose", "--hosts", "h.yaml"]) is None
(True, True)
"""

from __future__ import annotations

import atexit
import os
import queue
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from preflight.inventory import Host
    from preflight.transport.base import Execution, OutputWatcher
    from preflight.transport.ssh import SSHTransport

_LOCK = threading.Lock()
_STARTED: dict[str, StartedTransport] = {}  # host name -> its transport, until the engine takes it
_OPTION_VALUES = ("--hosts", "-H", "--connect-timeout", "--parallel", "--transport")


def _wanted(argv: Sequence[str]) -> tuple[str, float, bool, int] | None:
    """(hosts file, connect timeout, accept new host keys, parallel) when ``argv`` is a plain ssh ``run``."""
    if not argv or argv[0] != "run":
        return None
    values: dict[str, str] = {}
    accept = False
    args = list(argv[1:])
    while args:
        arg = args.pop(0)
        if arg in ("--help", "-h", "--"):
            return None
        name, eq, value = arg.partition("=")
        if name in _OPTION_VALUES:
            if not eq:
                if not args:
                    return None
                value = args.pop(0)
            values[name] = value
        elif arg == "--accept-new-host-keys":
            accept = True
        elif arg == "--no-accept-new-host-keys":
            accept = False
    hosts = values.get("--hosts", values.get("-H"))
    if not hosts or values.get("--transport", "auto") not in ("auto", "ssh"):
        return None
    if values.get("--transport", "auto") == "auto" and (hosts == "slurm" or "SLURM_JOB_ID" in os.environ):
        return None  # the slurm transport may be chosen: one srun, no SSH
    try:
        return hosts, float(values.get("--connect-timeout", "10")), accept, max(1, int(values.get("--parallel", "64")))
    except ValueError:
        return None


def main() -> None:
    """The ``preflight`` command: start connecting (for ``run --hosts``), then the CLI."""
    start(sys.argv[1:])
    from preflight.cli import main as cli_main

    cli_main()


def start(argv: Sequence[str]) -> None:
    """Begin connecting the hosts of ``preflight run --hosts FILE`` (no-op for anything else); never raises."""
    wanted = _wanted(argv)
    if wanted is None:
        return
    path, timeout, accept, parallel = wanted
    try:
        from pathlib import Path

        from preflight.inventory import load_inventory
        from preflight.transport.ssh import SSHTransport

        hosts = [h for h in load_inventory(Path(path)).hosts if not runs_here(h)]
    except Exception:  # the run itself reports a bad file, with its line
        return
    todo: queue.SimpleQueue[StartedTransport] = queue.SimpleQueue()
    with _LOCK:
        for host in hosts:
            started = _STARTED[host.name] = StartedTransport(SSHTransport(host, timeout, accept))
            todo.put(started)
    for _ in range(min(parallel, len(hosts))):
        threading.Thread(target=_work, args=(todo,), name="preflight-early-connect", daemon=True).start()
    atexit.register(_close_untaken)


def take(host: Host, connect_timeout: float, accept_new_host_keys: bool) -> StartedTransport | None:
    """The transport started for ``host`` when it was started with these very settings (once), else None."""
    with _LOCK:
        started = _STARTED.get(host.name)
        if started is None:
            return None
        inner = started.inner
        if (_connection(inner.host) != _connection(host) or inner.connect_timeout != connect_timeout
                or inner.accept_new_host_keys != accept_new_host_keys):
            return None
        del _STARTED[host.name]
    return started


class StartedTransport:
    """An SSH transport whose connect began at start-up; ``connect()`` waits for it."""

    def __init__(self, inner: SSHTransport) -> None:
        self.inner = inner
        self._done = threading.Event()
        self._error: BaseException | None = None

    def begin(self) -> None:
        try:
            self.inner.connect()
        except BaseException as exc:  # kept for connect(): the engine reports it
            self._error = exc
        finally:
            self._done.set()

    def connect(self) -> None:
        self._done.wait()
        if self._error is not None:
            raise self._error

    def run_script(self, script: str, timeout: float, on_stdout: OutputWatcher | None = None) -> Execution:
        return self.inner.run_script(script, timeout, on_stdout)

    def close(self) -> None:
        self.inner.close()  # also interrupts a connect still under way


def _work(todo: queue.SimpleQueue[StartedTransport]) -> None:
    while True:
        try:
            started = todo.get_nowait()
        except queue.Empty:
            return
        started.begin()


def _connection(host: Host) -> tuple[object, ...]:
    return (host.address, host.port, host.user, host.identity_file, host.known_hosts, host.proxy_jump)


def runs_here(host: Host) -> bool:
    """Hosts the engine runs here directly, without SSH (see engine.options.ssh_transport_factory)."""
    return (host.address in ("localhost", "local") and host.proxy_jump is None and host.port == 22
            and host.identity_file is None)


def _close_untaken() -> None:
    with _LOCK:
        left = list(_STARTED.values())
        _STARTED.clear()
    for started in left:
        started.close()
