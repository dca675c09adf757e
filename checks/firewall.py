"""firewall: ufw, firewalld, iptables and nftables on every host, and whether they block training traffic.

What is installed and active is read with ``iptables -S`` / ``ip6tables -S`` (and ``iptables-legacy -S``
when legacy tables are loaded next to nf_tables ones), ``nft -a list ruleset``, ``ufw status verbose``
and ``firewall-cmd --state`` / ``--list-all``. A tool that is missing is a fact, not an error;
listing rules needs root (CAP_NET_ADMIN), and a host whose rules could not be read is an ``error``.

The rules are then *evaluated*, not grepped: for a new TCP connection (a SYN, conntrack state NEW,
no packet mark) from every other host of the cluster, on every path between them (the peer's
address in a subnet this host has an address in, arriving on that interface), to

- the master port (``cluster.master_port``) on the master host,
- HCCL's host ports on npu clusters (``HCCL_IF_BASE_PORT``, default 60000, 16 ports or 32 on newer
  CANN; ``HCCL_HOST_SOCKET_PORT_RANGE`` when set),
- the ephemeral range (``net.ipv4.ip_local_port_range``) where NCCL, gloo and torch's workers listen,

the verdict of every base chain on the input path (iptables' INPUT; nftables chains hooked at
prerouting, input or ingress) is worked out with rule order, jumps, gotos, returns, policies, sets
and verdict maps. A condition preflight cannot decide (an interface when several are possible, an
ipset, a rate limit, an unknown match) is followed both ways. A port that every path from some
peer drops or rejects is blocked: ``fail`` (the master port on a non-master host, and a small part
of the ephemeral range, only ``warn``); one that only some paths or undecided conditions drop is
``warn``. Findings name the rule (as ``iptables -S`` / ``nft`` print it), the ports and the peers.
With iptables on the nf_tables backend, its tables also show in ``nft list ruleset``: they are
judged once, as iptables rules.

>>> facts = {"policies": {"INPUT": "DROP"}, "rules": ["-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT"]}
>>> ruleset = compile_iptables(facts, "iptables", "ipv4")
>>> verdict(ruleset, Packet("ipv4", 29500, None, None, None)).definite[0].text
'-P INPUT DROP'
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from preflight.batch import Probe, ProbeOutput
from preflight.checks.base import Check, EvalContext, Facts, finding, majority
from preflight.checks.ports import Range, format_port_list, hccl_ports, merge_ranges, parse_port_list, uncovered
from preflight.inventory import ClusterSpec, Host
from preflight.model import Finding, Status

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

EPHEMERAL_DEFAULT: Range = (32768, 60999)  # the kernel's default net.ipv4.ip_local_port_range
EPHEMERAL_FAIL_FRACTION = 0.01  # blocking >= 1% of the ephemeral range fails: a job opens many listeners
HCCL_RANGE_ENV = "HCCL_HOST_SOCKET_PORT_RANGE"  # CANN 8.1+: overrides HCCL_IF_BASE_PORT ("auto": ephemeral)
TRAINING_IFACE_ENV = ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "HCCL_SOCKET_IFNAME", "TP_SOCKET_IFNAME")
# Interfaces training traffic between hosts never arrives on (bridges of containers and VMs, loopback).
VIRTUAL_IFACES = ("lo", "docker", "virbr", "veth", "br-", "cni", "flannel", "cali", "cilium", "lxc", "podman",
                  "kube-")

# --- probes ----------------------------------------------------------------------------------

_PATH = 'PATH="$PATH:/usr/sbin:/sbin:/usr/local/sbin"; export PATH\n'


def _missing(tool: str) -> str:
    return f'command -v {tool} >/dev/null 2>&1 || {{ echo "{tool}: not installed" >&2; exit 127; }}\n'


# The version line, then the filter table. A legacy filter table that is not loaded is not listed:
# listing it would load the kernel module and create the table (a probe must not change the host);
# /proc/net/ip_tables_names is unreadable to non-root users, who then get iptables' own refusal.
_IPTABLES = _PATH + _missing("TOOL") + r"""v=$(TOOL -V 2>&1); echo "$v"
case "$v" in
  *nf_tables*) ;;
  *) if [ ! -e /proc/net/NAMES ] || { [ -r /proc/net/NAMES ] && ! grep -qx filter /proc/net/NAMES; }; then
       echo "# preflight: no legacy filter table loaded"; exit 0; fi ;;
