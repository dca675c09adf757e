"""``--accelerator auto``: this machine's accelerator from npu-smi / nvidia-smi (simulated, in their real formats),
and the report says which was used and why. Runs ``preflight node`` / ``preflight run`` as a user would."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import gpu_sim
from ascend_sim import healthy_state as npu_state
from cli_runner import preflight

from preflight.app import load_cluster

SIM = Path(__file__).resolve().parent / "sim"


def with_path(folder: Path) -> dict[str, str]:
    return {"PATH": f"{folder}:{os.environ['PATH']}"}


def npu_tools(root: Path, state: dict[str, Any]) -> Path:
    """npu-smi (the simulator, state next to it) in ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "npu-smi").write_text(f"#!{sys.executable} -S\n" + (SIM / "npu-smi").read_text().split("\n", 1)[1])
    (root / "npu-smi").chmod(0o755)
    (root / "sim_state.json").write_text(json.dumps(state))
    return root


def node_json(env: dict[str, str], *args: str) -> dict[str, Any]:
    proc = preflight("node", "--json", *args, env=env)
    assert proc.returncode in (0, 1, 4), proc.stderr
    return dict(json.loads(proc.stdout))


def checks_of(report: dict[str, Any], family: str) -> dict[str, str]:
    return {f["check"]: f["status"] for f in report["findings"] if f["check"].startswith(family)}


def test_a_gpu_node_is_judged_as_one(tmp_path: Path) -> None:
    tools = gpu_sim.install_into(tmp_path / "nvidia", gpu_sim.healthy_state(4))
    report = node_json(with_path(tools), "--checks", "gpu.devices")
    assert report["cluster"]["accelerator"] == "gpu" and report["cluster"]["devices_per_host"] == 4
    assert report["cluster"]["accelerator_reason"] == "auto: nvidia-smi -L lists 4 GPUs"
    statuses = checks_of(report, "gpu.devices")
    assert statuses.get("gpu.devices.count") == "pass" and "fail" not in statuses.values(), report["findings"]


def test_a_gpu_node_whose_driver_is_not_loaded_says_why_it_was_judged_as_cpu(tmp_path: Path) -> None:
    state = {**gpu_sim.healthy_state(2), "error": "driver"}
    tools = gpu_sim.install_into(tmp_path / "nvidia", state)
    report = node_json(with_path(tools), "--checks", "sysctl")
    reason = report["cluster"]["accelerator_reason"]
    assert report["cluster"]["accelerator"] == "cpu" and "nvidia-smi -L failed (exit 9" in reason, reason


def test_an_npu_node_is_judged_as_one(tmp_path: Path) -> None:
    tools = npu_tools(tmp_path / "ascend", npu_state("910B3", [f"192.168.1.{10 + i}" for i in range(8)]))
    report = node_json(with_path(tools), "--checks", "npu")
    assert report["cluster"]["accelerator"] == "npu" and report["cluster"]["devices_per_host"] == 8
    assert report["cluster"]["accelerator_reason"] == "auto: npu-smi info -l counts 8 NPUs"
    assert checks_of(report, "npu.count") == {"npu.count": "pass"}, report["findings"]


def test_explicit_choice_and_the_terminal_says_which(tmp_path: Path) -> None:
    report = node_json({}, "--checks", "sysctl", "--accelerator", "gpu", "--devices-per-host", "2")
    assert report["cluster"] == {**report["cluster"], "accelerator": "gpu", "devices_per_host": 2,
                                 "accelerator_reason": "--accelerator gpu"}
    proc = preflight("run", "--checks", "sysctl", "--report-dir", tmp_path / "r")
    assert "accelerator cpu: auto: no npu-smi; no nvidia-smi: judged as a cpu machine" in proc.stdout, proc.stdout
    bad = preflight("run", "--accelerator", "tpu", "--report-dir", tmp_path / "r2")
    assert bad.returncode == 2 and "--accelerator must be one of" in bad.stderr


def test_hosts_yaml_decides_unless_the_option_is_given(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text("cluster:\n  accelerator: npu\nhosts:\n  - n1\n")
    assert load_cluster(hosts).cluster.accelerator_reason == "hosts.yaml cluster.accelerator"
    assert load_cluster(hosts, accelerator="gpu").cluster.accelerator == "gpu"
    hosts.write_text("hosts:\n  - n1\n")
    unset = load_cluster(hosts).cluster
    assert unset.accelerator == "cpu" and "sets no cluster.accelerator" in unset.accelerator_reason
