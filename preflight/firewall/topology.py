"""How each peer's new connections reach a host: from which address, to which of its addresses, on which NIC.

>>> from preflight.context import EvalContext
>>> from preflight.inventory import ClusterSpec, Host
>>> facts = {n: {"addresses": [{"iface": "eth0", "address": f"10.0.0.{i}/24", "scope": "global"}]}
...          for i, n in ((1, "n1"), (2, "n2"))}
>>> ctx = EvalContext(ClusterSpec(master="n1"), [Host(name=n, address=n) for n in facts])
>>> Topology(facts, ctx).paths("n1")["n2"]
[Path(family='ipv4', src=IPv4Address('10.0.0.2'), dst=IPv4Address('10.0.0.1'), iface='eth0')]
>>> [(paths, list(peers)) for paths, peers in Topology(facts, ctx).peer_classes("n1", lambda a: ())]
[([Path(family='ipv4', src=IPv4Address('10.0.0.2'), dst=IPv4Address('10.0.0.1'), iface='eth0')], ['n2'])]
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from preflight.context import EvalContext, Facts
from preflight.firewall.addresses import IPAddress, IPNetwork, as_ip, family_of, global_addresses
from preflight.inventory import Host

TRAINING_IFACE_ENV = ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "HCCL_SOCKET_IFNAME", "TP_SOCKET_IFNAME")


@dataclass(frozen=True)
class Path:
    """How one peer's connections arrive: its source address, this host's address and interface."""

    family: str
    src: IPAddress | None
    dst: IPAddress | None
    iface: str | None


def _training_ifaces(host: Host | None) -> list[str]:
    """The interfaces (prefixes) NCCL_SOCKET_IFNAME and friends pick on ``host``; ``^`` exclusions ignored."""
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
        self.addresses = {name: global_addresses(facts.get(name, {})) for name in self.order}
        self.by_subnet: dict[IPNetwork, list[tuple[str, IPAddress]]] = {}
        self.in_subnet: dict[str, dict[IPNetwork, list[IPAddress]]] = {}  # host -> subnet -> its addresses there
        for name, found in self.addresses.items():
            for _, iface in found:
                self.by_subnet.setdefault(iface.network, []).append((name, iface.ip))
                self.in_subnet.setdefault(name, {}).setdefault(iface.network, []).append(iface.ip)
        self._classes: dict[tuple[Any, ...], tuple[object, dict[Hashable, list[str]]]] = {}
        # When no subnet is shared: the address in hosts.yaml, else any of the peer's addresses.
        self.fallback: dict[str, list[Path]] = {}
        for name in self.order:
            literal = as_ip(self.hosts[name].address) if name in self.hosts else None
            if literal is not None:
                found_paths = [Path(family_of(literal), literal, None, None)]
            else:
                found_paths = [Path(family_of(a), a.ip, None, None) for _, a in self.addresses[name]]
            self.fallback[name] = found_paths or [Path("ipv4", None, None, None)]

    def paths(self, name: str) -> dict[str, list[Path]]:
        """peer -> the paths its connections to ``name`` may take.

        A path per address pair in a shared subnet (arriving on this host's interface there); with none
        shared (routed fabrics, or addresses unknown) the peer's address from hosts.yaml, else any of its.
        """
        shared: dict[str, list[Path]] = {}
        wanted = _training_ifaces(self.hosts.get(name))
        for own_iface, own in self.addresses.get(name, []):
            family = family_of(own)
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

    def peer_paths(self, name: str, peer: str) -> list[Path]:
        """``paths(name)[peer]`` for one peer, without looking at the others."""
        found = [Path(family_of(own), address, own.ip, own_iface)
                 for own_iface, own in self.addresses.get(name, [])
                 for address in self.in_subnet.get(peer, {}).get(own.network, [])] if peer != name else []
        wanted = _training_ifaces(self.hosts.get(name))
        if found and wanted:
            found = [p for p in found if any(p.iface and p.iface.startswith(w) for w in wanted)] or found
        return found or self.fallback[peer]

    def peer_classes(self, name: str, src_class: Callable[[IPAddress | None], Hashable],
                     token: object = None) -> list[tuple[list[Path], Iterable[str]]]:
        """The peers of ``name`` grouped by paths that ``src_class`` (which source conditions of the rules an
        address meets) cannot tell apart, each group with one peer's paths: what ``analyze`` needs, at a
        cost per group. The grouping is made once per ``token`` (the rules) and layout of the host's own
        addresses, so a cluster costs O(hosts) per distinct layout, not O(hosts) per host."""
        own = tuple((iface, addr.network) for iface, addr in self.addresses.get(name, []))
        wanted = tuple(_training_ifaces(self.hosts.get(name)))
        cache_key = (id(token), own, wanted)
        cached = self._classes.get(cache_key)
        if cached is None or cached[0] is not token:
            groups: dict[Hashable, list[str]] = {}
            for peer in self.order:
                groups.setdefault(self._signature(peer, own, wanted, src_class), []).append(peer)
            cached = (token, groups)
            self._classes[cache_key] = cached
        classes: list[tuple[list[Path], Iterable[str]]] = []
        for members in cached[1].values():
            representative = next((p for p in members if p != name), None)
            if representative is not None:
                classes.append((self.peer_paths(name, representative), _Without(members, name)))
        if not classes:  # a one-host run: some other host, from somewhere
            classes.append(([Path("ipv4", None, None, None)], ("",)))
        return classes

    def peers(self, name: str) -> set[str]:
        """Every peer ``paths(name)`` names."""
        return set(self.paths(name))

    def _signature(self, peer: str, own: Sequence[tuple[str, IPNetwork]], wanted: Sequence[str],
                   src_class: Callable[[IPAddress | None], Hashable]) -> Hashable:
        """What the rules can see of ``peer``'s paths to a host whose own addresses are ``own``."""
        subnets = self.in_subnet.get(peer, {})
        shared = [(iface, tuple(src_class(a) for a in subnets.get(network, []))) for iface, network in own]
        picked = [(iface, c) for iface, c in shared if c and any(iface.startswith(w) for w in wanted)]
        picked = picked or [(iface, c) for iface, c in shared if c]
        if picked:
            return ("shared", tuple(shared), tuple(picked))
        return ("fallback", tuple((p.family, src_class(p.src)) for p in self.fallback[peer]))


class _Without:
    """``members`` without ``name``, listed only when iterated (a class of thousands is rarely listed)."""

    def __init__(self, members: Sequence[str], name: str) -> None:
        self.members, self.name = members, name

    def __iter__(self) -> Iterator[str]:
        return (m for m in self.members if m != self.name)
