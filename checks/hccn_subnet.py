"""hccn.subnet: the device-IP segment layout HCCL expects for the chip generation, with the plan to fix it.

Atlas training series (910A, 8 NPUs a server): devices 0/4, 1/5, 2/6 and 3/7 share a segment, 0-3 are
in four different segments and so are 4-7, and the devices in the same position on every server are
in the same segment. Atlas A2 (910B): all devices of a node in one segment, and the nodes share it (or
are routed to each other: a warning); a node whose devices sit in per-plane segments, each device with a
gateway inside its own segment, is routed by design: a warning to verify reachability, not a failure.
Atlas A3 (two chips per NPU, each its own device): the two chips of one NPU in different segments
(MindCluster Ascend Deployer's IP planning: in one segment ``hccn_tool`` ping between them fails); no
published layout says more, so nothing else is judged on A3 (uniqueness, netmask and gateway are hccn.ip's).
The chips of each NPU come from the npu check's facts (Phy-IDs per NPU), else Phy-ID 2k/2k+1.
A violation names the devices and hosts and shows the plan:
ascend-deployer's address for every device, derived from device 0's address (910A: ip[i] =
a.b.(c+i).d, ip[i+4] = a.b.(c+i).(d+1); A2: consecutive addresses in device 0's segment), with the
``hccn_tool -i N -ip -s`` commands for the devices that differ from it.

The device IPs come from hccn.ip's facts, the chip generation ("A3" / "A2" / "910A") from the npu check's.

>>> plan_910a("192.168.0.10", range(8))[5]
'192.168.1.11'
>>> plan_a2("10.0.1.20", 0, "255.255.255.0", range(3))
{0: '10.0.1.20', 1: '10.0.1.21', 2: '10.0.1.22'}
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from collections.abc import Iterable, Mapping

from preflight.ascend.device_ip import Network, address, network, set_ip_command, usable_devices
from preflight.checks.base import *

CHECK = "hccn.subnet"
GENERATIONS = ("910A", "A2", "A3")

Layout = dict[int, tuple[str, str, Network]]  # device id -> (ip, netmask, segment)


def plan_910a(ip0: str, ids: Iterable[int]) -> dict[int, str]:
    """ascend-deployer's 910A plan from device 0's address a.b.c.d: i -> a.b.(c+i).d, i+4 -> a.b.(c+i).(d+1).

    >>> plan_910a("10.1.250.7", [0, 4, 7])
    {0: '10.1.250.7', 4: '10.1.250.8', 7: '10.1.253.8'}
    """
    base = int(ipaddress.IPv4Address(ip0))
    return {i: str(ipaddress.IPv4Address((base + (i % 4) * 256 + i // 4) & 0xFFFFFFFF)) for i in ids}


def plan_a2(anchor_ip: str, anchor_id: int, netmask: str, ids: Iterable[int]) -> dict[int, str]:
    """Consecutive addresses around the anchor device's own: device i gets anchor + (i - anchor_id)."""
    base = int(ipaddress.ip_address(anchor_ip)) - anchor_id
    return {i: str(ipaddress.ip_address(base + i)) for i in ids}


def _segments_910a_ok(layout: Mapping[int, Network]) -> bool:
    return not _pair_breaks(layout) and not _shared(layout)


def _pair_breaks(layout: Mapping[int, Network]) -> list[tuple[int, int]]:
    return [(i, i + 4) for i in range(4) if i in layout and i + 4 in layout and layout[i] != layout[i + 4]]


def _shared(layout: Mapping[int, Network]) -> list[tuple[Network, list[int]]]:
    """Segments holding more than one of devices 0-3 (or of 4-7)."""
    found = []
    for group in ((0, 1, 2, 3), (4, 5, 6, 7)):
        by_segment: dict[Network, list[int]] = {}
        for dev in group:
            if dev in layout:
                by_segment.setdefault(layout[dev], []).append(dev)
        found += [(seg, devs) for seg, devs in by_segment.items() if len(devs) > 1]
    return found


def _layout(host_facts: Facts) -> Layout:
    layout: Layout = {}
    for device in usable_devices(host_facts):
        seg = network(device["ip"], device["netmask"])
        if seg is not None:
            layout[int(device["id"])] = (str(device["ip"]), str(device["netmask"]), seg)
    return layout


