"""Running the real CLI from the tests, and reading its JSON report.

>>> report = {"findings": [{"check": "sysctl.somaxconn", "host": "node1", "status": "fail"},
...                        {"check": "ssh.connect", "host": "node2", "status": "error"}]}
>>> sorted(not_passing(report)), list(by_host(report, "sysctl.somaxconn"))
([('sysctl.somaxconn', 'node1', 'fail')], ['node1'])
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any


def preflight(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None,
              timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """``python -m preflight ARGS`` with its output captured (``env`` is added to this environment)."""
    return subprocess.run([sys.executable, "-m", "preflight", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, check=False, env={**os.environ, **(env or {})})


def closed_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (a host whose sshd is down refuses it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def refusing_hosts(folder: Path, *addresses: str) -> Path:
    """hosts.yaml in ``folder`` with hosts n1, n2, ... at ``addresses`` (default 127.0.0.1), all on a closed port
    (unreachable at once: connection refused), and an empty known_hosts."""
    (folder / "known_hosts").write_text("")
    path = folder / "hosts.yaml"
    entries = "".join(f"  - {{name: n{i}, address: {a}}}\n" for i, a in enumerate(addresses or ["127.0.0.1"], 1))
    path.write_text(f"defaults:\n  known_hosts: {folder / 'known_hosts'}\n  port: {closed_port()}\nhosts:\n{entries}")
    return path


def interruptible() -> None:
    """``preexec_fn`` for a child that a test stops with SIGINT: Ctrl-C as a terminal delivers it.

    A job started with ``&`` by a non-interactive shell (a CI runner's, ``nohup ... &``) ignores SIGINT, its
    children inherit that, and Python then installs no KeyboardInterrupt handler: the child would never see
    the signal. This gives the child SIGINT's default action back before it starts.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def not_passing(report: dict[str, Any]) -> set[tuple[str, str | None, str]]:
    """(check, host, status) of every finding that is not a pass, ssh.connect left out."""
    return {(f["check"], f["host"], f["status"]) for f in report["findings"]
            if f["status"] != "pass" and f["check"] != "ssh.connect"}


def by_host(report: dict[str, Any], check: str) -> dict[str, dict[str, Any]]:
    """The findings of ``check``, keyed by host (None for a cluster-wide one; the last one wins)."""
    return {f["host"]: f for f in report["findings"] if f["check"] == check}
