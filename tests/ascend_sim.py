"""Simulated Ascend hardware for the namespace test cluster: per-node state for `hccn_tool` and `npu-smi`.

We have no NPUs, so each test node gets the two simulators (tests/sim/hccn_tool, tests/sim/npu-smi) in its
own ``/usr/local/Ascend/driver/tools`` (the node's private bind mount, see NetnsCluster.ascend_root) plus a
state file they print from, in the real output formats (../shared/reference/ascend.md). `/etc/hccn.conf`
is the node's own file (NetnsCluster.set_etc_file).

State schema (``driver/tools/sim_state.json``)::

    {"chip": "910B3",                       # npu-smi Name column; 910B*/A2* = Atlas A2, other 910* = 910A
     "devices": [{"id": 0, "health": "OK",  # OK | Warning | Alarm | Critical | UNKNOWN
                  "ip": "192.168.1.10", "netmask": "255.255.255.0", "gateway": null,
                  "link": "UP", "net_health": "Success", "mtu": 9000, "speed": 200000,
                  "tls": 0, "optical": true,
                  "lldp": {"chassis_mac": "aa:bb:cc:00:00:01", "port": "400GE1/1/20:2", "system": "leaf-1"},
                  "processes": [{"pid": 4242, "name": "python3", "memory_mb": 3000}],
                  "unsupported": ["-tls"],  # ops answering "The command is not supported on this product."
                                            # (stdout, exit 13: the product lacks the feature)
                  "error": null}],          # null | "busy" | "not_supported" | "not_exist": every hccn_tool call
                                            # on this device fails with that real error text and exit status
     "reachable": ["192.168.1.11"]}         # device IPs that answer `hccn_tool -i N -ping -g address IP`

``"a3": true`` makes ``npu-smi`` print the Atlas A3 table (``Ascend910``, a Phy-ID column, two chip rows per
NPU: device ``id`` is the Phy-ID, NPU = id // 2; ``a3_state``).
Optional device key ``"netdetect"`` (default ``0.0.0.0``, printed by ``-netdetect -g``). Without a readable
state file ``npu-smi`` fails like a node whose driver is not loaded (``dcmi module initialize failed``) and
``hccn_tool`` answers ``The device is not exist!``. A ping answers only from a device with an IP and link UP.

>>> state = healthy_state("910B3", [f"192.168.1.{10 + i}" for i in range(8)])
>>> len(state["devices"]), state["devices"][3]["ip"]
(8, '192.168.1.13')
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from netns_cluster import NetnsCluster, Node

SIM_DIR = Path(__file__).resolve().parent / "sim"
TOOLS = ("hccn_tool", "npu-smi")


def tools_dir(cluster: NetnsCluster, node: Node | str) -> Path:
    return cluster.ascend_root(node) / "driver" / "tools"


def healthy_state(chip: str, ips: list[str], netmask: str = "255.255.255.0") -> dict[str, Any]:
    """A node whose devices are all fine, one per IP (device id = list position)."""
    devices: list[dict[str, Any]] = [
        {"id": i, "health": "OK", "ip": ip, "netmask": netmask, "gateway": None, "link": "UP",
         "net_health": "Success", "mtu": 9000, "speed": 200000, "tls": 0, "optical": True,
         "lldp": {"chassis_mac": f"aa:bb:cc:00:00:{i:02x}", "port": f"400GE1/1/{i + 1}:1", "system": "leaf-1"},
         "processes": [], "error": None} for i, ip in enumerate(ips)]
    return {"chip": chip, "devices": devices, "reachable": []}


def a3_state(ips: list[str], netmask: str = "255.255.255.0") -> dict[str, Any]:
    """A healthy Atlas A3 node: one device per chip (Phy-ID = list position), npu-smi in the A3 format.

    >>> state = a3_state([f"10.20.{p % 2}.{10 + p // 2}" for p in range(16)])
    >>> state["a3"], state["chip"], len(state["devices"])
    (True, 'Ascend910', 16)
    """
    return {**healthy_state("Ascend910", ips, netmask), "a3": True}


def install(cluster: NetnsCluster, node: Node | str, state: dict[str, Any]) -> None:
    """Put the simulators and ``state`` on ``node`` (overwrites any earlier state)."""
    target = tools_dir(cluster, node)
    target.mkdir(parents=True, exist_ok=True)
    for tool in TOOLS:
        source = SIM_DIR / tool
        text = source.read_text().split("\n", 1)[1] if source.is_file() else "raise SystemExit(127)\n"
        (target / tool).write_text(f"#!{sys.executable} -S\n{text}")
        (target / tool).chmod(0o755)
    write_state(cluster, node, state)


def write_state(cluster: NetnsCluster, node: Node | str, state: dict[str, Any]) -> None:
    path = tools_dir(cluster, node) / "sim_state.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1))
    tmp.replace(path)


def uninstall(cluster: NetnsCluster, node: Node | str) -> None:
    shutil.rmtree(cluster.ascend_root(node) / "driver", ignore_errors=True)


def simulated_cluster(cluster_fixture: Callable[..., Iterator[NetnsCluster]],
                      tmp_path_factory: Any, size: int, name: str, subnet: int,
                      state_for: Callable[[int], dict[str, Any]]) -> Iterator[NetnsCluster]:
    """A module's cluster with the simulators on every node (node k gets ``state_for(k)``), removed after."""
    for built in cluster_fixture(tmp_path_factory, size=size, name=name, subnet=subnet):
        for k, node in enumerate(built.nodes, start=1):
            install(built, node, state_for(k))
        try:
            yield built
        finally:
            for node in built.nodes:
                uninstall(built, node)


