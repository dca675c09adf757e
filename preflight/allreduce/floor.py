"""Each pair's and each host's expected busbw from what the nodes reported (preflight.allreduce.expected's table),
so a cluster whose every link runs at a fraction of its rate fails even though all pairs agree.

Where the rate comes from, per link class:

* inter-host, gpu: the hosts' Active InfiniBand/RoCE ports in ``ibstat`` (gpu.fabric's facts; the ports
  NCCL_IB_HCA selects when set). The pairs of one round share their hosts' ports (device k of both hosts at
  once), so a pair's share is the host's summed Active rate divided by the pairs it runs at once; the lower of
  the two hosts'. A group of one rank per host (``--bisect``) gets its hosts' fastest port each.
* inter-host, npu: every NPU has its own RoCE port (hccn.link's ``hccn_tool -i k -speed -g``, Mb/s): the slower
  of the pair's two ports.
* inter-host, cpu (gloo over TCP): the speed of the interface holding each host's address
  (preflight.allreduce.nic), else the declared ``checks.allreduce.nic_gbps``; the slower host's.
* NVLink pairs inside a gpu host (``NV#`` in ``nvidia-smi topo -m``): # links x the slower GPU's per-link speed
  (gpu.devices' ``nvidia-smi nvlink -s``), at 16 MiB and larger only; none where the job's env disables P2P
  (``NCCL_P2P_DISABLE=1``) or remaps devices (``CUDA_VISIBLE_DEVICES``: device k is then not nvidia-smi's GPU k).
* PCIe pairs inside a gpu host (``PIX``/``PXB``/``PHB``/``NODE``/``SYS``): the slower GPU's link, generation x
  width (gpu.pcie's ``nvidia-smi -q``), at 16 MiB and larger only, same env rules.
* HCCS (npu intra-host): no rate is read; such pairs are judged against their class only, and say so.

``checks.allreduce.floor_gbps`` > 0 replaces every floor with one figure.

>>> fabric = {"cas": [{"name": "mlx5_0", "ports": [{"port": 1, "state": "Active", "rate": 400}]},
...                   {"name": "mlx5_1", "ports": [{"port": 1, "state": "Down", "rate": 400}]}]}
>>> rdma_rate(fabric, {}, concurrent=1), rdma_rate(fabric, {}, concurrent=4)
(50.0, 12.5)
>>> rdma_rate(fabric, {"NCCL_IB_HCA": "=mlx5_1"}, concurrent=1) is None, rdma_rate({}, {}, 1) is None
(True, True)
>>> npu_port_rate({"devices": {"0": {"speed": 200000}, "1": {"speed": None}}}, 0), npu_port_rate({}, 1)
(25.0, None)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from preflight.allreduce.expected import Expected, expected, pcie_gbps
from preflight.allreduce.nic import interface_rate
from preflight.ib_hca import selected_ports
from preflight.nvlink import link_speed

MiB = 1 << 20
PCIE_CLASSES = ("PIX", "PXB", "PHB", "NODE", "SYS")


@dataclass(frozen=True)
class Rates:
    """What the expected figures are derived from: the cluster's accelerator, the other checks' facts by check and
    host, each host's env and address, the allreduce check's own facts (``nic``) and the declared NIC rate."""

    accelerator: str
    other: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    envs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    addresses: Mapping[str, str] = field(default_factory=dict)
    nic: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # host -> {"speeds": ..., "addrs": ...}
    nic_gbps: float = 0.0  # declared (Gb/s): for hosts whose interface reports no rate


def rdma_rate(fabric: Mapping[str, Any], env: Mapping[str, str], concurrent: int, single: bool = False) -> float | None:
    """GB/s one of ``concurrent`` simultaneous pairs of this host may use (``single``: the fastest port alone, for
    one rank per host); None: rate unknown."""
    active = {(str(ca.get("name")), int(port["port"])): float(port["rate"])
              for ca in fabric.get("cas") or [] for port in ca.get("ports") or []
              if port.get("state") == "Active" and isinstance(port.get("rate"), (int, float)) and port["rate"] > 0
              and isinstance(port.get("port"), int)}
    spec = env.get("NCCL_IB_HCA", "").strip()
    used = selected_ports(spec, list(active)) if spec else list(active)
    rates = [active[p] for p in used]
    if not rates or sum(rates) <= 0:
        return None
    return (max(rates) if single else sum(rates)) / 8 / max(1, concurrent)


def npu_port_rate(link: Mapping[str, Any], device: int) -> float | None:
    """GB/s of NPU ``device``'s own RoCE port (hccn.link's ``devices`` -> ``speed``, Mb/s); None: unknown."""
    speed = ((link.get("devices") or {}).get(str(device)) or {}).get("speed")
    if not isinstance(speed, (int, float)) or isinstance(speed, bool) or speed <= 0:
        return None
    return float(speed) / 1000 / 8


def tcp_rate(rates: Rates, host: str) -> tuple[float | None, str]:
    """(GB/s, how) of ``host``'s interface for gloo: its reported speed, else the declared ``nic_gbps``."""
    nic = rates.nic.get(host) or {}
    rate, how = interface_rate(nic.get("speeds") or {}, nic.get("addrs") or {}, rates.addresses.get(host, ""))
    if rate is None and rates.nic_gbps > 0:
        return rates.nic_gbps / 8, f"nic_gbps {rates.nic_gbps:g} Gb/s declared in hosts.yaml ({how})"
    return rate, how


