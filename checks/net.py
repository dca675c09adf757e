"""net: host names, the master's address and the interfaces the collectives will use.

Multi-node init breaks in quiet ways when names and interfaces disagree across hosts:

- ``net.hostname``: gloo (and torch's default device choice) binds the address the host's own name
  resolves to. Debian maps the hostname to 127.0.1.1 in /etc/hosts, so gloo binds loopback and
  peers wait forever. We mimic gloo: the first resolved address that is local to the host wins.
- ``net.master_resolution``: the master's name (``cluster.master``) resolves to the same address on
  every host, and that address is one of the master's own.
- ``net.address_family``: every host's own address has the family (IPv4/IPv6) of the master's.
- ``net.interface``: interfaces named by ``NCCL_SOCKET_IFNAME`` / ``HCCL_SOCKET_IFNAME`` (prefix
  lists, ``^`` excludes, ``=`` exact), ``GLOO_SOCKET_IFNAME`` (exact names, comma separated) and
  ``HCCL_IF_IP`` exist, are running, have an address, and sit on the master's network. Values come
  from hosts.yaml ``env`` first, then the host's login environment, then /etc/nccl.conf. Without a
  variable, NCCL (gpu) and HCCL (npu) pick an interface on their own: that pick must share a
  network with the master's pick.
- ``net.mtu``: the training interface has the same MTU on every host (the majority decides).

>>> parse_getent("10.0.0.1  STREAM node1\\n10.0.0.1  DGRAM\\n127.0.1.1 STREAM\\n")
['10.0.0.1', '127.0.1.1']
>>> select_by_filter("^docker,lo", ["lo", "docker0", "eth0", "eth1"])
['eth0', 'eth1']
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from preflight.batch import Probe, ProbeOutput, print_line, read_line
from preflight.checks.base import Check, EvalContext, Facts, finding, majority
from preflight.inventory import ClusterSpec, Host
from preflight.model import Finding, Status

IFACE_VARS = ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "HCCL_SOCKET_IFNAME", "HCCL_IF_IP")
SOURCES = {"yaml": "hosts.yaml env", "login": "login environment", "conf": "/etc/nccl.conf"}
IFF_UP = 0x1
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPInterface = ipaddress.IPv4Interface | ipaddress.IPv6Interface

_HOSTNAME = print_line("/proc/sys/kernel/hostname") + " || hostname"
_SELF = read_line("/proc/sys/kernel/hostname", "h") + ' || h=$(hostname) && getent ahosts "$h"'
# One line per interface from sysfs (works without iproute2; builtins only): name key=value ...
_LINKS = ("cd /sys/class/net || exit 1; for n in *; do printf '%s' \"$n\"; "
          "for k in ifindex mtu operstate flags carrier; do "
          "{ v=; read -r v <\"$n/$k\"; } 2>/dev/null; printf ' %s=%s' $k \"$v\"; done; echo; done")
# Also what firewall.addresses runs: byte for byte the same, so the engine runs it once per host.
ADDRS_COMMAND = 'PATH="$PATH:/usr/sbin:/sbin:/usr/local/sbin"; export PATH\nip -o addr show'
_LOGIN_ENV = "; ".join(f'[ -z "${{{v}+x}}" ] || printf \'login %s\\n\' "{v}=${v}"' for v in IFACE_VARS)
_NCCL_CONF = r"sed -n 's/^[[:space:]]*\(NCCL_SOCKET_IFNAME=.*\)$/conf \1/p' /etc/nccl.conf 2>/dev/null"


class NetCheck(Check):
    family = "net"
    order = 35
    summary = ("host names resolve to non-loopback addresses, the master resolves alike everywhere, "
               "NCCL/GLOO/HCCL interfaces exist, are up and share the master's network, equal MTU")
    params: ClassVar[Mapping[str, Any]] = {}

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        master = shlex.quote(cluster.master or "")
        return [
            Probe("hostname", _HOSTNAME, timeout=5),
            Probe("self", _SELF, timeout=10),
            Probe("master", f"printf 'name %s\\n' {master}; getent ahosts {master}", timeout=10),
            Probe("route", f"set -- $(getent ahosts {master} 2>/dev/null); [ $# -gt 0 ] || exit 2; "
                           'ip -o route get "$1"', timeout=10),
            Probe("links", _LINKS, timeout=5),
            Probe("addrs", ADDRS_COMMAND, timeout=5),
            Probe("env", _env_command(host), timeout=5),
        ]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        empty = ProbeOutput("", "not run", None)
        hostname = outputs.get("hostname", empty)
        name_lines = hostname.stdout.split()
        master = outputs.get("master", empty)
        master_lines = master.stdout.splitlines()
        master_name = master_lines[0][5:].strip() if master_lines and master_lines[0].startswith("name ") else None
        links = outputs.get("links", empty)
        addrs = outputs.get("addrs", empty)
        interfaces = parse_links(links.stdout)
        addr_map = parse_ip_addr(addrs.stdout)
        for name, entry in interfaces.items():
            entry["addrs"] = addr_map.get(name, [])
        return {
            "hostname": name_lines[0] if hostname.ok and name_lines else None,
            "self": _resolution(outputs.get("self", empty)),
            "master": {"name": master_name or None, **_resolution(master)},
            "route": parse_route(outputs.get("route", empty).stdout),
            "interfaces": interfaces or None,
            "interfaces_error": None if interfaces else _failure(links, "cannot list /sys/class/net"),
            "addrs_error": None if addrs.ok and addr_map else _failure(addrs, "no addresses listed"),
            "env": parse_env(outputs.get("env", empty).stdout),
        }

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        view = _ClusterView(facts, ctx)
        findings: list[Finding] = []
        for host in facts:
            findings.append(view.hostname_finding(host))
            findings.append(view.master_finding(host))
            findings.append(view.family_finding(host))
            findings.append(view.interface_finding(host))
        findings += view.mtu_findings()
        return findings


# --- probes and parsers -----------------------------------------------------------------------------


def _env_command(host: Host) -> str:
    """Print the interface variables: hosts.yaml values (quoted here), the login shell's, /etc/nccl.conf's."""
    parts = [f"printf 'yaml %s\\n' {shlex.quote(name + '=' + host.env[name].replace(chr(10), ' '))}"
             for name in IFACE_VARS if name in host.env]
    return "; ".join([*parts, _LOGIN_ENV, _NCCL_CONF, "true"])


def _ip(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text.split("%")[0])
    except ValueError:
        return None


def parse_getent(text: str) -> list[str]:
    """Addresses printed by ``getent ahosts NAME``, in order, without repeats (one line per socket type)."""
    found: list[str] = []
    for line in text.splitlines():
        words = line.split()
        address = _ip(words[0]) if words else None
        if address is not None and str(address) not in found:
            found.append(str(address))
    return found


def _failure(output: ProbeOutput, default: str) -> str:
    """Why a probe gave nothing usable, in a few words."""
    text = (output.stderr.strip() or output.stdout.strip()).splitlines()
    if output.timed_out:
        return "timed out"
    if output.exit_status == 127 or (text and "not found" in text[-1]):
        return "command not found: " + (text[-1][:200] if text else "")
    if output.ok or not text:
        return default
    return text[-1][:200]


def _resolution(output: ProbeOutput) -> dict[str, Any]:
    """``{"addrs": [...], "error": None | "not found" | why}`` from a getent probe."""
    addrs = parse_getent(output.stdout)
    if addrs:
        return {"addrs": addrs, "error": None}
    if output.exit_status == 2 or (output.ok and not output.stderr.strip()):
        return {"addrs": [], "error": "not found"}
    return {"addrs": [], "error": _failure(output, "not found")}


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
    """
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        match = _ADDR_LINE.match(line)
        if not match or _ip(match["addr"]) is None:
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
    return {"dst": dst if _ip(dst) else None, "dev": after("dev"), "src": after("src")}


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


