"""Collect-then-judge on the namespace cluster: `node --facts` on each node (over real SSH, inside the node) plus
`judge` gives the findings `run` gives over SSH, healthy and with faults, active checks and os.clock aside.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ascend_sim
import gpu_sim
import pytest
import yaml
from cli_runner import preflight
from conftest import cluster_fixture
from k8s_pods import JOB_UID, PodCommand, config_map, container_command, containers, job
from netns_cluster import NetnsCluster

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parent.parent
NODES = ("node1", "node2", "node3")
# Only `run` can tell these (a live connection between hosts, the controller's clock), and the findings about
# how the outputs came back (ssh.connect from run, facts.file from judge).
CONTROLLER_ONLY = ("net.reachability", "hccn.reachability", "os.clock")
VOLATILE = ("os.memory", "os.disk")  # free memory and disk move between two gathers: the status must agree


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    yield from cluster_fixture(tmp_path_factory, size=3, name="pfjudge", subnet=180)


@pytest.fixture
def hosts_file(cluster: NetnsCluster, tmp_path: Path) -> Path:
    return cluster.write_hosts_yaml(tmp_path / "hosts.yaml", extra_defaults={"env": {"NCCL_SOCKET_IFNAME": "eth0"}})


def on_node(cluster: NetnsCluster, node: str, command: str, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    """``command`` in ``node`` over real SSH (its network, hostname and /usr/local/Ascend view), with this
    worktree's preflight importable and on PATH as ``preflight``."""
    address = cluster.node(node).address
    bin_dir = cluster.workdir / "bin"
    if not (bin_dir / "preflight").exists():
        bin_dir.mkdir(exist_ok=True)
        (bin_dir / "preflight").write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m preflight \"$@\"\n")
        (bin_dir / "preflight").chmod(0o755)
    exports = {"PYTHONPATH": str(ROOT), "PATH": f"{bin_dir}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/bin",
               **(env or {})}
    prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in exports.items())
    return subprocess.run(["ssh", "-i", str(cluster.client_key), "-o", f"UserKnownHostsFile={cluster.known_hosts}",
                           "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", f"root@{address}",
                           f"cd {shlex.quote(str(ROOT))} && export {prefix} && {command}"],
                          capture_output=True, text=True, timeout=120, check=False)


def collect(cluster: NetnsCluster, hosts: Path, folder: Path, *extra: str) -> list[Path]:
    """Each node's `preflight node --facts -` (stdout, as `kubectl logs` collects it) saved as folder/NODE.json."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for node in NODES:
        args = " ".join(shlex.quote(a) for a in ("--hosts", str(hosts), *extra))
        proc = on_node(cluster, node, f"preflight node --facts - --timeout 60 {args}")
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == "", "stdout and stderr end up in one log: nothing else may be printed"
        (folder / f"{node}.json").write_text(proc.stdout)
        written.append(folder / f"{node}.json")
    return written


def run_and_judge(cluster: NetnsCluster, hosts: Path, tmp_path: Path, *extra: str
                  ) -> tuple[tuple[int, dict[str, Any]], tuple[int, dict[str, Any]]]:
    """(exit code, JSON report) of `run` over SSH, then of `judge` over every node's facts."""
    ran = preflight("run", "--hosts", hosts, "--json", "--report-dir", tmp_path / "run", *extra)
    assert ran.returncode in (0, 1, 4), ran.stderr
    collect(cluster, hosts, tmp_path / "facts", *extra)
    judged = preflight("judge", tmp_path / "facts", "--hosts", hosts, "--json", "--report-dir", tmp_path / "judge")
    assert judged.returncode in (0, 1, 4), judged.stderr
    return (ran.returncode, json.loads(ran.stdout)), (judged.returncode, json.loads(judged.stdout))


