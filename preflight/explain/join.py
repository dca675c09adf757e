"""The explanation joined with a saved ``preflight run`` report: what the checks saw on the hosts.

Each candidate cause names the checks that verify it (``Signature.checks``). For each of those checks the
report's findings are read: a ``fail`` or ``warn`` CONFIRMS the candidate, a ``pass`` RULES IT OUT, and no
finding (the check did not run, was skipped, or could not tell) leaves it NOT CHECKED. Which hosts count:

- a check of one host (memory, interfaces, a process holding the device...) counts on the host whose log saw
  the failure, or on every host when the log did not say which;
- a check of the path between hosts (firewall, reachability, the master's name, versions, all_reduce...)
  counts on every host: the client's log sees a timeout, the master's firewall is what drops it.

A candidate is confirmed when one of its checks failed, ruled out when none failed and at least one passed,
not checked otherwise. A confirmed root cause moves ahead of the unconfirmed ones; a ruled-out one keeps its
place and is marked.

>>> from preflight.model import Finding, Report, Status
>>> from preflight.explain.matcher import explain_texts
>>> report = Report([], [Finding("os.memory", "n1", Status.PASS, "os.memory: 60 GiB available")], [], "", 0.0)
>>> joined = join(explain_texts({"r.log": "failed (exitcode: -9) local_rank: 0 (pid: 7)"}), report)
>>> joined.verdicts[0].status, joined.verdicts[0].evidence[0].describe()
('ruled out', 'os.memory passed on n1: os.memory: 60 GiB available')
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from preflight.explain.matcher import Explanation, Match
from preflight.model import Finding, Report, Status

CONFIRMED, RULED_OUT, NOT_CHECKED = "confirmed", "ruled out", "not checked"

# Checks that judge the path between hosts or the cluster as a whole: their fault may sit on another host than
# the one whose log saw it (a client times out, the master's firewall drops it).
PATH_CHECKS = ("firewall", "net.reachability", "net.master_resolution", "net.names", "net.address_family",
               "sysctl.port_range", "allreduce", "hccn.reachability", "versions", "os.clock")
MAX_SHOWN = 6  # evidence lines per candidate in the terminal
_ORDER = {CONFIRMED: 0, RULED_OUT: 1, NOT_CHECKED: 2}


@dataclass(frozen=True)
class Evidence:
    """What one check saw: confirmed (failed/warned), ruled out (passed) or not checked, on which hosts."""

    status: str
    check: str
    hosts: tuple[str, ...]
    finding: str  # the finding's message (the first one where several hosts agree), or why there is none

    def describe(self) -> str:
        """One line: ``firewall.rules failed on node1: ...``.

        >>> Evidence(RULED_OUT, "net.interface", ("n2",), "GLOO_SOCKET_IFNAME=eth0 exists").describe()
        'net.interface passed on n2: GLOO_SOCKET_IFNAME=eth0 exists'
        >>> Evidence(NOT_CHECKED, "os.memory", (), "no finding in the report").describe()
        'os.memory: no finding in the report'
        """
        return f"{self.headline()}: {self.finding}"

    def headline(self) -> str:
        """The check, what it did and where: ``firewall.rules failed on node1``."""
        where = f" on {', '.join(self.hosts)}" if self.hosts else ""
        verb = {CONFIRMED: " failed", RULED_OUT: " passed"}.get(self.status, "")
        return f"{self.check}{verb}{where}"

    def to_dict(self) -> dict[str, Any]:
        """``{"status", "check", "host", "hosts", "finding"}``; ``host`` is the one host, or None for several."""
        return {"status": self.status, "check": self.check,
                "host": self.hosts[0] if len(self.hosts) == 1 else None, "hosts": list(self.hosts),
                "finding": self.finding}


@dataclass(frozen=True)
class Verdict:
    """One candidate cause and the evidence for and against it."""

    match: Match
    host: str | None  # the report's name of the host whose log saw it (None: not known / not in the report)
    evidence: tuple[Evidence, ...]

    @property
    def status(self) -> str:
        """confirmed / ruled out / not checked (see the module docstring)."""
        kinds = {e.status for e in self.evidence}
        return CONFIRMED if CONFIRMED in kinds else RULED_OUT if RULED_OUT in kinds else NOT_CHECKED

    def to_dict(self) -> dict[str, Any]:
        """The match's ``--json`` entry with ``status`` and ``evidence`` added."""
        return {**self.match.to_dict(), "status": self.status, "evidence": [e.to_dict() for e in self.evidence]}


@dataclass(frozen=True)
class Joined:
    """The candidates in their new order, and whether the report changed which one comes first."""

    verdicts: tuple[Verdict, ...]
    reranked: bool
    hosts: tuple[str, ...]  # the report's hosts

    def to_dict(self) -> dict[str, Any]:
        return {"matches": [v.to_dict() for v in self.verdicts], "reranked": self.reranked}


def report_host(report: Report, name: str | None) -> str | None:
    """The report's name for the host a log calls ``name``: the same name, its address, or its short name.

    >>> from preflight.model import HostResult
    >>> r = Report([HostResult("node2", "10.0.0.2", True)], [], [], "", 0.0)
    >>> report_host(r, "10.0.0.2"), report_host(r, "node2.cluster.local"), report_host(r, "node9")
    ('node2', 'node2', None)
    """
    if not name:
        return None
    names = {h.name for h in report.hosts} | {f.host for f in report.findings if f.host}
    if name in names:
        return name
    for h in report.hosts:
        if name == h.address:
            return h.name
    short = name.split(".")[0]
    found = [n for n in names if n.split(".")[0] == short]
    return found[0] if len(found) == 1 else None


