"""The NVIDIA simulators (tests/sim) against the real probes and parsers, offline on this machine.

The simulators go into a temporary folder put first on PATH; the gpu.devices and gpu.fabric probes then run
as one ``sh -s`` script, exactly as the engine sends them, and their output goes through the parsers.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gpu_sim import healthy_state, install_into

from preflight.batch import Probe, ProbeOutput, build_script, parse_output
from preflight.checks.base import Check, Facts
from preflight.checks.gpu_devices import GpuDevicesCheck
from preflight.checks.gpu_fabric import GpuFabricCheck
from preflight.inventory import ClusterSpec, Host

GPU = ClusterSpec(accelerator="gpu", devices_per_host=2)
HOST = Host(name="n1", address="n1")


def gather(check: Check, bin_dir: Path) -> Facts:
    probes: Sequence[Probe] = check.probes(HOST, GPU)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    run = subprocess.run(["sh", "-s"], input=build_script(probes, "T").encode(), capture_output=True, env=env,
                         timeout=60, check=False)
    outputs: dict[str, ProbeOutput] = parse_output(run.stdout, [p.key for p in probes], "T", run.stderr)
    return check.parse(outputs)


def sim(tmp_path: Path, **changes: Any) -> Path:
    state = healthy_state(2, node=5)
    state.update(changes)
    return install_into(tmp_path, state)


def test_healthy_node_reads_back(tmp_path: Path) -> None:
    bin_dir = sim(tmp_path)
    facts = gather(GpuDevicesCheck(), bin_dir)
    assert facts["tool"] == str(bin_dir / "nvidia-smi") and facts["error"] is None
    assert [(g["index"], g["driver"], g["persistence"], g["ecc_volatile"], g["remap_pending"], g["retired_pending"])
            for g in facts["gpus"]] == [(0, "590.48.01", "Enabled", 0, False, None), (1, "590.48.01", "Enabled", 0,
                                                                                         False, None)]
    assert facts["processes"] == [] and facts["apps_error"] is None
    assert facts["topology"]["rows"]["GPU1"]["NIC1"] == "PIX"
    fabric = gather(GpuFabricCheck(), bin_dir)
    assert fabric["tools"] == {"ibstat": str(bin_dir / "ibstat"), "devinfo": str(bin_dir / "ibv_devinfo")}
    assert [(ca["name"], ca["ports"]) for ca in fabric["cas"]] == [
        (f"mlx5_{k}", [{"port": 1, "state": "Active", "rate": 400, "link_layer": "InfiniBand"}]) for k in range(2)]
    assert fabric["errors"] == {}


def test_old_driver_falls_back_to_the_basic_query(tmp_path: Path) -> None:
    state = healthy_state(1, node=1)
    state["old_driver"] = True
    state["gpus"][0]["processes"] = [{"pid": 77, "name": "python3", "used_mib": 512}]
    facts = gather(GpuDevicesCheck(), install_into(tmp_path, state))
    assert facts["error"] is None and len(facts["gpus"]) == 1
    assert facts["gpus"][0]["remap_pending"] is None and facts["gpus"][0]["ecc_volatile"] is None
    assert facts["processes"] == [{"pid": 77, "name": "python3", "gpu_uuid": state["gpus"][0]["uuid"],
                                   "memory_mib": 512}]


def test_driver_errors_and_no_devices(tmp_path: Path) -> None:
    down = gather(GpuDevicesCheck(), sim(tmp_path / "a", error="driver"))
    assert "couldn't communicate with the NVIDIA driver" in down["error"] and "(exit status 9)" in down["error"]
    mismatch = gather(GpuDevicesCheck(), sim(tmp_path / "b", error="mismatch"))
    assert "Driver/library version mismatch (exit status 18)" in mismatch["error"]
    empty = gather(GpuDevicesCheck(), sim(tmp_path / "c", gpus=[]))
    assert empty["error"] is None and empty["gpus"] == []


def test_ib_port_down_and_no_hca(tmp_path: Path) -> None:
    state = healthy_state(2, node=2)
    state["hcas"][0]["ports"][0].update(state="Down", physical="Polling")
    fabric = gather(GpuFabricCheck(), install_into(tmp_path / "a", state))
    assert fabric["cas"][0]["ports"][0]["state"] == "Down" and fabric["cas"][1]["ports"][0]["state"] == "Active"
    none = gather(GpuFabricCheck(), sim(tmp_path / "b", hcas=[]))
    assert none["cas"] == [] and none["errors"] == {}, "no device is a state, not an error"
