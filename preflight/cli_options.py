"""Command-line options that several commands share, declared once (``run`` and ``node`` name the job's
interpreter the same way: ``preflight.interpreter``), and how a repeatable list option is read."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

PythonOption = Annotated[str | None, typer.Option(
    "--python", help="the job's interpreter for the python-level probes, e.g. /opt/venv/bin/python (else "
    "$PREFLIGHT_PYTHON, else hosts.yaml's python:, else python3 on the login PATH, a guess no node is blamed for)")]
SetupOption = Annotated[list[str] | None, typer.Option(
    "--setup", help="a shell line run before them, e.g. 'source /opt/conda/bin/activate train' (repeatable; "
    "else $PREFLIGHT_SETUP, one line per line, else hosts.yaml's setup:)")]


def split_items(values: list[str] | None) -> list[str]:
    """A repeatable, comma-separated option's values (``--checks a,b --checks c``) -> its items.

    >>> split_items(["sysctl, net", "os"]), split_items(None), split_items([" , "])
    (['sysctl', 'net', 'os'], [], [])
    """
    return [item.strip() for value in values or [] for item in value.split(",") if item.strip()]


# History (docs/history.md): `run`, `node` and `judge` append their verdict to a local store after deciding it.
HistoryOption = Annotated[Path | None, typer.Option(
    "--history", help="the history store to append this verdict to (SQLite; default $PREFLIGHT_HISTORY, else "
    "$XDG_STATE_HOME/preflight/history.sqlite); a store that cannot be written is a warning, never another "
    "exit code")]
NoHistoryOption = Annotated[bool, typer.Option(
    "--no-history", envvar="PREFLIGHT_NO_HISTORY", help="record nothing in the history store")]
DrainAfterOption = Annotated[str | None, typer.Option(
    "--drain-after", help="drain policy (docs/history.md): N/M (a host failing in N of its last M runs) or "
    "Nx/DURATION (N failed runs within 1h, 30m, 2d); hard faults act at once, flapping findings are held; a run "
    "whose every fail is held exits 6, not 1. Counts the runs in the history store")]