def comparable(report: dict[str, Any]) -> set[tuple[str, str | None, str, str | None, str | None]]:
    """(check, host, status, observed, expected) of every finding both ways can tell."""
    return {(f["check"], f["host"], f["status"], None if f["check"] in VOLATILE else f["observed"],
             None if f["check"] in VOLATILE else f["expected"])
            for f in report["findings"]
            if not f["check"].startswith(("ssh.", "facts.")) and f["check"] not in CONTROLLER_ONLY}


def problems(report: dict[str, Any]) -> set[tuple[str, str | None, str]]:
    return {(f["check"], f["host"], f["status"]) for f in report["findings"] if f["status"] in ("fail", "error")}


def test_healthy_cluster_judges_as_run_does(cluster: NetnsCluster, hosts_file: Path, tmp_path: Path) -> None:
    (run_code, ran), (judge_code, judged) = run_and_judge(cluster, hosts_file, tmp_path)
    assert run_code == judge_code == 0, (problems(ran), problems(judged))
    assert comparable(judged) == comparable(ran)
    assert len(comparable(ran)) > 30, "the comparison covers every node check"
    files = {f["host"]: f for f in judged["findings"] if f["check"] == "facts.file"}
    assert set(files) == set(NODES) and {f["status"] for f in files.values()} == {"pass"}
    assert not any(f["check"] == "facts.cluster" for f in judged["findings"]), "gathered with the same hosts.yaml"
    not_run = {f["check"]: f for f in judged["findings"] if f["check"] in CONTROLLER_ONLY}
    assert not_run["net.reachability"]["status"] == "skip" and "not run by `preflight judge`" in \
        not_run["net.reachability"]["message"]
    assert not_run["os.clock"]["status"] == "skip" and not_run["os.clock"]["host"] is None
    assert {f["status"] for f in ran["findings"] if f["check"] == "net.reachability"} == {"pass"}
    assert [h["name"] for h in judged["hosts"]] == list(NODES)


def test_faults_are_found_the_same_way(cluster: NetnsCluster, hosts_file: Path, tmp_path: Path) -> None:
    """A sysctl below the site's threshold (hosts.yaml `checks:`, which only the judge reads), a CANN version
    drift and an MTU mismatch, each on one node."""
    with hosts_file.open("a") as f:
        f.write("checks:\n  sysctl:\n    min_somaxconn: 4096\n")
    cluster.sysctl("node2", "net.core.somaxconn", "128")
    cluster.exec("node3", ["ip", "link", "set", "dev", "eth0", "mtu", "1400"])
    for node in cluster.nodes:
        ascend_sim.set_cann_version(cluster, node, "8.1.RC1" if node.name == "node2" else "8.0.0")
    try:
        (run_code, ran), (judge_code, judged) = run_and_judge(cluster, hosts_file, tmp_path)
    finally:
        cluster.sysctl("node2", "net.core.somaxconn", "65535")
        cluster.exec("node3", ["ip", "link", "set", "dev", "eth0", "mtu", "1500"])
        for node in cluster.nodes:
            shutil.rmtree(cluster.ascend_root(node) / "ascend-toolkit")
    assert run_code == judge_code == 1
    assert comparable(judged) == comparable(ran)
    assert {("sysctl.somaxconn", "node2", "fail"), ("versions.cann", "node2", "fail"),
            ("net.mtu", "node3", "fail")} <= problems(judged)
    assert problems(judged) == {p for p in problems(ran) if p[0] not in CONTROLLER_ONLY}


