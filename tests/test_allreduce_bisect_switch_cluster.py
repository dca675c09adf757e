"""--bisect with switches on the namespace cluster (issue 41, "across switches or racks"): 8 nodes labelled as two
switches in hosts.yaml (node1-4 ``leafA``, node5-8 ``leafB``). A slow uplink is made with tc on leafB's nodes only
for traffic to leafA's addresses (an htb class of 20 Mbit/s that u32 filters by destination send to; this kernel
has no prio qdisc): the path leafA <-> leafB is named and no host. One slow node (tc on its whole link) is still
named with the labels. The namespace cluster is one bridge: the "switches" are the labels and the shaping, not two
real switches."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import cluster_fixture
from netns_cluster import NetnsCluster
from test_allreduce_bisect_cluster import bisect as bisect_hosts
from test_allreduce_bisect_cluster import named, shaped, unshaped

pytestmark = pytest.mark.cluster

SWITCHES = {f"node{i}": "leafA" if i <= 4 else "leafB" for i in range(1, 9)}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=8, name="pfsw", subnet=23)


def bisect(cluster: NetnsCluster, tmp_path: Path, **params: Any) -> tuple[int, list[dict[str, Any]]]:
    """``run --bisect --json`` over the 8 nodes, each with its ``switch:``: (exit code, the allreduce findings)."""
    return bisect_hosts(cluster, tmp_path, switches=SWITCHES, timeout=600, **params)


def uplink_shaped(cluster: NetnsCluster) -> None:
    """leafB's nodes send to leafA's addresses through a 20 Mbit/s band; everything else unshaped."""
    far = [cluster.node(n).address for n, s in SWITCHES.items() if s == "leafA"]
    for name in (n for n, s in SWITCHES.items() if s == "leafB"):
        tc = ["tc", "qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb", "default", "10"]
        cluster.exec(name, tc)
        cluster.exec(name, ["tc", "class", "add", "dev", "eth0", "parent", "1:", "classid", "1:10", "htb", "rate",
                            "100gbit"])
        cluster.exec(name, ["tc", "class", "add", "dev", "eth0", "parent", "1:", "classid", "1:30", "htb", "rate",
                            "20mbit", "ceil", "20mbit", "burst", "32kbit"])
        for address in far:
            cluster.exec(name, ["tc", "filter", "add", "dev", "eth0", "protocol", "ip", "parent", "1:0", "prio",
                                "1", "u32", "match", "ip", "dst", f"{address}/32", "flowid", "1:30"])


@pytest.mark.parametrize("nic_gbps", [1.0, 0.0])  # a declared rate; none (round 0 judged against its halves)
def test_a_slow_uplink_between_two_switches_is_named_and_no_host(cluster: NetnsCluster, tmp_path: Path,
                                                                 nic_gbps: float) -> None:
    uplink_shaped(cluster)
    try:
        code, findings = bisect(cluster, tmp_path, nic_gbps=nic_gbps)
    finally:
        unshaped(cluster, [n for n, s in SWITCHES.items() if s == "leafB"])
    problems = [f["message"] for f in findings if f["status"] != "pass"]
    assert code == 1 and named(findings) == set(), problems
    paths = [f for f in findings if f["check"] == "allreduce.busbw" and f["host"] is None and f["status"] == "fail"]
    assert len(paths) == 1 and "switches leafA <-> leafB (their uplink) named by --bisect" in paths[0]["message"], \
        problems
    groups = [f for f in findings if f["check"] == "allreduce.bisect"]
    assert "(8 hosts, switches leafA, leafB)" in groups[0]["message"]
    assert sorted(tuple(f["group"]) for f in groups if f["round"] == 1) == [
        ("node1", "node2", "node3", "node4"), ("node5", "node6", "node7", "node8")]


def test_one_slow_node_is_still_named_with_switches(cluster: NetnsCluster, tmp_path: Path) -> None:
    shaped(cluster, ["node6"])
    try:
        code, findings = bisect(cluster, tmp_path, nic_gbps=1.0)
    finally:
        unshaped(cluster, ["node6"])
    problems = [f["message"] for f in findings if f["status"] != "pass"]
    assert code == 1 and named(findings) == {"node6"}, problems
    assert not [f for f in findings if f["host"] is None and f["status"] == "fail"], problems
    confirm = [f for f in findings if f["check"] == "allreduce.bisect" and "confirming node6" in f["message"]]
    assert confirm and all(SWITCHES[h] == "leafB" for f in confirm for h in f["group"]), problems
