"""hccn.ip: every NPU device has an IP and netmask, recorded in /etc/hccn.conf, unique in the cluster.

HCCL links the devices of different servers through the NPUs' own NICs, configured with
``hccn_tool -i N -ip -s address X netmask M`` (which also records them in ``/etc/hccn.conf``).
A device without an IP, two devices with the same IP anywhere in the cluster, a broken netmask, a
mix of IPv4 and IPv6 or a gateway outside the device's segment make HCCL's link setup fail or hang
(EI0006). Read per device with ``hccn_tool -i N -ip -g`` and ``-gateway -g`` (all devices in the one
SSH round trip), plus ``cat /etc/hccn.conf``.

``hccn_tool`` is often not on PATH: it is looked up there and at /usr/local/Ascend/driver/tools.

>>> parse_ip(ProbeOutput("ipaddr:192.161.200.10\\nnetmask:255.255.255.0\\n"))
{'state': 'ok', 'ip': '192.161.200.10', 'netmask': '255.255.255.0', 'error': None}
>>> parse_ip(ProbeOutput("", "Get ipconf failed, because no ip was preset there!\\n", 13))["state"]
'no_ip'
"""

from __future__ import annotations

import re
import shlex
from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

from preflight.ascend.device_ip import IPAddress, address, network, prefix_length, set_ip_command, usable_devices
from preflight.ascend.hccn_tool import hccn_tool_command, known_error, parse_ip, why_unread
from preflight.checks.base import *
from preflight.tools.ascend import HCCN_TOOL
from preflight.tools.common import error_text

CONF = "/etc/hccn.conf"
MAX_DEVICES = 64  # more devices than any server has: the probe list stays bounded



def device_ids(cluster: ClusterSpec) -> list[int]:
    """The device ids probed on every host: 0 .. devices_per_host - 1."""
    return list(range(max(1, min(int(cluster.devices_per_host), MAX_DEVICES))))


def parse_gateway(output: ProbeOutput) -> dict[str, Any]:
    """``hccn_tool -i N -gateway -g`` -> {gateway, gateway_error}; none preset is not an error.

    >>> parse_gateway(ProbeOutput("default gateway:29.1.0.1, Iface:eth3\\n"))
    {'gateway': '29.1.0.1', 'gateway_error': None}
    """
    text = output.stderr + "\n" + output.stdout
    if "no gateway was preset" in text.lower():
        return {"gateway": None, "gateway_error": None}
    match = re.search(r"default\s+gateway\s*:\s*([^\s,]+)", output.stdout, re.I)
    if output.ok and match:
        return {"gateway": match.group(1), "gateway_error": None}
    if "not supported" in text.lower():
        return {"gateway": None, "gateway_error": None}  # products without -gateway: nothing to judge
    return {"gateway": None, "gateway_error": why_unread(output)}


def parse_conf(output: ProbeOutput) -> tuple[dict[str, dict[str, str]] | None, str | None]:
    """``cat /etc/hccn.conf`` -> (device id -> {address, netmask, gateway}, error); (None, None) when absent.

    >>> parse_conf(ProbeOutput("# c\\naddress_0=29.1.137.205\\n netmask_0 = 255.255.0.0\\nmtu_0=\\n"))
    ({'0': {'address': '29.1.137.205', 'netmask': '255.255.0.0'}}, None)
    """
    if not output.ok:
        if "no such file" in output.stderr.lower():
            return None, None
        return None, error_text(output)
    devices: dict[str, dict[str, str]] = {}
    for line in output.stdout.splitlines():
        line = line.split("#", 1)[0]
        key, sep, value = line.partition("=")
        match = re.fullmatch(r"(address|netmask|gateway)_(\d+)", key.strip())
        if sep and match and value.strip():
            devices.setdefault(str(int(match.group(2))), {})[match.group(1)] = value.strip()
    return devices, None


