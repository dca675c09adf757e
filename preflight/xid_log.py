"""Reading NVRM Xid lines from a node's kernel log: the probe (``READ``) and its parser (``parse_klog``), for gpu.xid.

Repeated events are counted on the node, before anything is cut: the probe's awk reads every Xid line of the log
and prints one entry per kind (GPU, code, cause, NVLink severity) with its count and its first and last line, at
most 100 kinds: a flood of one Xid (hundreds of lines in hours) is reported as such, with its time span, and
cannot push an earlier fatal Xid out of sight.

The log is read without root where the host allows it: ``dmesg -T`` (refused when kernel.dmesg_restrict=1, the
Ubuntu default, for users without CAP_SYSLOG), then ``journalctl -k -b`` (users in the adm / systemd-journal
groups). When neither is readable the finding is a skip that says so, with ``--sudo`` (the probe is a root
probe: ``--sudo`` runs it under ``sudo -n``) as the remedy: never a fail. Output: ``@@source dmesg|journalctl|none``,
``@@lines N`` (how much log was read), ``@@xids N`` (how many Xid lines), then per kind
``@@count N <first line>`` and, when N > 1, ``@@last <last line>``.

>>> line_time("[Sun Feb 23 16:24:18 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, Timeout")
'Sun Feb 23 16:24:18 2025'
>>> line_seconds("Sun Feb 23 16:30:13 2025") - line_seconds("Sun Feb 23 16:24:18 2025")
355.0
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from preflight.findings import Facts
from preflight.xid_catalog import nvlink_severity, parse_line

LISTED = 100  # kinds of Xid (GPU, code, cause, NVLink severity) the probe lists, each with its count
# Every Xid line is counted per kind on the node; only each kind's first and last line travel back (POSIX awk:
# mawk, gawk, busybox and the one true awk print the same).
_AWK = ("/NVRM: Xid/ { t++; s = $0; sub(/.*NVRM: Xid \\(/, \"\", s); b = s; sub(/\\).*/, \"\", b); "
        "sub(/^PCI:/, \"\", b); sub(/ .*/, \"\", b); c = s; sub(/^[^)]*\\): */, \"\", c); x = c; "
        "sub(/[^0-9].*/, \"\", x); r = \"\"; "
        "if (match(c, /caused by previous Xid [0-9]+/)) r = substr(c, RSTART + 23, RLENGTH - 23); v = \"\"; "
        "if (c ~ /^[0-9]+, [^ ]+ Nonfatal /) v = \"N\"; else if (c ~ /^[0-9]+, [^ ]+ Fatal /) v = \"F\"; "
        "k = tolower(b) \" \" x \" \" r \" \" v; if (!(k in n)) { o[++m] = k; f[k] = $0 } n[k]++; l[k] = $0 } "
        "END { printf \"@@lines %d\\n@@xids %d\\n\", NR, t; "
        f"for (i = 1; i <= m && i <= {LISTED}; i++) {{ k = o[i]; printf \"@@count %d %s\\n\", n[k], f[k]; "
        "if (n[k] > 1) printf \"@@last %s\\n\", l[k] } "
        f"if (m > {LISTED}) printf \"@@left_out %d\\n\", m - {LISTED} }}")
READ = ('if out=$(dmesg -T 2>/dev/null) && [ -n "$out" ]; then src=dmesg; '
         'elif out=$(journalctl -k -b -q --no-pager 2>/dev/null) && [ -n "$out" ]; then src=journalctl; '
         'else echo "@@source none"; dmesg 2>&1 | head -n 2; exit 0; fi; '
         f'echo "@@source $src"; printf "%s\\n" "$out" | awk \'{_AWK}\'')
# When each line was logged: dmesg -T, ISO (journalctl -o short-iso, Talos), journalctl/syslog, dmesg's seconds.
_TIMES = (re.compile(r"\[(\w{3} \w{3} +\d{1,2} \d\d:\d\d:\d\d \d{4})\]"),
          re.compile(r"(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?)"),
          re.compile(r"^(\S{3,4} +\d{1,2} \d\d:\d\d:\d\d)\s"),
          re.compile(r"^\[ *(\d+\.\d+)\]"))
_EPOCH = datetime(1970, 1, 1)
_NUMBERS = re.compile(r"^@@(lines|xids|left_out) (\d+)\s*$")


def line_time(line: str) -> str | None:
    """The time a kernel line carries before ``NVRM:``, as printed (None when it has none)."""
    head = line.split("NVRM:", 1)[0]
    for pattern in _TIMES:
        match = pattern.search(head)
        if match:
            return match[1]
    return None


def parse_klog(stdout: str) -> Facts:
    """The probe's output -> {source, lines, xid_lines, groups, left_out, unreadable, why, error}.

    A kind's ``@@count N`` line starts a group (raw ``NVRM: Xid`` lines count once each); groups of the same GPU,
    code, cause and NVLink severity are merged. ``unreadable``: Xid lines with no code to read; ``error``: output
    without the probe's framing (its first line quoted)."""
    facts: Facts = {"source": None, "lines": None, "xid_lines": None, "groups": [], "left_out": 0,
                    "unreadable": [], "why": None, "error": None}
    groups: dict[tuple[str, int, int | None, str | None], dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    unread: list[str] = []
    seen_source = False
    for raw in stdout.splitlines():
        line = raw.strip()
        numbers = _NUMBERS.match(line)
        if line.startswith("@@source "):
            seen_source = True
            facts["source"] = None if line.split()[1:2] == ["none"] else line.split(None, 1)[1].strip()
        elif numbers:
            facts[{"lines": "lines", "xids": "xid_lines", "left_out": "left_out"}[numbers[1]]] = int(numbers[2])
        elif line.startswith("@@last ") and current is not None and (last := parse_line(line)):
            current["last"], current["text"] = line_time(line[7:]), last.text
        elif parse_line(line):
            count = re.match(r"@@count (\d+) ", line)
            current = _add(groups, line, int(count[1]) if count else 1)
        elif "NVRM: Xid" in line:
            facts["unreadable"].append(line[:200])
        elif line:
            unread.append(line)
    facts["groups"] = list(groups.values())
    if not seen_source and unread:
        facts["error"] = f"unrecognised output: {unread[0][:160]}"
    if facts["source"] is None and not facts["error"]:
        facts["why"] = unread[0] if unread else None
    return facts


def _add(groups: dict[tuple[str, int, int | None, str | None], dict[str, Any]], line: str,
         count: int) -> dict[str, Any]:
    """Count ``line`` (its kind seen ``count`` times) into ``groups``; the group it went to."""
    xid = parse_line(line)
    assert xid is not None
    severity = nvlink_severity(xid.text) if 144 <= xid.code <= 150 else None
    when = line_time(line.split(" ", 2)[2] if line.startswith("@@count ") else line)
    group = groups.get((xid.bus, xid.code, xid.cause, severity))
    if group is None:
        group = groups[(xid.bus, xid.code, xid.cause, severity)] = {
            "bus": xid.bus, "xid": xid.code, "cause": xid.cause, "count": 0, "first": when, "last": when,
            "text": xid.text}
    group["count"] += count
    group["last"], group["text"] = when, xid.text
    return group


def line_seconds(when: str | None) -> float | None:
    """A line time (see ``line_time``) -> seconds on a common scale per format; None when it cannot be read."""
    if not when:
        return None
    if re.fullmatch(r"\d+\.\d+", when):
        return float(when)
    for pattern, text in (("%a %b %d %H:%M:%S %Y", re.sub(r" +", " ", when)), ("%Y-%m-%dT%H:%M:%S", when[:19]),
                          ("%Y-%m-%d %H:%M:%S", when[:19]), ("%b %d %H:%M:%S", re.sub(r" +", " ", when))):
        try:
            return (datetime.strptime(text, pattern) - _EPOCH).total_seconds()
        except ValueError:
            continue
    return None
