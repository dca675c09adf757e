"""hccn.reachability: same-position NPUs on different hosts ping each other over their RoCE ports.

The gather reads every device's IP (``hccn_tool -i N -ip -g``); then one step runs, on each host, the pings
that host owns (``hccn_tool -i N -ping -g address PEER_IP``; devices in parallel, one device's pings in order).

Pattern: up to ``all_pairs_max_hosts`` hosts, every pair of same-position devices (each pair pinged once, from
a circle schedule so each host sends about H/2 pings per device); beyond that two rings: each device pings the
same-position device of the next host and of the host H/2 ahead (2 pings per device, whatever the size).

A failing pair is named (host, device, peer, peer_device); a device that none of its (2 or more) peers reach
is blamed once instead of once per pair.

>>> ping_result("3 packets transmitted, 0 received, 100.00% packet loss", 1)
('no reply', 3, 0)
>>> ring_pairs(["a", "b", "c", "d"], all_pairs=False)
[('a', 'b'), ('a', 'c'), ('b', 'c'), ('b', 'd'), ('c', 'd'), ('d', 'a')]
"""

from __future__ import annotations

import ipaddress
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from preflight.ascend.hccn_calls import hccn_script, host_problem, parse_calls, tool_facts
from preflight.ascend.hccn_tool import call_error, unread
from preflight.checks.base import *

_PING = re.compile(r"(\d+)\s+packets?\s+transmitted,\s*(\d+)\s+received", re.I)


def ping_result(out: str, rc: int | None, timeout: float = 10.0) -> tuple[str, int, int]:
    """(result, sent, received) of one ``-ping`` call: ok, loss, no reply, or an error text.

    >>> ping_result("recv seq=0,time=0.06ms\\n3 packets transmitted, 3 received, 0.00% packet loss", 0)
    ('ok', 3, 3)
    >>> ping_result("hccn_tool is busy, please try again.", 17)[0].startswith("error: hccn_tool is busy")
    True
    """
    match = _PING.search(out)
    if match is None:
        why = call_error(out, rc, timeout) or unread(out)
        return f"error: {why}", 0, 0
    sent, received = int(match[1]), int(match[2])
    if received == 0:
        return "no reply", sent, received
    return ("ok" if received >= sent else "loss"), sent, received


def ring_pairs(order: Sequence[str], all_pairs: bool) -> list[tuple[str, str]]:
    """(pinging host, pinged host) pairs: offsets 1..H/2 (all pairs, each once) or just 1 and H/2 (two rings)."""
    count = len(order)
    if count < 2:
        return []
    offsets = range(1, count // 2 + 1) if all_pairs else sorted({1, max(1, count // 2)})
    seen: set[frozenset[str]] = set()
    pairs: list[tuple[str, str]] = []
    for i, host in enumerate(order):
        for k in offsets:
            peer = order[(i + k) % count]
            key = frozenset((host, peer))
            if peer != host and key not in seen:
                seen.add(key)
                pairs.append((host, peer))
    return sorted(pairs)


def _ip(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text.strip()))
    except ValueError:
        return None


