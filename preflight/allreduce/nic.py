"""The line rate of the interface gloo uses between hosts: ``/sys/class/net/IF/speed`` (read-only, builtins only).

The kernel prints ``speed`` in Mb/s; -1 (``SPEED_UNKNOWN``) where the driver does not know it (virtio) and a read
error where the interface is down or has no link settings (Documentation/ABI/testing/sysfs-class-net,
https://www.kernel.org/doc/Documentation/ABI/testing/sysfs-class-net; ``speed_show`` in net/core/net-sysfs.c).
A virtual interface's speed is no line rate: veth reports a constant 10000 whatever carries it, so a speed counts
only for an interface with a ``device`` (a NIC on a bus) or a bond/VLAN on top of NICs (``DEVTYPE`` in its
``uevent``). Which interface: the one holding the address hosts.yaml gives the host (the address its peers and
the worker use). Where none reports a rate, ``checks.allreduce.nic_gbps`` (the rate you know the hosts' NICs
have) fills in; the report says which one it used.

>>> speeds = parse_speeds("eth0 speed=25000 device=1 devtype=\\nveth1 speed=10000 device=0 devtype=\\n"
...                       "bond0 speed=50000 device=0 devtype=bond\\nlo speed= device=0 devtype=\\n")
>>> speeds["eth0"], speeds["lo"]["speed_mbps"]
({'speed_mbps': 25000, 'device': True, 'devtype': ''}, None)
>>> interface_rate(speeds, {"eth0": ["10.0.0.5/24"]}, "10.0.0.5")
(3.125, 'eth0: 25000 Mb/s (/sys/class/net/eth0/speed)')
>>> interface_rate(speeds, {"veth1": ["10.0.0.6/24"]}, "10.0.0.6")
(None, 'veth1 is a virtual interface (no device): its speed 10000 is no line rate')
>>> interface_rate(speeds, {"bond0": ["10.0.0.7/24"]}, "10.0.0.7")[0]
6.25
>>> interface_rate(speeds, {}, "node1")
(None, 'no interface holds node1')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# One line per interface: NAME speed=MBPS device=0|1 devtype=DEVTYPE (from its uevent).
SPEEDS_COMMAND = (
    "cd /sys/class/net || exit 1; for n in *; do s=; { read -r s <\"$n/speed\"; } 2>/dev/null; "
    "d=0; [ -e \"$n/device\" ] && d=1; t=; "
    "while IFS='=' read -r k v; do [ \"$k\" = DEVTYPE ] && t=$v; done <\"$n/uevent\" 2>/dev/null; "
    "printf '%s speed=%s device=%s devtype=%s\\n' \"$n\" \"$s\" \"$d\" \"$t\"; done")
REAL_DEVTYPES = ("bond", "vlan", "team")  # their speed is their NICs'


def parse_speeds(text: str) -> dict[str, dict[str, Any]]:
    """The probe's lines -> name -> {speed_mbps (None: unknown, -1 or unreadable), device, devtype}. Never raises."""
    found: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) < 2 or "=" in words[0]:
            continue
        values = dict(w.partition("=")[::2] for w in words[1:] if "=" in w)
        speed = values.get("speed", "")
        found[words[0]] = {"speed_mbps": int(speed) if speed.isdigit() and int(speed) > 0 else None,
                           "device": values.get("device") == "1", "devtype": values.get("devtype", "")}
    return found


def interface_rate(speeds: Mapping[str, Mapping[str, Any]], addrs: Mapping[str, Sequence[str]],
                   address: str) -> tuple[float | None, str]:
    """(GB/s per direction, how) of the interface holding ``address``; (None, why) when no rate is known."""
    name = next((n for n, found in addrs.items() if any(a.split("/")[0] == address for a in found)), None)
    if name is None:
        return None, f"no interface holds {address}"
    entry = speeds.get(name) or {}
    speed = entry.get("speed_mbps")
    if not isinstance(speed, int):
        return None, f"{name} reports no speed"
    if not entry.get("device") and entry.get("devtype") not in REAL_DEVTYPES:
        return None, f"{name} is a virtual interface (no device): its speed {speed} is no line rate"
    return speed / 8000, f"{name}: {speed} Mb/s (/sys/class/net/{name}/speed)"
