"""Against a real Slurm (slurmctld + one slurmd per namespace node, munge): the srun transport and the prolog.

Needs root, the namespace cluster and Debian's slurm-wlm + munge; skips without them unless
PREFLIGHT_REQUIRE_CLUSTER is set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import cluster_fixture
from job_venv import venv_with_cuda_torch
from netns_cluster import NetnsCluster
from slurm_cluster import SlurmCluster, slurm_support_problem

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parent.parent
PROLOG = REPO / "examples" / "slurm" / "prolog.sh"


@pytest.fixture(scope="module")
def netns(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsCluster]:
    problem = slurm_support_problem()
    if problem:
        if os.environ.get("PREFLIGHT_REQUIRE_CLUSTER"):
            pytest.fail(f"the Slurm tests cannot run here: {problem}")
        pytest.skip(problem)
    yield from cluster_fixture(tmp_path_factory, size=3, name="pfslm", subnet=50)


@pytest.fixture(scope="module")
def slurm(netns: NetnsCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    work = tmp_path_factory.mktemp("pfslm-slurm")
    wrapper = work / "prolog-wrapper.sh"  # the site's settings, then the example prolog unchanged
    command = work / "preflight"  # the absolute path the prolog runs (a console script in a real install)
    command.write_text(f"#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} -m preflight \"$@\"\n")
    command.chmod(0o755)
    wrapper.write_text("#!/bin/sh\n"
                       f"export SLURM_CONF={work / 'etc' / 'slurm.conf'}\n"
                       f"export PREFLIGHT={command}\n"
                       "export PREFLIGHT_NODE_ARGS='--checks sysctl'\n"
                       "export PREFLIGHT_NODE_SET='sysctl.min_somaxconn=4096 sysctl.min_tcp_max_syn_backlog=64'\n"
                       f"[ -r {work / 'site.env'} ] && . {work / 'site.env'}  # a test's own settings\n"
                       f"exec {PROLOG}\n")
    wrapper.chmod(0o755)
    with SlurmCluster(netns, work / "etc", prolog=wrapper) as cluster:
        yield cluster


def _salloc(slurm: SlurmCluster, nodes: str, *args: str) -> tuple[int, dict[str, Any]]:
    """``salloc -w nodes preflight run ... --json`` -> exit code and the report."""
    count = len(nodes.split(",")) if "[" not in nodes else 3
    proc = subprocess.run(["salloc", f"--nodes={count}", f"--nodelist={nodes}", sys.executable, "-m", "preflight",
                           "run", "--json", "--report-dir", str(slurm.dir / "reports"), *args],
                          env=slurm.env(), capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.stdout.startswith("{"), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _statuses(report: dict[str, Any], check: str) -> dict[str, str]:
    return {f["host"]: f["status"] for f in report["findings"] if f["check"] == check}


def test_srun_transport_gathers_every_node(slurm: SlurmCluster) -> None:
    # The hosts are Slurm node names with no DNS entry and no SSH keys: only srun can reach them.
    code, report = _salloc(slurm, "node[1-3]", "--hosts", "slurm", "--checks", "sysctl")
    assert code == 0, report["findings"]
    assert [h["name"] for h in report["hosts"]] == ["node1", "node2", "node3"]
    assert all(h["reachable"] for h in report["hosts"])
    assert _statuses(report, "sysctl.somaxconn") == {"node1": "pass", "node2": "pass", "node3": "pass"}


def test_srun_transport_names_the_bad_node(slurm: SlurmCluster) -> None:
    netns = slurm.cluster
    try:
        # 100 passes the prolog's min_tcp_max_syn_backlog=64 (the job starts) but not run's floor 128.
        netns.sysctl("node2", "net.ipv4.tcp_max_syn_backlog", "100")
        code, report = _salloc(slurm, "node[1-3]", "--hosts", "slurm", "--checks", "sysctl")
    finally:
        netns.sysctl("node2", "net.ipv4.tcp_max_syn_backlog", "65535")
    assert code == 1
    assert _statuses(report, "sysctl.tcp_max_syn_backlog") == {"node1": "pass", "node2": "fail", "node3": "pass"}


def test_srun_transport_host_outside_allocation_is_an_error(slurm: SlurmCluster) -> None:
    proc = subprocess.run(["salloc", "--nodes=2", "--nodelist=node[1-2]", sys.executable, "-m", "preflight", "run",
                           "--json", "--transport", "slurm", "--hosts", "nodes:node[1-3]", "--checks", "sysctl",
                           "--report-dir", str(slurm.dir / "reports")],
                          env=slurm.env(), capture_output=True, text=True, timeout=120, cwd=REPO)
    report = json.loads(proc.stdout)
    assert proc.returncode == 4, "an error and no fail: could not tell (exit 4)"
    assert _statuses(report, "ssh.connect") == {"node1": "pass", "node2": "pass", "node3": "error"}, \
        [f["message"] for f in report["findings"] if f["check"] == "ssh.connect"]
    assert "not in this Slurm allocation" in next(f["message"] for f in report["findings"]
                                                  if f["check"] == "ssh.connect" and f["host"] == "node3")


def _listeners_left(netns: NetnsCluster) -> list[str]:
    """Command lines of preflight listeners still running in any node's namespace."""
    left = []
    for node in netns.nodes:
        pids = subprocess.run(["ip", "netns", "pids", node.netns], capture_output=True, text=True,
                              check=False).stdout.split()
        for pid in pids:
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if "preflight-listener-" in cmd:
                left.append(f"{node.name} {pid}: {cmd}")
    return left


