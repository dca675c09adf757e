"""Timeout values in log lines, decoded into the layer that timed out.

Defaults recognised (torch / NCCL / HCCL): 60 s c10d store connect/read timeout (torchrun's c10d
rendezvous store), 120 s ``HCCL_CONNECT_TIMEOUT``, 600 s (600000 ms) NCCL watchdog
(``ProcessGroupNCCL`` default), 900 s static store / rendezvous timeout (``rdzv_configs timeout``;
the master reports it as 901 s), 1800 s (0:30:00) default process-group timeout.

>>> [t.describe() for t in decode("Timed out after 901 seconds waiting for clients. 1/2 clients joined.")]
['901 s: the static store / rendezvous timeout (900 s default: the store waited that long for the other ranks)']
>>> decode("WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600013 milliseconds")[0].seconds
600.0
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Timeout:
    """One duration found in a line and the layer it most likely belongs to."""

    seconds: float
    text: str  # as written in the log
    layer: str

    def describe(self) -> str:
        return f"{_fmt(self.seconds)}: {self.layer}"


def _fmt(seconds: float) -> str:
    return f"{seconds:g} s" if seconds < 1e6 else f"{seconds:.0f} s"


# (regex, unit factor to seconds); the first group is the number (or h:mm:ss)
_PATTERNS: tuple[tuple[re.Pattern[str], float], ...] = (
    (re.compile(r"Timeout\(ms\)=(\d+)"), 0.001),
    (re.compile(r"Timed out after (\d+) seconds"), 1.0),
    (re.compile(r"timeout=(\d+:\d{2}:\d{2})"), 0.0),
    (re.compile(r"Original timeout was (\d+) ms"), 0.001),
    (re.compile(r"timed out after (\d+)ms"), 0.001),
    (re.compile(r"timed out after (\d+)s\b"), 1.0),
    (re.compile(r"timeout\[(\d+)(?: ?s)?\]"), 1.0),
    (re.compile(r"\b(\d+) ?ms\b"), 0.001),
    (re.compile(r"(?:timeout|timed out)[^0-9]{0,30}(\d+) ?(?:s|sec|seconds)\b", re.IGNORECASE), 1.0),
)


def _hms(text: str) -> float:
    h, m, s = (int(x) for x in text.split(":"))
    return float(h * 3600 + m * 60 + s)


def layer_for(seconds: float, line: str = "") -> str:
    """The layer a timeout of ``seconds`` most likely belongs to (by the known defaults).

    >>> layer_for(120, "HCCL wait socket establish timeout")
    'HCCL_CONNECT_TIMEOUT (120 s default: HCCL link setup between the ranks)'
    >>> layer_for(1800)
    'the default process-group timeout (30 min, init_process_group(timeout=...))'
    """
    hccl = "HCCL" in line or "EI0006" in line or "hccl" in line
    if abs(seconds - 120) <= 2 or (hccl and seconds >= 30 and "Timeout(ms)" not in line):
        return f"HCCL_CONNECT_TIMEOUT ({_fmt(seconds)}{' default' if abs(seconds - 120) <= 2 else ''}: " \
               "HCCL link setup between the ranks)"
    if abs(seconds - 60) <= 2:
        return "the c10d store connect/read timeout (60 s: a client could not reach or read the TCPStore " \
               "on MASTER_ADDR:MASTER_PORT)"
    if abs(seconds - 600) <= 2:
        return "the NCCL watchdog (600000 ms = 10 min default of ProcessGroupNCCL: a collective never " \
               "completed on some rank)"
    if abs(seconds - 900) <= 2:
        return "the static store / rendezvous timeout (900 s default: the store waited that long for the " \
               "other ranks)"
    if abs(seconds - 1800) <= 2:
        return "the default process-group timeout (30 min, init_process_group(timeout=...))"
    return "a timeout set by the job or launcher (not a torch/NCCL/HCCL default)"


def decode(line: str) -> list[Timeout]:
    """Every duration in a timeout-like line, decoded (duplicates and 'ran for' durations dropped).

    >>> [t.seconds for t in decode("(world_size=2, worker_count=1, timeout=0:30:00)")]
    [1800.0]
    >>> decode("nothing here")
    []
    """
    low = line.lower()
    if "timeout" not in low and "timed out" not in low and "time out" not in low and "times out" not in low:
        return []
    found: list[Timeout] = []
    taken: list[tuple[int, int]] = []
    for pattern, factor in _PATTERNS:
        for m in pattern.finditer(line):
            start, end = m.span(1)
            if any(s < end and start < e for s, e in taken):
                continue
            before = line[max(0, m.start() - 9):m.start()]
            if "ran for" in before or "ran for" in line[max(0, start - 9):start]:
                continue  # how long it ran, not the limit
            value = _hms(m.group(1)) if factor == 0.0 else int(m.group(1)) * factor
            if value <= 0 or value > 10 ** 7:
                continue
            taken.append((start, end))
            if any(abs(t.seconds - value) < 1e-9 for t in found):
                continue
            found.append(Timeout(value, m.group(0), layer_for(value, line)))
    return found
