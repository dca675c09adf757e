"""What the commands print while and after a run: the live progress line, the report (terminal or JSON),
and the interrupted-run exit. Renders only; the run itself is ``preflight.app``'s.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Protocol

from preflight.model import RedactedReport, Status
from preflight.render import json_report, summary

# What makes rich draw on a stderr that is not a terminal: without any, and without a terminal, no progress
# line can be drawn and rich (~25 ms of imports, before the first host is contacted) is not loaded at all.
_DRAW_ANYWAY = ("FORCE_COLOR", "TTY_COMPATIBLE")


class _Named(Protocol):
    @property
    def name(self) -> str: ...


class _Judged(Protocol):
    @property
    def status(self) -> Status: ...


class HostDone(Protocol):
    """What the progress callback reads of a finished host (the engine's ``HostGather`` is one): its name and
    its findings' statuses. A renderer reads the report model only, never the engine."""

    @property
    def host(self) -> _Named: ...

    @property
    def findings(self) -> Sequence[_Judged]: ...


def progress(hosts: list[str], enabled: bool) -> tuple[AbstractContextManager[object], Callable[[HostDone], None]]:
    """A transient progress line on stderr (hosts done, unreachable so far, still waiting) and the callback
    the engine calls per finished host. Drawn only when ``enabled`` and stderr is a terminal.

    >>> bar, host_done = progress(["n1"], enabled=False)
    >>> with bar:
    ...     pass
    """
    isatty = getattr(sys.stderr, "isatty", None)
    if not enabled or not ((isatty is not None and isatty()) or any(v in os.environ for v in _DRAW_ANYWAY)):
        return nullcontext(), _nothing
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    err = Console(stderr=True, markup=False, highlight=False)
    live = err.is_terminal  # enabled, or progress() returned above
    bar = Progress(TextColumn("checking"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[status]}"),
                   TimeElapsedColumn(), console=err, transient=True, disable=not live)
    task = bar.add_task("hosts", total=len(hosts), status="")
    problems: list[str] = []
    waiting = set(hosts)

    def host_done(gather: HostDone) -> None:
        waiting.discard(gather.host.name)
        if any(f.status in (Status.FAIL, Status.ERROR) for f in gather.findings):
            problems.append(gather.host.name)
        if live:
            bar.update(task, advance=1, status=f"unreachable {len(problems)}  waiting for {waiting_text(waiting)}")

    return bar, host_done


def _nothing(gather: HostDone) -> None:
    """The per-host callback when no progress line is drawn."""


FOLD_AT_MOST = 64  # waiting hosts named on the progress line; beyond, only their count (O(1) per finished host)


def waiting_text(waiting: set[str]) -> str:
    """The progress line's "waiting for" part: the hosts folded while they are few, else their count.

    >>> waiting_text({"n1", "n2", "n3"}), waiting_text(set()), waiting_text({f"n{i}" for i in range(1000)})
    ('n[1-3]', '-', '1000 hosts')
    """
    if len(waiting) > FOLD_AT_MOST:
        return f"{len(waiting)} hosts"
    still = summary.fold(sorted(waiting))
    return (still if len(still) <= 40 else still[:37] + "...") or "-"


def show(report: RedactedReport, path: Path | None, json_out: bool) -> None:
    """The JSON report on stdout, or the terminal report followed by where report.json is (``path`` None:
    report.json could not be written, stderr said why)."""
    if json_out:
        sys.stdout.write(json_report.dumps(report))
        return
    from rich.console import Console

    from preflight.render import terminal

    out = Console(markup=False, highlight=False)
    terminal.render(report, out)
    out.print(f"\nreport: {path or 'not written'}", soft_wrap=True)  # a path to copy: never broken over lines


def exit_interrupted(path: Path | None, code: int) -> None:
    """Say where the partial report is (``path`` None: not written) and leave at once with ``code``
    (``exit_codes.interrupted``; worker threads may still sit in a connect)."""
    from rich.console import Console

    where = f"partial report written to {path}, marked incomplete" if path else "the partial report was not written"
    Console(stderr=True, markup=False, highlight=False).print(f"preflight: interrupted; {where}", style="yellow")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
