"""Simulated NVIDIA hardware for the namespace test cluster: per-node state for nvidia-smi, ibstat, ibv_devinfo.

We have no GPUs or HCAs, so each test node gets the three simulators (tests/sim/nvidia-smi, tests/sim/ibstat,
tests/sim/ibv_devinfo) in its own ``/usr/local/nvidia/bin`` (the node's private bind mount, see
NetnsCluster.nvidia_root; where NVIDIA's container toolkit puts the driver's tools, NOT on PATH of an SSH
session) plus a state file they print from, in the real output formats (../shared/reference/nvidia.md).

State schema (``/usr/local/nvidia/sim_state.json``)::

    {"driver": "590.48.01", "cuda": "13.1",
     "error": null,                           # null | "driver" (exit 9, not loaded) | "mismatch" (exit 18)
     "old_driver": false,                     # true: remapped_rows.* are not valid query fields (exit 2)
     "gpus": [{"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-...", "bus_id": "00000000:18:00.0",
               "persistence": "Enabled",      # Enabled | Disabled
               "ecc_mode": "Enabled", "ecc_volatile": 0, "ecc_aggregate": 0,   # null prints [N/A]
               "retired_pending": null, "remap_pending": false, "remap_failure": false,
               "memory_mib": 81559,
               "pcie": {"width_current": 8},  # nvidia-smi -q link; defaults: gen_max 5, gen_current 1 (idle),
                                              # device_max 5, host_max 5, width_max 16, width_current 16
               "fabric": ["Completed", "Success"],   # nvidia-smi -q Fabric State / Status
               "processes": [{"pid": 4242, "name": "python3", "used_mib": 15690}]}],
     "hcas": [{"name": "mlx5_0", "type": "MT4129", "fw": "28.39.1002", "node_guid": "c470bd0300cf4964",
               "ports": [{"port": 1, "state": "Active",          # Down | Initializing | Armed | Active
                          "physical": "LinkUp", "rate": 400, "link_layer": "InfiniBand", "lid": 12,
                          "sm_lid": 1}]}]}

Without a readable state file ``nvidia-smi`` fails like a node whose driver is not loaded, ``ibstat`` lists
nothing and ``ibv_devinfo`` says ``No IB devices found``.

>>> state = healthy_state(8, node=2)
>>> len(state["gpus"]), state["gpus"][3]["uuid"], state["hcas"][0]["ports"][0]["state"]
(8, 'GPU-00000002-0000-4000-8000-000000000003', 'Active')
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from netns_cluster import NetnsCluster, Node

SIM_DIR = Path(__file__).resolve().parent / "sim"
TOOLS = ("nvidia-smi", "ibstat", "ibv_devinfo")


def bin_dir(cluster: NetnsCluster, node: Node | str) -> Path:
    return cluster.nvidia_root(node) / "bin"


def healthy_state(gpus: int, node: int = 1, hcas: int = 2, driver: str = "590.48.01") -> dict[str, Any]:
    """A node whose GPUs and HCAs are all fine (GPU uuids and HCA guids differ per ``node``)."""
    return {
        "driver": driver, "cuda": "13.1", "error": None, "old_driver": False,
        "gpus": [{"name": "NVIDIA H100 80GB HBM3", "uuid": f"GPU-{node:08d}-0000-4000-8000-{i:012d}",
                  "bus_id": f"00000000:{0x18 + 0x10 * i:02X}:00.0", "persistence": "Enabled", "ecc_mode": "Enabled",
                  "ecc_volatile": 0, "ecc_aggregate": 0, "retired_pending": None, "remap_pending": False,
                  "remap_failure": False, "memory_mib": 81559, "processes": []} for i in range(gpus)],
        "hcas": [{"name": f"mlx5_{k}", "type": "MT4129", "fw": "28.39.1002",
                  "node_guid": f"c470bd03{node:04x}{k:04x}",
                  "ports": [{"port": 1, "state": "Active", "physical": "LinkUp", "rate": 400,
                             "link_layer": "InfiniBand", "lid": 10 * node + k, "sm_lid": 1}]} for k in range(hcas)],
    }


def install_into(root: Path, state: dict[str, Any]) -> Path:
    """Put the simulators in ``root/bin`` and ``state`` in ``root``; return the bin folder."""
    target = root / "bin"
    target.mkdir(parents=True, exist_ok=True)
    for tool in TOOLS:
        text = (SIM_DIR / tool).read_text().split("\n", 1)[1]
        (target / tool).write_text(f"#!{sys.executable} -S\n{text}")
        (target / tool).chmod(0o755)
    write_state_into(root, state)
    return target


def install(cluster: NetnsCluster, node: Node | str, state: dict[str, Any]) -> None:
    """Put the simulators and ``state`` on ``node`` (overwrites any earlier state)."""
    install_into(cluster.nvidia_root(node), state)


def write_state_into(root: Path, state: dict[str, Any]) -> None:
    path = root / "sim_state.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1))
    tmp.replace(path)


def write_state(cluster: NetnsCluster, node: Node | str, state: dict[str, Any]) -> None:
    write_state_into(cluster.nvidia_root(node), state)


def uninstall(cluster: NetnsCluster, node: Node | str) -> None:
    root = cluster.nvidia_root(node)
    shutil.rmtree(root / "bin", ignore_errors=True)
    (root / "sim_state.json").unlink(missing_ok=True)


# The kernel log (gpu.xid): a node's ``dmesg`` replaced, for that node's SSH sessions only, by a script printing a
# real kernel log (tests/sim/dmesg_xid119_h100.log: leptonai/gpud's captured ``dmesg -T`` of an XE9680 with Xid 119)
# or refusing like a kernel with kernel.dmesg_restrict=1 (dmesg's own message).
XID_LOG = SIM_DIR / "dmesg_xid119_h100.log"
DMESG = "/usr/bin/dmesg"
RESTRICTED = "dmesg: read kernel buffer failed: Operation not permitted"


def fake_kernel_log(cluster: NetnsCluster, node: Node | str, log: Path | None) -> None:
    """``dmesg`` on ``node`` prints ``log`` (None: refuses, as under kernel.dmesg_restrict=1); undo: real_kernel_log."""
    script = cluster.nvidia_root(node).parent / "fake-dmesg"
    body = f"cat {log}\n" if log is not None else f"echo '{RESTRICTED}' >&2\nexit 1\n"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    cluster.bind_over(node, script, DMESG)


def real_kernel_log(cluster: NetnsCluster, node: Node | str) -> None:
    cluster.unhide_binary(node, DMESG)