class HccnIpCheck(Check):
    ids = ("hccn.ip",)
    accelerators = frozenset({"npu"})
    not_applicable = "hccn_tool checks apply to Ascend NPUs only"
    order = 60
    summary = ("NPU device IPs (hccn_tool -ip -g): set, matching /etc/hccn.conf, unique in the cluster, "
               "contiguous netmask, one IP family, gateway in the segment")

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        probes = [HCCN_TOOL.lookup(), Probe("conf", f"cat {CONF}", timeout=5)]
        for device in device_ids(cluster):
            probes.append(Probe(f"ip_{device}", hccn_tool_command(device, "-ip", "-g"), timeout=10))
            probes.append(Probe(f"gateway_{device}", hccn_tool_command(device, "-gateway", "-g"), timeout=10))
        return probes

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        path = HCCN_TOOL.found(outputs)
        conf, conf_error = parse_conf(outputs["conf"]) if "conf" in outputs else (None, None)
        ids = sorted(int(k[3:]) for k in outputs if re.fullmatch(r"ip_\d+", k))
        devices = []
        for device in ids:
            entry: dict[str, Any] = {"id": device, **parse_ip(outputs[f"ip_{device}"])}
            gateway = outputs.get(f"gateway_{device}")
            entry.update(parse_gateway(gateway) if gateway else {"gateway": None, "gateway_error": None})
            devices.append(entry)
        return {"tool": path, "devices": devices if path else [], "conf": conf, "conf_error": conf_error}

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        check = self.name
        findings: list[Finding] = []
        usable = {host: usable_devices(f) for host, f in facts.items()}
        findings += _duplicates(usable)
        findings += _families(usable)
        for host in sorted(facts):
            findings += _judge_host(host, facts[host])
        problem_hosts = {f.host for f in findings}
        for host in sorted(set(facts) - problem_hosts):
            devices = usable[host]
            shown = ", ".join(f"{d['id']}:{d['ip']}/{prefix_length(d['netmask'])}" for d in devices)
            findings.append(finding(check, host, Status.PASS, f"{len(devices)} devices with unique IPs "
                                    f"matching {CONF}: {shown}", observed=shown))
        return findings


def _judge_host(host: str, host_facts: Facts) -> list[Finding]:
    check = "hccn.ip"
    if not host_facts.get("tool"):
        return [tool_missing(check, host, HCCN_TOOL)]
    findings: list[Finding] = []
    conf: dict[str, dict[str, str]] | None = host_facts.get("conf")
    if host_facts.get("conf_error"):
        findings.append(finding(check, host, Status.ERROR, f"could not read {CONF}: "
                                f"{host_facts['conf_error']}", observed=str(host_facts["conf_error"])))
    elif conf is None:
        findings.append(finding(
            check, host, Status.WARN, f"{CONF} not found on {host}: the device IPs are not recorded "
            "there, so they are not restored after a reboot", observed=f"{CONF} missing",
            expected=f"address_N / netmask_N lines in {CONF}",
            remedy="hccn_tool -i N -ip -s address X netmask M for every device (it writes hccn.conf)"))
    for device in host_facts.get("devices") or []:
        if isinstance(device, dict):
            findings += _judge_device(host, device, conf if isinstance(conf, dict) else None)
    return findings


def _judge_device(host: str, device: dict[str, Any], conf: dict[str, dict[str, str]] | None) -> list[Finding]:
    check = "hccn.ip"
    dev = int(device.get("id", -1))
    planned = (conf or {}).get(str(dev), {})
    state = device.get("state")
    if state == "no_ip":
        want_ip, want_mask = planned.get("address"), planned.get("netmask")
        remedy = (set_ip_command(dev, want_ip, want_mask) if want_ip and want_mask else
                  f"hccn_tool -i {dev} -ip -s address <address> netmask <netmask>  # see hccn.subnet's plan")
        return [finding(check, host, Status.FAIL, f"device {dev} on {host} has no IP (hccn_tool: no ip "
                        "was preset): HCCL cannot use this NPU's network port", device=dev,
                        observed="no IP", expected=f"{want_ip} netmask {want_mask} (as in {CONF})"
                        if want_ip and want_mask else "an IP and netmask", remedy=remedy)]
    if state != "ok":
        error = str(device.get("error") or "unreadable output")
        return [finding(check, host, Status.ERROR, f"could not read device {dev}'s IP on {host}: "
                        f"{_explained(error)}", device=dev, observed=error,
                        remedy=f"hccn_tool -i {dev} -ip -g  # run it by hand; npu-smi info lists the device ids")]
    ip, netmask = str(device.get("ip")), str(device.get("netmask"))
    addr, segment = address(ip), network(ip, netmask)
    findings: list[Finding] = []
    if addr is None:
        return [finding(check, host, Status.ERROR, f"device {dev} on {host} reports an IP that does not "
                        f"parse: {ip!r}", device=dev, observed=ip)]
    if segment is None:
        findings.append(finding(check, host, Status.FAIL, f"device {dev} on {host} has netmask {netmask}, "
                                "not a contiguous mask: routes and the segment rules cannot work", device=dev,
                                observed=f"{ip} netmask {netmask}",
                                expected="a contiguous netmask (e.g. 255.255.255.0)",
                                remedy=set_ip_command(dev, ip, "255.255.255.0")))
    for key, live in (("address", ip), ("netmask", netmask), ("gateway", device.get("gateway"))):
        recorded = planned.get(key)
        if conf is None or (key == "gateway" and device.get("gateway_error")) or (recorded is None and live is None):
            continue
        if recorded is None:
            findings.append(finding(
                check, host, Status.WARN, f"{CONF} on {host} has no {key}_{dev} for device {dev} (live "
                f"{key} {live}): it is not restored after a reboot", device=dev, observed=f"{key}_{dev} missing",
                expected=f"{key}_{dev}={live}", remedy=_set_command(dev, key, str(live), ip, netmask)))
        elif not _same(key, recorded, live):
            findings.append(finding(
                check, host, Status.FAIL, f"device {dev} on {host}: live {key} {live or '(none)'} but "
                f"{CONF} has {key}_{dev}={recorded}: after a reboot (or for tools reading the file) the device "
                "gets another setting", device=dev, observed=f"live {live or '(none)'}; {CONF} {recorded}",
                expected="the same value in both",
                remedy=_set_command(dev, key, str(live or recorded), ip, netmask)))
    gateway = device.get("gateway")
    gateway_addr = address(gateway)
    if gateway and segment is not None and (gateway_addr is None or gateway_addr not in segment):
        findings.append(finding(
            check, host, Status.FAIL, f"device {dev} on {host} has gateway {gateway}, outside its segment "
            f"{segment}: traffic to other segments cannot be routed", device=dev, observed=f"{ip}/{segment.prefixlen} "
            f"gateway {gateway}", expected=f"a gateway in {segment}",
            remedy=f"hccn_tool -i {dev} -gateway -s gateway <gateway in {segment}>"))
    if device.get("gateway_error"):
        findings.append(finding(check, host, Status.ERROR, f"could not read device {dev}'s gateway on "
                                f"{host}: {device['gateway_error']}", device=dev,
                                observed=str(device["gateway_error"])))
    return findings


