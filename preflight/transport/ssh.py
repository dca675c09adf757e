"""Run scripts on a node over SSH (paramiko), with host keys verified against known_hosts.

Unknown host keys are refused unless ``accept_new_host_keys`` is set (like OpenSSH's
``StrictHostKeyChecking=accept-new``); a *changed* key is always refused.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import paramiko

from preflight.inventory import Host
from preflight.transport.base import Execution, OutputWatcher, TransportError
from preflight.transport.jumps import JumpPool
from preflight.transport.known_hosts import host_keys
from preflight.transport.tcp import connect_tcp

# paramiko logs a failed handshake ("Exception (client): Error reading SSH protocol banner") with a traceback
# through Python's last-resort handler: ~20 lines per host on stderr. The failure is already a finding
# (ssh.connect, with its reason): its log records go nowhere unless the caller configured logging.
_PARAMIKO_LOG = logging.getLogger("paramiko")
_PARAMIKO_LOG.addHandler(logging.NullHandler())
_PARAMIKO_LOG.propagate = False

SYSTEM_KNOWN_HOSTS = Path("/etc/ssh/ssh_known_hosts")
_KNOWN_HOSTS_LOCK = threading.Lock()


_QUIET_AFTER_EXIT = 10  # recv timeouts of 0.2 s in a row after the exit status
MAX_STREAM_BYTES = 64 << 20  # per script run and stream: a runaway probe cannot exhaust the controller


def _keep(buffer: bytearray, data: bytes) -> None:
    """Append ``data`` while ``buffer`` is under ``MAX_STREAM_BYTES``."""
    if len(buffer) < MAX_STREAM_BYTES:
        buffer += data[:MAX_STREAM_BYTES - len(buffer)]


class _AcceptNewPolicy(paramiko.MissingHostKeyPolicy):
    """Trust a key seen for the first time and append it to known_hosts (never a changed one)."""

    def __init__(self, known_hosts: Path) -> None:
        self.known_hosts = known_hosts

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        line = f"{hostname} {key.get_name()} {key.get_base64()}\n"
        with _KNOWN_HOSTS_LOCK:
            self.known_hosts.parent.mkdir(parents=True, exist_ok=True)
            with self.known_hosts.open("a", encoding="utf-8") as handle:
                handle.write(line)
        client.get_host_keys().add(hostname, key.get_name(), key)


class _Transport(paramiko.Transport):
    """paramiko's Transport, preferring AES-GCM and answering the server's notices.

    - **AES-GCM first.** An AEAD cipher has no separate MAC. paramiko computes and compares that MAC in
      Python for every packet, ~10% of the controller's CPU with aes-ctr + hmac. The others stay as
      fallbacks.
    - **Notices answered.** After authentication sshd sends a ``hostkeys-00@openssh.com`` notice, which
      wants no reply. Its CHANNEL_OPEN_CONFIRMATION then waits, under sshd's Nagle, until the notice is
      ACKed, and a silent client's kernel delays that ACK ~40 ms. Our own socket ACKs at once
      (``transport.tcp``), but behind a jump host the ACK is the hop's sshd's. An SSH_MSG_IGNORE sent back
      carries it: the channel then opens in ~1 ms instead of ~45 (measured through one hop). paramiko has
      no public hook for a server's global request on the client side; ``tests/test_ssh_cluster.py`` fails
      if this override stops being called.
    """

    def __init__(self, sock: Any, /, **options: Any) -> None:
        super().__init__(sock, **options)
        self.notices_answered = 0
        security = self.get_security_options()
        ciphers = tuple(security.ciphers)
        security.ciphers = tuple(c for c in ciphers if "-gcm@" in c) + tuple(c for c in ciphers if "-gcm@" not in c)

    def _parse_global_request(self, m: paramiko.Message) -> None:
        super()._parse_global_request(m)  # type: ignore[misc]
        if self.clear_to_send.is_set():  # never during a key exchange: this is the thread that finishes it
            self.send_ignore()
            self.notices_answered += 1


class SSHTransport:
    """One cached SSH connection to one host."""

    def __init__(self, host: Host, connect_timeout: float = 10.0, accept_new_host_keys: bool = False,
                 jumps: JumpPool | None = None) -> None:
        self.host = host
        self.connect_timeout = connect_timeout
        self.accept_new_host_keys = accept_new_host_keys
        self.client: paramiko.SSHClient | None = None
        # Jump hosts: shared with the run's other targets when the factory passes its pool.
        self._jumps = jumps if jumps is not None else jump_pool(connect_timeout, accept_new_host_keys)
        self._chain: tuple[str, ...] | None = None  # the jump chain this transport holds a channel through
        self._sock: socket.socket | paramiko.Channel | paramiko.ProxyCommand | None = None  # closed by close()

    @property
    def known_hosts(self) -> Path:
        return Path(self.host.known_hosts or os.path.expanduser("~/.ssh/known_hosts"))

    def connect(self) -> None:
        if self.client is not None:
            return
        client = paramiko.SSHClient()
        name = self._known_name()
        known: dict[str, paramiko.PKey] = {}
        for path in (SYSTEM_KNOWN_HOSTS, self.known_hosts):  # per key type the first file wins, as in paramiko
            if path.is_file():
                try:
                    for keytype, key in host_keys(str(path), name).items():
                        known.setdefault(keytype, key)
                except OSError as exc:
                    raise TransportError("hostkey-unknown", f"cannot read known_hosts {path}: {exc}") from exc
        for keytype, key in known.items():  # only this host's keys: not the whole file per connection
            client.get_host_keys().add(name, keytype, key)
        if self.accept_new_host_keys:
            client.set_missing_host_key_policy(_AcceptNewPolicy(self.known_hosts))
        else:
            client.set_missing_host_key_policy(paramiko.RejectPolicy())
        identity = self.host.identity_file
        if identity and not os.access(identity, os.R_OK):
            why = "does not exist" if not os.path.exists(identity) else "cannot be read by this user"
            raise TransportError("identity", f"identity file {identity} {why}")
        sock = self._open_socket()
        try:
            client.connect(
                self.host.address,
                port=self.host.port,
                username=self.host.user,
                key_filename=self.host.identity_file,
                look_for_keys=self.host.identity_file is None,
                timeout=self.connect_timeout,
                banner_timeout=self.connect_timeout,
                auth_timeout=self.connect_timeout,
                sock=sock,
                transport_factory=_Transport,
            )
        except paramiko.BadHostKeyException as exc:
            sock.close()
            raise TransportError(
                "hostkey-changed",
                f"host key for {self._known_name()} does NOT match {self.known_hosts} "
                f"(got {exc.key.get_name()} {exc.key.get_fingerprint().hex()}): refusing to connect; "
                f"if the node was reinstalled, run: ssh-keygen -R {self._known_name()}",
            ) from exc
        except paramiko.SSHException as exc:
            transport = client.get_transport()
            no_banner = transport is None or not transport.remote_version
            client.close()
            sock.close()
            raise self._classify(exc, no_banner) from exc
        except (OSError, EOFError) as exc:
            sock.close()
            raise TransportError("ssh", f"SSH session failed: {exc or type(exc).__name__}") from exc
        except paramiko.ProxyCommandFailure as exc:
            sock.close()
            raise TransportError("unreachable", f"ProxyCommand failed: {exc}") from exc
        self.client = client

    def _known_name(self) -> str:
        return self.host.address if self.host.port == 22 else f"[{self.host.address}]:{self.host.port}"

    def _classify(self, exc: paramiko.SSHException, no_banner: bool) -> TransportError:
        text = str(exc)
        if isinstance(exc, paramiko.AuthenticationException):
            return TransportError("auth", f"authentication failed for {self.host.user}@{self.host.address}: {text}")
        if "not found in known_hosts" in text:
            return TransportError(
                "hostkey-unknown",
                f"host key for {self._known_name()} is not in {self.known_hosts}: refusing to connect; add it "
                f"with `ssh-keyscan -p {self.host.port} {self.host.address} >> {self.known_hosts}` after "
                "checking its fingerprint, or pass --accept-new-host-keys",
            )
        if no_banner or "banner" in text.lower():
            return TransportError("banner", f"port {self.host.port} accepted TCP but sent no SSH banner "
                                            f"within {self.connect_timeout:g} s")
        return TransportError("ssh", f"SSH negotiation failed: {text}")

    def _open_socket(self) -> socket.socket | paramiko.Channel | paramiko.ProxyCommand:
        if self.host.proxy_command:  # as OpenSSH: ProxyCommand wins over ProxyJump when both are set
            try:
                self._sock = paramiko.ProxyCommand(self.host.proxy_command)
            except paramiko.ProxyCommandFailure as exc:
                raise TransportError("unreachable", f"ProxyCommand failed: {exc}") from exc
            return self._sock
        if self.host.proxy_jump:
            channel, self._chain = self._jumps.open(self.host)
            self._sock = channel
            return channel
        try:
            self._sock = connect_tcp(self.host.address, self.host.port, self.connect_timeout)
            return self._sock
        except socket.gaierror as exc:
            raise TransportError("resolve", f"cannot resolve {self.host.address}: {exc.strerror}") from exc
        except ConnectionRefusedError as exc:
            raise TransportError("refused", f"connection refused by {self.host.address}:{self.host.port} "
                                            "(is sshd running?)") from exc
        except TimeoutError as exc:
            raise TransportError("timeout", f"no answer from {self.host.address}:{self.host.port} within "
                                            f"{self.connect_timeout:g} s (host down or packets dropped)") from exc
        except OSError as exc:
            raise TransportError("unreachable", f"cannot reach {self.host.address}:{self.host.port}: "
                                                f"{exc.strerror or exc}") from exc

    def run_script(self, script: str, timeout: float, on_stdout: OutputWatcher | None = None) -> Execution:
        """Send ``script`` to ``sh -s`` and collect output until it exits or ``timeout`` passes.

        ``on_stdout`` sees each chunk of stdout as it arrives (before the cap).

        At most ``MAX_STREAM_BYTES`` of each stream are kept (the rest is read and dropped). Once the
        script has exited, a stray process that still holds its stdout open is not waited for.
        """
        self.connect()
        assert self.client is not None
        start = time.monotonic()
        deadline = start + timeout
        transport = self.client.get_transport()
        if transport is None or not transport.is_active():
            raise TransportError("ssh", "the SSH connection was closed")
        channel = transport.open_session(timeout=max(1.0, timeout))
        out, err = bytearray(), bytearray()
        quiet_after_exit = 0
        try:
            channel.exec_command("sh -s")
            channel.sendall(script.encode())
            channel.shutdown_write()
            channel.settimeout(0.2)
            while time.monotonic() < deadline:
                while channel.recv_stderr_ready():
                    _keep(err, channel.recv_stderr(65536))
                try:
                    data = channel.recv(65536)
                except TimeoutError:
                    # sshd sends exit-status when the script exits, before it has drained the script's
                    # stdout pipe (session.c: "there could be some more data waiting in the pipe"): over a
                    # jump host on a loaded machine that rest can trail by over a second. Only 2 s of
                    # silence in a row after the exit says a stray process holds stdout open.
                    if channel.exit_status_ready():
                        quiet_after_exit += 1
                        if quiet_after_exit >= _QUIET_AFTER_EXIT:
                            break
                    continue
                if not data:
                    break
                quiet_after_exit = 0
                _keep(out, data)
                if on_stdout is not None:
                    on_stdout(data)
            else:
                return Execution(bytes(out), bytes(err), None, True, time.monotonic() - start)
            while channel.recv_stderr_ready():
                _keep(err, channel.recv_stderr(65536))
            status = channel.recv_exit_status() if channel.status_event.wait(max(0.0, deadline - time.monotonic())) \
                else None
            return Execution(bytes(out), bytes(err), status, status is None, time.monotonic() - start)
        finally:
            channel.close()

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        if self._sock is not None:  # still needed when close() interrupts a connect in progress
            self._sock.close()
            self._sock = None
        if self._chain is not None:
            self._jumps.release(self._chain)
            self._chain = None


def jump_pool(connect_timeout: float = 10.0, accept_new_host_keys: bool = False) -> JumpPool:
    """The jump hosts of one run: each hop an SSHTransport, shared by every target behind it."""
    def hop(host: Host, pool: JumpPool) -> SSHTransport:
        return SSHTransport(host, pool.connect_timeout, pool.accept_new_host_keys, jumps=pool)
    return JumpPool(hop, connect_timeout, accept_new_host_keys)