def test_selection_and_a_missing_and_a_garbled_file(cluster: NetnsCluster, hosts_file: Path, tmp_path: Path) -> None:
    """--checks travels in the files; node3 sent nothing and node2's file was cut off: both named, node1 judged."""
    folder = tmp_path / "facts"
    collect(cluster, hosts_file, folder, "--checks", "sysctl")
    (folder / "node3.json").unlink()
    text = (folder / "node2.json").read_text()
    (folder / "node2.json").write_text(text[: len(text) // 2])
    proc = preflight("judge", folder, "--hosts", hosts_file, "--json", "--report-dir", tmp_path / "judge")
    assert proc.returncode == 4, proc.stderr
    lines = text[: len(text) // 2].count("\n") + 1
    assert f"preflight: {folder / 'node2.json'}:{lines}: not JSON" in proc.stderr
    report = json.loads(proc.stdout)
    assert problems(report) == {("facts.file", None, "error"), ("facts.file", "node2", "error"),
                                ("facts.file", "node3", "error")}
    assert {f["host"] for f in report["findings"] if f["check"] == "sysctl.somaxconn"} == {"node1"}
    assert not any(f["check"].startswith(("net.", "os.")) for f in report["findings"]), "only what was selected"


# --- examples/kubernetes: each Pod's command, run on the namespace nodes -----------------------------------------


def site_hosts_yaml(config: str, folder: Path) -> Path:
    """The example ConfigMap's hosts.yaml with this cluster's node names (the only thing a site changes)."""
    doc = yaml.safe_load(config_map(config)["hosts.yaml"])
    doc["hosts"] = list(NODES)
    doc["cluster"]["master"] = NODES[0]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hosts.yaml").write_text(yaml.safe_dump(doc))
    return folder


def run_pod(cluster: NetnsCluster, node: str, command: PodCommand) -> subprocess.CompletedProcess[str]:
    """The container's command on ``node``, stderr into stdout as `kubectl logs` shows them."""
    return on_node(cluster, node, shlex.join(command.argv) + " 2>&1", env=command.env)


def test_gpu_example_pods_print_facts_that_judge_reads(cluster: NetnsCluster, tmp_path: Path) -> None:
    """facts-gpu.yaml: each Pod prints its facts; its log (stdout and stderr together) is the facts file."""
    volumes = {"hosts": site_hosts_yaml("preflight-hosts-gpu", tmp_path / "config")}
    facts = tmp_path / "facts"
    facts.mkdir()
    for index, node in enumerate(NODES):
        gpu_sim.install(cluster, node, gpu_sim.healthy_state(8, node=index + 1))
    try:
        for node in NODES:
            command = container_command(job("preflight-facts-gpu"), node, volumes)
            assert command.env["PREFLIGHT_NODE_NAME"] == node
            proc = run_pod(cluster, node, command)
            assert proc.returncode == 0, proc.stdout
            (facts / f"{node}.json").write_text(proc.stdout)  # collect-and-judge.sh: kubectl logs > NODE.json
        site = yaml.safe_load((volumes["hosts"] / "hosts.yaml").read_text())  # the same, with SSH to the nodes
        ssh_hosts = cluster.write_hosts_yaml(tmp_path / "ssh-hosts.yaml", cluster=site["cluster"],
                                             extra_defaults=site["defaults"])
        ssh_doc = yaml.safe_load(ssh_hosts.read_text())
        del ssh_doc["defaults"]["python"]  # as the Pods: python3 on PATH, a guess (a named one changes versions.*)
        ssh_hosts.write_text(yaml.safe_dump(ssh_doc))
        ran = preflight("run", "--hosts", ssh_hosts, "--json", "--report-dir", tmp_path / "run")
    finally:
        for node in NODES:
            gpu_sim.uninstall(cluster, node)
    proc = preflight("judge", facts, "--hosts", volumes["hosts"] / "hosts.yaml", "--json", "--report-dir",
                     tmp_path / "report")
    assert proc.returncode in (0, 1, 4), proc.stderr
    report = json.loads(proc.stdout)
    assert {f["host"]: f["status"] for f in report["findings"] if f["check"] == "facts.file"} == \
        dict.fromkeys(NODES, "pass")
    count = {f["host"]: (f["status"], f["observed"]) for f in report["findings"]
             if f["check"] == "gpu.devices.count"}
    assert count == dict.fromkeys(NODES, ("pass", "8 GPUs (indexes 0, 1, 2, 3, 4, 5, 6, 7)")), count
    assert report["cluster"]["accelerator"] == "gpu"
    assert ran.returncode == proc.returncode and comparable(json.loads(ran.stdout)) == comparable(report)


def test_npu_example_pods_write_facts_the_judge_pod_reads(cluster: NetnsCluster, tmp_path: Path) -> None:
    """facts-npu.yaml writes each node's facts to the shared volume; judge-npu.yaml's Pod judges them there."""
    volumes = {"hosts": site_hosts_yaml("preflight-hosts-npu", tmp_path / "config"), "facts": tmp_path / "pvc"}
    volumes["facts"].mkdir()
    for index, node in enumerate(NODES):
        ascend_sim.install(cluster, node, ascend_sim.healthy_state(
            "910B3", [f"10.20.{d}.{11 + index}" for d in range(8)]))
    try:
        for node in NODES:
            proc = run_pod(cluster, node, container_command(job("preflight-facts-npu"), node, volumes))
            assert proc.returncode == 0 and proc.stdout == "", proc.stdout
        assert sorted(p.name for p in volumes["facts"].iterdir()) == [f"{n}.json" for n in NODES]
        assert {json.loads(p.read_text())["run_id"] for p in volumes["facts"].iterdir()} == {JOB_UID}, \
            "the Job's uid (controller-uid label -> PREFLIGHT_RUN_ID) is each file's run"
        judge_pod = container_command(job("preflight-judge-npu"), NODES[0], volumes)
        proc = run_pod(cluster, NODES[0], judge_pod)
    finally:
        for node in NODES:
            ascend_sim.uninstall(cluster, node)
    assert proc.returncode in (0, 1, 4), proc.stdout
    assert "node1" in proc.stdout and "node3" in proc.stdout, "the terminal report names every node"
    assert "not run (they need `preflight run`'s controller): hccn.reachability, net.reachability, os.clock" \
        in proc.stdout
    report = json.loads((volumes["facts"] / "report" / "report.json").read_text())
    assert {f["host"]: f["status"] for f in report["findings"] if f["check"] == "facts.file"} == \
        dict.fromkeys(NODES, "pass")
    assert {f["host"] for f in report["findings"] if f["check"] == "npu.chip"} == set(NODES)
    assert {f["status"] for f in report["findings"] if f["check"] == "hccn.reachability"} == {"skip"}


def test_node_check_pods_pass_on_healthy_gpu_nodes(cluster: NetnsCluster) -> None:
    """cluster-check-job.yaml's Pod and init-container.yaml's init container (with the trainer's --ranks and the
    site threshold in PREFLIGHT_NODE_SET): `preflight node` on each node with 8 healthy (simulated) GPUs prints one
    OK line and exits 0, so the trainer would start (versions.gpu_driver skipped: no driver file in the simulator)."""
    checks = [(name, c["name"]) for name in ("preflight-nodes", "train") for c in containers(job(name))
              if c["command"][:2] == ["preflight", "node"]]
    assert checks == [("preflight-nodes", "preflight"), ("train", "preflight")]
    for index, node in enumerate(NODES):
        gpu_sim.install(cluster, node, gpu_sim.healthy_state(8, node=index + 1, hcas=0))  # no RDMA in a netns
    try:
        for name, container in checks:
            for node in NODES:
                command = container_command(job(name), node, {}, name=container)
                # The simulator has no /proc/driver/nvidia/version (procfs takes no file of ours).
                command.argv.extend(["--skip", "versions.gpu_driver"])
                proc = run_pod(cluster, node, command)
                assert proc.returncode == 0, (name, node, proc.stdout)
                assert proc.stdout.startswith(f"preflight node {node}: OK"), proc.stdout
    finally:
        for node in NODES:
            gpu_sim.uninstall(cluster, node)