esac
TOOL -S
"""
# Legacy tables loaded next to nf_tables ones (both filter): nothing printed when there are none.
_LEGACY = _PATH + r"""case "$(TOOL -V 2>/dev/null)" in *nf_tables*) ;; *) exit 0 ;; esac
[ -r /proc/net/NAMES ] && grep -qx filter /proc/net/NAMES || exit 0
command -v TOOL-legacy >/dev/null 2>&1 || exit 0
TOOL-legacy -V; TOOL-legacy -S
"""


def _for(template: str, tool: str) -> str:
    """A probe template for iptables or ip6tables (constants only: nothing from hosts.yaml)."""
    names = "ip6_tables_names" if tool == "ip6tables" else "ip_tables_names"
    return template.replace("TOOL", tool).replace("NAMES", names)


_NFT = _PATH + _missing("nft") + "nft --version; nft -a list ruleset\n"
_UFW = _PATH + _missing("ufw") + "ufw status verbose\n"
_FIREWALLD = _PATH + _missing("firewall-cmd") + (
    "firewall-cmd --state; rc=$?; [ $rc -eq 0 ] || exit $rc\nfirewall-cmd --list-all\n")
_ADDRESSES = _PATH + "ip -o addr show"
_PORT_RANGE = "cat /proc/sys/net/ipv4/ip_local_port_range"

# --- parsing ---------------------------------------------------------------------------------

_PERMISSION = re.compile(r"permission denied|operation not permitted|must be root|need to be root|"
                         r"authorization failed|not authorized|access denied", re.I)
_IPT_VERSION = re.compile(r"^(?:ip6?tables(?:-legacy|-nft)?) v(\S+)(?: \(([\w-]+)\))?")
_NO_LEGACY_TABLE = "# preflight: no legacy filter table loaded"
_MANAGED = re.compile(r"table (\w+) (\S+) is managed by iptables-nft")
_MISSING_OUTPUT = ProbeOutput("", "not run", None)


def _last_line(*texts: str) -> str:
    for text in texts:
        lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
        if lines:
            return lines[-1][:300]
    return ""


def _base(out: ProbeOutput) -> dict[str, Any]:
    """Facts every tool has: installed, readable, error, permission_denied."""
    facts: dict[str, Any] = {"installed": out.exit_status != 127, "readable": False, "error": None,
                             "permission_denied": False}
    if out.exit_status is None or out.timed_out:
        facts["error"] = "timed out"
    elif out.exit_status not in (0, 127):
        facts["error"] = _last_line(out.stderr, out.stdout) or f"exit status {out.exit_status}"
        facts["permission_denied"] = bool(_PERMISSION.search(out.stderr + out.stdout))
    elif out.truncated:
        facts["error"] = "output truncated"
    return facts


def parse_iptables(out: ProbeOutput) -> dict[str, Any]:
    """``iptables -V; iptables -S`` -> version, backend, chain policies, user chains and ``-A`` rules.

    >>> f = parse_iptables(ProbeOutput("iptables v1.8.9 (nf_tables)\\n-P INPUT DROP\\n-A INPUT -j ACCEPT\\n"))
    >>> f["backend"], f["policies"], f["rules"], f["readable"]
    ('nf_tables', {'INPUT': 'DROP'}, ['-A INPUT -j ACCEPT'], True)
    """
    facts = _base(out)
    facts.update({"version": None, "backend": None, "policies": {}, "chains": [], "rules": [], "notes": []})
    if not facts["installed"]:
        return facts
    unloaded = False
    junk: list[str] = []
    for line in out.stdout.splitlines() + [ln for ln in out.stderr.splitlines() if ln.startswith("#")]:
        text = line.strip()
        version = _IPT_VERSION.match(text)
        if version:
            facts["version"], facts["backend"] = version[1], version[2] or "legacy"
        elif text.startswith("-P "):
            parts = text.split()
            if len(parts) == 3:
                facts["policies"][parts[1]] = parts[2]
        elif text.startswith("-N ") and len(text.split()) == 2:
            facts["chains"].append(text.split()[1])
        elif text.startswith("-A "):
            facts["rules"].append(text)
        elif text == _NO_LEGACY_TABLE:
            unloaded = True
        elif text.startswith("#"):
            facts["notes"].append(text.lstrip("# ").strip())
        elif text:
            junk.append(text)
    if facts["error"] is None:
        if facts["policies"] or unloaded:
            facts["readable"] = True
            if unloaded:
                facts["notes"].append("filter table not loaded: no rules")
        else:
            facts["error"] = f"unrecognized output: {junk[0][:100]!r}" if junk else "no rules listed"
    return facts


def _split_comment(line: str) -> tuple[str, str]:
    """Code and comment of an nft line (``#`` outside double quotes starts the comment)."""
    quoted = False
    for index, char in enumerate(line):
        if char == '"':
            quoted = not quoted
        elif char == "#" and not quoted:
            return line[:index], line[index + 1:]
    return line, ""


_NFT_OBJECTS = ("table", "chain", "set", "map", "flowtable", "counter", "quota", "ct", "limit", "secmark",
                "synproxy", "tunnel")


def parse_nft_ruleset(text: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Tables of ``nft [-a] list ruleset``: chains (hook, priority, policy, rules with handles) and sets.

    >>> tables, problems = parse_nft_ruleset('table inet t { # handle 1\\n\\tchain input { # handle 1\\n'
    ...     '\\t\\ttype filter hook input priority filter; policy drop;\\n'
    ...     '\\t\\ttcp dport 22 counter packets 3 bytes 180 accept # handle 2\\n\\t}\\n}\\n')
    >>> tables[0]["chains"][0]["policy"], tables[0]["chains"][0]["rules"], problems
    ('drop', [{'text': 'tcp dport 22 counter accept', 'handle': 2}], [])
    """
    tables: list[dict[str, Any]] = []
    problems: list[str] = []
    stack: list[tuple[str, dict[str, Any] | None]] = []
    pending = ""
    for raw in text.splitlines():
        code, comment = _split_comment(raw)
        handle_match = re.search(r"\bhandle (\d+)", comment)
        handle = int(handle_match[1]) if handle_match else None
        line = f"{pending} {code.strip()}".strip() if pending else code.strip()
        if not line:
            continue
        words = line.split()
        if line.count("{") > line.count("}") and not (line.endswith("{") and words[0] in _NFT_OBJECTS):
            pending = line  # a set's elements (or an anonymous set) continue on the next line
            continue
        pending = ""
        kind, obj = stack[-1] if stack else ("top", None)
        if line.startswith("}"):
            if stack:
                stack.pop()
            else:
                problems.append("unbalanced '}'")
            continue
        if line.endswith("{"):
            words = line[:-1].split()
            if kind == "top" and words[0] == "table" and len(words) in (2, 3):
                family, name = (words[1], words[2]) if len(words) == 3 else ("ip", words[1])
                table: dict[str, Any] = {"family": family, "name": name, "flags": [], "chains": [], "sets": []}
                tables.append(table)
                stack.append(("table", table))
            elif kind == "table" and obj is not None and words[0] == "chain" and len(words) == 2:
                chain: dict[str, Any] = {"name": words[1], "type": None, "hook": None, "priority": None,
                                         "policy": None, "device": None, "rules": []}
                obj["chains"].append(chain)
                stack.append(("chain", chain))
            elif kind == "table" and obj is not None and words[0] in ("set", "map") and len(words) == 2:
                nft_set: dict[str, Any] = {"name": words[1], "kind": words[0], "type": None, "flags": [],
                                           "elements": []}
                obj["sets"].append(nft_set)
                stack.append(("set", nft_set))
            else:
                if kind == "top":
                    problems.append(f"unexpected block: {line[:80]}")
                stack.append(("other", None))
            continue
        if kind == "chain" and obj is not None:
            _chain_line(obj, line, handle)
        elif kind == "set" and obj is not None:
            _set_line(obj, line)
        elif kind == "table" and obj is not None and words[0] == "flags":
            obj["flags"] = [flag.strip() for flag in " ".join(words[1:]).split(",") if flag.strip()]
        elif kind == "top":
            problems.append(f"unexpected line: {line[:80]}")
    if pending or stack:
        problems.append("truncated: a block is not closed")
    return tables, problems


def _chain_line(chain: dict[str, Any], line: str, handle: int | None) -> None:
    words = line.split()
    if words[0] == "type" or (words[0] == "policy" and line.rstrip().endswith(";")):
        for part in line.split(";"):
            tokens = part.split()
            for index, token in enumerate(tokens[:-1]):
                if token in ("type", "hook", "policy", "device") and index == tokens.index(token):
                    chain[token] = tokens[index + 1].strip('"')
            if "priority" in tokens:
                chain["priority"] = " ".join(tokens[tokens.index("priority") + 1:])
    elif words[0] in ("comment", "devices"):
        return
    else:
        text = re.sub(r"\bcounter packets \d+ bytes \d+", "counter", " ".join(words))
        chain["rules"].append({"text": text, "handle": handle})


def _set_line(nft_set: dict[str, Any], line: str) -> None:
    words = line.split()
    if words[0] in ("type", "typeof"):
        nft_set["type"] = " ".join(words[1:])
    elif words[0] == "flags":
        nft_set["flags"] = [flag.strip() for flag in " ".join(words[1:]).split(",") if flag.strip()]
    elif words[0] == "elements":
        inner = line[line.find("{") + 1: line.rfind("}")] if "{" in line else " ".join(words[2:])
        nft_set["elements"] = [item.strip() for item in _split_top(inner, ",") if item.strip()]


def _split_top(text: str, sep: str) -> list[str]:
    """Split on ``sep`` outside braces, parentheses and quotes."""
    parts, depth, quoted, current = [], 0, False, ""
    for char in text:
        if char == '"':
            quoted = not quoted
        elif not quoted and char in "{(":
            depth += 1
        elif not quoted and char in "})":
            depth -= 1
        if char == sep and depth == 0 and not quoted:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def parse_nft(out: ProbeOutput) -> dict[str, Any]:
    """``nft --version; nft -a list ruleset`` -> version, tables, and which tables iptables-nft manages."""
    facts = _base(out)
    facts.update({"version": None, "tables": [], "iptables_nft_tables": [], "problems": []})
    if not facts["installed"]:
        return facts
    lines = out.stdout.splitlines()
    if lines and lines[0].startswith("nftables v"):
        facts["version"] = lines[0].split()[1].lstrip("v")
        lines = lines[1:]
    tables, problems = parse_nft_ruleset("\n".join(lines))
    facts["tables"], facts["problems"] = tables, problems
    managed = {f"{m[1]} {m[2]}" for m in _MANAGED.finditer(out.stdout + "\n" + out.stderr)}
    facts["iptables_nft_tables"] = sorted(managed)
    if facts["error"] is None:
        if any(p.startswith("truncated") for p in problems):
            facts["error"] = "the listing is cut off (a block is not closed)"
        elif problems and not tables:
            facts["error"] = f"unrecognized output: {problems[0]}"
        else:
            facts["readable"] = True
    return facts


def parse_ufw(out: ProbeOutput) -> dict[str, Any]:
    """``ufw status verbose`` -> status, default incoming policy and the rules (columns joined by one space).

    >>> f = parse_ufw(ProbeOutput("Status: active\\nDefault: deny (incoming), allow (outgoing)\\n\\n"
    ...     "To                         Action      From\\n--                         ------      ----\\n"
    ...     "22/tcp                     ALLOW IN    Anywhere\\n"))
    >>> f["status"], f["default_incoming"], f["rules"]
    ('active', 'deny', ['22/tcp ALLOW IN Anywhere'])
    """
    facts = _base(out)
    facts.update({"status": None, "default_incoming": None, "rules": []})
    if not facts["installed"]:
        return facts
    in_rules = False
    for line in out.stdout.splitlines():
        text = line.strip()
        if text.startswith("Status:"):
            facts["status"] = text.split(":", 1)[1].strip() or None
        elif text.startswith("Default:"):
            found = re.search(r"(\w+) \(incoming\)", text)
            facts["default_incoming"] = found[1] if found else None
        elif re.fullmatch(r"--+(\s+--+)*", text):
            in_rules = True
        elif in_rules and text:
            facts["rules"].append(" ".join(re.split(r"\s{2,}", text)))
    if facts["error"] is None:
        if facts["status"] in ("active", "inactive"):
            facts["readable"] = True
        else:
            facts["error"] = f"unrecognized output: {_last_line(out.stdout, out.stderr)!r}"
    return facts


_ZONE_KEYS = {"target": "target", "interfaces": "interfaces", "sources": "sources", "services": "services",
              "ports": "ports"}


def parse_firewalld(out: ProbeOutput) -> dict[str, Any]:
    """``firewall-cmd --state`` then ``--list-all`` -> state and the default zone.

    >>> f = parse_firewalld(ProbeOutput("running\\npublic (active)\\n  target: default\\n  services: ssh\\n"
    ...                                 "  ports: 9100/tcp\\n  rich rules: \\n"))
    >>> f["state"], f["zones"][0]["name"], f["zones"][0]["services"], f["zones"][0]["ports"]
    ('running', 'public', ['ssh'], ['9100/tcp'])
    """
    facts = _base(out)
    facts.update({"state": None, "zones": []})
    if not facts["installed"]:
        return facts
    lines = out.stdout.splitlines()
    first = lines[0].strip() if lines else ""
    if first in ("running", "not running"):
        facts["state"] = first
        lines = lines[1:]
    elif re.search(r"^\s*(FirewallD is )?not running\s*$", out.stderr, re.M | re.I):
        facts["state"] = "not running"  # firewall-cmd --state writes this to stderr (exit 252)
    zone: dict[str, Any] | None = None
    in_rich = False
    for line in lines:
        header = re.fullmatch(r"(\S+)(?: \(([^)]*)\))?\s*", line)
        if header and not line.startswith((" ", "\t")):
            flags = [flag.strip() for flag in (header[2] or "").split(",")]
            zone = {"name": header[1], "active": "active" in flags, "default": "default" in flags,
                    "target": None, "interfaces": [], "sources": [], "services": [], "ports": [], "rich_rules": []}
            facts["zones"].append(zone)
            in_rich = False
            continue
        if zone is None:
            continue
        key, sep, value = line.strip().partition(":")
        if in_rich and line.strip().startswith("rule "):
            zone["rich_rules"].append(line.strip())
        elif sep and key in _ZONE_KEYS:
            zone[_ZONE_KEYS[key]] = value.strip() if key == "target" else value.split()
            in_rich = False
        elif sep and key == "rich rules":
            in_rich = True
            if value.strip().startswith("rule "):
                zone["rich_rules"].append(value.strip())
        elif sep:
            in_rich = False
    if facts["state"] == "not running" and out.exit_status not in (None, 0):
        facts["error"], facts["permission_denied"] = None, False  # a stopped firewalld is a state
    if facts["error"] is None:
        if facts["state"] is not None:
            facts["readable"] = True
        else:
            facts["error"] = f"unrecognized output: {_last_line(out.stdout, out.stderr)!r}"
    return facts


def parse_addresses(out: ProbeOutput) -> list[dict[str, str]] | None:
    """``ip -o addr show`` -> [{iface, address (with prefix), scope}], None when it did not run.

    >>> parse_addresses(ProbeOutput("2: eth0    inet 10.0.0.5/24 brd 10.0.0.255 scope global eth0\\\\n"))
    [{'iface': 'eth0', 'address': '10.0.0.5/24', 'scope': 'global'}]
    """
    if not out.ok:
        return None
    found: list[dict[str, str]] = []
    for line in out.stdout.splitlines():
        match = re.match(r"\d+:\s+(\S+)\s+inet6?\s+(\S+)(?:.*?\bscope (\w+))?", line)
        if match and _interface(match[2]) is not None:
            found.append({"iface": match[1].split("@")[0], "address": match[2], "scope": match[3] or "global"})
    return found


def parse_port_range(text: str) -> list[int] | None:
    """``32768\\t60999`` -> [32768, 60999]; junk -> None."""
    numbers = text.split()
    if len(numbers) == 2 and all(n.isdigit() for n in numbers) and int(numbers[0]) <= int(numbers[1]) <= 65535:
        return [int(numbers[0]), int(numbers[1])]
    return None


# --- the rules as something that can be run on a packet --------------------------------------

NO, MAYBE, YES = 0, 1, 2  # a condition on a packet: three-valued


@dataclass(frozen=True)
class Packet:
    """A new TCP connection (SYN, conntrack NEW, no mark) as it arrives on this host."""

    family: str  # "ipv4" | "ipv6"
    dport: int
    src: IPAddress | None  # None: unknown
    dst: IPAddress | None
    iface: str | None


class Cond:
    """One match of a rule: YES, NO or MAYBE for a packet; ``label`` says what it is when undecided."""

    label = "a match preflight cannot evaluate"

    def test(self, pkt: Packet) -> int:
        raise NotImplementedError


@dataclass
class Const(Cond):
    value: int
    label: str = "a match preflight cannot evaluate"

    def test(self, pkt: Packet) -> int:
        return self.value


@dataclass
class Not(Cond):
    inner: Cond

    def __post_init__(self) -> None:
        self.label = self.inner.label

    def test(self, pkt: Packet) -> int:
        return 2 - self.inner.test(pkt)


@dataclass
class FamilyIs(Cond):
    family: str

    def test(self, pkt: Packet) -> int:
        return YES if pkt.family == self.family else NO


@dataclass
class PortIn(Cond):
    """Destination port in ``ranges`` (``unknown``: some element could not be read, e.g. a service name)."""

    ranges: list[Range]
    unknown: bool = False
    label: str = "a port list preflight cannot read"

    def test(self, pkt: Packet) -> int:
        if any(low <= pkt.dport <= high for low, high in self.ranges):
            return YES
        return MAYBE if self.unknown else NO


@dataclass
class SrcPortIn(Cond):
    """Source port: the client picks an ephemeral one, so only "any unprivileged port" or "privileged only"."""

    ranges: list[Range]
    unknown: bool = False
    label: str = "the source port"

    def test(self, pkt: Packet) -> int:
        if self.unknown:
            return MAYBE
        if uncovered((1024, 65535), self.ranges) == []:
            return YES
        if all(high < 1024 for _, high in self.ranges):
            return NO
        return MAYBE


_LOCAL_ONLY = [ipaddress.ip_network(n) for n in ("127.0.0.0/8", "224.0.0.0/4", "255.255.255.255/32", "::1/128",
                                                 "ff00::/8")]


@dataclass
class AddrIn(Cond):
    """Source or destination address in a list of networks/ranges (``unknown``: an ipset, a name...)."""

    field: str  # "src" | "dst"
    nets: list[IPNetwork]
    unknown: bool = False

    def __post_init__(self) -> None:
        self.label = "the source address" if self.field == "src" else "the destination address"

    def contains(self, address: IPAddress) -> bool:
        return any(address.version == net.version and address in net for net in self.nets)

    def test(self, pkt: Packet) -> int:
        address = pkt.src if self.field == "src" else pkt.dst
        if address is None:
            local = self.nets and all(any(net.version == loc.version and net.subnet_of(loc)  # type: ignore[arg-type]
                                          for loc in _LOCAL_ONLY) for net in self.nets)
            return NO if local and not self.unknown else MAYBE
        if self.contains(address):
            return YES
        return MAYBE if self.unknown else NO


@dataclass
class IfaceIs(Cond):
    """Input interface (``+`` / ``*`` at the end: a prefix)."""

    patterns: list[str]
    label: str = "the input interface"

    def test(self, pkt: Packet) -> int:
        def matches(pattern: str, name: str) -> bool:
            if pattern.endswith(("+", "*")):
                return name.startswith(pattern[:-1])
            return name == pattern

        if pkt.iface is not None:
            return YES if any(matches(p, pkt.iface) for p in self.patterns) else NO
        if all(_virtual(p.rstrip("+*")) for p in self.patterns):
            return NO
        return MAYBE


@dataclass
class ProtoIs(Cond):
    protos: set[str]
    unknown: bool = False

    def test(self, pkt: Packet) -> int:
        if self.protos & {"tcp", "6", "all", "0"}:
            return YES
        return MAYBE if self.unknown else NO


@dataclass
class CtStateIs(Cond):
    states: set[str]

    def test(self, pkt: Packet) -> int:
        return YES if "new" in self.states else NO


@dataclass
class MarkIs(Cond):
    """Packet/conntrack mark compared with ``value`` under ``mask``: new connections carry no mark (0)."""

    value: int
    mask: int

    def test(self, pkt: Packet) -> int:
        return YES if (0 & self.mask) == self.value else NO


def _virtual(name: str) -> bool:
    return name == "lo" or (name != "" and name.startswith(VIRTUAL_IFACES[1:]))


def _interface(text: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface | None:
    try:
        return ipaddress.ip_interface(text)
    except ValueError:
        return None


def _network(text: str) -> IPNetwork | None:
    try:
        return ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        return None


def _address_list(items: Iterable[str]) -> tuple[list[IPNetwork], bool]:
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
        net = _network(text)
        if net is None:
            unknown = True
        else:
            nets.append(net)
    return nets, unknown


@dataclass(eq=False)
class Rule:
    """One rule (or a chain policy) of one tool, with what is needed to name it and to undo it."""

    conds: list[Cond]
    verdict: str  # accept, drop, reject, return, jump, goto, queue, continue
    target: str | None
    text: str  # as the tool prints it
    tool: str  # iptables, ip6tables, iptables-legacy, ip6tables-legacy, nft
    table: str  # "filter" for iptables, "<family> <name>" for nft
    chain: str
    handle: int | None = None
    port_specific: bool = False  # matches on a destination port
    policy: bool = False

    def match(self, pkt: Packet) -> int:
        return min((cond.test(pkt) for cond in self.conds), default=YES)


@dataclass
class Chain:
    name: str
    rules: list[Rule] = field(default_factory=list)
    policy: Rule | None = None  # base chains: the rule standing for the policy (verdict accept or drop)
    device: str | None = None  # netdev ingress chains hook one device


@dataclass
class RuleSet:
    """The chains of one iptables tool or one nft table, and its base chains on the input path."""

    tool: str
    families: tuple[str, ...]
    chains: dict[str, Chain]
    bases: list[str]
    table: str
    manager: str | None = None  # "ufw" / "firewalld" when they own these rules


# iptables -j targets that decide; any other non-chain target (LOG, MARK, CT...) lets the packet go on.
_IPT_VERDICTS = {"ACCEPT": "accept", "DROP": "drop", "REJECT": "reject", "RETURN": "return", "QUEUE": "queue",
                 "NFQUEUE": "queue", "TARPIT": "drop"}
_RECENT = {"--set", "--update", "--rcheck", "--remove", "--seconds", "--hitcount", "--name", "--mask", "--rsource",
           "--rdest", "--reap", "--rttl"}


def _ipt_ports(text: str) -> list[Range] | None:
    """``22``, ``1024:65535``, ``:1023``, ``60000:60015,70`` -> ranges (None if unreadable)."""
    ranges: list[Range] = []
    for item in text.split(","):
        low, sep, high = item.partition(":")
        try:
            start = int(low) if low else 0
            end = (int(high) if high else 65535) if sep else start
        except ValueError:
            return None
        ranges.append((min(start, end), max(start, end)))
    return ranges


def _ipt_cond(option: str, args: list[str], module: str | None) -> tuple[Cond | None, bool]:
    """The condition of one iptables match option (None: no condition) and whether it is a dport match."""
    value = args[0] if args else ""
    if option in ("-s", "--source", "--src", "-d", "--destination", "--dst"):
        nets, unknown = _address_list(value.split(","))
        return AddrIn("src" if option in ("-s", "--source", "--src") else "dst", nets, unknown), False
    if option in ("--src-range", "--dst-range"):
        nets, unknown = _address_list([value])
        return AddrIn("src" if option == "--src-range" else "dst", nets, unknown), False
    if option in ("-p", "--protocol"):
        return ProtoIs({value.lower()}), False
    if option in ("-i", "--in-interface"):
        return IfaceIs([value]), False
    if option in ("-o", "--out-interface", "--comment", "--icmp-type", "--icmpv6-type", "--limit-iface-in",
                  "--limit-iface-out", "--log-prefix"):
        return None, False
    if option in ("-f", "--fragment"):
        return Const(NO), False
    if option in ("--dport", "--destination-port", "--dports", "--destination-ports"):
        ranges = _ipt_ports(value)
        return (PortIn(ranges) if ranges is not None else PortIn([], True)), True
    if option in ("--ports",):
        ranges = _ipt_ports(value)
        return (PortIn(ranges or [], True, "the source port")), True
    if option in ("--sport", "--source-port", "--sports", "--source-ports"):
        ranges = _ipt_ports(value)
        return (SrcPortIn(ranges) if ranges is not None else SrcPortIn([], True)), False
    if option in ("--state", "--ctstate"):
        return CtStateIs({state.lower() for state in value.split(",")}), False
    if option == "--syn":
        return Const(YES), False
    if option == "--tcp-flags" and len(args) == 2:
        examined, wanted = ({f.upper() for f in a.split(",")} for a in args)
        every = {"FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR"}
        examined = every if "ALL" in examined else examined - {"NONE"}
        wanted = every if "ALL" in wanted else wanted - {"NONE"}
        return Const(YES if ({"SYN"} & examined) == wanted else NO), False
    if option in ("--dst-type", "--src-type"):
        types = {t.upper() for t in value.split(",")}
        if option == "--dst-type":
            return Const(YES if types & {"LOCAL", "UNICAST"} else NO), False
        return Const(YES if "UNICAST" in types else NO), False
    if option == "--mark":
        mark, _, bits = value.partition("/")
        try:
            return MarkIs(int(mark, 0), int(bits, 0) if bits else 0xFFFFFFFF), False
        except ValueError:
            return Const(MAYBE, "a mark"), False
    if option == "--pkt-type":
        return Const(YES if value.lower() in ("unicast", "host") else NO), False
    if option == "--match-set":
        return Const(MAYBE, f"membership of ipset {value}"), False
    if option in ("--limit", "--limit-burst", "--hashlimit-upto", "--hashlimit-above", "--connlimit-above"):
        return Const(MAYBE, "a rate or connection limit"), False
    if option in _RECENT:
        return Const(MAYBE, "the recent list"), False
    if option in ("--invert", "--loose", "--validmark", "--accept-local") and module == "rpfilter":
        return None, False
    return Const(MAYBE, f"the match {option}{' (' + module + ')' if module else ''}"), False


_IPT_WORD = re.compile(r'"((?:[^"\\]|\\.)*)"|(\S+)')


def _ipt_split(line: str) -> list[str]:
    """Words of an ``iptables -S`` line: it double-quotes arguments with spaces (``--comment "a b"``)."""
    return [quoted.replace('\\"', '"') if quoted or plain is None else plain
            for quoted, plain in ((m[1], m[2]) for m in _IPT_WORD.finditer(line))]


def compile_iptables_rule(line: str, tool: str, user_chains: set[str]) -> Rule | None:
    """One ``-A CHAIN ...`` line of ``iptables -S`` as a Rule.

    >>> rule = compile_iptables_rule("-A INPUT -s 10.0.0.0/8 -p tcp -m tcp --dport 29500 -j DROP", "iptables", set())
    >>> peer = ipaddress.ip_address("10.1.2.3")
    >>> rule.verdict, rule.port_specific, rule.match(Packet("ipv4", 29500, peer, None, None)) == YES
    ('drop', True, True)
    """
    tokens = _ipt_split(line)
    if len(tokens) < 2 or tokens[0] != "-A":
        return None
    chain = tokens[1]
    conds: list[Cond] = []
    labels: set[str] = set()
    verdict, target, port_specific = "continue", None, False
    module: str | None = None
    negate = False
    index = 2
    while index < len(tokens):
        token = tokens[index]
        if token == "!":
            negate, index = True, index + 1
            continue
        if token in ("-j", "--jump", "-g", "--goto"):
            name = tokens[index + 1] if index + 1 < len(tokens) else ""
            if token in ("-g", "--goto"):
                verdict, target = "goto", name
            elif name in _IPT_VERDICTS:
                verdict = _IPT_VERDICTS[name]
            elif name in user_chains:
                verdict, target = "jump", name
            break
        args: list[str] = []
        index += 1
        while index < len(tokens) and not tokens[index].startswith("-") and tokens[index] != "!":
            args.append(tokens[index])
            index += 1
        if token in ("-m", "--match"):
            module = args[0] if args else None
            if module == "rpfilter":
                inverted = "--invert" in tokens[index:index + 4]
                conds.append(Const(NO if inverted else YES))
            elif module not in ("tcp", "udp", "comment", "multiport", "state", "conntrack", "addrtype", "mark",
                                "connmark", "pkttype", "icmp", "icmp6", "iprange", "set", "limit", "hashlimit",
                                "recent", "connlimit", "physdev") and not any(
                                    t.startswith("--") for t in tokens[index:index + 1]):
                conds.append(Const(MAYBE, f"the match -m {module}"))
            continue
        cond, is_port = _ipt_cond(token, args, module)
        if module == "physdev" and token.startswith("--physdev"):
            cond = Const(MAYBE, "the bridge port (physdev)")
        if cond is not None:
            if cond.label in labels and isinstance(cond, Const) and cond.value == MAYBE:
                negate = False
                continue
            labels.add(cond.label)
            conds.append(Not(cond) if negate else cond)
            port_specific = port_specific or (is_port and not negate)
        negate = False
    return Rule(conds, verdict, target, line, tool, "filter", chain, port_specific=port_specific)


def compile_iptables(facts: Mapping[str, Any], tool: str, family: str) -> RuleSet:
    """The filter table of one iptables tool; its base chain is INPUT (policy as ``-P INPUT ...``)."""
    lines = [line for line in facts.get("rules") or [] if isinstance(line, str)]
    user_chains = {str(c) for c in facts.get("chains") or []}
    user_chains |= {line.split()[1] for line in lines if len(line.split()) > 1}
    chains: dict[str, Chain] = {}
    for line in lines:
        rule = compile_iptables_rule(line, tool, user_chains)
        if rule is not None:
            chains.setdefault(rule.chain, Chain(rule.chain)).rules.append(rule)
    policies = facts.get("policies")
    policy = str(policies.get("INPUT", "ACCEPT") if isinstance(policies, Mapping) else "ACCEPT").upper()
    base = chains.setdefault("INPUT", Chain("INPUT"))
    base.policy = Rule([], "accept" if policy == "ACCEPT" else "drop", None, f"-P INPUT {policy}", tool, "filter",
                       "INPUT", policy=True)
    manager = "ufw" if any(name.startswith(("ufw-", "ufw6-")) for name in chains) else None
    return RuleSet(tool, (family,), chains, ["INPUT"], "filter", manager)


# --- nft rules ---------------------------------------------------------------------------------

_SERVICES = {"ssh": 22, "http": 80, "https": 443, "domain": 53, "bootps": 67, "bootpc": 68, "tftp": 69, "ntp": 123,
             "dhcpv6-client": 546, "dhcpv6-server": 547, "mdns": 5353, "ftp": 21, "telnet": 23, "smtp": 25,
             "submission": 587, "imap": 143, "imaps": 993, "pop3": 110, "pop3s": 995, "ldap": 389, "ldaps": 636,
             "kerberos": 88, "sunrpc": 111, "nfs": 2049, "microsoft-ds": 445, "netbios-ns": 137,
             "netbios-dgm": 138, "netbios-ssn": 139, "snmp": 161, "ipp": 631, "rsync": 873, "mysql": 3306,
             "postgresql": 5432, "http-alt": 8080, "websm": 9090, "ssdp": 1900, "openvpn": 1194}
_OPS = {"==": "==", "eq": "==", "!=": "!=", "ne": "!=", "<": "<", "lt": "<", ">": ">", "gt": ">", "<=": "<=",
        "le": "<=", ">=": ">=", "ge": ">="}
_L4_OTHER = {"udp", "udplite", "sctp", "dccp", "icmp", "icmpv6", "igmp", "esp", "ah", "comp", "ipcomp", "gre"}
_META_KEYS = {"iif", "iifname", "oif", "oifname", "mark", "pkttype", "l4proto", "nfproto", "protocol", "skuid",
              "skgid", "iiftype", "oiftype", "length", "priority", "random", "cpu", "cgroup", "nftrace"}
_LOG_OPTIONS = {"prefix", "level", "flags", "group", "snaplen", "queue-threshold"}
_NAT = {"masquerade", "snat", "dnat", "redirect", "tproxy", "dup", "fwd", "synproxy", "notrack"}

Token = str | list[str]


def nft_tokens(text: str) -> list[Token]:
    """Words of an nft rule; ``{ a, b }`` becomes a list of its elements, quotes and parentheses stay in words.

    >>> nft_tokens('iifname "eth 0" tcp dport { 22, 60000-60015 } ct state established,related accept')
    ['iifname', '"eth 0"', 'tcp', 'dport', ['22', '60000-60015'], 'ct', 'state', 'established,related', 'accept']
    """
    tokens: list[Token] = []
    index, current = 0, ""
    while index < len(text):
        char = text[index]
        if char == '"':
            end = text.find('"', index + 1)
            end = len(text) - 1 if end < 0 else end
            current += text[index:end + 1]
            index = end + 1
            continue
        if char in "({":
            closing = ")" if char == "(" else "}"
            depth, end = 0, index
            while end < len(text):
                if text[end] == char:
                    depth += 1
                elif text[end] == closing:
                    depth -= 1
                    if depth == 0:
                        break
                end += 1
            inner = text[index + 1:end]
            if char == "(":
                current += f"({inner})"
            else:
                if current:
                    tokens.append(current)
                    current = ""
                tokens.append([item.strip() for item in _split_top(inner, ",") if item.strip()])
            index = end + 1
            continue
        if char.isspace():
            if current:
                tokens.append(current)
            current = ""
        else:
            current += char
        index += 1
    if current:
        tokens.append(current)
    return tokens


@dataclass
class _NftContext:
    family: str
    table: str
    chain: str
    sets: Mapping[str, Mapping[str, Any]]


def _elements(value: Token | None, ctx: _NftContext) -> tuple[list[str], bool]:
    """The items of a value: a word, a comma word, ``{...}`` or ``@set`` (its elements); True if unresolvable."""
    if value is None:
        return [], True
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    unknown = False
    for item in items:
        if item.startswith("@"):
            nft_set = ctx.sets.get(item[1:])
            if nft_set is None:
                unknown = True
            else:
                out += [str(e) for e in nft_set.get("elements") or []]
        else:
            out += [part for part in item.split(",") if part] if not isinstance(value, list) else [item]
    return [re.split(r"\s+(?:timeout|expires|counter|comment)\b", item)[0].strip() for item in out], unknown


def _nft_ports(items: Iterable[str]) -> tuple[list[Range], bool]:
    ranges: list[Range] = []
    unknown = False
    for item in items:
        low, sep, high = item.partition("-")
        ends = []
        for text in (low, high) if sep else (low,):
            text = text.strip().strip('"')
            number = int(text) if text.isdigit() else _SERVICES.get(text)
            if number is None:
                unknown = True
                break
            ends.append(number)
        else:
            ranges.append((min(ends), max(ends)))
    return ranges, unknown


def _compare(op: str, ranges: list[Range], unknown: bool) -> tuple[list[Range], bool]:
    """``< 1024`` and friends as ranges."""
    if op in ("==", "!=") or not ranges or unknown:
        return ranges, unknown or op not in ("==", "!=")
    value = ranges[0][0]
    return {"<": [(0, value - 1)], "<=": [(0, value)], ">": [(value + 1, 65535)], ">=": [(value, 65535)]}[op], False


def _selector_cond(selector: list[str], op: str, mask: str | None, value: Token | None,
                   ctx: _NftContext) -> tuple[Cond | None, bool]:
    """The condition ``selector op value`` puts on the packet, and whether it is a dport match."""
    head = selector[0]
    key = selector[1] if len(selector) > 1 else ""
    items, unknown = _elements(value, ctx)
    cond: Cond | None
    is_port = False
    if head in _L4_OTHER:
        return Const(NO), False
    if head in ("tcp", "th") and key == "dport":
        ranges, bad = _compare(op, *_nft_ports(items))
        cond, is_port = PortIn(ranges, bad or unknown), True
        op = "==" if op in ("<", "<=", ">", ">=") else op
    elif head in ("tcp", "th") and key == "sport":
        ranges, bad = _nft_ports(items)
        cond = SrcPortIn(ranges, bad or unknown or op not in ("==", "!="))
    elif head == "tcp" and key == "flags":
        flags = {f for item in items for f in re.split(r"[|,\s]+", item) if f}
        if mask is not None:
            mask_flags = set(re.split(r"[|(),/\s]+", mask)) - {""}
            cond = Const(YES if ({"syn"} & mask_flags) == flags else NO)
        else:
            cond = Const(YES if "syn" in flags else NO)
    elif head == "tcp":
        cond = Const(MAYBE, f"the TCP header field {key}")
    elif head in ("ip", "ip6") and key in ("saddr", "daddr"):
        nets, bad = _address_list(items)
        family = FamilyIs("ipv4" if head == "ip" else "ipv6")
        address = AddrIn("src" if key == "saddr" else "dst", nets, bad or unknown or op not in ("==", "!="))
        return _And([family, Not(address) if op == "!=" else address]), False
    elif head in ("ip", "ip6") and key in ("protocol", "nexthdr"):
        family = FamilyIs("ipv4" if head == "ip" else "ipv6")
        proto = ProtoIs({i.lower() for i in items}, unknown)
        return _And([family, Not(proto) if op == "!=" else proto]), False
    elif head in ("ip", "ip6"):
        return _And([FamilyIs("ipv4" if head == "ip" else "ipv6"), Const(MAYBE, f"the {head} header field {key}")]), \
            False
    elif head == "meta" and key in ("iifname", "iif"):
        cond = IfaceIs([i.strip('"') for i in items]) if not unknown else Const(MAYBE, "the input interface")
    elif head == "meta" and key in ("oifname", "oif"):
        cond = None
    elif head == "meta" and key == "l4proto":
        cond = ProtoIs({i.lower() for i in items}, unknown)
    elif head == "meta" and key in ("nfproto", "protocol"):
        names = {i.lower() for i in items}
        cond = _Family({"ipv4" for n in names if n in ("ipv4", "ip")} | {"ipv6" for n in names if n in ("ipv6", "ip6")})
    elif head in ("meta", "ct") and key == "mark":
        try:
            cond = MarkIs(int(items[0], 0), int(mask, 0) if mask else 0xFFFFFFFF) if items else Const(MAYBE, "a mark")
        except ValueError:
            cond = Const(MAYBE, "a mark")
    elif head == "meta" and key == "pkttype":
        cond = Const(YES if {i.lower() for i in items} & {"host", "unicast"} else NO)
    elif head == "ct" and key == "state":
        states = {s.strip().lower() for i in items for s in i.split(",")}
        cond = CtStateIs(states) if mask is None else Const(YES if "new" in states else NO)
    elif head == "ct" and key == "status":
        cond = Const(NO)  # dnat, snat, assured, seen-reply...: none on a new incoming connection
    elif head == "ct" and key == "direction":
        cond = Const(YES if "original" in items else NO)
    elif head == "ct" and key == "helper":
        cond = Const(NO)
    elif head == "fib":
        result = selector[-1]
        values = {i.lower() for i in items}
        if result == "type":
            wanted = {"local", "unicast"} if "daddr" in selector else {"unicast"}
            cond = Const(YES if values & wanted else NO)
        elif result in ("oif", "oifname") and values == {"missing"}:
            cond = Const(NO)  # reverse path filter: a peer's address routes back
        else:
            cond = Const(MAYBE, "a route lookup (fib)")
    else:
        cond = Const(MAYBE, f"the match {' '.join(selector)}")
    if cond is not None and op == "!=":
        cond = Not(cond)
    return cond, is_port and op != "!="


@dataclass
class _And(Cond):
    parts: list[Cond]

    def __post_init__(self) -> None:
        self.label = self.parts[-1].label

    def test(self, pkt: Packet) -> int:
        return min(part.test(pkt) for part in self.parts)


@dataclass
class _Family(Cond):
    families: set[str]

    def test(self, pkt: Packet) -> int:
        return YES if pkt.family in self.families else NO


def _nft_verdict(words: Sequence[str]) -> tuple[str, str | None]:
    if not words:
        return "continue", None
    if words[0] in ("jump", "goto") and len(words) > 1:
        return words[0], words[1]
    return {"accept": "accept", "drop": "drop", "reject": "reject", "return": "return", "queue": "queue",
            "continue": "continue"}.get(words[0], "continue"), None


def compile_nft_rule(text: str, handle: int | None, ctx: _NftContext) -> list[Rule]:
    """One nft rule as Rules (a verdict map gives one Rule per element).

    >>> ctx = _NftContext("inet", "t", "input", {})
    >>> [r.verdict for r in compile_nft_rule("tcp dport vmap { 22 : accept, 29500 : drop }", 7, ctx)]
    ['accept', 'drop']
    >>> rule = compile_nft_rule("ip saddr != 10.0.0.0/8 tcp dport 29500 counter reject", 8, ctx)[0]
    >>> rule.match(Packet("ipv4", 29500, ipaddress.ip_address("10.0.0.2"), None, None))
    0
    """
    tokens = nft_tokens(text)
    conds: list[Cond] = []
    verdict, target = "continue", None
    port_specific = False
    vmaps: list[tuple[list[str], list[str]]] = []
    index = 0

    def word(at: int) -> str:
        token = tokens[at] if at < len(tokens) else ""
        return token if isinstance(token, str) else ""

    while index < len(tokens):
        token = tokens[index]
        if isinstance(token, list):
            index += 1
            continue
        if token in ("accept", "drop", "return", "continue"):
            verdict = token
            index += 1
            continue
        if token in ("reject", "queue"):
            verdict = token
            break
        if token in ("jump", "goto"):
            verdict, target = token, word(index + 1)
            index += 2
            continue
        if token == "counter":
            index += 1
            if word(index) == "name":
                index += 2
            while word(index) in ("packets", "bytes"):
                index += 2
            continue
        if token == "log":
            index += 1
            while word(index) in _LOG_OPTIONS:
                index += 2
            continue
        if token == "limit":
            conds.append(Const(MAYBE, "a rate limit"))
            index += 1
            while word(index) in ("rate", "over", "burst") or re.fullmatch(r"\d+(/\w+)?|packets|bytes|kbytes|mbytes",
                                                                          word(index)):
                index += 1
            continue
        if token == "quota":
            conds.append(Const(MAYBE, "a quota"))
            index += 1
            while word(index) and word(index) not in ("accept", "drop", "reject", "counter", "jump", "goto"):
                index += 1
            continue
        if token == "comment":
            index += 2
            continue
        if token in _NAT:
            break  # nat and other statements end what a filter evaluation needs
        if token in ("add", "update", "delete") and word(index + 1).startswith("@"):
            index += 3
            continue
        if token == "flow":
            index += 3
            continue
        if token == "xt":
            kind, name = word(index + 1), word(index + 2).strip('"')
            if kind == "match":
                conds.append(Const(MAYBE, f"the iptables match {name} (xt)"))
            elif name in _IPT_VERDICTS:
                verdict = _IPT_VERDICTS[name]
            index += 3
            continue
        # a selector: meta/ip/ip6/tcp/udp/th/ct/fib/... then [op] [& mask] value, or "set" (a statement)
        selector = [token]
        index += 1
        if token in _META_KEYS:
            selector = ["meta", token]
        elif token == "fib":
            while index < len(tokens) and word(index) not in ("oif", "oifname", "type") and word(index):
                selector.append(word(index))
                index += 1
            selector.append(word(index))
            index += 1
        elif token in ("meta", "ip", "ip6", "tcp", "udp", "udplite", "sctp", "dccp", "th", "ct", "icmp", "icmpv6",
                       "igmp", "esp", "ah", "comp", "ipcomp", "ether", "vlan", "arp", "gre"):
            selector.append(word(index))
            index += 1
        else:
            conds.append(Const(MAYBE, f"the match {token}"))
            continue
        if word(index) == ".":  # a concatenation: ip saddr . tcp dport @set
            while index < len(tokens) and not (word(index).startswith("@") or isinstance(tokens[index], list)):
                index += 1
            conds.append(Const(MAYBE, "a concatenated set lookup"))
            index += 1
            continue
        if word(index) == "set":
            index += 2
            continue
        mask = None
        if word(index) == "&":
            mask, index = word(index + 1), index + 2
        op = "=="
        if word(index) in _OPS:
            op, index = _OPS[word(index)], index + 1
        if word(index) == "vmap":
            value = tokens[index + 1] if index + 1 < len(tokens) else None
            elements, _ = _elements(value, ctx) if value is not None else ([], True)
            vmaps.append((selector, elements))
            index += 2
            continue
        value = tokens[index] if index < len(tokens) else None
        index += 1
        if word(index) == "/":  # tcp flags syn / fin,syn,rst,ack: the mask after the value
            mask, index = mask or word(index + 1), index + 2
        cond, is_port = _selector_cond(selector, op, mask, value, ctx)
        if cond is not None:
            conds.append(cond)
        port_specific = port_specific or is_port
    table = f"{ctx.family} {ctx.table}"
    if not vmaps:
        return [Rule(conds, verdict, target, text, "nft", table, ctx.chain, handle, port_specific)]
    selector, elements = vmaps[-1]
    rules = []
    for element in elements:
        key, sep, action = element.rpartition(" : ")
        if not sep:
            continue
        cond, is_port = _selector_cond(selector, "==", None, key.strip(), ctx)
        element_verdict, element_target = _nft_verdict(action.split())
        rules.append(Rule(conds + ([cond] if cond else []), element_verdict, element_target, text, "nft", table,
                          ctx.chain, handle, port_specific or is_port))
    return rules


_NFT_FAMILIES = {"ip": ("ipv4",), "ip6": ("ipv6",), "inet": ("ipv4", "ipv6"), "netdev": ("ipv4", "ipv6")}
_INPUT_HOOKS = ("prerouting", "input", "ingress")


def compile_nft(facts: Mapping[str, Any], skip: Iterable[str] = ()) -> list[RuleSet]:
    """One RuleSet per nft table that has a base chain on the input path (``skip``: "family name" tables)."""
    skipped = set(skip)
    rulesets: list[RuleSet] = []
    for table in facts.get("tables") or []:
        if not isinstance(table, Mapping):
            continue
        family, name = str(table.get("family")), str(table.get("name"))
        if family not in _NFT_FAMILIES or f"{family} {name}" in skipped or "dormant" in (table.get("flags") or []):
            continue
        sets = {str(s.get("name")): s for s in table.get("sets") or [] if isinstance(s, Mapping)}
        chains: dict[str, Chain] = {}
        bases: list[str] = []
        for raw in table.get("chains") or []:
            if not isinstance(raw, Mapping):
                continue
            chain_name = str(raw.get("name"))
            ctx = _NftContext(family, name, chain_name, sets)
            chain = Chain(chain_name, device=raw.get("device"))
            for rule in raw.get("rules") or []:
                if isinstance(rule, Mapping):
                    handle = rule.get("handle")
                    chain.rules += compile_nft_rule(str(rule.get("text", "")),
                                                    handle if isinstance(handle, int) else None, ctx)
            if raw.get("hook") in _INPUT_HOOKS:
                policy = str(raw.get("policy") or "accept").lower()
                chain.policy = Rule([], "drop" if policy == "drop" else "accept", None, f"policy {policy}", "nft",
                                    f"{family} {name}", chain_name, policy=True)
                bases.append(chain_name)
            chains[chain_name] = chain
        if bases:
            manager = "firewalld" if name == "firewalld" else None
            rulesets.append(RuleSet("nft", _NFT_FAMILIES[family], chains, bases, f"{family} {name}", manager))
    return rulesets


# --- evaluation ------------------------------------------------------------------------------

Outcome = tuple[str, Rule | None]  # ("accept" | "drop" | "return", the deciding rule for drops)


class _Walker:
    """All outcomes of one packet through one ruleset's chains (undecided matches are followed both ways)."""

    def __init__(self, ruleset: RuleSet, pkt: Packet) -> None:
        self.ruleset, self.pkt = ruleset, pkt
        self.memo: dict[str, frozenset[Outcome]] = {}
        self.active: set[str] = set()
        self.undecided: set[str] = set()

    def chain(self, name: str) -> frozenset[Outcome]:
        if name in self.memo:
            return self.memo[name]
        chain = self.ruleset.chains.get(name)
        if chain is None or name in self.active or len(self.active) > 64:
            return frozenset({("return", None)})
        self.active.add(name)
        after: frozenset[Outcome] = frozenset({("return", None)})
        for rule in reversed(chain.rules):
            matched = rule.match(self.pkt)
            if matched == NO:
                continue
            taken = self._apply(rule, after)
            if matched == MAYBE:
                if taken != after:  # an undecided match that changes what can happen
                    self.undecided |= {c.label for c in rule.conds if c.test(self.pkt) == MAYBE}
                taken = taken | after
            after = taken
        self.active.discard(name)
        self.memo[name] = after
        return after

    def _apply(self, rule: Rule, after: frozenset[Outcome]) -> frozenset[Outcome]:
        if rule.verdict == "accept":
            return frozenset({("accept", None)})
        if rule.verdict in ("drop", "reject"):
            return frozenset({("drop", rule)})
        if rule.verdict == "queue":
            self.undecided.add("the verdict of a userspace queue (NFQUEUE)")
            return frozenset({("drop", rule), ("accept", None)})
        if rule.verdict == "return":
            return frozenset({("return", None)})
        if rule.verdict in ("jump", "goto") and rule.target in self.ruleset.chains:
            sub = self.chain(rule.target)
            if rule.verdict == "goto":
                return sub
            kept = frozenset(o for o in sub if o[0] != "return")
            return kept | after if any(o[0] == "return" for o in sub) else kept
        return after

    def base(self, name: str) -> frozenset[Outcome]:
        """Outcomes of a base chain: falling off its end (or returning) applies its policy."""
        chain = self.ruleset.chains[name]
        policy = chain.policy
        end: Outcome = ("drop", policy) if policy is not None and policy.verdict == "drop" else ("accept", None)
        outcomes = frozenset(end if o[0] == "return" else o for o in self.chain(name))
        if chain.device is not None:
            on_device = IfaceIs([chain.device]).test(self.pkt)
            if on_device == NO:
                return frozenset({("accept", None)})
            if on_device == MAYBE:
                self.undecided.add("the input interface")
                return outcomes | {("accept", None)}
        return outcomes


@dataclass(frozen=True)
class Verdict:
    """What the base chains on the input path do with one packet."""

    definite: tuple[Rule, ...]  # a base chain drops it on every path: the rules that do
    possible: tuple[Rule, ...]  # some path drops it
    undecided: frozenset[str]


def verdict(ruleset: RuleSet | Sequence[RuleSet], pkt: Packet) -> Verdict:
    """Run ``pkt`` through every base chain of the rulesets (of its family); a drop in any one is final."""
    definite: list[Rule] = []
    possible: list[Rule] = []
    undecided: set[str] = set()
    for rs in [ruleset] if isinstance(ruleset, RuleSet) else ruleset:
        if pkt.family not in rs.families:
            continue
        walker = _Walker(rs, pkt)
        for base in rs.bases:
            outcomes = walker.base(base)
            drops = [rule for kind, rule in outcomes if kind == "drop" and rule is not None]
            possible += drops
            if drops and len(drops) == len(outcomes):
                definite += drops
        undecided |= walker.undecided
    return Verdict(tuple(dict.fromkeys(definite)), tuple(dict.fromkeys(possible)), frozenset(undecided))


# --- the check ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """Ports the job needs open on a host."""

    kind: str  # "master" | "hccl" | "ephemeral"
    label: str
    ranges: tuple[Range, ...]


@dataclass(frozen=True)
class Path:
    """How one peer's connections arrive: its source address, this host's address and interface."""

    family: str
    src: IPAddress | None
    dst: IPAddress | None
    iface: str | None


@dataclass
class _Issue:
    target: Target
    blocked: bool  # every path of the peer; else some path or an undecided condition
    rules: tuple[Rule, ...]
    ports: list[Range] = field(default_factory=list)
    peers: set[str] = field(default_factory=set)
    undecided: set[str] = field(default_factory=set)
    paths: set[str] = field(default_factory=set)  # "IPv6", "IPv4 via eth1": the paths hit when not all are


_STOP = {"ufw": "ufw disable", "firewalld": "systemctl disable --now firewalld"}
_SHOW = {"ufw": "ufw status verbose", "firewalld": "firewall-cmd --list-all"}
_TOOLS = (("iptables", "ipv4"), ("ip6tables", "ipv6"), ("iptables_legacy", "ipv4"), ("ip6tables_legacy", "ipv6"))


def build_rulesets(facts: Mapping[str, Any]) -> tuple[list[RuleSet], list[str]]:
    """Every readable ruleset of a host, and "tool: error" for the ones that could not be read.

    iptables on nf_tables shows its tables in ``nft list ruleset`` too: they are judged as iptables rules.
    """
    rulesets: list[RuleSet] = []
    unreadable: list[str] = []
    shown_by_iptables: set[str] = set()
    for key, family in _TOOLS:
        tool = facts.get(key)
        if not isinstance(tool, Mapping) or not tool.get("installed"):
            continue
        name = key.replace("_", "-")
        if not tool.get("readable"):
            unreadable.append(f"{name}: {tool.get('error') or 'unreadable'}")
            continue
        rulesets.append(compile_iptables(tool, name, family))
        if tool.get("backend") == "nf_tables":
            shown_by_iptables.add("ip filter" if family == "ipv4" else "ip6 filter")
    nft = facts.get("nft")
    if isinstance(nft, Mapping) and nft.get("installed"):
        if nft.get("readable"):
            rulesets += compile_nft(nft, shown_by_iptables)  # iptables-nft always uses the tables named filter
        else:
            unreadable.append(f"nft: {nft.get('error') or 'unreadable'}")
    return rulesets, unreadable


def _ip(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None


Interface = ipaddress.IPv4Interface | ipaddress.IPv6Interface


def _global_addresses(facts: Mapping[str, Any]) -> list[tuple[str, Interface]]:
    """(interface, address) of a host's global addresses, loopback and container/VM bridges left out."""
    found = []
    for entry in facts.get("addresses") or []:
        if not isinstance(entry, Mapping):
            continue
        iface = _interface(str(entry.get("address", "")))
        name = str(entry.get("iface", ""))
        if iface is not None and entry.get("scope") == "global" and not _virtual(name):
            found.append((name, iface))
    return found


def _training_ifaces(host: Host | None) -> list[str]:
    names: list[str] = []
    for key in TRAINING_IFACE_ENV:
        for item in (host.env.get(key, "") if host else "").split(","):
            item = item.strip()
            if item and not item.startswith("^"):
                names.append(item.lstrip("="))
    return names


class Topology:
    """Every host's addresses, indexed by subnet, to find how peers reach each other."""

    def __init__(self, facts: Mapping[str, Facts], ctx: EvalContext) -> None:
        self.hosts = {h.name: h for h in ctx.hosts}
        self.order = [h.name for h in ctx.hosts] or list(facts)
        self.addresses = {name: _global_addresses(facts.get(name, {})) for name in self.order}
        self.by_subnet: dict[IPNetwork, list[tuple[str, IPAddress]]] = {}
        for name, found in self.addresses.items():
            for _, iface in found:
                self.by_subnet.setdefault(iface.network, []).append((name, iface.ip))
        # When no subnet is shared: the address in hosts.yaml, else any of the peer's addresses.
        self.fallback: dict[str, list[Path]] = {}
        for name in self.order:
            literal = _ip(self.hosts[name].address) if name in self.hosts else None
            if literal is not None:
                found_paths = [Path("ipv4" if literal.version == 4 else "ipv6", literal, None, None)]
            else:
                found_paths = [Path("ipv4" if a.version == 4 else "ipv6", a.ip, None, None)
                               for _, a in self.addresses[name]]
            self.fallback[name] = found_paths or [Path("ipv4", None, None, None)]

    def paths(self, name: str) -> dict[str, list[Path]]:
        """peer -> the paths its connections to ``name`` may take.

        A path per address pair in a shared subnet (arriving on this host's interface there); with none
        shared (routed fabrics, or addresses unknown) the peer's address from hosts.yaml, else any of its.
        """
        shared: dict[str, list[Path]] = {}
        wanted = _training_ifaces(self.hosts.get(name))
        for own_iface, own in self.addresses.get(name, []):
            family = "ipv4" if own.version == 4 else "ipv6"
            for peer, address in self.by_subnet.get(own.network, []):
                if peer != name:
                    shared.setdefault(peer, []).append(Path(family, address, own.ip, own_iface))
        paths: dict[str, list[Path]] = {}
        for peer in self.order:
            if peer == name:
                continue
            found = shared.get(peer)
            if found and wanted:
                found = [p for p in found if any(p.iface and p.iface.startswith(w) for w in wanted)] or found
            paths[peer] = found or self.fallback[peer]
        if not paths:  # a one-host run: some other host, from somewhere
            paths[""] = [Path("ipv4", None, None, None)]
        return paths


def targets_for(name: str, facts: Mapping[str, Any], ctx: EvalContext) -> tuple[list[Target], list[str]]:
    """The ports to check on ``name`` and notes on how they were worked out."""
    cluster = ctx.cluster
    notes: list[str] = []
    targets: list[Target] = []
    is_master = cluster.master == name
    master = cluster.master_port
    label = "master port" if is_master else (f"master port; {cluster.master} is the master, so this matters only "
                                             "if the job's master moves here")
    targets.append(Target("master", label, ((master, master),)))
    taken: list[Range] = [(master, master)]
    if cluster.accelerator == "npu":
        host = next((h for h in ctx.hosts if h.name == name), None)
        setting = host.env.get(HCCL_RANGE_ENV) if host else None
        if setting is not None and setting.strip().lower() == "auto":
            notes.append(f"{HCCL_RANGE_ENV}=auto: HCCL listens on ephemeral ports")
        elif setting is not None and parse_port_list(setting):
            ranges = merge_ranges(parse_port_list(setting) or [])
            targets.append(Target("hccl", f"HCCL host ports, {HCCL_RANGE_ENV}={setting.strip()}", tuple(ranges)))
            taken += ranges
        else:
            hccl = hccl_ports(name, ctx)
            if hccl.base is not None:
                targets.append(Target("hccl", f"HCCL host ports, {hccl.why}", (hccl.range,)))
                taken.append(hccl.range)
    ephemeral = facts.get("ephemeral")
    low, high = (ephemeral[0], ephemeral[1]) if isinstance(ephemeral, list) and len(ephemeral) == 2 \
        else EPHEMERAL_DEFAULT
    rest = [r for r in [(low, high)] for r in uncovered(r, taken)]
    targets.append(Target("ephemeral", f"ephemeral range {low}-{high}, where NCCL, gloo and torch workers listen",
                          tuple(rest)))
    return targets, notes


def _segments(ranges: Iterable[Range], cuts: Sequence[int]) -> list[Range]:
    """Split ``ranges`` where any rule's port match can change (``cuts``: first ports of new pieces)."""
    pieces: list[Range] = []
    for low, high in ranges:
        start = low
        for cut in cuts:
            if start < cut <= high:
                pieces.append((start, cut - 1))
                start = cut
        pieces.append((start, high))
    return pieces


def _all_conds(conds: Iterable[Cond]) -> Iterable[Cond]:
    for cond in conds:
        yield cond
        if isinstance(cond, Not):
            yield from _all_conds([cond.inner])
        elif isinstance(cond, _And):
            yield from _all_conds(cond.parts)


class Evaluator:
    """The rulesets of one host, with caches: hosts with the same rules share one Evaluator.

    Packets that every rule treats alike (same answers for every address match, interface and port
    piece) share one evaluation, so a thousand peers are a handful of evaluations.
    """

    def __init__(self, rulesets: Sequence[RuleSet]) -> None:
        self.rulesets = list(rulesets)
        conds = [c for rs in rulesets for ch in rs.chains.values() for r in ch.rules for c in _all_conds(r.conds)]
        ports = [r for c in conds if isinstance(c, PortIn) for r in c.ranges]
        self.cuts = sorted({edge for low, high in ports for edge in (low, high + 1)})
        self.src = [c for c in conds if isinstance(c, AddrIn) and c.field == "src"]
        self.dst = [c for c in conds if isinstance(c, AddrIn) and c.field == "dst"]
        self._vectors: dict[tuple[str, IPAddress | None], tuple[bool, ...] | None] = {}
        self._keys: dict[int, tuple[Path, tuple[Any, ...]]] = {}
        self._verdicts: dict[tuple[Any, ...], Verdict] = {}

    def _vector(self, field_: str, address: IPAddress | None) -> tuple[bool, ...] | None:
        if address is None:
            return None
        key = (field_, address)
        if key not in self._vectors:
            self._vectors[key] = tuple(c.contains(address) for c in (self.src if field_ == "src" else self.dst))
        return self._vectors[key]

    def key(self, path: Path) -> tuple[Any, ...]:
        cached = self._keys.get(id(path))
        if cached is None or cached[0] is not path:
            cached = (path, (path.family, self._vector("src", path.src), self._vector("dst", path.dst), path.iface))
            self._keys[id(path)] = cached
        return cached[1]

    def verdict(self, path: Path, port: int) -> Verdict:
        key = (*self.key(path), port)
        if key not in self._verdicts:
            self._verdicts[key] = verdict(self.rulesets, Packet(path.family, port, path.src, path.dst, path.iface))
        return self._verdicts[key]


def analyze(evaluator: Evaluator, targets: Sequence[Target], paths: Mapping[str, Sequence[Path]]) -> list[_Issue]:
    """Every (target ports, rules) that drop connections from some peer, grouped for the report."""
    alike: dict[tuple[Any, ...], tuple[Sequence[Path], list[str]]] = {}
    for peer, peer_paths in paths.items():
        key = tuple(evaluator.key(p) for p in peer_paths)
        alike.setdefault(key, (peer_paths, []))[1].append(peer)
    issues: dict[tuple[Any, ...], _Issue] = {}
    for target in targets:
        for low, high in _segments(target.ranges, evaluator.cuts):
            for peer_paths, peers in alike.values():
                outcomes = [evaluator.verdict(p, low) for p in peer_paths]
                blocked = all(o.definite for o in outcomes)
                rules = tuple(dict.fromkeys(r for o in outcomes for r in (o.definite if blocked else o.possible)))
                if not rules:
                    continue
                undecided = set() if blocked else {u for o in outcomes if o.possible for u in o.undecided}
                issue = issues.setdefault((target.kind, blocked, tuple(id(r) for r in rules), tuple(peers)),
                                          _Issue(target, blocked, rules))
                issue.ports = merge_ranges([*issue.ports, (low, high)])
                issue.peers.update(peers)
                issue.undecided |= undecided
                if not blocked:
                    issue.paths |= {("IPv6" if p.family == "ipv6" else "IPv4") + (f" via {p.iface}" if p.iface else "")
                                    for p, o in zip(peer_paths, outcomes, strict=True) if o.possible}
    merged: dict[tuple[Any, ...], _Issue] = {}
    for issue in issues.values():  # peers with different paths but the same story: one issue
        story = (issue.target.kind, issue.blocked, tuple(id(r) for r in issue.rules), tuple(issue.ports))
        if story in merged:
            merged[story].peers |= issue.peers
            merged[story].undecided |= issue.undecided
            merged[story].paths |= issue.paths
        else:
            merged[story] = issue
    return list(merged.values())


def _rule_name(rule: Rule) -> str:
    where = "" if rule.tool != "nft" else f" (table {rule.table}, chain {rule.chain})"
    if rule.policy and rule.tool != "nft":
        return f"{rule.tool} policy `{rule.text}`"
    if rule.policy:
        return f"nft chain policy `{rule.text}`{where}"
    return f"{rule.tool} rule `{rule.text}`{where}"


def _cluster_networks(facts: Mapping[str, Facts], ctx: EvalContext) -> dict[int, str]:
    """IP version -> the network of the hosts' addresses (a subnet all are in, else the smallest covering
    prefix), for remedies; a placeholder when the addresses are unknown."""
    networks: dict[int, str] = {}
    for version, bits in ((4, 32), (6, 128)):
        addresses = [a for h in ctx.hosts for a in [_ip(h.address)] if a is not None and a.version == version]
        found = [iface for host in facts for _, iface in _global_addresses(facts[host]) if iface.version == version]
        if len(addresses) < len(ctx.hosts) or not addresses:
            firsts: dict[str, IPAddress] = {}
            for host in facts:
                for _, iface in _global_addresses(facts[host]):
                    if iface.version == version:
                        firsts.setdefault(host, iface.ip)
            addresses = list(firsts.values())
        name = "IPv6 " if version == 6 else ""
        networks[version] = f"<cluster {name}network>"
        if not addresses:
            continue
        for subnet in sorted({i.network for i in found}, key=lambda n: n.prefixlen, reverse=True):
            if all(a in subnet for a in addresses):
                networks[version] = str(subnet)
                break
        else:
            low, high = int(min(addresses)), int(max(addresses))
            networks[version] = str(ipaddress.ip_network((low, bits - (low ^ high).bit_length()), strict=False))
    return networks


def _catch_all(rule: Rule) -> bool:
    """A policy, or a rule that matches no port and no source: removing it would open everything."""
    return rule.policy or not any(isinstance(c, (PortIn, AddrIn)) for c in _all_conds(rule.conds))


def _remedy(group: _Group, facts: Mapping[str, Any], networks: Mapping[int, str]) -> str:
    ports = format_port_list(merge_ranges(r for _, i in group.issues for r in i.ports))
    everything = any(i.target.kind == "ephemeral" for _, i in group.issues)
    manager = _managers(facts)
    commands = []
    for rule in group.rules:
        widen = everything or not rule.port_specific
        ipv6 = rule.tool.startswith("ip6") or rule.table.startswith("ip6 ")
        network = networks[6 if ipv6 else 4]
        if rule.chain.startswith(("ufw-", "ufw6-")) or ("ufw" in manager and rule.tool != "nft" and rule.policy):
            commands.append(f"ufw insert 1 allow from {network}" if widen
                            else f"ufw insert 1 allow proto tcp from {network} to any port {ports.replace('-', ':')}")
        elif rule.table.endswith(" firewalld") or ("firewalld" in manager and rule.tool == "nft" and rule.policy):
            commands.append(f"firewall-cmd --permanent --zone=trusted --add-source={network} && firewall-cmd --reload"
                            if widen else f"firewall-cmd --permanent --add-port={ports}/tcp && firewall-cmd --reload")
        elif rule.tool != "nft":
            if _catch_all(rule):
                spec = f"-s {network} -j ACCEPT" if widen else \
                    f"-p tcp -m multiport --dports {ports.replace('-', ':')} -j ACCEPT"
                commands.append(f"{rule.tool} -I {rule.chain} {spec}")
            else:
                commands.append(f"{rule.tool} -D {rule.text[3:]}")
        else:
            family, _, table = rule.table.partition(" ")
            if _catch_all(rule):
                match = (f"{'ip6' if ipv6 else 'ip'} saddr {network}" if widen
                         else f"tcp dport {{ {ports.replace(',', ', ')} }}")
                commands.append(f"nft insert rule {family} {table} {rule.chain} {match} accept")
            elif rule.handle is not None:
                commands.append(f"nft delete rule {family} {table} {rule.chain} handle {rule.handle}")
            else:
                commands.append(f"nft -a list chain {family} {table} {rule.chain}  # then: nft delete rule {family} "
                                f"{table} {rule.chain} handle <handle of `{rule.text}`>")
    return " && ".join(dict.fromkeys(commands))


def _managers(facts: Mapping[str, Any]) -> list[str]:
    """The firewall managers active on a host: "ufw", "firewalld"."""
    active = []
    ufw = facts.get("ufw")
    if isinstance(ufw, Mapping) and ufw.get("status") == "active":
        active.append("ufw")
    firewalld = facts.get("firewalld")
    if isinstance(firewalld, Mapping) and firewalld.get("state") == "running":
        active.append("firewalld")
    return active


def _filters(rulesets: Sequence[RuleSet]) -> list[Rule]:
    """Drop/reject rules and non-accept policies on the input path."""
    found: list[Rule] = []
    for rs in rulesets:
        for chain in rs.chains.values():
            found += [r for r in chain.rules if r.verdict in ("drop", "reject", "queue")]
            if chain.policy is not None and chain.policy.verdict == "drop":
                found.append(chain.policy)
    return found


class FirewallCheck(Check):
    family = "firewall"
    order = 40
    summary = ("ufw, firewalld, iptables and nftables state; no rule drops or rejects the master port, HCCL's "
               "ports or the ephemeral range from the other hosts")
    needs = ("versions",)  # the CANN version decides how many HCCL ports there are

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [
            Probe("iptables", _for(_IPTABLES, "iptables"), timeout=10),
            Probe("ip6tables", _for(_IPTABLES, "ip6tables"), timeout=10),
            Probe("iptables_legacy", _for(_LEGACY, "iptables"), timeout=10),
            Probe("ip6tables_legacy", _for(_LEGACY, "ip6tables"), timeout=10),
            Probe("nft", _NFT, timeout=10),
            Probe("ufw", _UFW, timeout=10),
            Probe("firewalld", _FIREWALLD, timeout=15),
            Probe("addresses", _ADDRESSES, timeout=5),
            Probe("port_range", _PORT_RANGE, timeout=5),
        ]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        def out(key: str) -> ProbeOutput:
            return outputs.get(key, _MISSING_OUTPUT)

        facts: Facts = {
            "iptables": parse_iptables(out("iptables")),
            "ip6tables": parse_iptables(out("ip6tables")),
            "iptables_legacy": None,
            "ip6tables_legacy": None,
            "nft": parse_nft(out("nft")),
            "ufw": parse_ufw(out("ufw")),
            "firewalld": parse_firewalld(out("firewalld")),
            "addresses": parse_addresses(out("addresses")),
            "ephemeral": parse_port_range(out("port_range").stdout) if out("port_range").ok else None,
        }
        for key in ("iptables_legacy", "ip6tables_legacy"):
            # The probe prints nothing (and succeeds) when no legacy table is loaded next to nf_tables ones.
            legacy = outputs.get(key)
            if legacy is not None and (legacy.stdout.strip() or legacy.exit_status != 0):
                facts[key] = parse_iptables(legacy)
        return facts

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        findings: list[Finding] = []
        signatures = {name: ",".join(_managers(f)) or "none" for name, f in facts.items()}
        common, strict = majority(signatures)
        networks = _cluster_networks(facts, ctx)
        topology = Topology(facts, ctx)
        evaluators: dict[str, tuple[Evaluator, list[str]]] = {}
        for name in facts:
            findings.append(self._state(name, facts[name], signatures, common if strict else None))
            key = json.dumps([facts[name].get(k) for k, _ in _TOOLS] + [facts[name].get("nft")], sort_keys=True,
                             default=str)
            if key not in evaluators:
                rulesets, unreadable = build_rulesets(facts[name])
                evaluators[key] = (Evaluator(rulesets), unreadable)
            findings.append(self._rules(name, facts[name], ctx, networks, topology, *evaluators[key]))
        return findings

    # --- firewall.state

    def _state(self, name: str, facts: Mapping[str, Any], signatures: Mapping[str, str],
               common: str | None) -> Finding:
        check = "firewall.state"
        parts = [_describe_iptables(facts, key) for key, _ in _TOOLS]
        parts += [_describe_nft(facts.get("nft")), _describe_ufw(facts.get("ufw")),
                  _describe_firewalld(facts.get("firewalld"))]
        summary = "; ".join(p for p in parts if p)
        observed = signatures[name] if signatures[name] != "none" else "no firewall manager active"
        problems: list[str] = []
        remedies: list[str] = []
        for key in ("iptables_legacy", "ip6tables_legacy"):
            legacy = facts.get(key)
            if isinstance(legacy, Mapping) and legacy.get("readable") and (
                    legacy.get("rules") or any(p != "ACCEPT" for p in (legacy.get("policies") or {}).values())):
                tool = key.replace("_", "-")
                problems.append(f"{tool} rules are loaded next to the nf_tables ones: both apply, and "
                                f"`{tool.replace('-legacy', '')} -S` shows only the nf_tables set")
                remedies.append(f"{tool}-save > /root/{tool}.rules  # then load them with "
                                f"{tool.replace('-legacy', '-nft')}-restore and flush the legacy tables")
        if common is not None and signatures[name] != common:
            here = [m for m in signatures[name].split(",") if m != "none"]
            there = [m for m in common.split(",") if m != "none"]
            mine = f"{', '.join(here)} is active here" if here else "no firewall manager is active here"
            theirs = f"{', '.join(there)} is active on most hosts" if there else "most hosts run none"
            problems.append(f"{mine} while {theirs}: the hosts' firewalls are set up differently")
            remedies += [_STOP[m] + "  # or set it up the same way on every host" for m in here if m not in there]
            remedies += [_SHOW[m] + "  # on a host where it is active, then apply the same here" for m in there
                         if m not in here]
        if problems:
            return finding(check, name, Status.WARN, f"{check}: {'; '.join(problems)} ({summary})",
                           observed=observed, expected=common or "one firewall setup", remedy=" && ".join(remedies))
        return finding(check, name, Status.PASS, f"{check}: {summary}", observed=observed)

    # --- firewall.rules

    def _rules(self, name: str, host_facts: Facts, ctx: EvalContext, networks: Mapping[int, str], topology: Topology,
               evaluator: Evaluator, unreadable: list[str]) -> Finding:
        check = "firewall.rules"
        rulesets = evaluator.rulesets
        installed = [k for k in ("iptables", "ip6tables", "nft")
                     if isinstance(host_facts.get(k), Mapping) and host_facts[k].get("installed")]
        if not installed:
            return finding(check, name, Status.WARN,
                           f"{check}: neither iptables nor nft is installed, so the rules could not be listed "
                           "(a container or kube-proxy may still have set some)",
                           observed="no iptables, no nft", expected="rules readable",
                           remedy="apt-get install nftables  # or: dnf install nftables")
        targets, notes = targets_for(name, host_facts, ctx)
        paths = topology.paths(name)
        issues = analyze(evaluator, targets, paths) if rulesets else []
        is_master = ctx.cluster.master == name
        graded: list[tuple[Status, _Issue]] = []
        ephemeral_size = sum(h - lo + 1 for t in targets if t.kind == "ephemeral" for lo, h in t.ranges) or 1
        blocking = [i for i in issues if i.target.kind == "ephemeral" and i.blocked]
        blocked_ephemeral: Counter[str] = Counter()
        if len(blocking) == 1:
            blocked_ephemeral["any"] = sum(high - low + 1 for low, high in blocking[0].ports)
        for issue in blocking if len(blocking) > 1 else []:
            for peer in issue.peers:
                blocked_ephemeral[peer] += sum(high - low + 1 for low, high in issue.ports)
        ephemeral_fails = max(blocked_ephemeral.values(), default=0) / ephemeral_size >= EPHEMERAL_FAIL_FRACTION
        for issue in issues:
            kind = issue.target.kind
            if kind == "master" and not is_master:
                if any(r.port_specific for r in issue.rules):
                    graded.append((Status.WARN, issue))
                continue
            if issue.blocked and (kind != "ephemeral" or ephemeral_fails):
                graded.append((Status.FAIL, issue))
            else:
                graded.append((Status.WARN, issue))
        groups = _group(graded)
        shown = [t for t in targets if t.ranges and (t.kind != "master" or is_master)]
        checked = ", ".join(f"tcp {format_port_list(t.ranges)} ({t.label})" for t in shown)
        expected = f"tcp {format_port_list(merge_ranges(r for t in shown for r in t.ranges))} open to the other hosts"
        if groups:
            status = Status.worst([g.status for g in groups])
            texts = [_group_text(g, set(paths)) for g in groups]
            if unreadable:
                texts.append(f"and could not read {'; '.join(unreadable)}")
            tail = (": the other ranks' connections are refused or time out and init_process_group fails or hangs"
                    if status == Status.FAIL else "")
            rules_seen = list(dict.fromkeys(r.text for g in groups for r in g.rules))
            return finding(check, name, status, f"{check}: {'; '.join(texts)}{tail}",
                           observed=" | ".join(rules_seen), expected=expected,
                           remedy=" && ".join(dict.fromkeys(_remedy(g, host_facts, networks) for g in groups)))
        if unreadable:
            denied = any(isinstance(host_facts.get(k), Mapping) and host_facts[k].get("permission_denied")
                         for k in ("iptables", "ip6tables", "nft", "iptables_legacy", "ip6tables_legacy"))
            return finding(check, name, Status.ERROR,
                           f"{check}: could not read the firewall rules: {'; '.join(unreadable)}"
                           + (": listing them needs root (CAP_NET_ADMIN)" if denied else ""),
                           observed="; ".join(unreadable), expected="rules readable",
                           remedy="connect as root (user: root in hosts.yaml)" if denied else None)
        others = _filters(rulesets)
        extra = ""
        if others:
            listed = ", ".join(f"`{r.text}`" for r in others[:3]) + (", ..." if len(others) > 3 else "")
            extra = f"; {len(others)} drop/reject rule(s) or policies apply to other traffic only: {listed}"
        note = f" ({'; '.join(notes)})" if notes else ""
        return finding(check, name, Status.PASS,
                       f"{check}: nothing drops or rejects {checked} from the other hosts{note}{extra}",
                       observed="no blocking rule", expected=expected)


@dataclass
class _Group:
    """Issues with the same verdict, rules, certainty and peers: one sentence and one remedy in the report."""

    status: Status
    blocked: bool
    rules: tuple[Rule, ...]
    peers: frozenset[str]
    undecided: frozenset[str]
    issues: list[tuple[Status, _Issue]] = field(default_factory=list)


def _group(graded: Sequence[tuple[Status, _Issue]]) -> list[_Group]:
    kinds = ["master", "hccl", "ephemeral"]
    groups: dict[tuple[Any, ...], _Group] = {}
    for status, issue in sorted(graded, key=lambda item: kinds.index(item[1].target.kind)):
        key = (status, issue.blocked, tuple(id(r) for r in issue.rules), frozenset(issue.peers),
               frozenset(issue.undecided))
        group = groups.setdefault(key, _Group(status, issue.blocked, issue.rules, frozenset(issue.peers),
                                              frozenset(issue.undecided)))
        group.issues.append((status, issue))
    return sorted(groups.values(), key=lambda g: -g.status.rank)


def _group_text(group: _Group, all_peers: set[str]) -> str:
    ports = " and ".join(f"tcp {format_port_list(i.ports)} ({i.target.label})" for _, i in group.issues)
    rejected = any(r.verdict == "reject" for r in group.rules)
    verb = ("are" if len(group.issues) > 1 else "is") + (" rejected" if rejected else " dropped")
    if not group.blocked:
        verb = "may be " + verb.split()[-1]
    rules = ", ".join(_rule_name(r) for r in group.rules)
    peers = sorted(p for p in group.peers if p)
    who = ""
    if peers and set(peers) != {p for p in all_peers if p}:
        who = f" for connections from {', '.join(peers[:5])}{' and more' if len(peers) > 5 else ''}"
    why = ""
    if group.undecided:
        why = f" (depending on {', '.join(sorted(group.undecided))}, which preflight cannot decide)"
    elif not group.blocked:
        hit = sorted({p for _, i in group.issues for p in i.paths})
        why = f" (only on some of the paths between the hosts: {', '.join(hit)})"
    text = f"{ports} {verb} by {rules}{who}{why}"
    if any(i.target.kind == "ephemeral" and s == Status.WARN and i.blocked for s, i in group.issues):
        text += ": a small part of the ephemeral range, so only some listeners are hit"
    return text


def _describe_iptables(facts: Mapping[str, Any], key: str) -> str:
    tool = facts.get(key)
    name = key.replace("_", "-")
    if not isinstance(tool, Mapping):
        return ""
    if not tool.get("installed"):
        return f"{name}: not installed" if "legacy" not in key else ""
    version = f" {tool.get('version')}" if tool.get("version") else ""
    backend = f" ({tool.get('backend')})" if tool.get("backend") else ""
    if not tool.get("readable"):
        return f"{name}{version}{backend}: unreadable ({tool.get('error')})"
    rules = tool.get("rules") or []
    policy = (tool.get("policies") or {}).get("INPUT", "ACCEPT")
    return f"{name}{version}{backend}: INPUT policy {policy}, {len(rules)} rule{'s' if len(rules) != 1 else ''}"


def _describe_nft(nft: Any) -> str:
    if not isinstance(nft, Mapping):
        return ""
    if not nft.get("installed"):
        return "nftables: not installed"
    version = f" {nft.get('version')}" if nft.get("version") else ""
    if not nft.get("readable"):
        return f"nftables{version}: unreadable ({nft.get('error')})"
    managed = set(nft.get("iptables_nft_tables") or [])
    tables = [f"{t.get('family')} {t.get('name')}" + (" (iptables-nft)" if f"{t.get('family')} {t.get('name')}"
                                                       in managed else "") for t in nft.get("tables") or []]
    return f"nftables{version}: " + (f"tables {', '.join(tables)}" if tables else "no tables")


def _describe_ufw(ufw: Any) -> str:
    if not isinstance(ufw, Mapping):
        return ""
    if not ufw.get("installed"):
        return "ufw: not installed"
    if not ufw.get("readable"):
        return f"ufw: unreadable ({ufw.get('error')})"
    if ufw.get("status") != "active":
        return f"ufw: {ufw.get('status')}"
    count = len(ufw.get("rules") or [])
    return f"ufw: active, default incoming {ufw.get('default_incoming')}, {count} rule{'s' if count != 1 else ''}"


def _describe_firewalld(firewalld: Any) -> str:
    if not isinstance(firewalld, Mapping):
        return ""
    if not firewalld.get("installed"):
        return "firewalld: not installed"
    if firewalld.get("state") is None:
        return f"firewalld: unreadable ({firewalld.get('error')})"
    zones = firewalld.get("zones") or []
    if firewalld.get("state") != "running" or not zones:
        return f"firewalld: {firewalld.get('state')}"
    zone = zones[0]
    return (f"firewalld: running, zone {zone.get('name')} (target {zone.get('target')}, services "
            f"{' '.join(zone.get('services') or []) or '-'}, ports {' '.join(zone.get('ports') or []) or '-'})")
