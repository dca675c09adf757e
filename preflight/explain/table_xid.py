"""NVIDIA's Xid catalog as a code table for ``explain``: the entries of the neutral ``preflight.xid_catalog`` (the one
``gpu.xid`` judges with; nothing is copied here), and how to find an Xid in a log line.

Category: an Xid the catalog answers with a reset, a reboot, support or a hardware check (``xid_catalog.assess``
level ``fatal``), or with no action yet (``check``), is ``driver``; one it answers with "restart the application"
(13, 31...) or counts as the application's (43, 45) is the job's own fault, ``app-fault``; one it says to ignore, or
to follow the Xid that caused it (45), only reports another failure (``root_cause`` False). Lines: the kernel's
``NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus.`` (dmesg, journalctl, syslog; 45's ``caused
by previous Xid 149`` gives both), and the shorter ``Xid 79`` / ``XID error 79`` / ``xid=79`` of monitoring tools.

>>> [(d.code.code, d.code.category, d.code.root_cause) for d in TABLE.decode(
...     "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149")]
[('45', 'app-fault', False), ('149', 'driver', True)]
>>> TABLE.find("GPU 3 reported XID error 48 (Double Bit ECC Error)")
['48']
"""

from __future__ import annotations

import re

from preflight.explain.decode import Code, CodeTable
from preflight.xid_catalog import ACTIONS, SOURCE, VERSION, XIDS, Xid, assess, parse_line

_CHECKS = ("gpu.xid",)
_MEMORY = ("gpu.xid", "gpu.devices.ecc")
_NVLINK = ("gpu.xid", "gpu.devices.nvlink")


def _code(xid: Xid) -> Code:
    level = assess(xid.code).level
    echo = xid.action in ("IGNORE", "WORKFLOW_XID_45")
    category = "app-fault" if xid.action == "RESTART_APP" or xid.category == "app" else "driver"
    action = ACTIONS.get(xid.action, xid.action)
    fix = f"{action[:1].upper()}{action[1:]} (Xid catalog: {xid.action or 'no action yet'}"
    more = xid.investigate not in ("", xid.action) and not xid.investigate.startswith("N/A")
    fix += f", then {xid.investigate})." if more else ")."
    if level == "fatal":
        fix += " Drain the node until the GPU is reset and `preflight run --checks gpu.xid` is clean."
    checks = _MEMORY if xid.category == "memory" else _NVLINK if xid.category == "nvlink" else _CHECKS
    return Code(str(xid.code), xid.mnemonic, xid.description, category, fix, checks, not echo)


ENTRIES: dict[str, Code] = {str(code): _code(xid) for code, xid in XIDS.items()}
_SHORT = re.compile(r"\bxid\b(?: error| code)?\s*[:=#]?\s*(\d{1,3})\b", re.IGNORECASE)


def find(line: str) -> list[str]:
    """The Xid codes a line carries: an ``NVRM: Xid`` kernel line's code and the Xid it names as its cause, else the
    short ``Xid N`` forms (each once, in order)."""
    parsed = parse_line(line)
    if parsed is not None:
        codes = [parsed.code] + ([parsed.cause] if parsed.cause is not None else [])
    else:
        codes = [int(m[1]) for m in _SHORT.finditer(line)]
    out: list[str] = []
    for code in codes:
        if str(code) not in out:
            out.append(str(code))
    return out


TABLE = CodeTable("xid", SOURCE, VERSION, ENTRIES, find)
