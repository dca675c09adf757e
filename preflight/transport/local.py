"""Run scripts on this machine: the transport behind ``preflight run`` without ``--hosts``."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

from preflight.transport.base import Execution, OutputWatcher


class LocalTransport:
    """``sh -s`` in a new process group, killed as a group when the deadline passes or the transport is
    closed (as closing an SSH session ends its scripts: nothing a run started here outlives it).

    >>> transport = LocalTransport()
    >>> transport.run_script("echo hi", 5.0).stdout
    b'hi\\n'
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[bytes]] = set()

    def connect(self) -> None:
        return None

    def run_script(self, script: str, timeout: float, on_stdout: OutputWatcher | None = None) -> Execution:
        start = time.monotonic()
        proc = subprocess.Popen(
            ["sh", "-s"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        with self._lock:
            self._running.add(proc)
        try:
            out, err = proc.communicate(script.encode(), timeout=timeout)
            if on_stdout is not None:
                on_stdout(out)
            return Execution(out, err, proc.returncode, False, time.monotonic() - start)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            out, err = proc.communicate()
            return Execution(out or b"", err or b"", None, True, time.monotonic() - start)
        except BaseException:
            _kill_group(proc.pid)
            proc.wait()
            raise
        finally:
            with self._lock:
                self._running.discard(proc)

    def close(self) -> None:
        """Kill the process group of every script still running (their ``run_script`` calls then return)."""
        with self._lock:
            running = list(self._running)
        for proc in running:
            _kill_group(proc.pid)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
