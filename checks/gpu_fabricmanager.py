"""gpu.fabricmanager: on NVSwitch systems the fabric is up (nvidia-fabricmanager), and nvidia_peermem for RDMA.

On an HGX/DGX board whose GPUs talk through NVSwitches (A100/H100/H200/B200 SXM), CUDA refuses to start until
nvidia-fabricmanager has set the fabric up: every CUDA call fails with error 802 "system not yet initialized"
(pytorch/pytorch#35710, wilicc/gpu-burn#92). ``nvidia-smi -q`` prints each GPU's fabric registration under
``Fabric``: ``State`` ``Completed`` and ``Status`` ``Success`` when done; ``Not Started`` (fabric manager not
running), ``In Progress`` (stuck registering), or ``N/A`` / ``Not Supported`` on GPUs without an NVSwitch fabric
(PCIe cards, a single GPU). Older drivers print no fabric state; there the ``/dev/nvidia-nvswitch*`` device
files tell an NVSwitch board, and the ``nvidia-fabricmanager`` service (``systemctl is-active``, else a running
``nv-fabricmanager`` process) is judged instead.

Hosts with RDMA devices (``/sys/class/infiniband``) use GPUDirect RDMA through the ``nvidia_peermem`` kernel
module (``nv_peer_mem`` from MLNX_OFED before it). Without it NCCL stages every inter-node transfer through host
memory; recent NCCL with the open kernel module can use DMA-BUF instead, so a missing module only warns.

Finding ids: gpu.fabricmanager.state (NVSwitch fabric up: fail; skip without NVSwitch, or naming the error when `-q`
printed nothing readable), gpu.fabricmanager.peermem
(warn; skip without RDMA devices).

>>> _fabric_problems([{"bus_id": "00000000:18:00.0", "state": "In Progress", "status": None}])
['00000000:18:00.0: In Progress']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.checks.base import *
from preflight.nvsmi_query import cut_short, parse_query, value
from preflight.tools.common import error_text
from preflight.tools.nvidia import NVIDIA_SMI

_NO_FABRIC = ("n/a", "not supported")
# systemctl is-active's answers (man systemctl); anything else (no systemd in a container) reads as unknown.
_STATES = ("active", "inactive", "failed", "activating", "deactivating", "reloading", "refreshing", "maintenance")
_SERVICE = ("systemctl is-active nvidia-fabricmanager 2>&1 | head -n 1; "
            "pgrep -x nv-fabricmanager >/dev/null 2>&1 && echo process; exit 0")
_MODULES = ("for m in nvidia_peermem nv_peer_mem; do [ -d /sys/module/$m ] && echo module $m; done; "
            "ls -1 /sys/class/infiniband 2>/dev/null | sed 's/^/rdma /'; exit 0")


def parse_fabric(text: str) -> list[dict[str, Any]]:
    """``nvidia-smi -q`` -> [{bus_id, state, status}] from each GPU's ``Fabric`` section (None: N/A or absent)."""
    return [{"bus_id": gpu["bus_id"], "state": value(gpu["fields"], "Fabric/State"),
             "status": value(gpu["fields"], "Fabric/Status")} for gpu in parse_query(text)]


def _fabric_problems(gpus: list[dict[str, Any]]) -> list[str]:
    return [f"{g['bus_id']}: {g['state']}" + (f" / {g['status']}" if g.get("status") else "")
            for g in gpus if g.get("state") and (g["state"] != "Completed" or g.get("status") != "Success")]


class GpuFabricManagerCheck(Check):
    ids = ("gpu.fabricmanager.state", "gpu.fabricmanager.peermem")
    accelerators = frozenset({"gpu"})
    not_applicable = "no NVIDIA GPUs to check"
    order = 60
    summary = ("NVSwitch boards: every GPU's fabric registered (nvidia-smi -q Fabric State Completed; else "
               "nvidia-fabricmanager active), or CUDA fails with error 802; nvidia_peermem loaded next to RDMA NICs")

    def probes(self, host: Host, cluster: ClusterSpec) -> list[Probe]:
        return [NVIDIA_SMI.lookup(),
                Probe("query", NVIDIA_SMI.command("-q"), timeout=60),
                Probe("nvswitch", "ls -1 /dev 2>/dev/null | grep '^nvidia-nvswitch[0-9]'; exit 0", timeout=5),
                Probe("service", _SERVICE, timeout=10),
                Probe("modules", _MODULES, timeout=5)]

    def parse(self, outputs: Mapping[str, ProbeOutput]) -> Facts:
        empty = ProbeOutput("", "not run", None)
        path = NVIDIA_SMI.found(outputs)
        service = outputs.get("service", empty).stdout.split()
        modules = outputs.get("modules", empty).stdout.splitlines()
        query = outputs.get("query", empty)
        gpus = parse_fabric(query.stdout) if path else []
        unread = path and not gpus and "no devices were found" not in (query.stdout + query.stderr).lower()
        short = {"unread": cut} if path and (cut := cut_short(query.stdout)) else {}
        return {**short,
            "tool": path,
            "error": f"nvidia-smi -q failed: {error_text(query)}" if unread else None,
            "gpus": gpus,
            "nvswitches": sorted(line.strip() for line in outputs.get("nvswitch", empty).stdout.splitlines()
                                 if line.strip().startswith("nvidia-nvswitch")),
            "service": service[0] if service and service[0] in _STATES else None,
            "process": "process" in service,
            "peermem": sorted(line.split()[1] for line in modules if line.startswith("module ")),
            "rdma": sorted(line.split()[1] for line in modules if line.startswith("rdma ")),
        }

    def evaluate(self, facts: Mapping[str, Facts], ctx: EvalContext) -> list[Finding]:
        findings = []
        for host in sorted(facts):
            findings.append(_judge_state(host, facts[host]))
            findings.append(_judge_peermem(host, facts[host]))
        return findings


