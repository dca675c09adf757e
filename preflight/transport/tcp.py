"""The TCP connection under an SSH session, with no delayed-ACK stall on either side.

paramiko talks to sshd in small packets, and on every connection two of them waited ~40 ms for an ACK
(pcap on a node, OpenSSH 9.2, 1-host run: authentication 50 ms, opening the session channel 44 ms):

- **Ours.** paramiko writes small packets back to back while authenticating. With Nagle's algorithm on,
  the second one waits until the first is ACKed, and the node delays that ACK.
- **sshd's.** Right after USERAUTH_SUCCESS, sshd sends its ``hostkeys-00@openssh.com`` notice. paramiko has
  nothing to answer, so Linux delays our ACK. sshd's Nagle holds CHANNEL_OPEN_CONFIRMATION until that
  ACK arrives.

``TCP_NODELAY`` removes the first stall. ``TCP_QUICKACK``, set again after every read because Linux clears
it, removes the second: authentication then takes 8 ms and the channel opens in 1.
On systems without ``TCP_QUICKACK`` (macOS), only ``TCP_NODELAY`` is set; there, and behind a jump host
(where the hop's sshd ACKs the target), the SSH_MSG_IGNORE that ``transport.ssh`` sends back for each
notice carries the ACK.
"""

from __future__ import annotations

import socket

_QUICKACK: int | None = getattr(socket, "TCP_QUICKACK", None)


class QuickAckSocket(socket.socket):
    """A connected TCP socket that ACKs what it reads at once.

    ``QuickAckSocket(fileno=socket.create_connection(("10.0.0.5", 22)).detach()).recv(4096)`` gives
    ``b'SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\\r\\n'`` and ACKs it without delay.
    """

    def recv(self, bufsize: int, flags: int = 0, /) -> bytes:
        data = super().recv(bufsize, flags)
        if data and _QUICKACK is not None:
            try:
                self.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)
            except OSError:  # closed under us: the next read says so
                pass
        return data


def connect_tcp(address: str, port: int, timeout: float) -> socket.socket:
    """``socket.create_connection`` for an SSH session: Nagle off, every read ACKed at once (see module doc).

    Raises what ``socket.create_connection`` raises.
    """
    plain = socket.create_connection((address, port), timeout=timeout)
    try:
        plain.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        plain.close()
        raise
    if _QUICKACK is None:
        return plain
    sock = QuickAckSocket(fileno=plain.detach())
    sock.settimeout(timeout)
    return sock
