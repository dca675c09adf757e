"""hccn.link on the namespace cluster: simulated hccn_tool per node (tests/sim), real CLI, real SSH.

Each case breaks one thing on one node through the simulator's state file, runs
``preflight run --checks hccn.link`` and asserts exactly which host and device get which status.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from ascend_sim import healthy_state, install, simulated_cluster, uninstall, write_state
from conftest import cluster_fixture
from netns_cluster import NetnsCluster

pytestmark = pytest.mark.cluster

DEVICES = 4  # devices_per_host: 4 instead of 8 keeps each run around a second
SUBS = ("up", "net_health", "lldp", "tls", "optical", "mtu", "speed", "flaps")


def node_ips(k: int) -> list[str]:
    """Device IPs of node k (A2 layout: one segment per node)."""
    return [f"192.168.{k}.{10 + i}" for i in range(DEVICES)]


def state(k: int) -> dict[str, Any]:
    return healthy_state("910B3", node_ips(k))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from simulated_cluster(cluster_fixture, tmp_path_factory, 4, "pfhlink", 14, state)


def run(cluster: NetnsCluster, tmp_path: Path, accelerator: str = "npu") -> tuple[int, list[dict[str, Any]]]:
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml",
                                     cluster={"accelerator": accelerator, "devices_per_host": DEVICES})
    proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json",
                           "--checks", "hccn.link", "--report-dir", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode in (0, 1, 4), proc.stderr
    findings = [f for f in json.loads(proc.stdout)["findings"] if f["check"].startswith("hccn.link")]
    return proc.returncode, findings


def broken(cluster: NetnsCluster, tmp_path: Path, node: int,
           change: Callable[[dict[str, Any]], None]) -> tuple[int, list[dict[str, Any]]]:
    """Run with node ``node``'s simulator state changed by ``change``; always restore it."""
    bad = state(node)
    change(bad)
    write_state(cluster, f"node{node}", bad)
    try:
        return run(cluster, tmp_path)
    finally:
        write_state(cluster, f"node{node}", state(node))


def problems(findings: list[dict[str, Any]]) -> list[tuple[str, str, str, int | None]]:
    return sorted((f["check"], f["host"], f["status"], f.get("device")) for f in findings if f["status"] != "pass")


def passed(findings: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(f["check"], f["host"]) for f in findings if f["status"] == "pass"}


def all_passes(but: set[tuple[str, str]] | None = None) -> set[tuple[str, str]]:
    """Every (check id, host) pair of the matrix, less ``but``."""
    return {(f"hccn.link.{s}", f"node{k}") for s in SUBS for k in range(1, 5)} - (but or set())


def test_healthy_cluster_passes(cluster: NetnsCluster, tmp_path: Path) -> None:
    code, findings = run(cluster, tmp_path)
    assert code == 0, problems(findings)
    assert problems(findings) == [] and passed(findings) == all_passes()
    lldp = next(f for f in findings if f["check"] == "hccn.link.lldp" and f["host"] == "node1")
    assert "leaf-1 400GE1/1/1:1" in lldp["message"]


def test_gpu_cluster_skips_once(cluster: NetnsCluster, tmp_path: Path) -> None:
    code, findings = run(cluster, tmp_path, "gpu")
    assert code == 0 and [(f["check"], f["host"], f["status"]) for f in findings] == [("hccn.link", None, "skip")]


def test_down_link_is_named(cluster: NetnsCluster, tmp_path: Path) -> None:
    code, findings = broken(cluster, tmp_path, 2, lambda s: s["devices"][1].update(link="DOWN"))
    assert code == 1
    assert problems(findings) == [("hccn.link.up", "node2", "fail", 1)]
    assert passed(findings) == all_passes({("hccn.link.up", "node2")})


def test_a_port_trained_below_the_cluster_speed_is_named(cluster: NetnsCluster, tmp_path: Path) -> None:
    code, findings = broken(cluster, tmp_path, 3, lambda s: s["devices"][1].update(speed=100000))
    assert code == 1
    assert problems(findings) == [("hccn.link.speed", "node3", "fail", 1)]
    bad = next(f for f in findings if f["status"] == "fail")
    assert bad["observed"] == "100000 Mb/s" and bad["expected"].startswith("200000 Mb/s")


def test_socket_fail_net_health_is_named_and_explained(cluster: NetnsCluster, tmp_path: Path) -> None:
    code, findings = broken(cluster, tmp_path, 3, lambda s: s["devices"][0].update(net_health="Socket fail"))
    assert code == 1
    assert problems(findings) == [("hccn.link.net_health", "node3", "fail", 0)]
    bad = next(f for f in findings if f["status"] == "fail")
    assert bad["observed"] == "Socket fail" and "socket could not be set up" in bad["message"]