# --- evaluation ----------------------------------------------------------------------------------


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


def _interfaces(host_facts: Facts) -> list[Iface] | None:
    raw = host_facts.get("interfaces")
    if not isinstance(raw, dict) or not raw:
        return None
    found = []
    for name, entry in raw.items():
        if not isinstance(entry, dict):
            continue
        addrs: list[IPInterface] = []
        for text in entry.get("addrs") or []:
            try:
                addrs.append(ipaddress.ip_interface(text))
            except ValueError:
                continue
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


def _loopback(address: str) -> bool:
    ip = _ip(address)
    return ip is not None and ip.is_loopback


def _family(address: str | None) -> str | None:
    ip = _ip(address) if address else None
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
                                   _up_remedy(matched[0]) if not matched[0].running else fix))
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
            remedy = _up_remedy(iface) if not iface.running else fix
            selection.problems.append((Status.FAIL, f"{label}: {name} is unusable: {_why_unusable(iface)}", remedy))
        elif selection.primary is None:
            selection.primary = iface
    if not names:
        selection.problems.append((Status.FAIL, f"{label} names no interface", fix))
    return selection


def select_ip(label: str, value: str, ifaces: Sequence[Iface], fix: str | None) -> Selection:
    """HCCL_IF_IP: the address must be assigned here, on a running interface."""
    selection = Selection(label, fix=fix)
    ip = _ip(value.strip())
    if ip is None:
        selection.problems.append((Status.FAIL, f"{label} is not an IP address", fix))
        return selection
    owner = next((i for i in ifaces if any(a.ip == ip for a in i.addrs)), None)
    if owner is None:
        selection.problems.append((Status.FAIL, f"{label}: {ip} is not an address of this host", fix))
    elif not owner.running:
        selection.problems.append((Status.FAIL, f"{label}: {owner.name} holding {ip} is {owner.state}",
                                   _up_remedy(owner)))
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