class HccnReachabilityCheck(ActiveCheck):
    ids = ("hccn.reachability",)
    accelerators = frozenset({"npu"})
    not_applicable = "hccn_tool checks apply to Ascend NPUs only"
    order = 74
    summary = "same-position NPUs on different hosts ping each other (hccn_tool -ping), every pair or two rings"
    params: ClassVar[Mapping[str, Any]] = {"all_pairs_max_hosts": 8, "ping_timeout": 10}

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        calls = {dev: [("ip", ["-ip", "-g"])] for dev in range(max(1, cluster.devices_per_host))}
        return [Probe("ip", hccn_script(calls), timeout=20)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        if "ip" not in outputs:
            return {"tool": None, "looked": None, "error": None, "devices": {}, "not_run": True}
        facts, calls = tool_facts(outputs["ip"])
        devices: dict[str, dict[str, str | None]] = {}
        for dev, ops in sorted(calls.devices.items(), key=lambda item: int(item[0])):
            out, rc = ops.get("ip", ("", None))
            match = re.search(r"ipaddr\s*:\s*(\S+)", out, re.I)
            error = call_error(out, rc)
            ip = _ip(match[1]) if match and error is None else None
            if ip is None and error is None:
                error = unread(out)
            devices[dev] = {"ip": ip, "error": error}
        facts["devices"] = devices
        return facts

    # --- planning (pure) ---

    def plan(self, facts: Mapping[str, Facts], ctx: EvalContext) -> tuple[list[tuple[str, str, int]], str]:
        """(pinging host, pinged host, device) triples, and the pattern's name."""
        order = [h.name for h in ctx.hosts if h.name in facts and host_problem(self.name, h.name, facts[h.name])
                 is None]
        all_pairs = len(order) <= int(ctx.params["all_pairs_max_hosts"])
        positions = sorted({int(d) for h in order for d in facts[h].get("devices", {})})
        plan: list[tuple[str, str, int]] = []
        for dev in positions:
            having = [h for h in order if _device_ip(facts[h], dev)]
            plan += [(a, b, dev) for a, b in ring_pairs(having, all_pairs)]
        pattern = ("every pair of same-position devices" if all_pairs else
                   "two rings: each device pings the same-position device on the next host and on the host "
                   f"{max(1, len(order) // 2)} ahead")
        return plan, pattern

    def steps(self, facts: Mapping[str, Facts], ctx: EvalContext, done: Sequence[StepOutcome] = ()) -> list[Step]:
        plan, _ = self.plan(facts, ctx)
        if not plan:
            return []
        timeout = float(ctx.params["ping_timeout"])
        calls: dict[str, dict[int, list[tuple[str, list[str]]]]] = defaultdict(lambda: defaultdict(list))
        for source, target, dev in plan:
            ip = _device_ip(facts[target], dev) or ""
            calls[source][dev].append((ip, ["-ping", "-g", "address", ip]))
        longest = max(len(c) for per_host in calls.values() for c in per_host.values())
        window = longest * (timeout + 2) + 10
        foreground = {h: [Probe("ping", hccn_script(per_host, timeout), timeout=window)]
                      for h, per_host in calls.items()}
        return [Step(background={}, foreground=foreground, timeout=window + 10)]

    # --- judging (pure) ---

    def judge(self, facts: Mapping[str, Facts], outcomes: Sequence[StepOutcome], ctx: EvalContext) -> list[Finding]:
        check = self.name
        findings: list[Finding] = []
        for host in facts:
            problem = host_problem(check, host, facts[host])
            if problem is not None:
                findings.append(problem)
                continue
            for dev, device in facts[host].get("devices", {}).items():
                if device.get("ip") is None:
                    findings.append(finding(check, host, Status.ERROR,
                                            f"device {dev} not tested: {device.get('error')}",
                                            device=int(dev), observed=str(device.get("error")),
                                            expected="a device IP", remedy=f"hccn_tool -i {dev} -ip -g; "
                                            f"grep _{dev}= /etc/hccn.conf"))
        plan, pattern = self.plan(facts, ctx)
        if not plan:
            if not findings:
                findings.append(finding(check, None, Status.SKIP,
                                        "nothing to test (fewer than 2 hosts with a device IP)"))
            return findings
        timeout = float(ctx.params["ping_timeout"])
        printed: dict[str, dict[str, dict[str, tuple[str, int | None]]]] = {}
        for outcome in outcomes:
            for host, outs in outcome.foreground.items():
                printed[host] = parse_calls(outs.get("ping", ProbeOutput("")).stdout).devices
        results: dict[tuple[str, str, int], tuple[str, int, int]] = {}
        for source, target, dev in plan:
            ip = _device_ip(facts[target], dev) or ""
            out = printed.get(source, {}).get(str(dev), {}).get(ip)
            results[(source, target, dev)] = (ping_result(out[0], out[1], timeout) if out is not None
                                              else ("error: the ping did not run", 0, 0))
        # Devices that no peer reaches (2 or more pairs, all without reply): blamed once.
        pairs_of: dict[tuple[str, int], list[str]] = defaultdict(list)
        for (source, target, dev), (result, _, _) in results.items():
            pairs_of[(source, dev)].append(result)
            pairs_of[(target, dev)].append(result)
        isolated = {key for key, got in pairs_of.items() if len(got) >= 2 and all(r == "no reply" for r in got)}
        problems: set[str] = set()
        for host, dev in sorted(isolated):
            own_ip = _device_ip(facts[host], dev)
            peers = sorted({t if s == host else s for (s, t, d) in results if d == dev and host in (s, t)})
            problems.add(host)
            findings.append(finding(
                check, host, Status.FAIL,
                f"device {dev} ({own_ip}) on {host} reaches none of its {len(peers)} peers "
                f"(device {dev} on {', '.join(peers)}): its RoCE port, cable or switch port is down or "
                "misconfigured", observed=f"0/{len(peers)} peers answer", expected="every peer answers", device=dev,
                remedy=f"hccn_tool -i {dev} -link -g; hccn_tool -i {dev} -net_health -g; hccn_tool -i {dev} -ip -g"))
        for (source, target, dev), (result, sent, received) in sorted(results.items()):
            if result == "ok" or (source, dev) in isolated or (target, dev) in isolated:
                continue
            peer_ip = _device_ip(facts[target], dev)
            problems.add(source)
            status = Status.WARN if result == "loss" else Status.ERROR if result.startswith("error") else Status.FAIL
            what = (f"lost {sent - received} of {sent} packets" if result == "loss" else
                    "no reply" if result == "no reply" else result)
            findings.append(finding(
                check, source, status,
                f"device {dev} on {source} -> device {dev} on {target} ({peer_ip}): {what}"
                + ("; HCCL traffic between these two NPUs will time out (EI0006)" if result == "no reply" else ""),
                observed=f"{received}/{sent} received" if sent else result, expected="every ping answered",
                peer=target, device=dev, peer_device=dev,
                remedy=f"hccn_tool -i {dev} -ping -g address {peer_ip}  # on {source}; then check both ports' "
                       "links, the switch VLAN/routes between the two device segments, and -netdetect"))
        involved: dict[str, int] = defaultdict(int)
        for source, target, _ in plan:
            involved[source] += 1
            involved[target] += 1
        for host in facts:
            if involved.get(host) and host not in problems:
                findings.append(finding(check, host, Status.PASS,
                                        f"all {involved[host]} pings involving {host}'s devices answered "
                                        f"({pattern})"))
        return findings


def _device_ip(facts: Facts, dev: int) -> str | None:
    device = facts.get("devices", {}).get(str(dev)) or {}
    ip = device.get("ip") if isinstance(device, dict) else None
    return ip if isinstance(ip, str) else None