def _judge_state(host: str, host_facts: Facts) -> Finding:
    check = "gpu.fabricmanager.state"
    gpus: list[dict[str, Any]] = host_facts.get("gpus") or []
    fabric = [g for g in gpus if g.get("state") and g["state"].lower() not in _NO_FABRIC]
    switches: list[str] = host_facts.get("nvswitches") or []
    remedy = ("systemctl enable --now nvidia-fabricmanager  # install nvidia-fabricmanager-<driver branch>, the "
              "same version as the driver; then nvidia-smi -q | grep -A2 Fabric")
    if host_facts.get("unread") and not _fabric_problems(fabric):  # a fault in the part read still counts
        return finding(check, host, Status.ERROR, f"could not read every GPU's fabric state on {host}: "
                       f"{host_facts['unread']}", observed=str(host_facts["unread"]),
                       expected="a whole nvidia-smi -q report")
    if fabric:
        bad = _fabric_problems(fabric)
        if bad:
            return finding(check, host, Status.FAIL,
                           f"the NVSwitch fabric is not set up on {host} ({'; '.join(bad)}): CUDA fails with "
                           "error 802 'system not yet initialized' until nvidia-fabricmanager registers every GPU "
                           f"(service: {host_facts.get('service') or 'not found'})", observed="; ".join(bad),
                           expected="Fabric State Completed, Status Success on every GPU", remedy=remedy)
        return finding(check, host, Status.PASS, f"NVSwitch fabric registered on every GPU of {host}",
                       observed=f"{len(fabric)} GPUs Completed / Success", expected="Completed / Success")
    if not switches and host_facts.get("error"):
        return finding(check, host, Status.SKIP, f"{host_facts['error']} on {host}: no GPU's fabric state "
                       "could be read, and there is no /dev/nvidia-nvswitch*", observed=str(host_facts["error"]))
    if not switches:
        return finding(check, host, Status.SKIP, f"no NVSwitch on {host} (no GPU reports a fabric state, "
                       "no /dev/nvidia-nvswitch*): fabric manager not needed")
    service = host_facts.get("service")
    observed = f"{len(switches)} NVSwitches; nvidia-fabricmanager {service or 'unknown'}" + (
        ", nv-fabricmanager running" if host_facts.get("process") else "")
    if service == "active" or host_facts.get("process"):
        return finding(check, host, Status.PASS, f"nvidia-fabricmanager runs on {host}", observed=observed,
                       expected="nvidia-fabricmanager active")
    return finding(check, host, Status.FAIL,
                   f"{host} has NVSwitches ({', '.join(switches)}) but nvidia-fabricmanager is "
                   f"{service or 'not found'} and no nv-fabricmanager runs: CUDA fails with error 802 'system not yet "
                   "initialized'", observed=observed, expected="nvidia-fabricmanager active", remedy=remedy)


def _judge_peermem(host: str, host_facts: Facts) -> Finding:
    check = "gpu.fabricmanager.peermem"
    rdma: list[str] = host_facts.get("rdma") or []
    if not rdma or not host_facts.get("tool"):
        return finding(check, host, Status.SKIP, f"no RDMA device next to NVIDIA GPUs on {host}")
    loaded: list[str] = host_facts.get("peermem") or []
    if loaded:
        return finding(check, host, Status.PASS, f"{', '.join(loaded)} loaded on {host} (GPUDirect RDMA)",
                       observed=", ".join(loaded), expected="nvidia_peermem loaded")
    return finding(check, host, Status.WARN,
                   f"{host} has RDMA devices ({', '.join(rdma)}) but nvidia_peermem is not loaded: without "
                   "GPUDirect RDMA NCCL copies every inter-node transfer through host memory (unless it uses DMA-BUF, "
                   "open kernel module and kernel >= 5.12)", observed="nvidia_peermem not loaded",
                   expected="nvidia_peermem loaded",
                   remedy="modprobe nvidia_peermem && echo nvidia_peermem > /etc/modules-load.d/nvidia-peermem.conf")
