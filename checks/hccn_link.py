"""hccn.link: the health of every NPU's RoCE port, read with ``hccn_tool`` on each device.

Per device N (0..devices_per_host-1) one batched script runs ``hccn_tool -i N -link -g``, ``-net_health -g``,
``-lldp -g``, ``-tls -g``, ``-optical -g``, ``-mtu -g`` and ``-speed -g`` (devices in parallel, each call under
``timeout``).
``hccn_tool`` is looked up on PATH and in ``/usr/local/Ascend/driver/tools`` (often not on PATH).
A second script reads each port's history, ``-link_stat -g`` (preflight.ascend.link_stat), with the host's
``/proc/uptime``: a LINK DOWN in the last ``flap_window_h`` hours (24) while the node was up (more than 15
minutes after boot: a reboot records its own) warns, even when the link is UP now: a port that flaps aborts HCCL
jobs mid-run (RoCE CQE errors, EI0013).

Rules: link UP; net_health Success or Init (MindCluster's npu-exporter counts both as healthy; ``Detect
ip set``, no netdetect address configured, warns with the command that sets one); an LLDP neighbour seen
(warn when not: see ``LLDP_WHY``); TLS switch the same on every device of the cluster (both ends of a
link must agree); optical module present, each lane's Tx/Rx power and its temperature within the module's own
thresholds (preflight.ascend.optical); MTU the same on every device of the cluster; port speed
(``Speed: 200000 Mb/s``; ``Speed: Unknown!`` while the link is down, per hicann/driver's tool_ext.c) the same
on every device: a port slower than the cluster's majority fails (HCCL's ring runs at its slowest link), one
faster warns (mixed generations). The cluster majority decides TLS, MTU and speed; without one every device
fails (speed: warns).
``The command is not supported on this product.`` (stdout, exit status 13: the product lacks the feature, e.g.
-tls/-optical/-mtu) and ``... on this optical media.`` are a ``skip`` for that op on that host, recorded in the
device's ``unsupported`` list. A non-empty output in which nothing is recognised is an ``error`` quoting its first
line (``unrecognised output: ...``), never a pass or a fail; so is an unreadable port history.

>>> parse_link_device({"link": ("link status: DOWN", 0)}, ["link"])["link"]
'DOWN'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from preflight.ascend.hccn_calls import hccn_script, host_problem, tool_facts
from preflight.ascend.hccn_tool import CALL_TIMEOUT, call_error, unread, unsupported
from preflight.ascend.link_stat import parse_link_stat
from preflight.ascend.optical import optical_problems, parse_optical
from preflight.checks.base import *

OPS = ("link", "net_health", "lldp", "tls", "optical", "mtu", "speed")

def link_probe_calls(devices: int) -> dict[int, list[tuple[str, list[str]]]]:
    """The reads of hccn.link (one per op of OPS) for devices 0..devices-1."""
    return {dev: [(op, [f"-{op}", "-g"]) for op in OPS] for dev in range(max(0, devices))}


def _lldp(out: str) -> dict[str, str | None] | None:
    """Switch name, port and chassis MAC from ``-lldp -g`` TLV blocks; None when no TLV is there."""
    found: dict[str, str | None] = {"system": None, "port": None, "chassis": None}
    tlv = ""
    seen = False
    for raw in out.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.endswith("TLV"):
            tlv, seen = line.lower(), True
            continue
        key, sep, value = line.partition(":")
        if tlv.startswith("system name") and found["system"] is None:
            found["system"] = line
        elif tlv.startswith("port id") and found["port"] is None:
            found["port"] = value.strip() if sep else line
        elif tlv.startswith("chassis id") and found["chassis"] is None:
            found["chassis"] = value.strip() if sep else line
    return found if seen else None


_VALUE = {
    "link": re.compile(r"link\s+status\s*:\s*(\S+)", re.I),
    "net_health": re.compile(r"net\s+health\s+status\s*:\s*(\S.*?)\s*$", re.I | re.M),
    "tls": re.compile(r"tls\s+switch\s*\[\s*(\d+)\s*\]", re.I),
    "optical": re.compile(r"^\s*present\s*:\s*(\S.*?)\s*$", re.I | re.M),
    "mtu": re.compile(r"mtu\s*:\s*(\d+)", re.I),
    "speed": re.compile(r"speed\s*:\s*(\d+)\s*mb/s", re.I),
}
SPEED_UNKNOWN = "unknown!"  # `-speed -g` on a port whose link is down (npu-exporter's hccn_tool.go)


HEALTHY = ("Success", "Init")  # net_health values MindCluster's npu-exporter counts as healthy
NO_DETECT_IP = "Detect ip set"


def parse_link_device(outputs: Mapping[str, tuple[str, int | None]], ops: Sequence[str] = OPS) -> dict[str, Any]:
    """One device's facts: a value per op (None when unknown) and ``errors``: op -> why it is unknown.

    ``unsupported`` (present only when some op answered so) lists the ops the product does not support.

    >>> parse_link_device({"tls": ("The command is not supported on this product.", 13)}, ["tls"])
    {'tls': None, 'unsupported': ['tls'], 'errors': {}}
    """
    device: dict[str, Any] = {op: None for op in ops}
    errors: dict[str, str] = {}
    for op in ops:
        if op not in outputs:
            errors[op] = "the call did not run (output cut short)"
            continue
        out, rc = outputs[op]
        why = call_error(out, rc)
        if unsupported(out):
            device.setdefault("unsupported", []).append(op)  # the product or module lacks the feature: nothing to judge
        elif why is not None:
            errors[op] = why
        elif op == "speed" and SPEED_UNKNOWN in out.lower():
            device["speed"] = None  # no speed while the link is down: hccn.link.up says why
        elif op == "lldp":
            device["lldp"] = _lldp(out)
            if device["lldp"] is None and out.strip():
                errors[op] = unread(out)
        elif (match := _VALUE[op].search(out)) is None:
            errors[op] = unread(out)
        elif op == "link":
            device[op] = match[1].upper()
        elif op == "optical":
            device[op] = " ".join(match[1].lower().split())
            device["optical_power"] = parse_optical(out)
        elif op in ("tls", "mtu", "speed"):
            device[op] = int(match[1])
        else:
            device[op] = match[1]
    device["errors"] = errors
    return device


# net_health values (hccn_tool -net_health -g) -> what they mean for the device's RoCE port.
NET_HEALTH = {
    "Socket fail": "the detection socket could not be set up: the device IP or the netdetect address is not "
                   "configured properly",
    "Receive timeout": "the netdetect address did not answer: the link, the switch or the detect address is down",
    "Unreachable": "the netdetect address is unreachable: no route from the device IP (wrong segment or gateway)",
    "Time exceeded": "the probe's TTL ran out: a routing loop between the device and the netdetect address",
    "Fault": "the port is faulty",
    "Init": "detection has not completed yet (just configured or still initialising)",
    "Thread error": "the driver's detection thread failed",
    "Detect ip set": "no netdetect address is set, so the port's health is not being checked",
    "Unknown": "the driver could not determine the port's health",
}

LLDP_WHY = ("no LLDP neighbour: the switch port is not seen (LLDP disabled on the switch, or the cable ends "
            "somewhere else); warn, not fail, because the link itself is judged by hccn.link.up and "
            "hccn.link.net_health and many fabrics run with LLDP off")


def _devices_text(devices: Sequence[int]) -> str:
    return ", ".join(str(d) for d in devices)


class HccnLinkCheck(Check):
    ids = ("hccn.link", "hccn.link.up", "hccn.link.net_health", "hccn.link.lldp", "hccn.link.tls",
           "hccn.link.optical", "hccn.link.mtu", "hccn.link.speed", "hccn.link.flaps")
    params = {"flap_window_h": 24}
    accelerators = frozenset({"npu"})
    not_applicable = "hccn_tool checks apply to Ascend NPUs only"
    summary = ("NPU RoCE ports (hccn_tool): link UP, net_health Success, LLDP neighbour, optical module present, "
               "TLS switch, MTU and port speed consistent across the cluster, no link flap in the last day")
    order = 72

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        devices = max(1, cluster.devices_per_host)
        probe = Probe("link", hccn_script(link_probe_calls(devices)), timeout=CALL_TIMEOUT * len(OPS) + 10)
        history = {dev: [("link_stat", ["-link_stat", "-g"])] for dev in range(devices)}
        return [probe, Probe("link_stat", hccn_script(history), timeout=CALL_TIMEOUT + 10),
                Probe("uptime", "cat /proc/uptime", timeout=5)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        main = outputs.get("link")
        if main is None and "link_stat" not in outputs:
            return {"tool": None, "looked": None, "error": None, "devices": {}, "not_run": True}
        facts, calls = tool_facts(main if main is not None else outputs["link_stat"])
        devices = {dev: parse_link_device(ops) for dev, ops in calls.devices.items()} if main is not None else {}
        facts["devices"] = dict(sorted(devices.items(), key=lambda item: int(item[0])))
        facts["flaps"] = parse_flaps(outputs["link_stat"]) if "link_stat" in outputs else None
        uptime = outputs.get("uptime", ProbeOutput("")).stdout.split()
        facts["uptime_s"] = int(float(uptime[0])) if uptime and _number(uptime[0]) else None
        return facts

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        findings: list[Finding] = []
        usable: dict[str, dict[str, dict[str, Any]]] = {}
        for host, host_facts in facts.items():
            problem = host_problem(self.name, host, host_facts)
            if problem is None and not host_facts.get("devices"):
                problem = finding(self.name, host, Status.ERROR, "hccn_tool printed nothing for any "
                                  "device", expected=f"{ctx.cluster.devices_per_host} devices")
            if problem is not None:
                findings.append(problem)
                continue
            usable[host] = {}
            for dev, device in host_facts["devices"].items():
                errors = device.get("errors") or {}
                tried = [op for op in OPS if op in errors or device.get(op) is not None]
                if len(tried) >= 2 and len(errors) == len(tried) and len(set(errors.values())) == 1:  # all failed alike
                    findings.append(finding(self.name, host, Status.ERROR,
                                            f"device {dev}: every hccn_tool call failed: "
                                            f"{next(iter(errors.values()))}", device=int(dev),
                                            remedy=f"npu-smi info; hccn_tool -i {dev} -link -g"))
                else:
                    usable[host][dev] = device
        majors = {op: _cluster_majority(usable, op) for op in ("tls", "mtu", "speed")}
        for host, devices in usable.items():
            findings += self._judge_host(host, devices, majors)
            flaps = {dev: stat for dev, stat in (facts[host].get("flaps") or {}).items() if dev in devices}
            if flaps:  # devices whose every call failed are reported once, above
                findings += _judge_flaps(f"{self.name}.flaps", host, flaps, facts[host].get("uptime_s"),
                                         float(ctx.params.get("flap_window_h", 24)))
        return findings

    def _judge_host(self, host: str, devices: Mapping[str, dict[str, Any]],
                    majors: Mapping[str, tuple[Any, bool]]) -> list[Finding]:
        out: list[Finding] = []
        for op, suffix in (("link", "up"), ("net_health", "net_health"), ("lldp", "lldp"), ("tls", "tls"),
                           ("optical", "optical"), ("mtu", "mtu"), ("speed", "speed")):
            check = f"{self.name}.{suffix}"
            bad: list[Finding] = []
            lacking = sorted(int(d) for d, device in devices.items() if op in (device.get("unsupported") or []))
            if lacking:
                out.append(finding(check, host, Status.SKIP, f"`hccn_tool -i N -{op} -g` on {host} answers "
                                   f"'The command is not supported on this product' (or '... optical media') "
                                   f"({'device' if len(lacking) == 1 else 'devices'} {_devices_text(lacking)}): the "
                                   "product or its optical module lacks the feature, nothing to check",
                                   observed="not supported"))
            for dev, device in devices.items():
                n = int(dev)
                if int(dev) in lacking:
                    continue
                error = (device.get("errors") or {}).get(op)
                if error is not None:
                    bad.append(finding(check, host, Status.ERROR, f"device {n}: could not read "
                                       f"`hccn_tool -i {n} -{op} -g`: {error}", device=n,
                                       remedy=f"hccn_tool -i {n} -{op} -g"))
                    continue
                if op == "speed" and device.get(op) is None:
                    continue  # link down: no speed to compare (hccn.link.up fails it)
                problem = _judge_op(check, host, n, op, device.get(op), majors, device.get("optical_power"))
                if problem is not None:
                    bad.append(problem)
            unread = [d for d in devices.values() if op == "speed" and d.get("speed") is None
                      and "speed" not in (d.get("errors") or {}) and op not in (d.get("unsupported") or [])]
            if bad:
                out += bad
            elif len(lacking) + len(unread) < len(devices):
                text = _pass_text(op, devices, majors)
                out.append(finding(check, host, Status.PASS, f"{text}"))
        return out


def _cluster_majority(usable: Mapping[str, Mapping[str, Mapping[str, Any]]], op: str) -> tuple[Any, bool]:
    values = {f"{host}/{dev}": device.get(op) for host, devices in usable.items()
              for dev, device in devices.items() if device.get(op) is not None}
    return majority(values)


def _judge_op(check: str, host: str, n: int, op: str, value: Any,
              majors: Mapping[str, tuple[Any, bool]], power: dict[str, Any] | None = None) -> Finding | None:
    if op == "link" and value != "UP":
        return finding(check, host, Status.FAIL,
                       f"device {n} link is {value}: HCCL cannot use this NPU's RoCE port (cable, optical "
                       "module or switch port down)", observed=str(value), expected="UP", device=n,
                       remedy=f"hccn_tool -i {n} -link_stat -g; hccn_tool -i {n} -optical -g  # then check the cable "
                              "and the switch port")
    if op == "net_health" and value == NO_DETECT_IP:
        return finding(check, host, Status.WARN, f"device {n} net health is '{value}': "
                       f"{NET_HEALTH[NO_DETECT_IP]} (not a link failure: hccn.link.up judges the link)",
                       observed=str(value), expected="Success (a netdetect address set)", device=n,
                       remedy=f"hccn_tool -i {n} -netdetect -s address <ip>  # the switch gateway or a peer device "
                              f"IP in the device's segment; then hccn_tool -i {n} -net_health -g")
    if op == "net_health" and value not in HEALTHY:
        meaning = next((text for name, text in NET_HEALTH.items() if str(value).lower().startswith(name.lower())),
                       "an unknown health value")  # the driver's "Socket fail" reads "Socket failed" in real output
        return finding(check, host, Status.FAIL, f"device {n} net health is '{value}': {meaning}",
                       observed=str(value), expected="Success", device=n,
                       remedy=f"hccn_tool -i {n} -netdetect -g; hccn_tool -i {n} -netdetect -s address "
                              f"<the switch gateway or a peer device IP>; hccn_tool -i {n} -net_health -g")
    if op == "lldp" and value is None:
        return finding(check, host, Status.WARN, f"device {n}: {LLDP_WHY}", observed="no neighbour",
                       expected="an LLDP neighbour (switch name and port)", device=n,
                       remedy=f"hccn_tool -i {n} -lldp -g  # enable LLDP on the switch port (e.g. `lldp enable`)")
    if op == "optical" and value != "present":
        return finding(check, host, Status.FAIL,
                       f"device {n} optical module is '{value}': the port has no working transceiver",
                       observed=str(value), expected="present", device=n,
                       remedy=f"hccn_tool -i {n} -optical -g  # reseat or replace the optical module")
    if op == "optical" and (out_of_range := optical_problems(power)):
        return finding(check, host, Status.FAIL,
                       f"device {n} optical module reads outside its own thresholds "
                       f"({'; '.join(out_of_range)}): "
                       + ("a dirty or damaged fiber, or a failing module here or at the far end"
                          if any("power" in p for p in out_of_range) else "the module overheats (airflow, or failing)")
                       + "; the link drops packets or flaps under load", observed="; ".join(out_of_range),
                       expected="every lane's Tx/Rx power and the temperature within the module's thresholds",
                       device=n, remedy=f"hccn_tool -i {n} -optical -g  # clean or replace the fiber, reseat or "
                                        "replace the module (and check the switch side's optics)")
    if op == "speed":
        return _judge_speed(check, host, n, int(value), majors["speed"])
    if op in ("tls", "mtu"):
        common, strict = majors[op]
        if strict and value == common:
            return None
        why = "differs from the rest of the cluster" if strict else "the cluster has no majority value"
        if op == "tls":
            return finding(check, host, Status.FAIL,
                           f"device {n} TLS switch is {value} ({'enabled' if value else 'disabled'}): {why}; "
                           "the TLS switch must match on both ends of a link or HCCL link setup fails",
                           observed=str(value), expected=f"{common} (cluster majority)" if strict else "one value",
                           device=n, remedy=f"hccn_tool -i {n} -tls -s enable {common if strict else 0}")
        return finding(check, host, Status.FAIL,
                       f"device {n} MTU is {value}: {why}; mismatched MTUs drop large RoCE frames",
                       observed=str(value), expected=f"{common} (cluster majority)" if strict else "one value",
                       device=n, remedy=f"hccn_tool -i {n} -mtu -s value {common if strict else 9000}")
    return None


def _judge_speed(check: str, host: str, n: int, value: int, major: tuple[Any, bool]) -> Finding | None:
    """A port slower than the cluster's majority fails, a faster one warns; no majority warns."""
    common, strict = major
    if strict and value == common:
        return None
    remedy = (f"hccn_tool -i {n} -speed -g; hccn_tool -i {n} -optical -g  # a port that trained below its rate: "
              "reseat or replace the optical module or cable, check the switch port's configured speed")
    if not strict:
        return finding(check, host, Status.WARN, f"device {n} port speed {value} Mb/s: the cluster's "
                       "ports run at different speeds with no majority; HCCL's ring runs at its slowest link",
                       observed=f"{value} Mb/s", expected="one speed", device=n, remedy=remedy)
    if value < common:
        return finding(check, host, Status.FAIL, f"device {n} port runs at {value} Mb/s, the rest of the "
                       f"cluster at {common} Mb/s: every collective through it runs at the slower rate",
                       observed=f"{value} Mb/s", expected=f"{common} Mb/s (cluster majority)", device=n, remedy=remedy)
    return finding(check, host, Status.WARN, f"device {n} port runs at {value} Mb/s, faster than the "
                   f"cluster's {common} Mb/s (mixed port generations: the slower ports set the pace)",
                   observed=f"{value} Mb/s", expected=f"{common} Mb/s (cluster majority)", device=n)


