"""Calling ``hccn_tool`` and reading its failures: shared by the hccn.* checks.

``hccn_tool`` is often not on PATH: it is looked up there first, then at ``HCCN_TOOL_PATH`` (the driver's
tools folder: ``preflight.tools.ascend``). ``call_error`` turns what a call printed and its exit status into one
readable reason.

>>> call_error("Get invalid device id.", 4)
'invalid device id: there is no such device on this host (check cluster.devices_per_host)'
>>> call_error("", 124), call_error("ipaddr:192.168.1.10", 0) is None
('hccn_tool did not answer within 8 s', True)
"""

from __future__ import annotations

import shlex
from typing import Any

from preflight.batch import ProbeOutput
from preflight.tools.ascend import HCCN_TOOL, HCCN_TOOL_PATH
from preflight.tools.common import error_text, first_line

CALL_TIMEOUT = 8  # seconds per hccn_tool call (lldp and optical can take a while on real nodes)

FIND_HCCN_TOOL = HCCN_TOOL.find
# The tool as one shell word: from PATH, else the driver's folder (where a missing tool fails with 127).
_TOOL_WORD = f'"$(command -v hccn_tool 2>/dev/null || echo {HCCN_TOOL_PATH})"'


def hccn_tool_command(device: int, *args: str) -> str:
    """The shell command running ``hccn_tool -i DEVICE ARGS`` from PATH or the driver's folder.

    >>> hccn_tool_command(3, "-ip", "-g")
    '"$(command -v hccn_tool 2>/dev/null || echo /usr/local/Ascend/driver/tools/hccn_tool)" -i 3 -ip -g'
    """
    return f"{_TOOL_WORD} {shlex.join(['-i', str(int(device)), *args])}"


# Error texts of hccn_tool -> what they mean, first match wins. The texts are the driver's own (hicann/driver,
# src/custom/network/hccn/ascend910B/hccn_tool/cmd.c: g_uda_*_err_list; 950: "Get ip failed, because ...").
KNOWN_ERRORS = (
    ("invalid device id", "invalid device id: there is no such device on this host (check cluster.devices_per_host)"),
    ("device is not exist", "the device does not exist: the driver does not see it (npu-smi info; reload the driver)"),
    ("not supported on this optical media", "the optical module does not support the command"),
    ("command is not supported", "the command is not supported on this product"),
    ("is busy", "hccn_tool is busy (another hccn_tool or a tool holds the device): run the check again"),
    ("permission denied", "permission denied: hccn_tool needs root (user: root in hosts.yaml, or --sudo)"),
    ("command execute failed", "the command failed inside the driver"),
    ("cmd execute failed", "the command failed inside the driver"),
    ("no ip was preset", "no IP is configured on the device"),
)
# What hccn_tool prints, with exit status 13, for a feature the product (or the optical module) lacks: not a fault.
UNSUPPORTED = ("the command is not supported on this product", "the command is not supported on this optical media")


def unsupported(text: str) -> bool:
    """Whether ``text`` is hccn_tool's answer for a feature this product or optical module lacks.

    >>> unsupported("The command is not supported on this optical media."), unsupported("link status: UP")
    (True, False)
    """
    lower = text.lower()
    return any(words in lower for words in UNSUPPORTED)


def unread(text: str) -> str:
    """The fact for a non-empty output in which a parser recognised nothing: the first line it could not read.

    >>> unread("\\n  garbage here\\nmore\\n"), unread("")
    ('unrecognised output: garbage here', 'unrecognised output: (no output)')
    """
    return f"unrecognised output: {first_line(text)}"


def known_error(text: str) -> str | None:
    """What one of hccn_tool's own error texts in ``text`` means; None when there is none."""
    lower = text.lower()
    return next((meaning for needle, meaning in KNOWN_ERRORS if needle in lower), None)


def call_error(out: str, rc: int | None, timeout: float = CALL_TIMEOUT) -> str | None:
    """Why a call failed, from hccn_tool's known error texts and the exit status; None when it did not.

    >>> call_error("hccn_tool is busy, please try again.", 1)
    'hccn_tool is busy (another hccn_tool or a tool holds the device): run the check again'
    >>> call_error("link status: UP", 0) is None
    True
    >>> call_error("present : present\\nHost SNR Lane0 : not supported", 0) is None  # a reading, not an error
    True
    """
    meaning = known_error(out if rc != 0 else first_line(out))  # a successful call's body may hold the words
    if meaning is not None:
        return meaning
    if rc is None:
        return "the call did not finish (no exit status)"
    if rc == 124:
        return f"hccn_tool did not answer within {timeout:g} s"
    if rc in (126, 127):
        return f"hccn_tool could not be run (exit {rc}): {first_line(out)}"
    if rc != 0:
        return f"hccn_tool failed (exit {rc}): {first_line(out)}"
    return None


def key_values(text: str) -> dict[str, str]:
    """``key:value`` lines (any spacing) -> lower-case key -> value."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and value.strip():
            values.setdefault(key.strip().lower(), value.strip())
    return values


def parse_ip(output: ProbeOutput) -> dict[str, Any]:
    """``hccn_tool -i N -ip -g`` -> {state: ok | no_ip | error, ip, netmask, error}."""
    text = output.stderr + "\n" + output.stdout
    if "no ip was preset" in text.lower():
        return {"state": "no_ip", "ip": None, "netmask": None, "error": None}
    values = key_values(output.stdout)
    ip = values.get("ipaddr") or values.get("ipv6addr")
    netmask = values.get("netmask") or values.get("prefix")
    if output.ok and ip and netmask:
        return {"state": "ok", "ip": ip, "netmask": netmask, "error": None}
    return {"state": "error", "ip": None, "netmask": None, "error": why_unread(output)}


def why_unread(output: ProbeOutput) -> str:
    """A failed call's own text, or, for a successful call whose output holds nothing known, its first line.

    >>> why_unread(ProbeOutput("ipaddr 10.0.0.1\\n")), why_unread(ProbeOutput("", "Cmd execute failed!\\n", 1))
    ('unrecognised output: ipaddr 10.0.0.1', 'Cmd execute failed! (exit status 1)')
    """
    if output.ok and output.stdout.strip() and known_error(output.stdout + output.stderr) is None:
        return unread(output.stdout)
    return error_text(output)
