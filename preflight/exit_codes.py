"""The exit codes of every preflight command, in one place (the scheduler contract).

>>> from preflight.model import Finding, Report, Status
>>> for_report(Report([], [Finding("os.shm", "n1", Status.WARN, "small")], [], "", 0.0))
0
>>> tripped = {"drain": {"tripped": True}}
>>> for_report(Report([], [Finding("os.shm", "n1", Status.FAIL, "small")], [], "", 0.0, extra=tripped))
3
"""

from __future__ import annotations

from preflight.model import Report

OK = 0  # no fail or error finding (warnings allowed)
PROBLEMS = 1  # at least one fail or error finding
USAGE = 2  # usage or configuration error: nothing was run
SUSPECT = 3  # --max-unhealthy passed: suspect the check or the infrastructure, drain nothing
INTERRUPTED = 130  # Ctrl-C / SIGTERM: the partial report is written, marked incomplete


def for_report(report: Report) -> int:
    """The verdict of a finished run as an exit code (SUSPECT when the drain limit tripped)."""
    if report.extra.get("drain", {}).get("tripped"):
        return SUSPECT
    return PROBLEMS if report.exit_code() else OK
