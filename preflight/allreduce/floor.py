"""An absolute floor for inter-host pairs from the hardware: what the RDMA ports' line rate allows, so a
cluster whose every link runs at a fraction of its rate fails even though all pairs agree.

Applied only where the rate is known and the link is real:

* gpu clusters whose hosts list Active InfiniBand/RoCE ports in ``ibstat`` (gpu.fabric's facts; the ports
  NCCL_IB_HCA selects when set). The pairs of one round share their hosts' ports (device k of both hosts at
  once), so a pair's share is the host's summed Active rate divided by the pairs it runs at once; the floor
  is ``EFFICIENCY`` of that share, in GB/s (Gb/s / 8), the lower of the two hosts'.
* npu clusters: every NPU has its own RoCE port, so an inter pair (device k of both hosts) runs over two
  ports of its own; the floor is ``EFFICIENCY`` of the slower one's speed (hccn.link's ``hccn_tool -i k
  -speed -g``, Mb/s).

Not for intra-host pairs (NVLink, PCIe, HCCS) nor cpu clusters (veth). For NVLink the per-link rate is
readable (``nvidia-smi nvlink -s``: ``Link 0: 26.562 GB/s``), but what NCCL's 2-GPU all_reduce reaches over it at
this test's sizes (64 MiB at most, a few iterations) depends on the generation, the protocol and the size, and no
figure we could check was at hand: a guessed efficiency would fail healthy nodes. An intra pair is judged
against its class (NV#, PIX, SYS, HCCS) over every host instead, so one slow pair, or every NVLink of one node,
is caught while the other nodes are healthy; only a whole cluster degraded alike passes.
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

EFFICIENCY = 0.4


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
