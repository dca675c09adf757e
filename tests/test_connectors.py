"""net.reachability's node-side scripts run for real against sockets on this machine.

One target uses bash's /dev/tcp under timeout(1); several targets, or a node without bash, use the
python connector. Both must print the same JSON and the same result words.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from preflight.connect import LISTENER, Target, connect_command, parse_listeners, parse_results


@pytest.fixture()
def ports() -> Iterator[tuple[int, int]]:
    """An open port (something listens) and a closed one (connects are refused)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    yield server.getsockname()[1], closed_port
    server.close()


def connect(specs: list[str], *, with_bash: bool = True, retry: float = 0.4) -> list[dict[str, object]]:
    """Connect to ``name=address:port`` specs (``[v6]:port``) the way the check's step does."""
    targets = []
    for spec in specs:
        name, _, rest = spec.partition("=")
        address, _, port = rest.rpartition(":")
        targets.append(Target(name, address.strip("[]"), int(port), "master port"))
    command = connect_command(sys.executable, 2.0, retry, targets)
    env = None if with_bash else {"PATH": "/nonexistent"}  # no bash, no timeout: the python connector
    proc = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, timeout=30, env=env)
    assert proc.returncode == 0, proc.stderr
    return parse_results(proc.stdout)


@pytest.mark.parametrize("with_bash", [True, False], ids=["bash", "python"])
def test_one_target_open_and_refused(ports: tuple[int, int], with_bash: bool) -> None:
    open_port, closed_port = ports
    [ok] = connect([f'a "quoted" name=127.0.0.1:{open_port}'], with_bash=with_bash)
    assert ok["result"] == "ok" and ok["target"] == 'a "quoted" name' and ok["port"] == open_port
    [refused] = connect([f"b=127.0.0.1:{closed_port}"], with_bash=with_bash)
    assert refused["result"] == "refused" and refused["address"] == "127.0.0.1"


@pytest.mark.parametrize("with_bash", [True, False], ids=["bash", "python"])
def test_refused_is_retried_until_the_listener_is_up(with_bash: bool) -> None:
    late = socket.socket()
    late.bind(("127.0.0.1", 0))
    port = late.getsockname()[1]
    timer = threading.Timer(0.5, late.listen)
    timer.start()
    try:
        [result] = connect([f"late=127.0.0.1:{port}"], with_bash=with_bash, retry=2.0)
    finally:
        timer.join()
        late.close()
    assert result["result"] == "ok"


def test_several_targets_at_once(ports: tuple[int, int]) -> None:
    open_port, closed_port = ports
    results = {r["target"]: r["result"] for r in connect([f"a=127.0.0.1:{open_port}", f"b=127.0.0.1:{closed_port}",
                                                           f"c=[::1]:{closed_port}"])}
    assert results["a"] == "ok" and results["b"] == "refused"
    assert results["c"] in ("refused", "unreachable", "EADDRNOTAVAIL", "EAFNOSUPPORT")  # no IPv6 in some sandboxes


def free_port() -> int:
    """A loopback TCP port nothing listens on (bound once, released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_listener_counts_peers_and_reports_when_stopped() -> None:
    port = free_port()
    listener = subprocess.Popen([sys.executable, "-S", "-c", LISTENER, "tag", "5", f"{port}:2"],
                                stdout=subprocess.PIPE, text=True)
    assert listener.stdout is not None
    assert json.loads(listener.stdout.readline()) == {"ready": True}
    for _ in range(2):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    [entry] = parse_listeners(listener.stdout.read())
    assert listener.wait(timeout=10) == 0
    assert entry["bound"] is True and entry["peers"] == ["127.0.0.1", "127.0.0.1"]


def test_listener_binds_only_once_the_go_file_exists_and_removes_it(tmp_path: Path) -> None:
    port, go = free_port(), tmp_path / "go"
    proc = subprocess.Popen([sys.executable, "-S", "-c", LISTENER, "tag", "10", f"{port}:1"],
                            env={**os.environ, "PREFLIGHT_GO": str(go)}, stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)
        with socket.socket() as early:
            assert early.connect_ex(("127.0.0.1", port)) != 0, "nothing listens before the go file"
        go.touch()
        assert proc.stdout is not None and json.loads(proc.stdout.readline()) == {"ready": True}
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        assert proc.wait(timeout=10) == 0
        assert not go.exists(), "the listener removed the go file"
    finally:
        proc.kill()


def test_listener_waiting_for_go_ends_when_nobody_reads_its_output(tmp_path: Path) -> None:
    """A gather that died before its first probes ended never makes the go file: no listener may linger."""
    proc = subprocess.Popen([sys.executable, "-S", "-c", LISTENER, "tag", "60", f"{free_port()}:1"],
                            env={**os.environ, "PREFLIGHT_GO": str(tmp_path / "never")},
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        assert proc.stdout is not None
        proc.stdout.close()
        assert proc.wait(timeout=5) == 0
    finally:
        proc.kill()


def test_listener_ends_as_soon_as_nobody_reads_its_output() -> None:
    """An interrupted run closes the session: the listener must free the port at once, not after its window."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-S", "-c", LISTENER, "tag", "60", f"{port}:5"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == b'{"ready": true}'
        proc.stdout.close()  # the session is gone
        assert proc.wait(timeout=5) is not None
    finally:
        proc.kill()
    again = socket.socket()
    again.bind(("127.0.0.1", port))  # free again
    again.close()


def test_timeout_around_the_connect_is_not_a_timeout_of_the_connect(ports: tuple[int, int], tmp_path: Path) -> None:
    """timeout(1) ending bash (a loaded node that did not start bash in time) says nothing about the connect:
    the python connector then times the connect itself, and the port is open."""
    open_port, _ = ports
    shim = tmp_path / "timeout"
    shim.write_text("#!/bin/sh\nexit 124\n")  # as if bash had not connected within the timeout
    shim.chmod(0o755)
    command = connect_command(sys.executable, 2.0, 0.4, [Target("a", "127.0.0.1", open_port, "master port")])
    env = {"PATH": f"{tmp_path}:{os.environ['PATH']}"}
    proc = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, timeout=30, env=env)
    [result] = parse_results(proc.stdout)
    assert result["result"] == "ok" and result["tries"] == 1, proc.stdout + proc.stderr


def test_a_connect_that_times_out_is_tried_again_before_it_is_reported() -> None:
    """A listener whose accept queue is full drops SYNs (as a DROP rule does): two connects, then "timeout"."""
    full = socket.socket()
    full.bind(("127.0.0.1", 0))
    full.listen(0)
    port = full.getsockname()[1]
    queued = socket.create_connection(("127.0.0.1", port), timeout=5)  # fills the queue: nobody accepts
    try:
        command = connect_command(sys.executable, 0.3, 0.0, [Target("a", "127.0.0.1", port, "master port"),
                                                              Target("b", "127.0.0.1", port, "master port")])
        proc = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, timeout=30)
    finally:
        queued.close()
        full.close()
    results = parse_results(proc.stdout)
    assert [(r["result"], r["tries"]) for r in results] == [("timeout", 2), ("timeout", 2)], proc.stdout