def test_reachability_over_srun_names_the_blocked_link(slurm: SlurmCluster) -> None:
    # The master-port test needs a listener on node1 while node2 and node3 connect: two job steps at once
    # (--overlap), the clients' started once the listener's step said it is up; the cleanup ends it.
    netns = slurm.cluster
    code, report = _salloc(slurm, "node[1-3]", "--hosts", "slurm")  # the default checks, as the job pre-step runs
    assert code == 0, [f["message"] for f in report["findings"] if f["status"] not in ("pass", "skip")]
    assert {"versions", "sysctl", "firewall", "net"} <= {f["check"].split(".")[0] for f in report["findings"]}
    assert _statuses(report, "net.reachability") == {"node1": "pass", "node2": "pass", "node3": "pass"}
    assert _listeners_left(netns) == []
    rule = ["INPUT", "-p", "tcp", "--dport", "29500", "-s", netns.node("node3").address, "-j", "REJECT",
            "--reject-with", "tcp-reset"]
    netns.exec("node1", ["iptables", "-I", *rule])
    try:
        code, report = _salloc(slurm, "node[1-3]", "--hosts", "slurm", "--checks", "net.reachability")
    finally:
        netns.exec("node1", ["iptables", "-D", *rule])
    assert code == 1
    reach = {f["host"]: f for f in report["findings"] if f["check"] == "net.reachability"}
    assert {h: f["status"] for h, f in reach.items()} == {"node1": "pass", "node2": "pass", "node3": "fail"}, reach
    assert "node1:29500 (master port): refused" in reach["node3"]["message"], reach["node3"]
    assert _listeners_left(netns) == []


def test_allreduce_over_srun_measures_every_pair(slurm: SlurmCluster) -> None:
    # Workers on every node in one job step per round; gloo rendezvous by the nodes' own names.
    code, report = _salloc(slurm, "node[1-3]", "--hosts", "slurm", "--checks", "allreduce")
    assert code in (0, 1, 4), report["findings"]  # 1 only if this noisy box made one pair look slow
    for check in ("allreduce.run", "allreduce.correct"):
        assert _statuses(report, check) == {"node1": "pass", "node2": "pass", "node3": "pass"}, \
            [f["message"] for f in report["findings"] if f["status"] != "pass"]
    # Every pair measured: a pass carries its figures on allreduce.pair; a pair this noisy box made slow once
    # carries them on its allreduce.busbw warn (normal alone) or fail instead.
    measured = [f for f in report["findings"] if f["check"] in ("allreduce.pair", "allreduce.busbw") and f.get("peer")]
    assert {frozenset((f["host"], f["peer"])) for f in measured} == \
        {frozenset(p) for p in (("node1", "node2"), ("node1", "node3"), ("node2", "node3"))}, measured
    assert all(f["busbw_gbps"] > 0 for f in measured)
    ok = [f for f in measured if f["check"] == "allreduce.pair"]
    assert len({frozenset((f["host"], f["peer"])) for f in ok}) == len(ok)  # one pass finding per pair


