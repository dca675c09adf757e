"""npu: the Ascend NPUs themselves, from ``npu-smi info`` and ``npu-smi info -l``.

HCCL needs every rank's device present and healthy, the same chip generation on every server, and
no process still holding a device (the previous job's leftover makes the next HCCL init fail with
EJ0001). ``npu-smi`` is looked up on PATH, in /usr/local/sbin, /usr/local/bin and the driver's
tools folder. The tables are read by their headers (``preflight/ascend/npu_smi.py``): 910A / Atlas A2 (``Chip``),
Atlas A3 (``Chip  Phy-ID``, two chips per NPU) and the inference cards (``Chip  Device``: Atlas 300 / 800
inference with four 310 chips per card, 300I Pro / 300I Duo with one or two 310P3 chips, 310B boards).

What ``devices_per_host`` counts: **devices**, one per chip row of ``npu-smi info`` (one rank each: what ACL,
torch and HCCL count). On 910A and Atlas A2 an NPU is one chip, so devices = NPUs; on Atlas A3 (two chips per
NPU), Atlas 300I Duo (two) and Atlas 300 (four 310 chips per card) there are more devices than NPUs. npu.count
compares ``devices_per_host`` with the chip rows, and ``Total Count`` of ``npu-smi info -l`` with the NPUs (the
distinct NPU ids of ``npu-smi info``): ``-l`` counts NPUs (cards, modules), not chips. Its ``Chip Count`` lines are
kept in the facts (``list_chips``), not judged: no public ``-l`` sample of a multi-chip card shows what they count.

The parsed chip generation is in the facts for the hccn checks (``ctx.other_facts["npu"][host]["generation"]``):
"A3" by the table's shape (a ``Phy-ID`` column or two chip rows under one NPU, as Atlas A3 prints ``Ascend910``),
else "A2" for 910B* / A2*, "910A" for other 910* chips (``generation``); None for the inference chips (310, 310P,
310B: ``chip_family``), which npu.chip knows but whose device IPs the hccn rules do not cover.

Finding ids: npu.smi (npu-smi present and readable), npu.count, npu.chip, npu.health, npu.processes.

>>> chip_generation("910B3"), chip_generation("Ascend910B4"), chip_generation("910ProB"), chip_generation("310P3")
('A2', 'A2', '910A', None)
>>> chip_family("310P3"), chip_family("Ascend310B4"), chip_family("310"), chip_family("910B3")
('310P', '310B', '310', None)
>>> generation("Ascend910", [{"id": 0, "chip_index": 0, "phy_id": 0}, {"id": 0, "chip_index": 1, "phy_id": 1}])
'A3'
>>> generation("910ProB", [{"id": 0}, {"id": 1}])
'910A'
>>> parse_info("| 0     910B3               | OK            | 94.3        53                0    / 0             |\\n"
...            "| 0                         | 0000:C1:00.0  | 0           0    / 0          4487 / 65536         |\\n"
...            )["devices"]  # doctest: +NORMALIZE_WHITESPACE
[{'id': 0, 'chip': '910B3', 'health': 'OK', 'bus_id': '0000:C1:00.0', 'memory_mb': [4487, 65536]}]
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from preflight.ascend.npu_smi import parse_info as parse_info
from preflight.ascend.npu_smi import parse_list as parse_list
from preflight.checks.base import *
from preflight.tools.ascend import NPU_SMI
from preflight.tools.common import error_text

HEALTH_OK = "OK"
HEALTH_WARN = ("WARNING",)  # anything else that is not OK (Alarm, Critical, UNKNOWN, ...) is a failure
# npu-smi prints no process table at all in releases 20.x and 21.x (Atlas 300 / 800 inference, 310: the manual's and a
# user's captures) and on 310B boards (every public 310B capture, terminal pastes included, ends at the device table,
# while the same test data's 910B and A3 cases go on with the process table)
NO_PROCESS_TABLE_RELEASE = re.compile(r"2[01]\.")
NO_PROCESS_TABLE_FAMILY = ("310B",)


def chip_generation(chip: str | None) -> str | None:
    """"A2" (910B*, A2*: check first), "910A" (other 910*: Atlas training series) or None (other chips)."""
    name = _bare(chip)
    if re.match(r"910B|A2", name):
        return "A2"
    if name.startswith("910"):
        return "910A"
    return None


def chip_family(chip: str | None) -> str | None:
    """The inference chips: "310P" (300I Pro / Duo), "310B" (Atlas 200I DK A2), "310" (Atlas 300), else None."""
    name = _bare(chip)
    found = re.fullmatch(r"310([PB]?)\d*", name)
    return f"310{found[1]}" if found else None


def _bare(chip: str | None) -> str:
    name = (chip or "").strip().upper()
    return name[len("ASCEND"):].strip() if name.startswith("ASCEND") else name


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


class NpuCheck(Check):
    ids = ("npu.smi", "npu.count", "npu.chip", "npu.health", "npu.processes")
    accelerators = frozenset({"npu"})
    not_applicable = "no NPUs to check"
    skip_id = "npu.devices"
    order = 55
    summary = ("NPUs (npu-smi info): count = devices_per_host, one chip type across the cluster, every device "
               "healthy, no process still holding a device")

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [NPU_SMI.lookup(), Probe("info", NPU_SMI.command("info"), timeout=30),
                Probe("list", NPU_SMI.command("info", "-l"), timeout=30)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        path = NPU_SMI.found(outputs)
        facts: Facts = {"tool": path, "error": None, "devices": [], "processes": [], "process_table": False,
                        "version": None, "layout": None, "total_count": None, "list_ids": [], "list_chips": [],
                        "list_error": None, "chip": None, "generation": None}
        if path is None:
            return facts
        info = outputs.get("info")
        parsed = parse_info(info.stdout) if info is not None and info.ok else None
        unread = parsed.pop("unread") if parsed else None
        if info is None:
            facts["error"] = "npu-smi info was not run"
        elif parsed is None:
            facts["error"] = f"npu-smi info failed: {error_text(info)}"
        elif not parsed["devices"] and unread is not None:
            facts["error"] = f"npu-smi info printed no device row preflight reads: first unread line {unread[:200]!r}"
        elif not parsed["devices"] and parsed["layout"] is None:
            facts["error"] = f"npu-smi info printed no device table: {error_text(info)}"
        else:
            facts.update(parsed)
        listing = outputs.get("list")
        if listing is not None and listing.ok:
            listed = parse_list(listing.stdout)
            facts.update(total_count=listed["total"], list_ids=listed["ids"], list_chips=listed["chips"])
            if listed["unread"] is not None:
                facts["list_error"] = (f"npu-smi info -l printed nothing preflight reads: first line "
                                       f"{listed['unread'][:200]!r}")
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
            findings.append(finding("npu.smi", host, Status.PASS, f"{host_facts['tool']} answers",
                                    observed=host_facts["tool"]))
            findings.append(_judge_count(host, host_facts, int(ctx.cluster.devices_per_host)))
            findings.append(_judge_chip(host, host_facts, chips))
            findings.append(_judge_health(host, host_facts))
            findings.append(_judge_processes(host, host_facts))
        return findings


def _smi_problem(host: str, host_facts: Facts) -> Finding:
    if not host_facts.get("tool"):
        return tool_missing("npu.smi", host, NPU_SMI)
    return finding("npu.smi", host, Status.ERROR,
                   f"{host_facts.get('error')} on {host}: the driver may not be loaded or the devices "
                   "are unreachable",
                   observed=str(host_facts.get("error")), expected="npu-smi info lists every NPU",
                   remedy="npu-smi info; lsmod | grep drv_davinci; dmesg | grep -i -E 'davinci|npu' | tail")


def _multi_chip(devices: list[dict[str, Any]]) -> bool:
    """Some NPU holds more than one chip (Atlas A3, 300I Duo, Atlas 300): devices are named by NPU and chip."""
    return any(count > 1 for count in Counter(d["id"] for d in devices).values())


def _number(device: Mapping[str, Any]) -> int:
    """The device's own number: its Phy-ID (A3), its logical device id (``Chip Device`` tables), else its NPU id."""
    for key in ("phy_id", "device_id"):
        if isinstance(device.get(key), int):
            return int(device[key])
    return int(device["id"])


