"""Run scripts on this machine: the transport behind ``preflight run`` without ``--hosts``."""

from __future__ import annotations

import os
import signal
import subprocess
import time

from preflight.transport.base import Execution, OutputWatcher


class LocalTransport:
    """``sh -s`` in a new process group, killed as a group when the deadline passes."""

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

    def close(self) -> None:
        return None


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
