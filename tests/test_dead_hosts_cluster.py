"""A dead host costs its connect timeout, not a minute (issue 35), over real SSH: one namespace node, one
whose sshd is stopped (its port refuses), one name that does not resolve, ``--connect-timeout 2``.

Before: with the dead host as the master, the live node's connect retried for a listener that never starts
(``listener_wait``, 10 s: wall 11 s); with the live node as the master, net.reachability said nothing at all.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from cli_runner import preflight
from conftest import cluster_fixture
from netns_cluster import NetnsCluster

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=2, name="pfdead", subnet=61)


@pytest.mark.parametrize("order", [("node1", "node2", "ghost"), ("node2", "ghost", "node1")],
                         ids=["live-master", "dead-master"])
def test_dead_hosts_are_not_waited_for(cluster: NetnsCluster, tmp_path: Path, order: tuple[str, ...]) -> None:
    cluster.stop_sshd("node2")  # port 22 refuses from now on (idempotent)
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml")
    doc = yaml.safe_load(hosts.read_text())
    by_name = {h["name"]: h for h in doc["hosts"]} | {"ghost": {"name": "ghost", "address": "nohost.invalid"}}
    doc["hosts"] = [by_name[name] for name in order]
    hosts.write_text(yaml.safe_dump(doc, sort_keys=False))
    start = time.monotonic()
    proc = preflight("run", "--hosts", hosts, "--connect-timeout", "2", "--json", "--report-dir", tmp_path / "r",
                     timeout=90)
    wall = time.monotonic() - start
    assert proc.returncode == 4, proc.stderr  # the dead hosts are ssh.connect errors; the live node passes
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert {h["name"]: h["reachable"] for h in report["hosts"]} == {"node1": True, "node2": False, "ghost": False}
    assert report["duration_s"] < 6.0, "the run waited for hosts already known unreachable"
    assert wall - report["duration_s"] < 3.0, f"{wall:.1f} s wall, report.json says {report['duration_s']} s"
    (skip,) = [f for f in report["findings"] if f["check"] == "net.reachability"]
    assert skip["status"] == "skip"
    assert skip["message"].endswith("nothing to test (fewer than 2 hosts: 1 of 3 reachable with a working python)")
