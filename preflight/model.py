"""The report's data model: findings, hosts and the run summary (the JSON contract).

>>> f = Finding(check="sysctl.somaxconn", host="node2", status=Status.FAIL, message="too low",
...             observed="128", expected=">= 65535")
>>> f.to_dict()["status"]
'fail'
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any

from preflight.redact import known_secrets, redact_data, redact_text

SCHEMA = "preflight.report/1"


class Status(str, enum.Enum):
    """Outcome of one check on one host, ordered from best to worst (skip ranks lowest; a fail outranks an
    error: a fail is known to be wrong, an error is "could not tell")."""

    SKIP = "skip"
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return _RANK[self]

    @classmethod
    def worst(cls, statuses: list[Status]) -> Status:
        """The worst status of a list (skip when empty).

        >>> Status.worst([Status.PASS, Status.FAIL, Status.WARN]).value
        'fail'
        """
        return max(statuses, key=lambda s: s.rank, default=cls.SKIP)


_RANK = {Status.SKIP: 0, Status.PASS: 1, Status.WARN: 2, Status.ERROR: 3, Status.FAIL: 4}


class Verdict(str, enum.Enum):
    """A whole run's verdict, as the scheduler reads it: the word, the exit code, what to drain.

    A ``fail`` anywhere is FAIL (exit 1) even with errors beside it: something is known to be wrong. Errors
    alone are ERROR, "could not tell" (exit 4): never a reason to drain. SUSPECT (exit 3) is
    ``--max-unhealthy`` passed: too many hosts at once to blame them. HELD (exit 6): every fail is on a host the
    drain policy (``--drain-after``, docs/history.md) holds back: not yet failing often enough, or flapping.
    Warnings and passes exit 0.

    >>> Verdict.FAIL.exit_code, Verdict.ERROR.exit_code, Verdict.SUSPECT.exit_code, Verdict.WARN.exit_code
    (1, 4, 3, 0)
    >>> Verdict.HELD.exit_code, Verdict.HELD.word, Verdict.HELD.status.value
    (6, 'HELD', 'warn')
    >>> Verdict.ERROR.word, Verdict.ERROR.status.value
    ('ERROR', 'error')
    """

    SKIP = "skip"  # nothing was judged
    PASS = "pass"
    WARN = "warn"
    ERROR = "error"  # could not tell
    FAIL = "fail"
    SUSPECT = "suspect"
    HELD = "held"  # fails, all on hosts the drain policy holds back

    @property
    def exit_code(self) -> int:
        return _EXIT[self]

    @property
    def word(self) -> str:
        """The word a header, a badge or a prolog line prints."""
        return self.value.upper()

    @property
    def status(self) -> Status:
        """The finding status whose colour the verdict is drawn in (SUSPECT: error's, HELD: warn's)."""
        return {Verdict.SUSPECT: Status.ERROR, Verdict.HELD: Status.WARN}.get(self) or Status(self.value)


# The numbers of preflight.exit_codes (which imports nothing): 0 ok, 1 problems, 3 suspect, 4 could not tell,
# 6 held by the drain policy.
_EXIT = {Verdict.SKIP: 0, Verdict.PASS: 0, Verdict.WARN: 0, Verdict.FAIL: 1, Verdict.ERROR: 4, Verdict.SUSPECT: 3,
         Verdict.HELD: 6}


def decide(findings: Sequence[Finding], tripped: bool = False, held: frozenset[str] = frozenset()) -> Verdict:
    """The one verdict function: findings, whether ``--max-unhealthy`` tripped, and the hosts the drain policy
    holds back (``--drain-after``: their fails are known, not yet acted on) -> the run's verdict.

    A fail on a host not held (or about the cluster) is FAIL; fails only on held hosts are HELD, above an error
    elsewhere (something is known, and the policy chose to wait), below any fail acted on.

    >>> def of(*statuses, host="n1"): return [Finding("os.shm", host, Status(s), "m") for s in statuses]
    >>> decide(of("pass", "error", "fail")).value, decide(of("pass", "error")).value, decide(of()).value
    ('fail', 'error', 'skip')
    >>> decide(of("fail"), tripped=True).value
    'suspect'
    >>> held = frozenset({"n1"})
    >>> decide(of("fail"), held=held).value, decide(of("fail") + of("fail", host="n2"), held=held).value
    ('held', 'fail')
    >>> decide(of("fail") + of("error", host="n2"), held=held).value, decide(of("warn"), held=held).value
    ('held', 'warn')
    """
    if tripped:
        return Verdict.SUSPECT
    acted = [f.status for f in findings if not (f.status == Status.FAIL and f.host in held)]
    worst = Status.worst(acted)
    if worst != Status.FAIL and any(f.status == Status.FAIL for f in findings):
        return Verdict.HELD
    return Verdict(worst.value)


def hosts_to_drain(findings: Sequence[Finding], tripped: bool = False, held: frozenset[str] = frozenset()) -> set[str]:
    """The hosts a scheduler should drain: those with a ``fail``, but none the drain policy holds back and none
    when ``--max-unhealthy`` tripped. A host with errors only (unreachable, timed out) is never drained: nothing
    is known to be wrong with it.

    >>> hosts_to_drain([Finding("ssh.connect", "n1", Status.ERROR, "m"), Finding("os.shm", "n2", Status.FAIL, "m")])
    {'n2'}
    >>> hosts_to_drain([Finding("os.shm", "n2", Status.FAIL, "m")], held=frozenset({"n2"}))
    set()
    """
    if tripped:
        return set()
    return {f.host for f in findings if f.host and f.status == Status.FAIL and f.host not in held}


@dataclass(frozen=True, slots=True)
class Event:
    """A kind of event a check counted on a host (an Xid on one GPU, a port's link downs), so that the history
    step can say what is new since the host's previous run (docs/history.md, "Events since the last run").

    ``count``: as the node counts it now (the kernel log since boot, the port's counter); ``last``: when the newest
    one was logged, as the node printed it; ``new``: filled in from the history store, how many of ``count``
    came after the previous run (None: not compared, e.g. no earlier run or ``--no-history``).

    >>> Event("Xid 79 on 0000:3b:00", 2, "Fri Nov 27 06:10:01 2026").to_dict()
    {'key': 'Xid 79 on 0000:3b:00', 'count': 2, 'last': 'Fri Nov 27 06:10:01 2026'}
    """

    key: str
    count: int
    last: str | None = None
    new: int | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"key": self.key, "count": self.count, "last": self.last}
        if self.new is not None:
            data["new"] = self.new
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Event:
        new = data.get("new")
        return cls(str(data["key"]), int(data["count"]), data.get("last"), None if new is None else int(new))


@dataclass(frozen=True, slots=True)
class Finding:
    """One verdict: a check about a host (or the cluster when ``host`` is None)."""

    check: str
    host: str | None
    status: Status
    message: str
    observed: str | None = None
    expected: str | None = None
    remedy: str | None = None
    peer: str | None = None
    device: int | None = None
    peer_device: int | None = None
    # all_reduce figures of a pair finding (GB = 1e9, like nccl-tests)
    algbw_gbps: float | None = None
    busbw_gbps: float | None = None
    bytes: int | None = None
    expected_gbps: float | None = None  # the busbw the link class should give (preflight.allreduce.expected)
    group: tuple[str, ...] | None = None  # the hosts of an all_reduce group (``--bisect``)
    round: int | None = None  # the bisection round that ran it
    events: tuple[Event, ...] | None = None  # what the check counted (gpu.xid.errors, hccn.link.flaps)
    previous_run: str | None = None  # the host's previous run the events were compared with (ISO time)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "check": self.check,
            "host": self.host,
            "status": self.status.value,
            "message": self.message,
            "observed": self.observed,
            "expected": self.expected,
            "remedy": self.remedy,
        }
        for key in _OPTIONAL:
            value = getattr(self, key)
            if value is not None:
                data[key] = list(value) if isinstance(value, tuple) else value
        if self.events is not None:
            data["events"] = [e.to_dict() for e in self.events]
        if self.previous_run is not None:
            data["previous_run"] = self.previous_run
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        return cls(
            check=str(data["check"]),
            host=data.get("host"),
            status=Status(data["status"]),
            message=str(data.get("message", "")),
            observed=data.get("observed"),
            expected=data.get("expected"),
            remedy=data.get("remedy"),
            peer=data.get("peer"),
            device=data.get("device"),
            peer_device=data.get("peer_device"),
            algbw_gbps=data.get("algbw_gbps"),
            busbw_gbps=data.get("busbw_gbps"),
            bytes=data.get("bytes"),
            expected_gbps=data.get("expected_gbps"),
            group=tuple(data["group"]) if isinstance(data.get("group"), list) else None,
            round=data.get("round"),
            events=tuple(Event.from_dict(e) for e in data["events"]) if isinstance(data.get("events"), list)
            else None,
            previous_run=data.get("previous_run"),
        )


_OPTIONAL = ("peer", "device", "peer_device", "algbw_gbps", "busbw_gbps", "bytes", "expected_gbps", "group",
             "round")  # emitted only when set


@dataclass(frozen=True)
class HostResult:
    """What the engine learnt about reaching one host."""

    name: str
    address: str
    reachable: bool
    seconds: float = 0.0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "address": self.address, "reachable": self.reachable,
                                "seconds": round(self.seconds, 3)}
        if self.error:
            data["error"] = self.error
        return data


@dataclass(frozen=True)
class Report:
    """A whole run: hosts, findings and metadata; ``to_dict`` is the versioned JSON contract.

    Immutable once built (``dataclasses.replace`` makes a changed copy). ``secrets`` holds the literal values
    of the run's secret variables (hosts.yaml ``env``, the launch line): never serialized, only used by
    :meth:`redacted`, the one redaction step, which the application takes before anything is shown or saved.
    """

    hosts: Sequence[HostResult]
    findings: Sequence[Finding]
    checks: Sequence[str]
    started: str
    duration_s: float
    complete: bool = True
    tool_version: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    secrets: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hosts", tuple(self.hosts))
        object.__setattr__(self, "findings", tuple(self.findings))
        object.__setattr__(self, "checks", tuple(self.checks))
        object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))

    def summary(self) -> dict[str, int]:
        counts = {s.value: 0 for s in (Status.PASS, Status.WARN, Status.FAIL, Status.ERROR, Status.SKIP)}
        for finding in self.findings:
            counts[finding.status.value] += 1
        return counts

    def verdict(self) -> Verdict:
        """The run's one verdict (:func:`decide`): the header word, exit code, JUnit and Prometheus read it."""
        drain = self.extra.get("drain", {})
        return decide(self.findings, tripped=bool(drain.get("tripped")), held=frozenset(drain.get("held", ())))

    def exit_code(self) -> int:
        """The verdict's exit code (docs/exit-codes.md; usage errors exit 2 before a report exists)."""
        return self.verdict().exit_code

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "tool_version": self.tool_version,
            "started": self.started,
            "duration_s": round(self.duration_s, 3),
            "complete": self.complete,
            "verdict": self.verdict().value,
            "exit_code": self.exit_code(),
            "checks": list(self.checks),
            "hosts": [h.to_dict() for h in self.hosts],
            "findings": [f.to_dict() for f in self.findings],
            "summary": self.summary(),
            **self.extra,
        }

    def redacted(self) -> RedactedReport:
        """This report as it may be shown or saved (:class:`RedactedReport`)."""
        return RedactedReport(**{f.name: getattr(self, f.name) for f in fields(self) if f.init})


@dataclass(frozen=True)
class RedactedReport(Report):
    """A report fit to be shown or saved: every text redacted (``preflight.redact``) with the report's own
    ``secrets`` and this process's secret variables, by construction: building one (``Report.redacted()``, or
    ``dataclasses.replace`` of one) redacts what it is given. Every renderer and writer takes only this type
    (mypy checks it): the application redacts once, at its boundary, and nothing unredacted is written.

    >>> r = Report([], [Finding("net.env", "n1", Status.WARN, "HF_TOKEN=hunter22 seen, also hunter99")], [], "",
    ...            0.0, extra={"launch": ["--token", "t0ps3cret"]}, secrets=frozenset({"hunter99"}))
    >>> clean = r.redacted()
    >>> clean.findings[0].message, clean.extra["launch"], clean.redacted() is clean
    ('HF_TOKEN=*** seen, also ***', ['--token', '***'], True)
    >>> replace(clean, findings=[Finding("net.env", "n1", Status.WARN, "TOKEN=hunter2secret")]).findings[0].message
    'TOKEN=***'
    """

    # Texts made from this report (report.json and ``--json`` print one text): with the report, not global.
    _texts: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        secrets = self.secrets | known_secrets()
        hosts = tuple(replace(h, error=redact_text(h.error, secrets)) if h.error else h for h in self.hosts)
        object.__setattr__(self, "hosts", hosts)
        object.__setattr__(self, "findings", tuple(_redact_finding(f, secrets) for f in self.findings))
        object.__setattr__(self, "extra", MappingProxyType(redact_data(dict(self.extra), secrets)))
        object.__setattr__(self, "secrets", secrets)

    def redacted(self) -> RedactedReport:
        return self

    def text(self, kind: str, make: Callable[[RedactedReport], str]) -> str:
        """``make(self)``, made once for this report and ``kind`` (report.json and ``--json``: one text)."""
        if kind not in self._texts:
            self._texts[kind] = make(self)
        return self._texts[kind]


def _redact_finding(finding: Finding, secrets: frozenset[str]) -> Finding:
    """``finding`` with its texts redacted; the same object when there is nothing to hide."""
    def clean(text: str | None) -> str | None:
        return None if text is None else redact_text(text, secrets)

    message = redact_text(finding.message, secrets)
    observed, expected, remedy = clean(finding.observed), clean(finding.expected), clean(finding.remedy)
    events = None if finding.events is None else tuple(
        replace(e, key=redact_text(e.key, secrets), last=clean(e.last)) for e in finding.events)
    if (message, observed, expected, remedy, events) == (finding.message, finding.observed, finding.expected,
                                                         finding.remedy, finding.events):
        return finding
    return replace(finding, message=message, observed=observed, expected=expected, remedy=remedy, events=events)
