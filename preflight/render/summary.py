"""The report read for display, without drawing anything: statuses' marks, host ranges, check families, the
slow all_reduce pairs and the problems grouped by cause. Shared by the terminal, HTML and Markdown renderers
(and imports no terminal library: a ``--json`` run never loads one).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
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


def checks_text(checks: Sequence[str]) -> str:
    """The checks of a run, named compactly for the header: the count, then the families (a family of one
    check other than itself by that check's id).

    >>> checks_text(["os", "os.files", "sysctl", "net.names"])
    '4 checks (os, sysctl, net.names)'
    >>> checks_text(["sysctl"])
    '1 check (sysctl)'
    """
    by_family: dict[str, list[str]] = defaultdict(list)
    for ident in checks:
        by_family[ident.split(".", 1)[0]].append(ident)
    names = [idents[0] if len(idents) == 1 else family for family, idents in by_family.items()]
    return f"{len(checks)} check{'' if len(checks) == 1 else 's'} ({', '.join(names)})"


def idle_families(report: Report) -> dict[str, bool]:
    """Families (ssh aside) every finding of which is a skip: family -> whether it did not apply to the cluster
    at all (only the cluster-wide skips a check off its accelerator gives, no host judged).

    >>> skip = [Finding("gpu.xid", None, Status.SKIP, "not a gpu cluster"), Finding("os.shm", "n1", Status.SKIP, "m")]
    >>> idle_families(Report([], skip + [Finding("os.files", "n1", Status.PASS, "m")], [], "", 0.0))
    {'gpu': True}
    """
    skipped: dict[str, bool] = {}
    busy: set[str] = {"ssh"}
    for f in report.findings:
        family = f.check.split(".", 1)[0]
        if f.status is not Status.SKIP:
            busy.add(family)
        else:
            skipped[family] = skipped.get(family, True) and f.host is None
    return {family: applies for family, applies in skipped.items() if family not in busy}


def idle_note(report: Report) -> str | None:
    """The line that names the families left out of the hosts x checks tables (terminal and HTML), or None.

    >>> skip = [Finding("gpu.xid", None, Status.SKIP, "m"), Finding("nccl.env", None, Status.SKIP, "m")]
    >>> idle_note(Report([], skip, [], "", 0.0, extra={"cluster": {"accelerator": "npu"}}))
    'left out of the table: gpu, nccl (not applicable to this npu cluster)'
    """
    idle = idle_families(report)
    if not idle:
        return None
    accelerator = (report.extra.get("cluster") or {}).get("accelerator")
    why = {True: "not applicable" + (f" to this {accelerator} cluster" if accelerator else ""),
           False: "skipped on every host"}
    return "left out of the table: " + ", ".join(
        f"{', '.join(f for f, kind in idle.items() if kind is applies)} ({why[applies]})"
        for applies in (True, False) if applies in idle.values())


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
    whose message names the devices; so are those of one cause on several hosts whose remedies differ only in
    each host's own name or address (report.json keeps each finding).

    >>> def refused(n): return Finding("ssh.connect", n, Status.ERROR, "m", remedy=f"ssh-keyscan {n} >> k")
    >>> [(f.remedy, hosts) for f, hosts in problems(Report([], [refused("n1"), refused("n2")], [], "", 0.0))]
    [('ssh-keyscan n1 >> k', ['n1', 'n2'])]
    """
    addresses = {h.name: h.address for h in report.hosts}
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
        hosts = {f.host for f in members}
        if all(f.device is not None for f in members):
            cause = (first.check, first.status, tuple(sorted({f.host or "" for f in members})),
                     *(_masked(t) for t in (first.message, first.observed, first.expected, first.remedy)))
        elif len(hosts) == 1 and first.host is not None:
            own = {first.host, addresses.get(first.host, first.host)}
            cause = (first.check, first.status, "host",
                     *(_unnamed(t, own) for t in (first.observed, first.expected, first.remedy)))
        folded[cause].append(members)
    found = []
    for parts in folded.values():
        members = [f for part in parts for f in part]
        example = members[0]
        devices = sorted({f.device for f in members if f.device is not None})
        if len(parts) > 1 and len(devices) > 1:
            example = replace(example, message=f"{example.message} (the same on devices {int_ranges(devices)}; "
                                               f"shown for device {example.device})")
        elif len(parts) > 1 and example.host is not None:
            example = replace(example, message=f"{example.message} (shown for {example.host}: the other hosts' "
                                               "differ only in their own name or address)")
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


def _unnamed(text: str | None, names: set[str]) -> str:
    """``text`` with a host's own names (its name, its address) masked.

    >>> _unnamed("ssh-copy-id root@10.0.0.1 # not 10.0.0.12", {"n1", "10.0.0.1"})
    'ssh-copy-id root@HOST # not 10.0.0.12'
    """
    text = text or ""
    for name in sorted(names, key=len, reverse=True):
        text = re.sub(rf"(?<![\w.-]){re.escape(name)}(?![\w-]|\.\w)", "HOST", text)
    return text


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
