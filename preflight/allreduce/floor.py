"""An absolute floor for pairs from the hardware: what the RDMA ports' (or NVLinks') line rate allows, so a
cluster whose every link runs at a fraction of its rate fails even though all pairs agree.

Applied only where the rate is known and the link is real:

* gpu clusters whose hosts list Active InfiniBand/RoCE ports in ``ibstat`` (gpu.fabric's facts; the ports
  NCCL_IB_HCA selects when set). The pairs of one round share their hosts' ports (device k of both hosts at
  once), so a pair's share is the host's summed Active rate divided by the pairs it runs at once; the floor
  is ``EFFICIENCY`` of that share, in GB/s (Gb/s / 8), the lower of the two hosts'.
* npu clusters: every NPU has its own RoCE port, so an inter pair (device k of both hosts) runs over two
  ports of its own; the floor is ``EFFICIENCY`` of the slower one's speed (hccn.link's ``hccn_tool -i k
  -speed -g``, Mb/s).
* NVLink pairs inside a gpu host (``NV#`` in ``nvidia-smi topo -m``): # links x the slower GPU's per-link speed
  (gpu.devices' ``nvidia-smi nvlink -s`` facts) x an efficiency that depends on the size the pair was judged at
  (``NVLINK_EFFICIENCY``): NCCL reaches a far smaller share of NVLink's rate at a few MiB than at GiB. None
  below 16 MiB, none where the job's env disables P2P (``NCCL_P2P_DISABLE=1``: the job will not use NVLink
  either) or remaps devices (``CUDA_VISIBLE_DEVICES``: device k is then not nvidia-smi's GPU k).

Not for PCIe, HCCS or cpu clusters (veth): no rate is read for them. An intra pair is judged against its class
(NV#, PIX, SYS, HCCS) over every host as well, so one slow pair, or every link of one node, is caught while the
other nodes are healthy.
``checks.allreduce.floor_gbps`` > 0 replaces it.

EFFICIENCY 0.4: nccl-tests all_reduce between two nodes reaches ~80-90 % of the line rate at GiB messages;
this test stops at 64 MiB with a few iterations, and measures far less at small sizes, so it asks for 40 %:
a link trained at a quarter of its rate (e.g. 100 of 400 Gb/s, or x4 of x16) is below it, a healthy one at
64 MiB is well above.

>>> fabric = {"cas": [{"name": "mlx5_0", "ports": [{"port": 1, "state": "Active", "rate": 400}]},
...                   {"name": "mlx5_1", "ports": [{"port": 1, "state": "Down", "rate": 400}]}]}
>>> host_floor(fabric, {}, concurrent=1), host_floor(fabric, {}, concurrent=4)
(20.0, 5.0)
>>> host_floor(fabric, {"NCCL_IB_HCA": "=mlx5_1"}, concurrent=1) is None, host_floor({}, {}, 1) is None
(True, True)
>>> npu_port_floor({"devices": {"0": {"speed": 200000}, "1": {"speed": None}}}, 0), npu_port_floor({}, 1)
(10.0, None)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.ib_hca import selected_ports
from preflight.nvlink import link_speed

EFFICIENCY = 0.4
MiB = 1 << 20
# (smallest judged size, share of # NVLinks x link speed). Measured reference (nccl-tests all_reduce_perf on
# 8 x A100-SXM4-80GB, NV12 = 12 x 25 GB/s, a public write-up found with the project's code search): busbw
# 113-138 GB/s at 16 MiB and 169-191 GB/s at 64 MiB, i.e. 0.38-0.46 and 0.56-0.64 of the rate; the floor asks
# for well under half of that, so a healthy pair passes and one whose traffic falls back to PCIe (P2P off, a
# link group down: a few tens of GB/s) does not.
NVLINK_EFFICIENCY = ((64 * MiB, 0.25), (16 * MiB, 0.15))


def host_floor(fabric: Mapping[str, Any], env: Mapping[str, str], concurrent: int) -> float | None:
    """GB/s one of ``concurrent`` simultaneous pairs of this host should reach at least; None: rate unknown."""
    active = {(str(ca.get("name")), int(port["port"])): float(port["rate"])
              for ca in fabric.get("cas") or [] for port in ca.get("ports") or []
              if port.get("state") == "Active" and isinstance(port.get("rate"), (int, float)) and port["rate"] > 0
              and isinstance(port.get("port"), int)}
    spec = env.get("NCCL_IB_HCA", "").strip()
    used = selected_ports(spec, list(active)) if spec else list(active)
    total_gbit = sum(active[p] for p in used)
    if total_gbit <= 0:
        return None
    return EFFICIENCY * total_gbit / 8 / max(1, concurrent)


def pair_floors(pairs: list[Any], fabrics: Mapping[str, Mapping[str, Any]], envs: Mapping[str, Mapping[str, str]],
                concurrent: int) -> dict[int, tuple[float, str]]:
    """Inter pair index -> (floor GB/s, how it was derived), where both hosts' rates are known."""
    floors: dict[int, tuple[float, str]] = {}
    for pair in pairs:
        if pair.kind != "inter":
            continue
        ends = [host_floor(fabrics.get(h) or {}, envs.get(h) or {}, concurrent) for h in (pair.host, pair.peer)]
        if any(e is None for e in ends):
            continue
        low = min(e for e in ends if e is not None)
        floors[pair.index] = (low, f"{EFFICIENCY:g} x the RDMA line rate shared by {concurrent} pair(s) at once")
    return floors


