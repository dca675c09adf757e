"""gpu.fabric.ports fails a port only when the job would use it (issue 18), on real ibstat / ibv_devinfo output.

A port is used when NCCL_IB_HCA (hosts.yaml env) selects it, or, NCCL_IB_HCA unset, when it is Active on most
of the other hosts. A port down on every host (an unused second port, a storage NIC) passes with a note.
Samples and their URLs: tests/fixtures/gpu.fabric/real/SOURCE.md.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from preflight.checks.gpu_fabric import GpuFabricCheck, parse_devinfo, parse_ibstat
from preflight.context import EvalContext
from preflight.inventory import ClusterSpec, Host
from preflight.model import Finding

REAL = Path(__file__).parent / "fixtures" / "gpu.fabric" / "real"
MOONCAKE = (REAL / "ibstat_cx7_roce_200_active_first2_plus_down_partial.txt").read_text()
MLX4 = (REAL / "ibstat_mlx4_2port_port1_disabled_port2_active_partial.txt").read_text()
DEEPEP = (REAL / "devinfo_mlx5_0_cx7_ib_port_down.txt").read_text()


def host_facts(cas: list[dict[str, Any]]) -> dict[str, Any]:
    names = [str(ca["name"]) for ca in cas]
    return {"cas": cas, "tools": {"ibstat": "/usr/sbin/ibstat", "devinfo": "/usr/bin/ibv_devinfo"}, "errors": {},
            "dev_files": [f"uverbs{i}" for i in range(len(names))], "sys_devices": names}


def ports_findings(facts: dict[str, dict[str, Any]], env: dict[str, dict[str, str]] | None = None
                   ) -> dict[str, Finding]:
    hosts = [Host(h, h, env=(env or {}).get(h, {})) for h in facts]
    ctx = EvalContext(ClusterSpec(accelerator="gpu"), hosts, params=GpuFabricCheck.params)
    return {f.host or "": f for f in GpuFabricCheck().evaluate(facts, ctx) if f.check == "gpu.fabric.ports"}


def set_state(facts: dict[str, Any], ca: str, port: int, state: str) -> dict[str, Any]:
    changed = copy.deepcopy(facts)
    next(p for c in changed["cas"] if c["name"] == ca for p in c["ports"] if p["port"] == port)["state"] = state
    return changed


def test_the_samples_parse_with_their_down_ports() -> None:
    states = [(ca["name"], p["port"], p["state"]) for ca in parse_ibstat(MOONCAKE) for p in ca["ports"]]
    assert states == [("mlx5_0", 1, "Active"), ("mlx5_1", 1, "Active"), ("mlx5_10", 1, "Down")]
    assert [(p["port"], p["state"]) for p in parse_ibstat(MLX4)[0]["ports"]] == [(1, "Down"), (2, "Active")]
    assert [(p["port"], p["state"]) for p in parse_devinfo(DEEPEP)[0]["ports"]] == [(1, "Down")]


def test_a_port_down_on_every_host_is_unused() -> None:
    """Mooncake #1999's node: two Active CX-7 ports and a disabled CX-6 Dx; the same on every host passes."""
    node = host_facts(parse_ibstat(MOONCAKE))
    found = ports_findings({"a": node, "b": node, "c": node})
    assert {h: f.status for h, f in found.items()} == {"a": "pass", "b": "pass", "c": "pass"}
    assert "(down on every host: unused: mlx5_10 port 1: Down)" in found["a"].message


def test_a_port_active_on_the_others_but_down_here_fails() -> None:
    node = host_facts(parse_ibstat(MOONCAKE))
    found = ports_findings({"a": node, "b": node, "c": set_state(node, "mlx5_1", 1, "Down")})
    assert {h: f.status for h, f in found.items()} == {"a": "pass", "b": "pass", "c": "fail"}
    assert "(mlx5_1 port 1: Down; Active on most other hosts: mlx5_1 port 1 on 2 of the 2 others)" in \
        found["c"].message
    assert found["c"].remedy is not None and found["c"].remedy.startswith("ibstat mlx5_1 1 ")
    two = ports_findings({"a": node, "b": set_state(node, "mlx5_0", 1, "Initializing")})
    assert (two["a"].status, two["b"].status) == ("pass", "fail"), "2 hosts: the one lacking the port fails"


def test_a_port_named_by_nccl_ib_hca_must_be_active() -> None:
    node = host_facts(parse_ibstat(MOONCAKE))
    env = {"b": {"NCCL_IB_HCA": "=mlx5_10"}, "c": {"NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1"}}
    found = ports_findings({"a": node, "b": node, "c": node}, env)
    assert {h: f.status for h, f in found.items()} == {"a": "pass", "b": "fail", "c": "pass"}
    assert "(mlx5_10 port 1: Down; named by NCCL_IB_HCA==mlx5_10)" in found["b"].message
    assert "(not in NCCL_IB_HCA==mlx5_0:1,mlx5_1:1: mlx5_10 port 1: Down)" in found["c"].message
    excluded = ports_findings({"a": node}, {"a": {"NCCL_IB_HCA": "^mlx5_1"}})["a"]  # prefix: mlx5_10 excluded too
    assert excluded.status == "pass"


def test_dual_port_hca_with_one_port_disabled() -> None:
    """rdma-core #847's ConnectX-3: port 1 disabled, port 2 Active."""
    node = host_facts(parse_ibstat(MLX4))
    assert ports_findings({"a": node})["a"].status == "pass"
    assert ports_findings({"a": node}, {"a": {"NCCL_IB_HCA": "mlx4_0:2"}})["a"].status == "pass"
    assert ports_findings({"a": node}, {"a": {"NCCL_IB_HCA": "mlx4_0:1"}})["a"].status == "fail"
    assert ports_findings({"a": node}, {"a": {"NCCL_IB_HCA": "mlx4_0"}})["a"].status == "fail", "every port of it"


def test_no_active_port_anywhere_warns() -> None:
    """DeepEP #60's ConnectX-7 with PORT_DOWN on every host: NCCL falls back to sockets everywhere."""
    node = host_facts(parse_devinfo(DEEPEP))
    found = ports_findings({"a": node, "b": node})
    assert {h: f.status for h, f in found.items()} == {"a": "warn", "b": "warn"}
    assert "no RDMA port is Active on a (nor on any host)" in found["a"].message


def test_one_host_without_rdma_needs_none() -> None:
    """A one-GPU cloud VM (recorded on an NVIDIA H200 VM: no /sys/class/infiniband): with one host NCCL never
    leaves it, so no HCA is no warning; with two such hosts it is."""
    bare = {"cas": [], "tools": {"ibstat": None, "devinfo": None}, "errors": {}, "dev_files": [], "sys_devices": []}
    alone = ports_findings({"vm": bare})["vm"]
    assert alone.status == "skip" and "none needed" in alone.message
    assert {f.status for f in ports_findings({"vm": bare, "vm2": bare}).values()} == {"warn"}