def _label(device: Mapping[str, Any], multi: bool) -> str:
    if not multi:
        return f"device {device['id']}"
    kind = "Phy-ID" if "phy_id" in device else "device"
    return f"NPU {device['id']} chip {device.get('chip_index', '?')} ({kind} {_number(device)})"


def _judge_count(host: str, host_facts: Facts, wanted: int) -> Finding:
    """Devices (chip rows) vs devices_per_host; ``Total Count`` of npu-smi info -l vs the NPUs of npu-smi info."""
    check = "npu.count"
    devices = host_facts["devices"]
    npus = sorted({d["id"] for d in devices})
    chips, multi, a3 = len(devices), _multi_chip(devices), host_facts.get("generation") == "A3"
    numbers = sorted(_number(d) for d in devices)
    phy = any("phy_id" in d for d in devices)
    kind, kinds = ("Phy-ID", "Phy-IDs") if phy else ("device ids", "device ids")
    total = host_facts.get("total_count")
    if multi or a3:
        what = f"{chips} chips on {len(npus)} NPU{'s' if len(npus) != 1 else ''}"
        observed = f"{what} in npu-smi info ({kind} {', '.join(map(str, numbers)) or 'none'})"
        expected = f"{wanted} chips (devices_per_host counts chips: one device and one rank each)"
    else:
        what = f"{chips} NPU{'s' if chips != 1 else ''}"
        observed = f"{chips} in npu-smi info (ids {', '.join(map(str, numbers)) or 'none'})"
        expected = f"{wanted} NPUs (devices_per_host)"
    if total is not None and (multi or a3 or total != chips):
        observed += f"; npu-smi info -l Total Count {total}"
    suffix = " (Atlas A3)" if a3 else ""
    if chips != wanted and multi and len(npus) == wanted:
        return finding(check, host, Status.FAIL,
                       f"{host} has {what}{suffix}, devices_per_host is {wanted}: devices_per_host counts "
                       "chips (each chip is one device and one rank for torch and HCCL), so the other chips would "
                       "get no rank" + (" and the hccn checks would skip them" if a3 else ""), observed=observed,
                       expected=expected,
                       remedy=f"set cluster.devices_per_host: {chips} in hosts.yaml")
    if chips != wanted or (total is not None and total != len(npus)):
        missing = sorted(set(range(wanted)) - set(numbers))
        detail = f"; missing {kinds}: {', '.join(map(str, missing))}" if missing and chips < wanted else ""
        if chips == wanted:
            detail = f"; npu-smi info -l counts {total} NPUs, npu-smi info shows {len(npus)}"
        return finding(check, host, Status.FAIL,
                       f"{host} has {what}{suffix}, devices_per_host is {wanted}{detail}: a rank would "
                       "have no device (or devices_per_host is wrong)", observed=observed, expected=expected,
                       remedy="npu-smi info -l; lspci | grep -i -E 'd80[0-9]|accelerator'; dmesg | grep -i "
                              "davinci | tail  # find the lost device, or fix devices_per_host in hosts.yaml")
    if host_facts.get("list_error"):
        return finding(check, host, Status.ERROR,
                       f"{host_facts['list_error']} on {host}: only npu-smi info's {what} were counted",
                       observed=observed, expected=expected)
    return finding(check, host, Status.PASS, f"{host} has {what}{suffix}", observed=observed,
                   expected=expected)


