"""gpu.xid: Xid errors the NVIDIA driver logged in the kernel log since boot (``dmesg``, else ``journalctl -k``).

The driver reports GPU faults as kernel lines such as
``NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response``.
Some of them leave the GPU unusable until it is reset or the node rebooted; a job started there crashes or hangs
at its first collective. Which: NVIDIA's Xid catalog (https://docs.nvidia.com/deploy/xid-errors/
analyzing-xid-catalog.html, the "Resolution Bucket (Immediate Action)" column: RESET_GPU / RESTART_BM /
WORKFLOW_*), summarised in ``FATAL`` below. Xids caused by an application's own fault (``APPLICATION``:
13, 31, 43, 45: a bad kernel, an illegal address, a killed process) say nothing about the node and pass with a
note; any other Xid warns.

The log is read without root where the host allows it: ``dmesg -T`` (refused when kernel.dmesg_restrict=1, the
Ubuntu default, for users without CAP_SYSLOG), then ``journalctl -k -b`` (users in the adm / systemd-journal
groups). When neither is readable the finding is a skip that says so, with ``--sudo`` (the probe is a root
probe: ``--sudo`` runs it under ``sudo -n``) as the remedy: never a fail. Only ``NVRM: Xid`` lines travel back,
after two framing lines (``@@source dmesg|journalctl|none``, ``@@lines N``: how much log was read).

Finding id: gpu.xid.errors.

>>> parse_xids("[Sun Feb 23 16:24:18 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, "
...            "Timeout after 6s\\n")
[{'bus': '0000:9b:00', 'xid': 119, 'text': 'pid=2024380, name=nvidia-smi, Timeout after 6s'}]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.batch import Probe, ProbeOutput
from preflight.checks.base import Check, EvalContext, Facts, finding
from preflight.inventory import ClusterSpec, Host
from preflight.model import Finding, Status

FATAL: Mapping[int, str] = {
    48: "double-bit ECC error", 61: "GPU micro-controller breakpoint", 62: "GPU micro-controller halt",
    63: "ECC page retirement / row remap recorded (reset the GPU to apply)", 64: "ECC page retirement / row remap "
    "failure", 74: "NVLink error", 79: "GPU has fallen off the bus", 92: "high single-bit ECC error rate",
    94: "contained ECC error", 95: "uncontained ECC error", 119: "GSP RPC timeout", 120: "GSP error",
    140: "unrecovered ECC error", 154: "GPU recovery action changed (reset or reboot required)",
}
APPLICATION: Mapping[int, str] = {13: "graphics engine exception", 31: "GPU memory page fault",
                                  43: "GPU stopped processing", 45: "preemptive cleanup"}
NAMES: Mapping[int, str] = {**FATAL, **APPLICATION}
_XID = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})[^)]*\): (\d+),\s*(.*)")
_READ = ('if out=$(dmesg -T 2>/dev/null) && [ -n "$out" ]; then src=dmesg; '
         'elif out=$(journalctl -k -b -q --no-pager 2>/dev/null) && [ -n "$out" ]; then src=journalctl; '
         'else echo "@@source none"; dmesg 2>&1 | head -n 2; exit 0; fi; '
         'printf "@@source %s\\n@@lines %s\\n" "$src" "$(printf "%s\\n" "$out" | wc -l)"; '
         'printf "%s\\n" "$out" | grep "NVRM: Xid" | tail -n 200')


def parse_xids(text: str) -> list[dict[str, Any]]:
    """Kernel log lines -> [{bus, xid, text}] for each ``NVRM: Xid (PCI:...): N, ...`` line."""
    found = []
    for line in text.splitlines():
        match = _XID.search(line)
        if match:
            found.append({"bus": match[1].lower(), "xid": int(match[2]), "text": match[3].strip()})
    return found


class GpuXidCheck(Check):
    family = "gpu"
    name = "gpu.xid"
    ids = ("gpu.xid.errors",)
    accelerators = frozenset({"gpu"})
    not_applicable = "no NVIDIA GPUs to check"
    order = 59
    summary = ("Xid errors in the kernel log since boot (dmesg, else journalctl -k; --sudo where neither is "
               "readable): a GPU-fatal Xid (48, 63, 64, 74, 79, 94, 95, 119, ...) fails")

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [Probe("klog", _READ, timeout=30, root=True)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        out = outputs.get("klog", ProbeOutput("", "not run", None))
        source = re.search(r"^@@source (\S+)", out.stdout, re.M)
        lines = re.search(r"^@@lines (\d+)", out.stdout, re.M)
        facts: Facts = {"source": source[1] if source and source[1] != "none" else None,
                        "lines": int(lines[1]) if lines else None, "xids": parse_xids(out.stdout), "why": None}
        if facts["source"] is None:
            rest = [line.strip() for line in (out.stdout + out.stderr).splitlines()
                    if line.strip() and not line.startswith("@@")]
            facts["why"] = rest[0] if rest else (f"exit status {out.exit_status}" if not out.ok else "empty log")
        return facts

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        return [_judge(host, facts[host]) for host in sorted(facts)]


def _judge(host: str, host_facts: Facts) -> Finding:
    check = "gpu.xid.errors"
    xids: list[dict[str, Any]] = host_facts.get("xids") or []
    source = host_facts.get("source")
    if source is None:
        return finding(check, host, Status.SKIP,
                       f"{check}: the kernel log of {host} is not readable by this user ({host_facts.get('why')}): "
                       "Xid errors not checked", observed=str(host_facts.get("why")),
                       expected="dmesg or journalctl -k readable",
                       remedy="preflight run --sudo ...  # or: sudo sysctl kernel.dmesg_restrict=0, or add the "
                              "user to the adm group (journalctl -k)")
    counts: dict[int, int] = {}
    buses: dict[int, set[str]] = {}
    for item in xids:
        counts[item["xid"]] = counts.get(item["xid"], 0) + 1
        buses.setdefault(item["xid"], set()).add(item["bus"])

    def listing(codes: list[int]) -> str:
        return ", ".join(f"Xid {x} ({NAMES.get(x, 'see the Xid catalog')}) x{counts[x]} on "
                         f"{', '.join(sorted(buses[x]))}" for x in codes)

    fatal = sorted(x for x in counts if x in FATAL)
    other = sorted(x for x in counts if x not in FATAL and x not in APPLICATION)
    app = sorted(x for x in counts if x in APPLICATION)
    read = f"{source}, {host_facts.get('lines')} lines since boot"
    if fatal:
        last = next(item for item in reversed(xids) if item["xid"] in FATAL)
        return finding(check, host, Status.FAIL,
                       f"{check}: {listing(fatal)} in the kernel log of {host}: the GPU needs a reset or the node a "
                       f"reboot (NVIDIA Xid catalog); a job there crashes or hangs. Last: Xid {last['xid']}, "
                       f"{last['text'][:160]}", observed=listing(fatal), expected="no GPU-fatal Xid since boot",
                       remedy="nvidia-smi -q | grep -A3 -i -E 'remapp|recovery'; drain the node, then nvidia-smi -r "
                              "(or reboot); RMA if it comes back (79: reseat / check PCIe power)")
    if other:
        return finding(check, host, Status.WARN,
                       f"{check}: {listing(other)} in the kernel log of {host} ({read}): look the code up in "
                       "NVIDIA's Xid catalog before running a job there", observed=listing(other),
                       expected="no Xid since boot", remedy="dmesg -T | grep -A2 'NVRM: Xid'")
    note = f"; application Xids only: {listing(app)} (a job's own fault)" if app else ""
    return finding(check, host, Status.PASS, f"{check}: no GPU-fatal Xid in the kernel log of {host} ({read}){note}",
                   observed=f"{len(xids)} Xid lines", expected="no GPU-fatal Xid since boot")