def test_missing_lldp_neighbour_warns(cluster: NetnsCluster, tmp_path: Path) -> None:
    code, findings = broken(cluster, tmp_path, 1, lambda s: s["devices"][2].update(lldp=None))
    assert code == 0, "a missing LLDP neighbour is a warning"
    assert problems(findings) == [("hccn.link.lldp", "node1", "warn", 2)]


def test_a_port_that_flapped_half_an_hour_ago_warns(cluster: NetnsCluster, tmp_path: Path) -> None:
    # LINK DOWN 30 min ago, UP again a minute later (the port is UP now); the boot's own LINK UP stays ignored
    # The check ignores changes in the first 15 min after boot and reads /proc/uptime, as the simulator does: on a
    # machine booted less than 45 min ago (a fresh CI box) this flap would be the boot's own. node4 sees a day.
    flap = [[1740, "UP"], [1800, "DOWN"], [10 ** 9, "UP"]]
    uptime = tmp_path / "uptime"
    uptime.write_text("86400.00 170000.00\n")
    cluster.bind_over("node4", uptime, "/proc/uptime")
    try:
        code, findings = broken(cluster, tmp_path, 4, lambda s: s["devices"][2].update(link_changes=flap))
    finally:
        cluster.unhide_binary("node4", "/proc/uptime")
    assert code == 0, "a flap in the past is a warning"
    assert problems(findings) == [("hccn.link.flaps", "node4", "warn", 2)]
    warned = next(f for f in findings if f["status"] == "warn")
    assert "device 2: 1 link down(s) in the last 24 h" in warned["message"]
    assert re.search(r"(29|30) min before the port's clock now", warned["message"]), warned["message"]


def test_a_weak_receive_lane_fails_the_optical_check(cluster: NetnsCluster, tmp_path: Path) -> None:
    weak = [1.0189, 0.0054, 0.9907, 1.0213]  # lane 1 below the module's 0.1445 mW low threshold
    code, findings = broken(cluster, tmp_path, 1, lambda s: s["devices"][3].update(optical_rx=weak))
    assert code == 1
    assert problems(findings) == [("hccn.link.optical", "node1", "fail", 3)]
    bad = next(f for f in findings if f["status"] == "fail")
    assert bad["observed"] == "Rx power on lane 1 is 0.0054 mW, below the module's low threshold 0.1445 mW"


def test_tls_mismatch_on_one_node(cluster: NetnsCluster, tmp_path: Path) -> None:
    def tls_on(s: dict[str, Any]) -> None:
        for device in s["devices"]:
            device["tls"] = 1

    code, findings = broken(cluster, tmp_path, 4, tls_on)
    assert code == 1
    assert problems(findings) == [("hccn.link.tls", "node4", "fail", d) for d in range(DEVICES)]
    assert passed(findings) == all_passes({("hccn.link.tls", "node4")})


def test_tool_missing_and_busy_device(cluster: NetnsCluster, tmp_path: Path) -> None:
    uninstall(cluster, "node2")
    try:
        code, findings = broken(cluster, tmp_path, 3, lambda s: s["devices"][3].update(error="busy"))
    finally:
        install(cluster, "node2", state(2))
    assert code == 4
    assert problems(findings) == [("hccn.link", "node2", "error", None), ("hccn.link", "node3", "error", 3)]
    missing = next(f for f in findings if f["host"] == "node2")
    assert "/usr/local/Ascend/driver/tools/hccn_tool" in missing["message"]
    assert passed(findings) == all_passes({(f"hccn.link.{s}", "node2") for s in SUBS})


def test_init_passes_detect_ip_set_warns_unsupported_ops_skip(cluster: NetnsCluster, tmp_path: Path) -> None:
    """Issue 18: Init is healthy; Detect ip set is a missing netdetect address; 'not supported' is a skip."""
    def change(s: dict[str, Any]) -> None:
        s["devices"][0]["net_health"] = "Init"
        s["devices"][1]["net_health"] = "Detect ip set"
        for device in s["devices"]:
            device["unsupported"] = ["-tls", "-optical", "-mtu"]

    code, findings = broken(cluster, tmp_path, 2, change)
    assert code == 0, problems(findings)
    assert problems(findings) == [("hccn.link.mtu", "node2", "skip", None),
                                  ("hccn.link.net_health", "node2", "warn", 1),
                                  ("hccn.link.optical", "node2", "skip", None),
                                  ("hccn.link.tls", "node2", "skip", None)]
    warn = next(f for f in findings if f["status"] == "warn")
    assert "hccn_tool -i 1 -netdetect -s address" in warn["remedy"]
    skip = next(f for f in findings if f["check"] == "hccn.link.tls" and f["host"] == "node2")
    assert "not supported on this product" in skip["message"]
    assert passed(findings) == all_passes({("hccn.link.net_health", "node2"), ("hccn.link.tls", "node2"),
                                           ("hccn.link.optical", "node2"), ("hccn.link.mtu", "node2")})
