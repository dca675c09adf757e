"""NVLink state from ``nvidia-smi nvlink -s``: each GPU's links and their current speed (GB/s per link and
direction; ``<inactive>`` for a link that is not up), and what the GPU's board must have up.

The format (HPE-Japan-Presales/e-learning, gpu/h100/mgmt_gpu_on_dl380agen11.md: two H100 PCIe joined by NVLink
bridges, 12 of their 18 links wired; leptonai/gpud testdata nvidia-smi.nvlink.status.a100: 8 A100 SXM4)::

    GPU 0: NVIDIA H100 PCIe (UUID: GPU-6968dfc2-d444-d92c-c36b-6abe53445cb9)
             Link 0: 26.562 GB/s
             Link 4: <inactive>

Instead of links a GPU may print one line (utkuozdemir/nvidia_gpu_exporter internal/captures, siboehm/bench
gpu/nvlink/README.md): ``NVML: Unable to retrieve Nvlink information as all links are inActive`` (every link down:
a PCIe card without a bridge, or a GPU cut off from its board), ``Device does not have or support Nvlink`` (no
NVLink), ``Nvlink queries are not supported for Devices in MIG mode`` (not readable): kept as the GPU's ``note``.

>>> gpus, error = parse_nvlink("GPU 0: NVIDIA H100 PCIe (UUID: GPU-69)\\n\\t Link 0: 26.562 GB/s\\n"
...                            "\\t Link 1: <inactive>\\nGPU 1: NVIDIA L40S (UUID: GPU-9b)\\n"
...                            "Device does not have or support Nvlink\\n")
>>> gpus["0"], gpus["1"], error
({'name': 'NVIDIA H100 PCIe', 'links': {'0': 26.562, '1': None}}, {'name': 'NVIDIA L40S', 'links': {}, \
'note': 'Device does not have or support Nvlink'}, None)
>>> active_links(gpus["0"]), link_speed(gpus["0"]), link_speed(gpus["1"]), state(gpus["1"])
(1, 26.562, None, 'none')
>>> print(parse_nvlink("Failed to initialize NVML: Driver/library version mismatch\\n")[1])
nvidia-smi nvlink -s printed no GPU: first line 'Failed to initialize NVML: Driver/library version mismatch'
>>> parse_nvlink("")
(None, None)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from preflight.findings import median

_GPU = re.compile(r"^GPU (\d+): (.+?)(?: \(UUID: [^)]*\))?\s*$")
_LINK = re.compile(r"^\s+Link (\d+): (?:(<inactive>)|([0-9]+(?:\.[0-9]+)?) GB/s)\s*$")
_ALL_INACTIVE = re.compile(r"all links are inactive", re.IGNORECASE)
_NO_NVLINK = re.compile(r"does not have or support nvlink", re.IGNORECASE)


def parse_nvlink(text: str) -> tuple[dict[str, dict[str, Any]] | None, str | None]:
    """(GPU index -> {name, links: {link index: GB/s, or None when inactive}, note?: the line it printed instead
    of links}, error). No GPU in a non-empty output is an error quoting its first line; never raises."""
    gpus: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    unread: str | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        gpu = _GPU.match(line)
        link = _LINK.match(line)
        if gpu:
            current = gpus.setdefault(gpu[1], {"name": gpu[2].strip(), "links": {}})
        elif link and current is not None:
            current["links"][link[1]] = None if link[2] else float(link[3])
        elif current is not None and not current["links"] and "note" not in current:
            current["note"] = line.strip()
        elif unread is None:
            unread = line.strip()
    if gpus:
        return gpus, None
    return None, f"nvidia-smi nvlink -s printed no GPU: first line {unread[:200]!r}" if unread else None


def state(gpu: Mapping[str, Any]) -> str:
    """``links`` (links listed), ``inactive`` (NVML: every link down), ``none`` (no NVLink listed or supported),
    ``unread`` (a line that says nothing of the links: MIG mode, or one this parser does not know)."""
    note = str(gpu.get("note") or "")
    if gpu.get("links"):
        return "links"
    if _ALL_INACTIVE.search(note):
        return "inactive"
    return "none" if not note or _NO_NVLINK.search(note) else "unread"


def active_links(gpu: Mapping[str, Any]) -> int:
    """How many of the GPU's links are up (a speed above 0)."""
    return sum(1 for speed in (gpu.get("links") or {}).values() if isinstance(speed, (int, float)) and speed > 0)


def link_speed(gpu: Mapping[str, Any]) -> float | None:
    """The GPU's per-link speed (the median of its active links), GB/s; None without an active link."""
    speeds = [float(s) for s in (gpu.get("links") or {}).values() if isinstance(s, (int, float)) and s > 0]
    return median(speeds) if speeds else None


@dataclass(frozen=True)
class Board:
    """What the board of an SXM / HGX GPU wires: every NVLink of the GPU, ``links`` of them (None: as many as
    nvidia-smi lists for the GPU)."""

    what: str
    links: int | None
    source: str


