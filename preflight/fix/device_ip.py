"""``fix --include hccn.ip``: the NPU device IPs that hccn.ip and hccn.subnet name, set with hccn_tool, and only on
devices no process holds. Pure: findings and facts -> changes; a fresh read of the host -> apply, already, refused.

The address is the finding's own remedy (``hccn_tool -i N -ip -s address X netmask M``), and with it the rule it
follows (:func:`rule_of`): /etc/hccn.conf's record for the device (hccn.ip), or the ascend-deployer plan for the
chip generation (hccn.subnet: 910A a.b.(c+i).d / a.b.(c+i).(d+1); Atlas A2 consecutive in the node's segment).
Printed, never run: a remedy with a placeholder, two findings giving one device different addresses, an address
another device of the cluster holds and keeps, a device a process holds (npu-smi info), a host whose process
table could not be read, a device whose IP could not be read, a host without hccn_tool or npu-smi.

hccn_tool has no command that removes a device IP: undo puts a previous address back, and a device that had none
keeps the new one (said in the plan and by undo).

>>> set_commands("hccn_tool -i 1 -ip -s address 10.0.1.21 netmask 255.255.255.0 && "
...              "hccn_tool -i 3 -ip -s address 10.0.1.23 netmask 255.255.255.0")
[(1, '10.0.1.21', '255.255.255.0'), (3, '10.0.1.23', '255.255.255.0')]
>>> set_commands("hccn_tool -i 2 -ip -s address <unused address> netmask <netmask>") is None
True
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from preflight.ascend.device_ip import address, prefix_length
from preflight.context import EvalContext
from preflight.fix.model import Change, DeviceIp, Undo
from preflight.model import Finding

FINDINGS = ("hccn.ip", "hccn.subnet")
INCLUDE = "hccn.ip"
VERIFY = ("hccn.ip", "hccn.subnet")
NO_REMOVE = ("hccn_tool has no command that removes a device IP: undo cannot take this address away again (the "
             "device keeps it, and hccn.conf its address_N)")

Planned = tuple[int, str, str]  # device, address, netmask


def set_commands(remedy: str | None) -> list[Planned] | None:
    """The ``hccn_tool -i N -ip -s address X netmask M`` calls of a remedy (joined by ``&&``); None unless every
    part is one such call with a real address and netmask."""
    if not remedy:
        return None
    found = []
    for part in remedy.split("&&"):
        try:
            words = shlex.split(part.split("#", 1)[0])
        except ValueError:
            return None
        if (len(words) != 9 or words[0] != "hccn_tool" or words[1] != "-i" or not words[2].isdecimal()
                or words[3:6] != ["-ip", "-s", "address"] or words[7] != "netmask"):
            return None
        if address(words[6]) is None or prefix_length(words[8]) is None:
            return None
        found.append((int(words[2]), words[6], words[8]))
    return found or None


def rule_of(f: Finding) -> str:
    """The generation rule the finding's address follows, in words.

    >>> from preflight.model import Status
    >>> rule_of(Finding("hccn.subnet", "n1", Status.FAIL, "n1: devices 1 are outside ... (A2)"))[:40]
    'Atlas A2: every device of a node in one '
    """
    if f.check == "hccn.ip":
        return "the address and netmask /etc/hccn.conf records for the device (address_N, netmask_N)"
    if f.message.rstrip().endswith("(910A)"):
        return ("910A (ascend-deployer's plan from device 0's address a.b.c.d): device i -> a.b.(c+i).d, "
                "device i+4 -> a.b.(c+i).(d+1), so 0/4, 1/5, 2/6, 3/7 pair up in four segments")
    return ("Atlas A2: every device of a node in one segment; ascend-deployer's consecutive addresses from the "
            "anchor device's own (device i -> anchor + (i - anchor id))")


def device_of(row: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> int | None:
    """hccn_tool's device id of an npu-smi chip row: its Phy-ID, else the NPU id where the NPU has one chip."""
    if isinstance(row.get("phy_id"), int):
        return int(row["phy_id"])
    if sum(1 for r in rows if r.get("id") == row.get("id")) == 1 and isinstance(row.get("id"), int):
        return int(row["id"])
    return None


