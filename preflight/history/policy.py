"""The drain policy, ``--drain-after`` (docs/history.md): act on a host's fail only when it keeps failing.

- ``N/M``: drain a host that failed in N or more of its last M runs, this one included;
- ``Nx/DURATION`` (``3x/1h``, ``2x/5m``): drain a host with N or more failed runs within DURATION, this one
  included;
- a **hard fault** (a device missing, a fatal Xid, a dead link: :data:`HARD_FAULTS`) is drained at once;
- a failing finding that **flaps** (its status changed ``k`` or more times over those runs, this one included:
  ``analysis.FLAP_CHANGES``) is held back and reported as flapping instead of drained and resumed.

A host that fails and is not drained is *held*: its fails stay ``fail`` in the report, and the one verdict
function (``preflight.model.decide``) makes a run whose every fail is held HELD (exit 6), not FAIL.

>>> parse("3/5"), parse("2x/30m")
(Policy(text='3/5', fails=3, runs=5, window_s=None), Policy(text='2x/30m', fails=2, runs=None, window_s=1800.0))
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from preflight.history.analysis import FLAP_CHANGES, changes, per_run
from preflight.history.store import Row
from preflight.model import Finding, Report, Status, hosts_to_drain

CHECK = "preflight.drain_policy"
# Finding ids whose fail is drained at once, whatever the host's history: a device missing, a fatal Xid,
# a dead link (docs/history.md). gpu.xid.errors fails only for an Xid NVIDIA's catalog asks a reset, a reboot or
# support for (a benign Xid passes, an unknown one warns: neither is a fail, so neither drains).
HARD_FAULTS = frozenset({"gpu.devices.count", "npu.count", "gpu.xid.errors", "hccn.link.up", "gpu.fabric.ports"})
# Of these, the counts are hard only with fewer devices than expected: more (or chips counted as NPUs) is
# devices_per_host set wrong, the same on every host, not a fault of one.
COUNTS = frozenset({"gpu.devices.count", "npu.count"})
_LEADING = re.compile(r"^\s*(\d+)\b")
_RATIO = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
_SPAN = re.compile(r"^\s*(\d+)\s*x\s*/\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0}


@dataclass(frozen=True)
class Policy:
    """``--drain-after``: ``fails`` of the last ``runs`` runs, or ``fails`` within ``window_s`` seconds."""

    text: str
    fails: int
    runs: int | None = None
    window_s: float | None = None


def parse(text: str) -> Policy:
    """``--drain-after`` -> a :class:`Policy`; ValueError when malformed.

    >>> parse("1/1").fails, parse(" 3x/2h ").window_s
    (1, 7200.0)
    >>> parse("4/3")
    Traceback (most recent call last):
    ValueError: --drain-after '4/3': N of the last M runs needs 1 <= N <= M
    """
    ratio, span = _RATIO.match(text), _SPAN.match(text)
    if ratio:
        fails, runs = int(ratio[1]), int(ratio[2])
        if not 1 <= fails <= runs:
            raise ValueError(f"--drain-after {text!r}: N of the last M runs needs 1 <= N <= M")
        return Policy(text.strip(), fails, runs=runs)
    if span:
        window = float(span[2]) * _UNITS[span[3].lower()]
        if int(span[1]) < 1 or window <= 0:
            raise ValueError(f"--drain-after {text!r}: N fails within a duration needs N >= 1 and a duration")
        return Policy(text.strip(), int(span[1]), window_s=window)
    raise ValueError(f"--drain-after {text!r}: expected N/M (3 fails in the last 5 runs: 3/5) or Nx/DURATION "
                     "(3 fails within an hour: 3x/1h)")


def _window(policy: Policy, earlier: Sequence[tuple[float, str, bool]], now: float) -> list[tuple[float, str, bool]]:
    """The host's earlier runs (time, run id, failed) the policy looks at, oldest first.

    >>> runs = [(float(t), f"r{t}", True) for t in range(10)]
    >>> len(_window(Policy("3/5", 3, runs=5), runs, 10.0)), len(_window(Policy("2x/3s", 2, window_s=3.0), runs, 10.0))
    (4, 3)
    >>> len(_window(Policy("3/5", 3, runs=5), runs[:3], 10.0))  # fewer earlier runs than M - 1: all of them
    3
    """
    ordered = sorted(earlier)
    if policy.runs is not None:
        return ordered[max(0, len(ordered) - (policy.runs - 1)):] if policy.runs > 1 else []
    assert policy.window_s is not None
    return [r for r in ordered if r[0] >= now - policy.window_s]


def hard_fault(finding: Finding) -> bool:
    """A failing finding the policy drains at once: one of :data:`HARD_FAULTS`, and for a device count, fewer
    devices than expected (the leading numbers of ``observed`` and ``expected``; unreadable: hard).

    >>> lost = Finding("gpu.devices.count", "n1", Status.FAIL, "m", observed="7 GPUs (indexes 0, 1, 2, 3, 4, 5, 6)",
    ...                expected="8 GPUs (devices_per_host)")
    >>> hard_fault(lost), hard_fault(replace(lost, observed="16 GPUs (indexes 0-15)"))
    (True, False)
    >>> hard_fault(Finding("sysctl.somaxconn", "n1", Status.FAIL, "m")), hard_fault(replace(lost, status=Status.WARN))
    (False, False)
    """
    if finding.status != Status.FAIL or finding.check not in HARD_FAULTS:
        return False
    if finding.check in COUNTS:
        have, want = _LEADING.match(finding.observed or ""), _LEADING.match(finding.expected or "")
        if have and want:
            return int(have[1]) < int(want[1])
    return True


def apply(report: Report, policy: Policy, earlier: Sequence[Row], now: float, k: int = FLAP_CHANGES) -> Report:
    """``report`` (already through ``drain.apply``) with the policy's decision in ``extra["drain"]``: ``held``,
    ``flapping``, ``hard``, ``recommend_drain`` without the held hosts; and one ``preflight.drain_policy`` warn
    finding per failing host, naming the policy and its count. ``earlier``: the store's rows before this run."""
    drain: dict[str, Any] = dict(report.extra.get("drain", {}))
    failing: dict[str, list[Finding]] = {}
    for f in report.findings:
        if f.host and f.status == Status.FAIL:
            failing.setdefault(f.host, []).append(f)
    runs_of: dict[str, dict[str, tuple[float, bool]]] = {}
    for row in earlier:
        if row.host in failing:
            at, failed = runs_of.setdefault(row.host, {}).get(row.run_id, (row.at, False))
            runs_of[row.host][row.run_id] = (at, failed or row.status == "fail")
    sequences = per_run(r for r in earlier if r.host in failing)
    held, hard, flapping, notes = [], [], [], []
    for host, fails in failing.items():
        window = _window(policy, [(at, rid, bad) for rid, (at, bad) in runs_of.get(host, {}).items()], now)
        in_window = {rid for _, rid, _ in window}
        count = 1 + sum(1 for *_, bad in window if bad)
        seen = f"failed in {count} of the last {len(window) + 1} runs" if policy.runs else \
            f"{count} failed runs within {policy.text.split('/', 1)[1].strip()}"
        hard_ids = sorted({f.check for f in fails if hard_fault(f)})
        flaps = []
        for f in fails:
            statuses = [s for _, rid, s in sequences.get((host, f.check), []) if rid in in_window] + ["fail"]
            if changes(statuses) >= k:
                flaps.append({"host": host, "finding": f.check, "statuses": statuses})
        if hard_ids:
            hard.append(host)
            note = f"{host}: drained at once, a hard fault ({', '.join(hard_ids)})"
        elif flaps:
            held.append(host)
            flapping.extend(flaps)
            note = f"{host}: flapping, not drained: " + "; ".join(
                f"{x['finding']} {' '.join(x['statuses'])}" for x in flaps)
        elif count >= policy.fails:
            note = f"{host}: recommended for drain: {seen}"
        else:
            held.append(host)
            note = f"{host}: held back, not drained: {seen}, fewer than {policy.fails}"
        notes.append(Finding(CHECK, host, Status.WARN, f"{CHECK}: {note} (--drain-after {policy.text})",
                             observed=seen, expected=f"--drain-after {policy.text}"))
    frozen = frozenset(held)
    drained = hosts_to_drain(report.findings, bool(drain.get("tripped")), frozen)
    drain.update(drain_after=policy.text, held=sorted(held), flapping=flapping, hard=sorted(hard),
                 recommend_drain=[h for h in drain.get("recommend_drain", sorted(drained)) if h in drained])
    return replace(report, findings=[*report.findings, *notes], extra={**report.extra, "drain": drain})
