"""Drain safety: ``--max-unhealthy N|P%``. When too many hosts fail, suspect the check, not the nodes.

A scheduler hook that drains every node preflight flags would let one flaky check (or a broken
switch, or a full shared filesystem) drain the whole fleet. Past the limit, ``preflight run`` exits
with ``exit_codes.SUSPECT`` (3), adds a ``preflight.max_unhealthy`` finding and recommends draining nothing.

>>> parse_limit("10%"), parse_limit("4")
((10.0, True), (4.0, False))
>>> exceeds(5, 64, parse_limit("10%")), exceeds(7, 64, parse_limit("10%")), exceeds(4, 64, parse_limit("4"))
(False, True, False)
"""

from __future__ import annotations

from dataclasses import replace

from preflight.model import Finding, Report, Status, hosts_to_drain

CHECK = "preflight.max_unhealthy"


def parse_limit(text: str) -> tuple[float, bool]:
    """``"N"`` (hosts) or ``"P%"`` (of all hosts) -> (value, is_percent); ValueError when malformed."""
    raw = text.strip()
    percent = raw.endswith("%")
    number = raw[:-1].strip() if percent else raw
    try:
        value = float(number) if percent else float(int(number))
    except ValueError:
        raise ValueError(f"--max-unhealthy {text!r}: expected a number of hosts (4) or a percentage (10%)") from None
    if value < 0 or (percent and value > 100):
        raise ValueError(f"--max-unhealthy {text!r}: out of range")
    return value, percent


def exceeds(unhealthy: int, total: int, limit: tuple[float, bool]) -> bool:
    """Whether ``unhealthy`` of ``total`` hosts is more than the limit allows."""
    value, percent = limit
    allowed = value * total / 100.0 if percent else value
    return unhealthy > allowed


def unhealthy_hosts(report: Report) -> list[str]:
    """Hosts with at least one fail or error finding, in report order."""
    bad = {f.host for f in report.findings if f.host and f.status in (Status.FAIL, Status.ERROR)}
    return [h.name for h in report.hosts if h.name in bad]


def apply(report: Report, text: str | None) -> tuple[Report, bool]:
    """Add the drain verdict to ``report`` (``extra["drain"]``); True when the limit was passed.

    ``unhealthy`` (a fail or an error) is what the limit counts: many unreachable hosts at once is itself a
    sign. ``recommend_drain`` is the model's ``hosts_to_drain``: hosts with a fail, never error-only ones, and
    none past the limit.

    >>> from preflight.model import HostResult
    >>> found = [Finding("ssh.connect", "a", Status.ERROR, "m"), Finding("os.shm", "b", Status.FAIL, "m")]
    >>> r = Report([HostResult(n, n, True) for n in ("a", "b")], found, [], "", 0)
    >>> d = apply(r, None)[0].extra["drain"]
    >>> d["unhealthy"], d["recommend_drain"]
    (['a', 'b'], ['b'])
    """
    unhealthy = unhealthy_hosts(report)
    total = len(report.hosts)
    tripped = text is not None and exceeds(len(unhealthy), total, parse_limit(text))
    drained = hosts_to_drain(report.findings, tripped)
    drain = {"unhealthy": unhealthy, "max_unhealthy": text, "tripped": tripped,
             "recommend_drain": [h for h in unhealthy if h in drained]}
    findings = list(report.findings)
    if tripped:
        findings.insert(0, Finding(
            CHECK, None, Status.ERROR,
            f"{CHECK}: {len(unhealthy)} of {total} hosts are unhealthy, more than --max-unhealthy {text}: "
            "suspect the check or the infrastructure (network, switch, shared filesystem, this controller), "
            "not the nodes; drain nothing until a person has looked",
            observed=f"{len(unhealthy)}/{total} hosts", expected=f"<= {text}",
            remedy="inspect report.json; rerun one family at a time (preflight run --checks <family>) to find "
                   "the check that flags them all"))
    return replace(report, findings=findings, extra={**report.extra, "drain": drain}), tripped
