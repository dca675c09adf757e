"""The TCP socket under an SSH session: Nagle off, and every read ACKed at once (no 40 ms delayed ACK)."""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Iterator

import pytest

from preflight.transport.tcp import QuickAckSocket, connect_tcp

ROUNDS = 3


@pytest.fixture
def echo_port() -> Iterator[int]:
    """A loopback server that, per connection, sends 100 bytes and reads 100 back, ``ROUNDS`` times."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                for _ in range(ROUNDS):
                    conn.sendall(b"x" * 100)
                    if not conn.recv(100):
                        break

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


def quickack_after_each_read(sock: socket.socket) -> list[int]:
    """Talk like an SSH client (read, then answer) and record the socket's quick-ACK state after each read."""
    states = []
    with sock:
        for _ in range(ROUNDS):
            assert sock.recv(100)
            states.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK))
            sock.sendall(b"y" * 100)
    return states


@pytest.mark.skipif(not hasattr(socket, "TCP_QUICKACK"), reason="TCP_QUICKACK is Linux-only")
def test_every_read_is_acked_at_once(echo_port: int) -> None:
    """A plain socket falls into delayed-ACK mode once it answers; ours is back in quick-ACK mode after each read."""
    plain = socket.create_connection(("127.0.0.1", echo_port), 5)
    # The kernel's default, what stalled sshd 40 ms: delayed ACKs once a read is answered within ~40 ms.
    assert 0 in quickack_after_each_read(plain)
    sock = connect_tcp("127.0.0.1", echo_port, 5)
    assert isinstance(sock, QuickAckSocket)
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    assert sock.gettimeout() == 5
    assert quickack_after_each_read(sock) == [1, 1, 1]


def test_nagle_is_off_and_errors_are_socket_errors(echo_port: int) -> None:
    sock = connect_tcp("127.0.0.1", echo_port, 5)
    with sock:
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        assert sock.recv(100) == b"x" * 100
    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    with pytest.raises(ConnectionRefusedError):
        connect_tcp("127.0.0.1", port, 5)
    if sys.platform == "linux":
        with pytest.raises(socket.gaierror):
            connect_tcp("no-such-host.invalid", 22, 5)
