"""`preflight run` end to end over real OpenSSH against a 4-node network-namespace cluster."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from ascend_sim import set_cann_version
from cli_runner import interruptible, preflight
from conftest import cluster_fixture
from netns_cluster import NetnsCluster

from preflight.checks import all_checks, known_params
from preflight.checks.base import ActiveCheck
from preflight.engine import Engine, RunOptions, ssh_transport_factory
from preflight.inventory import Host, load_inventory
from preflight.transport.base import Execution, OutputWatcher, Transport

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=4, name="pfrun", subnet=2)


@pytest.fixture
def hosts_file(cluster: NetnsCluster, tmp_path: Path) -> Path:
    return cluster.write_hosts_yaml(tmp_path / "hosts.yaml")


def run_json(hosts: Path, tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    proc = preflight("run", "--hosts", hosts, "--json", "--report-dir", tmp_path / "report", *extra)
    assert proc.returncode != 2, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def problems(report: dict[str, Any]) -> set[tuple[str, str | None, str]]:
    return {(f["check"], f["host"], f["status"]) for f in report["findings"] if f["status"] in ("fail", "error")}


def test_healthy_cluster_passes(hosts_file: Path, tmp_path: Path) -> None:
    code, report = run_json(hosts_file, tmp_path)
    assert code == 0, problems(report)
    assert report["schema"] == "preflight.report/1" and report["complete"] is True
    assert "allreduce" not in report["checks"], "the all_reduce test runs only when asked for"
    assert [h["name"] for h in report["hosts"]] == ["node1", "node2", "node3", "node4"]
    assert all(h["reachable"] for h in report["hosts"])
    assert problems(report) == set()
    somaxconn = {f["host"]: f for f in report["findings"] if f["check"] == "sysctl.somaxconn"}
    assert set(somaxconn) == {"node1", "node2", "node3", "node4"}
    assert all(f["status"] == "pass" and f["observed"] == "65535" for f in somaxconn.values())
    python = {f["host"]: f["status"] for f in report["findings"] if f["check"] == "versions.python"}
    assert python == dict.fromkeys(["node1", "node2", "node3", "node4"], "pass")
    saved = json.loads((tmp_path / "report" / "report.json").read_text())
    assert saved["findings"] == report["findings"]
    assert report["summary"]["fail"] == 0 and report["summary"]["pass"] >= 16


def test_stock_kernel_limits_pass_a_small_cluster(cluster: NetnsCluster, tmp_path: Path) -> None:
    """A stock kernel (somaxconn 4096 since 5.4, syn backlog 1024) is enough for 4 hosts x 4 devices = 16 ranks,
    and its report is a known-good run `baseline save` takes without --force."""
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"devices_per_host": 4})
    for node in ("node1", "node2", "node3", "node4"):
        cluster.sysctl(node, "net.core.somaxconn", "4096")
        cluster.sysctl(node, "net.ipv4.tcp_max_syn_backlog", "1024")
    try:
        code, report = run_json(hosts, tmp_path)  # the default checks
    finally:
        for node in ("node1", "node2", "node3", "node4"):
            cluster.sysctl(node, "net.core.somaxconn", "65535")
            cluster.sysctl(node, "net.ipv4.tcp_max_syn_backlog", "65535")
    assert code == 0, problems(report)
    node2 = {f["check"]: f for f in report["findings"] if f["host"] == "node2"}
    assert node2["sysctl.somaxconn"]["status"] == node2["sysctl.tcp_max_syn_backlog"]["status"] == "pass"
    assert node2["sysctl.somaxconn"]["observed"] == "4096" and node2["sysctl.somaxconn"]["expected"] == ">= 128"
    assert "4 hosts x 4 devices" in node2["sysctl.somaxconn"]["message"]
    saved = preflight("baseline", "save", tmp_path / "report" / "report.json", "--baseline", tmp_path / "b.json")
    assert saved.returncode == 0 and (tmp_path / "b.json").exists(), saved.stderr


def test_low_somaxconn_fails_a_big_job_naming_that_host(cluster: NetnsCluster, tmp_path: Path) -> None:
    """An old kernel's 128 fails 4 hosts x 128 devices = 512 ranks (need 2 x 512), the others' 65535 pass."""
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"devices_per_host": 128})
    cluster.sysctl("node2", "net.core.somaxconn", "128")
    try:
        code, report = run_json(hosts, tmp_path, "--checks", "sysctl")
        terminal = preflight("run", "--hosts", hosts, "--checks", "sysctl", "--report-dir", tmp_path / "term")
    finally:
        cluster.sysctl("node2", "net.core.somaxconn", "65535")
    assert code == 1
    assert problems(report) == {("sysctl.somaxconn", "node2", "fail")}
    bad = next(f for f in report["findings"] if f["status"] == "fail")
    assert bad["observed"] == "128" and bad["expected"] == ">= 1024"
    assert "below 1024 = 2 x 512 ranks (4 hosts x 128 devices)" in bad["message"]
    assert "sysctl -w net.core.somaxconn=1024" in bad["remedy"]
    assert terminal.returncode == 1
    assert "hosts x checks" in terminal.stdout and "[fail] sysctl.somaxconn node2" in terminal.stdout
    assert "remedy:" in terminal.stdout


def test_sshd_down_is_an_error_while_the_others_are_checked(cluster: NetnsCluster, hosts_file: Path,
                                                            tmp_path: Path) -> None:
    cluster.stop_sshd("node3")
    try:
        start = time.monotonic()
        code, report = run_json(hosts_file, tmp_path, "--connect-timeout", "3")
        elapsed = time.monotonic() - start
    finally:
        cluster.start_sshd("node3")
    assert code == 4
    assert problems(report) == {("ssh.connect", "node3", "error")}
    error = next(f for f in report["findings"] if f["status"] == "error")
    assert error["observed"] == "refused" and "connection refused" in error["message"]
    reachable = {h["name"]: h["reachable"] for h in report["hosts"]}
    assert reachable == {"node1": True, "node2": True, "node3": False, "node4": True}
    checked = {f["host"] for f in report["findings"] if f["check"] == "sysctl.somaxconn"}
    assert checked == {"node1", "node2", "node4"}
    assert elapsed < 30


def test_changed_host_key_is_refused_even_with_accept_new(cluster: NetnsCluster, hosts_file: Path,
                                                          tmp_path: Path) -> None:
    cluster.rotate_host_key("node4")
    try:
        code, report = run_json(hosts_file, tmp_path)
        code_new, report_new = run_json(hosts_file, tmp_path, "--accept-new-host-keys")
    finally:
        cluster.restore_host_key("node4")
    for c, r in ((code, report), (code_new, report_new)):
        assert c == 4
        assert problems(r) == {("ssh.connect", "node4", "error")}
        error = next(f for f in r["findings"] if f["status"] == "error")
        assert error["observed"] == "hostkey-changed" and "does NOT match" in error["message"]
    assert "ssh-keygen -R" in error["remedy"]


def test_unknown_host_keys_refused_unless_accept_new(cluster: NetnsCluster, tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("")
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", extra_defaults={"known_hosts": str(known)})
    code, report = run_json(hosts, tmp_path)
    assert code == 4
    assert problems(report) == {("ssh.connect", f"node{i}", "error") for i in range(1, 5)}
    assert {f["observed"] for f in report["findings"] if f["status"] == "error"} == {"hostkey-unknown"}
    code, report = run_json(hosts, tmp_path, "--accept-new-host-keys")
    assert code == 0, problems(report)
    recorded = known.read_text().splitlines()
    assert sorted(line.split()[0] for line in recorded) == [n.address for n in cluster.nodes]
    assert set(recorded) <= set(cluster.known_hosts.read_text().splitlines())
    code, report = run_json(hosts, tmp_path)
    assert code == 0, "keys recorded by accept-new are trusted next time"


def test_version_drift_names_the_odd_host(cluster: NetnsCluster, hosts_file: Path, tmp_path: Path) -> None:
    for node in cluster.nodes:
        set_cann_version(cluster, node, "8.1.RC1" if node.name == "node2" else "8.0.0")
    try:
        code, report = run_json(hosts_file, tmp_path, "--checks", "versions")
    finally:
        for node in cluster.nodes:
            shutil.rmtree(cluster.ascend_root(node) / "ascend-toolkit")
    assert code == 1
    assert problems(report) == {("versions.cann", "node2", "fail")}
    bad = next(f for f in report["findings"] if f["status"] == "fail")
    assert bad["observed"] == "8.1.RC1" and bad["expected"] == "8.0.0"
    assert not any(f["check"].startswith("sysctl") for f in report["findings"]), "--checks selects"


def test_malformed_hosts_file_exits_2_naming_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "hosts.yaml"
    bad.write_text("defaults:\n  user: root\nhosts:\n  - name: node1\n    adress: 10.0.0.1\n")
    proc = preflight("run", "--hosts", bad)
    assert proc.returncode == 2
    assert f"{bad}:5: unknown key 'adress'" in proc.stderr
    assert proc.stdout == ""


def test_one_round_trip_per_host(cluster: NetnsCluster, hosts_file: Path) -> None:
    inventory = load_inventory(hosts_file, known_params())
    calls: dict[str, int] = {}
    real = ssh_transport_factory(RunOptions())

    class Counting:
        def __init__(self, host: Host) -> None:
            self.host, self.inner = host, real(host)

        def connect(self) -> None:
            self.inner.connect()

        def run_script(self, script: str, timeout: float, on_stdout: OutputWatcher | None = None) -> Execution:
            calls[self.host.name] = calls.get(self.host.name, 0) + 1
            return self.inner.run_script(script, timeout, on_stdout)

        def close(self) -> None:
            self.inner.close()

    def factory(host: Host) -> Transport:
        return Counting(host)

    passive = [c for c in all_checks() if not isinstance(c, ActiveCheck)]
    report = Engine(inventory, passive, transport_factory=factory).run()
    assert calls == {f"node{i}": 1 for i in range(1, 5)}, "every passive probe of a host in one session"
    assert report.exit_code() == 0

    # The default run's TCP test to the master port rides on the gather: only the master's listener
    # needs a second session (a cleanup would be a third: every connector got through, so none).
    calls.clear()
    default = [c for c in all_checks() if c.by_default]
    report = Engine(inventory, default, transport_factory=factory).run()
    assert calls == {"node1": 2, "node2": 1, "node3": 1, "node4": 1}
    reach = [f for f in report.findings if f.check == "net.reachability"]
    assert {(f.host, f.status.value) for f in reach} == {(f"node{i}", "pass") for i in range(1, 5)}
    assert "all 3 connection tests involving node1" in next(f.message for f in reach if f.host == "node1")


@pytest.fixture
def silent_hosts_file(cluster: NetnsCluster, tmp_path: Path) -> Iterator[Path]:
    """The 4 nodes plus a host "silent" whose SSH port accepts TCP and never says a word."""
    listener = subprocess.Popen(
        ["ip", "netns", "exec", cluster.node("node1").netns, sys.executable, "-c",
         "import socket,time\ns=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
         "s.bind(('0.0.0.0', 2222)); s.listen(); print('ready', flush=True)\nc=s.accept(); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert listener.stdout and listener.stdout.readline().strip() == "ready"
        hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml")
        doc = yaml.safe_load(hosts.read_text())
        doc["hosts"].append({"name": "silent", "address": cluster.node("node1").address, "port": 2222})
        hosts.write_text(yaml.safe_dump(doc))
        yield hosts
    finally:
        listener.kill()
        listener.wait()


def test_silent_ssh_port_is_an_error_in_bounded_time(silent_hosts_file: Path, tmp_path: Path) -> None:
    start = time.monotonic()
    code, report = run_json(silent_hosts_file, tmp_path, "--connect-timeout", "2")
    elapsed = time.monotonic() - start
    assert code == 4
    assert problems(report) == {("ssh.connect", "silent", "error")}
    assert next(f for f in report["findings"] if f["status"] == "error")["observed"] == "banner"
    assert elapsed < 20


def test_interrupt_writes_the_partial_report(silent_hosts_file: Path, tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "preflight", "run", "--hosts", str(silent_hosts_file), "--json",
                             "--connect-timeout", "60", "--report-dir", str(tmp_path / "r")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=interruptible)
    time.sleep(4)  # the four real nodes finish; "silent" waits for a banner
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - start < 10
    assert proc.returncode == 130, err
    saved = json.loads((tmp_path / "r" / "report.json").read_text())
    assert json.loads(out) == saved
    assert saved["complete"] is False
    reachable = {h["name"]: h["reachable"] for h in saved["hosts"]}
    assert reachable == {"node1": True, "node2": True, "node3": True, "node4": True, "silent": False}
    assert {f["host"] for f in saved["findings"] if f["check"] == "sysctl.somaxconn"} == {
        "node1", "node2", "node3", "node4"}
    assert "partial report written" in err


def test_progress_is_shown_on_a_terminal_only(hosts_file: Path, tmp_path: Path) -> None:
    command = f"{sys.executable} -m preflight run --hosts {hosts_file} --report-dir {tmp_path / 'tty'}"
    tty = subprocess.run(["script", "-qec", command, "/dev/null"], capture_output=True, text=True, timeout=60,
                         check=False)
    assert tty.returncode == 0, tty.stdout
    assert "checking" in tty.stdout and "hosts x checks" in tty.stdout
    piped = preflight("run", "--hosts", hosts_file, "--report-dir", tmp_path / "pipe")
    assert "checking" not in piped.stdout + piped.stderr


def test_proxy_jump_reaches_a_host_through_another(cluster: NetnsCluster, tmp_path: Path) -> None:
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", nodes=[cluster.node("node2")])
    doc = yaml.safe_load(hosts.read_text())
    doc["hosts"][0]["proxy_jump"] = f"root@{cluster.node('node1').address}:22"
    hosts.write_text(yaml.safe_dump(doc))
    code, report = run_json(hosts, tmp_path, "--checks", "sysctl")
    assert code == 0, problems(report)
    assert [h["name"] for h in report["hosts"] if h["reachable"]] == ["node2"]
    cluster.stop_sshd("node1")
    try:
        code, report = run_json(hosts, tmp_path, "--checks", "sysctl", "--connect-timeout", "3")
    finally:
        cluster.start_sshd("node1")
    assert code == 4 and problems(report) == {("ssh.connect", "node2", "error")}, "a dead jump host is named"


def test_hung_probe_is_killed_and_the_rest_of_the_host_still_reported(cluster: NetnsCluster,
                                                                     tmp_path: Path) -> None:
    hung = tmp_path / "hung-python"
    hung.write_text("#!/bin/sh\nexec sleep 37\n")
    hung.chmod(0o755)
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml")
    doc = yaml.safe_load(hosts.read_text())
    doc["hosts"][1]["python"] = str(hung)
    hosts.write_text(yaml.safe_dump(doc))
    start = time.monotonic()
    code, report = run_json(hosts, tmp_path, "--command-timeout", "2", "--checks", "versions,sysctl")
    assert time.monotonic() - start < 20
    assert code == 4
    assert problems(report) == {("versions.python", "node2", "error")}
    error = next(f for f in report["findings"] if f["status"] == "error")
    assert "timed out" in error["message"]
    assert {f["host"] for f in report["findings"] if f["check"] == "sysctl.somaxconn"} == {
        "node1", "node2", "node3", "node4"}, "the host's other probes still ran"
    leftover = subprocess.run(["pgrep", "-f", "sleep 37"], capture_output=True, text=True, check=False)
    assert leftover.stdout == "", "the hung probe was killed with its process group"


def test_local_run_without_hosts(tmp_path: Path) -> None:
    proc = preflight("run", "--json", "--report-dir", tmp_path / "r")
    assert proc.returncode in (0, 1, 4), proc.stderr
    report = json.loads(proc.stdout)
    assert len(report["hosts"]) == 1 and report["hosts"][0]["reachable"]
    assert {f["check"] for f in report["findings"]} >= {"ssh.connect", "sysctl.somaxconn", "versions.python"}


def test_default_report_dirs_do_not_clobber(tmp_path: Path, hosts_file: Path) -> None:
    first = preflight("run", "--hosts", hosts_file, "--checks", "sysctl", cwd=tmp_path)
    second = preflight("run", "--hosts", hosts_file, "--checks", "sysctl", cwd=tmp_path)
    assert first.returncode == second.returncode == 0
    assert len(list((tmp_path / "reports").glob("*/report.json"))) == 2