# nvidia-smi's product name -> the board. Link counts from NVIDIA's architecture whitepapers and the MLPerf system
# descriptions NVIDIA and its partners file; the real nvlink -s samples in tests/fixtures show the same counts.
_BOARDS = (
    (re.compile(r"\bV100-SXM[23]\b"), Board("V100 SXM2/SXM3", 6, "NVIDIA Tesla V100 architecture whitepaper: six "
                                            "NVLinks, 300 GB/s (images.nvidia.com/content/volta-architecture/pdf/"
                                            "volta-architecture-whitepaper.pdf)")),
    (re.compile(r"\bA100-SXM4\b"), Board("A100 SXM4", 12, "NVIDIA A100 architecture whitepaper: 12 third-generation "
                                         "NVLinks, 600 GB/s (images.nvidia.com/aem-dam/en-zz/Solutions/data-center/"
                                         "nvidia-ampere-architecture-whitepaper.pdf)")),
    (re.compile(r"\bH100 80GB HBM3$|\bH100 SXM"), Board("H100 SXM5", 18, "NVIDIA H100 architecture whitepaper: 18 "
                                                         "fourth-generation NVLinks, 900 GB/s (resources.nvidia.com/"
                                                         "en-us-tensor-core/gtc22-whitepaper-hopper)")),
    (re.compile(r"^NVIDIA H200(?: 141GB HBM3e)?$|\bH200 SXM"), Board(
        "H200 SXM", 18, "MLPerf inference v4.1, NVIDIA H200-SXM-141GBx8: '18x 4th Gen NVLink, 900GB/s' "
        "(github.com/mlcommons/inference_results_v4.1 closed/NVIDIA/systems/H200-SXM-141GBx8_TRT_MaxQ.json)")),
    (re.compile(r"^NVIDIA G?B200$"), Board("B200 / GB200", 18, "MLPerf inference v6.0, Nebius B200-SXM-180GB: '18x 5th "
                                           "Gen NVLink' (github.com/mlcommons/inference_results_v6.0 closed/Nebius/"
                                           "systems/nebius_b200_n1.json)")),
)
# The export parts (A800, H800) have NVLink cut down at the factory; which links nvidia-smi lists for them is not
# known from a sample, so they are compared with the other GPUs of the model only.
_EXPORT = re.compile(r"\b[AH]800\b")


def board(name: str) -> Board | None:
    """The board an SXM / HGX GPU sits on, from its product name; None for PCIe cards and unknown names.

    >>> board("NVIDIA A100-SXM4-80GB").links, board("NVIDIA H100 80GB HBM3").what, board("NVIDIA H100 PCIe")
    (12, 'H100 SXM5', None)
    >>> board("NVIDIA B300 SXM6 AC").links is None, board("NVIDIA A800-SXM4-80GB"), board("NVIDIA H200 NVL")
    (True, None, None)
    """
    for pattern, known in _BOARDS:
        if pattern.search(name):
            return known
    if _EXPORT.search(name) or not re.search(r"\b(?:SXM\d*|HGX)\b", name, re.IGNORECASE):
        return None
    return Board("an SXM board (product name)", None, "the product name says SXM/HGX: every listed link is wired")


def down_links(gpu: Mapping[str, Any]) -> list[str]:
    """The indexes of the GPU's listed links that are not up, in order."""
    return sorted((k for k, v in (gpu.get("links") or {}).items() if not v), key=int)


def against_board(index: str, gpu: Mapping[str, Any], peers_up: int) -> str | None:
    """What is wrong with an SXM / HGX GPU's links against its board (every link up), None if nothing or not an
    SXM / HGX GPU. ``peers_up``: the most links up on another GPU of the same model on the host.

    >>> gpu = {"name": "Tesla V100-SXM2-32GB", "links": {"0": 25.781, "1": None, "2": 25.781}}
    >>> against_board("3", gpu, 0)
    'GPU 3: 2 of 6 NVLinks up (down: 1; not listed: 3 of the 6 V100 SXM2/SXM3 wires)'
    >>> against_board("0", {"name": "NVIDIA H100 80GB HBM3", "links": {}, "note": "NVML: all links are inActive"}, 18)
    'GPU 0: no NVLink up (NVML: all links are inActive), while another H100 SXM5 GPU of the host has 18'
    >>> against_board("0", {"name": "NVIDIA H100 PCIe", "links": {"0": None, "1": 26.562}}, 0) is None
    True
    """
    known = board(str(gpu.get("name")))
    kind = state(gpu)
    if known is None or kind not in ("links", "inactive"):
        return None
    up, listed = active_links(gpu), len(gpu.get("links") or {})
    wanted = max(listed, known.links or 0)
    if 0 < up < wanted:
        missing = f"; not listed: {wanted - listed} of the {wanted} {known.what} wires" if listed < wanted else ""
        return f"GPU {index}: {up} of {wanted} NVLinks up (down: {', '.join(down_links(gpu)) or 'none'}{missing})"
    if up == 0 and peers_up > 0:
        why = gpu.get("note") or "every link <inactive>"
        return f"GPU {index}: no NVLink up ({why}), while another {known.what} GPU of the host has {peers_up}"
    return None
