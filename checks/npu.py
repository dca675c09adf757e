"""npu: the Ascend NPUs themselves, from ``npu-smi info`` and ``npu-smi info -l``.

HCCL needs every rank's device present and healthy, the same chip generation on every server, and
no process still holding a device (the previous job's leftover makes the next HCCL init fail with
EJ0001). ``npu-smi`` is looked up on PATH, in /usr/local/sbin, /usr/local/bin and the driver's
tools folder. The parsed chip generation is in the facts for the hccn checks
(``ctx.other_facts["npu"][host]["generation"]``): "A3" by the table's shape (a ``Phy-ID`` column or two
chip rows under one NPU, as Atlas A3 prints ``Ascend910``), else "A2" for 910B* / A2*, "910A" for other
910* chips (``generation``).

Atlas A3: each NPU holds two chips, each its own device (what torch and HCCL count, one rank each), so
``devices_per_host`` counts chips there (16 on an 8-NPU A3 server) and npu.count compares it with the
chip rows; ``npu-smi info -l`` ``Total Count`` counts the NPUs (8). Device entries of a table with a
Phy-ID column carry ``chip_index`` (0/1 within the NPU) and ``phy_id`` (the device id hccn_tool takes).

Finding ids: npu.smi (npu-smi present and readable), npu.count, npu.chip, npu.health, npu.processes.

>>> chip_generation("910B3"), chip_generation("Ascend910B4"), chip_generation("910ProB"), chip_generation("310P3")
('A2', 'A2', '910A', None)
>>> generation("Ascend910", [{"id": 0, "chip_index": 0, "phy_id": 0}, {"id": 0, "chip_index": 1, "phy_id": 1}])
'A3'
>>> generation("910ProB", [{"id": 0}, {"id": 1}])
'910A'
>>> parse_info("| 0     910B3               | OK            | 94.3        53                0    / 0             |\\n"
...            "| 0                         | 0000:C1:00.0  | 0           0    / 0          4487 / 65536         |\\n")
... # doctest: +NORMALIZE_WHITESPACE
{'devices': [{'id': 0, 'chip': '910B3', 'health': 'OK', 'bus_id': '0000:C1:00.0'}], 'processes': [],
 'process_table': False}
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from preflight.ascend.hccn_tool import error_text, find_tool_snippet
from preflight.batch import Probe, ProbeOutput
from preflight.checks.base import Check, EvalContext, Facts, finding, majority
from preflight.inventory import ClusterSpec, Host
from preflight.model import Finding, Status

NPU_SMI_PATHS = ("/usr/local/sbin/npu-smi", "/usr/local/bin/npu-smi", "/usr/local/Ascend/driver/tools/npu-smi")
LOOKED_AT = "PATH, " + ", ".join(NPU_SMI_PATHS)
# Prints where npu-smi is (PATH first, then the driver's usual places), or exits 127 when it is nowhere.
FIND_TOOL = find_tool_snippet("npu-smi", NPU_SMI_PATHS)
HEALTH_OK = "OK"
HEALTH_WARN = ("WARNING",)  # anything else that is not OK (Alarm, Critical, UNKNOWN, ...) is a failure

_DEVICE_ROW = re.compile(r"^\|\s*(\d+)\s+([^|]*?)\s*\|\s*([A-Za-z][A-Za-z ]*?)\s*\|")
_CHIP_ROW = re.compile(r"^\|\s*(\d+)(?:\s+(\d+))?\s*\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*\|")
_PROCESS_ROW = re.compile(r"^\|\s*(\d+)\s+(\d+)\s*\|\s*(\d+)\s*\|\s*([^|]*?)\s*\|\s*(\d+)\s*\|")
_PHY_HEADER = re.compile(r"^\|\s*Chip\s+Phy-ID\s*\|", re.I)
_NO_PROCESS = re.compile(r"No running processes found in NPU\s+(\d+)", re.I)


def chip_generation(chip: str | None) -> str | None:
    """"A2" (910B*, A2*: check first), "910A" (other 910*: Atlas training series) or None (other chips)."""
    name = (chip or "").strip().upper()
    name = name[len("ASCEND"):].strip() if name.startswith("ASCEND") else name
    if re.match(r"910B|A2", name):
        return "A2"
    if name.startswith("910"):
        return "910A"
    return None


def generation(chip: str | None, devices: list[dict[str, Any]]) -> str | None:
    """The chip generation of a host: "A3" by the table's shape, else by the chip name (``chip_generation``).

    A3 prints ``Ascend910`` (a name 910A servers never print with a Phy-ID column) with a Phy-ID column and two
    chip rows per NPU; an A2 name (910B*, A2*) with a Phy-ID column but one chip per NPU stays A2.
    """
    per_npu = Counter(d.get("id") for d in devices)
    two_chips = any(count > 1 for count in per_npu.values())
    phy_column = any("phy_id" in d for d in devices)
    by_name = chip_generation(chip)
    if two_chips and by_name is not None or phy_column and by_name == "910A":
        return "A3"
    return by_name


def parse_info(text: str) -> dict[str, Any]:
    """``npu-smi info`` box tables -> {devices: [{id, chip, health, bus_id}], processes, process_table}."""
    devices: list[dict[str, Any]] = []
    processes: list[dict[str, Any]] = []
    in_processes = False
    phy_column = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line.startswith("|"):
            continue
        if _PHY_HEADER.match(line):
            phy_column = True
            continue
        if "Process id" in line or "Process name" in line:
            in_processes = True
            continue
        if in_processes:
            match = _PROCESS_ROW.match(line)
            if match:
                processes.append({"npu": int(match[1]), "chip": int(match[2]), "pid": int(match[3]),
                                  "name": match[4], "memory_mb": int(match[5])})
            continue
        chip = _CHIP_ROW.match(line)
        if chip:
            if devices and devices[-1]["bus_id"] is None:
                devices[-1]["bus_id"] = chip[3]
                if phy_column:  # A3: "| Chip  Phy-ID |" -> the chip's index in its NPU and its physical id
                    devices[-1]["chip_index"] = int(chip[1])
                    devices[-1]["phy_id"] = int(chip[2]) if chip[2] is not None else None
            continue
        row = _DEVICE_ROW.match(line)
        if row and row[2] and not row[2].isdecimal():
            devices.append({"id": int(row[1]), "chip": row[2], "health": row[3], "bus_id": None})
    return {"devices": devices, "processes": processes, "process_table": in_processes}


def parse_list(text: str) -> tuple[int | None, list[int]]:
    """``npu-smi info -l`` -> (Total Count, NPU IDs).

    >>> parse_list("\\tTotal Count                    : 2\\n\\n\\tNPU ID   : 0\\n\\tChip Count : 1\\n\\tNPU ID : 1\\n")
    (2, [0, 1])
    """
    total: int | None = None
    ids: list[int] = []
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        key, value = " ".join(key.split()).lower(), value.strip()
        if not sep or not value.isdecimal():
            continue
        if key == "total count" and total is None:
            total = int(value)
        elif key == "npu id":
            ids.append(int(value))
    return total, ids


class NpuCheck(Check):
    family = "npu"
    ids = ("npu.smi", "npu.count", "npu.chip", "npu.health", "npu.processes")
    accelerators = frozenset({"npu"})
    not_applicable = "no NPUs to check"
    skip_id = "npu.devices"
    order = 55
    summary = ("NPUs (npu-smi info): count = devices_per_host, one chip type across the cluster, every device "
               "healthy, no process still holding a device")

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        run = 't=$(' + FIND_TOOL + ') || exit 127; "$t" '
        return [Probe("tool", FIND_TOOL, timeout=5),
                Probe("info", run + "info", timeout=30),
                Probe("list", run + "info -l", timeout=30)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        tool = outputs.get("tool")
        path = tool.stdout.strip().splitlines()[-1].strip() if tool and tool.ok and tool.stdout.strip() else None
        facts: Facts = {"tool": path, "error": None, "devices": [], "processes": [], "process_table": False,
                        "total_count": None, "list_ids": [], "chip": None, "generation": None}
        if path is None:
            return facts
        info = outputs.get("info", ProbeOutput("", "not run", None))
        parsed = parse_info(info.stdout) if info.ok else None
        if parsed is None:
            facts["error"] = f"npu-smi info failed: {error_text(info)}"
        elif not parsed["devices"] and not re.search(r"\|\s*NPU\s+Name\s*\|", info.stdout):
            facts["error"] = f"npu-smi info printed no device table: {error_text(info)}"
        else:
            facts.update(parsed)
        listing = outputs.get("list")
        if listing is not None and listing.ok:
            facts["total_count"], facts["list_ids"] = parse_list(listing.stdout)
        chips = Counter(d["chip"] for d in facts["devices"])
        if chips:
            facts["chip"] = chips.most_common(1)[0][0]
            facts["generation"] = generation(facts["chip"], facts["devices"])
        return facts

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        findings: list[Finding] = []
        usable = {host: f for host, f in facts.items() if f.get("tool") and not f.get("error")}
        chips = {host: str(f["chip"]) for host, f in usable.items() if f.get("chip")}
        for host in sorted(facts):
            host_facts = facts[host]
            if host not in usable:
                findings.append(_smi_problem(host, host_facts))
                continue
            findings.append(finding("npu.smi", host, Status.PASS, f"npu.smi: {host_facts['tool']} answers",
                                    observed=host_facts["tool"]))
            findings.append(_judge_count(host, host_facts, int(ctx.cluster.devices_per_host)))
            findings.append(_judge_chip(host, host_facts, chips))
            findings.append(_judge_health(host, host_facts))
            findings.append(_judge_processes(host, host_facts))
        return findings


def _smi_problem(host: str, host_facts: Facts) -> Finding:
    if not host_facts.get("tool"):
        return finding("npu.smi", host, Status.ERROR,
                       f"npu.smi: npu-smi not found on {host} (looked on {LOOKED_AT}): cannot see the NPUs",
                       observed="npu-smi missing", expected=f"npu-smi on PATH or at {NPU_SMI_PATHS[-1]}",
                       remedy="install the Ascend NPU driver package (it ships npu-smi), e.g. "
                              "./Ascend-hdk-*-npu-driver_*.run --full")
    return finding("npu.smi", host, Status.ERROR,
                   f"npu.smi: {host_facts.get('error')} on {host}: the driver may not be loaded or the devices "
                   "are unreachable",
                   observed=str(host_facts.get("error")), expected="npu-smi info lists every NPU",
                   remedy="npu-smi info; lsmod | grep drv_davinci; dmesg | grep -i -E 'davinci|npu' | tail")


def _judge_count(host: str, host_facts: Facts, wanted: int) -> Finding:
    check = "npu.count"
    if host_facts.get("generation") == "A3":
        return _judge_a3_count(host, host_facts, wanted)
    ids = sorted(d["id"] for d in host_facts["devices"])
    total = host_facts.get("total_count")
    observed = f"{len(ids)} in npu-smi info (ids {', '.join(map(str, ids)) or 'none'})"
    if total is not None and total != len(ids):
        observed += f"; npu-smi info -l Total Count {total}"
    expected = f"{wanted} NPUs (devices_per_host)"
    if len(ids) != wanted or (total is not None and total != wanted):
        missing = sorted(set(range(wanted)) - set(ids))
        detail = f"; missing device ids: {', '.join(map(str, missing))}" if missing and len(ids) < wanted else ""
        return finding(check, host, Status.FAIL,
                       f"{check}: {host} has {len(ids)} NPUs, devices_per_host is {wanted}{detail}: a rank would "
                       "have no device (or devices_per_host is wrong)",
                       observed=observed, expected=expected,
                       remedy="npu-smi info -l; lspci | grep -i -E 'd80[0-9]|accelerator'; dmesg | grep -i davinci "
                              "| tail  # find the lost device, or fix devices_per_host in hosts.yaml")
    return finding(check, host, Status.PASS, f"{check}: {host} has {wanted} NPUs", observed=observed,
                   expected=expected)


def _judge_a3_count(host: str, host_facts: Facts, wanted: int) -> Finding:
    """Atlas A3: devices_per_host counts chips (one rank each); ``Total Count`` of npu-smi info -l counts NPUs."""
    check = "npu.count"
    devices = host_facts["devices"]
    npus = sorted({d["id"] for d in devices})
    chips = len(devices)
    total = host_facts.get("total_count")
    phys = sorted(d["phy_id"] for d in devices if isinstance(d.get("phy_id"), int))
    observed = f"{chips} chips on {len(npus)} NPUs in npu-smi info (Phy-ID {', '.join(map(str, phys)) or 'none'})"
    if total is not None:
        observed += f"; npu-smi info -l Total Count {total}"
    expected = f"{wanted} chips (devices_per_host counts chips on Atlas A3)"
    remedy = ("npu-smi info -l; lspci | grep -i -E 'd80[0-9]|accelerator'; dmesg | grep -i davinci | tail  # find "
              "the lost chip, or fix devices_per_host in hosts.yaml")
    if chips != wanted and len(npus) == wanted and chips == 2 * wanted:
        return finding(check, host, Status.FAIL,
                       f"{check}: {host} is an Atlas A3 server with {chips} chips on {len(npus)} NPUs, "
                       f"devices_per_host is {wanted}: on A3 devices_per_host counts chips (each chip is one device "
                       "and one rank for torch and HCCL), so half the chips would get no rank and the hccn checks "
                       "would skip them", observed=observed, expected=expected,
                       remedy=f"set cluster.devices_per_host: {chips} in hosts.yaml")
    if chips != wanted or (total is not None and total != len(npus)):
        missing = sorted(set(range(wanted)) - set(phys)) if phys else []
        detail = f"; missing Phy-IDs: {', '.join(map(str, missing))}" if missing and chips < wanted else ""
        return finding(check, host, Status.FAIL,
                       f"{check}: {host} has {chips} chips on {len(npus)} NPUs (Atlas A3), devices_per_host is "
                       f"{wanted}{detail}: a rank would have no device (or devices_per_host is wrong)",
                       observed=observed, expected=expected, remedy=remedy)
    return finding(check, host, Status.PASS, f"{check}: {host} has {chips} chips on {len(npus)} NPUs (Atlas A3)",
                   observed=observed, expected=expected)


def _judge_chip(host: str, host_facts: Facts, chips: Mapping[str, str]) -> Finding:
    check = "npu.chip"
    names = sorted({d["chip"] for d in host_facts["devices"]})
    chip = host_facts.get("chip")
    top, strict = majority(dict(chips))
    observed = ", ".join(names) or "no devices"
    if len(names) > 1:
        return finding(check, host, Status.FAIL, f"{check}: {host} mixes NPU chip types ({observed}): HCCL "
                       "cannot run one job across chip generations", observed=observed,
                       expected="one chip type", remedy="npu-smi info  # compare the Name column")
    if chip is None:
        return finding(check, host, Status.SKIP, f"{check}: no NPU on {host} to compare")
    generation = host_facts.get("generation") or chip_generation(chip)
    if chip != top or not strict and len(set(chips.values())) > 1:
        others = ", ".join(f"{h}: {c}" for h, c in sorted(chips.items()) if c != chip) or "none"
        return finding(check, host, Status.FAIL,
                       f"{check}: {host} has {chip} NPUs, unlike the cluster ({others}): one HCCL job cannot span "
                       "different chip types",
                       observed=chip, expected=str(top) if strict else "one chip type on every host",
                       remedy="npu-smi info  # run the job on servers of one chip type (hosts.yaml)")
    if generation is None:
        return finding(check, host, Status.WARN,
                       f"{check}: {host} has {chip} NPUs: not a training chip preflight knows (910A / Atlas A2 / A3); "
                       "the device-IP rules cannot be checked for it", observed=chip,
                       expected="910* (Atlas training series), 910B* / A2* (Atlas A2) or Ascend910 with Phy-IDs (A3)",
                       remedy="npu-smi info  # check the Name column")
    return finding(check, host, Status.PASS, f"{check}: {host} has {chip} NPUs ({generation})", observed=chip)


def _judge_health(host: str, host_facts: Facts) -> Finding:
    check = "npu.health"
    bad = [d for d in host_facts["devices"] if str(d["health"]).upper() != HEALTH_OK]
    if not bad:
        return finding(check, host, Status.PASS, f"{check}: every NPU on {host} is OK",
                       observed="all OK", expected="OK")
    failing = [d for d in bad if str(d["health"]).upper() not in HEALTH_WARN]
    status = Status.FAIL if failing else Status.WARN
    shown = failing or bad
    listing = ", ".join(f"device {d['id']}: {d['health']}" for d in bad)
    effect = ("HCCL init or the first collective fails on it" if failing else
              "it still works but has raised a warning that may turn into a failure")
    return finding(check, host, status, f"{check}: {host} has unhealthy NPUs ({listing}): {effect}",
                   observed=listing, expected="OK", device=shown[0]["id"] if len(shown) == 1 else None,
                   remedy=f"npu-smi info -t health -i {shown[0]['id']}  # shows the alarm codes; fix the cause or "
                          "replace the device, then check again")


def _judge_processes(host: str, host_facts: Facts) -> Finding:
    check = "npu.processes"
    procs = host_facts.get("processes") or []
    if procs:
        a3 = host_facts.get("generation") == "A3"
        listing = "; ".join(f"pid {p['pid']} ({p['name']}, {p['memory_mb']} MB) on "
                            + (f"NPU {p['npu']} chip {p['chip']}" if a3 else f"device {p['npu']}") for p in procs)
        pids = " ".join(str(p) for p in sorted({p["pid"] for p in procs}))
        devices = sorted({p["npu"] for p in procs})
        return finding(check, host, Status.FAIL,
                       f"{check}: processes still hold NPUs on {host}: {listing}: a leftover job makes the next HCCL "
                       "init fail (EJ0001) or run out of device memory",
                       observed=listing, expected="no process on any NPU", device=devices[0] if len(devices) == 1
                       else None, remedy=f"ps -o pid,user,etime,args -p {pids.replace(' ', ',')}  # if it is a stale "
                       f"job: kill {pids}")
    if not host_facts.get("process_table"):
        return finding(check, host, Status.ERROR, f"{check}: npu-smi info on {host} printed no process table",
                       observed="no process table", expected="the process table of npu-smi info")
    return finding(check, host, Status.PASS, f"{check}: no process holds an NPU on {host}",
                   observed="none", expected="no process on any NPU")
