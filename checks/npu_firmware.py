"""npu.firmware: each NPU's firmware and driver (``npu-smi info -t board -i N``), paired and alike across the cluster.

The board page (Ascend/mind-cluster, component/ascend-faultdiag/test/st_module_testcase/kg_parse/
npu_info_before.txt, a 910A server)::

        NPU ID                         : 0
        Software Version               : 23.0.5
        Firmware Version               : 7.1.0.7.220
        Compatibility                  : OK

``Software Version`` is the driver; ``Compatibility`` is npu-smi's own verdict on the driver/firmware pairing.
One script lists the NPU ids (``npu-smi info -l``) and prints each board page after an ``@@npu ID`` line.

Rules: ``Compatibility`` other than OK fails (the driver and the firmware are not a supported pair); NPUs of one host
on different firmware warn; a host whose firmware differs from most hosts' warns (drift: upgrades done on part
of the cluster), and with no majority every host warns. The driver's drift is versions.driver's.

>>> parse_boards("@@npu 0\\n\\tNPU ID : 0\\n\\tSoftware Version : 23.0.5\\n\\tFirmware Version : 7.1.0.7.220\\n"
...              "\\tCompatibility : OK\\n")
{'0': {'driver': '23.0.5', 'firmware': '7.1.0.7.220', 'compatibility': 'OK'}}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.checks.base import *
from preflight.tools.ascend import NPU_SMI

_SCRIPT = ('t=$(' + NPU_SMI.find + ') || { echo "@@missing"; exit 0; }; '
           'for id in $("$t" info -l 2>/dev/null | awk -F: \'/NPU ID/ {gsub(/[ \\t]/, "", $2); print $2}\'); do '
           'echo "@@npu $id"; "$t" info -t board -i "$id" 2>&1; done')
_FIELDS = {"software version": "driver", "firmware version": "firmware", "compatibility": "compatibility"}


def parse_boards(text: str) -> dict[str, dict[str, str | None]] | None:
    """NPU id -> {driver, firmware, compatibility} (None where not printed); None when npu-smi was not found.
    Never raises."""
    if text.strip().startswith("@@missing"):
        return None
    boards: dict[str, dict[str, str | None]] = {}
    current: dict[str, str | None] | None = None
    for line in text.splitlines():
        npu = re.fullmatch(r"@@npu (\d+)", line.strip())
        if npu:
            current = boards.setdefault(npu[1], {"driver": None, "firmware": None, "compatibility": None})
            continue
        key, sep, value = line.partition(":")
        field = _FIELDS.get(" ".join(key.split()).lower())
        if current is not None and sep and field:
            current[field] = value.strip() or None
    return boards


class NpuFirmwareCheck(Check):
    ids = ("npu.firmware",)
    order = 56
    accelerators = frozenset({"npu"})
    not_applicable = "no NPUs to check"
    summary = ("NPU firmware (npu-smi info -t board): driver/firmware pairing Compatibility OK, one firmware "
               "version on every NPU of a host and across the cluster")

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [Probe("boards", _SCRIPT, timeout=60)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        out = outputs.get("boards", ProbeOutput("", "not run", None))
        return {"boards": parse_boards(out.stdout), "ok": out.ok}

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        firmware = {host: _one(f.get("boards") or {}) for host, f in facts.items() if f.get("boards")}
        common, strict = majority({h: v for h, v in firmware.items() if v})
        return [_judge(host, facts[host].get("boards"), common, strict) for host in sorted(facts)]


def _one(boards: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The host's firmware when all its NPUs agree, else None."""
    versions = {str(b.get("firmware")) for b in boards.values() if b.get("firmware")}
    return versions.pop() if len(versions) == 1 else None


def _judge(host: str, boards: Mapping[str, Mapping[str, Any]] | None, common: str | None, strict: bool) -> Finding:
    check = "npu.firmware"
    if boards is None:
        return tool_skip(check, host, NPU_SMI, "npu.smi")
    if not boards:
        return finding(check, host, Status.SKIP, f"npu-smi listed no NPU on {host} (npu.count says more)")
    bad = sorted((int(n), str(b.get("compatibility"))) for n, b in boards.items()
                 if b.get("compatibility") and str(b["compatibility"]).upper() != "OK")
    if bad:
        listing = ", ".join(f"NPU {n}: {value}" for n, value in bad)
        return finding(check, host, Status.FAIL,
                       f"npu-smi reports the driver and firmware of {host} as not compatible ({listing}): "
                       "the NPUs may fail to start or run unstable", observed=listing, expected="Compatibility: OK",
                       device=bad[0][0] if len(bad) == 1 else None,
                       remedy="npu-smi info -t board -i <id>; upgrade the firmware (or driver) to the pair the CANN "
                              "release notes list, then reboot")
    versions = sorted({str(b.get("firmware")) for b in boards.values() if b.get("firmware")})
    if len(versions) > 1:
        on = {v: sorted((n for n, b in boards.items() if b.get("firmware") == v), key=int) for v in versions}
        listing = "; ".join(f"{v} on NPU {', '.join(ids)}" for v, ids in on.items())
        return finding(check, host, Status.WARN, f"the NPUs of {host} run different firmware ({listing}): "
                       "a partial upgrade", observed=listing, expected="one firmware version",
                       remedy="finish the firmware upgrade on every NPU of the host, then reboot")
    mine = versions[0] if versions else None
    if mine is not None and common is not None and mine != common and strict:
        return finding(check, host, Status.WARN, f"{host} runs NPU firmware {mine}, most hosts {common}: "
                       "firmware drift across the cluster", observed=mine, expected=common,
                       remedy=f"upgrade {host}'s NPU firmware to {common} (or the others to {mine})")
    if mine is not None and not strict and common is not None:
        return finding(check, host, Status.WARN, f"{host} runs NPU firmware {mine}; the hosts run "
                       "different versions with no majority", observed=mine, expected="one firmware version")
    drivers = sorted({str(b.get("driver")) for b in boards.values() if b.get("driver")})
    return finding(check, host, Status.PASS, f"{len(boards)} NPUs on {host}: firmware {mine or '?'}, "
                   f"driver {', '.join(drivers) or '?'}, compatible", observed=f"firmware {mine}")
