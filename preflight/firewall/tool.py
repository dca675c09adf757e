"""The facts every firewall tool's probe yields, whatever the tool: installed, readable, error, permission_denied.

A tool that is missing (exit 127) is a fact, not an error; the parsers of each tool set ``readable``
once they recognise its output.

>>> tool_facts(ProbeOutput("", "iptables: Permission denied (you must be root)", 4))["permission_denied"]
True
>>> tool_facts(ProbeOutput("", "nft: not installed", 127))
{'installed': False, 'readable': False, 'error': None, 'permission_denied': False}
"""

from __future__ import annotations

import re
from typing import Any

from preflight.batch import ProbeOutput

_PERMISSION = re.compile(r"permission denied|operation not permitted|must be root|need to be root|"
                         r"authorization failed|not authorized|access denied", re.I)


def last_line(*texts: str) -> str:
    """The last line that says something (no blank or ``#`` lines) of the first text that has one.

    >>> last_line("", "first\\nlast\\n# note\\n")
    'last'
    """
    for text in texts:
        lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
        if lines:
            return lines[-1][:300]
    return ""


def tool_facts(out: ProbeOutput) -> dict[str, Any]:
    """Facts every tool has: installed, readable, error, permission_denied."""
    facts: dict[str, Any] = {"installed": out.exit_status != 127, "readable": False, "error": None,
                             "permission_denied": False}
    if out.exit_status is None or out.timed_out:
        facts["error"] = "timed out"
    elif out.exit_status not in (0, 127):
        facts["error"] = last_line(out.stderr, out.stdout) or f"exit status {out.exit_status}"
        facts["permission_denied"] = bool(_PERMISSION.search(out.stderr + out.stdout))
    elif out.truncated:
        facts["error"] = "output truncated"
    return facts


def first_line(*texts: str) -> str:
    """The first line that says something (not blank) of the first text that has one: the first line a parser
    that recognised nothing could not read.

    >>> first_line("", "\\n  WARNING: banner\\nmore\\n")
    'WARNING: banner'
    """
    for text in texts:
        for line in text.splitlines():
            if line.strip():
                return line.strip()[:200]
    return ""


def unrecognized(*texts: str) -> str:
    """The error of an output in which the parser recognised nothing, quoting the first line it could not read.

    >>> unrecognized("Status: confused\\nmore")
    "unrecognized output: 'Status: confused'"
    """
    return f"unrecognized output: {first_line(*texts)!r}"


def settle(facts: dict[str, Any], out: ProbeOutput, recognised: bool) -> dict[str, Any]:
    """Readable once the output was ``recognised``; else an error quoting its first line (unless one is set already).

    >>> settle(tool_facts(ProbeOutput("Status: confused\\nTo Action From")), ProbeOutput("Status: confused"),
    ...        False)["error"]
    "unrecognized output: 'Status: confused'"
    """
    if facts["error"] is None:
        if recognised:
            facts["readable"] = True
        else:
            facts["error"] = unrecognized(out.stdout, out.stderr) if (out.stdout + out.stderr).strip() \
                else "no output"
    return facts