def _same(key: str, recorded: str, live: object) -> bool:
    """Whether a hccn.conf value and the live one agree (masks by prefix length, addresses by value)."""
    if live is None:
        return False
    if key == "netmask":
        length = prefix_length(recorded)
        return recorded == live or (length is not None and length == prefix_length(str(live)))
    addr = address(recorded)
    return recorded == live or (addr is not None and addr == address(str(live)))


def _set_command(dev: int, key: str, value: str, ip: str, netmask: str) -> str:
    """The hccn_tool call that sets ``key`` live and records it in hccn.conf."""
    if key == "gateway":
        return shlex.join(["hccn_tool", "-i", str(dev), "-gateway", "-s", "gateway", value])
    return set_ip_command(dev, ip, netmask)


def _explained(error: str) -> str:
    """hccn_tool's error line, with what it means when it is one of its known errors."""
    meaning = known_error(error)
    return f"{error}: {meaning}" if meaning else error


def _duplicates(usable: Mapping[str, list[dict[str, Any]]]) -> list[Finding]:
    """A fail for every device holding an IP that another device in the cluster holds too."""
    holders: dict[IPAddress, list[tuple[str, int]]] = defaultdict(list)
    for host in sorted(usable):
        for device in usable[host]:
            addr = address(device["ip"])
            if addr is not None:
                holders[addr].append((host, int(device["id"])))
    findings = []
    for addr, where in holders.items():
        if len(where) < 2:
            continue
        names = ", ".join(f"{h} device {d}" for h, d in where)
        for host, dev in where:
            peer_host, peer_dev = next((h, d) for h, d in where if (h, d) != (host, dev))
            findings.append(finding(
                "hccn.ip", host, Status.FAIL, f"{addr} is used by {len(where)} devices: {names}: HCCL "
                "links to this address reach the wrong NPU", device=dev, peer=peer_host, peer_device=peer_dev,
                observed=f"{addr} on {names}", expected="a device IP unique in the cluster",
                remedy=f"hccn_tool -i {dev} -ip -s address <unused address> netmask <netmask>  "
                       "# on all but one of them"))
    return findings


def _families(usable: Mapping[str, list[dict[str, Any]]]) -> list[Finding]:
    """IPv4 and IPv6 device IPs in one cluster: the devices of the smaller family fail (IPv4 wins a tie)."""
    versions: dict[tuple[str, int], int] = {}
    for host, devices in usable.items():
        for device in devices:
            addr = address(device["ip"])
            if addr is not None:
                versions[(host, int(device["id"]))] = addr.version
    counts = Counter(versions.values())
    if len(counts) < 2:
        return []
    expected = 4 if counts[4] >= counts[6] else 6
    summary = f"{counts[4]} IPv4 and {counts[6]} IPv6 device IPs in the cluster"
    return [finding("hccn.ip", host, Status.FAIL, f"device {dev} on {host} has an IPv{version} address "
                    f"while most devices use IPv{expected} ({summary}): HCCL cannot link them", device=dev,
                    observed=f"IPv{version}", expected=f"IPv{expected} like the rest of the cluster",
                    remedy=f"hccn_tool -i {dev} -ip -s address <IPv{expected} address> netmask <netmask>")
            for (host, dev), version in sorted(versions.items()) if version != expected]