def _all_ids(host_facts: Facts) -> list[int]:
    devices = host_facts.get("devices")
    return sorted(int(d["id"]) for d in devices if isinstance(d, dict) and isinstance(d.get("id"), int)) \
        if isinstance(devices, list) else []


def _fmt(layout: Layout, devs: Iterable[int]) -> str:
    return ", ".join(f"{d} ({layout[d][0]}/{layout[d][2].prefixlen})" for d in devs)


def _devices(devs: list[int]) -> str:
    return "device" if len(devs) == 1 else "devices"


def _plan_text(plan: Mapping[int, str], netmask: str) -> str:
    return " ".join(f"{d}:{ip}" for d, ip in sorted(plan.items())) + f" netmask {netmask}"


def _remedy(plan: Mapping[int, str], netmask: str, layout: Layout, ids: Iterable[int]) -> str:
    commands = [set_ip_command(d, plan[d], netmask) for d in ids
                if d in plan and (d not in layout or layout[d][0] != plan[d] or layout[d][1] != netmask)]
    return " && ".join(commands)


class HccnSubnetCheck(DerivedCheck):
    ids = ("hccn.subnet",)
    accelerators = frozenset({"npu"})
    not_applicable = "no device IPs to check"
    order = 61
    summary = ("NPU device-IP segment layout for the chip generation (910A: 0/4, 1/5, 2/6, 3/7 paired, same "
               "position across servers; A2: one segment a node, or routed planes; A3: the two chips of an NPU "
               "in different segments), with the address plan")
    needs = ("hccn.ip", "npu")

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        ip_facts = ctx.other_facts.get("hccn.ip", {})
        npu_facts = ctx.other_facts.get("npu", {})
        findings: list[Finding] = []
        layouts: dict[str, dict[str, Layout]] = {gen: {} for gen in GENERATIONS}
        ids: dict[str, list[int]] = {}
        routed: set[str] = set()
        for host in sorted(facts):
            generation = (npu_facts.get(host) or {}).get("generation")
            host_ip = ip_facts.get(host) or {}
            layout = _layout(host_ip)
            if generation not in GENERATIONS:
                why = ("npu-smi showed no 910A / Atlas A2 / A3 chip" if host in npu_facts else
                       "the npu check's facts (npu-smi) are missing for this host")
                findings.append(finding(CHECK, host, Status.SKIP, f"chip generation unknown on {host} "
                                        f"({why}): the segment rules depend on it"))
            elif not layout:
                findings.append(finding(CHECK, host, Status.SKIP, f"no device IP could be read on {host} "
                                        "(see hccn.ip)"))
            else:
                layouts[generation][host] = layout
                ids[host] = _all_ids(host_ip) or sorted(layout)
                if _routed(host_ip):
                    routed.add(host)
        findings += _judge_910a(layouts["910A"], ids)
        findings += _judge_a2(layouts["A2"], ids, routed)
        findings += _judge_a3(layouts["A3"], npu_facts)
        flagged = {f.host for f in findings}
        for host in sorted(set().union(*layouts.values()) - flagged):
            generation = next(gen for gen in GENERATIONS if host in layouts[gen])
            layout = layouts[generation][host]
            segments = ", ".join(f"{d}:{layout[d][2]}" for d in sorted(layout))
            findings.append(finding(CHECK, host, Status.PASS, f"{generation} layout as required: {segments}",
                                    observed=segments))
        return findings


def _position_majority(layouts: Mapping[str, Layout]) -> dict[int, tuple[Network, bool]]:
    """Device position -> (most common segment across hosts, whether it is a strict majority)."""
    result = {}
    positions = {d for layout in layouts.values() for d in layout}
    for dev in positions:
        segs = [layout[dev][2] for layout in layouts.values() if dev in layout]
        top, count = Counter(segs).most_common(1)[0]
        result[dev] = (top, count * 2 > len(segs))
    return result


