"""The report read for display, without drawing anything: statuses' marks, host ranges, check families, the
slow all_reduce pairs and the problems grouped by cause. Shared by the terminal, HTML and Markdown renderers
(and imports no terminal library: a ``--json`` run never loads one).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import replace

from ClusterShell.NodeSet import NodeSet

from preflight.model import Finding, Report, Status

STYLE = {Status.PASS: "green", Status.WARN: "yellow", Status.FAIL: "bold red", Status.ERROR: "bold magenta",
         Status.SKIP: "dim"}
MARK = {Status.PASS: "ok", Status.WARN: "warn", Status.FAIL: "FAIL", Status.ERROR: "ERROR", Status.SKIP: "-"}


def fold(names: list[str]) -> str:
    """Fold host names into ClusterShell ranges.

    >>> fold(["node1", "node2", "node3", "gpu7"])
    'gpu7,node[1-3]'
    """
    try:
        return str(NodeSet.fromlist(names))
    except Exception:
        return ",".join(names)


def hosts_text(count: int) -> str:
    """``1 host``, ``2 hosts``.

    >>> hosts_text(1), hosts_text(0)
    ('1 host', '0 hosts')
    """
    return f"{count} host{'' if count == 1 else 's'}"


def families(report: Report) -> list[str]:
    seen: dict[str, None] = {"ssh": None}
    for ident in report.checks:  # the checks' own order first
        seen.setdefault(ident.split(".", 1)[0], None)
    present = {finding.check.split(".", 1)[0] for finding in report.findings}
    for family in sorted(present):
        seen.setdefault(family, None)
    return [family for family in seen if family in present or family == "ssh"]


def busbw_pairs(report: Report) -> dict[frozenset[str], tuple[float, Status]]:
    """Inter-host device-0 all_reduce pairs of the report: {host, peer} -> (lowest busbw, worst status);
    a pair that fell below the baseline (``baseline.busbw``) counts as failing too.

    >>> f = Finding("allreduce.pair", "a", Status.PASS, "m", peer="b", device=0, peer_device=0, busbw_gbps=2.5)
    >>> busbw_pairs(Report([], [f], [], "", 0.0))[frozenset(("a", "b"))]
    (2.5, <Status.PASS: 'pass'>)
    """
    pairs: dict[frozenset[str], tuple[float, Status]] = {}
    for f in report.findings:
        if (not f.check.startswith(("allreduce.", "baseline.busbw")) or f.busbw_gbps is None or f.host is None
                or f.peer is None or f.host == f.peer or f.device != f.peer_device or f.device not in (0, None)):
            continue
        key = frozenset((f.host, f.peer))
        old = pairs.get(key)
        pairs[key] = (f.busbw_gbps, f.status) if old is None else \
            (min(old[0], f.busbw_gbps), Status.worst([old[1], f.status]))
    return pairs


def problems(report: Report) -> list[tuple[Finding, list[str]]]:
    """Non-passing findings grouped by what they say, worst first: (example finding, hosts). Findings of one
    cause on several devices (the same text but for the device number and its addresses) are one problem
    whose message names the devices (report.json keeps each finding)."""
    groups: dict[tuple[object, ...], list[Finding]] = defaultdict(list)
    for finding in report.findings:
        if finding.status in (Status.WARN, Status.FAIL, Status.ERROR):
            key = (finding.check, finding.status, finding.observed, finding.expected, finding.remedy,
                   finding.message if finding.host is None else None)
            groups[key].append(finding)
    folded: dict[tuple[object, ...], list[list[Finding]]] = defaultdict(list)
    for members in groups.values():
        first = members[0]
        cause: tuple[object, ...] = (id(members),)
        if all(f.device is not None for f in members):
            cause = (first.check, first.status, tuple(sorted({f.host or "" for f in members})),
                     *(_masked(t) for t in (first.message, first.observed, first.expected, first.remedy)))
        folded[cause].append(members)
    found = []
    for parts in folded.values():
        members = [f for part in parts for f in part]
        example = members[0]
        devices = sorted({f.device for f in members if f.device is not None})
        if len(parts) > 1 and len(devices) > 1:
            example = replace(example, message=f"{example.message} (the same on devices {int_ranges(devices)}; "
                                               f"shown for device {example.device})")
        found.append((example, [f.host for f in members if f.host]))
    found.sort(key=lambda item: (-item[0].status.rank, item[0].check))
    return found


_DEVICE_NUMBER = re.compile(r"(?<![\w-])(device|-i|NPU|GPU)( ?)(\d+)\b")
_ADDRESS = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b|\b[0-9a-f]*:[0-9a-f:]+:[0-9a-f]+\b")


def _masked(text: str | None) -> str:
    """``text`` without its device numbers and addresses: what findings of one cause on several devices share.

    >>> _masked("device 3 (10.0.0.3): hccn_tool -i 3 -ping -g address 10.0.1.3")
    'device # (IP): hccn_tool -i # -ping -g address IP'
    """
    return _ADDRESS.sub("IP", _DEVICE_NUMBER.sub(lambda m: f"{m[1]}{m[2]}#", text or ""))


def int_ranges(numbers: list[int]) -> str:
    """``[0, 1, 2, 3, 5]`` -> ``0-3,5``.

    >>> int_ranges([0, 1, 2, 3, 5]), int_ranges([7])
    ('0-3,5', '7')
    """
    spans: list[list[int]] = []
    for n in sorted(set(numbers)):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ",".join(f"{a}-{b}" if a != b else f"{a}" for a, b in spans)