def _pass_text(op: str, devices: Mapping[str, Mapping[str, Any]], majors: Mapping[str, tuple[Any, bool]]) -> str:
    ids = ("device " if len(devices) == 1 else "devices ") + _devices_text([int(d) for d in devices])
    if op == "link":
        return f"{ids}: link UP"
    if op == "net_health":
        values = sorted({str(d.get("net_health")) for d in devices.values() if d.get("net_health")})
        return f"{ids}: net health {' / '.join(values) or 'Success'}" + (
            " (Init: detection not finished yet, healthy as the NPU exporter counts it)" if "Init" in values else "")
    if op == "lldp":
        seen = sorted({f"{d['lldp'].get('system')} {d['lldp'].get('port')}" for d in devices.values() if d.get("lldp")})
        return f"{ids}: LLDP neighbour seen ({'; '.join(seen)})"
    if op == "optical":
        return f"{ids}: optical module present" + (
            ", power and temperature within its thresholds"
            if any((d.get("optical_power") or {}).get("thresholds") for d in devices.values()) else "")
    if op == "tls":
        return f"{ids}: TLS switch {majors['tls'][0]}, as on the rest of the cluster"
    if op == "speed":
        read = [int(d) for d, device in devices.items() if device.get("speed") is not None]
        return (f"{'device' if len(read) == 1 else 'devices'} {_devices_text(read)}: port speed "
                f"{majors['speed'][0]} Mb/s, as on the rest of the cluster")
    return f"{ids}: MTU {majors['mtu'][0]}, as on the rest of the cluster"