def _judge_chip(host: str, host_facts: Facts, chips: Mapping[str, str]) -> Finding:
    check = "npu.chip"
    names = sorted({d["chip"] for d in host_facts["devices"]})
    chip = host_facts.get("chip")
    top, strict = majority(dict(chips))
    observed = ", ".join(names) or "no devices"
    if len(names) > 1:
        return finding(check, host, Status.FAIL, f"{host} mixes NPU chip types ({observed}): HCCL "
                       "cannot run one job across chip generations", observed=observed,
                       expected="one chip type", remedy="npu-smi info  # compare the Name column")
    if chip is None:
        return finding(check, host, Status.SKIP, f"no NPU on {host} to compare")
    generation = host_facts.get("generation") or chip_generation(chip)
    family = chip_family(chip)
    if chip != top or not strict and len(set(chips.values())) > 1:
        others = ", ".join(f"{h}: {c}" for h, c in sorted(chips.items()) if c != chip) or "none"
        return finding(check, host, Status.FAIL,
                       f"{host} has {chip} NPUs, unlike the cluster ({others}): one HCCL job cannot span "
                       "different chip types",
                       observed=chip, expected=str(top) if strict else "one chip type on every host",
                       remedy="npu-smi info  # run the job on servers of one chip type (hosts.yaml)")
    if generation is None and family is None:
        return finding(check, host, Status.WARN,
                       f"{host} has {chip} NPUs: not a chip preflight knows (910A / Atlas A2 / A3, "
                       "310 / 310P / 310B); the device-IP rules cannot be checked for it", observed=chip,
                       expected="910* (Atlas training series), 910B* / A2* (Atlas A2), Ascend910 with Phy-IDs (A3), "
                                "or an inference chip (310, 310P*, 310B*)",
                       remedy="npu-smi info  # check the Name column")
    if generation is None:
        return finding(check, host, Status.PASS, f"{host} has {chip} NPUs ({family}, an inference chip: "
                       "the hccn device-IP rules do not cover it)", observed=chip)
    return finding(check, host, Status.PASS, f"{host} has {chip} NPUs ({generation})", observed=chip)