def _covers(check: str, finding_check: str) -> bool:
    """A signature's check id covers its own finding id and those under it (``os`` covers ``os.memory``)."""
    return finding_check == check or finding_check.startswith(check + ".")


def _is_path(check: str) -> bool:
    return any(_covers(p, check) for p in PATH_CHECKS)


def weigh(check: str, host: str | None, report: Report) -> list[Evidence]:
    """The evidence of one check for a candidate seen on ``host`` (None: any host).

    >>> from preflight.model import Finding
    >>> r = Report([], [Finding("firewall.rules", "n1", Status.FAIL, "tcp 29500 dropped"),
    ...                 Finding("firewall.rules", "n2", Status.PASS, "nothing dropped")], [], "", 0.0)
    >>> [e.describe() for e in weigh("firewall.rules", "n2", r)]
    ['firewall.rules failed on n1: tcp 29500 dropped']
    """
    findings = [f for f in report.findings if _covers(check, f.check)]
    if host is not None and not _is_path(check):
        findings = [f for f in findings if f.host in (host, None)]
        if not findings and host not in {h.name for h in report.hosts if h.reachable} and report.hosts:
            return [Evidence(NOT_CHECKED, check, (host,), "the report has no answer from this host")]
    bad = [f for f in findings if f.status in (Status.FAIL, Status.WARN)]
    if bad:
        # the candidate's own host first, then the worst, then the report's order
        bad.sort(key=lambda f: (f.host != host, -f.status.rank))
        return [Evidence(CONFIRMED, f.check, _where(f), _text(f)) for f in _one_per_host(bad)]
    passed = [f for f in findings if f.status is Status.PASS]
    if passed:
        by_check: dict[str, list[Finding]] = {}
        for f in passed:
            by_check.setdefault(f.check, []).append(f)
        return [Evidence(RULED_OUT, fid, _hosts(fs), _text(fs[0])) for fid, fs in by_check.items()]
    if findings:  # skipped or could not tell
        f = max(findings, key=lambda f: f.status.rank)
        why = "could not tell" if f.status is Status.ERROR else "skipped"
        return [Evidence(NOT_CHECKED, f.check, _where(f), f"{why}: {_text(f)}")]
    return [Evidence(NOT_CHECKED, check, (), "no finding in the report (the check did not run)")]


def _one_per_host(findings: Iterable[Finding]) -> list[Finding]:
    seen: set[tuple[str, str | None]] = set()
    kept = []
    for f in findings:
        if (f.check, f.host) not in seen:
            seen.add((f.check, f.host))
            kept.append(f)
    return kept


def _where(f: Finding) -> tuple[str, ...]:
    return (f.host,) if f.host else ()


def _hosts(findings: Sequence[Finding]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(f.host for f in findings if f.host))


def _text(f: Finding) -> str:
    text = f.message
    if f.peer and f.peer not in text:
        text += f" (peer {f.peer})"
    return text


def join(explanation: Explanation, report: Report) -> Joined:
    """Every candidate of ``explanation`` weighed against ``report``; confirmed root causes first."""
    verdicts = []
    for match in explanation.matches:
        host = report_host(report, match.host)  # None (every host counts) when the report lacks it
        found = [e for check in match.signature.checks for e in weigh(check, host, report)]
        evidence = tuple(sorted(found, key=lambda e: _ORDER[e.status]))  # confirmations first
        verdicts.append(Verdict(match, host, evidence))
    ordered = sorted(verdicts, key=lambda v: not (v.match.signature.root_cause and v.status == CONFIRMED))
    reranked = bool(ordered) and ordered[0] is not verdicts[0]
    return Joined(tuple(ordered), reranked, tuple(h.name for h in report.hosts))


def render(joined: Joined, source: str) -> list[str]:
    """Terminal lines: the evidence for the root cause, one mark per other candidate.

    >>> from preflight.explain.matcher import explain_texts
    >>> from preflight.model import Finding
    >>> r = Report([], [Finding("os.memory", "n1", Status.WARN, "2% available")], [], "", 0.0)
    >>> print("\\n".join(render(join(explain_texts({"r.log": "Signal 9 (SIGKILL) received by PID 3"}), r),
    ...                         "report.json")))
    evidence from report.json: confirmed
      confirmed    os.memory failed on n1: 2% available
    """
    if not joined.verdicts:
        return [f"evidence from {source}: nothing to weigh (no known cause)"]
    best = joined.verdicts[0]
    lines = [f"evidence from {source}: {best.status}"]
    if joined.reranked:
        lines[0] += " (moved ahead of the log's first candidate, which the report does not confirm)"
    for e in best.evidence[:MAX_SHOWN]:
        lines.append(f"  {e.status:<12} {e.describe()}")
    if len(best.evidence) > MAX_SHOWN:
        lines.append(f"  ... {len(best.evidence) - MAX_SHOWN} more (--json lists them all)")
    shown = {best.match.signature.id}
    for v in joined.verdicts[1:]:
        if v.status != NOT_CHECKED and v.match.signature.id not in shown:
            shown.add(v.match.signature.id)
            first = next(e for e in v.evidence if e.status == v.status)
            lines.append(f"  also {v.status}: {v.match.signature.id} ({first.headline()})")
    return lines
