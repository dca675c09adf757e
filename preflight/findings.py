"""Small pieces every evaluator uses (re-exported by preflight.checks.base): facts, the finding shorthand, majority,
median.

They live outside the checks package so that the shared helpers under preflight/ can use them without
importing the checks (whose package discovers every check module on import).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from preflight.model import Finding, Status
from preflight.tools.common import Tool

Facts = dict[str, Any]


def majority(values: Mapping[str, Any]) -> tuple[Any, bool]:
    """The most common value and whether it is a strict majority.

    >>> majority({"a": "1", "b": "1", "c": "2"})
    ('1', True)
    >>> majority({"a": "1", "b": "2"})[1]
    False
    """
    counts = Counter(values.values()).most_common()
    if not counts:
        return None, False
    top, count = counts[0]
    return top, count * 2 > len(values)


def median(values: Sequence[float]) -> float:
    """The middle value (the mean of the two middle ones for an even count), as ``statistics.median`` gives it
    without its import (~2.5 ms at start-up).

    >>> median([3.0, 1.0, 2.0]), median([1.0, 2.0])
    (2.0, 1.5)
    """
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def finding(check: str, host: str | None, status: Status, message: str, **extra: Any) -> Finding:
    """A finding whose message starts with its id: ``message`` is what follows (every message starts so, and
    only here is it written).

    >>> finding("os.shm", "n1", Status.FAIL, "/dev/shm is 64 MiB on n1").message
    'os.shm: /dev/shm is 64 MiB on n1'
    """
    return Finding(check=check, host=host, status=status, message=f"{check}: {message}", **extra)


def tool_missing(check: str, host: str, tool: Tool, looked: Sequence[str] | None = None) -> Finding:
    """The one error for a host where ``tool`` is nowhere (``looked``: where the probe says it looked; default,
    where ``tool.lookup`` looks), for the check that owns the tool; the others say ``tool_skip``.

    >>> nvidia_smi = Tool("nvidia-smi", ("/usr/bin/nvidia-smi",), "cannot see the GPUs", "in /usr/bin", "install it")
    >>> tool_missing("gpu.devices.smi", "n1", nvidia_smi).message
    'gpu.devices.smi: nvidia-smi not found on n1 (looked on PATH, /usr/bin/nvidia-smi): cannot see the GPUs'
    """
    where = ", ".join(looked or []) or tool.looked_at
    return finding(check, host, Status.ERROR, f"{tool.name} not found on {host} (looked on {where}): {tool.without}",
                   observed=f"{tool.name} missing", expected=f"{tool.name} on PATH or {tool.home}",
                   remedy=tool.install)


def tool_skip(check: str, host: str, tool: Tool, owner: str) -> Finding:
    """A skip for a host where ``tool`` is nowhere, when the check ``owner`` reports it (``tool_missing``).

    >>> tool_skip("npu.firmware", "n1", Tool("npu-smi", ()), "npu.smi").message
    'npu.firmware: npu-smi not found on n1 (npu.smi says more)'
    """
    return finding(check, host, Status.SKIP, f"{tool.name} not found on {host} ({owner} says more)")
