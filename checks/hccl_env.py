"""hccl.env: the HCCL variables the job's shell holds (after ``setup:``) are valid and consistent across hosts.

- ``HCCL_CONNECT_TIMEOUT``: an integer in [120, 7200] seconds (CANN's environment-variable reference,
  hiascend.com envref "HCCL_CONNECT_TIMEOUT": "需要配置为整数，取值范围[120,7200]"); multi-node guides copy
  12000, outside that range.
- ``HCCL_EXEC_TIMEOUT``: a non-negative integer (seconds).
- ``HCCL_IF_BASE_PORT``, ``HCCL_HOST_SOCKET_PORT_RANGE``: the same on every host (the ranks meet on these ports).
- ``ASCEND_RT_VISIBLE_DEVICES``: distinct device ids, as many as ``devices_per_host``.
- ``HCCL_WHITELIST_DISABLE=0`` (whitelist on) needs ``HCCL_WHITELIST_FILE`` naming a readable file.

The probe prints ``NAME=value`` or ``NAME unset`` per variable, and ``whitelist readable|missing``.

>>> parse_env("HCCL_CONNECT_TIMEOUT=12000\\nHCCL_EXEC_TIMEOUT unset\\nwhitelist missing\\n")
{'vars': {'HCCL_CONNECT_TIMEOUT': '12000', 'HCCL_EXEC_TIMEOUT': None}, 'whitelist_readable': False}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.checks.base import *
from preflight.job_env import job_command

NAMES = ("HCCL_CONNECT_TIMEOUT", "HCCL_EXEC_TIMEOUT", "HCCL_IF_BASE_PORT", "HCCL_HOST_SOCKET_PORT_RANGE",
         "ASCEND_RT_VISIBLE_DEVICES", "HCCL_WHITELIST_DISABLE", "HCCL_WHITELIST_FILE")
SAME_EVERYWHERE = ("HCCL_IF_BASE_PORT", "HCCL_HOST_SOCKET_PORT_RANGE")
CONNECT_RANGE = (120, 7200)
_SCRIPT = ('for v; do if printenv "$v" >/dev/null; then printf "%s=%s\\n" "$v" "$(printenv "$v")"; '
           'else printf "%s unset\\n" "$v"; fi; done; '
           'if [ -n "${HCCL_WHITELIST_FILE:-}" ] && [ -r "$HCCL_WHITELIST_FILE" ]; then echo "whitelist readable"; '
           'else echo "whitelist missing"; fi')


def parse_env(text: str) -> dict[str, Any]:
    """The probe's lines -> ``vars`` (name -> value, None when unset) and ``whitelist_readable``."""
    found: dict[str, str | None] = {}
    readable: bool | None = None
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and name in NAMES:
            found[name] = value
        elif line.endswith(" unset") and line[:-6] in NAMES:
            found[line[:-6]] = None
        elif line in ("whitelist readable", "whitelist missing"):
            readable = line == "whitelist readable"
    return {"vars": found, "whitelist_readable": readable}