def held_devices(npu: Mapping[str, Any] | None) -> dict[int, str] | None:
    """device -> the processes holding it (npu-smi info's process table, as the npu check or
    ``npu_smi.parse_info`` read it); None when that cannot be told (no table, a process on an unknown chip).

    >>> rows = [{"id": 0, "chip_index": 0}, {"id": 1, "chip_index": 0}]
    >>> held_devices({"devices": rows, "process_table": True,
    ...               "processes": [{"npu": 1, "chip": 0, "pid": 42, "name": "python3"}]})
    {1: 'pid 42 (python3)'}
    >>> held_devices({"devices": rows, "process_table": False, "processes": []}) is None
    True
    """
    if not npu or not npu.get("process_table"):
        return None
    rows = [r for r in npu.get("devices") or [] if isinstance(r, Mapping)]
    held: dict[int, str] = {}
    for p in npu.get("processes") or []:
        row = next((r for r in rows if r.get("id") == p.get("npu") and r.get("chip_index", 0) == p.get("chip")),
                   None)
        device = None if row is None else device_of(row, rows)
        if device is None:
            return None
        held[device] = ", ".join(filter(None, [held.get(device), f"pid {p.get('pid')} ({p.get('name')})"]))
    return held


def live_ip(device: Mapping[str, Any]) -> tuple[str, str] | None | str:
    """A device of hccn.ip's facts (or ``hccn_tool.parse_ip``): (address, netmask), None (no IP), or why unread."""
    if device.get("state") == "ok":
        return (str(device.get("ip")), str(device.get("netmask")))
    if device.get("state") == "no_ip":
        return None
    return str(device.get("error") or "its IP could not be read")


def device_ip_changes(host: str, findings: Sequence[Finding], ctx: EvalContext) -> tuple[list[Change], set[int]]:
    """The device-IP changes for ``host``'s hccn.ip / hccn.subnet ``findings`` (in their order), and the indexes of
    the findings they answer (the others are printed by the policy as they are)."""
    wanted: dict[int, list[tuple[Planned, Finding, int]]] = {}
    for index, f in enumerate(findings):
        for planned in set_commands(f.remedy) or []:
            wanted.setdefault(planned[0], []).append((planned, f, index))
    ip_facts = ctx.other_facts.get("hccn.ip", {}).get(host) or {}
    npu = ctx.other_facts.get("npu", {}).get(host) or {}
    devices = {int(d["id"]): d for d in ip_facts.get("devices") or [] if isinstance(d, Mapping) and "id" in d}
    held = held_devices(npu)
    taken = _addresses(ctx, host, wanted)
    changes: list[Change] = []
    answered: set[int] = set()
    for device in sorted(wanted):
        plans = wanted[device]
        (_, addr, mask), first, _ = plans[0]
        fixes = tuple(dict.fromkeys(f.check for _, f, _ in plans))
        answered |= {index for _, _, index in plans}
        command = shlex.join(["hccn_tool", "-i", str(device), "-ip", "-s", "address", addr, "netmask", mask])
        before = live_ip(devices.get(device, {"state": "error", "error": "not read by hccn.ip"}))
        why = _refusal(device, plans, ip_facts, npu, held, before, taken.get(addr, ""))
        if why:
            changes.append(Change(host, fixes, "print", f"NPU device {device} IP -> {addr}: {why}: printed only",
                                  remedy=command, notes=(rule_of(first),)))
            continue
        old = before if isinstance(before, tuple) else None
        shown = f"{old[0]}/{prefix_length(old[1])}" if old else "(none)"
        undo = Undo(commands=((str(ip_facts["tool"]), "-i", str(device), "-ip", "-s", "address", old[0], "netmask",
                               old[1]),)) if old else Undo()
        changes.append(Change(
            host, fixes, "device_ip", f"NPU device {device} IP {shown} -> {addr}/{prefix_length(mask)}",
            commands=((str(ip_facts["tool"]), "-i", str(device), "-ip", "-s", "address", addr, "netmask", mask),),
            verify=VERIFY, undo=undo, notes=(rule_of(first),) + (() if old else (NO_REMOVE,)),
            device_ip=DeviceIp(str(ip_facts["tool"]), str(npu["tool"]), device, addr, mask, old)))
    return changes, answered


def _refusal(device: int, plans: Sequence[tuple[Planned, Finding, int]], ip_facts: Mapping[str, Any],
             npu: Mapping[str, Any], held: Mapping[int, str] | None, before: tuple[str, str] | None | str,
             holder: str) -> str:
    """Why the device's IP is only printed; "" when it may be set."""
    if len({(a, m) for (_, a, m), _, _ in plans}) > 1:
        return "the findings give it different addresses (" + ", ".join(
            sorted({f"{a} from {f.check}" for (_, a, _), f, _ in plans})) + ")"
    if not ip_facts.get("tool"):
        return "hccn_tool was not found"
    if not npu.get("tool"):
        return "npu-smi was not found: whether a process holds the device cannot be told"
    if held is None:
        return "npu-smi info showed no readable process table: whether a process holds the device cannot be told"
    if device in held:
        return f"a process holds it ({held[device]})"
    if isinstance(before, str):
        return f"its IP could not be read ({before})"
    if holder:
        return f"{plans[0][0][1]} is {holder}'s"
    return ""


