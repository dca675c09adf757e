"""preflight.early: the handshakes `preflight run --hosts` begins before the rest of preflight is imported."""

from __future__ import annotations

import socket
from dataclasses import replace
from pathlib import Path

import pytest

from preflight import early
from preflight.inventory import load_inventory
from preflight.transport.base import TransportError


@pytest.fixture()
def refusing_port() -> int:
    """A localhost port nobody listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_started_connection_is_taken_once_and_raises_what_its_handshake_raised(
        tmp_path: Path, refusing_port: int) -> None:
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(f"hosts:\n  - name: a\n    address: 127.0.0.1\n    port: {refusing_port}\n"
                     f"  - name: b\n    address: 127.0.0.1\n    port: {refusing_port}\n")
    early.start(["run", "--hosts", str(hosts), "--connect-timeout", "2"])
    a, b = load_inventory(hosts).hosts
    assert early.take(a, 3.0, False) is None, "another --connect-timeout: not the same connection"
    started = early.take(a, 2.0, False)
    assert started is not None
    with pytest.raises(TransportError) as raised:
        started.connect()
    assert raised.value.kind == "refused"
    assert early.take(a, 2.0, False) is None, "taken once"
    assert early.take(replace(b, port=refusing_port + 1), 2.0, False) is None, "another port: not the same connection"
    early._close_untaken()
    assert early.take(b, 2.0, False) is None


@pytest.mark.parametrize("argv", [["list-checks"], ["run"], ["run", "--hosts", "h.yaml", "--transport", "slurm"],
                                  ["run", "--hosts", "slurm"], ["run", "--hosts"], ["run", "-H", "x", "--help"]])
def test_nothing_starts_for_other_commands(argv: list[str]) -> None:
    assert early._wanted(argv) is None


def test_a_file_that_does_not_load_starts_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "hosts.yaml"
    bad.write_text("hosts:\n  - name: a\n    adress: 1.2.3.4\n")
    early.start(["run", "--hosts", str(bad)])
    assert early._STARTED == {}