def host_expected(rates: Rates, host: str, device: int = 0, concurrent: int = 1,
                  single: bool = False) -> tuple[Expected | None, str]:
    """The inter-host expected busbw of ``host``'s device ``device`` (None and why when no rate is known)."""
    if rates.accelerator == "npu":
        rate = npu_port_rate(rates.other.get("hccn.link", {}).get(host) or {}, device)
        return expected("npu_roce", rate, what="NPU port (hccn_tool -speed)"), "hccn_tool -speed unknown"
    if rates.accelerator == "gpu":
        rate = rdma_rate(rates.other.get("gpu.fabric", {}).get(host) or {}, rates.envs.get(host) or {}, concurrent,
                         single)
        shared = f" shared by {concurrent} pair(s) at once" if concurrent > 1 and not single else ""
        return expected("rdma", rate, what=f"RDMA line rate{shared} (ibstat)"), "no Active RDMA port (ibstat)"
    rate, how = tcp_rate(rates, host)
    return expected("tcp", rate, what=f"interface {how}"), how


def lower(*values: Expected | None) -> Expected | None:
    """The lowest expected of several ends; None when any end is unknown.

    >>> lower(Expected(2.0, "a"), Expected(1.0, "b")).how, lower(Expected(2.0, "a"), None)
    ('b', None)
    """
    if not values or any(v is None for v in values):
        return None
    return min((v for v in values if v is not None), key=lambda v: v.gbps)


def pair_expected(results: Sequence[Any], rates: Rates, concurrent: int) -> dict[int, Expected]:
    """Pair index -> its expected busbw, for every result whose pair's rate is known (see the module doc)."""
    found: dict[int, Expected] = {}
    for result in results:
        pair = result.pair
        if pair.kind == "inter":
            exp = lower(host_expected(rates, pair.host, pair.device, concurrent)[0],
                        host_expected(rates, pair.peer, pair.peer_device, concurrent)[0])
        else:
            exp = intra_expected(pair, int(result.size), rates)
        if exp is not None:
            found[pair.index] = exp
    return found


def intra_expected(pair: Any, size: int, rates: Rates) -> Expected | None:
    """An intra-host gpu pair's expected busbw: NVLink or PCIe (module doc); None otherwise.

    >>> from types import SimpleNamespace as NS
    >>> pair = NS(index=3, kind="intra", link="NV2", host="a", device=0, peer_device=1)
    >>> nv = {"a": {"nvlink": {"0": {"links": {"0": 25.0, "1": 25.0}}, "1": {"links": {"0": 25.0, "1": 25.0}}}}}
    >>> intra_expected(pair, 64 << 20, Rates("gpu", {"gpu.devices": nv}))
    Expected(gbps=30.0, how='0.6 x 50 GB/s NV2 x 25 GB/s per link (nvidia-smi nvlink -s) (nvlink: A100 NV12 \
nccl-tests at 64 MiB; nccl-tests #212)')
    >>> intra_expected(pair, 64 << 20, Rates("gpu", {"gpu.devices": nv}, {"a": {"NCCL_P2P_DISABLE": "1"}})) is None
    True
    >>> pcie = {"a": {"links": [{"gen_max": 4, "width_current": 16}, {"gen_max": 4, "width_current": 8}]}}
    >>> intra_expected(NS(**{**pair.__dict__, "link": "PIX"}), 16 << 20, Rates("gpu", {"gpu.pcie": pcie})).gbps
    7.0875
    """
    if rates.accelerator != "gpu":
        return None
    env = rates.envs.get(pair.host) or {}
    if env.get("NCCL_P2P_DISABLE", "").strip() == "1" or "CUDA_VISIBLE_DEVICES" in env:
        return None
    if pair.link.startswith("NV") and pair.link[2:].isdigit():
        gpus = (rates.other.get("gpu.devices", {}).get(pair.host) or {}).get("nvlink") or {}
        speeds = [link_speed(gpus.get(str(d)) or {}) for d in (pair.device, pair.peer_device)]
        if any(s is None for s in speeds):
            return None
        speed = min(s for s in speeds if s is not None)
        return expected("nvlink", int(pair.link[2:]) * speed, size,
                        f"{pair.link} x {speed:g} GB/s per link (nvidia-smi nvlink -s)")
    if pair.link in PCIE_CLASSES:
        links = (rates.other.get("gpu.pcie", {}).get(pair.host) or {}).get("links") or []
        ends = [links[d] if d < len(links) and isinstance(links[d], Mapping) else {}
                for d in (pair.device, pair.peer_device)]
        speeds = [pcie_gbps(e.get("gen_max"), e.get("width_current")) for e in ends]
        if any(s is None for s in speeds):
            return None
        low = min(s for s in speeds if s is not None)
        return expected("pcie", low, size, "PCIe generation x width (nvidia-smi -q)")
    return None
