"""Running hccn_tool on every device in one batched script, and reading its output back: shared by the hccn checks.

>>> calls = parse_calls("@@tool /x/hccn_tool\\n@@call 0 link\\nlink status: UP\\n\\n@@rc 0 0\\n")
>>> calls.tool, calls.devices["0"]["link"]
('/x/hccn_tool', ('link status: UP', 0))
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from preflight.ascend.hccn_tool import CALL_TIMEOUT, FIND_HCCN_TOOL
from preflight.batch import ProbeOutput
from preflight.findings import Facts, finding, tool_missing
from preflight.model import Finding, Status
from preflight.tools.ascend import HCCN_TOOL, HCCN_TOOL_PATH
from preflight.tools.common import first_line

# Finds hccn_tool, then runs each device's calls in a background subshell (devices in parallel, one
# device's calls in order), each call's stdout+stderr between "@@call DEV LABEL" and "@@rc DEV LABEL RC".
_HEAD = f"""H=$({FIND_HCCN_TOOL}) || {{ echo "@@missing PATH {HCCN_TOOL_PATH}"; exit 0; }}
echo "@@tool $H"
if command -v timeout >/dev/null 2>&1; then T="timeout {{timeout}}"; else T=; fi
D=$(mktemp -d 2>/dev/null) || {{ D=/tmp/preflight-hccn.$$; mkdir -m 700 "$D" || exit 97; }}
trap 'rm -rf "$D"' EXIT
pf_call() {{ echo "@@call $1 $2"; d=$1; shift 2; $T "$H" -i "$d" "$@" 2>&1 </dev/null; r=$?; echo; echo "@@rc $d $r"; }}
"""


def hccn_script(calls: Mapping[int, Sequence[tuple[str, Sequence[str]]]], timeout: float = CALL_TIMEOUT) -> str:
    """A sh script running ``hccn_tool -i DEV ARGS...`` for each (label, args) of each device.

    Labels and arguments are quoted; the output is read back with ``parse_calls``.

    >>> "-i \\"$d\\" \\"$@\\"" in hccn_script({0: [("link", ["-link", "-g"])]})
    True
    """
    lines = [_HEAD.replace("{timeout}", str(max(1, int(timeout))))]
    for dev, dev_calls in sorted(calls.items()):
        body = "; ".join(f"pf_call {int(dev)} {shlex.quote(label)} {shlex.join(args)}" for label, args in dev_calls)
        lines.append(f"( {body}; ) >\"$D/{int(dev)}\" &")
    lines.append("wait")
    lines.extend(f"cat \"$D/{int(dev)}\"" for dev in sorted(calls))
    return "\n".join(lines) + "\n"


@dataclass
class Calls:
    """What the script printed: the tool's path (or the paths looked at) and each call's output and exit status."""

    tool: str | None = None
    looked: list[str] | None = None
    devices: dict[str, dict[str, tuple[str, int | None]]] = field(default_factory=dict)


_CALL = re.compile(r"^@@call (\d+) (\S+)$")
_RC = re.compile(r"^@@rc (\d+) (\d+)$")


def parse_calls(text: str) -> Calls:
    """Split the script's output into calls; a call cut short (no ``@@rc``) gets exit status None."""
    calls = Calls()
    current: tuple[str, str] | None = None
    body: list[str] = []

    def close(rc: int | None) -> None:
        if current is not None:
            calls.devices.setdefault(current[0], {})[current[1]] = ("\n".join(body).strip(), rc)

    for line in text.splitlines():
        if line.startswith("@@missing "):
            calls.looked = line.split()[1:]
        elif line.startswith("@@tool ") and calls.tool is None:
            calls.tool = line[len("@@tool "):].strip() or None
        elif (match := _CALL.match(line)) is not None:
            close(None)
            current, body = (match[1], match[2]), []
        elif (match := _RC.match(line)) is not None and current is not None and match[1] == current[0]:
            close(int(match[2]))
            current, body = None, []
        elif current is not None:
            body.append(line)
    close(None)
    return calls


def tool_facts(output: ProbeOutput) -> tuple[Facts, Calls]:
    """The facts every hccn check shares (tool path or where it was looked for, or a probe error)."""
    calls = parse_calls(output.stdout)
    facts: Facts = {"tool": calls.tool, "looked": calls.looked, "error": None}
    if calls.tool is None and calls.looked is None:
        why = f"exit {output.exit_status}" if output.exit_status is not None else "it did not finish"
        facts["error"] = f"the hccn_tool probe printed nothing usable ({why}): {first_line(output.stderr)}"
    return facts, calls


def host_problem(check: str, host: str, facts: Facts) -> Finding | None:
    """The one finding for a host where hccn_tool could not be used at all, else None."""
    if facts.get("error"):
        return finding(check, host, Status.ERROR, f"{facts['error']}")
    if not facts.get("tool"):
        return tool_missing(check, host, HCCN_TOOL, facts.get("looked"))
    return None