def test_max_unhealthy_over_srun_exits_3_and_recommends_no_drain(slurm: SlurmCluster) -> None:
    netns = slurm.cluster
    try:
        for node in ("node1", "node2"):
            netns.sysctl(node, "net.ipv4.tcp_max_syn_backlog", "100")  # passes the prolog, fails run's floor
        code, report = _salloc(slurm, "node[1-3]", "--hosts", "slurm", "--checks", "sysctl",
                               "--max-unhealthy", "34%")
    finally:
        for node in ("node1", "node2"):
            netns.sysctl(node, "net.ipv4.tcp_max_syn_backlog", "65535")
    assert code == 3
    assert report["drain"]["tripped"] is True and report["drain"]["recommend_drain"] == []
    assert report["drain"]["unhealthy"] == ["node1", "node2"]
    assert _statuses(report, "preflight.max_unhealthy") == {None: "error"}


def _srun(slurm: SlurmCluster, node: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["srun", "--nodes=1", f"--nodelist={node}", "echo", "job ran"],
                          env=slurm.env(), capture_output=True, text=True, timeout=60)


def test_prolog_lets_a_healthy_node_run_the_job(slurm: SlurmCluster) -> None:
    proc = _srun(slurm, "node1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "job ran"


def test_prolog_fails_the_job_and_drains_the_bad_node(slurm: SlurmCluster) -> None:
    netns = slurm.cluster
    try:
        netns.sysctl("node3", "net.core.somaxconn", "128")  # below the site's min_somaxconn=4096
        proc = _srun(slurm, "node3")
        reason = slurm.scontrol("show", "node", "node3")
    finally:
        netns.sysctl("node3", "net.core.somaxconn", "65535")
        slurm.wait_idle()  # resumes the drained node
    assert proc.returncode != 0
    assert "job ran" not in proc.stdout
    assert "Prolog" in proc.stderr
    assert "Reason=Prolog error" in reason, "Slurm drains the node itself: the prolog calls no scontrol"
    assert _srun(slurm, "node3").returncode == 0  # back in service with the sysctl fixed


def test_prolog_on_a_gpu_node_whose_torch_is_in_a_venv(slurm: SlurmCluster) -> None:
    """Issue 35: 8 healthy (simulated) GPUs, torch only in the job's venv, the prolog's bare PATH. Without a named
    interpreter python3 lacks torch, which is no evidence about the node: no drain (main drained it: versions.cuda
    failed). With PREFLIGHT_PYTHON naming the venv the versions pass, read from it."""
    import gpu_sim

    work = slurm.dir.parent
    sim_bin = gpu_sim.install_into(work / "gpu-node", gpu_sim.healthy_state(8, hcas=0))
    venv_python = venv_with_cuda_torch(work / "jobvenv")
    reports = work / "prolog-reports"
    site = work / "site.env"
    # The system's python3 (/usr/bin: no torch), as on a node whose training stack lives in venvs. The simulator
    # has no /proc/driver/nvidia/version (procfs takes no file of ours): versions.gpu_driver is left out.
    settings = (f"export PATH={sim_bin}:/usr/sbin:/usr/bin:/sbin:/bin\n"
                "export PREFLIGHT_NODE_ARGS='--checks versions,gpu --skip versions.gpu_driver --accelerator gpu "
                f"--devices-per-host 8 --report-dir {reports}'\n"
                "export PREFLIGHT_NODE_SET=\n")
    seen: dict[str, dict[str, str]] = {}
    try:
        for named in (False, True):
            site.write_text(settings + (f"export PREFLIGHT_PYTHON={venv_python}\n" if named else ""))
            proc = _srun(slurm, "node2")
            state = slurm.scontrol("show", "node", "node2")
            assert proc.returncode == 0 and proc.stdout.strip() == "job ran", (named, proc.stderr, state)
            assert "Reason=Prolog error" not in state
            report = json.loads((reports / "report.json").read_text())
            assert report["exit_code"] == 0, [f for f in report["findings"] if f["status"] in ("fail", "error")]
            seen[str(named)] = {f["check"]: f["status"] for f in report["findings"] if f["host"] == "node2"}
            if named:
                cuda = next(f for f in report["findings"] if f["check"] == "versions.cuda")
                assert cuda["observed"] == "13.0", cuda
    finally:
        site.unlink(missing_ok=True)
        slurm.wait_idle()
    assert (seen["False"]["versions.torch"], seen["False"]["versions.cuda"]) == ("skip", "skip")
    assert (seen["True"]["versions.torch"], seen["True"]["versions.cuda"]) == ("pass", "pass")
    assert seen["True"]["gpu.devices.count"] == "pass"
