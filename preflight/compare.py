"""Compare two reports: what got worse, what was fixed, version drift and all_reduce bandwidth drops.

Used by ``preflight diff OLD.json NEW.json`` and by ``preflight run --baseline PATH``, which turns the
comparison with a known-good run into ``baseline.busbw`` and ``baseline.versions`` findings.

>>> from preflight.model import Finding, HostResult, Report, Status
>>> old = Report([HostResult("n1", "n1", True)], [Finding("os.shm", "n1", Status.PASS, "ok")], ["os"], "", 0.0)
>>> new = Report([HostResult("n1", "n1", True)], [Finding("os.shm", "n1", Status.FAIL, "small")], ["os"], "", 0.0)
>>> d = diff(old, new)
>>> [(c.check, c.host, c.old, c.new) for c in d.worse], d.got_worse()
([('os.shm', 'n1', 'pass', 'fail')], True)
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from preflight.model import Finding, Report, Status

DEFAULT_THRESHOLD = 0.05  # a busbw drop of more than 5% is flagged (as SuperBench's baseline rules do)
_PROBLEM = (Status.WARN, Status.FAIL, Status.ERROR)

# (host, device, peer, peer_device) of a pair finding, ordered so that both directions meet.
PairKey = tuple[str, int, str, int]
# (check, host, peer, device, peer_device)
FindingKey = tuple[str, str, str, int, int]


def default_baseline_path() -> Path:
    """Where `preflight baseline save` keeps the known-good run: $XDG_DATA_HOME/preflight/baseline.json.

    >>> default_baseline_path().name
    'baseline.json'
    """
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "preflight" / "baseline.json"


@dataclass(frozen=True)
class StatusChange:
    check: str
    host: str | None
    peer: str | None
    old: str  # status value, or "absent"
    new: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "host": self.host, "peer": self.peer, "old": self.old, "new": self.new,
                "message": self.message}


@dataclass(frozen=True)
class VersionDrift:
    check: str  # versions.<component>
    host: str
    old: str
    new: str

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "host": self.host, "old": self.old, "new": self.new}


@dataclass(frozen=True)
class BusbwChange:
    host: str
    device: int
    peer: str
    peer_device: int
    old_gbps: float
    new_gbps: float

    @property
    def change(self) -> float:
        """Relative change, -0.25 for a 25% drop."""
        return (self.new_gbps - self.old_gbps) / self.old_gbps if self.old_gbps > 0 else 0.0

    def label(self) -> str:
        return f"{self.host}:{self.device} <-> {self.peer}:{self.peer_device}"

    def to_dict(self) -> dict[str, Any]:
        return {"host": self.host, "device": self.device, "peer": self.peer, "peer_device": self.peer_device,
                "old_busbw_gbps": self.old_gbps, "new_busbw_gbps": self.new_gbps,
                "change_pct": round(100 * self.change, 1)}


@dataclass
class Diff:
    """What changed from ``old`` to ``new``; ``got_worse()`` is the verdict of `preflight diff`."""

    threshold: float
    worse: list[StatusChange] = field(default_factory=list)
    fixed: list[StatusChange] = field(default_factory=list)
    versions: list[VersionDrift] = field(default_factory=list)
    busbw_down: list[BusbwChange] = field(default_factory=list)
    hosts_added: list[str] = field(default_factory=list)
    hosts_removed: list[str] = field(default_factory=list)

    def got_worse(self) -> bool:
        return bool(self.worse or self.versions or self.busbw_down)

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "preflight.diff/1", "got_worse": self.got_worse(), "threshold": self.threshold,
                "worse": [c.to_dict() for c in self.worse], "fixed": [c.to_dict() for c in self.fixed],
                "version_drift": [v.to_dict() for v in self.versions],
                "busbw_down": [b.to_dict() for b in self.busbw_down],
                "hosts_added": self.hosts_added, "hosts_removed": self.hosts_removed}

    def lines(self) -> list[str]:
        """Plain text, one change a line, worst kinds first."""
        out = [f"worse    [{c.old} -> {c.new}] {c.check} {c.host or '(cluster)'}"
               + (f" <-> {c.peer}" if c.peer else "") + f": {c.message}" for c in self.worse]
        out += [f"busbw    {b.label()}: {b.old_gbps:.3g} -> {b.new_gbps:.3g} GB/s ({100 * b.change:+.1f}%)"
                for b in self.busbw_down]
        out += [f"version  {v.check} {v.host}: {v.old} -> {v.new}" for v in self.versions]
        out += [f"fixed    [{c.old} -> {c.new}] {c.check} {c.host or '(cluster)'}"
                + (f" <-> {c.peer}" if c.peer else "") for c in self.fixed]
        out += [f"host     added {h}" for h in self.hosts_added]
        out += [f"host     removed {h}" for h in self.hosts_removed]
        return out


def _finding_key(f: Finding) -> FindingKey:
    return (f.check, f.host or "", f.peer or "", -1 if f.device is None else f.device,
            -1 if f.peer_device is None else f.peer_device)


def _statuses(report: Report) -> dict[FindingKey, Finding]:
    worst: dict[FindingKey, Finding] = {}
    for f in report.findings:
        if f.check.startswith("baseline."):
            continue  # comparisons of comparisons say nothing new
        key = _finding_key(f)
        if key not in worst or f.status.rank > worst[key].status.rank:
            worst[key] = f
    return worst


def _subject(key: FindingKey) -> FindingKey:
    """(family, host, peer, device, peer_device) with host and peer in a fixed order (a pair is one subject)."""
    (host, device), (peer, peer_device) = sorted(((key[1], key[3]), (key[2], key[4])))
    return (key[0].split(".", 1)[0], host, peer, device, peer_device)


def _by_family(found: dict[FindingKey, Finding]) -> dict[FindingKey, Status]:
    worst: dict[FindingKey, Status] = {}
    for key, f in found.items():
        subject = _subject(key)
        worst[subject] = Status.worst([f.status, worst.get(subject, f.status)])
    return worst


def pair_figures(report: Report) -> dict[PairKey, float]:
    """Lowest busbw of every all_reduce pair of the report, both directions under one key.

    >>> f = Finding("allreduce.pair", "b", Status.PASS, "m", peer="a", device=0, peer_device=1, busbw_gbps=2.0)
    >>> pair_figures(Report([], [f], [], "", 0.0))
    {('a', 1, 'b', 0): 2.0}
    """
    pairs: dict[PairKey, float] = {}
    for f in report.findings:
        if not f.check.startswith("allreduce.") or f.busbw_gbps is None or f.host is None or f.peer is None:
            continue
        a, b = (f.host, f.device or 0), (f.peer, f.peer_device or 0)
        (h, d), (p, pd) = sorted((a, b))
        key = (h, d, p, pd)
        pairs[key] = min(pairs.get(key, f.busbw_gbps), f.busbw_gbps)
    return pairs


def version_values(report: Report) -> dict[tuple[str, str], str]:
    """{(versions.<component>, host): observed version} from the versions findings of a report."""
    values: dict[tuple[str, str], str] = {}
    for f in report.findings:
        if f.check.startswith("versions.") and f.host and f.observed and f.status != Status.ERROR:
            values[(f.check, f.host)] = f.observed
    return values


def busbw_changes(old: Report, new: Report) -> list[BusbwChange]:
    before, after = pair_figures(old), pair_figures(new)
    return [BusbwChange(k[0], k[1], k[2], k[3], before[k], after[k]) for k in sorted(before) if k in after]


def diff(old: Report, new: Report, threshold: float = DEFAULT_THRESHOLD) -> Diff:
    """Compare two reports: status changes per (check, host, peer), version drift and busbw drops."""
    result = Diff(threshold=threshold)
    before, after = _statuses(old), _statuses(new)
    # A check may file the same subject under another id when its status changes (allreduce.pair when a
    # pair passes, allreduce.busbw when it fails): compare with the family's worst on that subject then.
    before_family, after_family = _by_family(before), _by_family(after)
    gone = {h.name for h in old.hosts} - {h.name for h in new.hosts}
    for key in sorted(set(before) | set(after)):
        o, n = before.get(key), after.get(key)
        subject = _subject(key)
        o_status = o.status if o else before_family.get(subject)
        n_status = n.status if n else after_family.get(subject)
        if n is not None and n.status in _PROBLEM and (o_status is None or n.status.rank > o_status.rank):
            result.worse.append(StatusChange(n.check, n.host, n.peer, o_status.value if o_status else "absent",
                                             n.status.value, n.message))
        elif o is not None and o.status in _PROBLEM and n_status is not None and n_status.rank < o.status.rank:
            result.fixed.append(StatusChange(o.check, o.host, o.peer, o.status.value, n_status.value,
                                             n.message if n else ""))
        elif o is not None and o.status in _PROBLEM and n is None and gone & {o.host, o.peer}:
            result.fixed.append(StatusChange(o.check, o.host, o.peer, o.status.value, "host removed",
                                             f"{', '.join(sorted(gone & {o.host, o.peer}))} is not in the new run"))
    old_versions, new_versions = version_values(old), version_values(new)
    result.versions = [VersionDrift(k[0], k[1], old_versions[k], new_versions[k]) for k in sorted(old_versions)
                       if k in new_versions and new_versions[k] != old_versions[k]]
    result.busbw_down = [c for c in busbw_changes(old, new) if c.change < -threshold]
    old_hosts, new_hosts = {h.name for h in old.hosts}, {h.name for h in new.hosts}
    result.hosts_added = sorted(new_hosts - old_hosts)
    result.hosts_removed = sorted(old_hosts - new_hosts)
    return result


def baseline_findings(baseline: Report, report: Report, threshold: float = DEFAULT_THRESHOLD,
                      source: str = "the baseline") -> list[Finding]:
    """``baseline.busbw`` and ``baseline.versions`` findings of ``report`` against a known-good run.

    baseline.busbw: fail per host and pair whose busbw fell by more than ``threshold`` (filed under both
    hosts of the pair); pass per host whose pairs held; skip when neither run measured the host's pairs.
    baseline.versions: warn per host whose versions differ from the baseline; pass otherwise.
    """
    findings: list[Finding] = []
    hosts = [h.name for h in report.hosts]
    changes = busbw_changes(baseline, report)
    dropped = [c for c in changes if c.change < -threshold]
    limit = f"{100 * threshold:g}%"
    for host in hosts:
        mine = [c for c in changes if host in (c.host, c.peer)]
        bad = [c for c in dropped if host in (c.host, c.peer)]
        for c in bad:
            me, my_dev, other, other_dev = (c.host, c.device, c.peer, c.peer_device) if c.host == host else \
                (c.peer, c.peer_device, c.host, c.device)
            findings.append(Finding(
                "baseline.busbw", me, Status.FAIL,
                f"baseline.busbw: all_reduce busbw {me}:{my_dev} <-> {other}:{other_dev} fell "
                f"{-100 * c.change:.1f}% below {source} ({c.old_gbps:.3g} -> {c.new_gbps:.3g} GB/s, "
                f"more than {limit})",
                observed=f"{c.new_gbps:.3g} GB/s", expected=f">= {c.old_gbps * (1 - threshold):.3g} GB/s "
                f"({c.old_gbps:.3g} GB/s in {source} - {limit})",
                remedy=f"preflight bench allreduce --hosts hosts.yaml  # then check the links of {me} and {other}",
                peer=other, device=my_dev, peer_device=other_dev, busbw_gbps=c.new_gbps))
        if bad:
            continue
        if mine:
            worst = min(mine, key=lambda c: c.change)
            findings.append(Finding("baseline.busbw", host, Status.PASS,
                                    f"baseline.busbw: {len(mine)} pairs of {host} within {limit} of {source} "
                                    f"(worst {100 * worst.change:+.1f}%)"))
        else:
            findings.append(Finding("baseline.busbw", host, Status.SKIP,
                                    f"baseline.busbw: no all_reduce pair of {host} measured in both this run "
                                    f"and {source}"))
    old_versions, new_versions = version_values(baseline), version_values(report)
    for host in hosts:
        keys = sorted(k for k in new_versions if k[1] == host and k in old_versions)
        if not keys:
            findings.append(Finding("baseline.versions", host, Status.SKIP,
                                    f"baseline.versions: no versions of {host} in both this run and {source}"))
            continue
        drift = [(k[0].split(".", 1)[1], old_versions[k], new_versions[k]) for k in keys
                 if old_versions[k] != new_versions[k]]
        if drift:
            text = ", ".join(f"{name} {a} -> {b}" for name, a, b in drift)
            findings.append(Finding(
                "baseline.versions", host, Status.WARN,
                f"baseline.versions: {host} changed since {source}: {text}",
                observed=", ".join(f"{name} {b}" for name, _, b in drift),
                expected=", ".join(f"{name} {a}" for name, a, _ in drift),
                remedy="preflight baseline save <this run's report.json>  # when the change is intended"))
        else:
            findings.append(Finding("baseline.versions", host, Status.PASS,
                                    f"baseline.versions: {len(keys)} versions of {host} as in {source}"))
    return findings