def _judge_health(host: str, host_facts: Facts) -> Finding:
    check = "npu.health"
    devices = host_facts["devices"]
    multi = _multi_chip(devices)
    bad = [d for d in devices if str(d["health"]).upper() != HEALTH_OK]
    if not bad:
        return finding(check, host, Status.PASS, f"every NPU on {host} is OK",
                       observed="all OK", expected="OK")
    failing = [d for d in bad if str(d["health"]).upper() not in HEALTH_WARN]
    status = Status.FAIL if failing else Status.WARN
    shown = failing or bad
    listing = ", ".join(f"{_label(d, multi)}: {d['health']}" for d in bad)
    effect = ("HCCL init or the first collective fails on it" if failing else
              "it still works but has raised a warning that may turn into a failure")
    first = shown[0]
    chip = f" -c {first.get('chip_index', 0)}" if multi else ""
    return finding(check, host, status, f"{host} has unhealthy NPUs ({listing}): {effect}",
                   observed=listing, expected="OK", device=_number(first) if len(shown) == 1 else None,
                   remedy=f"npu-smi info -t health -i {first['id']}{chip}  # shows the alarm codes; fix the cause or "
                          "replace the device, then check again")


def _judge_processes(host: str, host_facts: Facts) -> Finding:
    check = "npu.processes"
    procs = host_facts.get("processes") or []
    if procs:
        multi = _multi_chip(host_facts["devices"]) or host_facts.get("generation") == "A3"
        listing = "; ".join(f"pid {p['pid']} ({p['name']}, {p['memory_mb']} MB) on "
                            + (f"NPU {p['npu']} chip {p['chip']}" if multi else f"device {p['npu']}") for p in procs)
        pids = " ".join(str(p) for p in sorted({p["pid"] for p in procs}))
        devices = sorted({p["npu"] for p in procs})
        return finding(check, host, Status.FAIL,
                       f"processes still hold NPUs on {host}: {listing}: a leftover job makes the next HCCL "
                       "init fail (EJ0001) or run out of device memory",
                       observed=listing, expected="no process on any NPU", device=devices[0] if len(devices) == 1
                       else None, remedy=f"ps -o pid,user,etime,args -p {pids.replace(' ', ',')}  # if it is a stale "
                       f"job: kill {pids}")
    version, family = str(host_facts.get("version") or ""), chip_family(host_facts.get("chip"))
    if not host_facts.get("process_table") and (NO_PROCESS_TABLE_RELEASE.match(version)
                                                or family in NO_PROCESS_TABLE_FAMILY):
        why = f"npu-smi {version} prints none" if NO_PROCESS_TABLE_RELEASE.match(version) else \
            f"npu-smi prints none on {family} boards"
        return finding(check, host, Status.SKIP,
                       f"npu-smi info on {host} has no process table ({why}): processes holding a device "
                       "cannot be seen", observed="no process table")
    if not host_facts.get("process_table"):
        return finding(check, host, Status.ERROR, f"npu-smi info on {host} printed no process table",
                       observed="no process table", expected="the process table of npu-smi info")
    return finding(check, host, Status.PASS, f"no process holds an NPU on {host}",
                   observed="none", expected="no process on any NPU")
