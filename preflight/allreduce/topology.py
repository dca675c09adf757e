"""Link classes of the device pairs inside a host, from what the node reported: a pair is judged only
against pairs of its own class, and pairs the collective library refuses are not planned.

- GPU: the cell of ``nvidia-smi topo -m`` (gpu.devices' facts) for the two GPUs: ``NV#`` (NVLink, # links:
  NV1 and NV2 differ in bandwidth, so they are classes of their own), ``PIX``/``PXB`` (a PCIe switch),
  ``PHB``/``NODE`` (the PCIe host bridge, same NUMA node), ``SYS`` (across sockets). Unknown: "intra".
- Ascend 910A (Atlas 800 training, 8 NPUs): HCCS joins NPUs 0-3 and 4-7; HCCL takes groups of 1, 2, 4 or 8
  devices of a server, a group of 2 or 4 inside one HCCS group (CANN's HCCL documentation for Atlas training
  series), so other pairs and groups are not planned (``group_allowed``). A2 (910B) and A3: one HCCS full mesh,
  class "HCCS".

>>> gpu = {"rows": {"GPU0": {"GPU1": "NV2", "GPU2": "SYS"}, "GPU1": {"GPU0": "NV2", "GPU2": "PIX"}}}
>>> [link_class({"gpu": gpu}, 0, 1), link_class({"gpu": gpu}, 0, 2), link_class({"gpu": gpu}, 1, 2)]
['NV2', 'SYS', 'PIX']
>>> [link_class({"npu": "910A"}, 0, 3), link_class({"npu": "910A"}, 3, 4), link_class({"npu": "A2"}, 3, 4)]
['HCCS', None, 'HCCS']
>>> link_class({}, 0, 1)
'intra'
>>> [group_allowed({"npu": "910A"}, d) for d in ((0, 1, 2, 3), (2, 3, 4, 5), range(8), range(6), (0, 1, 2))]
[True, False, True, False, False]
>>> group_allowed({"npu": "A2"}, range(6)), group_allowed({}, range(3))
(True, True)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

INTRA = "intra"  # no topology known: every intra-host pair is one class
_NVLINK = re.compile(r"^NV\d+$")
_KNOWN = ("PIX", "PXB", "PHB", "NODE", "SYS")
HCCS_GROUP_910A = 4  # NPUs 0-3 and 4-7


def link_class(topology: Mapping[str, Any], i: int, j: int) -> str | None:
    """The class of the pair (device i, device j) of one host, or None when it must not be planned.

    ``topology``: {"gpu": gpu.devices' parsed ``topo -m`` (rows), "npu": the npu check's generation}.
    """
    generation = topology.get("npu")
    if generation == "910A":
        return "HCCS" if i // HCCS_GROUP_910A == j // HCCS_GROUP_910A else None
    if generation in ("A2", "A3"):
        return "HCCS"
    rows = (topology.get("gpu") or {}).get("rows") or {}
    cell = str((rows.get(f"GPU{i}") or {}).get(f"GPU{j}") or (rows.get(f"GPU{j}") or {}).get(f"GPU{i}") or "")
    if _NVLINK.match(cell) or cell in _KNOWN:
        return cell
    return INTRA


def group_allowed(topology: Mapping[str, Any], devices: Iterable[int]) -> bool:
    """Whether the collective library takes one group of these devices of a host (``topology`` as for
    ``link_class``): HCCL on 910A only 1, 2, 4 or 8 devices, a group of 2 or 4 inside one HCCS group; anything
    else is taken."""
    if topology.get("npu") != "910A":
        return True
    devs = set(devices)
    if len(devs) not in (1, 2, 4, 8):
        return False
    return len(devs) == 8 or len({d // HCCS_GROUP_910A for d in devs}) == 1


def host_topology(host: str, other_facts: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """What ``link_class`` needs of ``host``, from the gpu.devices and npu facts (either may be missing)."""
    gpu = (other_facts.get("gpu.devices", {}).get(host) or {}).get("topology")
    npu = (other_facts.get("npu", {}).get(host) or {}).get("generation")
    return {"gpu": gpu, "npu": npu}
