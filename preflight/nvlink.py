"""NVLink state from ``nvidia-smi nvlink -s``: each GPU's links and their current speed (GB/s per link and
direction; ``<inactive>`` for a link that is not up).

The format (HPE-Japan-Presales/e-learning, gpu/h100/mgmt_gpu_on_dl380agen11.md: two H100 PCIe joined by NVLink
bridges, 12 of their 18 links wired)::

    GPU 0: NVIDIA H100 PCIe (UUID: GPU-6968dfc2-d444-d92c-c36b-6abe53445cb9)
             Link 0: 26.562 GB/s
             Link 4: <inactive>

A GPU without NVLink prints its ``GPU n:`` line and no links.

>>> gpus = parse_nvlink("GPU 0: NVIDIA H100 PCIe (UUID: GPU-69)\\n\\t Link 0: 26.562 GB/s\\n\\t Link 1: <inactive>\\n"
...                     "GPU 1: NVIDIA H100 PCIe (UUID: GPU-9b)\\n")
>>> gpus["0"], gpus["1"]["links"]
({'name': 'NVIDIA H100 PCIe', 'links': {'0': 26.562, '1': None}}, {})
>>> active_links(gpus["0"]), link_speed(gpus["0"]), link_speed(gpus["1"])
(1, 26.562, None)
>>> parse_nvlink("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.") is None
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.findings import median

_GPU = re.compile(r"^GPU (\d+): (.+?)(?: \(UUID: [^)]*\))?\s*$")
_LINK = re.compile(r"^\s+Link (\d+): (?:(<inactive>)|([0-9]+(?:\.[0-9]+)?) GB/s)\s*$")


def parse_nvlink(text: str) -> dict[str, dict[str, Any]] | None:
    """GPU index -> {name, links: {link index: GB/s, or None when inactive}}; None when no GPU line is found.
    Lines that fit neither form are skipped; never raises."""
    gpus: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        gpu = _GPU.match(line)
        if gpu:
            current = gpus.setdefault(gpu[1], {"name": gpu[2].strip(), "links": {}})
            continue
        link = _LINK.match(line)
        if link and current is not None:
            current["links"][link[1]] = None if link[2] else float(link[3])
    return gpus or None


def active_links(gpu: Mapping[str, Any]) -> int:
    """How many of the GPU's links are up (a speed above 0)."""
    return sum(1 for speed in (gpu.get("links") or {}).values() if isinstance(speed, (int, float)) and speed > 0)


def link_speed(gpu: Mapping[str, Any]) -> float | None:
    """The GPU's per-link speed (the median of its active links), GB/s; None without an active link."""
    speeds = [float(s) for s in (gpu.get("links") or {}).values() if isinstance(s, (int, float)) and s > 0]
    return median(speeds) if speeds else None
