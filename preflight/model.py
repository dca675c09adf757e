"""The report's data model: findings, hosts and the run summary (the JSON contract).

>>> f = Finding(check="sysctl.somaxconn", host="node2", status=Status.FAIL, message="too low",
...             observed="128", expected=">= 65535")
>>> f.to_dict()["status"]
'fail'
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

SCHEMA = "preflight.report/1"


class Status(str, enum.Enum):
    """Outcome of one check on one host, ordered from best to worst (skip ranks lowest)."""

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


_RANK = {Status.SKIP: 0, Status.PASS: 1, Status.WARN: 2, Status.FAIL: 3, Status.ERROR: 4}


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
                data[key] = value
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
        )


_OPTIONAL = ("peer", "device", "peer_device", "algbw_gbps", "busbw_gbps", "bytes")  # emitted only when set


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
    :func:`preflight.redact.for_output`, which every renderer and writer passes the report through.
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

    def verdict(self) -> Status:
        return Status.worst([f.status for f in self.findings])

    def exit_code(self) -> int:
        """0 when nothing failed or errored, else 1 (usage errors exit 2 before a report exists)."""
        return 1 if self.verdict() in (Status.FAIL, Status.ERROR) else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "tool_version": self.tool_version,
            "started": self.started,
            "duration_s": round(self.duration_s, 3),
            "complete": self.complete,
            "verdict": self.verdict().value,
            "checks": list(self.checks),
            "hosts": [h.to_dict() for h in self.hosts],
            "findings": [f.to_dict() for f in self.findings],
            "summary": self.summary(),
            **self.extra,
        }
