"""The exit codes of every preflight command, in one place (the scheduler contract; docs/exit-codes.md).

| code | meaning | a scheduler should |
|---|---|---|
| 0 | healthy (warnings allowed) | run the job |
| 1 | at least one ``fail``: the node / cluster is bad | drain (or not start) |
| 4 | no ``fail``, one ``error`` or more: a check could not tell (unreachable, timed out) | retry or page |
| 2 | usage or configuration error: nothing was judged | fix the hook |
| 3 | ``--max-unhealthy`` tripped: suspect preflight or the infrastructure | drain nothing |
| 70 | preflight itself crashed (one line on stderr, the traceback in a log file) | keep the node, report the bug |
| 130 / 143 | interrupted by SIGINT / SIGTERM (a partial report is written) | - |
| 5 | ``preflight fix`` only: refused on purpose (a host changed since its plan, ...) | look, then plan again |
| 6 | fails, all on hosts the drain policy (``--drain-after``) holds back or finds flapping | run the job, log |

>>> from preflight.model import Finding, Report, Status
>>> def report(*statuses): return Report([], [Finding("os.shm", "n1", s, "m") for s in statuses], [], "", 0.0)
>>> for_report(report(Status.WARN)), for_report(report(Status.ERROR)), for_report(report(Status.ERROR, Status.FAIL))
(0, 4, 1)
>>> tripped = {"drain": {"tripped": True}}
>>> for_report(Report([], [Finding("os.shm", "n1", Status.FAIL, "small")], [], "", 0.0, extra=tripped))
3
"""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from preflight.model import Report

OK = 0  # no fail or error finding (warnings allowed)
PROBLEMS = 1  # at least one fail finding: the node or the cluster is bad
USAGE = 2  # usage or configuration error: nothing was run
SUSPECT = 3  # --max-unhealthy passed: suspect the check or the infrastructure, drain nothing
COULD_NOT_TELL = 4  # no fail, but at least one error finding: a check could not run or a host not be reached
HELD = 6  # --drain-after: every fail is on a host the policy holds back (not yet N fails) or finds flapping
REFUSED = 5  # fix: not applied on purpose (a host changed since its plan, a lock held, the confirmation declined)
INTERNAL = 70  # preflight crashed (EX_SOFTWARE): never a verdict about the node
INTERRUPTED = 130  # Ctrl-C (SIGINT): the partial report is written, marked incomplete
TERMINATED = 143  # SIGTERM (a scheduler's timeout or cancel): the same, 128 + 15


def interrupted(stopped_by: int | None) -> int:
    """130 after Ctrl-C (SIGINT), 143 after SIGTERM (a scheduler's cancel or timeout).

    >>> interrupted(signal.SIGTERM), interrupted(signal.SIGINT), interrupted(None)
    (143, 130, 130)
    """
    return TERMINATED if stopped_by == signal.SIGTERM else INTERRUPTED


# `preflight fix`: when several hold, the first of these wins (docs/exit-codes.md, "preflight fix").
FIX_ORDER = (COULD_NOT_TELL, REFUSED, PROBLEMS, OK)


def for_fix(*codes: int) -> int:
    """``preflight fix``'s exit code of several outcomes: could not apply (4) over refused (5) over something
    still to change or failing (1) over done (0); a code outside FIX_ORDER (usage, interrupted) wins.

    >>> for_fix(OK, PROBLEMS, REFUSED), for_fix(REFUSED, COULD_NOT_TELL), for_fix(), for_fix(OK, INTERRUPTED)
    (5, 4, 0, 130)
    """
    other = [c for c in codes if c not in FIX_ORDER]
    if other:
        return other[0]
    return next((c for c in FIX_ORDER if c in codes), OK)


def for_report(report: Report) -> int:
    """The verdict of a finished run as an exit code: the report model decides (``Report.verdict``), so the
    header word, report.json, JUnit and Prometheus say the same as the code."""
    return report.exit_code()
