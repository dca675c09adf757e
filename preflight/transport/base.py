"""The transport interface: run one shell script on a host, get its bytes back.

A transport knows nothing about checks. The engine hands it a script (sent on stdin of ``sh -s``,
so no part of it travels on a command line) and a deadline; it returns what came back, even when
the deadline cut the run short.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Protocol

OutputWatcher = Callable[[bytes], None]


class TransportError(Exception):
    """A host could not be reached or refused us.

    ``kind`` is a short stable word for reports: refused, timeout, banner, auth, hostkey-unknown,
    hostkey-changed, resolve, ssh.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass(frozen=True)
class Execution:
    """Raw outcome of one script run."""

    stdout: bytes
    stderr: bytes
    exit_status: int | None  # None when the run did not finish
    timed_out: bool
    seconds: float


class Transport(Protocol):
    """Runs scripts on one host; connect lazily, close when done."""

    def connect(self) -> None: ...

    def run_script(self, script: str, timeout: float, on_stdout: OutputWatcher | None = None) -> Execution:
        """Run ``script``; ``on_stdout`` sees stdout as it arrives (a transport may hand it all over at the end)."""
        ...

    def close(self) -> None: ...


class Batching(Protocol):
    """Transports whose hosts' scripts run together, one command per round (the slurm transport: one srun).

    The engine announces each round of the active phase before its scripts arrive, so the round
    starts as soon as the last of them is in, and stops everything when the run ends.
    """

    def expect(self, hosts: Collection[str]) -> None:
        """The next round's hosts: each will call ``run_script`` once for it."""
        ...

    def stop(self) -> None:
        """End whatever still runs; no round starts after this."""
        ...