class HcclEnvCheck(Check):
    ids = ("hccl.env", "hccl.env_consistency")
    order = 46
    accelerators = frozenset({"npu"})
    not_applicable = "HCCL is not used"
    summary = ("HCCL variables of the job's shell: HCCL_CONNECT_TIMEOUT in [120, 7200], HCCL_EXEC_TIMEOUT, the same "
               "HCCL ports on every host, ASCEND_RT_VISIBLE_DEVICES vs devices_per_host, the whitelist file")

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [Probe("env", job_command(host, cluster, ["sh", "-c", _SCRIPT, "hccl-env", *NAMES]), timeout=15)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        return parse_env(outputs.get("env", ProbeOutput("")).stdout)

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        findings = [_judge(host, host_facts, ctx.cluster.devices_per_host) for host, host_facts in facts.items()]
        return findings + _consistency(facts)


def _int(value: str | None) -> int | None:
    text = (value or "").strip()
    return int(text) if text.isdecimal() else None


def problems(env: Mapping[str, str | None], whitelist_readable: bool | None, devices: int) -> list[tuple[str, str]]:
    """(what is wrong, remedy) for one host's variables.

    >>> [p for p, _ in problems({"HCCL_CONNECT_TIMEOUT": "12000"}, None, 8)]
    ['HCCL_CONNECT_TIMEOUT=12000 is outside [120, 7200] s']
    >>> [p for p, _ in problems({"ASCEND_RT_VISIBLE_DEVICES": "0,1,1"}, None, 8)]
    ['ASCEND_RT_VISIBLE_DEVICES=0,1,1 names 2 distinct devices (3 entries), devices_per_host is 8']
    """
    found: list[tuple[str, str]] = []
    low, high = CONNECT_RANGE
    connect = env.get("HCCL_CONNECT_TIMEOUT")
    if connect is not None:
        seconds = _int(connect)
        if seconds is None or not low <= seconds <= high:
            what = "is not an integer" if seconds is None else f"is outside [{low}, {high}] s"
            found.append((f"HCCL_CONNECT_TIMEOUT={connect} {what}",
                          f"export HCCL_CONNECT_TIMEOUT={min(max(seconds or 1200, low), high)}  # in setup:/env: "
                          "of hosts.yaml and the launch script"))
    execute = env.get("HCCL_EXEC_TIMEOUT")
    if execute is not None and _int(execute) is None:
        found.append((f"HCCL_EXEC_TIMEOUT={execute} is not a non-negative integer",
                      "export HCCL_EXEC_TIMEOUT=1836  # CANN's default, in seconds"))
    visible = env.get("ASCEND_RT_VISIBLE_DEVICES")
    if visible is not None:
        entries = [e.strip() for e in visible.split(",") if e.strip()]
        if not entries or not all(e.isdecimal() for e in entries):
            found.append((f"ASCEND_RT_VISIBLE_DEVICES={visible} is not a list of device ids",
                          f"export ASCEND_RT_VISIBLE_DEVICES={','.join(map(str, range(devices)))}"))
        elif len(set(entries)) != devices or len(entries) != len(set(entries)):
            found.append((f"ASCEND_RT_VISIBLE_DEVICES={visible} names {len(set(entries))} distinct devices "
                          f"({len(entries)} entries), devices_per_host is {devices}",
                          f"export ASCEND_RT_VISIBLE_DEVICES={','.join(map(str, range(devices)))}  # or fix "
                          "devices_per_host in hosts.yaml"))
    if env.get("HCCL_WHITELIST_DISABLE") == "0" and not whitelist_readable:
        file = env.get("HCCL_WHITELIST_FILE")
        found.append(("HCCL_WHITELIST_DISABLE=0 (whitelist on) but "
                      + (f"HCCL_WHITELIST_FILE={file} is not a readable file" if file else "HCCL_WHITELIST_FILE "
                         "is unset"),
                      "export HCCL_WHITELIST_DISABLE=1  # or point HCCL_WHITELIST_FILE at the file listing the "
                      "hosts' IPs"))
    return found


def _judge(host: str, facts: Facts, devices: int) -> Finding:
    check = "hccl.env"
    env = facts.get("vars") or {}
    if not env:
        return finding(check, host, Status.ERROR, f"could not read the job's environment on {host}")
    found = problems(env, facts.get("whitelist_readable"), devices)
    shown = ", ".join(f"{k}={v}" for k, v in env.items() if v is not None) or "no HCCL variable set (defaults)"
    if not found:
        return finding(check, host, Status.PASS, f"{shown}", observed=shown)
    return finding(check, host, Status.FAIL,
                   f"{'; '.join(p for p, _ in found)} on {host}: HCCL refuses the value or the ranks "
                   "do not meet (init fails or times out)",
                   observed="; ".join(p for p, _ in found), expected="valid HCCL variables",
                   remedy=found[0][1] if len(found) == 1 else " && ".join(r.split("  #")[0] for _, r in found))


def _consistency(facts: Mapping[str, Facts]) -> list[Finding]:
    check = "hccl.env_consistency"
    findings: list[Finding] = []
    for name in SAME_EVERYWHERE:
        values = {h: (f.get("vars") or {}).get(name) for h, f in facts.items() if f.get("vars")}
        if len(set(values.values())) <= 1:
            continue
        common, strict = majority(values)
        for host, value in sorted(values.items()):
            if strict and value == common:
                continue
            shown = "unset" if value is None else value
            want = "unset" if common is None else common
            findings.append(finding(
                check, host, Status.FAIL,
                f"{name} is {shown} on {host}, " + (f"{want} on most hosts" if strict else "the hosts differ")
                + ": HCCL's ranks listen and connect on these ports, so the hosts must agree",
                observed=f"{name}={shown}" if value is not None else f"{name} unset",
                expected=("the same on every host" if not strict else f"{name} unset" if common is None
                          else f"{name}={want}"),
                remedy=(f"unset {name}" if strict and common is None else
                        f"export {name}={want}" if strict else f"set one {name} for every host in hosts.yaml")
                + "  # in setup:/env: of hosts.yaml and the launch script"))
    if not findings and facts:
        findings.append(finding(check, None, Status.PASS, "HCCL ports set alike on every host"))
    return findings