def npu_port_floor(link: Mapping[str, Any], device: int) -> float | None:
    """GB/s a pair through NPU ``device``'s own RoCE port should reach at least (hccn.link's facts of its
    host: ``devices`` -> ``speed`` in Mb/s); None: speed unknown."""
    speed = ((link.get("devices") or {}).get(str(device)) or {}).get("speed")
    if not isinstance(speed, (int, float)) or isinstance(speed, bool) or speed <= 0:
        return None
    return EFFICIENCY * float(speed) / 1000 / 8


def npu_pair_floors(pairs: list[Any], links: Mapping[str, Mapping[str, Any]]) -> dict[int, tuple[float, str]]:
    """Inter pair index -> (floor GB/s, how it was derived), where both NPU ports' speeds are known."""
    floors: dict[int, tuple[float, str]] = {}
    for pair in pairs:
        if pair.kind != "inter":
            continue
        ends = [npu_port_floor(links.get(h) or {}, d) for h, d in ((pair.host, pair.device),
                                                                    (pair.peer, pair.peer_device))]
        if any(e is None for e in ends):
            continue
        floors[pair.index] = (min(e for e in ends if e is not None),
                              f"{EFFICIENCY:g} x the slower NPU port's speed (hccn_tool -speed)")
    return floors


def nvlink_efficiency(size: int) -> float | None:
    """The share of the NVLink rate a pair judged at ``size`` bytes must reach; None: too small to judge.

    >>> nvlink_efficiency(64 << 20), nvlink_efficiency(16 << 20), nvlink_efficiency(4 << 20)
    (0.25, 0.15, None)
    """
    return next((share for smallest, share in NVLINK_EFFICIENCY if size >= smallest), None)


def nvlink_pair_floors(results: list[Any], gpu_facts: Mapping[str, Mapping[str, Any]],
                       envs: Mapping[str, Mapping[str, str]]) -> dict[int, tuple[float, str]]:
    """Intra NVLink pair index -> (floor GB/s, how), from each result's pair (``NV#`` link class) and size.

    >>> from types import SimpleNamespace as NS
    >>> pair = NS(index=3, kind="intra", link="NV2", host="a", device=0, peer_device=1)
    >>> facts = {"a": {"nvlink": {"0": {"links": {"0": 25.0, "1": 25.0}}, "1": {"links": {"0": 25.0, "1": 25.0}}}}}
    >>> nvlink_pair_floors([NS(pair=pair, size=64 << 20)], facts, {})
    {3: (12.5, '0.25 x NV2 x 25 GB/s per link (nvidia-smi nvlink -s) at 64 MiB')}
    >>> nvlink_pair_floors([NS(pair=pair, size=64 << 20)], facts, {"a": {"NCCL_P2P_DISABLE": "1"}})
    {}
    """
    floors: dict[int, tuple[float, str]] = {}
    for result in results:
        pair = result.pair
        if pair.kind != "intra" or not pair.link.startswith("NV") or not pair.link[2:].isdigit():
            continue
        env = envs.get(pair.host) or {}
        share = nvlink_efficiency(int(result.size))
        if share is None or env.get("NCCL_P2P_DISABLE", "").strip() == "1" or "CUDA_VISIBLE_DEVICES" in env:
            continue
        gpus = (gpu_facts.get(pair.host) or {}).get("nvlink") or {}
        speeds = [link_speed(gpus.get(str(d)) or {}) for d in (pair.device, pair.peer_device)]
        if any(s is None for s in speeds):
            continue
        speed = min(s for s in speeds if s is not None)
        floors[pair.index] = (share * int(pair.link[2:]) * speed,
                              f"{share:g} x {pair.link} x {speed:g} GB/s per link (nvidia-smi nvlink -s) at "
                              f"{int(result.size) // MiB} MiB")
    return floors
