"""NPU device IPs and their segments: shared by hccn.ip and hccn.subnet.

>>> contiguous_netmask("255.255.0.255"), contiguous_netmask("255.255.240.0")
(False, True)
"""

from __future__ import annotations

import ipaddress
import shlex
from collections.abc import Mapping
from typing import Any

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def contiguous_netmask(netmask: str) -> bool:
    """Whether ``netmask`` (dotted or a prefix length) is a valid, contiguous mask."""
    return prefix_length(netmask) is not None


def prefix_length(netmask: str) -> int | None:
    """The prefix length of a dotted or numeric mask, None when it is not a contiguous mask.

    >>> prefix_length("255.255.255.0"), prefix_length("24"), prefix_length("255.0.255.0")
    (24, 24, None)
    """
    text = netmask.strip().lstrip("/")
    if text.isdecimal():
        return int(text) if int(text) <= 128 else None
    try:
        value = int(ipaddress.IPv4Address(text))
    except ValueError:
        return None
    inverted = (~value) & 0xFFFFFFFF
    if inverted & (inverted + 1):
        return None
    return 32 - inverted.bit_length()


def address(text: str | None) -> IPAddress | None:
    try:
        return ipaddress.ip_address((text or "").strip())
    except ValueError:
        return None


def network(ip: str | None, netmask: str | None) -> Network | None:
    """The segment of ``ip``/``netmask``, None when either does not parse.

    >>> network("192.168.1.10", "255.255.255.0")
    IPv4Network('192.168.1.0/24')
    """
    addr, length = address(ip), prefix_length(netmask or "")
    if addr is None or length is None or length > addr.max_prefixlen:
        return None
    return ipaddress.ip_network(f"{addr}/{length}", strict=False)


def set_ip_command(device: int, ip: str, netmask: str) -> str:
    """The remedy that (re)configures one device (hccn_tool also records it in /etc/hccn.conf).

    >>> set_ip_command(4, "192.168.0.13", "255.255.255.0")
    'hccn_tool -i 4 -ip -s address 192.168.0.13 netmask 255.255.255.0'
    """
    return shlex.join(["hccn_tool", "-i", str(device), "-ip", "-s", "address", ip, "netmask", netmask])


def usable_devices(host_facts: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Devices whose ip and netmask were read and parse (what the subnet rules can judge)."""
    if not host_facts.get("tool"):
        return []
    devices = host_facts.get("devices")
    return [d for d in devices if isinstance(d, dict) and d.get("state") == "ok"
            and network(d.get("ip"), d.get("netmask")) is not None] if isinstance(devices, list) else []