def _judge_910a(layouts: Mapping[str, Layout], ids: Mapping[str, list[int]]) -> list[Finding]:
    findings: list[Finding] = []
    majority = _position_majority(layouts)
    for host in sorted(layouts):
        layout = layouts[host]
        segs = {d: v[2] for d, v in layout.items()}
        problems: list[tuple[str, int, int | None, str | None]] = []  # (text, device, peer_device, peer host)
        for a, b in _pair_breaks(segs):
            problems.append((f"devices {_fmt(layout, (a, b))} are in different segments ({segs[a]}, {segs[b]}): "
                             "910A pairs 0/4, 1/5, 2/6, 3/7 must share one", b, a, None))
        for seg, devs in _shared(segs):
            problems.append((f"devices {_fmt(layout, devs)} share segment {seg}: devices 0-3 (and 4-7) must each "
                             "be in a segment of their own", devs[-1], devs[0], None))
        off: list[tuple[int, str, str | None]] = []  # (device, why, a peer host holding the expected segment)
        for dev in sorted(segs) if len(layouts) > 1 else []:
            top, strict = majority[dev]
            if strict and segs[dev] == top:
                continue
            others = sorted(h for h in layouts if h != host and dev in layouts[h])
            if strict:
                peers = [h for h in others if layouts[h][dev][2] == top]
                off.append((dev, f"device {dev} is in {segs[dev]}, on {', '.join(peers)} in {top}", peers[0]))
            else:
                spread = ", ".join(f"{h}={layouts[h][dev][2]}" for h in sorted(layouts) if dev in layouts[h])
                off.append((dev, f"device {dev} has no majority segment across servers ({spread})",
                            others[0] if others else None))
        if off:
            problems.append((f"{'; '.join(why for _, why, _ in off)}: devices in the same position on every server "
                             "must share a segment", off[0][0], off[0][0], off[0][2]))
        if not problems:
            continue
        plan, netmask = _plan_for_910a(layout, majority)
        if plan:
            expected = "plan " + _plan_text(plan, netmask)
            remedy = _remedy(plan, netmask, layout, ids.get(host, sorted(layout)))
        else:
            expected, remedy = "0/4, 1/5, 2/6, 3/7 paired in four segments", ""
        for text, dev, peer_dev, peer in problems:
            findings.append(finding(CHECK, host, Status.FAIL, f"{host}: {text} (910A)", device=dev,
                                    peer=peer, peer_device=peer_dev, observed=_fmt(layout, sorted(layout)),
                                    expected=expected, remedy=remedy or None))
    return findings


def _plan_for_910a(layout: Layout, majority: Mapping[int, tuple[Network, bool]]) -> tuple[dict[int, str], str]:
    """The deployer plan from device 0 (moved into position 0's majority segment when it is off it)."""
    if 0 not in layout or layout[0][2].version != 4:
        return {}, ""
    ip0, netmask, seg0 = layout[0]
    top, strict = majority.get(0, (seg0, True))
    if strict and top != seg0 and top.version == 4:
        host_part = int(ipaddress.IPv4Address(ip0)) & int(seg0.hostmask)
        ip0 = str(ipaddress.IPv4Address(int(top.network_address) | (host_part & int(top.hostmask))))
        netmask = str(top.netmask)
    ids = range(8)
    for mask in (netmask, "255.255.255.0"):
        plan = plan_910a(ip0, ids)
        segs = {d: network(ip, mask) for d, ip in plan.items()}
        if all(s is not None for s in segs.values()) and _segments_910a_ok(
                {d: s for d, s in segs.items() if s is not None}):
            return plan, mask
    return {}, ""


def _routed(host_ip: Facts) -> bool:
    """Whether every readable device has a gateway inside its own segment (routed planes, not one flat segment)."""
    devices = usable_devices(host_ip)
    for device in devices:
        seg, gateway = network(device["ip"], device["netmask"]), address(device.get("gateway"))
        if seg is None or gateway is None or gateway not in seg:
            return False
    return bool(devices)


