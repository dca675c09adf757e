"""Jump hosts shared by every target behind them: one paramiko connection per hop of a ProxyJump chain.

Each target opens a ``direct-tcpip`` channel over its last hop's transport, so 64 targets behind one bastion make
one connection to it (a stock sshd's ``MaxStartups 10:30:100`` refuses some of 64 simultaneous handshakes). Hop
*k* of a chain is itself reached through hops 1..k-1 of the same pool, and each hop's host key is verified.

>>> parse_hop("admin@10.0.0.1:2222", "root")
('admin', '10.0.0.1', 2222)
>>> parse_hop("[fd00::1]:22", "root")
('root', 'fd00::1', 22)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import paramiko

from preflight.inventory import Host
from preflight.transport.base import TransportError


class HopConnection(Protocol):
    """A connection to one jump host (preflight.transport.ssh.SSHTransport)."""

    client: paramiko.SSHClient | None

    def connect(self) -> None: ...

    def close(self) -> None: ...


Connector = Callable[[Host, "JumpPool"], HopConnection]  # a hop's connection, reaching earlier hops via the pool


def parse_hop(spec: str, default_user: str) -> tuple[str, str, int]:
    """``[user@]host[:port]`` (``[v6]:port`` too) -> (user, host, port)."""
    user, _, hostport = spec.strip().rpartition("@")
    if hostport.startswith("["):
        address, _, rest = hostport[1:].partition("]")
        port = rest.lstrip(":")
    else:
        address, _, port = hostport.partition(":")
    return user or default_user, address, int(port or 22)


@dataclass
class _Hop:
    transport: HopConnection
    users: int = 0
    error: TransportError | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class JumpPool:
    """The connections to the jump hosts of one run, shared by its targets (reference-counted)."""

    def __init__(self, connector: Connector, connect_timeout: float = 10.0, accept_new_host_keys: bool = False
                 ) -> None:
        self.connector = connector
        self.connect_timeout = connect_timeout
        self.accept_new_host_keys = accept_new_host_keys
        self._hops: dict[tuple[str, ...], _Hop] = {}
        self._lock = threading.Lock()
        self.connections = 0  # connections made to jump hosts (for tests and the bench)

    def open(self, target: Host) -> tuple[paramiko.Channel, tuple[str, ...]]:
        """A channel to ``target`` through its ProxyJump chain, and the key to ``release`` when done."""
        chain = tuple(hop.strip() for hop in (target.proxy_jump or "").split(",") if hop.strip())
        with self._lock:
            entry = self._hops.get(chain)
            if entry is None:
                user, address, port = parse_hop(chain[-1], target.user)
                via = ",".join(chain[:-1]) or None
                hop_host = Host(name=f"jump:{address}", address=address, user=user, port=port,
                                identity_file=target.identity_file, known_hosts=target.known_hosts, proxy_jump=via)
                entry = self._hops[chain] = _Hop(self.connector(hop_host, self))
            entry.users += 1
        try:
            with entry.lock:  # the first target connects; the others wait for it (or for its error)
                if entry.error is not None:
                    raise entry.error
                if entry.transport.client is None:
                    try:
                        entry.transport.connect()
                    except TransportError as exc:
                        entry.error = TransportError(exc.kind, f"jump host {chain[-1]}: {exc.message}")
                        raise entry.error from exc
                    self.connections += 1
            client = entry.transport.client
            transport = client.get_transport() if client is not None else None
            if transport is None or not transport.is_active():
                raise TransportError("ssh", f"jump host {chain[-1]} closed the connection")
            try:
                channel = transport.open_channel("direct-tcpip", (target.address, target.port), ("127.0.0.1", 0),
                                                 timeout=self.connect_timeout)
            except (paramiko.SSHException, OSError) as exc:
                raise TransportError("unreachable", f"jump host {chain[-1]} cannot reach "
                                                    f"{target.address}:{target.port}: {exc}") from exc
        except BaseException:
            self.release(chain)
            raise
        return channel, chain

    def release(self, chain: tuple[str, ...]) -> None:
        """One target is done with ``chain``: the last one closes its hop's connection."""
        with self._lock:
            entry = self._hops.get(chain)
            if entry is None:
                return
            entry.users -= 1
            if entry.users > 0:
                return
            del self._hops[chain]
        entry.transport.close()
