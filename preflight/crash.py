"""When preflight itself breaks: one line for the terminal (or the scheduler's log), the traceback in a file.

The file goes to ``$PREFLIGHT_LOG_DIR``, else ``$XDG_STATE_HOME/preflight`` (``~/.local/state/preflight``),
else the system's temporary directory; both the line and the file are redacted like every other output.

>>> line = report(ValueError("boom"), directory=Path(tempfile.mkdtemp()))
>>> line.startswith("preflight: internal error: ValueError: boom (a bug in preflight")
True
"""

from __future__ import annotations

import os
import tempfile
import time
import traceback
from pathlib import Path

from preflight import __version__
from preflight.redact import known_secrets, redact_text


def log_directory() -> Path:
    """Where crash logs go (see the module docstring)."""
    explicit = os.environ.get("PREFLIGHT_LOG_DIR")
    if explicit:
        return Path(explicit)
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "preflight"


def report(exc: BaseException, directory: Path | None = None) -> str:
    """Write the traceback of ``exc`` to a new log file; the one line to print (it names the file)."""
    secrets = known_secrets()  # this process's secret variables; NAME=value and --token value by pattern
    text = redact_text("".join(traceback.format_exception(exc)), secrets)
    name = f"crash-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
    where = "not written"
    for candidate in (directory or log_directory(), Path(tempfile.gettempdir())):
        try:
            candidate.mkdir(parents=True, exist_ok=True)
            path = candidate / name
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
                out.write(f"preflight {__version__}\n{text}")
            where = str(path)
            break
        except OSError:
            continue
    summary = redact_text(f"{type(exc).__name__}: {exc}".splitlines()[0], secrets)[:300]
    return (f"preflight: internal error: {summary} (a bug in preflight, not a verdict about any node; "
            f"traceback in {where})")
