"""How each peer's new connections reach a host: from which address, to which of its addresses, on which NIC.

>>> from preflight.context import EvalContext
>>> from preflight.inventory import ClusterSpec, Host
>>> facts = {n: {"addresses": [{"iface": "eth0", "address": f"10.0.0.{i}/24", "scope": "global"}]}
...          for i, n in ((1, "n1"), (2, "n2"))}
>>> ctx = EvalContext(ClusterSpec(master="n1"), [Host(name=n, address=n) for n in facts])
>>> Topology(facts, ctx).paths("n1")["n2"]
[Path(family='ipv4', src=IPv4Address('10.0.0.2'), dst=IPv4Address('10.0.0.1'), iface='eth0')]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

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
        for name, found in self.addresses.items():
            for _, iface in found:
                self.by_subnet.setdefault(iface.network, []).append((name, iface.ip))
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
