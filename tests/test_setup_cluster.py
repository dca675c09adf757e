"""``setup:`` over real SSH: each host's lines run before its python-level probes (versions.setup says what
ran, or which line failed), and on npu clusters CANN's set_env.sh is sourced from the node's own toolkit."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import cluster_fixture
from netns_cluster import NetnsCluster

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=3, name="pfsetup", subnet=111)


def run(cluster: NetnsCluster, tmp_path: Path, setups: dict[str, list[str]], accelerator: str = "cpu",
        checks: str = "versions") -> list[dict[str, Any]]:
    hosts = cluster.write_hosts_yaml(tmp_path / "hosts.yaml", cluster={"accelerator": accelerator})
    doc = yaml.safe_load(hosts.read_text())
    for entry in doc["hosts"]:
        if entry["name"] in setups:
            entry["setup"] = setups[entry["name"]]
    hosts.write_text(yaml.safe_dump(doc, sort_keys=False))
    proc = subprocess.run([sys.executable, "-m", "preflight", "run", "--hosts", str(hosts), "--json",
                           "--report-dir", str(tmp_path / "report"), "--checks", checks],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode in (0, 1, 4), proc.stderr
    return list(json.loads(proc.stdout)["findings"])


def test_setup_lines_run_before_the_python_probes_and_a_failing_one_is_named(cluster: NetnsCluster,
                                                                              tmp_path: Path) -> None:
    findings = run(cluster, tmp_path, {"node1": ["export PF_SETUP_SEEN=1"],
                                       "node2": ["source /nonexistent/set_env.sh", "export A=1"]})
    setup = {f["host"]: f for f in findings if f["check"] == "versions.setup"}
    assert set(setup) == {"node1", "node2"}, "node3 has no setup: nothing to say"
    assert setup["node1"]["status"] == "pass" and "ran 1 line(s): export PF_SETUP_SEEN=1" in setup["node1"]["message"]
    assert setup["node2"]["status"] == "fail" and "source /nonexistent/set_env.sh" in setup["node2"]["observed"]
    python = {f["host"]: f["status"] for f in findings if f["check"] == "versions.python"}
    assert python == {"node1": "pass", "node2": "pass", "node3": "pass"}, "the probe still ran after the failure"


def test_npu_hosts_source_their_toolkits_set_env_by_default(cluster: NetnsCluster, tmp_path: Path) -> None:
    toolkit = cluster.ascend_root("node2") / "ascend-toolkit"
    toolkit.mkdir(parents=True, exist_ok=True)
    (toolkit / "set_env.sh").write_text("export ASCEND_HOME_PATH=/usr/local/Ascend/ascend-toolkit/latest\n")
    try:
        findings = run(cluster, tmp_path, {})
        assert not [f for f in findings if f["check"] == "versions.setup"], "cpu cluster: no default setup"
        findings = run(cluster, tmp_path / "npu", {}, accelerator="npu")
    finally:
        (toolkit / "set_env.sh").unlink()
    setup = {f["host"]: f for f in findings if f["check"] == "versions.setup"}
    assert set(setup) == {"node2"}, "only node2 has a toolkit: the others say nothing (versions.cann judges them)"
    assert setup["node2"]["status"] == "pass"
    assert setup["node2"]["message"].endswith("sourced /usr/local/Ascend/ascend-toolkit/set_env.sh")