BOOT_GRACE_S = 900  # link changes in the first 15 minutes after boot are the boot's own


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def parse_flaps(output: ProbeOutput) -> dict[str, Any]:
    """Device -> its parsed ``-link_stat -g`` (preflight.ascend.link_stat), ``{"unsupported": True}`` or
    ``{"error": why}``."""
    _, calls = tool_facts(output)
    found: dict[str, Any] = {}
    for dev, ops in sorted(calls.devices.items(), key=lambda item: int(item[0])):
        out, rc = ops.get("link_stat", ("", None))
        why = call_error(out, rc)
        if unsupported(out):
            found[dev] = {"unsupported": True}
        elif why is not None:
            found[dev] = {"error": why}
        else:
            found[dev] = parse_link_stat(out) or {"error": unread(out)}
    return found


def _ago(seconds: int) -> str:
    """30 min, 12.9 h."""
    return f"{max(0, seconds) // 60} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def _judge_flaps(check: str, host: str, flaps: Mapping[str, Any], uptime: int | None,
                 window_h: float) -> list[Finding]:
    """An error for each port whose history could not be read; then warn for ports that went down within the
    window while the node was up, else pass (skip when no history was read)."""
    errors = [finding(check, host, Status.ERROR, f"device {dev}: could not read `hccn_tool -i {dev} "
                      f"-link_stat -g`: {stat['error']}", device=int(dev), observed=str(stat["error"]),
                      remedy=f"hccn_tool -i {dev} -link_stat -g")
              for dev, stat in flaps.items() if isinstance(stat, dict) and stat.get("error")]
    history = _judge_history(check, host, flaps, uptime, window_h)
    return errors + ([] if errors and history.status == Status.SKIP else [history])