def _addresses(ctx: EvalContext, host: str, wanted: Mapping[int, Any]) -> dict[str, str]:
    """Address -> the device of the cluster that holds it and keeps it (this host's devices being moved excepted)."""
    taken: dict[str, str] = {}
    for name, facts in sorted(ctx.other_facts.get("hccn.ip", {}).items()):
        for d in (facts or {}).get("devices") or []:
            if not isinstance(d, Mapping) or d.get("state") != "ok" or (name == host and d.get("id") in wanted):
                continue
            taken[str(d.get("ip"))] = f"{name} device {d.get('id')}"
    return taken


def device_state(host: str, ctx: EvalContext) -> Any:
    """What the device-IP changes of ``host`` were planned from (HostPlan.state): its devices' IPs and who holds
    which device."""
    ip_facts = ctx.other_facts.get("hccn.ip", {}).get(host) or {}
    return {"ips": {str(d.get("id")): live_ip(d) for d in ip_facts.get("devices") or [] if isinstance(d, Mapping)},
            "held": held_devices(ctx.other_facts.get("npu", {}).get(host))}


def decide(change: Change, now: tuple[str, str] | None | str, held: Mapping[int, str] | None) -> tuple[str, str]:
    """Just before applying: (apply | already | refused, why) from the device's IP read now and npu-smi now.

    >>> ip = DeviceIp("t", "s", 1, "10.0.1.21", "255.255.255.0", ("10.0.9.21", "255.255.255.0"))
    >>> change = Change("n1", ("hccn.subnet",), "device_ip", "s", device_ip=ip)
    >>> decide(change, ("10.0.9.21", "255.255.255.0"), {}), decide(change, ("10.0.1.21", "255.255.255.0"), {})[0]
    (('apply', ''), 'already')
    >>> decide(change, ("10.0.7.7", "255.255.255.0"), {})[1]
    'device 1 has 10.0.7.7/24 now, not the 10.0.9.21/24 planned from: changed since the plan'
    """
    ip = change.device_ip
    if ip is None:
        return "refused", "not a device-IP change"
    if isinstance(now, str):
        return "refused", f"device {ip.device}'s IP could not be read now: {now}"
    if _same(now, (ip.address, ip.netmask)):
        return "already", ""
    planned_from = now is None and ip.before is None or now is not None and _same(now, ip.before)
    if not planned_from:
        return "refused", (f"device {ip.device} has {_shown(now)} now, not the {_shown(ip.before)} planned from: "
                           "changed since the plan")
    if held is None:
        return "refused", "npu-smi info showed no readable process table now: cannot tell whether a process holds it"
    if ip.device in held:
        return "refused", f"a process holds device {ip.device} now ({held[ip.device]})"
    return "apply", ""


def undo_decision(change: Change, now: tuple[str, str] | None | str) -> tuple[str, str]:
    """For undo: (restore | gone | refused, why) from the device's IP read now."""
    ip = change.device_ip
    if ip is None or isinstance(now, str):
        return "refused", f"device {ip.device if ip else '?'}'s IP could not be read now: {now}"
    if ip.before is not None and now is not None and _same(now, ip.before):
        return "gone", f"device {ip.device}: already {_shown(ip.before)}"
    if now is None or not _same(now, (ip.address, ip.netmask)):
        return "refused", (f"device {ip.device} has {_shown(now)} now, not the fixed {ip.address}: changed since "
                           "the fix, left as it is")
    if ip.before is None:
        return "refused", f"device {ip.device} keeps {ip.address}: {NO_REMOVE}"
    return "restore", ""


def _same(a: tuple[str, str] | None, b: tuple[str, str] | None) -> bool:
    return (a is not None and b is not None and address(a[0]) is not None and address(a[0]) == address(b[0])
            and prefix_length(a[1]) == prefix_length(b[1]))


def _shown(ip: tuple[str, str] | None) -> str:
    return "no IP" if ip is None else f"{ip[0]}/{prefix_length(ip[1])}"
