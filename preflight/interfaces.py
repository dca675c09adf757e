"""Network interfaces as the collectives see them: parsers of the probes' output, and which interface NCCL,
gloo or HCCL would pick. Shared by the net check, firewall and diagnose.

>>> parse_getent("10.0.0.1  STREAM node1\\n10.0.0.1  DGRAM\\n127.0.1.1 STREAM\\n")
['10.0.0.1', '127.0.1.1']
>>> select_by_filter("^docker,lo", ["lo", "docker0", "eth0", "eth1"])
['eth0', 'eth1']
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from preflight.model import Status
from preflight.node import source

IFACE_VARS = ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "HCCL_SOCKET_IFNAME", "HCCL_IF_IP")
SOURCES = {"yaml": "hosts.yaml env", "login": "login environment", "conf": "/etc/nccl.conf"}
IFF_UP = 0x1
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPInterface = ipaddress.IPv4Interface | ipaddress.IPv6Interface
# What net.addrs and firewall.addresses run: byte for byte the same, so the engine runs it once per host. Without
# iproute2 (many container images), the node's python reads the addresses (preflight/node/addrs.py).
ADDRS_COMMAND = ('PATH="$PATH:/usr/sbin:/sbin:/usr/local/sbin"; export PATH\n'
                 'if command -v ip >/dev/null 2>&1; then ip -o addr show; exit; fi\n'
                 'for pf_py in python3 python; do command -v "$pf_py" >/dev/null 2>&1 && '
                 f'exec "$pf_py" -S -c {shlex.quote(source("addrs"))}; done\n'
                 'echo "ip: not found (iproute2), nor python to read the addresses without it" >&2; exit 127')
PYTHON_ADDRS = "== addrs: python"  # the first line of addrs.py's output


def parse_interface(text: str) -> IPInterface | None:
    """``10.0.0.5/24`` as an address with its network; None when unreadable.

    >>> parse_interface("10.0.0.5/24").network, parse_interface("eth0") is None
    (IPv4Network('10.0.0.0/24'), True)
    """
    try:
        return ipaddress.ip_interface(text)
    except ValueError:
        return None


def parse_ip(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text.split("%")[0])
    except ValueError:
        return None


def parse_getent(text: str) -> list[str]:
    """Addresses printed by ``getent ahosts NAME``, in order, without repeats (one line per socket type)."""
    found: list[str] = []
    for line in text.splitlines():
        words = line.split()
        address = parse_ip(words[0]) if words else None
        if address is not None and str(address) not in found:
            found.append(str(address))
    return found


def parse_links(text: str) -> dict[str, dict[str, Any]]:
    """The sysfs dump of ``_LINKS``: name -> ifindex, mtu, operstate, flags, carrier.

    >>> parse_links("eth0 ifindex=2 mtu=1500 operstate=up flags=0x1003 carrier=1\\n")["eth0"]["mtu"]
    1500
    """
    interfaces: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) < 2 or "=" in words[0] or "/" in words[0] or words[0] == "*":
            continue
        values = dict(w.partition("=")[::2] for w in words[1:] if "=" in w)
        interfaces[words[0]] = {
            "ifindex": _int(values.get("ifindex")),
            "mtu": _int(values.get("mtu")),
            "operstate": values.get("operstate") or None,
            "flags": _int(values.get("flags")),
            "carrier": _int(values.get("carrier")),
        }
    return interfaces


def _int(text: str | None) -> int | None:
    try:
        return int(text, 0) if text else None
    except ValueError:
        return None


_ADDR_LINE = re.compile(r"^\d+:\s+(?P<name>[^\s@]+)(?:@\S+)?\s+(?P<family>inet6?)\s+(?P<addr>[0-9A-Fa-f.:]+)"
                        r"(?:/(?P<plen>\d+))?(?:\s+peer\s+[0-9A-Fa-f.:]+/(?P<peerlen>\d+))?")


def parse_ip_addr(text: str) -> dict[str, list[str]]:
    """``ip -o addr show`` -> interface -> ["address/prefix", ...].

    >>> parse_ip_addr("2: eth0    inet 10.0.0.2/24 brd 10.0.0.255 scope global eth0\\\\ ...")
    {'eth0': ['10.0.0.2/24']}
    >>> parse_ip_addr("== addrs: python\\neth0 inet 10.0.0.2/24\\neth0 inet6 fe80:0:0:0:0:0:0:0001/64")
    {'eth0': ['10.0.0.2/24', 'fe80::1/64']}
    """
    found: dict[str, list[str]] = {}
    lines = text.splitlines()
    if lines and lines[0] == PYTHON_ADDRS:  # preflight/node/addrs.py: "NAME inet|inet6 ADDRESS/PREFIX"
        for line in lines[1:]:
            words = line.split()
            iface = parse_interface(words[2]) if len(words) == 3 and words[1] in ("inet", "inet6") else None
            if iface is not None:
                found.setdefault(words[0], []).append(str(iface))
        return found
    for line in lines:
        match = _ADDR_LINE.match(line)
        if not match or parse_ip(match["addr"]) is None:
            continue
        default = "32" if match["family"] == "inet" else "128"
        prefix = match["peerlen"] or match["plen"] or default
        try:
            value = str(ipaddress.ip_interface(f"{match['addr']}/{prefix}"))
        except ValueError:
            continue
        found.setdefault(match["name"], []).append(value)
    return found


def parse_route(text: str) -> dict[str, str | None] | None:
    """``ip -o route get ADDR`` -> destination, device and source address.

    >>> parse_route("10.0.0.1 dev eth0 src 10.0.0.2 uid 0 \\\\    cache ")
    {'dst': '10.0.0.1', 'dev': 'eth0', 'src': '10.0.0.2'}
    """
    words = text.split()
    if not words or "dev" not in words:
        return None

    def after(key: str) -> str | None:
        return words[words.index(key) + 1] if key in words[:-1] else None

    dst = words[1] if words[0] in ("local", "unicast", "broadcast") and len(words) > 1 else words[0]
    return {"dst": dst if parse_ip(dst) else None, "dev": after("dev"), "src": after("src")}


def parse_env(text: str) -> dict[str, dict[str, str]]:
    """The effective interface variables: hosts.yaml beats the login environment beats /etc/nccl.conf.

    >>> parse_env("yaml NCCL_SOCKET_IFNAME==eth0\\nlogin NCCL_SOCKET_IFNAME=ib\\n")["NCCL_SOCKET_IFNAME"]
    {'value': '=eth0', 'source': 'hosts.yaml env'}
    """
    rank = {source: i for i, source in enumerate(SOURCES)}
    found: dict[str, tuple[int, str]] = {}
    for line in text.splitlines():
        source, _, rest = line.partition(" ")
        name, sep, value = rest.partition("=")
        if source not in SOURCES or not sep or name not in IFACE_VARS or (source == "conf" and "NCCL" not in name):
            continue  # /etc/nccl.conf is NCCL's alone
        if name not in found or rank[source] < found[name][0]:
            found[name] = (rank[source], value.strip())
    return {name: {"value": value, "source": list(SOURCES.values())[r]} for name, (r, value) in found.items()}


def select_by_filter(spec: str, names: Sequence[str]) -> list[str]:
    """Names an NCCL/HCCL ``*_SOCKET_IFNAME`` value selects, in the given order.

    ``eth`` prefixes, ``=eth0`` exact names, ``^`` in front excludes (``^=docker0``); ``:port`` is ignored.

    >>> select_by_filter("=eth0,ib0", ["eth0", "eth01", "ib0"]), select_by_filter("eth", ["eth0", "ib0"])
    (['eth0', 'ib0'], ['eth0'])
    """
    exclude = spec.startswith("^")
    spec = spec[1:] if exclude else spec
    exact = spec.startswith("=")
    spec = spec[1:] if exact else spec
    items = [item.split(":")[0].strip() for item in spec.split(",")]
    items = [item for item in items if item]

    def matches(name: str) -> bool:
        return any(name == item if exact else name.startswith(item) for item in items)

    return [name for name in names if matches(name) != exclude]


@dataclass(frozen=True)
class Iface:
    name: str
    ifindex: int
    mtu: int | None
    running: bool
    state: str  # "up", or why not: "administratively down", "no carrier", ...
    addrs: tuple[IPInterface, ...]

    @property
    def usable(self) -> tuple[IPInterface, ...]:
        """IPv4 and non-link-local IPv6 addresses (what a peer can connect to)."""
        return tuple(a for a in self.addrs if a.version == 4 or not (a.ip.is_link_local or a.ip.is_loopback))

    @property
    def loopback(self) -> bool:
        return self.name == "lo" or (bool(self.usable) and all(a.ip.is_loopback for a in self.usable))

    def describe(self) -> str:
        shown = ", ".join(str(a) for a in self.usable) or "no address"
        return f"{self.name} ({self.state}, {shown})"


def interfaces_of(host_facts: Mapping[str, Any]) -> list[Iface] | None:
    raw = host_facts.get("interfaces")
    if not isinstance(raw, dict) or not raw:
        return None
    found = []
    for name, entry in raw.items():
        if not isinstance(entry, dict):
            continue
        addrs = [a for a in map(parse_interface, map(str, entry.get("addrs") or [])) if a is not None]
        flags, carrier, oper = entry.get("flags"), entry.get("carrier"), entry.get("operstate")
        if isinstance(flags, int) and not flags & IFF_UP:
            running, state = False, "administratively down"
        elif carrier == 0 or oper in ("down", "lowerlayerdown", "notpresent", "dormant"):
            running, state = False, f"no carrier (operstate {oper})" if oper else "no carrier"
        else:
            running, state = True, "up"
        ifindex = entry.get("ifindex")
        found.append(Iface(name, ifindex if isinstance(ifindex, int) else 1 << 30, entry.get("mtu"), running, state,
                           tuple(addrs)))
    return sorted(found, key=lambda i: (i.ifindex, i.name))


def is_loopback(address: str) -> bool:
    ip = parse_ip(address)
    return ip is not None and ip.is_loopback


def ip_family(address: str | None) -> str | None:
    ip = parse_ip(address) if address else None
    return None if ip is None else f"IPv{ip.version}"


@dataclass
class Selection:
    """Which interface one library would use on one host, and what is wrong with it."""

    label: str  # e.g. "NCCL_SOCKET_IFNAME='=eth0' (hosts.yaml env)" or "NCCL's own choice"
    primary: Iface | None = None
    fix: str | None = None  # the setting that points the library at the interface reaching the master
    problems: list[tuple[Status, str, str | None]] = field(default_factory=list)  # status, text, remedy


def _why_unusable(iface: Iface) -> str:
    return iface.state if not iface.running else "no IPv4 or global IPv6 address"


def select_filter(label: str, spec: str, ifaces: Sequence[Iface], fix: str | None) -> Selection:
    """NCCL_SOCKET_IFNAME / HCCL_SOCKET_IFNAME: first running interface with an address that the list selects."""
    selection = Selection(label, fix=fix)
    by_name = {i.name: i for i in ifaces}
    matched = [by_name[n] for n in select_by_filter(spec, [i.name for i in ifaces])]
    have = ", ".join(i.name for i in ifaces)
    if not matched:
        selection.problems.append((Status.FAIL, f"{label} matches no interface here (have: {have})", fix))
        return selection
    usable = [i for i in matched if i.running and i.usable]
    if not usable:
        why = "; ".join(f"{i.name}: {_why_unusable(i)}" for i in matched)
        selection.problems.append((Status.FAIL, f"{label} selects no usable interface ({why})",
                                   up_remedy(matched[0]) if not matched[0].running else fix))
        return selection
    selection.primary = usable[0]
    return selection


def select_exact(label: str, spec: str, ifaces: Sequence[Iface], fix: str | None) -> Selection:
    """GLOO_SOCKET_IFNAME: every listed name must exist with an address (gloo raises otherwise)."""
    selection = Selection(label, fix=fix)
    by_name = {i.name: i for i in ifaces}
    names = [n.strip() for n in spec.split(",") if n.strip()]
    for name in names:
        iface = by_name.get(name)
        if iface is None:
            have = ", ".join(i.name for i in ifaces)
            selection.problems.append((Status.FAIL, f"{label}: no interface {name} here (have: {have})", fix))
        elif not iface.running or not iface.usable:
            remedy = up_remedy(iface) if not iface.running else fix
            selection.problems.append((Status.FAIL, f"{label}: {name} is unusable: {_why_unusable(iface)}", remedy))
        elif selection.primary is None:
            selection.primary = iface
    if not names:
        selection.problems.append((Status.FAIL, f"{label} names no interface", fix))
    return selection


def select_ip(label: str, value: str, ifaces: Sequence[Iface], fix: str | None) -> Selection:
    """HCCL_IF_IP: the address must be assigned here, on a running interface."""
    selection = Selection(label, fix=fix)
    ip = parse_ip(value.strip())
    if ip is None:
        selection.problems.append((Status.FAIL, f"{label} is not an IP address", fix))
        return selection
    owner = next((i for i in ifaces if any(a.ip == ip for a in i.addrs)), None)
    if owner is None:
        selection.problems.append((Status.FAIL, f"{label}: {ip} is not an address of this host", fix))
    elif not owner.running:
        selection.problems.append((Status.FAIL, f"{label}: {owner.name} holding {ip} is {owner.state}",
                                   up_remedy(owner)))
    else:
        selection.primary = owner
    return selection


def select_auto(library: str, ifaces: Sequence[Iface], fix: str | None = None) -> Selection:
    """What NCCL (ib* first, then anything but docker*/lo*) or HCCL (by name, docker and lo last) pick unset."""
    selection = Selection(f"{library}'s own choice ({library}_SOCKET_IFNAME unset)", fix=fix)
    usable = [i for i in ifaces if i.running and i.usable]

    def tier(i: Iface) -> int:
        return 2 if i.name.startswith("lo") else 1 if i.name.startswith("docker") else 0

    if library == "NCCL":
        ranked = [i for i in usable if i.name.startswith("ib")] or sorted(usable, key=tier)
    else:
        ranked = sorted(usable, key=lambda i: (tier(i), i.name))
    if not ranked:
        selection.problems.append((Status.FAIL, f"{selection.label}: no running interface with an address", fix))
    else:
        selection.primary = ranked[0]
    return selection


def up_remedy(iface: Iface) -> str:
    return f"ip link set dev {shlex.quote(iface.name)} up"


def same_network(a: Iface, b: Iface) -> bool:
    return any(x.ip in y.network or y.ip in x.network for x in a.usable for y in b.usable)
