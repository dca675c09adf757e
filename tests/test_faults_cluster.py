"""Every fault a cluster can throw, on the real namespace cluster: the run ends in bounded time and names the host.

Each test breaks one thing on one node (try/finally puts it back), runs the real CLI and asserts exactly which host
gets which status while the other hosts are still checked.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paramiko
import pytest
import yaml
from cli_runner import interruptible, preflight
from conftest import cluster_fixture, hostname_session
from netns_cluster import NetnsCluster

from preflight.container import COMMAND as CONTAINER_PROBE
from preflight.container import parse_container
from preflight.inventory import Host
from preflight.transport.base import TransportError
from preflight.transport.ssh import SSHTransport
from preflight.transport.tcp import QuickAckSocket

pytestmark = pytest.mark.cluster

HUNG_SECONDS = "3141"  # a fake tool sleeps this long: easy to find with ps afterwards
NPU = {"accelerator": "npu", "devices_per_host": 1}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=3, name="pfrel", subnet=40)


@pytest.fixture
def hosts_file(cluster: NetnsCluster, tmp_path: Path) -> Path:
    return cluster.write_hosts_yaml(tmp_path / "hosts.yaml")


def run_json(hosts: Path, tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any], float]:
    """Exit code, JSON report and seconds of one `preflight run --json`."""
    start = time.monotonic()
    proc = preflight("run", "--hosts", hosts, "--json", "--report-dir", tmp_path / "report", *extra)
    assert proc.returncode in (0, 1, 4), proc.stderr
    return proc.returncode, json.loads(proc.stdout), time.monotonic() - start


def problems(report: dict[str, Any]) -> set[tuple[str, str | None, str]]:
    return {(f["check"], f["host"], f["status"]) for f in report["findings"] if f["status"] in ("fail", "error")}


def connect_error(report: dict[str, Any], host: str) -> str:
    """observed kind of the host's ssh.connect error (asserting there is exactly one)."""
    errors = [f for f in report["findings"] if f["check"] == "ssh.connect" and f["host"] == host]
    assert len(errors) == 1 and errors[0]["status"] == "error", errors
    return str(errors[0]["observed"])


def assert_others_checked(report: dict[str, Any], bad: str) -> None:
    reachable = {h["name"]: h["reachable"] for h in report["hosts"]}
    assert reachable == {n: n != bad for n in ("node1", "node2", "node3")}
    assert {f["host"] for f in report["findings"] if f["check"] == "sysctl.somaxconn"} == \
        {"node1", "node2", "node3"} - {bad}


def node_processes(cluster: NetnsCluster, node: str, needle: str) -> list[str]:
    """Command lines of the processes in the node's network namespace that contain ``needle``."""
    pids = subprocess.run(["ip", "netns", "pids", cluster.node(node).netns], capture_output=True, text=True,
                          check=False).stdout.split()
    found = []
    for pid in pids:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if needle in cmd:
            found.append(f"{pid}: {cmd}")
    return found