def link_events(flaps: Mapping[str, Any]) -> tuple[Event, ...]:
    """Each port's link down counter (its link up counter where the driver prints no down count), for "new since
    the last run" (docs/history.md); ports without a counter are left out.

    >>> link_events({"0": {"up_count": 2, "down_count": 1, "downs": [], "last_down": "Sun Oct  5 10:13:50 2025"},
    ...              "1": {"up_count": 3, "down_count": None, "downs": None, "last_down": None}, "2": {"error": "x"}})
    (Event(key='device 0 link down', count=1, last='Sun Oct  5 10:13:50 2025', new=None), \
Event(key='device 1 link up', count=3, last=None, new=None))
    """
    found = []
    for dev, stat in sorted(flaps.items(), key=lambda item: int(item[0])):
        if not isinstance(stat, dict):
            continue
        for kind in ("down", "up"):
            if stat.get(f"{kind}_count") is not None:
                found.append(Event(f"device {dev} link {kind}", int(stat[f"{kind}_count"]), stat.get("last_down")))
                break
    return tuple(found)


def _judge_history(check: str, host: str, flaps: Mapping[str, Any], uptime: int | None, window_h: float) -> Finding:
    return replace(_judge_window(check, host, flaps, uptime, window_h), events=link_events(flaps) or None)