def _judge_a2(layouts: Mapping[str, Layout], ids: Mapping[str, list[int]], routed: set[str]) -> list[Finding]:
    findings: list[Finding] = []
    node_segment: dict[str, Network] = {}
    for host in sorted(layouts):
        layout = layouts[host]
        segments = sorted({v[2] for v in layout.values()}, key=str)
        if host in routed and len(segments) > 1:
            findings.append(finding(
                CHECK, host, Status.WARN, f"{host}: devices in {len(segments)} segments "
                f"({_fmt(layout, sorted(layout))}), each device with a gateway inside its own segment: routed "
                "planes rather than one A2 segment; HCCL works only if every device reaches its peers through the "
                "gateways (A2)", observed=_fmt(layout, sorted(layout)),
                expected="one segment a node, or routes between the planes",
                remedy="preflight run --checks hccn.reachability  # pings each device's peers with hccn_tool -ping"))
            continue
        counts = Counter(layout[d][2] for d in sorted(layout))
        best = max(counts.values())
        segment = next(layout[d][2] for d in sorted(layout) if counts[layout[d][2]] == best)
        node_segment[host] = segment
        odd = [d for d in sorted(layout) if layout[d][2] != segment]
        if not odd:
            continue
        inside = [d for d in sorted(layout) if layout[d][2] == segment]
        anchor = inside[0]
        anchor_ip, netmask, _ = layout[anchor]
        plan = plan_a2(anchor_ip, anchor, netmask, ids.get(host, sorted(layout)))
        if not all(ipaddress.ip_address(ip) in segment for ip in plan.values()):
            plan = {}
        expected = ("plan " + _plan_text(plan, netmask)) if plan else f"every device in {segment}"
        remedy = _remedy(plan, netmask, layout, odd) if plan else None
        verb = "is" if len(odd) == 1 else "are"
        findings.append(finding(
            CHECK, host, Status.FAIL, f"{host}: {_devices(odd)} {_fmt(layout, odd)} {verb} outside the "
            f"node's segment {segment} (devices {', '.join(map(str, inside))}): on Atlas A2 all devices of a "
            "node must be in one segment (A2)", device=odd[0], peer_device=anchor,
            observed=_fmt(layout, sorted(layout)), expected=expected, remedy=remedy))
    if len(node_segment) > 1:
        counts = Counter(node_segment[h] for h in sorted(node_segment))
        best = max(counts.values())
        common = next(node_segment[h] for h in sorted(node_segment) if counts[node_segment[h]] == best)
        holders = sorted(h for h in node_segment if node_segment[h] == common)
        for host in sorted(node_segment):
            if node_segment[host] == common:
                continue
            findings.append(finding(
                CHECK, host, Status.WARN, f"{host}'s devices are in {node_segment[host]}, the other nodes' "
                f"({', '.join(holders)}) in {common}: A2 nodes must share a segment or be routed to each other "
                "(a gateway on every device and routes on the switches)", peer=holders[0],
                observed=str(node_segment[host]), expected=f"{common}, or routed",
                remedy="hccn_tool -i N -gateway -s gateway <gateway in the segment>  # on every device, or move "
                       f"the devices into {common}"))
    return findings



def _npu_chips(npu_host: Facts, layout: Layout) -> dict[int, list[int]]:
    """NPU id -> its chips' device ids (Phy-IDs from npu-smi; else Phy-ID 2k and 2k+1 for NPU k)."""
    chips: dict[int, list[int]] = {}
    devices = npu_host.get("devices")
    for device in devices if isinstance(devices, list) else []:
        if isinstance(device, dict) and isinstance(device.get("id"), int) and isinstance(device.get("phy_id"), int):
            chips.setdefault(device["id"], []).append(device["phy_id"])
    if not chips:
        for dev in sorted(layout):
            chips.setdefault(dev // 2, []).append(dev)
    return {npu: sorted(devs) for npu, devs in sorted(chips.items())}


def _judge_a3(layouts: Mapping[str, Layout], npu_facts: Mapping[str, Facts]) -> list[Finding]:
    """Atlas A3: the two chips of one NPU must be in different segments (nothing more is published)."""
    findings: list[Finding] = []
    for host in sorted(layouts):
        layout = layouts[host]
        for npu, chips in _npu_chips(npu_facts.get(host) or {}, layout).items():
            seen = [dev for dev in chips if dev in layout]
            for first, dev in zip(seen, seen[1:], strict=False):
                seg = layout[dev][2]
                if layout[first][2] != seg:
                    continue
                netmask = layout[dev][1]
                findings.append(finding(
                    CHECK, host, Status.FAIL, f"{host}: NPU {npu}'s chips {_fmt(layout, (first, dev))} "
                    f"share segment {seg}: on Atlas A3 the two chips of one NPU must be in different segments "
                    "(hccn_tool ping between them fails otherwise) (A3)", device=dev, peer_device=first,
                    observed=_fmt(layout, seen), expected=f"device {dev} in a segment other than {seg}",
                    remedy=f"hccn_tool -i {dev} -ip -s address <address outside {seg}> netmask {netmask}"))
    return findings