def wait_no_processes(cluster: NetnsCluster, node: str, needle: str, seconds: float = 8.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while (left := node_processes(cluster, node, needle)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def fake_tool(cluster: NetnsCluster, node: str, name: str, body: str) -> Path:
    """Install an executable shell script as the node's /usr/local/Ascend/driver/tools/<name>."""
    tools = cluster.ascend_root(node) / "driver" / "tools"
    tools.mkdir(parents=True, exist_ok=True)
    path = tools / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def remove_fakes(cluster: NetnsCluster) -> None:
    for node in cluster.nodes:
        shutil.rmtree(cluster.ascend_root(node) / "driver", ignore_errors=True)


# --- unreachable hosts --------------------------------------------------------------------------------------------


def run_without_sshd(cluster: NetnsCluster, node: str, hosts_file: Path, tmp_path: Path
                     ) -> tuple[int, dict[str, Any], float]:
    """One run (3 s connect timeout) while ``node``'s sshd is stopped; it is started again afterwards."""
    cluster.stop_sshd(node)
    try:
        return run_json(hosts_file, tmp_path, "--connect-timeout", "3")
    finally:
        cluster.start_sshd(node)


def test_host_down_is_refused_fast(cluster: NetnsCluster, hosts_file: Path, tmp_path: Path) -> None:
    code, report, seconds = run_without_sshd(cluster, "node2", hosts_file, tmp_path)
    assert code == 4 and seconds < 20
    assert problems(report) == {("ssh.connect", "node2", "error")}
    assert connect_error(report, "node2") == "refused"
    assert_others_checked(report, "node2")


def test_master_down_does_not_hold_up_the_others(cluster: NetnsCluster, hosts_file: Path, tmp_path: Path) -> None:
    """The other hosts' TCP test waits for the master's listener: a master that never answers must not stall them."""
    code, report, seconds = run_without_sshd(cluster, "node1", hosts_file, tmp_path)
    assert code == 4 and seconds < 20
    assert problems(report) == {("ssh.connect", "node1", "error")}
    assert_others_checked(report, "node1")
    reach = {f["host"]: f["status"] for f in report["findings"] if f["check"] == "net.reachability"}
    assert set(reach.values()) <= {"skip"}, reach


def test_black_holed_host_times_out(cluster: NetnsCluster, hosts_file: Path, tmp_path: Path) -> None:
    rule = ["INPUT", "-p", "tcp", "--dport", "22", "-j", "DROP"]
    cluster.exec("node3", ["iptables", "-I", *rule])
    try:
        code, report, seconds = run_json(hosts_file, tmp_path, "--connect-timeout", "2")
    finally:
        cluster.exec("node3", ["iptables", "-D", *rule])
    assert code == 4 and seconds < 20
    assert problems(report) == {("ssh.connect", "node3", "error")}
    assert connect_error(report, "node3") == "timeout"
    assert_others_checked(report, "node3")


def test_port_without_banner(cluster: NetnsCluster, tmp_path: Path) -> None:
    listener = subprocess.Popen(
        ["ip", "netns", "exec", cluster.node("node1").netns, sys.executable, "-c",
         "import socket,time\ns=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
         "s.bind(('0.0.0.0', 2200)); s.listen(); print('ready', flush=True)\nc=s.accept(); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert listener.stdout and listener.stdout.readline().strip() == "ready"
        hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml")
        doc = yaml.safe_load(hosts.read_text())
        doc["hosts"][0]["port"] = 2200
        hosts.write_text(yaml.safe_dump(doc))
        code, report, seconds = run_json(hosts, tmp_path, "--connect-timeout", "2")
    finally:
        listener.kill()
        listener.wait()
    assert code == 4 and seconds < 20
    assert problems(report) == {("ssh.connect", "node1", "error")}
    assert connect_error(report, "node1") == "banner"
    assert_others_checked(report, "node1")


def test_wrong_key_is_an_auth_error(cluster: NetnsCluster, tmp_path: Path) -> None:
    key = tmp_path / "stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml")
    doc = yaml.safe_load(hosts.read_text())
    doc["hosts"][1]["identity_file"] = str(key)
    hosts.write_text(yaml.safe_dump(doc))
    code, report, seconds = run_json(hosts, tmp_path)
    assert code == 4 and seconds < 20
    assert problems(report) == {("ssh.connect", "node2", "error")}
    assert connect_error(report, "node2") == "auth"
    assert_others_checked(report, "node2")


def test_changed_host_key_is_refused(cluster: NetnsCluster, hosts_file: Path, tmp_path: Path) -> None:
    cluster.rotate_host_key("node1")
    try:
        code, report, _ = run_json(hosts_file, tmp_path, "--accept-new-host-keys")
    finally:
        cluster.restore_host_key("node1")
    assert code == 4
    assert problems(report) == {("ssh.connect", "node1", "error")}
    assert connect_error(report, "node1") == "hostkey-changed"
    assert_others_checked(report, "node1")


def test_hashed_known_hosts_entry_is_verified_over_gcm(cluster: NetnsCluster, tmp_path: Path) -> None:
    """A hashed known_hosts line (ssh-keygen -H) is matched; a wrong key under the same hashed name is refused.

    The session runs over AES-GCM, on a socket with Nagle off that ACKs every read at once."""
    node = cluster.node("node2")
    line = next(ln for ln in cluster.known_hosts.read_text().splitlines() if ln.split()[0] == node.address)
    _, keytype, blob = line.split()
    known = tmp_path / "known_hosts"
    known.write_text(f"{paramiko.HostKeys.hash_host(node.address)} {keytype} {blob}\n")
    host = Host("node2", node.address, identity_file=str(cluster.client_key), known_hosts=str(known))
    with hostname_session(host) as (_, ssh):
        assert ssh.remote_cipher.startswith("aes128-gcm")  # type: ignore[attr-defined]
        sock = ssh.sock
        assert isinstance(sock, socket.socket)  # no delayed-ACK stalls (preflight.transport.tcp)
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        assert isinstance(sock, QuickAckSocket)
    other = next(ln for ln in cluster.known_hosts.read_text().splitlines() if ln.split()[0] != node.address)
    known.write_text(f"{paramiko.HostKeys.hash_host(node.address)} {other.split()[1]} {other.split()[2]}\n")
    with pytest.raises(TransportError) as refused:
        SSHTransport(host, connect_timeout=5).connect()
    assert refused.value.kind == "hostkey-changed"


# --- probes that misbehave --------------------------------------------------------------------------------------


def test_hung_and_flooding_probes(cluster: NetnsCluster, tmp_path: Path) -> None:
    """node2's hccn_tool hangs (killed with its group), node3's prints 3 MB with bytes that are not UTF-8."""
    fake_tool(cluster, "node2", "hccn_tool", f"exec sleep {HUNG_SECONDS}\n")
    fake_tool(cluster, "node3", "hccn_tool", "head -c 3000000 /dev/urandom; printf '\\377\\376 ip:1.2.3.4\\n'\n")
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", cluster=NPU)
    try:
        code, report, seconds = run_json(hosts, tmp_path, "--checks", "hccn.ip", "--command-timeout", "2")
        left = wait_no_processes(cluster, "node2", f"sleep {HUNG_SECONDS}")
    finally:
        remove_fakes(cluster)
    assert seconds < 30
    assert code == 4
    assert left == [], "the hung probe's process group was killed"
    assert all(h["reachable"] for h in report["hosts"]), "all three hosts reported"
    by_host: dict[str, list[dict[str, Any]]] = {}
    for f in report["findings"]:
        by_host.setdefault(f["host"], []).append(f)
    hung = [f for f in by_host["node2"] if f["check"].startswith("hccn.") and f["status"] == "error"]
    assert hung and any("timed out" in f["message"] for f in hung), by_host["node2"]
    assert not [f for f in report["findings"] if f["check"].endswith((".parse", ".internal", ".gather"))]
    flood = [f for f in by_host["node3"] if f["check"].startswith("hccn.")]
    assert [f["status"] for f in flood if f.get("device") == 0] == ["error"], "junk is an unreadable IP"
    assert report["hosts"][2]["seconds"] < 10


def test_node_without_python_ss_sysctl(cluster: NetnsCluster, hosts_file: Path, tmp_path: Path) -> None:
    hidden = [str(Path(sys.executable).resolve()), "/usr/bin/ss", "/usr/sbin/sysctl"]
    for path in hidden:
        cluster.hide_binary("node1", path)
    try:
        code, report, seconds = run_json(hosts_file, tmp_path)
    finally:
        for path in hidden:
            cluster.unhide_binary("node1", path)
    assert seconds < 60
    assert code == 4
    assert all(h["reachable"] for h in report["hosts"])
    assert not [f for f in report["findings"] if f["check"].endswith((".parse", ".internal", ".gather"))]
    bad = problems(report)
    assert {host for _, host, _ in bad} == {"node1"}, bad
    assert ("versions.python", "node1", "error") in bad or ("versions.python", "node1", "fail") in bad
    somaxconn = {f["host"]: f["status"] for f in report["findings"] if f["check"] == "sysctl.somaxconn"}
    assert somaxconn == dict.fromkeys(["node1", "node2", "node3"], "pass"), "sysctls are read from /proc"


# --- interruption and concurrency -------------------------------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_saves_report_and_cleans_nodes(cluster: NetnsCluster, tmp_path: Path, signum: int) -> None:
    fake_tool(cluster, "node2", "hccn_tool", f"exec sleep {HUNG_SECONDS}\n")
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", cluster=NPU)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json",
                                 "--checks", "hccn.ip,sysctl", "--report-dir", str(tmp_path / "r")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=interruptible)
        deadline = time.monotonic() + 20
        while not node_processes(cluster, "node2", f"sleep {HUNG_SECONDS}") or any(
                node_processes(cluster, n, "sh -s") for n in ("node1", "node3")):
            assert time.monotonic() < deadline, "the probe never started"
            time.sleep(0.1)
        time.sleep(0.5)  # node1 and node3 are done: their results reach the report
        start = time.monotonic()
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=30)
        stopped = time.monotonic() - start
        left = wait_no_processes(cluster, "node2", f"sleep {HUNG_SECONDS}")
        shells = wait_no_processes(cluster, "node2", "sh -s")
    finally:
        remove_fakes(cluster)
    assert proc.returncode == (143 if signum == signal.SIGTERM else 130), err
    assert stopped < 10
    saved = json.loads((tmp_path / "r" / "report.json").read_text())
    assert json.loads(out) == saved and saved["complete"] is False
    reachable = {h["name"]: h["reachable"] for h in saved["hosts"]}
    assert reachable == {"node1": True, "node2": False, "node3": True}
    assert {f["host"] for f in saved["findings"] if f["check"] == "sysctl.somaxconn"} == {"node1", "node3"}
    assert "partial report written" in err
    assert left == [] and shells == [], "no probe process left on the node"


def test_two_runs_at_once_keep_their_reports(hosts_file: Path, tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "preflight", "run", "--hosts", str(hosts_file), "--checks", "sysctl", "--json"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}  # runs outside the checkout
    procs = [subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outputs = [p.communicate(timeout=60)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    saved = sorted((tmp_path / "reports").glob("*/report.json"))
    assert len(saved) == 2, saved
    assert sorted(p.read_text() for p in saved) == sorted(outputs), "each run saved its own report"


# --- a container node ---------------------------------------------------------------------------------------------


def test_a_container_node_is_named_and_its_sysctl_remedy_is_the_containers(cluster: NetnsCluster, hosts_file: Path,
                                                                            tmp_path: Path) -> None:
    """The nodes share this machine's root and process 1: what the probe reads here is what they read (this test
    box is a Docker container; elsewhere the nodes are machines). node2 gets a read-only /proc/sys as runc mounts
    it, and a somaxconn below the floor."""
    here = parse_container(subprocess.run(["sh", "-c", CONTAINER_PROBE], capture_output=True, text=True,
                                          check=False).stdout)
    cluster.read_only_proc_sys("node2")
    cluster.sysctl("node2", "net.core.somaxconn", "64")
    try:
        _, report, _ = run_json(hosts_file, tmp_path, "--checks", "os.container,sysctl.somaxconn")
    finally:
        cluster.sysctl("node2", "net.core.somaxconn", "65535")
        cluster.unhide_binary("node2", "/proc/sys")
    found = {f["host"]: f for f in report["findings"] if f["check"] == "os.container"}
    assert set(found) == {"node1", "node2", "node3"} and all(f["status"] == "pass" for f in found.values())
    [low] = [f for f in report["findings"] if f["check"] == "sysctl.somaxconn" and f["status"] == "fail"]
    assert low["host"] == "node2"
    if here["engine"]:
        assert f"is a container ({here['engine']}" in found["node2"]["message"]
        assert "/proc/sys is read-only" in found["node2"]["message"]
        assert "/proc/sys is read-only" not in found["node1"]["message"]
        assert low["remedy"].startswith(f"this host is a container ({here['engine']})")
        assert "docker run --sysctl net.core.somaxconn=128" in low["remedy"]
    else:
        assert "is not a container" in found["node2"]["message"]
        assert low["remedy"].startswith("sysctl -w net.core.somaxconn=128")


def test_a_fail_beside_unreachable_hosts_is_one_fail_verdict_everywhere(cluster: NetnsCluster, tmp_path: Path
                                                                         ) -> None:
    """Issue 35's measured case: a reachable host with a fail, one refusing SSH, one that does not resolve. The
    header said ERROR while the exit code said 1 (drain) and recommend_drain named the unreachable hosts: now
    every output says FAIL, and only the failing host is to be drained."""
    import xml.etree.ElementTree as ET

    from prometheus_client.parser import text_string_to_metric_families

    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml")
    doc = yaml.safe_load(hosts.read_text())
    doc["hosts"].append({"name": "ghost", "address": "ghost.invalid"})
    doc["checks"] = {"sysctl": {"min_somaxconn": 4096}}
    hosts.write_text(yaml.safe_dump(doc, sort_keys=False))
    out = tmp_path / "out"
    cluster.sysctl("node1", "net.core.somaxconn", "128")
    cluster.stop_sshd("node2")
    try:
        proc = preflight("run", "--hosts", hosts, "--connect-timeout", "3", "--skip", "net.reachability",
                         "--report-dir", out, "--junit", out / "j.xml", "--prometheus", out / "p.prom",
                         env={"COLUMNS": "100"})
    finally:
        cluster.start_sshd("node2")
        cluster.sysctl("node1", "net.core.somaxconn", "65535")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    head = proc.stdout.split("\npass ")[0]  # the header, before the counts line
    assert re.findall(r"\b(PASS|WARN|FAIL|ERROR|SUSPECT)\b", head) == ["FAIL"], proc.stdout
    report = json.loads((out / "report.json").read_text())
    assert (report["verdict"], report["exit_code"]) == ("fail", 1)
    assert ("sysctl.somaxconn", "node1", "fail") in problems(report)
    assert {connect_error(report, "node2"), connect_error(report, "ghost")} == {"refused", "resolve"}
    assert report["drain"]["recommend_drain"] == ["node1"]
    assert set(report["drain"]["unhealthy"]) == {"node1", "node2", "ghost"}
    assert re.search(r'id="verdict"[^>]*>FAIL<', (out / "report.html").read_text())
    suites = ET.parse(out / "j.xml").getroot().iter("testsuite")
    assert {p.get("value") for s in suites for p in s.iter("property") if p.get("name") == "preflight.verdict"} \
        == {"fail"}
    metrics = {f.name: f.samples[0].value for f in text_string_to_metric_families((out / "p.prom").read_text())}
    assert (metrics["preflight_verdict"], metrics["preflight_exit_code"]) == (3, 1)