def _hosts_entry_remedy(name: str, address: str) -> str:
    """Take ``name`` off every /etc/hosts line, then map it to ``address``.

    >>> print(_hosts_entry_remedy("node1", "10.0.0.1"))
    sed -i -E 's/[[:space:]]node1([[:space:]]|$)/\\1/' /etc/hosts && echo '10.0.0.1 node1' >> /etc/hosts
    """
    pattern = "s/[[:space:]]" + re.sub(r"([.\[\]\\*^$/+?(){}|])", r"\\\1", name) + "([[:space:]]|$)/\\1/"
    return f"sed -i -E {shlex.quote(pattern)} /etc/hosts && echo {shlex.quote(address + ' ' + name)} >> /etc/hosts"


def _up_remedy(iface: Iface) -> str:
    return f"ip link set dev {shlex.quote(iface.name)} up"


def _same_network(a: Iface, b: Iface) -> bool:
    return any(x.ip in y.network or y.ip in x.network for x in a.usable for y in b.usable)


# Which library's interface carries the training traffic first, per accelerator.
_PREFERENCE = {"gpu": ("NCCL", "GLOO", "HCCL"), "npu": ("HCCL", "GLOO", "NCCL"), "cpu": ("GLOO", "NCCL", "HCCL")}


class _ClusterView:
    """Per-host derived state shared by the findings: interfaces, gloo's bind address, the master's address."""

    def __init__(self, facts: Mapping[str, Facts], ctx: EvalContext) -> None:
        self.facts = facts
        self.ctx = ctx
        self.master = ctx.cluster.master
        self.ifaces = {h: _interfaces(f) for h, f in facts.items()}
        self.master_own = self._master_addresses()
        self.expected = self._expected_master_address()
        self.selections = {h: self._selections(h) for h in facts}
        self.training = {h: self._training_interface(h) for h in facts}

    # shared state

    def _master_addresses(self) -> set[str] | None:
        ifaces = self.ifaces.get(self.master)
        if ifaces is None or self.facts.get(self.master, {}).get("addrs_error"):
            return None
        return {str(a.ip) for i in ifaces for a in i.usable if not a.ip.is_loopback}

    def _first_master_address(self, host: str) -> str | None:
        addrs = (self.facts[host].get("master") or {}).get("addrs") or []
        return str(addrs[0]) if addrs else None

    def _expected_master_address(self) -> str | None:
        """The master's address: what most hosts resolve it to, among the master's own addresses if known."""
        firsts = {h: a for h in self.facts if (a := self._first_master_address(h)) and not _loopback(a)}
        pool = {h: a for h, a in firsts.items() if self.master_own is not None and a in self.master_own} or firsts
        if pool:
            return str(Counter(pool[h] for h in sorted(pool)).most_common(1)[0][0])
        for host in self.ctx.hosts:
            if host.name == self.master and _ip(host.address) and not _loopback(host.address):
                return str(_ip(host.address))
        return None

    def bind_address(self, host: str) -> str | None:
        """gloo's choice: the first address of the host's own name that is local (loopback always is)."""
        addrs = (self.facts[host].get("self") or {}).get("addrs") or []
        ifaces = self.ifaces.get(host)
        local = None if ifaces is None or self.facts[host].get("addrs_error") else \
            {str(a.ip) for i in ifaces for a in i.addrs}
        for address in addrs:
            if local is None or _loopback(address) or address in local:
                return str(address)
        return None

    def _route_interface(self, host: str) -> Iface | None:
        """The interface that carries this host's traffic to the master."""
        ifaces = self.ifaces.get(host) or []
        target = _ip(self.expected) if self.expected else None
        if target is not None:
            if host == self.master:
                owner = next((i for i in ifaces if any(a.ip == target for a in i.addrs)), None)
                if owner is not None and not owner.loopback:
                    return owner
            near = [i for i in ifaces if i.running and not i.loopback and any(target in a.network for a in i.usable)]
            if near:
                return near[0]
        route = self.facts[host].get("route") or {}
        by_name = {i.name: i for i in ifaces}
        dev = by_name.get(str(route.get("dev"))) if isinstance(route, dict) else None
        return dev if dev is not None and not dev.loopback else None

    def _selections(self, host: str) -> dict[str, Selection]:
        """Library -> its interface choice on this host, for the libraries that will pick one."""
        ifaces = self.ifaces.get(host)
        if ifaces is None:
            return {}
        env = self.facts[host].get("env") or {}
        route = self._route_interface(host)
        chosen: dict[str, Selection] = {}

        def var(name: str) -> tuple[str, str] | None:
            entry = env.get(name)
            if not isinstance(entry, dict) or len(str(entry.get("value") or "")) < 2:
                return None  # NCCL ignores values shorter than two characters
            value = str(entry["value"])
            return value, f"{name}={value!r} ({entry.get('source', '?')})"

        def fix(name: str, exact: bool = True) -> str | None:
            if route is None:
                return None
            value = f"={route.name}" if exact else route.name
            return f"export {name}={shlex.quote(value)}  # or set it under env: in hosts.yaml"

        if (nccl := var("NCCL_SOCKET_IFNAME")) is not None:
            chosen["NCCL"] = select_filter(nccl[1], nccl[0], ifaces, fix("NCCL_SOCKET_IFNAME"))
        elif self.ctx.cluster.accelerator == "gpu":
            chosen["NCCL"] = select_auto("NCCL", ifaces, fix("NCCL_SOCKET_IFNAME"))
        if (gloo := var("GLOO_SOCKET_IFNAME")) is not None:
            chosen["GLOO"] = select_exact(gloo[1], gloo[0], ifaces, fix("GLOO_SOCKET_IFNAME", exact=False))
        if (if_ip := var("HCCL_IF_IP")) is not None:  # HCCL_IF_IP outranks HCCL_SOCKET_IFNAME
            hccl_fix = None if route is None or not route.usable else \
                f"export HCCL_IF_IP={shlex.quote(str(route.usable[0].ip))}  # or set it under env: in hosts.yaml"
            chosen["HCCL"] = select_ip(if_ip[1], if_ip[0], ifaces, hccl_fix)
        elif (hccl := var("HCCL_SOCKET_IFNAME")) is not None:
            chosen["HCCL"] = select_filter(hccl[1], hccl[0], ifaces, fix("HCCL_SOCKET_IFNAME"))
        elif self.ctx.cluster.accelerator == "npu":
            chosen["HCCL"] = select_auto("HCCL", ifaces, fix("HCCL_SOCKET_IFNAME"))
        for library, selection in chosen.items():
            if selection.primary is not None and selection.primary.loopback:
                variable = "GLOO_SOCKET_IFNAME" if library == "GLOO" else f"{library}_SOCKET_IFNAME"
                selection.problems.append((Status.FAIL, f"{selection.label} uses the loopback interface "
                                           f"{selection.primary.name}: peers cannot connect to it",
                                           fix(variable, exact=library != "GLOO")))
        return chosen

    def _training_interface(self, host: str) -> tuple[Iface | None, str]:
        """The interface the training traffic leaves by, and by whose choice."""
        for library in _PREFERENCE.get(self.ctx.cluster.accelerator, _PREFERENCE["cpu"]):
            selection = self.selections[host].get(library)
            if selection is not None and selection.primary is not None and not selection.primary.loopback:
                return selection.primary, selection.label
        return self._route_interface(host), "the route to the master"

    # findings

    def hostname_finding(self, host: str) -> Finding:
        check = "net.hostname"
        facts = self.facts[host]
        name = facts.get("hostname")
        resolved = facts.get("self") or {}
        if not name:
            return finding(check, host, Status.ERROR, f"{check}: could not read the host name")
        error = resolved.get("error")
        training = self.training[host][0] or next(
            (i for i in self.ifaces.get(host) or [] if i.running and not i.loopback and i.usable), None)
        address = str(training.usable[0].ip) if training is not None and training.usable else "<address>"
        add = _hosts_entry_remedy(str(name), address)
        if error and error != "not found":
            return finding(check, host, Status.ERROR, f"{check}: could not resolve {name}: {error}")
        if error:
            return finding(check, host, Status.FAIL,
                           f"{check}: the host name {name} does not resolve on {host}: gloo falls back to "
                           "loopback and peers cannot connect", observed="unresolved",
                           expected="a non-loopback address of this host", remedy=add)
        addrs = [str(a) for a in resolved.get("addrs") or []]
        bind = self.bind_address(host)
        if bind is None:
            return finding(check, host, Status.FAIL,
                           f"{check}: {name} resolves to {', '.join(addrs)}, none of which is an address of {host}",
                           observed=", ".join(addrs), expected="an address of this host", remedy=add)
        if _loopback(bind):
            alone = len(self.ctx.hosts) == 1  # a single-node job talks to itself over loopback just fine
            return finding(check, host, Status.WARN if alone else Status.FAIL,
                           f"{check}: {name} resolves to {bind} (loopback) on {host}: gloo binds loopback and "
                           "peers cannot connect" + (" (Debian's installer maps the host name to 127.0.1.1 in "
                                                     "/etc/hosts)" if bind == "127.0.1.1" else "")
                           + (": harmless while the job runs on this host alone" if alone else ""),
                           observed=f"{name} -> {bind}", expected="a non-loopback address", remedy=add)
        return finding(check, host, Status.PASS, f"{check}: {name} resolves to {bind}", observed=f"{name} -> {bind}")

    def master_finding(self, host: str) -> Finding:
        check = "net.master_resolution"
        resolved = self.facts[host].get("master") or {}
        name = resolved.get("name") or self.master
        error = resolved.get("error")
        expected = self.expected
        add = _hosts_entry_remedy(str(name), expected) if expected else None
        if error and error != "not found":
            return finding(check, host, Status.ERROR, f"{check}: could not resolve {name}: {error}")
        if error:
            if not any((f.get("master") or {}).get("addrs") for f in self.facts.values()):
                return finding(check, host, Status.WARN,
                               f"{check}: the master's name {name} resolves on no host: MASTER_ADDR must be an "
                               "IP address", observed="unresolved", expected="resolvable, or an IP as MASTER_ADDR")
            return finding(check, host, Status.FAIL,
                           f"{check}: the master's name {name} does not resolve on {host}, other hosts resolve it "
                           f"to {expected}", observed="unresolved", expected=expected, remedy=add)
        address = str(resolved["addrs"][0])
        observed = f"{name} -> {address}"
        if host == self.master and (_loopback(address) or (self.master_own and address in self.master_own)):
            return finding(check, host, Status.PASS,
                           f"{check}: {name} resolves to {address} on the master itself", observed=observed)
        if _loopback(address):
            return finding(check, host, Status.FAIL,
                           f"{check}: the master's name {name} resolves to loopback {address} on {host}",
                           observed=observed, expected=expected, remedy=add)
        if expected and address != expected and self.master_own and address in self.master_own:
            return finding(check, host, Status.WARN,
                           f"{check}: the master's name {name} resolves to {address} on {host}, another address of "
                           f"the master than the {expected} the other hosts use (another network or family?)",
                           observed=observed, expected=expected, remedy=add)
        if expected and address != expected:
            return finding(check, host, Status.FAIL,
                           f"{check}: the master's name {name} resolves to {address} on {host}, but to {expected} "
                           "on the other hosts", observed=observed, expected=expected, remedy=add)
        if self.master_own is not None and address not in self.master_own:
            own = ", ".join(sorted(self.master_own)) or "none"
            return finding(check, host, Status.FAIL,
                           f"{check}: the master's name {name} resolves to {address}, which is not an address of "
                           f"{self.master} (it has {own})", observed=observed, expected=f"one of {own}",
                           remedy="fix the master's entry in DNS or /etc/hosts on every host")
        return finding(check, host, Status.PASS, f"{check}: {name} resolves to {address}", observed=observed,
                       expected=expected)

    def family_finding(self, host: str) -> Finding:
        check = "net.address_family"
        bind = self.bind_address(host)
        family = _family(bind)
        if family is None:
            return finding(check, host, Status.SKIP, f"{check}: the host's own name has no local address "
                                                     "(see net.hostname)")
        target = _family(self.expected)
        reason = f"the master's address {self.expected}"
        if target is None:
            families = {h: f for h in self.facts if (f := _family(self.bind_address(h)))}
            target, _ = majority(families)
            reason = "the majority of hosts"
        if family != target:
            return finding(check, host, Status.FAIL,
                           f"{check}: {host} binds {bind} ({family}), but {reason} is {target}: gloo/NCCL peers of "
                           "different address families cannot connect", observed=f"{family} ({bind})",
                           expected=str(target),
                           remedy="give every host an address of the same family first in /etc/hosts or DNS")
        return finding(check, host, Status.PASS, f"{check}: {family} ({bind})", observed=family, expected=target)

    def interface_finding(self, host: str) -> Finding:
        check = "net.interface"
        facts = self.facts[host]
        if self.ifaces[host] is None:
            return finding(check, host, Status.ERROR,
                           f"{check}: could not list interfaces: {facts.get('interfaces_error') or 'no data'}")
        if facts.get("addrs_error"):
            return finding(check, host, Status.ERROR,
                           f"{check}: could not list addresses (ip -o addr show): {facts['addrs_error']}",
                           remedy="install iproute2")
        problems: list[tuple[Status, str, str | None]] = []
        chosen = []
        master_selections = self.selections.get(self.master, {})
        for library, selection in self.selections[host].items():
            problems += selection.problems
            primary = selection.primary
            if primary is None:
                continue
            chosen.append(f"{selection.label} -> {primary.describe()}")
            reference = master_selections.get(library)
            theirs = reference.primary if reference is not None else None
            if host != self.master and theirs is not None and not _same_network(primary, theirs):
                problems.append((Status.WARN,
                                 f"{selection.label} uses {primary.describe()}, not on the network of the master's "
                                 f"{theirs.describe()}: traffic must be routed (see net.reachability)",
                                 selection.fix))
        if not self.selections[host]:
            route = self._route_interface(host)
            if route is None and self.expected is None:
                return finding(check, host, Status.SKIP,
                               f"{check}: no interface variable is set and the master's address is unknown")
            if route is None:
                problems.append((Status.WARN, f"no interface variable is set and no interface of {host} reaches the "
                                 f"master's network ({self.expected})", None))
            else:
                chosen.append(f"no interface variable set; the master is reached over {route.describe()}")
        if problems:
            status = Status.worst([p[0] for p in problems])
            worst = next(p for p in problems if p[0] == status)
            return finding(check, host, status, f"{check}: " + "; ".join(p[1] for p in problems),
                           observed="; ".join(chosen) or "no usable interface",
                           expected="running interfaces with an address, on the master's network",
                           remedy=worst[2] or None)
        return finding(check, host, Status.PASS, f"{check}: " + "; ".join(chosen), observed="; ".join(chosen))

    def mtu_findings(self) -> list[Finding]:
        check = "net.mtu"
        known: dict[str, int] = {}
        findings: list[Finding] = []
        for host in self.facts:
            iface, why = self.training[host]
            if self.ifaces[host] is None:
                findings.append(finding(check, host, Status.ERROR, f"{check}: could not list interfaces"))
            elif iface is None or iface.mtu is None:
                findings.append(finding(check, host, Status.SKIP,
                                        f"{check}: no training interface could be determined on {host}"))
            else:
                known[host] = iface.mtu
        target, strict = majority(known)
        for host, mtu in known.items():
            iface, why = self.training[host]
            assert iface is not None
            name = iface.name
            remedy = f"ip link set dev {shlex.quote(name)} mtu {target}  # and persist it in the network config"
            if len(set(known.values())) > 1 and not strict:
                spread = ", ".join(f"{h}={m}" for h, m in known.items())
                findings.append(finding(check, host, Status.FAIL,
                                        f"{check}: the training interfaces' MTU differs with no majority: {spread}",
                                        observed=f"{name} mtu {mtu}", expected="the same MTU on every host",
                                        remedy=f"ip link set dev {shlex.quote(name)} mtu <the fabric's MTU>  "
                                               "# the same on every host"))
            elif mtu != target:
                findings.append(finding(check, host, Status.FAIL,
                                        f"{check}: {name} ({why}) has MTU {mtu} on {host}, the other hosts use "
                                        f"{target}: large messages stall or fragment", observed=f"{name} mtu {mtu}",
                                        expected=f"mtu {target}", remedy=remedy))
            else:
                findings.append(finding(check, host, Status.PASS, f"{check}: {name} mtu {mtu} ({why})",
                                        observed=f"{name} mtu {mtu}", expected=f"mtu {target}"))
        return findings
