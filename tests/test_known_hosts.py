"""known_hosts read once and indexed: plain and hashed names, non-default ports, a file that grows mid-run."""

from __future__ import annotations

import base64
import os
import struct
from pathlib import Path

import paramiko

from preflight.transport.known_hosts import host_keys


def ed25519_line(seed: int) -> str:
    blob = struct.pack(">I", 11) + b"ssh-ed25519" + struct.pack(">I", 32) + bytes((seed + i) % 256 for i in range(32))
    return "ssh-ed25519 " + base64.b64encode(blob).decode()


def test_plain_hashed_and_port_entries(tmp_path: Path) -> None:
    path = tmp_path / "known_hosts"
    hashed = paramiko.HostKeys.hash_host("10.0.0.7")
    path.write_text(f"10.0.0.1,node1 {ed25519_line(1)}\n"
                    f"{hashed} {ed25519_line(7)}\n"
                    f"[10.0.0.1]:2222 {ed25519_line(2)}\n"
                    "garbage line\n")
    assert host_keys(str(path), "node1")["ssh-ed25519"].get_base64() == ed25519_line(1).split()[1]
    assert host_keys(str(path), "10.0.0.7")["ssh-ed25519"].get_base64() == ed25519_line(7).split()[1]
    assert host_keys(str(path), "[10.0.0.1]:2222")["ssh-ed25519"].get_base64() == ed25519_line(2).split()[1]
    assert host_keys(str(path), "10.0.0.8") == {}


def test_a_file_that_changed_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "known_hosts"
    path.write_text(f"node1 {ed25519_line(1)}\n")
    assert host_keys(str(path), "node2") == {}
    with path.open("a") as handle:  # what --accept-new-host-keys does mid-run
        handle.write(f"node2 {ed25519_line(2)}\n")
    os.utime(path, ns=(1, 1))  # a new stamp even within the filesystem's mtime granularity
    assert set(host_keys(str(path), "node2")) == {"ssh-ed25519"}