def set_cann_version(cluster: NetnsCluster, node: Node | str, version: str) -> None:
    """The CANN toolkit version ``versions`` reads on ``node`` (its ascend_toolkit_install.info)."""
    info = cluster.ascend_root(node) / "ascend-toolkit" / "latest" / "x86_64-linux"
    info.mkdir(parents=True, exist_ok=True)
    (info / "ascend_toolkit_install.info").write_text(f"package_name=Ascend-cann-toolkit\nversion={version}\n")


TORCH_NPU_SIM = SIM_DIR / "python"  # holds torch_npu/ (tests/sim/python/torch_npu): a node's PYTHONPATH
# What CANN's set_env.sh exports (as public CANN images copy it into their ENV, "obtained from
# /usr/local/Ascend/ascend-toolkit/set_env.sh"), for the node's own toolkit under its /usr/local/Ascend.
SET_ENV = """export ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest
export LD_LIBRARY_PATH=${ASCEND_TOOLKIT_HOME}/lib64:${ASCEND_TOOLKIT_HOME}/lib64/plugin/opskernel:\\
${ASCEND_TOOLKIT_HOME}/lib64/plugin/nnengine:${ASCEND_TOOLKIT_HOME}/opp/built-in/op_impl/ai_core/tbe/op_tiling:\\
$LD_LIBRARY_PATH
export PYTHONPATH=${ASCEND_TOOLKIT_HOME}/python/site-packages:${ASCEND_TOOLKIT_HOME}/opp/built-in/op_impl/ai_core/tbe:\\
$PYTHONPATH
export PATH=${ASCEND_TOOLKIT_HOME}/bin:${ASCEND_TOOLKIT_HOME}/compiler/ccec_compiler/bin:$PATH
export ASCEND_AICPU_PATH=${ASCEND_TOOLKIT_HOME}
export ASCEND_OPP_PATH=${ASCEND_TOOLKIT_HOME}/opp
export TOOLCHAIN_HOME=${ASCEND_TOOLKIT_HOME}/toolkit
export ASCEND_HOME_PATH=${ASCEND_TOOLKIT_HOME}
"""


def install_toolkit(cluster: NetnsCluster, node: Node | str) -> None:
    """A CANN toolkit on ``node``: ascend-toolkit/set_env.sh and the libraries torch_npu loads (empty files:
    the simulated torch_npu only looks them up on LD_LIBRARY_PATH, as the loader would)."""
    toolkit = cluster.ascend_root(node) / "ascend-toolkit"
    lib64 = toolkit / "latest" / "lib64"
    lib64.mkdir(parents=True, exist_ok=True)
    for lib in ("libhccl.so", "libascendcl.so"):
        (lib64 / lib).write_bytes(b"")
    (toolkit / "set_env.sh").write_text(SET_ENV)


def uninstall_toolkit(cluster: NetnsCluster, node: Node | str) -> None:
    shutil.rmtree(cluster.ascend_root(node) / "ascend-toolkit", ignore_errors=True)
