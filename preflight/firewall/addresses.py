"""Addresses and interfaces: ``ip -o addr show`` as facts, address lists of rules, and which NICs are virtual.

>>> address_list(["10.0.0.0/8", "10.1.0.1-10.1.0.2", "trusted_hosts"])
([IPv4Network('10.0.0.0/8'), IPv4Network('10.1.0.1/32'), IPv4Network('10.1.0.2/32')], True)
>>> virtual("docker0"), virtual("eth0")
(True, False)
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from typing import Any

from preflight.batch import ProbeOutput
from preflight.interfaces import PYTHON_ADDRS, parse_interface

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Interface = ipaddress.IPv4Interface | ipaddress.IPv6Interface

# Interfaces training traffic between hosts never arrives on (bridges of containers and VMs, loopback).
VIRTUAL_IFACES = ("lo", "docker", "virbr", "veth", "br-", "cni", "flannel", "cali", "cilium", "lxc", "podman",
                  "kube-")


def virtual(name: str) -> bool:
    """Loopback, or a bridge of containers or VMs (a name starting like one of ``VIRTUAL_IFACES``)."""
    return name == "lo" or (name != "" and name.startswith(VIRTUAL_IFACES[1:]))


def family_of(address: IPAddress | Interface) -> str:
    """The family of an address as packets and paths name it: "ipv4" or "ipv6"."""
    return "ipv4" if address.version == 4 else "ipv6"


def as_ip(text: str) -> IPAddress | None:
    """``10.0.0.1`` or ``[fe80::1]`` as an address; None when it is a name."""
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None


def as_network(text: str) -> IPNetwork | None:
    """``10.0.0.0/8`` or ``10.0.0.1`` (host bits allowed) as a network; None when unreadable."""
    try:
        return ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        return None


def address_list(items: Iterable[str]) -> tuple[list[IPNetwork], bool]:
    """Networks of ``10.0.0.0/8``, ``10.0.0.1``, ``10.0.0.1-10.0.0.9`` items; True if one is unreadable."""
    nets: list[IPNetwork] = []
    unknown = False
    for item in items:
        text = item.split()[0] if item.split() else ""
        if "-" in text and "/" not in text:
            low, _, high = text.partition("-")
            try:
                nets += list(ipaddress.summarize_address_range(ipaddress.ip_address(low), ipaddress.ip_address(high)))
                continue
            except (ValueError, TypeError):
                unknown = True
                continue
        net = as_network(text)
        if net is None:
            unknown = True
        else:
            nets.append(net)
    return nets, unknown


def parse_addresses(out: ProbeOutput) -> list[dict[str, str]] | None:
    """``ip -o addr show`` (or, without iproute2, the python fallback's ``NAME inet ADDRESS/PREFIX`` lines) ->
    [{iface, address (with prefix), scope}], None when it did not run.

    >>> parse_addresses(ProbeOutput("2: eth0    inet 10.0.0.5/24 brd 10.0.0.255 scope global eth0\\\\n"))
    [{'iface': 'eth0', 'address': '10.0.0.5/24', 'scope': 'global'}]
    >>> parse_addresses(ProbeOutput("== addrs: python\\nlo inet 127.0.0.1/8\\neth0 inet 192.0.2.2/24\\n"))[1]
    {'iface': 'eth0', 'address': '192.0.2.2/24', 'scope': 'global'}
    """
    if not out.ok:
        return None
    found: list[dict[str, str]] = []
    lines = out.stdout.splitlines()
    if lines and lines[0].strip() == PYTHON_ADDRS:  # no scope printed: the kernel's, from the address itself
        for line in lines[1:]:
            words = line.split()
            iface = parse_interface(words[2]) if len(words) == 3 and words[1] in ("inet", "inet6") else None
            if iface is not None:
                scope = "host" if iface.ip.is_loopback else "link" if iface.ip.is_link_local else "global"
                found.append({"iface": words[0], "address": str(iface), "scope": scope})
        return found
    for line in lines:
        match = re.match(r"\d+:\s+(\S+)\s+inet6?\s+(\S+)(?:.*?\bscope (\w+))?", line)
        if match and parse_interface(match[2]) is not None:
            found.append({"iface": match[1].split("@")[0], "address": match[2], "scope": match[3] or "global"})
    return found


def global_addresses(facts: Mapping[str, Any]) -> list[tuple[str, Interface]]:
    """(interface, address) of a host's global addresses, loopback and container/VM bridges left out."""
    found = []
    for entry in facts.get("addresses") or []:
        if not isinstance(entry, Mapping):
            continue
        iface = parse_interface(str(entry.get("address", "")))
        name = str(entry.get("iface", ""))
        if iface is not None and entry.get("scope") == "global" and not virtual(name):
            found.append((name, iface))
    return found