def _judge_window(check: str, host: str, flaps: Mapping[str, Any], uptime: int | None, window_h: float) -> Finding:
    window = window_h * 3600
    recent: list[str] = []
    read: list[int] = []
    for dev, stat in flaps.items():
        downs = stat.get("downs") if isinstance(stat, dict) else None
        if downs is None:
            continue
        read.append(int(dev))
        since_boot = uptime - BOOT_GRACE_S if uptime is not None else window
        mine = [age for age in downs if age <= min(window, since_boot)]
        if mine:
            recent.append(f"device {dev}: {len(mine)} link down(s) in the last {window_h:g} h (last "
                          f"{stat.get('last_down')}, {_ago(min(mine))} before the port's clock now)")
    if recent:
        first = recent[0].split(":")[0].removeprefix("device ")
        return finding(check, host, Status.WARN,
                       f"RoCE ports of {host} went down while the node was up ({'; '.join(recent)}): a "
                       "port that flaps aborts HCCL jobs mid-run (RoCE CQE errors, EI0013) even while it is UP now",
                       observed="; ".join(recent), expected=f"no link down in the last {window_h:g} h",
                       device=int(first) if len(recent) == 1 else None,
                       remedy=f"hccn_tool -i {first} -link_stat -g; hccn_tool -i {first} -optical -g  # check the "
                              "optical module, the cable and the switch port's log for the same times")
    undated = [int(d) for d, stat in flaps.items() if isinstance(stat, dict) and "up_count" in stat
               and stat.get("downs") is None]
    if not read:
        why = (f"{'device' if len(undated) == 1 else 'devices'} {_devices_text(sorted(undated))}: the history has "
               "no `current time` line (Ascend 950's table), so the age of its link downs cannot be judged"
               if undated else "no port history readable")
        return finding(check, host, Status.SKIP, f"{why} on {host} (hccn_tool -i N -link_stat -g)")
    return finding(check, host, Status.PASS,
                   f"{'device' if len(read) == 1 else 'devices'} {_devices_text(sorted(read))}: no link down "
                   f"in the last {window_h:g} h while the node was up")
