"""The net check's view of the cluster: per-host interfaces, gloo's bind address, the master's address, and
the net.* findings built from them. Shared by the net check and diagnose.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Mapping
from functools import cached_property

from preflight.context import EvalContext
from preflight.findings import Facts, finding, majority
from preflight.interfaces import (
    Iface,
    Selection,
    interfaces_of,
    ip_family,
    is_loopback,
    parse_ip,
    same_network,
    select_auto,
    select_exact,
    select_filter,
    select_ip,
)
from preflight.model import Finding, Status


def _hosts_entry_remedy(name: str, address: str) -> str:
    """Take ``name`` off every /etc/hosts line, then map it to ``address``.

    >>> print(_hosts_entry_remedy("node1", "10.0.0.1"))
    sed -i -E 's/[[:space:]]node1([[:space:]]|$)/\\1/' /etc/hosts && echo '10.0.0.1 node1' >> /etc/hosts
    """
    pattern = "s/[[:space:]]" + re.sub(r"([.\[\]\\*^$/+?(){}|])", r"\\\1", name) + "([[:space:]]|$)/\\1/"
    return f"sed -i -E {shlex.quote(pattern)} /etc/hosts && echo {shlex.quote(address + ' ' + name)} >> /etc/hosts"


# Which library's interface carries the training traffic first, per accelerator.
_PREFERENCE = {"gpu": ("NCCL", "GLOO", "HCCL"), "npu": ("HCCL", "GLOO", "NCCL"), "cpu": ("GLOO", "NCCL", "HCCL")}


class ClusterView:
    """Per-host derived state shared by the findings: interfaces, gloo's bind address, the master's address."""

    def __init__(self, facts: Mapping[str, Facts], ctx: EvalContext) -> None:
        self.facts = facts
        self.ctx = ctx
        self.master = ctx.cluster.master
        self.ifaces = {h: interfaces_of(f) for h, f in facts.items()}
        self._local: dict[str, set[str] | None] = {}
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
        firsts = {h: a for h in self.facts if (a := self._first_master_address(h)) and not is_loopback(a)}
        pool = {h: a for h, a in firsts.items() if self.master_own is not None and a in self.master_own} or firsts
        if pool:
            return str(Counter(pool[h] for h in sorted(pool)).most_common(1)[0][0])
        for host in self.ctx.hosts:
            if host.name == self.master and parse_ip(host.address) and not is_loopback(host.address):
                return str(parse_ip(host.address))
        return None

    @cached_property
    def master_resolves_somewhere(self) -> bool:
        """Whether any host resolves the master's name (once for the cluster, not once per host)."""
        return any((f.get("master") or {}).get("addrs") for f in self.facts.values())

    @cached_property
    def majority_family(self) -> str | None:
        """The address family most hosts bind (computed once: every host's finding compares with it)."""
        families = {h: f for h in self.facts if (f := ip_family(self.bind_address(h)))}
        return str(majority(families)[0]) if families else None

    def bind_address(self, host: str) -> str | None:
        """gloo's choice: the first address of the host's own name that is local (loopback always is)."""
        addrs = (self.facts[host].get("self") or {}).get("addrs") or []
        local = self._local_addresses(host)
        for address in addrs:
            if local is None or is_loopback(address) or address in local:
                return str(address)
        return None

    def _local_addresses(self, host: str) -> set[str] | None:
        """The host's own addresses as text (None when unknown), worked out once per host."""
        if host not in self._local:
            ifaces = self.ifaces.get(host)
            self._local[host] = None if ifaces is None or self.facts[host].get("addrs_error") else \
                {str(a.ip) for i in ifaces for a in i.addrs}
        return self._local[host]

    def _route_interface(self, host: str) -> Iface | None:
        """The interface that carries this host's traffic to the master."""
        ifaces = self.ifaces.get(host) or []
        target = parse_ip(self.expected) if self.expected else None
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
            return finding(check, host, Status.ERROR, "could not read the host name")
        error = resolved.get("error")
        training = self.training[host][0] or next(
            (i for i in self.ifaces.get(host) or [] if i.running and not i.loopback and i.usable), None)
        address = str(training.usable[0].ip) if training is not None and training.usable else "<address>"
        add = _hosts_entry_remedy(str(name), address)
        if error and error != "not found":
            return finding(check, host, Status.ERROR, f"could not resolve {name}: {error}")
        if error:
            return finding(check, host, Status.FAIL,
                           f"the host name {name} does not resolve on {host}: gloo falls back to "
                           "loopback and peers cannot connect", observed="unresolved",
                           expected="a non-loopback address of this host", remedy=add)
        addrs = [str(a) for a in resolved.get("addrs") or []]
        bind = self.bind_address(host)
        if bind is None:
            return finding(check, host, Status.FAIL,
                           f"{name} resolves to {', '.join(addrs)}, none of which is an address of {host}",
                           observed=", ".join(addrs), expected="an address of this host", remedy=add)
        if is_loopback(bind):
            if len(self.ctx.hosts) == 1:  # a single-node job talks to itself over loopback just fine: not a fault
                return finding(check, host, Status.PASS,
                               f"{name} resolves to {bind} (loopback): fine while the job runs on this host "
                               "alone; a multi-node job needs a non-loopback address here",
                               observed=f"{name} -> {bind}", expected="a non-loopback address (multi-node only)")
            return finding(check, host, Status.FAIL,
                           f"{name} resolves to {bind} (loopback) on {host}: gloo binds loopback and "
                           "peers cannot connect" + (" (Debian's installer maps the host name to 127.0.1.1 in "
                                                     "/etc/hosts)" if bind == "127.0.1.1" else ""),
                           observed=f"{name} -> {bind}", expected="a non-loopback address", remedy=add)
        return finding(check, host, Status.PASS, f"{name} resolves to {bind}", observed=f"{name} -> {bind}")

    def master_finding(self, host: str) -> Finding:
        check = "net.master_resolution"
        resolved = self.facts[host].get("master") or {}
        name = resolved.get("name") or self.master
        error = resolved.get("error")
        expected = self.expected
        add = _hosts_entry_remedy(str(name), expected) if expected else None
        if error and error != "not found":
            return finding(check, host, Status.ERROR, f"could not resolve {name}: {error}")
        if error:
            if not self.master_resolves_somewhere:
                return finding(check, host, Status.WARN,
                               f"the master's name {name} resolves on no host: MASTER_ADDR must be an "
                               "IP address", observed="unresolved", expected="resolvable, or an IP as MASTER_ADDR")
            return finding(check, host, Status.FAIL,
                           f"the master's name {name} does not resolve on {host}, other hosts resolve it "
                           f"to {expected}", observed="unresolved", expected=expected, remedy=add)
        address = str(resolved["addrs"][0])
        observed = f"{name} -> {address}"
        if host == self.master and (is_loopback(address) or (self.master_own and address in self.master_own)):
            return finding(check, host, Status.PASS,
                           f"{name} resolves to {address} on the master itself", observed=observed)
        if is_loopback(address):
            return finding(check, host, Status.FAIL,
                           f"the master's name {name} resolves to loopback {address} on {host}",
                           observed=observed, expected=expected, remedy=add)
        if expected and address != expected and self.master_own and address in self.master_own:
            return finding(check, host, Status.WARN,
                           f"the master's name {name} resolves to {address} on {host}, another address of "
                           f"the master than the {expected} the other hosts use (another network or family?)",
                           observed=observed, expected=expected, remedy=add)
        if expected and address != expected:
            return finding(check, host, Status.FAIL,
                           f"the master's name {name} resolves to {address} on {host}, but to {expected} "
                           "on the other hosts", observed=observed, expected=expected, remedy=add)
        if self.master_own is not None and address not in self.master_own:
            own = ", ".join(sorted(self.master_own)) or "none"
            return finding(check, host, Status.FAIL,
                           f"the master's name {name} resolves to {address}, which is not an address of "
                           f"{self.master} (it has {own})", observed=observed, expected=f"one of {own}",
                           remedy="fix the master's entry in DNS or /etc/hosts on every host")
        return finding(check, host, Status.PASS, f"{name} resolves to {address}", observed=observed,
                       expected=expected)

    def family_finding(self, host: str) -> Finding:
        check = "net.address_family"
        bind = self.bind_address(host)
        family = ip_family(bind)
        if family is None:
            return finding(check, host, Status.SKIP, "the host's own name has no local address "
                                                     "(see net.hostname)")
        target = ip_family(self.expected)
        reason = f"the master's address {self.expected}"
        if target is None:
            target = self.majority_family
            reason = "the majority of hosts"
        if family != target:
            return finding(check, host, Status.FAIL,
                           f"{host} binds {bind} ({family}), but {reason} is {target}: gloo/NCCL peers of "
                           "different address families cannot connect", observed=f"{family} ({bind})",
                           expected=str(target),
                           remedy="give every host an address of the same family first in /etc/hosts or DNS")
        return finding(check, host, Status.PASS, f"{family} ({bind})", observed=family, expected=target)

    def interface_finding(self, host: str) -> Finding:
        check = "net.interface"
        facts = self.facts[host]
        if self.ifaces[host] is None:
            return finding(check, host, Status.ERROR,
                           f"could not list interfaces: {facts.get('interfaces_error') or 'no data'}")
        if facts.get("addrs_error"):
            return finding(check, host, Status.ERROR,
                           f"could not list addresses (ip -o addr show): {facts['addrs_error']}",
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
            if host != self.master and theirs is not None and not same_network(primary, theirs):
                problems.append((Status.WARN,
                                 f"{selection.label} uses {primary.describe()}, not on the network of the master's "
                                 f"{theirs.describe()}: traffic must be routed (see net.reachability)",
                                 selection.fix))
        if not self.selections[host]:
            route = self._route_interface(host)
            if route is None and self.expected is None:
                return finding(check, host, Status.SKIP,
                               "no interface variable is set and the master's address is unknown")
            if route is None:
                problems.append((Status.WARN, f"no interface variable is set and no interface of {host} reaches the "
                                 f"master's network ({self.expected})", None))
            else:
                chosen.append(f"no interface variable set; the master is reached over {route.describe()}")
        if problems:
            status = Status.worst([p[0] for p in problems])
            worst = next(p for p in problems if p[0] == status)
            return finding(check, host, status, "; ".join(p[1] for p in problems),
                           observed="; ".join(chosen) or "no usable interface",
                           expected="running interfaces with an address, on the master's network",
                           remedy=worst[2] or None)
        return finding(check, host, Status.PASS, "; ".join(chosen), observed="; ".join(chosen))

    def mtu_findings(self) -> list[Finding]:
        check = "net.mtu"
        known: dict[str, int] = {}
        findings: list[Finding] = []
        for host in self.facts:
            iface, why = self.training[host]
            if self.ifaces[host] is None:
                findings.append(finding(check, host, Status.ERROR, "could not list interfaces"))
            elif iface is None or iface.mtu is None:
                findings.append(finding(check, host, Status.SKIP,
                                        f"no training interface could be determined on {host}"))
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
                                        f"the training interfaces' MTU differs with no majority: {spread}",
                                        observed=f"{name} mtu {mtu}", expected="the same MTU on every host",
                                        remedy=f"ip link set dev {shlex.quote(name)} mtu <the fabric's MTU>  "
                                               "# the same on every host"))
            elif mtu != target:
                findings.append(finding(check, host, Status.FAIL,
                                        f"{name} ({why}) has MTU {mtu} on {host}, the other hosts use "
                                        f"{target}: large messages stall or fragment", observed=f"{name} mtu {mtu}",
                                        expected=f"mtu {target}", remedy=remedy))
            else:
                findings.append(finding(check, host, Status.PASS, f"{name} mtu {mtu} ({why})",
                                        observed=f"{name} mtu {mtu}", expected=f"mtu {target}"))
        return findings
